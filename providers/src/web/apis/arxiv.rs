//! arXiv: the Atom search API (keyless; arXiv asks for at most one request every 3 s).

use deepr_orchestrator::SearchHit;

use super::{encoded, hit};

pub const NAME: &str = "arxiv";
pub const DEFAULT_BASE: &str = "https://export.arxiv.org";

pub fn request_url(base: &str, query: &str, limit: usize) -> String {
    format!(
        "{base}/api/query?search_query=all:{}&start=0&max_results={limit}",
        encoded(query)
    )
}

/// Entries of the Atom feed, in rank order.
pub fn parse(body: &[u8]) -> Result<Vec<SearchHit>, String> {
    let text = std::str::from_utf8(body).map_err(|_| "the Atom feed is not UTF-8".to_string())?;
    let doc =
        roxmltree::Document::parse(text).map_err(|e| format!("the Atom feed is not XML: {e}"))?;
    Ok(doc
        .descendants()
        .filter(|n| n.has_tag_name("entry"))
        .filter_map(|entry| {
            let child = |name: &str| {
                entry
                    .children()
                    .find(|c| c.has_tag_name(name))
                    .and_then(|c| c.text())
                    .unwrap_or("")
            };
            hit(child("id"), child("title"), child("summary"))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atom_entries() {
        let atom = br#"<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/abs/1234.5678v1</id><title>A  Paper</title><summary>About logs.</summary></entry></feed>"#;
        let hits = parse(atom).expect("atom");
        assert_eq!(
            (hits[0].locator.as_str(), hits[0].title.as_str()),
            ("http://arxiv.org/abs/1234.5678v1", "A Paper")
        );
        assert!(parse(b"<feed").is_err());
    }
}
