//! What a written sentence commits to verbatim, for the prose grounding gate: terms it
//! puts in quotation marks used *as quotation* in prose, and the code it names (code spans, identifiers such as `Py_Initialize` or `getattr()`).
//!
//! Straight double quotes are also the delimiters of string literals in code
//! (`r"\""`), so a `"` opens a quotation only where prose opens one — at the start of a
//! word, before a non-space — and closes one only at the end of a word; quotes inside a
//! word, in a token holding a backslash, or inside a code span are code, not quotation.

/// Terms a sentence puts in quotation marks as prose: “…”, «…», and "…" used as quotation.
/// Code spans (`` `…` ``) are code terms ([`code_terms`]), not quotations.
pub fn quoted_terms(text: &str) -> Vec<String> {
    let prose = blank_code(text);
    let mut terms = Vec::new();
    for (open, close) in [('“', '”'), ('«', '»')] {
        let mut rest = prose.as_str();
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            push_term(&mut terms, &after[..end]);
            rest = &after[end + close.len_utf8()..];
        }
    }
    straight_quotations(&prose, &mut terms);
    terms
}

/// Code a sentence names, which must occur in its quotes as a number must: the contents of
/// code spans, and bare identifiers — a word joined by `_` or `::`, or a call `name()`
/// (the name without its parentheses).
pub fn code_terms(text: &str) -> Vec<String> {
    let mut terms = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('`') else { break };
        push_term(&mut terms, after[..end].trim_end_matches("()"));
        rest = &after[end + 1..];
    }
    for token in without_code_spans(text).split_whitespace() {
        if let Some(identifier) = identifier_in(token) {
            push_term(&mut terms, identifier);
        }
    }
    terms
}

fn push_term(terms: &mut Vec<String>, term: &str) {
    let term = term.trim();
    if !term.is_empty() {
        terms.push(term.to_string());
    }
}

/// The text with code spans replaced by spaces (an unclosed backtick is left as is).
fn without_code_spans(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('`') else { break };
        out.push_str(&rest[..start]);
        out.push(' ');
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The text with code spans and string-literal-like tokens (a `"` inside a word, or a
/// backslash) replaced by spaces, so only prose quotation marks remain.
fn blank_code(text: &str) -> String {
    let prose = without_code_spans(text);
    let mut out = String::with_capacity(prose.len());
    let mut token = String::new();
    for c in prose.chars().chain(std::iter::once(' ')) {
        if c.is_whitespace() {
            if is_code_literal(&token) {
                out.push(' ');
            } else {
                out.push_str(&token);
            }
            token.clear();
            out.push(c);
        } else {
            token.push(c);
        }
    }
    out.pop();
    out
}

/// Characters that may stand around a quoted word: opening and closing punctuation.
const OPENING: &[char] = &['(', '[', '{', '—', '–', '/'];
const CLOSING: &[char] = &[
    '.', ',', ';', ':', '!', '?', ')', ']', '}', '—', '–', '…', '\'',
];

fn is_code_literal(token: &str) -> bool {
    if token.contains('\\') {
        return true;
    }
    let core = token
        .trim_start_matches(OPENING)
        .trim_end_matches(CLOSING)
        .trim_start_matches('"')
        .trim_end_matches('"');
    core.contains('"')
}

/// Pairs of straight double quotes used as quotation: an opener starts a word and is
/// followed by a non-space; a closer ends a word and follows a non-space.
fn straight_quotations(prose: &str, terms: &mut Vec<String>) {
    let chars: Vec<(usize, char)> = prose.char_indices().collect();
    let mut open_at: Option<usize> = None;
    for (i, &(at, c)) in chars.iter().enumerate() {
        if c != '"' {
            continue;
        }
        let before = i.checked_sub(1).map(|j| chars[j].1);
        let after = chars.get(i + 1).map(|&(_, c)| c);
        let opens = before.is_none_or(|b| b.is_whitespace() || OPENING.contains(&b))
            && after.is_some_and(|a| !a.is_whitespace());
        let closes = before.is_some_and(|b| !b.is_whitespace())
            && after.is_none_or(|a| a.is_whitespace() || CLOSING.contains(&a) || a == '"');
        match open_at {
            Some(start) if closes => {
                push_term(terms, &prose[start..at]);
                open_at = None;
            }
            None if opens => open_at = Some(at + 1),
            _ => {}
        }
    }
}

/// A bare identifier in a whitespace token: `snake_case`, `Py_Initialize`, `std::mem`,
/// `getattr()`, `os.path.join()` (returned without the parentheses).
fn identifier_in(token: &str) -> Option<&str> {
    let core = token
        .trim_start_matches(|c: char| OPENING.contains(&c) || "\"'“«".contains(c))
        .trim_end_matches(|c: char| (CLOSING.contains(&c) && c != ')') || "\"'”»".contains(c));
    let core = if core.ends_with("()") {
        core
    } else {
        core.trim_end_matches(|c: char| CLOSING.contains(&c))
    };
    let (name, call) = match core.strip_suffix("()") {
        Some(name) => (name, true),
        None => (core, false),
    };
    let identifier_chars = name
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '.'));
    let has_letter = name.chars().any(char::is_alphabetic);
    if !identifier_chars || !has_letter || name.starts_with(['.', ':']) {
        return None;
    }
    let joined =
        name.contains("::") || name.split('_').filter(|part| !part.is_empty()).count() >= 2;
    (call || joined).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_literals_are_not_quotations() {
        let text = r#"That is why r"\"" is a valid two-character string but r"\" is invalid."#;
        assert_eq!(quoted_terms(text), Vec::<String>::new());
        assert_eq!(
            quoted_terms(r#"Use b"abc" for bytes; the docs call it a "byte string"."#),
            vec!["byte string".to_string()]
        );
        assert_eq!(
            quoted_terms("The `\"quoted\"` span is code, and “this” is prose."),
            vec!["this".to_string()]
        );
        assert_eq!(
            quoted_terms(r#"He said "no, never", then left."#),
            vec!["no, never".to_string()]
        );
    }

    #[test]
    fn code_spans_and_identifiers_are_code_terms() {
        assert_eq!(
            code_terms("Call `Py_Initialize()` first, then getattr() and os.path.join()."),
            vec!["Py_Initialize", "getattr", "os.path.join"]
        );
        assert_eq!(
            code_terms("Use std::mem or the sqlite3_open_v2 function (not e.g. plain words)."),
            vec!["std::mem", "sqlite3_open_v2"]
        );
        assert_eq!(
            code_terms("A plain sentence, with no code at all."),
            Vec::<String>::new()
        );
    }
}
