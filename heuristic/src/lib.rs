//! The offline model: a deterministic heuristic implementation of every model task.
//!
//! It is a provider like the remote ones ([`LlmProvider`]): it receives the fully
//! rendered prompt, counts prompt and completion tokens with the o200k tokenizer, and
//! answers in the task's JSON schema — so every run has a real token ledger without a
//! key or a network. Its answers come from the request's task input (the same data
//! the prompt shows), read back into the task's typed input (`deepr-tasks`).
//!
//! One file per task, each with its own `VERSION`. A task's version is part of the
//! model id this provider gives for that task ([`LlmProvider::model_id_for`]), which
//! enters node keys and response-cache keys: editing one heuristic recomputes exactly
//! the nodes that used it, and the cache can never serve an answer from older code.

use async_trait::async_trait;
use deepr_evidence::report::CallStatus;
use deepr_orchestrator::simulate::ModelLatency;
use deepr_orchestrator::tokens::{count_chat_tokens, count_tokens};
use deepr_orchestrator::{LlmError, LlmProvider, LlmRequest, LlmResponse};
use deepr_tasks::ModelTask;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

mod conflict;
mod decompose;
mod deepen;
mod extract;
mod extract_free;
mod judge;
mod judge_vote;
mod measures;
mod subquery;
mod synthesize;
pub mod text;
mod triage;
mod write_section;

/// The provider's own id; per task it is `offline:heuristic/<task>.v<version>`.
pub const MODEL_ID: &str = "offline:heuristic";

/// One task's heuristic: its version and its answer.
trait Heuristic: ModelTask {
    const VERSION: u32;
    fn answer(input: &Self::Input) -> Self::Answer;
}

/// The offline model. `latency` is a simulation setting (`--offline-latency`): each call
/// waits its time to first token plus its completion tokens at the given speed, drawn
/// by the request's identity and `latency_seed`, so crash tests and orchestration
/// benchmarks see realistic timing without a network. It never changes an answer.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeuristicModel {
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

/// Why the heuristic could not answer a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Unanswerable {
    UnknownTask(String),
    BadInput { task: &'static str, error: String },
}

impl std::fmt::Display for Unanswerable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unanswerable::UnknownTask(id) => write!(f, "offline model has no task {id:?}"),
            Unanswerable::BadInput { task, error } => {
                write!(
                    f,
                    "offline model: the {task} input does not match its type: {error}"
                )
            }
        }
    }
}

fn run<H: Heuristic>(input: &Value) -> Result<Value, Unanswerable>
where
    H::Input: DeserializeOwned,
    H::Answer: Serialize,
{
    let typed: H::Input =
        serde_json::from_value(input.clone()).map_err(|e| Unanswerable::BadInput {
            task: H::ID,
            error: e.to_string(),
        })?;
    serde_json::to_value(H::answer(&typed)).map_err(|e| Unanswerable::BadInput {
        task: H::ID,
        error: e.to_string(),
    })
}

/// The heuristic answer to task `prompt_id` for a serialised task input.
pub fn answer(prompt_id: &str, input: &Value) -> Result<Value, Unanswerable> {
    use deepr_tasks::*;
    match prompt_id {
        decompose::Decompose::ID => run::<decompose::Decompose>(input),
        subquery::Subquery::ID => run::<subquery::Subquery>(input),
        triage::Triage::ID => run::<triage::Triage>(input),
        extract::Extract::ID => run::<extract::Extract>(input),
        extract_free::ExtractFree::ID => run::<extract_free::ExtractFree>(input),
        judge::Judge::ID => run::<judge::Judge>(input),
        judge_vote::JudgeVote::ID => run::<judge_vote::JudgeVote>(input),
        conflict::ConflictDetect::ID => run::<conflict::ConflictDetect>(input),
        deepen::Deepen::ID => run::<deepen::Deepen>(input),
        write_section::WriteSection::ID => run::<write_section::WriteSection>(input),
        synthesize::Synthesize::ID => run::<synthesize::Synthesize>(input),
        other => Err(Unanswerable::UnknownTask(other.to_string())),
    }
}

/// The version of the heuristic for task `prompt_id` (None: no such task).
pub fn version(prompt_id: &str) -> Option<u32> {
    use deepr_tasks::*;
    Some(match prompt_id {
        decompose::Decompose::ID => <decompose::Decompose as Heuristic>::VERSION,
        subquery::Subquery::ID => <subquery::Subquery as Heuristic>::VERSION,
        triage::Triage::ID => <triage::Triage as Heuristic>::VERSION,
        extract::Extract::ID => <extract::Extract as Heuristic>::VERSION,
        extract_free::ExtractFree::ID => <extract_free::ExtractFree as Heuristic>::VERSION,
        judge::Judge::ID => <judge::Judge as Heuristic>::VERSION,
        judge_vote::JudgeVote::ID => <judge_vote::JudgeVote as Heuristic>::VERSION,
        conflict::ConflictDetect::ID => <conflict::ConflictDetect as Heuristic>::VERSION,
        deepen::Deepen::ID => <deepen::Deepen as Heuristic>::VERSION,
        write_section::WriteSection::ID => <write_section::WriteSection as Heuristic>::VERSION,
        synthesize::Synthesize::ID => <synthesize::Synthesize as Heuristic>::VERSION,
        _ => return None,
    })
}

#[async_trait]
impl LlmProvider for HeuristicModel {
    fn model_id(&self) -> String {
        MODEL_ID.to_string()
    }

    fn model_id_for(&self, prompt_id: &str) -> String {
        match version(prompt_id) {
            Some(v) => format!("{MODEL_ID}/{prompt_id}.v{v}"),
            None => MODEL_ID.to_string(),
        }
    }

    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let value =
            answer(&request.prompt_id, &request.task_input).map_err(|e| LlmError::Call {
                status: CallStatus::BadResponse,
                message: e.to_string(),
            })?;
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
            model: self.model_id_for(&request.prompt_id),
            text,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_has_a_heuristic_and_a_version() {
        for id in deepr_tasks::IDS {
            let v = version(id).expect("every task has a heuristic");
            assert_eq!(
                HeuristicModel::default().model_id_for(id),
                format!("offline:heuristic/{id}.v{v}")
            );
        }
        // An edited heuristic changes its task's model id, so node and cache keys change.
        assert_eq!(version("decompose"), Some(9));
        assert_eq!(version("nope"), None);
    }

    #[test]
    fn an_input_of_the_wrong_shape_is_a_loud_error() {
        // The old failure: a renamed key read as empty. Now it is refused.
        let error = answer("judge", &serde_json::json!({"claimz": []})).unwrap_err();
        assert!(
            error.to_string().contains("judge input does not match"),
            "{error}"
        );
        assert!(matches!(
            answer("nope", &Value::Null),
            Err(Unanswerable::UnknownTask(_))
        ));
    }
}
