//! Wikipedia: the MediaWiki search API (keyless).

use deepr_orchestrator::SearchHit;

use super::{encoded, hit, json, list, text};

pub const NAME: &str = "wikipedia";
pub const DEFAULT_BASE: &str = "https://en.wikipedia.org";

pub fn request_url(base: &str, query: &str, limit: usize) -> String {
    format!(
        "{base}/w/api.php?action=query&list=search&format=json&srlimit={limit}&srsearch={}",
        encoded(query)
    )
}

/// Hits in rank order; a hit's URL is the article's (`/wiki/Title_with_underscores`).
pub fn parse(base: &str, body: &[u8]) -> Result<Vec<SearchHit>, String> {
    let value = json(body)?;
    Ok(list(&value["query"]["search"])
        .iter()
        .filter_map(|r| {
            let title = text(r, "title");
            let path: String =
                url::form_urlencoded::byte_serialize(title.replace(' ', "_").as_bytes()).collect();
            hit(
                &format!("{base}/wiki/{path}"),
                &title,
                &strip_tags(&text(r, "snippet")),
            )
        })
        .collect())
}

/// MediaWiki snippets carry `<span class="searchmatch">` markup.
fn strip_tags(text: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn article_urls_and_plain_snippets() {
        let body = br#"{"query":{"search":[{"title":"Write-ahead logging","snippet":"<span class=\"searchmatch\">WAL</span> is"}]}}"#;
        let hits = parse("https://en.wikipedia.org", body).expect("parse");
        assert_eq!(
            hits[0].locator,
            "https://en.wikipedia.org/wiki/Write-ahead_logging"
        );
        assert_eq!(hits[0].snippet, "WAL is");
    }
}
