//! The response cache and the per-run call journal.
//!
//! The cache holds model answers as content-addressed files
//! `cache/<bucket>/<aa>/<blake3 of the request>.json`, written by temp file + rename and
//! synced as soon as the answer arrives, so a run killed a moment later finds it on
//! resume and pays nothing for it again. Runs share the cache (two runs asking the
//! identical question pay once); a namespace in the key can separate them (benchmarks
//! that must not share answers across strategies).
//!
//! Only successful answers are cached. A failed call (timeout, rate limit, 5xx) is not,
//! so a run that met an outage is repaired by resuming it later.
//!
//! The journal `runs/<id>/calls.jsonl` gets one line per model call as it completes —
//! the authoritative record of what a run spent across all its sessions, used for
//! budgets on resume and to prove that no completed call was ever paid twice.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use deepr_orchestrator::{LlmError, LlmProvider, LlmRequest, LlmResponse};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Content-addressed response files shared by runs.
pub struct ResponseCache {
    root: PathBuf,
}

impl ResponseCache {
    /// Open (creating) the cache under `state_dir/cache`.
    pub fn open(state_dir: &Path) -> std::io::Result<Self> {
        let root = state_dir.join("cache");
        std::fs::create_dir_all(&root)?;
        Ok(Self { root })
    }

    fn path(&self, bucket: &str, key: &str) -> Option<PathBuf> {
        let safe =
            |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        (safe(bucket) && safe(key) && key.len() >= 4).then(|| {
            self.root
                .join(bucket)
                .join(&key[..2])
                .join(format!("{key}.json"))
        })
    }

    /// A cached value; an unreadable or damaged entry is a miss.
    pub fn get(&self, bucket: &str, key: &str) -> Option<Value> {
        let bytes = std::fs::read(self.path(bucket, key)?).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Store a value durably (temp file, fsync, rename).
    pub fn put(&self, bucket: &str, key: &str, value: &Value) -> std::io::Result<()> {
        let path = self
            .path(bucket, key)
            .ok_or_else(|| std::io::Error::other("invalid cache key"))?;
        let dir = path.parent().unwrap_or(&self.root);
        std::fs::create_dir_all(dir)?;
        let bytes = serde_json::to_vec(value).map_err(std::io::Error::other)?;
        crate::atomic::write_atomically(&path, &bytes)
    }
}

/// One model call as recorded in the journal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// blake3 of the full request (the cache key).
    pub request: String,
    pub stage: String,
    pub prompt_id: String,
    pub model: String,
    pub cache_hit: bool,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cost_usd: f64,
}

/// Append-only per-run journal of model calls (`calls.jsonl`).
pub struct CallJournal {
    file: Mutex<std::fs::File>,
}

impl CallJournal {
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Self {
            file: Mutex::new(file),
        })
    }

    /// Append one entry as a single write, so a kill leaves at most a torn last line.
    pub fn append(&self, entry: &JournalEntry) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let mut file = self
            .file
            .lock()
            .map_err(|_| std::io::Error::other("journal lock poisoned"))?;
        file.write_all(&line)
    }

    /// Every complete entry of a journal (a torn or damaged line is skipped).
    pub fn read(path: &Path) -> Vec<JournalEntry> {
        std::fs::read_to_string(path)
            .map(|text| {
                text.lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Tokens and dollars of the live (not cached) calls in a journal.
    pub fn spent(path: &Path) -> (u64, f64) {
        Self::read(path)
            .iter()
            .filter(|e| !e.cache_hit)
            .fold((0, 0.0), |(t, c), e| {
                (t + e.prompt_tokens + e.completion_tokens, c + e.cost_usd)
            })
    }
}

/// Where model answers are kept by request hash: [`ResponseCache`] on one machine, a
/// database table in fleet mode (`deepr-fleet`), so no completed call is paid twice
/// whichever machine asks again.
#[async_trait]
pub trait AnswerCache: Send + Sync {
    /// A cached answer; anything unreadable is a miss.
    async fn get_answer(&self, key: &str) -> Option<Value>;
    /// Keep an answer durably before returning.
    async fn put_answer(&self, key: &str, value: &Value) -> std::io::Result<()>;
}

#[async_trait]
impl AnswerCache for ResponseCache {
    async fn get_answer(&self, key: &str) -> Option<Value> {
        self.get("llm", key)
    }

    async fn put_answer(&self, key: &str, value: &Value) -> std::io::Result<()> {
        self.put("llm", key, value)
    }
}

/// Where a run's model calls are journaled: `calls.jsonl` on one machine, a database
/// table in fleet mode.
#[async_trait]
pub trait CallLog: Send + Sync {
    async fn append_call(&self, entry: &JournalEntry) -> std::io::Result<()>;
}

#[async_trait]
impl CallLog for CallJournal {
    async fn append_call(&self, entry: &JournalEntry) -> std::io::Result<()> {
        self.append(entry)
    }
}

/// The cache key of an LLM request: blake3 over the namespace, the model and the
/// request. The offline model (`offline:…`) answers from the structured input, so all
/// of it counts; a remote model answers from what it is sent — the prompt text and
/// schema — so the structured input is left out: a step whose prompt is unchanged (a
/// refresh after a new document shifted ranking weights the prompt does not show) is
/// served from the cache. Remote keys are `v2`, so no answer keyed otherwise is reused.
pub fn llm_request_key(namespace: &str, model: &str, request: &LlmRequest) -> String {
    let mut hasher = blake3::Hasher::new();
    let body = if model.starts_with("offline:") {
        hasher.update(b"deepr.llm-request.v1\0");
        serde_json::to_vec(request)
    } else {
        hasher.update(b"deepr.llm-request.v2\0");
        let shown = LlmRequest {
            task_input: serde_json::Value::Null,
            ..request.clone()
        };
        serde_json::to_vec(&shown)
    };
    hasher.update(namespace.as_bytes());
    hasher.update(b"\0");
    hasher.update(model.as_bytes());
    hasher.update(b"\0");
    hasher.update(&body.unwrap_or_default());
    hasher.finalize().to_hex().to_string()
}

/// An LLM provider served from the response cache when it can be, journaling every call.
pub struct CachedLlm {
    pub inner: Arc<dyn LlmProvider>,
    pub cache: Arc<dyn AnswerCache>,
    pub journal: Option<Arc<dyn CallLog>>,
    pub namespace: String,
}

impl CachedLlm {
    async fn cache_lookup(&self, request: &LlmRequest, key: &str) -> Option<Value> {
        if request.fresh {
            return None;
        }
        self.cache.get_answer(key).await
    }

    async fn journal(&self, request: &LlmRequest, key: &str, response: &LlmResponse) {
        if let Some(journal) = &self.journal {
            let entry = JournalEntry {
                request: key.to_string(),
                stage: request.stage.clone(),
                prompt_id: request.prompt_id.clone(),
                model: response.model.clone(),
                cache_hit: response.cache_hit,
                prompt_tokens: if response.cache_hit {
                    0
                } else {
                    response.prompt_tokens
                },
                completion_tokens: if response.cache_hit {
                    0
                } else {
                    response.completion_tokens
                },
                cost_usd: if response.cache_hit {
                    0.0
                } else {
                    response.cost_usd
                },
            };
            // The journal is a record, not a dependency: a failed append never fails a call.
            let _ = journal.append_call(&entry).await;
        }
    }
}

#[async_trait]
impl LlmProvider for CachedLlm {
    fn model_id(&self) -> String {
        self.inner.model_id()
    }

    fn model_id_for(&self, prompt_id: &str) -> String {
        self.inner.model_id_for(prompt_id)
    }

    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let key = llm_request_key(
            &self.namespace,
            &self.inner.model_id_for(&request.prompt_id),
            request,
        );
        if let Some(cached) = self
            .cache_lookup(request, &key)
            .await
            .and_then(|v| serde_json::from_value::<LlmResponse>(v).ok())
        {
            let response = LlmResponse {
                cache_hit: true,
                ..cached
            };
            self.journal(request, &key, &response).await;
            return Ok(response);
        }
        let response = self.inner.complete(request).await?;
        if let Ok(value) = serde_json::to_value(&response) {
            // A cache that cannot be written costs money on resume, never correctness.
            let _ = self.cache.put_answer(&key, &value).await;
        }
        self.journal(request, &key, &response).await;
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use deepr_evidence::report::CallStatus;
    use deepr_orchestrator::Tier;

    use super::*;

    struct Counting(AtomicUsize, bool);

    #[async_trait]
    impl LlmProvider for Counting {
        fn model_id(&self) -> String {
            "counting".into()
        }
        async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            if self.1 {
                return Err(LlmError::Call {
                    status: CallStatus::RateLimited,
                    message: "429".into(),
                });
            }
            Ok(LlmResponse {
                text: request.user.clone(),
                model: "counting".into(),
                prompt_tokens: 7,
                completion_tokens: 3,
                cached_tokens: 0,
                cost_usd: 0.01,
                cache_hit: false,
                usage_estimated: false,
            })
        }
    }

    fn request(user: &str) -> LlmRequest {
        LlmRequest {
            stage: "extract".into(),
            prompt_id: "extract".into(),
            prompt_version: 1,
            tier: Tier::Cheap,
            system: "s".into(),
            user: user.into(),
            schema: Value::Null,
            task_input: Value::Null,
            fresh: false,
        }
    }

    #[test]
    fn a_remote_model_is_keyed_on_what_it_is_sent_the_offline_one_on_all_it_reads() {
        let mut weighted = request("the same prompt");
        weighted.task_input = serde_json::json!({"weight": 0.51});
        let mut reweighted = weighted.clone();
        reweighted.task_input = serde_json::json!({"weight": 0.52});
        let key = |model: &str, r: &LlmRequest| llm_request_key("", model, r);
        assert_eq!(key("openai:m", &weighted), key("openai:m", &reweighted));
        assert_ne!(
            key("offline:heuristic/extract.v8", &weighted),
            key("offline:heuristic/extract.v8", &reweighted)
        );
        let mut reworded = weighted.clone();
        reworded.user = "another prompt".into();
        assert_ne!(key("openai:m", &weighted), key("openai:m", &reworded));
    }

    #[tokio::test]
    async fn answers_are_paid_once_and_failures_are_retried() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Arc::new(ResponseCache::open(dir.path()).expect("cache"));
        let journal_path = dir.path().join("calls.jsonl");
        let journal = Arc::new(CallJournal::open(&journal_path).expect("journal"));
        let inner = Arc::new(Counting(AtomicUsize::new(0), false));
        let llm = CachedLlm {
            inner: inner.clone(),
            cache: Arc::clone(&cache) as Arc<dyn AnswerCache>,
            journal: Some(journal),
            namespace: String::new(),
        };
        let first = llm.complete(&request("a")).await.expect("first");
        let second = llm.complete(&request("a")).await.expect("second");
        assert!(!first.cache_hit && second.cache_hit);
        assert_eq!(second.text, first.text);
        assert_eq!(
            inner.0.load(Ordering::SeqCst),
            1,
            "the second identical request is free"
        );
        llm.complete(&request("b")).await.expect("other request");
        assert_eq!(inner.0.load(Ordering::SeqCst), 2);
        assert_eq!(CallJournal::spent(&journal_path), (20, 0.02));
        assert_eq!(
            CallJournal::read(&journal_path)
                .iter()
                .filter(|e| e.cache_hit)
                .count(),
            1
        );

        // Another namespace does not share answers.
        let other = CachedLlm {
            inner: inner.clone(),
            cache: Arc::clone(&cache) as Arc<dyn AnswerCache>,
            journal: None,
            namespace: "per-claim".into(),
        };
        assert!(!other.complete(&request("a")).await.expect("ns").cache_hit);

        // A failure is not cached: the next attempt calls again.
        let failing = Arc::new(Counting(AtomicUsize::new(0), true));
        let flaky = CachedLlm {
            inner: failing.clone(),
            cache,
            journal: None,
            namespace: "x".into(),
        };
        assert!(flaky.complete(&request("c")).await.is_err());
        assert!(flaky.complete(&request("c")).await.is_err());
        assert_eq!(failing.0.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn torn_journal_lines_and_damaged_entries_are_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("calls.jsonl");
        std::fs::write(&path, "{\"request\":\"k\",\"stage\":\"s\",\"prompt_id\":\"p\",\"model\":\"m\",\"cache_hit\":false,\"prompt_tokens\":1,\"completion_tokens\":2,\"cost_usd\":0.0}\n{\"request\":\"tor").expect("write");
        assert_eq!(CallJournal::read(&path).len(), 1);
        let cache = ResponseCache::open(dir.path()).expect("cache");
        let key = "abcdef0123";
        std::fs::create_dir_all(dir.path().join("cache/llm/ab")).expect("mkdir");
        std::fs::write(dir.path().join("cache/llm/ab/abcdef0123.json"), "garbage").expect("write");
        assert!(cache.get("llm", key).is_none());
        assert!(cache.get("llm", "../../x").is_none());
    }

    /// The same model with its code for one task at another version (`model_id_for`).
    struct Recoded(Counting, u32);

    #[async_trait]
    impl LlmProvider for Recoded {
        fn model_id(&self) -> String {
            "counting".into()
        }
        fn model_id_for(&self, prompt_id: &str) -> String {
            format!("counting/{prompt_id}.v{}", self.1)
        }
        async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
            self.0.complete(request).await
        }
    }

    /// An answer cached from one version of a task's code is never served to another.
    #[tokio::test]
    async fn the_cache_keys_on_the_task_version() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Arc::new(ResponseCache::open(dir.path()).expect("cache"));
        let cached = |version: u32| CachedLlm {
            inner: Arc::new(Recoded(Counting(AtomicUsize::new(0), false), version)),
            cache: Arc::clone(&cache) as Arc<dyn AnswerCache>,
            journal: None,
            namespace: String::new(),
        };
        let v1 = cached(1);
        assert!(!v1.complete(&request("a")).await.expect("v1").cache_hit);
        assert!(
            v1.complete(&request("a"))
                .await
                .expect("v1 again")
                .cache_hit
        );
        let v2 = cached(2);
        assert!(!v2.complete(&request("a")).await.expect("v2").cache_hit);
    }
}
