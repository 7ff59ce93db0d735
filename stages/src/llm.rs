//! Calling an LLM for a task: render the prompt, send it, validate the answer
//! locally (schema shape and meaning — IDs must exist), repair once by showing the
//! model its error, and if the answer is still invalid fall back to the offline
//! heuristic for that node. A call that got **no** answer (the budget refused it, the
//! provider refused the key, or the provider stayed unreachable past its retries) is
//! not a bad answer: its ledger entry is marked [`Unfinished`], the executor keeps the
//! node unfinished and stops, and a resume makes the call again. Model output is untrusted data throughout: it is parsed,
//! never executed, and it never supplies quote text.

use tokio::time::Instant;

use deepr_evidence::report::CallStatus;
use deepr_orchestrator::{LedgerEntry, LlmError, LlmProvider, LlmRequest, Tier, Unfinished};
use deepr_prompts::Prompt;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// How many times a model sees its own invalid answer before the node degrades.
pub const REPAIR_ATTEMPTS: usize = 1;

pub struct TaskCall<'a> {
    pub node_id: &'a str,
    pub stage: &'a str,
    pub prompt: &'a Prompt,
    pub tier: Tier,
    pub values: Vec<(&'a str, String)>,
    pub task_input: Value,
}

pub struct TaskResult<T> {
    pub value: T,
    pub calls: Vec<LedgerEntry>,
    /// Set when the model's answer was unusable and the offline heuristic answered.
    pub degraded: Option<String>,
}

/// Key material for a node that calls `prompt` on `llm`: prompt id, version and hash,
/// and the model id.
pub fn prompt_key(prompt: &Prompt, llm: &dyn LlmProvider) -> Value {
    serde_json::json!({"prompt": prompt.id, "version": prompt.version, "hash": prompt.hash(), "model": llm.model_id()})
}

fn entry(call: &TaskCall<'_>, provider: String, status: String) -> LedgerEntry {
    LedgerEntry {
        node: call.node_id.to_string(),
        stage: call.stage.to_string(),
        kind: "llm".into(),
        provider,
        prompt_tokens: 0,
        completion_tokens: 0,
        cached_tokens: 0,
        cost_usd: 0.0,
        latency_ms: 0,
        cache_hit: false,
        restored: false,
        estimated: false,
        status,
        unfinished: None,
    }
}

/// What a failed call leaves behind. A refused budget, a refused key and an outage
/// (unreachable, 5xx, timeout, 429 past the wait) leave the node unfinished: a resume
/// makes the call again. Anything else the server answered (a 4xx such as a prompt too
/// long for it, a body that is not an answer) is an answer that arrived unusable: the
/// node degrades like one with an invalid answer (`None` here).
fn unfinished(error: &LlmError, provider: String) -> Option<Unfinished> {
    match error {
        LlmError::Budget(reason) => Some(Unfinished::Budget {
            reason: reason.clone(),
        }),
        LlmError::Call {
            status: CallStatus::AuthFailed,
            message,
        } => Some(Unfinished::AuthFailed {
            provider,
            message: message.clone(),
        }),
        LlmError::Call {
            status:
                status @ (CallStatus::Unreachable | CallStatus::Timeout | CallStatus::RateLimited),
            message,
        } => Some(Unfinished::ProviderUnavailable {
            provider,
            message: format!("{}: {message}", status.as_str()),
        }),
        LlmError::Call { .. } => None,
    }
}

/// Model text made safe to store and show: one line (whitespace runs folded), no
/// control characters, at most `max_chars` characters.
pub fn clean_model_text(text: &str, max_chars: usize) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .take(max_chars)
        .collect()
}

/// Extract the first JSON object from a model answer (models wrap JSON in prose or
/// code fences).
pub fn parse_json_object(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    if let Ok(value) = serde_json::from_str::<Value>(trimmed) {
        return Ok(value);
    }
    let start = trimmed.find('{').ok_or("answer contains no JSON object")?;
    let end = trimmed
        .rfind('}')
        .ok_or("answer contains no complete JSON object")?;
    if end <= start {
        return Err("answer contains no complete JSON object".into());
    }
    serde_json::from_str(&trimmed[start..=end])
        .map_err(|e| format!("answer is not valid JSON: {e}"))
}

/// Run a task. Never fails: an unusable model degrades to the offline heuristic.
pub async fn call_task<T, V>(
    llm: &dyn LlmProvider,
    call: TaskCall<'_>,
    validate: V,
) -> TaskResult<T>
where
    T: DeserializeOwned + Default,
    V: Fn(&T) -> Result<(), String>,
{
    let values: Vec<(&str, &str)> = call.values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut calls = Vec::new();
    let rendered = match call.prompt.render(&values) {
        Ok(rendered) => rendered,
        Err(error) => return degrade(&call, calls, format!("prompt failed to render: {error}")),
    };
    let mut request = LlmRequest {
        stage: call.stage.to_string(),
        prompt_id: call.prompt.id.to_string(),
        prompt_version: call.prompt.version,
        tier: call.tier,
        system: rendered.system,
        user: rendered.user.clone(),
        schema: call.prompt.schema(),
        task_input: call.task_input.clone(),
        fresh: deepr_orchestrator::executor::retrying(),
    };
    let mut last_error = String::new();
    for attempt in 0..=REPAIR_ATTEMPTS {
        let started = Instant::now();
        let outcome = llm.complete(&request).await;
        let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match outcome {
            Err(error) => {
                let mut failed = entry(&call, llm.model_id(), error.to_string());
                failed.latency_ms = latency_ms;
                failed.unfinished = unfinished(&error, llm.model_id());
                let stops = failed.unfinished.is_some();
                calls.push(failed);
                if stops {
                    // A placeholder: the executor discards this node's output.
                    return TaskResult {
                        value: T::default(),
                        calls,
                        degraded: None,
                    };
                }
                return degrade(&call, calls, format!("model call failed: {error}"));
            }
            Ok(response) => {
                let parsed = parse_json_object(&response.text)
                    .and_then(|v| {
                        serde_json::from_value::<T>(v)
                            .map_err(|e| format!("answer does not match the schema: {e}"))
                    })
                    .and_then(|t| validate(&t).map(|()| t));
                let status = match &parsed {
                    Ok(_) if attempt == 0 => "ok".to_string(),
                    Ok(_) => "repaired".to_string(),
                    Err(e) => format!("invalid: {e}"),
                };
                let mut done = entry(&call, response.model.clone(), status);
                done.latency_ms = latency_ms;
                // A cache hit cost nothing now: it is a zero-token ledger entry.
                done.cache_hit = response.cache_hit;
                done.estimated = response.usage_estimated;
                if !response.cache_hit {
                    done.prompt_tokens = response.prompt_tokens;
                    done.completion_tokens = response.completion_tokens;
                    done.cached_tokens = response.cached_tokens;
                    done.cost_usd = response.cost_usd;
                }
                calls.push(done);
                match parsed {
                    Ok(value) => {
                        return TaskResult {
                            value,
                            calls,
                            degraded: None,
                        }
                    }
                    Err(error) => {
                        last_error = error.clone();
                        request.user = format!(
                            "{}\n\nYour previous answer was invalid: {error}\nAnswer again with JSON only, matching the schema, using only IDs shown above.",
                            rendered.user
                        );
                    }
                }
            }
        }
    }
    degrade(
        &call,
        calls,
        format!("model answer invalid after repair: {last_error}"),
    )
}

fn degrade<T: DeserializeOwned + Default>(
    call: &TaskCall<'_>,
    calls: Vec<LedgerEntry>,
    why: String,
) -> TaskResult<T> {
    let answer = crate::offline::answer(call.prompt.id, &call.task_input);
    match serde_json::from_value::<T>(answer) {
        Ok(value) => TaskResult {
            value,
            calls,
            degraded: Some(why),
        },
        // The offline heuristics always produce their own schema; should one ever not,
        // the node degrades to an empty answer rather than aborting the run.
        Err(error) => TaskResult {
            value: T::default(),
            calls,
            degraded: Some(format!("{why}; offline fallback failed: {error}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use async_trait::async_trait;
    use deepr_orchestrator::{LlmError, LlmResponse};
    use serde_json::json;

    use super::*;
    use crate::extract::{validate, Answer};

    /// A model that plays back canned answers, one per call.
    struct Scripted(Mutex<Vec<&'static str>>);

    #[async_trait]
    impl LlmProvider for Scripted {
        fn model_id(&self) -> String {
            "scripted".into()
        }
        async fn complete(&self, _: &LlmRequest) -> Result<LlmResponse, LlmError> {
            let text = self
                .0
                .lock()
                .map(|mut v| if v.is_empty() { "" } else { v.remove(0) })
                .unwrap_or("");
            Ok(LlmResponse {
                text: text.into(),
                model: "scripted".into(),
                prompt_tokens: 10,
                completion_tokens: 5,
                cached_tokens: 0,
                cost_usd: 0.0,
                cache_hit: false,
                usage_estimated: false,
            })
        }
    }

    async fn extract_with(answers: Vec<&'static str>) -> TaskResult<Answer> {
        let known: BTreeSet<String> = ["c1".to_string(), "c2".to_string()].into();
        let call = TaskCall {
            node_id: "r0/q1/extract",
            stage: "extract",
            prompt: &deepr_prompts::EXTRACT,
            tier: Tier::Cheap,
            values: vec![
                ("subquestion", "q".into()),
                ("candidates", "[c1] a\n[c2] b".into()),
                ("max_claims", "2".into()),
            ],
            task_input: json!({"max_claims": 2, "candidates": [
                {"id": "c1", "text": "The journal is deleted at commit.", "weight": 1.0, "doc": "x"},
                {"id": "c2", "text": "WAL appends frames to a log.", "weight": 0.5, "doc": "y"}
            ]}),
        };
        call_task(&Scripted(Mutex::new(answers)), call, |a: &Answer| {
            validate(a, &known, 2)
        })
        .await
    }

    use std::collections::BTreeSet;

    #[tokio::test]
    async fn valid_answers_pass_first_time() {
        let result = extract_with(vec![
            r#"{"claims": [{"text": "x", "sentence_ids": ["c2"]}]}"#,
        ])
        .await;
        assert!(result.degraded.is_none());
        assert_eq!(result.calls.len(), 1);
        assert_eq!(result.calls[0].status, "ok");
        assert_eq!(result.value.claims[0].sentence_ids, ["c2"]);
    }

    #[tokio::test]
    async fn one_repair_shows_the_model_its_error() {
        let result = extract_with(vec![
            r#"{"claims": [{"text": "x", "sentence_ids": ["c9"]}]}"#,
            r#"{"claims": [{"text": "x", "sentence_ids": ["c1"]}]}"#,
        ])
        .await;
        assert!(result.degraded.is_none());
        let statuses: Vec<&str> = result.calls.iter().map(|c| c.status.as_str()).collect();
        assert_eq!(statuses.len(), 2);
        assert!(statuses[0].contains("unknown sentence ID"), "{statuses:?}");
        assert_eq!(statuses[1], "repaired");
    }

    #[tokio::test]
    async fn unusable_output_degrades_to_the_offline_heuristic() {
        // Prose, then an empty ID list: both invalid, so the offline model answers.
        let result = extract_with(vec![
            "I think the answer is c1.",
            r#"{"claims": [{"text": "x", "sentence_ids": []}]}"#,
        ])
        .await;
        assert!(
            result
                .degraded
                .as_deref()
                .is_some_and(|d| d.contains("invalid after repair")),
            "{:?}",
            result.degraded
        );
        assert_eq!(result.calls.len(), 2, "both model calls are in the ledger");
        assert!(!result.value.claims.is_empty());
        assert!(result
            .value
            .claims
            .iter()
            .all(|c| c.sentence_ids.iter().all(|id| id == "c1" || id == "c2")));
    }
    #[test]
    fn json_is_found_inside_prose_and_fences() {
        assert!(super::parse_json_object("```json\n{\"a\": 1}\n```").is_ok());
        assert!(super::parse_json_object("Sure! {\"a\": [1]} hope it helps").is_ok());
        assert!(super::parse_json_object("no json here").is_err());
        assert!(super::parse_json_object("} {").is_err());
    }
}
