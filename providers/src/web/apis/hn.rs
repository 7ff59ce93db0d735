//! Hacker News: the Algolia search API (keyless). A story without a link is its
//! discussion page.

use deepr_orchestrator::SearchHit;

use super::{encoded, hit, json, list, text};

pub const NAME: &str = "hn";
pub const DEFAULT_BASE: &str = "https://hn.algolia.com";

pub fn request_url(base: &str, query: &str, limit: usize) -> String {
    format!(
        "{base}/api/v1/search?tags=story&hitsPerPage={limit}&query={}",
        encoded(query)
    )
}

pub fn parse(body: &[u8]) -> Result<Vec<SearchHit>, String> {
    let value = json(body)?;
    Ok(list(&value["hits"])
        .iter()
        .filter_map(|r| {
            let url = r["url"]
                .as_str()
                .filter(|u| !u.is_empty())
                .map(String::from)
                .unwrap_or_else(|| {
                    format!(
                        "https://news.ycombinator.com/item?id={}",
                        text(r, "objectID")
                    )
                });
            hit(&url, &text(r, "title"), "")
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stories_and_discussions() {
        let body = br#"{"hits":[{"title":"Show HN","url":null,"objectID":"42"},{"title":"T","url":"https://x.org/a?utm_medium=y"}]}"#;
        let hits = parse(body).expect("hn");
        assert_eq!(hits[0].locator, "https://news.ycombinator.com/item?id=42");
        assert_eq!(hits[1].locator, "https://x.org/a");
    }
}
