//! The offline model: a deterministic heuristic implementation of every LLM task.
//!
//! It is a real [`LlmProvider`]: it receives the fully rendered prompt, counts prompt
//! and completion tokens with the o200k tokenizer, and answers in the task's JSON
//! schema — so every run has a real token ledger without a key or a network. Its
//! answers come from the structured `task_input` (the same data the prompt shows),
//! via each stage's `offline_answer` heuristic.

use async_trait::async_trait;
use deepr_evidence::report::CallStatus;
use deepr_orchestrator::simulate::ModelLatency;
use deepr_orchestrator::tokens::{count_chat_tokens, count_tokens};
use deepr_orchestrator::{LlmError, LlmProvider, LlmRequest, LlmResponse};
use serde_json::Value;

pub const MODEL_ID: &str = "offline:heuristic-v1";

/// The offline model. `latency` is a simulation setting (`--offline-latency`): each call
/// waits its time to first token plus its completion tokens at the given speed, drawn
/// by the request's identity and `latency_seed`, so crash tests and orchestration
/// benchmarks see realistic timing without a network. It never changes an answer.
#[derive(Clone, Copy, Debug, Default)]
pub struct OfflineModel {
    pub latency: ModelLatency,
    pub latency_seed: u64,
}

/// What identifies a request for the latency draw: the same request always waits the
/// same time, whichever order calls are made in.
fn request_identity(request: &LlmRequest) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    for part in [&request.prompt_id, &request.system, &request.user] {
        hasher.update(part.as_bytes());
        hasher.update(b"\0");
    }
    *hasher.finalize().as_bytes()
}

/// The heuristic answer for a prompt id.
pub fn answer(prompt_id: &str, input: &Value) -> Value {
    match prompt_id {
        "decompose" => crate::decompose::offline_answer(input),
        "subquery" => crate::subquery::offline_answer(input),
        "extract" => crate::extract::offline_answer(input),
        "judge" => crate::judge::offline_answer(input),
        "conflict" => crate::conflict::offline_answer(input),
        "deepen" => crate::deepen::offline_answer(input),
        "synthesize" => crate::synthesize::offline_answer(input),
        "judge_vote" => crate::judge::offline_vote_answer(input),
        "extract_free" => crate::extract::offline_free_answer(input),
        _ => Value::Null,
    }
}

#[async_trait]
impl LlmProvider for OfflineModel {
    fn model_id(&self) -> String {
        MODEL_ID.to_string()
    }

    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let value = answer(&request.prompt_id, &request.task_input);
        if value.is_null() {
            return Err(LlmError::Call {
                status: CallStatus::BadResponse,
                message: format!("offline model has no task {:?}", request.prompt_id),
            });
        }
        let text = value.to_string();
        let completion_tokens = count_tokens(&text);
        if !self.latency.is_zero() {
            let wait = self.latency.sample(
                self.latency_seed,
                &request_identity(request),
                completion_tokens,
            );
            tokio::time::sleep(wait).await;
        }
        Ok(LlmResponse {
            prompt_tokens: count_chat_tokens(&[
                ("system", &request.system),
                ("user", &request.user),
            ]),
            completion_tokens,
            cached_tokens: 0,
            cost_usd: 0.0,
            cache_hit: false,
            usage_estimated: false,
            model: MODEL_ID.to_string(),
            text,
        })
    }
}
