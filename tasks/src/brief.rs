//! A brief, read as a writer would: its **parts** (what the report must cover), its
//! **writing instructions** (who writes, for whom, how) and its **context** (the rest:
//! the subject and what is known of it). Deterministic, and the one place briefs are
//! parsed. A one-line question is a brief with one part.
//!
//! Parts come from numbered or lettered markers (`(1)`, `1)`, `a)`, `(iv)`), from
//! bullet lines, and from "covering: X, Y and Z" enumerations. A sentence that
//! instructs (cite sources, be specific, audience, tone, length, format, language, a
//! "you are …" role) is an instruction. Entities are the context's capitalised names,
//! the subject first.

use serde::{Deserialize, Serialize};

/// A parsed brief.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Brief {
    /// What the report must cover, in the brief's order.
    pub parts: Vec<String>,
    /// Sentences that tell the writer how to write.
    pub instructions: Vec<String>,
    /// The rest: the subject and its context.
    pub context: String,
    /// Capitalised names in the context (the subject first), e.g. the company.
    pub entities: Vec<String>,
}

/// Words that open an instruction to the writer.
const INSTRUCTION_OPENERS: &[&str] = &[
    "be ",
    "cite ",
    "use ",
    "write in ",
    "keep ",
    "include ",
    "avoid ",
    "do not ",
    "don't ",
    "make sure ",
    "format ",
    "answer in ",
    "respond ",
    "aim for ",
    "limit ",
    "please ",
    "you are ",
    "you're ",
    "act as ",
    "assume ",
    "focus on ",
    "the audience ",
    "the reader ",
    "address ",
    "structure ",
    "prefer ",
    "mention ",
    "list ",
    "add ",
    "end with ",
    "start with ",
];

/// Leads that introduce an enumeration of parts.
const ENUMERATION_LEADS: &[&str] = &[
    "covering:",
    "covering",
    "including:",
    "on the following:",
    "the following:",
    "addressing:",
    "address:",
    "cover:",
    "about:",
];

impl Brief {
    /// What the brief parsed from `topic` is about, for ranking ([`subject_text`]).
    pub fn subject<'a>(&'a self, topic: &'a str) -> &'a str {
        if self.parts.len() >= 2 && !self.context.trim().is_empty() {
            &self.context
        } else {
            topic
        }
    }

    /// Whether an instruction asks for specifics — numbers, figures, dates, names,
    /// amounts — which readers can honour by preferring units that state them.
    pub fn asks_for_specifics(&self) -> bool {
        self.instructions.iter().any(|i| {
            let lowered = i.to_lowercase();
            [
                "specific", "numbers", "figures", "dates", "amounts", "quantif",
            ]
            .iter()
            .any(|w| lowered.contains(w))
        })
    }
}

/// What a topic is about, for ranking: a brief's context (its subject, without the
/// parts — each subquestion carries its own — or the writing instructions), else the
/// topic itself.
pub fn subject_text(topic: &str) -> String {
    parse_brief(topic).subject(topic).to_string()
}

/// Parse `text` into a [`Brief`].
pub fn parse_brief(text: &str) -> Brief {
    let mut brief = Brief::default();
    let mut context: Vec<String> = Vec::new();
    let bullets: Vec<&str> = text
        .lines()
        .filter_map(|l| {
            let t = l.trim_start();
            ["- ", "* ", "• "].iter().find_map(|b| t.strip_prefix(b))
        })
        .collect();
    if bullets.len() >= 2 {
        brief.parts = bullets
            .iter()
            .map(|b| clean_part(b))
            .filter(|p| !p.is_empty())
            .collect();
    }
    let prose: String = text
        .lines()
        .filter(|l| {
            bullets.len() < 2
                || !["- ", "* ", "• "]
                    .iter()
                    .any(|b| l.trim_start().starts_with(b))
        })
        .collect::<Vec<_>>()
        .join(" ");
    let split = deepr_evidence::split_sentences(&prose);
    let sentences = split
        .iter()
        .filter_map(|s| s.text(&prose))
        .map(str::to_string);
    for sentence in sentences {
        let (lead, parts) = numbered_parts(&sentence);
        if parts.len() >= 2 && brief.parts.is_empty() {
            brief.parts = parts;
            // "Write a brief covering:" introduces the parts; anything else stays.
            let lowered = lead.trim().to_lowercase();
            if !lowered.ends_with(':') && !ENUMERATION_LEADS.iter().any(|l| lowered.ends_with(l)) {
                push_context(&lead, &mut context, &mut brief.instructions);
            }
            continue;
        }
        if let Some(parts) = enumeration(&sentence).filter(|_| brief.parts.is_empty()) {
            brief.parts = parts;
            continue;
        }
        push_context(&sentence, &mut context, &mut brief.instructions);
    }
    brief.context = context.join(" ");
    brief.entities = entities(&brief.context);
    if brief.parts.is_empty() {
        let whole = if brief.context.is_empty() {
            text.trim().to_string()
        } else {
            brief.context.clone()
        };
        brief.parts.push(whole);
    }
    brief
}

/// An instruction sentence goes to the instructions, anything else with words to the
/// context.
fn push_context(sentence: &str, context: &mut Vec<String>, instructions: &mut Vec<String>) {
    let trimmed = sentence.trim();
    if trimmed.is_empty() {
        return;
    }
    if is_instruction(trimmed) {
        instructions.push(trimmed.to_string());
        // A role line ("You are preparing a brief on X, a …") also names the subject.
        let lowered = trimmed.to_ascii_lowercase();
        if let Some(at) = [" on ", " about ", " of "]
            .iter()
            .filter_map(|w| lowered.find(w).map(|i| i + w.len()))
            .min()
        {
            if lowered.starts_with("you are") || lowered.starts_with("you're") {
                // ASCII lower-casing keeps byte offsets.
                if let Some(subject) = trimmed.get(at..) {
                    context.push(subject.to_string());
                }
            }
        }
    } else {
        context.push(trimmed.to_string());
    }
}

fn is_instruction(sentence: &str) -> bool {
    let lowered = sentence.to_lowercase();
    INSTRUCTION_OPENERS.iter().any(|o| lowered.starts_with(o))
        || lowered.contains("cite your sources")
        || lowered.contains("cite sources")
}

/// The text before the first marker, and the parts between markers: `(1)`, `(a)`,
/// `(iv)`, or `1)`/`a)` after a space.
fn numbered_parts(sentence: &str) -> (String, Vec<String>) {
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let bytes = sentence.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let open = bytes[i] == b'(';
        let start = if open { i + 1 } else { i };
        let label_len = bytes[start..]
            .iter()
            .take(5)
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        let close = start + label_len;
        let label = sentence.get(start..close).unwrap_or("");
        // Two digits at most: "(2024)" is a year, not a part.
        let is_label = (1..=4).contains(&label_len)
            && ((label_len <= 2 && label.bytes().all(|b| b.is_ascii_digit()))
                || (label_len == 1 && label.bytes().all(|b| b.is_ascii_lowercase()))
                || label.bytes().all(|b| b"ivx".contains(&b)));
        let preceded = i == 0 || bytes[i - 1] == b' ';
        if is_label && preceded && bytes.get(close) == Some(&b')') && (open || label_len <= 2) {
            cuts.push((i, close + 1));
            i = close + 1;
            continue;
        }
        i += 1;
    }
    if cuts.len() < 2 {
        return (sentence.to_string(), Vec::new());
    }
    let lead = sentence[..cuts[0].0].to_string();
    let mut parts = Vec::new();
    for (k, (_, end)) in cuts.iter().enumerate() {
        let stop = cuts.get(k + 1).map_or(sentence.len(), |(s, _)| *s);
        let part = clean_part(&sentence[*end..stop]);
        if !part.is_empty() {
            parts.push(part);
        }
    }
    (lead, parts)
}

/// "… covering: X, Y and Z." → [X, Y, Z].
fn enumeration(sentence: &str) -> Option<Vec<String>> {
    // ASCII lower-casing keeps byte offsets, so they cut the original text.
    let lowered = sentence.to_ascii_lowercase();
    let at_word = |i: usize| i == 0 || !lowered.as_bytes()[i - 1].is_ascii_alphanumeric();
    let (at, lead) = ENUMERATION_LEADS
        .iter()
        .filter_map(|l| {
            lowered
                .match_indices(l)
                .map(|(i, _)| i)
                .find(|i| at_word(*i))
                .map(|i| (i, *l))
        })
        .min_by_key(|(i, _)| *i)?;
    let list = sentence.get(at + lead.len()..)?;
    let pieces: Vec<String> = list
        .split([',', ';'])
        .flat_map(|p| p.split(" and "))
        .map(clean_part)
        .filter(|p| !p.is_empty())
        .collect();
    (pieces.len() >= 2).then_some(pieces)
}

/// A part without its joining words and final punctuation.
fn clean_part(text: &str) -> String {
    let mut part = text
        .trim()
        .trim_end_matches(['.', ';', ',', ':', ' '])
        .trim()
        .to_string();
    for tail in [", and", " and", ", or", " or"] {
        if let Some(stripped) = part.strip_suffix(tail) {
            part = stripped.trim_end_matches([',', ' ']).to_string();
        }
    }
    for head in ["and ", "or "] {
        if let Some(stripped) = part.strip_prefix(head) {
            part = stripped.to_string();
        }
    }
    part.trim().to_string()
}

/// Runs of capitalised words (joined by "of", "&" or a comma before "Inc"), not at a
/// sentence's start unless followed by another capitalised word; longest first seen.
fn entities(context: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let mut run: Vec<&str> = Vec::new();
    let words: Vec<&str> = context.split_whitespace().collect();
    let mut flush = |run: &mut Vec<&str>, out: &mut Vec<String>| {
        let name = run
            .join(" ")
            .trim_end_matches([',', '.', ';', ':'])
            .to_string();
        let long_enough = run.len() >= 2 || (run.len() == 1 && name.chars().count() > 3);
        if long_enough && !name.is_empty() && seen.insert(name.clone()) {
            out.push(name);
        }
        run.clear();
    };
    for (i, word) in words.iter().enumerate() {
        let bare = word.trim_matches(|c: char| !c.is_alphanumeric());
        let capital = bare.chars().next().is_some_and(char::is_uppercase);
        let sentence_start = i == 0 || words[i - 1].ends_with(['.', '?', '!']);
        if capital && !(sentence_start && run.is_empty() && !next_is_capital(&words, i)) {
            run.push(word);
            if word.ends_with([',', '.', ';', ':']) {
                flush(&mut run, &mut out);
            }
        } else {
            flush(&mut run, &mut out);
        }
    }
    flush(&mut run, &mut out);
    out
}

fn next_is_capital(words: &[&str], i: usize) -> bool {
    words
        .get(i + 1)
        .and_then(|w| w.chars().next())
        .is_some_and(char::is_uppercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BRIEF: &str = "You are preparing a due-diligence brief on Kestrelmoor Robotics, Inc., a Dayton-based robotics company we are evaluating. Write a brief covering: (1) the company's funding history and current financial trajectory, (2) its product line and roadmap including pricing, (3) operational performance and key risks, and (4) how it is positioned against Swiftlane Robotics, MediRover and Corvid Logistics. Be specific about numbers, dates and names, and cite your sources.";

    #[test]
    fn numbered_parts_instructions_and_the_subject() {
        let brief = parse_brief(BRIEF);
        assert_eq!(
            brief.parts,
            [
                "the company's funding history and current financial trajectory",
                "its product line and roadmap including pricing",
                "operational performance and key risks",
                "how it is positioned against Swiftlane Robotics, MediRover and Corvid Logistics",
            ]
        );
        assert_eq!(brief.instructions.len(), 2, "{:?}", brief.instructions);
        assert!(brief.instructions[1].starts_with("Be specific"));
        assert!(brief.asks_for_specifics());
        assert!(!parse_brief("How does WAL work?").asks_for_specifics());
        assert_eq!(
            brief.entities.first().map(String::as_str),
            Some("Kestrelmoor Robotics"),
            "{:?}",
            brief.entities
        );
        assert!(
            brief
                .context
                .starts_with("Kestrelmoor Robotics, Inc., a Dayton-based"),
            "{}",
            brief.context
        );
    }

    proptest::proptest! {
        /// Any text is a brief: parsing never panics, and there is always a part.
        #[test]
        fn any_text_parses(text in "\\PC{0,300}") {
            let brief = parse_brief(&text);
            proptest::prop_assert!(!brief.parts.is_empty());
            let _ = subject_text(&text);
        }
    }

    #[test]
    fn other_shapes_of_brief() {
        let one = parse_brief("How does SQLite guarantee atomic commits?");
        assert_eq!(one.parts, ["How does SQLite guarantee atomic commits?"]);
        assert!(one.instructions.is_empty());
        let bullets = parse_brief("Research the Acme Corp supply chain.\n- suppliers and lead times\n- pricing risks\nKeep it under 800 words.");
        assert_eq!(bullets.parts, ["suppliers and lead times", "pricing risks"]);
        assert_eq!(bullets.instructions, ["Keep it under 800 words."]);
        let listed = parse_brief(
            "Write a report on Postgres covering: vacuum, replication lag and index bloat.",
        );
        assert_eq!(listed.parts, ["vacuum", "replication lag", "index bloat"]);
        let discovering = parse_brief("We are discovering new markets, partners and risks.");
        assert_eq!(discovering.parts.len(), 1, "{:?}", discovering.parts);
        let years = parse_brief("Revenue (2024) and (2025) figures.");
        assert_eq!(years.parts.len(), 1, "{:?}", years.parts);
        let lettered = parse_brief("Compare a) the rollback journal and b) WAL mode for SQLite.");
        assert_eq!(
            lettered.parts,
            ["the rollback journal", "WAL mode for SQLite"]
        );
    }
}
