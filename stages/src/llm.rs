//! Calling an LLM for a task: render the prompt, send it, validate the answer
//! locally (schema shape and meaning — IDs must exist), repair once by showing the
//! model its error, and if the answer is still invalid fall back to the offline
//! heuristic for that node. Model output is untrusted data throughout: it is parsed,
//! never executed, and it never supplies quote text.

use std::time::Instant;

use deepr_orchestrator::{LedgerEntry, LlmProvider, LlmRequest, Tier};
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
        status,
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
                calls.push(failed);
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
                done.prompt_tokens = response.prompt_tokens;
                done.completion_tokens = response.completion_tokens;
                done.cached_tokens = response.cached_tokens;
                done.cost_usd = response.cost_usd;
                done.latency_ms = latency_ms;
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
    #[test]
    fn json_is_found_inside_prose_and_fences() {
        assert!(super::parse_json_object("```json\n{\"a\": 1}\n```").is_ok());
        assert!(super::parse_json_object("Sure! {\"a\": [1]} hope it helps").is_ok());
        assert!(super::parse_json_object("no json here").is_err());
        assert!(super::parse_json_object("} {").is_err());
    }
}
