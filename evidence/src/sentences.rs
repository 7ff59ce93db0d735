//! Sentence splitting with stable IDs.
//!
//! A sentence is addressed by (document, index): the document is its archived text's
//! content hash, the index its position in [`split_sentences`]'s output. Each sentence
//! carries byte offsets into the archived text, and its text is *exactly*
//! `&archived[start..end]` — a quote is always a slice, never a rewrite.
//!
//! Splitting is deterministic and depends only on the text (no locale, no clock, no
//! thread count), so the same text gives the same IDs on every machine. Boundaries
//! come from Unicode sentence segmentation (UAX #29, via `unicode-segmentation`),
//! followed by two repairs UAX #29 cannot make on its own:
//! * an **abbreviation merge**: a piece ending in "e.g.", "Dr.", "Fig.", "Jan.", "No.",
//!   a single initial, … is joined with the next piece on the same line;
//! * a **wrapped-line merge**: UAX #29 breaks at every newline; a piece that ends a
//!   line without terminal punctuation is joined with the next line when the next
//!   line is part of the same paragraph (not blank, not a heading, list item or
//!   fenced code). Headings and list items therefore stay sentences of their own.

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

/// One sentence of an archived text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sentence {
    /// Position in the document's sentence list (0-based).
    pub index: u32,
    /// Byte offset of the first character in the archived text.
    pub start: usize,
    /// Byte offset one past the last character.
    pub end: usize,
}

impl Sentence {
    /// The sentence's text: an exact slice of the archived text it was split from.
    /// Returns `None` if `archived` is not the text this sentence came from.
    pub fn text<'a>(&self, archived: &'a str) -> Option<&'a str> {
        archived.get(self.start..self.end)
    }
}

/// First words that make a sentence lean on the one before it ("This is how…").
const REFERENCE_WORDS: &[&str] = &[
    "This",
    "That",
    "These",
    "Those",
    "It",
    "Its",
    "They",
    "Their",
    "Such",
    "However",
    "Hence",
    "Thus",
    "Therefore",
    "But",
    "So",
    "Also",
    "Otherwise",
    "Instead",
    "Then",
    "Here",
    "There",
    "Consequently",
    "Nevertheless",
];

/// A sentence shorter than this (in characters) rarely stands alone.
pub const STANDS_ALONE_CHARS: usize = 40;
/// The longest neighbour a sentence is quoted with (in characters).
pub const MAX_CONTEXT_CHARS: usize = 400;

/// The sentences a quote of sentence `index` should span: `(first, last)`, where `last`
/// is `index`. A sentence that starts with a reference to what came before ("This",
/// "However", …) or is too short to stand alone is quoted with the sentence before it
/// — when that one is in the same paragraph (no blank line between) and not longer
/// than [`MAX_CONTEXT_CHARS`]. The span is still one exact slice of the text.
pub fn context_span(text: &str, sentences: &[Sentence], index: usize) -> (u32, u32) {
    let own = (index as u32, index as u32);
    let Some(sentence) = sentences.get(index) else {
        return own;
    };
    let Some(body) = sentence.text(text) else {
        return own;
    };
    let first_word: String = body
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '\'')
        .collect();
    let leans =
        REFERENCE_WORDS.contains(&first_word.as_str()) || body.chars().count() < STANDS_ALONE_CHARS;
    if !leans || index == 0 {
        return own;
    }
    let previous = &sentences[index - 1];
    // Same paragraph: at most one line break between them (a blank line, however
    // written, is two), and the one before ends like a sentence (not a heading or a
    // list label).
    let same_paragraph = text
        .get(previous.end..sentence.start)
        .is_some_and(|gap| gap.matches('\n').count() <= 1);
    let previous_text = previous.text(text).unwrap_or("");
    let ends_sentence = previous_text
        .trim_end_matches(['"', '\'', ')', '”', '’'])
        .ends_with(['.', '!', '?', ':', ';', '。', '！', '？']);
    let short_enough = previous_text.chars().count() <= MAX_CONTEXT_CHARS;
    if same_paragraph && ends_sentence && short_enough {
        (index as u32 - 1, index as u32)
    } else {
        own
    }
}

/// The exact slice of `text` from the start of sentence `first` to the end of sentence
/// `last` (inclusive).
pub fn span<'a>(text: &'a str, sentences: &[Sentence], first: u32, last: u32) -> Option<&'a str> {
    if first > last {
        return None;
    }
    let start = sentences.get(first as usize)?.start;
    let end = sentences.get(last as usize)?.end;
    text.get(start..end)
}

/// Words that end with a period but rarely end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "e.g.", "i.e.", "cf.", "vs.", "viz.", "etc.", "al.", "approx.", "ca.", "Dr.", "Mr.", "Mrs.",
    "Ms.", "Prof.", "Sr.", "Jr.", "St.", "Mt.", "Fig.", "Figs.", "fig.", "No.", "no.", "Nos.",
    "Vol.", "vol.", "Ch.", "ch.", "Sec.", "sec.", "Eq.", "eq.", "pp.", "p.", "Ref.", "ref.",
    "Inc.", "Ltd.", "Co.", "Corp.", "Jan.", "Feb.", "Mar.", "Apr.", "Jun.", "Jul.", "Aug.", "Sep.",
    "Sept.", "Oct.", "Nov.", "Dec.", "Mon.", "Tue.", "Wed.", "Thu.", "Fri.", "Sat.", "Sun.",
    "U.S.", "U.K.", "a.m.", "p.m.", "ver.", "v.",
];

/// Split `text` into sentences. See the module docs for the rules.
pub fn split_sentences(text: &str) -> Vec<Sentence> {
    // 1. UAX #29 pieces, trimmed to non-whitespace spans.
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (offset, piece) in text.split_sentence_bound_indices() {
        let trimmed_start = piece.len() - piece.trim_start().len();
        let trimmed = piece.trim();
        if trimmed.is_empty() {
            continue;
        }
        let start = offset + trimmed_start;
        spans.push((start, start + trimmed.len()));
    }

    // 2. Merge repairs.
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for span in spans {
        if let Some(last) = merged.last_mut() {
            let gap = &text[last.1..span.0];
            let previous = &text[last.0..last.1];
            let next = &text[span.0..span.1];
            if should_merge(previous, gap, next) {
                last.1 = span.1;
                continue;
            }
        }
        merged.push(span);
    }

    merged
        .into_iter()
        .enumerate()
        .map(|(index, (start, end))| Sentence {
            index: u32::try_from(index).unwrap_or(u32::MAX),
            start,
            end,
        })
        .collect()
}

fn should_merge(previous: &str, gap: &str, next: &str) -> bool {
    let newlines = gap.matches('\n').count();
    if newlines >= 2 || gap.contains("\n\r\n") {
        return false; // a blank line ends a paragraph
    }
    if starts_block(next) || starts_block(previous) && newlines > 0 {
        return false;
    }
    if newlines == 0 {
        // Same line: only the abbreviation repairs apply.
        return ends_with_abbreviation(previous) || is_list_number(previous);
    }
    // One newline: a wrapped line continues when the previous piece has no terminal
    // punctuation and the next starts like a continuation.
    let ends_sentence = previous
        .trim_end_matches(['"', '\'', ')', ']', '”', '’', '*', '_'])
        .ends_with(['.', '!', '?', ':', ';', '。', '！', '？', '…']);
    !ends_sentence && previous.chars().count() > 0 && !looks_like_heading(previous)
}

/// A line that starts a block of its own: heading, list item, quote, table, code fence.
fn starts_block(piece: &str) -> bool {
    let trimmed = piece.trim_start();
    trimmed.starts_with('#')
        || trimmed.starts_with("- ")
        || trimmed.starts_with("* ")
        || trimmed.starts_with("+ ")
        || trimmed.starts_with('>')
        || trimmed.starts_with('|')
        || trimmed.starts_with("```")
        || is_list_number(trimmed.split_whitespace().next().unwrap_or(""))
}

/// A short line with no final punctuation and title-like capitalisation.
fn looks_like_heading(piece: &str) -> bool {
    let words: Vec<&str> = piece.split_whitespace().collect();
    if words.is_empty() || words.len() > 8 {
        return false;
    }
    let capitalised = words
        .iter()
        .filter(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_uppercase() || c.is_numeric())
        })
        .count();
    capitalised * 2 > words.len() && words.len() <= 8 && piece.chars().count() < 60
}

fn ends_with_abbreviation(piece: &str) -> bool {
    let last_word = piece.split_whitespace().last().unwrap_or("");
    let last_word = last_word.trim_start_matches(['(', '[', '"', '\'', '“', '‘']);
    if ABBREVIATIONS.contains(&last_word) {
        return true;
    }
    // A single initial such as "J." in "J. Smith".
    let mut chars = last_word.chars();
    matches!((chars.next(), chars.next(), chars.next()), (Some(c), Some('.'), None) if c.is_uppercase())
}

/// "1." or "12." or "a." — a list marker that UAX #29 splits off on its own.
fn is_list_number(piece: &str) -> bool {
    let Some(body) = piece.strip_suffix('.').or_else(|| piece.strip_suffix(')')) else {
        return false;
    };
    !body.is_empty() && body.len() <= 3 && body.chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaning_sentences_are_quoted_with_the_one_before() {
        let text = "The journal holds the original pages.  This is how SQLite implements atomic commit.\n\nThis starts a new paragraph and leans on nothing before it. Short one. A plain sentence that stands alone well enough.";
        let sentences = split_sentences(text);
        let spans: Vec<(u32, u32)> = (0..sentences.len())
            .map(|i| context_span(text, &sentences, i))
            .collect();
        assert_eq!(spans, [(0, 0), (0, 1), (2, 2), (2, 3), (4, 4)]);
        assert_eq!(
            span(text, &sentences, 0, 1),
            Some("The journal holds the original pages.  This is how SQLite implements atomic commit.")
        );
        assert_eq!(span(text, &sentences, 1, 0), None);
        assert_eq!(span(text, &sentences, 0, 9), None);
    }

    fn texts(text: &str) -> Vec<&str> {
        split_sentences(text)
            .iter()
            .map(|s| s.text(text).unwrap_or("<bad offsets>"))
            .collect()
    }

    /// Data-driven: input → expected sentences.
    #[test]
    fn splits() {
        let cases: &[(&str, &[&str])] = &[
            ("One. Two! Three?", &["One.", "Two!", "Three?"]),
            (
                "Use a journal, e.g. the rollback journal. Then commit.",
                &["Use a journal, e.g. the rollback journal.", "Then commit."],
            ),
            (
                "Dr. Hipp wrote SQLite. It is small.",
                &["Dr. Hipp wrote SQLite.", "It is small."],
            ),
            (
                "See Fig. 3 for details. Done.",
                &["See Fig. 3 for details.", "Done."],
            ),
            (
                "Released in Jan. 2024. Next one.",
                &["Released in Jan. 2024.", "Next one."],
            ),
            (
                "Atomic Commit\nSQLite commits atomically. Always.",
                &["Atomic Commit", "SQLite commits atomically.", "Always."],
            ),
            (
                "a wrapped line that\ncontinues here. Next.",
                &["a wrapped line that\ncontinues here.", "Next."],
            ),
            (
                "Para one ends\n\nPara two.",
                &["Para one ends", "Para two."],
            ),
            (
                "# Heading\n- item one\n- item two",
                &["# Heading", "- item one", "- item two"],
            ),
            ("SQLite 很小。它很快。", &["SQLite 很小。", "它很快。"]),
            ("   ", &[]),
        ];
        for (input, want) in cases {
            assert_eq!(texts(input), *want, "input: {input:?}");
        }
    }

    #[test]
    fn offsets_are_exact_slices_and_indices_dense() {
        let text = "  Alpha beta.\u{00A0}Gamma — delta? Ε ψ ω.\r\n\r\nLast line without stop";
        for (i, s) in split_sentences(text).iter().enumerate() {
            assert_eq!(s.index as usize, i);
            let slice = s.text(text).expect("offsets inside text");
            assert_eq!(slice, slice.trim());
            assert!(!slice.is_empty());
        }
    }

    mod props {
        use super::super::split_sentences;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn slices_are_exact_ordered_and_deterministic(s in any::<String>()) {
                let first = split_sentences(&s);
                prop_assert_eq!(&first, &split_sentences(&s));
                let mut last_end = 0;
                for sentence in &first {
                    prop_assert!(sentence.start >= last_end);
                    prop_assert!(sentence.end > sentence.start);
                    let text = sentence.text(&s);
                    prop_assert!(text.is_some());
                    last_end = sentence.end;
                }
            }
        }
    }
}
