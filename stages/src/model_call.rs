//! Calling an LLM for a task: render the prompt, send it, validate the answer
//! locally (the task's own validation: schema shape and meaning — IDs must be ones
//! shown), repair once by showing the model its error, and if the answer is still
//! invalid let the fallback model (passed in) answer for that node. A call that got **no** answer (the budget refused it, the
//! provider refused the key, or the provider stayed unreachable past its retries) is
//! not a bad answer: its ledger entry is marked [`Unfinished`], the executor keeps the
//! node unfinished and stops, and a resume makes the call again. Model output is untrusted data throughout: it is parsed,
//! never executed, and it never supplies quote text.

use deepr_evidence::report::CallStatus;
use deepr_orchestrator::clock::Clock;
use deepr_orchestrator::{LedgerEntry, LlmError, LlmProvider, LlmRequest, Tier, Unfinished};
use deepr_prompts::Prompt;
use deepr_tasks::ModelTask;
use serde_json::Value;

/// How many times a model sees its own invalid answer before the node degrades.
pub const REPAIR_ATTEMPTS: usize = 1;

/// The models a stage calls for one tier: the one that answers, and the fallback that
/// answers for it when its answer is unusable (in practice the local heuristic model,
/// wired in by the caller — this crate names no model implementation).
#[derive(Clone, Copy)]
pub struct Models<'a> {
    pub llm: &'a dyn LlmProvider,
    pub fallback: &'a dyn LlmProvider,
    /// Times each call (its ledger latency).
    pub clock: &'a dyn Clock,
}

/// One model call of task `T`.
pub struct TaskCall<'a, T: ModelTask> {
    pub node_id: &'a str,
    pub stage: &'a str,
    /// The prompt of task `T` in use (built-in, or the user's override of it).
    pub prompt: &'a Prompt,
    pub tier: Tier,
    pub input: &'a T::Input,
}

pub struct TaskResult<T> {
    pub value: T,
    pub calls: Vec<LedgerEntry>,
    /// Set when the model's answer was unusable and the fallback answered.
    pub degraded: Option<String>,
}

/// Key material for a node that calls `prompt` on `models`: prompt id, version and hash,
/// and the ids of the model and of its fallback for that task.
pub fn prompt_key(prompt: &Prompt, models: Models<'_>) -> Value {
    serde_json::json!({
        "prompt": prompt.id, "version": prompt.version, "hash": prompt.hash(),
        "model": models.llm.model_id_for(prompt.id),
        "fallback": models.fallback.model_id_for(prompt.id),
    })
}

fn entry<T: ModelTask>(call: &TaskCall<'_, T>, provider: String, status: String) -> LedgerEntry {
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

/// Run a task. Never fails: an unusable answer degrades to the fallback's.
pub async fn call_task<T: ModelTask>(
    models: Models<'_>,
    call: TaskCall<'_, T>,
) -> TaskResult<T::Answer> {
    let original = match request_of::<T>(&call) {
        Ok(request) => request,
        Err(why) => return degrade::<T>(models, &call, None, Vec::new(), why).await,
    };
    let llm = models.llm;
    let mut calls = Vec::new();
    let mut request = original.clone();
    let mut last_error = String::new();
    for attempt in 0..=REPAIR_ATTEMPTS {
        let started = models.clock.now();
        let outcome = llm.complete(&request).await;
        let latency_ms = models.clock.elapsed_ms(started);
        let response = match outcome {
            Ok(response) => response,
            Err(error) => {
                let mut failed = entry(&call, llm.model_id(), error.to_string());
                failed.latency_ms = latency_ms;
                failed.unfinished = unfinished(&error, llm.model_id());
                let stops = failed.unfinished.is_some();
                calls.push(failed);
                if stops {
                    // A placeholder: the executor discards this node's output.
                    return TaskResult {
                        value: T::Answer::default(),
                        calls,
                        degraded: None,
                    };
                }
                let why = format!("model call failed: {error}");
                return degrade::<T>(models, &call, Some(&original), calls, why).await;
            }
        };
        let parsed = deepr_tasks::parse_answer::<T>(call.input, &response.text);
        calls.push(answered(&call, &response, attempt, &parsed, latency_ms));
        match parsed {
            Ok(value) => {
                return TaskResult {
                    value,
                    calls,
                    degraded: None,
                }
            }
            Err(error) => {
                request.user = format!(
                    "{}\n\nYour previous answer was invalid: {error}\nAnswer again with JSON only, matching the schema, using only IDs shown above.",
                    original.user
                );
                last_error = error;
            }
        }
    }
    let why = format!("model answer invalid after repair: {last_error}");
    degrade::<T>(models, &call, Some(&original), calls, why).await
}

/// The request a task's call sends: its prompt (which must be the task's own)
/// rendered with the input's values, and the input itself for the offline model.
fn request_of<T: ModelTask>(call: &TaskCall<'_, T>) -> Result<LlmRequest, String> {
    if call.prompt.id != T::ID {
        return Err(format!(
            "prompt {:?} cannot ask task {:?}",
            call.prompt.id,
            T::ID
        ));
    }
    let task_input =
        serde_json::to_value(call.input).map_err(|error| format!("task input: {error}"))?;
    let values = T::values(call.input);
    let values: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let rendered = call
        .prompt
        .render(&values)
        .map_err(|error| format!("prompt failed to render: {error}"))?;
    Ok(LlmRequest {
        stage: call.stage.to_string(),
        prompt_id: call.prompt.id.to_string(),
        prompt_version: call.prompt.version,
        tier: call.tier,
        system: rendered.system,
        user: rendered.user,
        schema: call.prompt.schema(),
        task_input,
        fresh: deepr_orchestrator::executor::retrying(),
    })
}

/// The ledger entry of an answered call: ok, repaired or invalid (and why); a cache
/// hit costs nothing now, so it is a zero-token entry.
fn answered<T: ModelTask, A>(
    call: &TaskCall<'_, T>,
    response: &deepr_orchestrator::LlmResponse,
    attempt: usize,
    parsed: &Result<A, String>,
    latency_ms: u64,
) -> LedgerEntry {
    let status = match parsed {
        Ok(_) if attempt == 0 => "ok".to_string(),
        Ok(_) => "repaired".to_string(),
        Err(e) => format!("invalid: {e}"),
    };
    let mut done = entry(call, response.model.clone(), status);
    done.latency_ms = latency_ms;
    done.cache_hit = response.cache_hit;
    done.estimated = response.usage_estimated;
    if !response.cache_hit {
        done.prompt_tokens = response.prompt_tokens;
        done.completion_tokens = response.completion_tokens;
        done.cached_tokens = response.cached_tokens;
        done.cost_usd = response.cost_usd;
    }
    done
}

/// The fallback answers the original request (never the repair prompt); its answer is
/// parsed and validated like any other. It is local and free by contract, so it adds
/// no ledger entry. Should it fail too, the node degrades to an empty answer rather
/// than aborting the run.
async fn degrade<T: ModelTask>(
    models: Models<'_>,
    call: &TaskCall<'_, T>,
    request: Option<&LlmRequest>,
    calls: Vec<LedgerEntry>,
    why: String,
) -> TaskResult<T::Answer> {
    let answered = match request {
        None => Err("no request could be built".to_string()),
        Some(request) => match models.fallback.complete(request).await {
            Ok(response) => deepr_tasks::parse_answer::<T>(call.input, &response.text),
            Err(error) => Err(error.to_string()),
        },
    };
    match answered {
        Ok(value) => TaskResult {
            value,
            calls,
            degraded: Some(why),
        },
        Err(error) => TaskResult {
            value: T::Answer::default(),
            calls,
            degraded: Some(format!("{why}; fallback failed: {error}")),
        },
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Mutex;

    use async_trait::async_trait;
    use deepr_orchestrator::{LlmError, LlmResponse};

    use deepr_orchestrator::clock::TokioClock;
    use deepr_tasks::extract::{Answer, Candidate, Extract, Input};

    use super::*;
    /// A model that plays back canned answers, one per call.
    pub(crate) struct Scripted(pub(crate) Mutex<Vec<&'static str>>);

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

    fn input() -> Input {
        let candidate = |id: &str, text: &str, weight: f64, doc: &str| Candidate {
            id: id.into(),
            text: text.into(),
            weight,
            doc: doc.into(),
            title: String::new(),
            source: Default::default(),
        };
        Input {
            subquestion: "q".into(),
            max_claims: 2,
            candidates: vec![
                candidate("c1", "The journal is deleted at commit.", 1.0, "x"),
                candidate("c2", "WAL appends frames to a log.", 0.5, "y"),
            ],
        }
    }

    async fn extract_with(
        answers: Vec<&'static str>,
        fallback: &dyn LlmProvider,
    ) -> TaskResult<Answer> {
        let input = input();
        let model = Scripted(Mutex::new(answers));
        let call = TaskCall::<Extract> {
            node_id: "r0/q1/extract",
            stage: "extract",
            prompt: &deepr_prompts::EXTRACT,
            tier: Tier::Cheap,
            input: &input,
        };
        call_task(
            Models {
                llm: &model,
                fallback,
                clock: &TokioClock::new(),
            },
            call,
        )
        .await
    }

    /// A fallback that answers validly (any local model would do: this crate names none).
    fn valid_fallback() -> Scripted {
        Scripted(Mutex::new(vec![
            r#"{"claims": [{"text": "The journal is deleted at commit.", "sentence_ids": ["c1"]}]}"#,
        ]))
    }

    #[tokio::test]
    async fn valid_answers_pass_first_time() {
        let result = extract_with(
            vec![r#"{"claims": [{"text": "x", "sentence_ids": ["c2"]}]}"#],
            &valid_fallback(),
        )
        .await;
        assert!(result.degraded.is_none());
        assert_eq!(result.calls.len(), 1);
        assert_eq!(result.calls[0].status, "ok");
        assert_eq!(result.value.claims[0].sentence_ids, ["c2"]);
    }

    #[tokio::test]
    async fn one_repair_shows_the_model_its_error() {
        let result = extract_with(
            vec![
                r#"{"claims": [{"text": "x", "sentence_ids": ["c9"]}]}"#,
                r#"{"claims": [{"text": "x", "sentence_ids": ["c1"]}]}"#,
            ],
            &valid_fallback(),
        )
        .await;
        assert!(result.degraded.is_none());
        let statuses: Vec<&str> = result.calls.iter().map(|c| c.status.as_str()).collect();
        assert_eq!(statuses.len(), 2);
        assert!(statuses[0].contains("unknown sentence ID"), "{statuses:?}");
        assert_eq!(statuses[1], "repaired");
    }

    #[tokio::test]
    async fn unusable_output_degrades_to_the_fallback() {
        // Prose, then an empty ID list: both invalid, so the fallback answers.
        let result = extract_with(
            vec![
                "I think the answer is c1.",
                r#"{"claims": [{"text": "x", "sentence_ids": []}]}"#,
            ],
            &valid_fallback(),
        )
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

    #[tokio::test]
    async fn the_fallback_answer_is_validated_like_any_other() {
        // The fallback cites an ID that was never shown: refused, the node is empty.
        let bad_fallback = Scripted(Mutex::new(vec![
            r#"{"claims": [{"text": "x", "sentence_ids": ["c7"]}]}"#,
        ]));
        let result = extract_with(vec!["no", "still no"], &bad_fallback).await;
        let why = result.degraded.as_deref().unwrap_or_default();
        assert!(
            why.contains("fallback failed") && why.contains("c7"),
            "{why}"
        );
        assert!(result.value.claims.is_empty());
    }

    #[tokio::test]
    async fn a_prompt_of_another_task_is_refused() {
        let input = input();
        let model = Scripted(Mutex::new(vec![
            r#"{"claims": [{"text": "x", "sentence_ids": ["c1"]}]}"#,
        ]));
        let result = call_task(
            Models {
                llm: &model,
                fallback: &valid_fallback(),
                clock: &TokioClock::new(),
            },
            TaskCall::<Extract> {
                node_id: "n",
                stage: "extract",
                prompt: &deepr_prompts::JUDGE,
                tier: Tier::Cheap,
                input: &input,
            },
        )
        .await;
        assert!(result.calls.is_empty(), "the model was not asked");
        assert!(result
            .degraded
            .is_some_and(|d| d.contains("cannot ask task \"extract\"")));
    }

    #[test]
    fn json_is_found_inside_prose_and_fences() {
        assert!(deepr_tasks::parse_json_object("```json\n{\"a\": 1}\n```").is_ok());
        assert!(deepr_tasks::parse_json_object("Sure! {\"a\": [1]} hope it helps").is_ok());
        assert!(deepr_tasks::parse_json_object("no json here").is_err());
        assert!(deepr_tasks::parse_json_object("} {").is_err());
    }

    /// A provider whose code for `extract` is at `self.0` and everything else unchanged.
    struct Versioned(u32);

    #[async_trait]
    impl LlmProvider for Versioned {
        fn model_id(&self) -> String {
            "local".into()
        }
        fn model_id_for(&self, prompt_id: &str) -> String {
            if prompt_id == "extract" {
                format!("local/extract.v{}", self.0)
            } else {
                "local".into()
            }
        }
        async fn complete(&self, _: &LlmRequest) -> Result<LlmResponse, LlmError> {
            Err(LlmError::Budget("unused".into()))
        }
    }

    /// Derived data carries its deriver's version: a new version of one task's code
    /// (the model's or the fallback's) changes the key of exactly that task's nodes.
    #[test]
    fn a_task_version_enters_the_key_of_that_task_only() {
        let clock = TokioClock::new();
        let key = |prompt: &Prompt, model: u32, fallback: u32| {
            prompt_key(
                prompt,
                Models {
                    llm: &Versioned(model),
                    fallback: &Versioned(fallback),
                    clock: &clock,
                },
            )
        };
        let (extract, judge) = (&deepr_prompts::EXTRACT, &deepr_prompts::JUDGE);
        assert_ne!(
            key(extract, 1, 1),
            key(extract, 2, 1),
            "the model's version"
        );
        assert_ne!(
            key(extract, 1, 1),
            key(extract, 1, 2),
            "the fallback's version"
        );
        assert_eq!(
            key(judge, 1, 1),
            key(judge, 2, 2),
            "other tasks keep their keys"
        );
    }
}
