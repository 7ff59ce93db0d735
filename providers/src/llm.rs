//! Remote chat models: OpenAI-compatible chat completions (OpenAI, Ollama, vLLM,
//! llama.cpp's server, OpenRouter, … by base URL) and the Anthropic Messages API.
//!
//! Each provider instance is polite on its own:
//! * a **requests-per-minute** and a **tokens-per-minute** governor limiter (a request's
//!   tokens are estimated with the o200k tokenizer before it is sent) and a concurrency
//!   cap;
//! * **retries** with exponential backoff and jitter (backon) on 429, 5xx, timeouts and
//!   connection errors, up to a cap; a `Retry-After` (seconds or an HTTP date) **pauses
//!   every request to the provider** until the time it names;
//! * connect and total **timeouts**, so a hung server cannot hang a run.
//!
//! Structured output: the task's JSON schema is sent as `response_format: json_schema`;
//! a server that rejects it is asked again with `json_object`, then with the schema in
//! the prompt — and the provider remembers what worked. Answers stay untrusted text: the
//! stages validate them. API keys live only in memory: never in errors, logs or
//! checkpoints (`Debug` redacts them).

use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use backon::{BackoffBuilder, ExponentialBuilder};
use deepr_evidence::report::CallStatus;
use deepr_orchestrator::tokens::{count_chat_tokens, count_tokens};
use deepr_orchestrator::{LlmError, LlmProvider, LlmRequest, LlmResponse, SharedRateGate};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::time::Instant;

pub use crate::llm_spec::{
    Api, LlmSpec, ANTHROPIC_DEFAULT_BASE, OLLAMA_DEFAULT_BASE, OPENAI_DEFAULT_BASE,
};
pub use deepr_settings::LlmLimits;

use crate::llm_wire::{self as wire, StructuredMode};

/// Why one HTTP attempt failed.
#[derive(Debug)]
struct AttemptError {
    status: CallStatus,
    message: String,
    retry_after: Option<Duration>,
    schema_rejected: bool,
}

impl AttemptError {
    fn new(status: CallStatus, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            retry_after: None,
            schema_rejected: false,
        }
    }

    fn retryable(&self) -> bool {
        matches!(
            self.status,
            CallStatus::RateLimited | CallStatus::Timeout | CallStatus::Unreachable
        )
    }
}

/// A remote chat model with its limiter, retry policy and structured-output memory.
pub struct RemoteLlm {
    provider: String,
    api: Api,
    model: String,
    base_url: String,
    api_key: Option<String>,
    client: reqwest::Client,
    limits: LlmLimits,
    requests: DefaultDirectRateLimiter,
    tokens: DefaultDirectRateLimiter,
    token_capacity: u32,
    slots: Semaphore,
    paused_until: Mutex<Option<Instant>>,
    mode: Mutex<StructuredMode>,
    /// Fleet mode: the limit every worker shares, and this model's key in it.
    shared: Option<(std::sync::Arc<dyn SharedRateGate>, String)>,
}

impl std::fmt::Debug for RemoteLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteLlm")
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

fn quota(per_window: u32, window: Duration) -> Quota {
    let n = NonZeroU32::new(per_window.max(1)).unwrap_or(NonZeroU32::MIN);
    let period = window
        .checked_div(n.get())
        .filter(|p| !p.is_zero())
        .unwrap_or(Duration::from_nanos(1));
    Quota::with_period(period)
        .unwrap_or_else(|| Quota::per_second(n))
        .allow_burst(n)
}

/// Parse `Retry-After`: seconds, or an HTTP date.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0)
            .then(|| Duration::from_secs_f64(seconds.min(3600.0)));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO)
            .min(Duration::from_secs(3600)),
    )
}

impl RemoteLlm {
    /// A provider for `spec` at `base_url`. The key is optional for local servers.
    pub fn new(
        spec: &LlmSpec,
        base_url: Option<&str>,
        api_key: Option<String>,
        limits: LlmLimits,
    ) -> Result<Self, String> {
        let LlmSpec::Remote {
            provider,
            api,
            model,
        } = spec
        else {
            return Err("the offline model is not a remote provider".into());
        };
        let base_url = base_url
            .or(spec.default_base_url())
            .unwrap_or(OPENAI_DEFAULT_BASE)
            .trim_end_matches('/')
            .to_string();
        let parsed = url::Url::parse(&base_url)
            .map_err(|e| format!("--llm-base-url {base_url:?} is not a URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!(
                "--llm-base-url {base_url:?} must be http:// or https://"
            ));
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .user_agent(crate::http::USER_AGENT)
            .timeout(Duration::from_secs_f64(limits.timeout_s.max(0.001)))
            .connect_timeout(Duration::from_secs_f64(limits.connect_timeout_s.max(0.001)))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let token_capacity = limits.tokens_per_minute.max(1);
        Ok(Self {
            provider: provider.clone(),
            api: *api,
            model: model.clone(),
            base_url,
            api_key: api_key.filter(|k| !k.trim().is_empty()),
            client,
            requests: RateLimiter::direct(quota(limits.requests_per_minute, limits.window)),
            tokens: RateLimiter::direct(quota(token_capacity, limits.window)),
            token_capacity,
            slots: Semaphore::new(limits.concurrency.max(1)),
            paused_until: Mutex::new(None),
            shared: None,
            mode: Mutex::new(if *api == Api::Anthropic {
                StructuredMode::PromptOnly
            } else {
                StructuredMode::JsonSchema
            }),
            limits,
        })
    }

    /// Also draw on `gate`, the rate limit every worker of a fleet shares (keyed by
    /// provider, base URL and model), and tell it of every `Retry-After`.
    pub fn with_shared_limits(mut self, gate: std::sync::Arc<dyn SharedRateGate>) -> Self {
        // The base URL without any user or password it may carry.
        let base = url::Url::parse(&self.base_url)
            .map(|mut parsed| {
                let _ = parsed.set_username("");
                let _ = parsed.set_password(None);
                parsed.to_string()
            })
            .unwrap_or_else(|_| self.base_url.clone());
        let key = format!("{}|{}|{}", self.provider, base, self.model);
        self.shared = Some((gate, key));
        self
    }

    fn current_mode(&self) -> StructuredMode {
        self.mode
            .lock()
            .map(|m| *m)
            .unwrap_or(StructuredMode::PromptOnly)
    }

    fn downgrade(&self, from: StructuredMode) {
        if let Ok(mut mode) = self.mode.lock() {
            if *mode == from {
                *mode = match from {
                    StructuredMode::JsonSchema => StructuredMode::JsonObject,
                    _ => StructuredMode::PromptOnly,
                };
            }
        }
    }

    fn pause_for(&self, delay: Duration) {
        if let Ok(mut paused) = self.paused_until.lock() {
            let until = Instant::now() + delay;
            if paused.is_none_or(|p| p < until) {
                *paused = Some(until);
            }
        }
    }

    async fn wait_for_pause(&self) {
        loop {
            let until = self.paused_until.lock().ok().and_then(|p| *p);
            match until {
                Some(until) if until > Instant::now() => tokio::time::sleep_until(until).await,
                _ => return,
            }
        }
    }

    fn body(&self, request: &LlmRequest, mode: StructuredMode) -> (String, Value) {
        wire::request(
            self.api,
            &self.base_url,
            &self.model,
            self.limits.max_tokens,
            request,
            mode,
        )
    }

    async fn attempt(
        &self,
        request: &LlmRequest,
        mode: StructuredMode,
    ) -> Result<LlmResponse, AttemptError> {
        let (url, body) = self.body(request, mode);
        let mut builder = self
            .client
            .post(&url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(&body).unwrap_or_default());
        match (self.api, &self.api_key) {
            (Api::OpenAi, Some(key)) => builder = builder.bearer_auth(key),
            (Api::Anthropic, Some(key)) => builder = builder.header("x-api-key", key),
            _ => {}
        }
        if self.api == Api::Anthropic {
            builder = builder.header("anthropic-version", "2023-06-01");
        }
        let response = builder.send().await.map_err(|e| {
            if e.is_timeout() {
                AttemptError::new(
                    CallStatus::Timeout,
                    format!("no answer within {} s", self.limits.timeout_s),
                )
            } else {
                AttemptError::new(
                    CallStatus::Unreachable,
                    format!("cannot reach {}: {}", self.base_url, error_chain(&e)),
                )
            }
        })?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let text = response.text().await.map_err(|e| {
            if e.is_timeout() {
                AttemptError::new(
                    CallStatus::Timeout,
                    format!("no complete answer within {} s", self.limits.timeout_s),
                )
            } else {
                AttemptError::new(
                    CallStatus::Unreachable,
                    "the connection broke while reading the answer",
                )
            }
        })?;
        if !status.is_success() {
            let snippet: String = text.chars().take(300).collect();
            let kind = match status.as_u16() {
                401 | 403 => CallStatus::AuthFailed,
                429 => CallStatus::RateLimited,
                408 | 500..=599 => CallStatus::Unreachable,
                _ => CallStatus::BadResponse,
            };
            // A server may echo the key back ("Incorrect API key provided: sk-…").
            let snippet = match &self.api_key {
                Some(key) if key.len() >= 4 => snippet.replace(key.as_str(), "<redacted>"),
                _ => snippet,
            };
            let lower = snippet.to_ascii_lowercase();
            let schema_rejected = matches!(status.as_u16(), 400 | 422)
                && (lower.contains("response_format")
                    || lower.contains("json_schema")
                    || lower.contains("schema"));
            return Err(AttemptError {
                status: kind,
                message: format!("HTTP {status}: {snippet}"),
                retry_after,
                schema_rejected,
            });
        }
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            AttemptError::new(
                CallStatus::BadResponse,
                format!("the answer is not JSON: {e}"),
            )
        })?;
        self.parse_answer(request, &value, mode)
    }

    fn parse_answer(
        &self,
        request: &LlmRequest,
        value: &Value,
        mode: StructuredMode,
    ) -> Result<LlmResponse, AttemptError> {
        let (content, usage) = wire::answer(self.api, value)
            .map_err(|why| AttemptError::new(CallStatus::BadResponse, why))?;
        let (prompt_tokens, completion_tokens, cached_tokens, usage_estimated) = match usage {
            Some((p, c, cached)) if p + c > 0 => (p, c, cached, false),
            _ => {
                let user = wire::user_message(request, mode);
                (
                    count_chat_tokens(&[("system", &request.system), ("user", &user)]),
                    count_tokens(&content),
                    0,
                    true,
                )
            }
        };
        Ok(LlmResponse {
            text: content,
            model: self.model_id(),
            prompt_tokens,
            completion_tokens,
            cached_tokens,
            cost_usd: 0.0,
            cache_hit: false,
            usage_estimated,
        })
    }
}

/// The whole chain of a reqwest error, for the message. It names the URL, never a key:
/// keys travel in headers, which reqwest errors do not show. (Key echoes in a server's
/// error body are removed where the body is read.)
fn error_chain(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

#[async_trait]
impl LlmProvider for RemoteLlm {
    fn model_id(&self) -> String {
        format!("{}:{}", self.provider, self.model)
    }

    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let _slot = self.slots.acquire().await.map_err(|_| LlmError::Call {
            status: CallStatus::Unreachable,
            message: "provider closed".into(),
        })?;
        let estimate = count_chat_tokens(&[("system", &request.system), ("user", &request.user)])
            + u64::from(self.limits.max_tokens);
        let cells = NonZeroU32::new(
            u32::try_from(estimate)
                .unwrap_or(u32::MAX)
                .clamp(1, self.token_capacity),
        )
        .unwrap_or(NonZeroU32::MIN);
        let mut backoff = ExponentialBuilder::default()
            .with_jitter()
            .with_min_delay(Duration::from_millis(500))
            .with_max_delay(Duration::from_secs(60))
            .with_max_times(self.limits.max_retries)
            .build();
        loop {
            self.wait_for_pause().await;
            self.requests.until_ready().await;
            let _ = self.tokens.until_n_ready(cells).await;
            if let Some((gate, key)) = &self.shared {
                let window = self.limits.window;
                gate.acquire(
                    &format!("{key}|requests"),
                    1,
                    self.limits.requests_per_minute.max(1),
                    window,
                )
                .await;
                gate.acquire(
                    &format!("{key}|tokens"),
                    cells.get(),
                    self.token_capacity,
                    window,
                )
                .await;
            }
            // A Retry-After seen by another request while we waited for the limiter.
            self.wait_for_pause().await;
            let mode = self.current_mode();
            match self.attempt(request, mode).await {
                Ok(response) => return Ok(response),
                Err(error) if error.schema_rejected && mode != StructuredMode::PromptOnly => {
                    // Remember for every later request: this server refuses that mode.
                    self.downgrade(mode);
                }
                Err(error) if error.retryable() => {
                    let Some(delay) = backoff.next() else {
                        return Err(LlmError::Call {
                            status: error.status,
                            message: format!(
                                "{} (gave up after {} retries)",
                                error.message, self.limits.max_retries
                            ),
                        });
                    };
                    match error.retry_after {
                        // Every request to this provider waits until the time it names.
                        Some(after) => {
                            self.pause_for(after);
                            if let Some((gate, key)) = &self.shared {
                                gate.pause(&format!("{key}|requests"), after).await;
                            }
                        }
                        None => tokio::time::sleep(delay).await,
                    }
                }
                Err(error) => {
                    return Err(LlmError::Call {
                        status: error.status,
                        message: error.message,
                    })
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert_eq!(LlmSpec::parse("offline"), Ok(LlmSpec::Offline));
        assert_eq!(
            LlmSpec::parse("openai:gpt-4.1-mini").map(|s| s.as_string()),
            Ok("openai:gpt-4.1-mini".into())
        );
        assert_eq!(
            LlmSpec::parse("ollama:llama3")
                .ok()
                .and_then(|s| s.default_base_url()),
            Some(OLLAMA_DEFAULT_BASE)
        );
        assert!(LlmSpec::parse("gpt4").is_err());
        assert!(LlmSpec::parse("bard:x").is_err());
        assert!(LlmSpec::parse("openai:").is_err());
    }

    #[test]
    fn retry_after_values() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert!(parse_retry_after("soon").is_none());
        let later = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(30));
        assert!(parse_retry_after(&later).is_some_and(|d| d > Duration::from_secs(25)));
    }

    #[test]
    fn keys_are_redacted_in_debug() {
        let spec = LlmSpec::parse("openai:m").expect("spec");
        let llm = RemoteLlm::new(
            &spec,
            Some("http://127.0.0.1:1/v1"),
            Some("sk-secret".into()),
            LlmLimits::default(),
        )
        .expect("llm");
        assert!(!format!("{llm:?}").contains("sk-secret"));
    }
}
