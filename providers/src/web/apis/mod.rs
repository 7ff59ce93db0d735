//! One file per search API: its name, default base URL, key variable, polite quota,
//! request and answer shape. [`super::search::WebSearch`] does what they share
//! (rate limiting, the per-run cache, statuses).

use deepr_orchestrator::SearchHit;

use super::canonical::canonical_url;

pub mod arxiv;
pub mod brave;
pub mod hn;
pub mod searxng;
pub mod tavily;
pub mod wikipedia;

/// A hit from an API answer's URL, title and snippet; `None` for a URL that is not
/// http(s). Its `doc_key` is the canonical URL.
pub fn hit(url: &str, title: &str, snippet: &str) -> Option<SearchHit> {
    let key = canonical_url(url)?;
    Some(SearchHit {
        doc_key: key.clone(),
        locator: key,
        title: one_line(title),
        score: 0.0,
        snippet: one_line(snippet).chars().take(300).collect(),
    })
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The query, URL-encoded.
pub fn encoded(query: &str) -> String {
    url::form_urlencoded::byte_serialize(query.as_bytes()).collect()
}

/// A JSON answer.
pub fn json(body: &[u8]) -> Result<serde_json::Value, String> {
    serde_json::from_slice(body).map_err(|e| format!("the answer is not JSON: {e}"))
}

/// The string at `key` of a JSON object ("" when absent).
pub fn text(value: &serde_json::Value, key: &str) -> String {
    value[key].as_str().unwrap_or("").to_string()
}

/// The array at a JSON value (empty when absent).
pub fn list(value: &serde_json::Value) -> Vec<serde_json::Value> {
    value.as_array().cloned().unwrap_or_default()
}
