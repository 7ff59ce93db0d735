//! The document a document follow-up asks about, as deepening words it (its title as a
//! subject, [`title_of`]) and as score finds it among the follow-up's fetched documents
//! ([`fetched_document`]): a model reads that document alone.

use deepr_orchestrator::DocMeta;

use crate::types::FetchOut;

/// Most characters of a document title asked about (a title is untrusted text).
pub(crate) const MAX_TITLE_CHARS: usize = 80;

/// A document's title as a subject: one line, no quotation marks, at most
/// [`MAX_TITLE_CHARS`] characters; its file name when it has no title.
pub(crate) fn title_of(title: &str, doc_key: &str) -> String {
    let name = if title.trim().is_empty() {
        doc_key.rsplit_once('/').map_or(doc_key, |(_, name)| name)
    } else {
        title
    };
    name.chars()
        .filter(|c| !matches!(c, '“' | '”' | '"') && !is_invisible_format(*c))
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(MAX_TITLE_CHARS)
        .collect()
}

/// The content hash of the fetched document whose title (as [`title_of`] writes it) is
/// `title`, a document follow-up's subject; of two that share it, the current one (a
/// follow-up is only ever of a current document).
pub(crate) fn fetched_document<'a>(title: &str, fetched: &'a FetchOut) -> Option<&'a str> {
    let titled: Vec<&DocMeta> = fetched
        .docs
        .iter()
        .map(|(doc, _)| doc)
        .filter(|doc| title_of(&doc.title, &doc.doc_key) == title)
        .collect();
    titled
        .iter()
        .find(|doc| !doc.outline.is_stale() && !doc.outline.is_draft())
        .or(titled.first())
        .map(|doc| doc.content_sha256.as_str())
}

/// Zero-width and bidirectional formatting characters: invisible, they can make a title
/// read otherwise than it is (U+202E reverses what follows).
fn is_invisible_format(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_one_line_without_quotation_marks_and_bounded() {
        assert_eq!(title_of("  The “Big”\nReport ", "a/b.md"), "The Big Report");
        assert_eq!(title_of("", "reports/q1.csv"), "q1.csv");
        assert_eq!(title_of("", "q1.csv"), "q1.csv");
        assert_eq!(title_of("Budget\u{202E}fdp.exe", "a"), "Budgetfdp.exe");
        assert_eq!(
            title_of(&"x".repeat(500), "a").chars().count(),
            MAX_TITLE_CHARS
        );
    }
}
