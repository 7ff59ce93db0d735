//! Where a unit starts and ends: whether a sentence or block can stand alone as one,
//! the whole chat message a sentence stands in, and whether an earlier round cited it.

use std::collections::BTreeSet;

use deepr_orchestrator::ArchivedText;

use crate::types::SentenceRef;
use crate::units::ends_like_sentence;

pub(super) const MIN_SENTENCE_CHARS: usize = 30;
pub(super) const MAX_SENTENCE_CHARS: usize = 600;
/// Longest chat message quoted whole ([`deepr_orchestrator::Outline::units`]); a longer
/// one is read sentence by sentence, as prose.
pub(super) const MAX_MESSAGE_CHARS: usize = 900;

/// Whether `body` can be a unit: long enough, not too long (a chat message may be
/// longer), ending like a sentence unless it is a whole block, and not a line that
/// introduces what follows ("… using the pragma:"), which says nothing alone.
pub(super) fn stands_alone(body: &str, block_unit: bool, message: bool) -> bool {
    let longest = if message {
        MAX_MESSAGE_CHARS
    } else {
        MAX_SENTENCE_CHARS
    };
    // A short list item or row that names a person in a role ("Gwen Pargeter (Chair)"
    // in the minutes' list of those present) says who holds it: a fact, however short.
    let shortest = if block_unit && names_a_role(body) {
        MIN_ROLE_CHARS
    } else {
        MIN_SENTENCE_CHARS
    };
    (shortest..=longest).contains(&body.chars().count())
        && (ends_like_sentence(body) || block_unit)
        && !body.trim_end().ends_with(':')
}

/// Shortest list item naming a person in a role ("Jo Li (CFO)").
const MIN_ROLE_CHARS: usize = 10;

/// Whether `body` is a name and a role in brackets: two or more capitalised words, then
/// "(Role)" ending the line ("Gwen Pargeter (Chair)", "Owen Trethewey (Vice-Chair)").
fn names_a_role(body: &str) -> bool {
    let body = body.trim().trim_start_matches(['-', '*', '•', ' ']);
    let Some((name, role)) = body.strip_suffix(')').and_then(|b| b.split_once(" (")) else {
        return false;
    };
    let words: Vec<&str> = name.split_whitespace().collect();
    words.len() >= 2
        && words
            .iter()
            .all(|w| w.starts_with(|c: char| c.is_uppercase()))
        && role.starts_with(|c: char| c.is_uppercase())
        && !role.contains(['(', ')'])
}

/// Whether an earlier round cited any of sentences `first..=last` of `reference`'s
/// document, alone or inside a span.
pub(super) fn cited_before(
    exclude: &BTreeSet<SentenceRef>,
    reference: &SentenceRef,
    first: u32,
    last: u32,
) -> bool {
    exclude.iter().any(|e| {
        e.content_sha256 == reference.content_sha256
            && (first..=last)
                .any(|i| (e.sentence..=e.sentence_end.unwrap_or(e.sentence)).contains(&i))
    })
}

/// The whole message a sentence stands in when its block is one unit (a chat
/// message, [`deepr_orchestrator::Outline::units`]): `None` outside any unit,
/// `Some(None)` for a message's later sentences (its first stands for it),
/// `Some(Some((first, last, text)))` for its first.
pub(super) fn message_span<'t>(
    text: &'t ArchivedText,
    outline: &deepr_orchestrator::Outline,
    sentence: &deepr_evidence::Sentence,
) -> Option<Option<(u32, u32, &'t str)>> {
    let (start, end) = outline.unit_at(sentence.start)?;
    // A long message is read as prose, sentence by sentence.
    let whole = text.text.get(start..end)?;
    if whole.chars().count() > MAX_MESSAGE_CHARS {
        return None;
    }
    if sentence.start != start {
        return Some(None);
    }
    let last = text
        .sentences
        .iter()
        .take_while(|s| s.end <= end)
        .last()
        .map_or(sentence.index, |s| s.index);
    Some(Some((sentence.index, last.max(sentence.index), whole)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_item_stands_alone_when_it_names_a_person_in_a_role() {
        assert!(stands_alone("- Gwen Pargeter (Chair)", true, false));
        assert!(stands_alone("Owen Trethewey (Vice-Chair)", true, false));
        // Not as prose, not without a role, not a lower-case aside.
        assert!(!stands_alone("Gwen Pargeter (Chair)", false, false));
        assert!(!stands_alone("Gwen Pargeter", true, false));
        assert!(!stands_alone("Total (see note 4)", true, false));
        assert!(!stands_alone("pack sizes (250g)", true, false));
    }
}
