//! Page → archived text.
//!
//! The archived text is the exact characters of a page's main text: for HTML,
//! dom_smoothie's readability extraction in its *formatted text* mode (blocks on
//! their own lines, no Markdown markup added); for Markdown and plain text, the file
//! itself. Quotes are later cut from this text by byte offsets, so nothing here may
//! add characters the page does not have.
//!
//! Dates for recency come from the content — HTML metadata, else a date the page marks
//! as its own ("last modified on …"), else a date in its first line — never from file
//! modification times, and never an unmarked date from the body (a release date is
//! not the page's date).

use thiserror::Error;

/// Version of [`extract_text`]'s output (text, title, date). Bump it whenever that
/// output can change: stored indexes and checkpoints built by another version are
/// then rebuilt instead of reused.
pub const EXTRACTOR_VERSION: u32 = 2;

/// What kind of document the bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DocKind {
    Html,
    Markdown,
    Text,
}

impl DocKind {
    /// Kind from a file extension (case-insensitive); `None` for unsupported files.
    pub fn from_extension(ext: &str) -> Option<Self> {
        match ext.to_ascii_lowercase().as_str() {
            "html" | "htm" | "xhtml" => Some(Self::Html),
            "md" | "markdown" => Some(Self::Markdown),
            "txt" | "text" => Some(Self::Text),
            _ => None,
        }
    }
}

/// A document's extracted main text and metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extracted {
    pub title: String,
    /// The archived text: exact characters of the page's main text.
    pub text: String,
    /// A date found in the content (`YYYY-MM-DD`), used for recency scoring.
    pub date: Option<String>,
}

/// Why a document could not be turned into text. Each is reported per file and
/// never aborts a run.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ExtractError {
    #[error("binary content (NUL bytes), not a text document")]
    Binary,
    #[error("invalid UTF-8 at byte {0}")]
    InvalidUtf8(usize),
    #[error("no readable main text found")]
    NoMainText,
    #[error("document is empty")]
    Empty,
}

/// Extract the archived text of a document.
pub fn extract_text(bytes: &[u8], kind: DocKind) -> Result<Extracted, ExtractError> {
    let sniff = &bytes[..bytes.len().min(8192)];
    if sniff.contains(&0) {
        return Err(ExtractError::Binary);
    }
    let text =
        std::str::from_utf8(bytes).map_err(|e| ExtractError::InvalidUtf8(e.valid_up_to()))?;
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(ExtractError::Empty);
    }
    match kind {
        DocKind::Html => extract_html(text),
        DocKind::Markdown => Ok(Extracted {
            title: markdown_title(text),
            date: content_date(text),
            text: text.to_string(),
        }),
        DocKind::Text => Ok(Extracted {
            title: first_line_title(text),
            date: content_date(text),
            text: text.to_string(),
        }),
    }
}

fn extract_html(html: &str) -> Result<Extracted, ExtractError> {
    let config = dom_smoothie::Config {
        text_mode: dom_smoothie::TextMode::Formatted,
        char_threshold: 200,
        max_elements_to_parse: 200_000,
        ..Default::default()
    };
    let mut readability = dom_smoothie::Readability::new(html, None, Some(config))
        .map_err(|_| ExtractError::NoMainText)?;
    let article = readability.parse().map_err(|_| ExtractError::NoMainText)?;
    let text = article.text_content.to_string();
    if text.trim().is_empty() {
        return Err(ExtractError::NoMainText);
    }
    let date = article
        .published_time
        .as_deref()
        .or(article.modified_time.as_deref())
        .and_then(find_iso_date)
        .or_else(|| content_date(html))
        .or_else(|| content_date(&text));
    let title = if article.title.trim().is_empty() {
        first_line_title(&text)
    } else {
        article
            .title
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    Ok(Extracted { title, text, date })
}

fn markdown_title(text: &str) -> String {
    text.lines()
        .find_map(|line| line.strip_prefix("# ").map(|t| t.trim().to_string()))
        .unwrap_or_else(|| first_line_title(text))
}

fn first_line_title(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let line = line.trim_start_matches('#').trim();
    line.chars().take(120).collect()
}

/// Phrases that introduce the date a page was written or last changed.
const DATE_MARKERS: &[&str] = &[
    "last modified",
    "last updated",
    "updated on",
    "updated:",
    "published",
    "modified on",
    "date:",
];

/// The date a text states for itself: a date right after a marker such as "last
/// modified on" (the last such marker wins: footers follow headers), else a date in the
/// text's first 200 bytes (a dated header line). Other dates in the body — release
/// dates, history — are not the page's date, so none is better than a wrong one.
pub fn content_date(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let mut found = None;
    for marker in DATE_MARKERS {
        for (at, _) in lower.match_indices(marker) {
            let start = at + marker.len();
            let end = (start + 40).min(text.len());
            if let Some(window) = text.get(start..end) {
                if let Some(date) = find_iso_date(window) {
                    if found.as_ref().is_none_or(|(pos, _)| start > *pos) {
                        found = Some((start, date));
                    }
                }
            }
        }
    }
    if let Some((_, date)) = found {
        return Some(date);
    }
    let head_end = (0..=200.min(text.len()))
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    find_iso_date(&text[..head_end])
}

/// The first plausible `YYYY-MM-DD` date in the text (years 1900–2199).
pub fn find_iso_date(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    if bytes.len() < 10 {
        return None;
    }
    for i in 0..=bytes.len() - 10 {
        let window = &bytes[i..i + 10];
        let digits_at = |r: std::ops::Range<usize>| window[r].iter().all(u8::is_ascii_digit);
        if digits_at(0..4)
            && window[4] == b'-'
            && digits_at(5..7)
            && window[7] == b'-'
            && digits_at(8..10)
        {
            let before_ok = i == 0 || !bytes[i - 1].is_ascii_digit();
            let after_ok = bytes.get(i + 10).is_none_or(|b| !b.is_ascii_digit());
            let year: u32 = text[i..i + 4].parse().ok()?;
            let month: u32 = text[i + 5..i + 7].parse().ok()?;
            let day: u32 = text[i + 8..i + 10].parse().ok()?;
            if before_ok
                && after_ok
                && (1900..2200).contains(&year)
                && (1..=12).contains(&month)
                && (1..=31).contains(&day)
            {
                return Some(text[i..i + 10].to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_inputs_are_typed_errors() {
        assert_eq!(
            extract_text(b"ab\0cd", DocKind::Text),
            Err(ExtractError::Binary)
        );
        assert_eq!(
            extract_text(b"ok \xff\xfe", DocKind::Text),
            Err(ExtractError::InvalidUtf8(3))
        );
        assert_eq!(
            extract_text(b"  \n ", DocKind::Markdown),
            Err(ExtractError::Empty)
        );
    }

    #[test]
    fn text_and_markdown_are_kept_verbatim() {
        let md = "intro\n# Title here\nBody &amp; more.\n";
        let got = extract_text(md.as_bytes(), DocKind::Markdown).expect("markdown");
        assert_eq!(got.text, md);
        assert_eq!(got.title, "Title here");
        let bom = "\u{FEFF}plain text";
        assert_eq!(
            extract_text(bom.as_bytes(), DocKind::Text)
                .expect("text")
                .text,
            "plain text"
        );
    }

    #[test]
    fn html_main_text_has_page_characters_only() {
        let html = r#"<html><head><title>Atomic Commit</title></head><body>
            <nav>Home | About</nav>
            <h1>Atomic Commit In SQLite</h1>
            <p>An important feature of transactional databases like SQLite is atomic commit.
            Atomic commit means that either all database changes within a single transaction
            occur or none of them occur.</p>
            <p>With atomic commit, it is as if many different writes to different sections of
            the database file occur instantaneously and simultaneously. Real hardware serializes
            writes to mass storage, and writing a single sector takes a finite amount of time.</p>
            </body></html>"#;
        let got = extract_text(html.as_bytes(), DocKind::Html).expect("html");
        assert!(got.text.contains("atomic commit."), "{}", got.text);
        assert!(
            !got.text.contains("**") && !got.text.contains("# "),
            "no markdown added: {}",
            got.text
        );
        assert!(!got.text.contains('<'));
    }

    #[test]
    fn dates_come_from_content() {
        assert_eq!(
            find_iso_date("updated 2024-01-15."),
            Some("2024-01-15".into())
        );
        assert_eq!(find_iso_date("v12024-01-159"), None);
        assert_eq!(find_iso_date("2024-13-01"), None);
        assert_eq!(find_iso_date("é2024-02-03"), Some("2024-02-03".into()));
    }

    #[test]
    fn the_page_date_is_the_marked_one_not_the_first_mentioned() {
        let page = "Version 3.7.9 (2011-11-01) changed this.\n... body ...\nThis page last modified on 2022-10-04 12:00";
        let padded = format!("{}{page}", "x".repeat(300));
        assert_eq!(content_date(&padded), Some("2022-10-04".into()));
        assert_eq!(
            content_date("Legacy notes, 2019-05-02\nbody"),
            Some("2019-05-02".into())
        );
        let unmarked = format!("{} released 2011-11-01", "x".repeat(300));
        assert_eq!(
            content_date(&unmarked),
            None,
            "an unmarked date deep in the body is not the page date"
        );
        assert_eq!(
            content_date("Updated: 2020-01-01 ... last updated 2023-05-06"),
            Some("2023-05-06".into())
        );
    }
}
