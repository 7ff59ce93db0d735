//! The per-run cache of definitive web answers (search results and fetched pages).

use std::sync::Arc;

use deepr_evidence::report::CallStatus;

/// A response cache and the namespace (the run id) that scopes it: a resumed run never
/// asks again what it already asked, and a later run does not reuse stale results.
#[derive(Clone)]
pub struct WebCache {
    pub cache: Arc<deepr_checkpoints::ResponseCache>,
    pub namespace: String,
}

impl WebCache {
    pub(super) fn key(&self, parts: &[&str]) -> String {
        let mut hasher = blake3::Hasher::new();
        hasher.update(b"deepr.web-cache.v1\0");
        hasher.update(self.namespace.as_bytes());
        for part in parts {
            hasher.update(b"\0");
            hasher.update(part.as_bytes());
        }
        hasher.finalize().to_hex().to_string()
    }
}

/// Only answers that would not change on retry are cached: results, no results, an
/// auth failure, a page that is skipped by rule; never timeouts, rate limits or 5xx.
pub(super) fn definitive(status: CallStatus) -> bool {
    matches!(
        status,
        CallStatus::Ok | CallStatus::NoResults | CallStatus::AuthFailed | CallStatus::Skipped
    )
}
