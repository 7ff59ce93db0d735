//! SearXNG: a self-hosted metasearch instance (keyless; its base URL must be given).

use deepr_orchestrator::SearchHit;

use super::{encoded, hit, json, list, text};

pub const NAME: &str = "searxng";

pub fn request_url(base: &str, query: &str) -> String {
    format!("{base}/search?format=json&q={}", encoded(query))
}

pub fn parse(body: &[u8]) -> Result<Vec<SearchHit>, String> {
    let value = json(body)?;
    Ok(list(&value["results"])
        .iter()
        .filter_map(|r| hit(&text(r, "url"), &text(r, "title"), &text(r, "content")))
        .collect())
}
