//! Canonical URLs: the `doc_key` of every web hit, so fusion merges the same page
//! found by different providers or queries.

/// Tracking parameters dropped from canonical URLs.
const TRACKING: &[&str] = &[
    "fbclid", "gclid", "mc_cid", "mc_eid", "ref", "ref_src", "igshid", "yclid", "msclkid",
];

/// The canonical form of a URL; `None` for anything that is not http(s).
pub fn canonical_url(raw: &str) -> Option<String> {
    // Parsing lower-cases scheme and host and drops default ports.
    let mut url = url::Url::parse(raw.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return None;
    }
    url.set_fragment(None);
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| {
            let k = k.to_ascii_lowercase();
            !k.starts_with("utm_") && !TRACKING.contains(&k.as_str())
        })
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if kept.is_empty() {
        url.set_query(None);
    } else {
        url.query_pairs_mut().clear().extend_pairs(kept);
    }
    let path = url.path().to_string();
    if path.len() > 1 && path.ends_with('/') {
        url.set_path(path.trim_end_matches('/'));
    }
    let text = url.to_string();
    // "https://host/" and "https://host" are the same page.
    Some(if url.path() == "/" && url.query().is_none() {
        text.trim_end_matches('/').to_string()
    } else {
        text
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_urls_merge_the_same_page() {
        let cases = [
            (
                "HTTPS://Example.COM:443/a/b/?utm_source=x&id=3#top",
                "https://example.com/a/b?id=3",
            ),
            ("http://example.com:80/", "http://example.com"),
            ("https://example.com/a?fbclid=1", "https://example.com/a"),
            ("https://example.com:8443/a", "https://example.com:8443/a"),
        ];
        for (raw, want) in cases {
            assert_eq!(canonical_url(raw).as_deref(), Some(want), "{raw}");
        }
        assert_eq!(canonical_url("ftp://x/y"), None);
        assert_eq!(canonical_url("javascript:alert(1)"), None);
    }
}
