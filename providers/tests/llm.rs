//! Remote LLM providers against loopback mock servers (wiremock): usage accounting,
//! rate limits and Retry-After, retries, timeouts, malformed answers, and servers that
//! refuse structured output.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deepr_evidence::report::CallStatus;
use deepr_orchestrator::{LlmError, LlmProvider, LlmRequest, Tier};
use deepr_providers::{LlmLimits, LlmSpec, RemoteLlm};
use serde_json::{json, Value};
use wiremock::matchers::{body_string_contains, header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

fn request() -> LlmRequest {
    LlmRequest {
        stage: "extract".into(),
        prompt_id: "extract".into(),
        prompt_version: 1,
        tier: Tier::Cheap,
        system: "You extract claims.".into(),
        user: "Candidate sentences: [c1] The journal is deleted at commit.".into(),
        schema: json!({"type": "object"}),
        task_input: Value::Null,
        fresh: false,
    }
}

fn completion(content: &str, usage: bool) -> Value {
    let mut body = json!({"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]});
    if usage {
        body["usage"] = json!({"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49, "prompt_tokens_details": {"cached_tokens": 10}});
    }
    body
}

fn limits() -> LlmLimits {
    LlmLimits {
        max_retries: 3,
        timeout_s: 5.0,
        ..LlmLimits::default()
    }
}

fn provider(server: &MockServer, limits: LlmLimits) -> RemoteLlm {
    let spec = LlmSpec::parse("openai:test-model").expect("spec");
    RemoteLlm::new(
        &spec,
        Some(&format!("{}/v1", server.uri())),
        Some("sk-test-key".into()),
        limits,
    )
    .expect("provider")
}

/// Answers from a script (the last entry repeats) and records when each request came.
#[derive(Clone)]
struct Script {
    replies: Arc<Mutex<Vec<ResponseTemplate>>>,
    times: Arc<Mutex<Vec<Instant>>>,
}

impl Script {
    fn new(replies: Vec<ResponseTemplate>) -> Self {
        Self {
            replies: Arc::new(Mutex::new(replies)),
            times: Arc::new(Mutex::new(Vec::new())),
        }
    }
    fn times(&self) -> Vec<Instant> {
        self.times.lock().map(|t| t.clone()).unwrap_or_default()
    }
}

impl Respond for Script {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        if let Ok(mut times) = self.times.lock() {
            times.push(Instant::now());
        }
        let mut replies = self.replies.lock().expect("script");
        if replies.len() > 1 {
            replies.remove(0)
        } else {
            replies[0].clone()
        }
    }
}

#[tokio::test]
async fn success_reports_usage_and_sends_schema_and_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-test-key"))
        .and(body_string_contains("json_schema"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(completion("{\"claims\": []}", true)),
        )
        .expect(1)
        .mount(&server)
        .await;
    let response = provider(&server, limits())
        .complete(&request())
        .await
        .expect("ok");
    assert_eq!(
        (
            response.prompt_tokens,
            response.completion_tokens,
            response.cached_tokens
        ),
        (42, 7, 10)
    );
    assert!(!response.usage_estimated);
    assert_eq!(response.model, "openai:test-model");
}

#[tokio::test]
async fn missing_usage_is_counted_and_marked_estimated() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(completion("{\"claims\": []}", false)),
        )
        .mount(&server)
        .await;
    let response = provider(&server, limits())
        .complete(&request())
        .await
        .expect("ok");
    assert!(response.usage_estimated);
    assert!(response.prompt_tokens > 10 && response.completion_tokens > 0);
}

#[tokio::test]
async fn retry_after_seconds_pauses_every_request_to_the_provider() {
    let server = MockServer::start().await;
    let script = Script::new(vec![
        ResponseTemplate::new(429).insert_header("retry-after", "1"),
        ResponseTemplate::new(200).set_body_json(completion("{}", true)),
    ]);
    Mock::given(method("POST"))
        .respond_with(script.clone())
        .mount(&server)
        .await;
    let llm = Arc::new(provider(&server, limits()));
    let first = tokio::spawn({
        let llm = Arc::clone(&llm);
        async move { llm.complete(&request()).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A second request, started while the provider is paused, waits too.
    let second = llm.complete(&request()).await;
    assert!(second.is_ok());
    assert!(first.await.expect("join").is_ok());
    let times = script.times();
    assert_eq!(times.len(), 3, "one 429, then one request each");
    for later in &times[1..] {
        assert!(
            later.duration_since(times[0]) >= Duration::from_millis(950),
            "no request before the time Retry-After names"
        );
    }
}

#[tokio::test]
async fn retry_after_http_date_is_honoured() {
    let server = MockServer::start().await;
    let when = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(2));
    let script = Script::new(vec![
        ResponseTemplate::new(429).insert_header("retry-after", when.as_str()),
        ResponseTemplate::new(200).set_body_json(completion("{}", true)),
    ]);
    Mock::given(method("POST"))
        .respond_with(script.clone())
        .mount(&server)
        .await;
    provider(&server, limits())
        .complete(&request())
        .await
        .expect("ok");
    let times = script.times();
    assert_eq!(times.len(), 2);
    // HTTP dates have one-second resolution: at least one second passed.
    assert!(times[1].duration_since(times[0]) >= Duration::from_millis(900));
}

#[tokio::test]
async fn server_errors_are_retried_then_succeed() {
    let server = MockServer::start().await;
    let script = Script::new(vec![
        ResponseTemplate::new(500),
        ResponseTemplate::new(200).set_body_json(completion("{}", true)),
    ]);
    Mock::given(method("POST"))
        .respond_with(script.clone())
        .mount(&server)
        .await;
    provider(&server, limits())
        .complete(&request())
        .await
        .expect("ok after a retry");
    assert_eq!(script.times().len(), 2);
}

#[tokio::test]
async fn a_hung_server_times_out_within_the_retry_cap() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(completion("{}", true))
                .set_delay(Duration::from_secs(10)),
        )
        .mount(&server)
        .await;
    let started = Instant::now();
    let error = provider(
        &server,
        LlmLimits {
            timeout_s: 0.3,
            max_retries: 1,
            ..LlmLimits::default()
        },
    )
    .complete(&request())
    .await
    .expect_err("timeout");
    assert!(
        matches!(
            error,
            LlmError::Call {
                status: CallStatus::Timeout,
                ..
            }
        ),
        "{error}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "bounded by timeout × attempts + backoff"
    );
}

#[tokio::test]
async fn malformed_answers_and_auth_failures_are_not_retried() {
    let server = MockServer::start().await;
    let script = Script::new(vec![
        ResponseTemplate::new(200).set_body_string("<html>oops")
    ]);
    Mock::given(method("POST"))
        .respond_with(script.clone())
        .mount(&server)
        .await;
    let error = provider(&server, limits())
        .complete(&request())
        .await
        .expect_err("bad");
    assert!(
        matches!(
            error,
            LlmError::Call {
                status: CallStatus::BadResponse,
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(script.times().len(), 1);

    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401).set_body_string("{\"error\": \"bad key sk-test-key\"}"),
        )
        .expect(1)
        .mount(&server)
        .await;
    let error = provider(&server, limits())
        .complete(&request())
        .await
        .expect_err("auth");
    assert!(
        matches!(
            error,
            LlmError::Call {
                status: CallStatus::AuthFailed,
                ..
            }
        ),
        "{error}"
    );
}

#[tokio::test]
async fn empty_content_and_refusals_are_returned_for_validation() {
    let server = MockServer::start().await;
    let refusal = json!({"choices": [{"message": {"role": "assistant", "content": null, "refusal": "I can't help with that."}}], "usage": {"prompt_tokens": 5, "completion_tokens": 3}});
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(refusal))
        .mount(&server)
        .await;
    let response = provider(&server, limits())
        .complete(&request())
        .await
        .expect("answered");
    assert_eq!(
        response.text, "",
        "an empty answer goes to validation (and repair), it is not an error"
    );
}

#[tokio::test]
async fn a_server_rejecting_json_schema_falls_back_and_remembers() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(body_string_contains("json_schema"))
        .respond_with(ResponseTemplate::new(400).set_body_string(
            "{\"error\": {\"message\": \"response_format json_schema is not supported\"}}",
        ))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(body_string_contains("json_object"))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion("{}", true)))
        .expect(2)
        .mount(&server)
        .await;
    let llm = provider(&server, limits());
    llm.complete(&request()).await.expect("fallback");
    llm.complete(&request())
        .await
        .expect("remembered: straight to json_object");
}

#[tokio::test]
async fn tokens_per_minute_spaces_requests() {
    let server = MockServer::start().await;
    let script = Script::new(vec![
        ResponseTemplate::new(200).set_body_json(completion("{}", true))
    ]);
    Mock::given(method("POST"))
        .respond_with(script.clone())
        .mount(&server)
        .await;
    // A 1-second window holding 1,000 tokens; each request is estimated at ~570
    // (prompt + max_tokens 550): 3 × 570 − 1,000 burst = 710 tokens must refill, which
    // takes ~0.71 s at 1,000 tokens/s. Unlimited, the three would take milliseconds.
    let limits = LlmLimits {
        tokens_per_minute: 1000,
        max_tokens: 550,
        window: Duration::from_secs(1),
        ..limits()
    };
    let llm = provider(&server, limits);
    for _ in 0..3 {
        llm.complete(&request()).await.expect("ok");
    }
    let times = script.times();
    let spread = times[2].duration_since(times[0]);
    assert!(
        spread >= Duration::from_millis(600),
        "requests spaced by the token limiter: {spread:?}"
    );
}

/// The Messages API path: key in `x-api-key`, `anthropic-version`, the system prompt as
/// its own field; the prompt-cache tokens count (written and read), read ones as cached.
#[tokio::test]
async fn anthropic_messages_count_prompt_cache_tokens() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "sk-ant-test"))
        .and(header("anthropic-version", "2023-06-01"))
        .and(body_string_contains("\"system\":\"You extract claims.\""))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": "{\"claims\": []}"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 20, "cache_creation_input_tokens": 100,
                      "cache_read_input_tokens": 300, "output_tokens": 9}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let spec = LlmSpec::parse("anthropic:claude-test").expect("spec");
    let anthropic = RemoteLlm::new(
        &spec,
        Some(&server.uri()),
        Some("sk-ant-test".into()),
        limits(),
    )
    .expect("provider");
    let response = anthropic.complete(&request()).await.expect("ok");
    assert_eq!(response.text, "{\"claims\": []}");
    assert_eq!(
        (
            response.prompt_tokens,
            response.completion_tokens,
            response.cached_tokens
        ),
        (420, 9, 300),
        "input + cache written + cache read; read ones are cached"
    );
    assert!(!response.usage_estimated);
    assert_eq!(response.model, "anthropic:claude-test");
}
