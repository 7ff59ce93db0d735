//! Brave Search: keyed (`BRAVE_API_KEY`, sent as `X-Subscription-Token`).

use deepr_orchestrator::SearchHit;

use super::{encoded, hit, json, list, text};

pub const NAME: &str = "brave";
pub const DEFAULT_BASE: &str = "https://api.search.brave.com";
pub const KEY_VAR: &str = "BRAVE_API_KEY";
pub const KEY_HEADER: &str = "X-Subscription-Token";

pub fn request_url(base: &str, query: &str, limit: usize) -> String {
    format!(
        "{base}/res/v1/web/search?count={limit}&q={}",
        encoded(query)
    )
}

pub fn parse(body: &[u8]) -> Result<Vec<SearchHit>, String> {
    let value = json(body)?;
    Ok(list(&value["web"]["results"])
        .iter()
        .filter_map(|r| hit(&text(r, "url"), &text(r, "title"), &text(r, "description")))
        .collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_body_that_is_not_json_is_an_error() {
        assert!(super::parse(b"not json").is_err());
    }
}
