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
    (MIN_SENTENCE_CHARS..=longest).contains(&body.chars().count())
        && (ends_like_sentence(body) || block_unit)
        && !body.trim_end().ends_with(':')
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
