//! The single text normaliser. Every component that compares text — extraction,
//! `deepr verify`, tests — goes through [`normalise`]; nothing else decides whether
//! two texts "match".

use unicode_normalization::UnicodeNormalization;

/// Characters that are invisible in rendered text and are dropped: zero-width
/// space, zero-width non-joiner, zero-width joiner, word joiner, BOM / zero-width
/// no-break space, and the soft hyphen.
const INVISIBLE: [char; 6] = [
    '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{00AD}',
];

/// Normalise text for comparison.
///
/// Contract, applied in this order:
/// 1. **Decode HTML entities first**, named (`&amp;`, `&nbsp;`) and numeric
///    (`&#39;`, `&#x27;`), before anything else, so a quote copied from a page's
///    source matches its rendered text. Decoding repeats until nothing changes, so
///    doubly-encoded text (`&amp;#x27;`) decodes fully and the function is idempotent.
/// 2. **Drop invisible characters**: U+200B, U+200C, U+200D, U+2060, U+FEFF and the
///    soft hyphen U+00AD.
/// 3. **Fold whitespace**: every run of Unicode whitespace (spaces, tabs, newlines,
///    NBSP U+00A0, …) becomes one ASCII space; leading and trailing whitespace is removed.
/// 4. **Unicode NFC**, so composed and decomposed accents compare equal.
///
/// It never makes two different texts match for any other reason: no lower-casing,
/// no punctuation or quote-mark folding, no digit or diacritic stripping.
///
/// `normalise(normalise(s)) == normalise(s)` for every `s`.
pub fn normalise(text: &str) -> String {
    let mut current = one_pass(text);
    // A pass can expose a new entity (e.g. "&am\u{200B}p;" → "&amp;"), so repeat until
    // stable. Each changing pass shortens or recomposes the text, so this terminates
    // quickly; the bound is a guard, not a behaviour.
    for _ in 0..16 {
        let next = one_pass(&current);
        if next == current {
            break;
        }
        current = next;
    }
    current
}

fn one_pass(text: &str) -> String {
    let mut decoded = std::borrow::Cow::Borrowed(text);
    while decoded.contains('&') {
        let next = html_escape::decode_html_entities(decoded.as_ref()).into_owned();
        if next == decoded.as_ref() {
            break;
        }
        decoded = std::borrow::Cow::Owned(next);
    }
    let mut folded = String::with_capacity(decoded.len());
    let mut pending_space = false;
    for ch in decoded.chars() {
        if INVISIBLE.contains(&ch) {
            continue;
        }
        if ch.is_whitespace() {
            pending_space = !folded.is_empty();
            continue;
        }
        if pending_space {
            folded.push(' ');
            pending_space = false;
        }
        folded.push(ch);
    }
    folded.nfc().collect()
}

#[cfg(test)]
mod tests {
    use super::normalise;

    /// One fixture per contract clause; a naive normaliser fails each.
    #[test]
    fn contract_fixtures() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "numeric hex entity from an HN page",
                "It&#x27;s fast",
                "It's fast",
            ),
            ("numeric decimal entity", "don&#39;t", "don't"),
            ("named entity", "AT&amp;T &lt;b&gt;", "AT&T <b>"),
            ("double-encoded entity", "it&amp;#x27;s", "it's"),
            ("entity that encodes NBSP", "a&nbsp;&nbsp;b", "a b"),
            (
                "zero-width space before a heading",
                "\u{200B}Atomic Commit",
                "Atomic Commit",
            ),
            (
                "ZWNJ, ZWJ, word joiner, BOM",
                "\u{FEFF}a\u{200C}b\u{200D}c\u{2060}d",
                "abcd",
            ),
            ("soft hyphen", "trans\u{00AD}action", "transaction"),
            (
                "NBSP runs",
                "rollback\u{00A0}\u{00A0} journal",
                "rollback journal",
            ),
            (
                "newlines and tabs",
                "  one\n\ttwo \r\n three  ",
                "one two three",
            ),
            ("NFC composition", "cafe\u{0301}", "caf\u{00E9}"),
            ("invisible char hides an entity", "&am\u{200B}p;", "&"),
        ];
        for (why, input, want) in cases {
            assert_eq!(normalise(input), *want, "{why}");
        }
    }

    #[test]
    fn never_folds_case_or_punctuation() {
        assert_ne!(normalise("SQLite"), normalise("sqlite"));
        assert_ne!(normalise("don't"), normalise("don’t"));
        assert_ne!(normalise("a-b"), normalise("a b"));
        assert_ne!(normalise("1,000"), normalise("1000"));
    }

    mod props {
        use super::super::normalise;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn idempotent(s in any::<String>()) {
                let once = normalise(&s);
                prop_assert_eq!(normalise(&once), once);
            }

            #[test]
            fn idempotent_on_entity_soup(s in "[a&#x;0-9amp \u{200B}\u{00AD}lt]{0,40}") {
                let once = normalise(&s);
                prop_assert_eq!(normalise(&once), once);
            }

            /// Strings that differ outside the contract (letters, case, digits,
            /// punctuation, single inner spaces) never normalise to the same text.
            #[test]
            fn never_equates_different_texts(
                a in "[A-Za-z0-9.,;:!?'\"()-]{1,8}( [A-Za-z0-9.,;:!?'\"()-]{1,8}){0,4}",
                b in "[A-Za-z0-9.,;:!?'\"()-]{1,8}( [A-Za-z0-9.,;:!?'\"()-]{1,8}){0,4}",
            ) {
                prop_assert_eq!(normalise(&a) == normalise(&b), a == b);
            }
        }
    }
}
