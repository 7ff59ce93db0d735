//! What a candidate unit of an archived text is: a sentence that speaks for itself, or
//! a fragment (a list item, a table row: a whole block without a final period, or a
//! labelled row) that needs the headings above it; whether it states a figure; and
//! whether it only points elsewhere or is a byline. Blocks of an archived text are
//! separated by blank lines (`deepr-documents`).

use deepr_evidence::terms::words;

/// Does the sentence state a figure: a word made only of digits and separators, or an
/// amount with its magnitude ("212.4m" of "$212.4M", "4.5bn", "120k")? A unit or a
/// version ("8kb", "v3") is no figure.
pub(crate) fn states_a_figure(text: &str) -> bool {
    words(text).iter().any(|w| {
        let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let magnitude = &w[digits.len()..];
        w.starts_with(|c: char| c.is_ascii_digit())
            && digits
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
            && ["", "k", "m", "mn", "b", "bn"].contains(&magnitude)
    })
}

/// Bytes past a document's opening headings that its title block may span.
const TITLE_BLOCK_BYTES: usize = 600;

/// Where a document's title block ends (0 when the document opens with no heading):
/// the lines under its opening headings (a title, a subtitle), up to the next heading.
pub(crate) fn title_block_end(text: &str, outline: &deepr_orchestrator::Outline) -> usize {
    let mut headings = outline
        .headings
        .iter()
        .map(|&(at, level)| (at as usize, level));
    let Some((first, level)) = headings.next() else {
        return 0;
    };
    let opens = text
        .get(..first)
        .is_some_and(|before| before.trim().is_empty());
    if level == 0 || !opens {
        return 0;
    }
    let block_end = |at: usize| {
        at + text
            .get(at..)
            .and_then(|rest| rest.split("\n\n").next())
            .map_or(0, str::len)
    };
    let mut opened = block_end(first);
    for (at, level) in headings {
        let next_block = text
            .get(opened..at)
            .is_some_and(|gap| gap.trim().is_empty());
        if level > 0 && next_block {
            opened = block_end(at); // a subtitle, or the title's second line
            continue;
        }
        return at.min(opened + TITLE_BLOCK_BYTES);
    }
    (opened + TITLE_BLOCK_BYTES).min(text.len())
}

/// Whether a unit of a document's title block is front matter: a line with no final
/// stop — no marked list item, no table row — that states no amount. Such a line names
/// the organisation, the document, its date and place ("Quillfeather Software Ltd -
/// Board meeting, 20 October 2026, Bristol"): it says what the document is, not what
/// it states.
pub(crate) fn is_front_matter(body: &str) -> bool {
    let marker = body.starts_with(['-', '*', '•', '·']) || item_number(body).is_some();
    !ends_like_sentence(body) && !marker && !body.contains(" · ") && !states_an_amount(body)
}

/// Whether a text states an amount: a currency sign or a percent beside a digit, or a
/// number of three digits or more that is no year ("3,412 robots"; not "20 October
/// 2026" or "10:00").
fn states_an_amount(text: &str) -> bool {
    let beside_digit = text.char_indices().any(|(i, c)| {
        matches!(c, '$' | '£' | '€' | '¥' | '%')
            && (text[..i].ends_with(|d: char| d.is_ascii_digit())
                || text[i + c.len_utf8()..].starts_with(|d: char| d.is_ascii_digit()))
    });
    beside_digit
        || words(text).iter().any(|w| {
            let digits = w.chars().filter(char::is_ascii_digit).count();
            let year = w.len() == 4 && (w.starts_with("19") || w.starts_with("20"));
            w.chars()
                .all(|c| c.is_ascii_digit() || c == ',' || c == '.')
                && digits >= 3
                && !year
        })
}

/// Sentences that point elsewhere ("see section 3 above") say little on their own, and
/// neither do a document's byline and handling lines ("Prepared by …", "Confidential").
pub(crate) fn pointer_penalty(text: &str) -> f64 {
    let lower = text.to_lowercase();
    let byline = [
        "prepared by ",
        "written by ",
        "approved by ",
        "reviewed by ",
        "published by ",
        "author:",
        "authors:",
        "confidential",
    ]
    .iter()
    .any(|b| lower.starts_with(b));
    let pointer = byline
        || lower.starts_with('(')
        || lower.starts_with("see ")
        || lower.contains("section")
        || points_up_or_down(&lower)
        || speaks_of_itself(&lower);
    if pointer {
        0.4
    } else {
        1.0
    }
}

/// Words that, before "above" or "below", make it point at another part of the text
/// ("as shown above", "the table below").
const POINTING_BEFORE: &[&str] = &[
    "see",
    "shown",
    "described",
    "listed",
    "noted",
    "mentioned",
    "outlined",
    "given",
    "out",
    "detailed",
    "summarised",
    "summarized",
    "discussed",
    "explained",
    "table",
    "tables",
    "figure",
    "figures",
    "chart",
    "list",
    "example",
    "examples",
    "steps",
    "as",
];

/// Whether a (lower-cased) sentence points at text above or below it ("See the table
/// below.", "as described above, …"), as opposed to comparing a figure ("roughly 23%
/// above the FY2025 total", "vacancy below 4%"): the word ends a clause, or a pointing
/// word stands before it.
fn points_up_or_down(lower: &str) -> bool {
    let mut words = lower.split_whitespace().peekable();
    let mut before = "";
    while let Some(word) = words.next() {
        let bare = word.trim_end_matches(|c: char| !c.is_alphanumeric());
        if bare == "above" || bare == "below" {
            let ends_clause = bare.len() < word.len() || words.peek().is_none();
            if ends_clause || POINTING_BEFORE.contains(&before) {
                return true;
            }
        }
        before = word;
    }
    false
}

/// Kinds of documents a sentence may name when it speaks of the document it stands in
/// ("note" and "deck" are not: "this note bears 5 % interest", a ferry's "this deck").
const DOCUMENT_KINDS: &[&str] = &[
    "document",
    "article",
    "page",
    "memo",
    "update",
    "report",
    "brief",
    "guide",
    "paper",
    "presentation",
    "workbook",
    "chapter",
];

/// Whether a (lower-cased) sentence speaks of its own document ("The information in
/// this document is…", "This update covers the results (page 2)…"): it says what the
/// document is, not what it says.
fn speaks_of_itself(lower: &str) -> bool {
    lower.match_indices("this ").any(|(at, this)| {
        // "this" as a word ("mathis memo" is none).
        let starts_word = !lower[..at].ends_with(|c: char| c.is_alphanumeric());
        let rest = &lower[at + this.len()..];
        starts_word
            && DOCUMENT_KINDS.iter().any(|kind| {
                rest.strip_prefix(kind)
                    .is_some_and(|after| !after.starts_with(|c: char| c.is_alphanumeric()))
            })
    })
}

/// Most list items walked back over to find a list's lead-in.
const MAX_ITEMS_BEFORE: usize = 64;

/// The sentence that introduces the list the unit `sentence` of `text` stands in (it
/// ends with a colon: "… meet all of the following requirements:"), when the unit is a
/// list item: out of its list, "The PRAGMA journal_mode is not OFF, MEMORY, or WAL"
/// does not say what it is a condition for. A heading, or a prose sentence without a
/// colon, above the list means it has no lead-in.
pub(crate) fn lead_in(
    text: &deepr_orchestrator::ArchivedText,
    outline: Option<&deepr_orchestrator::Outline>,
    sentence: u32,
) -> Option<u32> {
    let is_heading = |start: usize| outline.is_some_and(|o| o.is_heading_at(start));
    let unit = text.sentences.get(sentence as usize)?;
    let body = text.text.get(unit.start..unit.end)?;
    if !is_list_item(&text.text, unit.start, unit.end, body) {
        return None;
    }
    let first = (sentence as usize).saturating_sub(MAX_ITEMS_BEFORE + 1);
    let mut number = item_number(body);
    for index in (first..sentence as usize).rev() {
        let before = text.sentences.get(index)?;
        let body = text.text.get(before.start..before.end)?.trim_end();
        if is_heading(before.start) {
            return None;
        }
        if body.ends_with(':') {
            return Some(index as u32);
        }
        // A numbered list starts at 1: an item numbered otherwise than the one before
        // the last belongs to another list ("1. Make sure …" after another list's "4.").
        let numbered = item_number(body);
        if number == Some(1)
            || (number.is_some() && numbered != number.and_then(|n| n.checked_sub(1)))
            || !is_list_item(&text.text, before.start, before.end, body)
        {
            return None;
        }
        number = numbered;
    }
    None
}

/// A numbered list item's number ("3. The PRAGMA …" → 3).
fn item_number(body: &str) -> Option<u32> {
    let (number, rest) = body.split_once(['.', ')'])?;
    let digits = (1..=3).contains(&number.len()) && number.bytes().all(|b| b.is_ascii_digit());
    if digits && rest.starts_with(' ') {
        number.parse().ok()
    } else {
        None
    }
}

/// Whether the unit at bytes `start..end` of `text` is a list item (see
/// [`is_list_item`]).
pub(crate) fn is_list_item_at(text: &str, start: usize, end: usize) -> bool {
    text.get(start..end)
        .is_some_and(|body| is_list_item(text, start, end, body.trim_end()))
}

/// Whether `body`, at bytes `start..end` of `text`, is a list item: a whole block that
/// is no table row and either has no final stop or opens with a list marker ("3. ",
/// "- ", "• ").
fn is_list_item(text: &str, start: usize, end: usize, body: &str) -> bool {
    let marker = body.starts_with(['-', '*', '•', '·']) || item_number(body).is_some();
    is_whole_block(text, start, end)
        && !body.contains(" · ")
        && (marker || !ends_like_sentence(body))
}

/// Whether a whole-block unit is a fragment — a list item or table row that needs the
/// headings above it to say what it is about — rather than a sentence that speaks for
/// itself.
pub(crate) fn is_fragment(body: &str) -> bool {
    !ends_like_sentence(body) || body.contains(" · ")
}

/// Whether the unit at bytes `start..end` of `text` is a fragment (see [`is_fragment`]).
pub(crate) fn is_fragment_at(text: &str, start: usize, end: usize) -> bool {
    is_whole_block(text, start, end) && text.get(start..end).is_some_and(is_fragment)
}

/// Whether bytes `start..end` of `text` are a whole block: blocks of an archived text
/// are separated by blank lines.
pub(crate) fn is_whole_block(text: &str, start: usize, end: usize) -> bool {
    let before = text.get(..start).unwrap_or("");
    let after = text.get(end..).unwrap_or("");
    (before.is_empty() || before.ends_with("\n\n"))
        && (after.trim().is_empty() || after.starts_with("\n\n"))
}

pub(crate) fn ends_like_sentence(text: &str) -> bool {
    text.trim_end_matches(['"', '\'', ')', '”', '’'])
        .ends_with(['.', '!', '?', '。', '！', '？'])
}

/// Whether a table row sums up its table: its first cell is a total or covers every
/// item ("Division: Total · …", "Mode: All modes · …").
pub(crate) fn is_summary_row(text: &str) -> bool {
    if !text.contains(" · ") {
        return false;
    }
    let first = text.split(" · ").next().unwrap_or("");
    let value = first
        .split_once(": ")
        .map_or(first, |(_, v)| v)
        .trim()
        .to_lowercase();
    let first_word = value.split_whitespace().next().unwrap_or("");
    matches!(first_word, "total" | "totals" | "overall" | "all") || value.starts_with("grand total")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_amount_with_its_magnitude_states_a_figure() {
        for stated in [
            "Total operating expenditure (Opex) · Value: $212.4M",
            "FY2025 boardings: 48.6M",
            "Net debt of £4.5bn at year end",
            "Around 120k subscribers",
            "Headcount: 2,214",
        ] {
            assert!(states_a_figure(stated), "{stated}");
        }
        // A unit, a version, a name that ends in digits: no figure.
        for none in ["Pages of 8KB each", "Release v3 ships", "Built on sqlite3"] {
            assert!(!states_a_figure(none), "{none}");
        }
    }

    #[test]
    fn a_title_blocks_lines_that_name_the_document_are_front_matter() {
        let text = "# Board Pack: Q2 FY27\n\nQuillfeather Software Ltd - Board meeting, 20 October 2026, Bristol\n\n\
                    Prepared by the executive team\n\nARR £41.7M, up 29%\n\n- Renewal at risk\n\n\
                    Held on 17 September 2026 at 10:00.\n\n# Headlines\n\nHeld on 1 May 2026 at 10:00";
        let outline = deepr_orchestrator::Outline {
            headings: vec![(0, 1), (text.find("# Headlines").unwrap() as u32, 1)],
            ..Default::default()
        };
        let end = title_block_end(text, &outline);
        assert_eq!(end, text.find("# Headlines").unwrap());
        for line in [
            "Quillfeather Software Ltd - Board meeting, 20 October 2026, Bristol",
            "Prepared by the executive team",
        ] {
            assert!(is_front_matter(line), "{line}");
        }
        // An amount, a marked item, a sentence: what the document states.
        for line in [
            "ARR £41.7M, up 29%",
            "- Renewal at risk",
            "Held on 17 September 2026 at 10:00.",
            "Deployed fleet: 3,412 robots",
        ] {
            assert!(!is_front_matter(line), "{line}");
        }
        // A document that opens with prose has no title block.
        let outline = deepr_orchestrator::Outline {
            headings: vec![(30, 1)],
            ..Default::default()
        };
        assert_eq!(
            title_block_end("Some opening prose goes here.\n\n# Later", &outline),
            0
        );
    }

    #[test]
    fn a_list_item_is_read_after_the_sentence_that_introduces_its_list() {
        let text = deepr_orchestrator::ArchivedText::new(
            "Journals\n\nThe super-journal is only created when the databases meet all of \
             the following requirements:\n\n1. The database is modified\n\n2. The \
             PRAGMA journal_mode is not OFF, MEMORY, or WAL.\n\nThis means commits are \
             not atomic.\n\n- A row without a lead-in",
        );
        let outline = deepr_orchestrator::Outline {
            headings: vec![(0, 1)],
            ..Default::default()
        };
        let at = |needle: &str| {
            text.sentences
                .iter()
                .position(|s| text.text[s.start..s.end].contains(needle))
                .map(|i| i as u32)
        };
        let lead = at("following requirements");
        assert!(lead.is_some());
        assert_eq!(
            lead_in(&text, Some(&outline), at("is modified").unwrap()),
            lead
        );
        // An item with a final stop is still an item when it opens with its number.
        assert_eq!(lead_in(&text, Some(&outline), at("MEMORY").unwrap()), lead);
        // An item of a list that restarts its numbering has its own list's lead-in.
        let steps = deepr_orchestrator::ArchivedText::new(
            "The steps are as follows:\n\n1. Lock the file\n\n2. Read the journal\n\n\
             1. Make sure all journal data was written\n\n2. Delete the journal",
        );
        let at_steps = |needle: &str| {
            steps
                .sentences
                .iter()
                .position(|s| steps.text[s.start..s.end].contains(needle))
                .map(|i| i as u32)
        };
        assert_eq!(
            lead_in(&steps, None, at_steps("Read the journal").unwrap()),
            Some(0)
        );
        assert_eq!(lead_in(&steps, None, at_steps("Make sure").unwrap()), None);
        assert_eq!(
            lead_in(&steps, None, at_steps("Delete the journal").unwrap()),
            None
        );
        // A prose sentence, and an item whose list follows prose without a colon, have none.
        assert_eq!(
            lead_in(&text, Some(&outline), at("This means").unwrap()),
            None
        );
        assert_eq!(
            lead_in(&text, Some(&outline), at("without a lead-in").unwrap()),
            None
        );
    }

    #[test]
    fn a_total_row_sums_up_its_table() {
        assert!(is_summary_row(
            "Division: Total · Budgeted FTE: 2,348 · Filled FTE: 2,214"
        ));
        assert!(is_summary_row("Mode: All modes · FY2025 boardings: 48.6M"));
        assert!(is_summary_row("Total · 212.4"));
        // Another row, a sentence, a summary that is no total.
        assert!(!is_summary_row(
            "Division: Bus Operations · Budgeted FTE: 1,210"
        ));
        assert!(!is_summary_row("Total spend rose by 4% in the year."));
        assert!(!is_summary_row("Section: Summary · Pages: 2"));
        assert!(!is_summary_row("Item: Allowance · Value: $3,000"));
    }

    #[test]
    fn a_sentence_that_speaks_of_its_own_document_weighs_as_a_pointer() {
        for meta in [
            "The information in this document is a correct description of how it works.",
            "This update covers the financial results for the quarter (page 2).",
            "As this report shows, margins held.",
            "The figures are set out in the table below.",
            "As described above, the scheme closed in 2019.",
            "See above for the 2025 figures",
            "The table below lists each depot's chargers.",
        ] {
            assert_eq!(pointer_penalty(meta), 0.4, "{meta}");
        }
        for fact in [
            "Mathis memo writers earn more.",
            "This note bears 5% interest until 2030.",
            "Passengers on this deck must wear life jackets.",
            "This documentation tool is free.",
            "Revenue rose 38% to $14.2M.",
            // A comparison is no pointer.
            "The headline ridership goal is 60 million annual boardings by FY2030, roughly 23% above the FY2025 total.",
            "Operator vacancy stayed below 4% in every quarter.",
            "Spending was 1.8% below budget, and output above plan.",
        ] {
            assert_eq!(pointer_penalty(fact), 1.0, "{fact}");
        }
    }
}
