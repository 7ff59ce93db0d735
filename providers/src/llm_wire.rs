//! The two wire protocols of remote chat models — OpenAI-compatible chat completions
//! and the Anthropic Messages API: the request body for a structured-output mode, and
//! the answer's text and token usage. No I/O: `RemoteLlm` (llm.rs) sends and
//! retries.

use deepr_orchestrator::LlmRequest;
use serde_json::{json, Value};

use crate::llm_spec::Api;

/// How the task's JSON schema reaches the model: as `response_format: json_schema`, as
/// `json_object`, or written into the prompt (what every server accepts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StructuredMode {
    JsonSchema,
    JsonObject,
    PromptOnly,
}

/// The user message as sent: in prompt-only mode the schema is appended to it.
pub(crate) fn user_message(request: &LlmRequest, mode: StructuredMode) -> String {
    let mut user = request.user.clone();
    if mode == StructuredMode::PromptOnly {
        user.push_str(&format!("\n\nAnswer with a single JSON object that matches this JSON schema, and nothing else:\n{}", request.schema));
    }
    user
}

/// The URL and JSON body of one request.
pub(crate) fn request(
    api: Api,
    base_url: &str,
    model: &str,
    max_tokens: u32,
    request: &LlmRequest,
    mode: StructuredMode,
) -> (String, Value) {
    let user = user_message(request, mode);
    match api {
        Api::OpenAi => {
            let mut body = json!({
                "model": model,
                "messages": [{"role": "system", "content": request.system}, {"role": "user", "content": user}],
                "temperature": 0,
                "max_tokens": max_tokens,
            });
            match mode {
                StructuredMode::JsonSchema => {
                    body["response_format"] = json!({"type": "json_schema", "json_schema": {"name": request.prompt_id, "schema": request.schema, "strict": false}});
                }
                StructuredMode::JsonObject => {
                    body["response_format"] = json!({"type": "json_object"})
                }
                StructuredMode::PromptOnly => {}
            }
            (format!("{base_url}/chat/completions"), body)
        }
        Api::Anthropic => (
            format!("{base_url}/v1/messages"),
            json!({
                "model": model,
                "system": request.system,
                "messages": [{"role": "user", "content": user}],
                "temperature": 0,
                "max_tokens": max_tokens,
            }),
        ),
    }
}

/// Token usage an answer reports: (prompt, completion, cached prompt tokens).
pub(crate) type Usage = (u64, u64, u64);

/// The answer's text and its reported usage (`None` when the server sent none).
pub(crate) fn answer(api: Api, value: &Value) -> Result<(String, Option<Usage>), &'static str> {
    match api {
        Api::OpenAi => {
            let message = &value["choices"][0]["message"];
            if message.is_null() {
                return Err("the answer has no choices[0].message");
            }
            let content = message["content"].as_str().unwrap_or_default().to_string();
            let usage = value.get("usage").filter(|u| u.is_object()).map(|u| {
                (
                    u["prompt_tokens"].as_u64().unwrap_or(0),
                    u["completion_tokens"].as_u64().unwrap_or(0),
                    u["prompt_tokens_details"]["cached_tokens"]
                        .as_u64()
                        .unwrap_or(0),
                )
            });
            Ok((content, usage))
        }
        Api::Anthropic => {
            let blocks = value["content"]
                .as_array()
                .ok_or("the answer has no content blocks")?;
            let content: String = blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            // Anthropic's `input_tokens` excludes the prompt-cache tokens: the prompt is
            // input + tokens written to the cache + tokens read from it.
            let usage = value.get("usage").filter(|u| u.is_object()).map(|u| {
                let read = u["cache_read_input_tokens"].as_u64().unwrap_or(0);
                let written = u["cache_creation_input_tokens"].as_u64().unwrap_or(0);
                (
                    u["input_tokens"].as_u64().unwrap_or(0) + written + read,
                    u["output_tokens"].as_u64().unwrap_or(0),
                    read,
                )
            });
            Ok((content, usage))
        }
    }
}
