//! Tavily: keyed (`TAVILY_API_KEY`); the query is POSTed as JSON.

use deepr_orchestrator::SearchHit;

use super::{hit, json, list, text};

pub const NAME: &str = "tavily";
pub const DEFAULT_BASE: &str = "https://api.tavily.com";
pub const KEY_VAR: &str = "TAVILY_API_KEY";

pub fn request_url(base: &str) -> String {
    format!("{base}/search")
}

/// The JSON body of a search request.
pub fn request_body(query: &str, limit: usize, key: Option<&str>) -> serde_json::Value {
    serde_json::json!({"query": query, "max_results": limit, "api_key": key})
}

pub fn parse(body: &[u8]) -> Result<Vec<SearchHit>, String> {
    let value = json(body)?;
    Ok(list(&value["results"])
        .iter()
        .filter_map(|r| hit(&text(r, "url"), &text(r, "title"), &text(r, "content")))
        .collect())
}
