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

use entities::entities;

mod entities;
mod subjects;
pub use subjects::{
    asked_subject, is_name, listed_subjects, part_subjects, same_subject, split_pair, subject_of,
    subject_question, PartSubjects,
};

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

/// A brief's writing instructions as a prompt block: one quoted line each (data, like
/// every untrusted text), or a line saying there are none.
pub fn instructions_block(instructions: &[String]) -> String {
    if instructions.is_empty() {
        return "(none)".to_string();
    }
    instructions
        .iter()
        .map(|i| format!("- {}", deepr_prompts::quoted(i)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The longest topic used as a report's title as it stands.
pub const MAX_TITLE_CHARS: usize = 120;

/// Words that open an instruction to the writer.
const INSTRUCTION_OPENERS: &[&str] = &[
    "be ",
    "cite ",
    "use ",
    "write in ",
    "write for ",
    "write as ",
    "write it ",
    "write no ",
    "write at most",
    "address it to ",
    "the audience ",
    "audience:",
    "tone:",
    "length:",
    "format:",
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
    "give ",
    "quote ",
    "provide ",
    "state ",
    "name the ",
    "stick to ",
    "present ",
    "show ",
];

/// Words that open a line saying who the report is for or what its reader's situation
/// is ("Context: the report is for …, CTO at …", "I am the CFO of …"): context for the
/// planner and the writers, never a part or a section.
const PERSONA_OPENERS: &[&str] = &[
    "context:",
    "background:",
    "persona:",
    "for context",
    "the report is for ",
    "this report is for ",
    "the brief is for ",
    "this brief is for ",
    "the reader is ",
    "the readers are ",
    "it is for ",
    "i am ",
    "i'm ",
    "a company in the ",
    "an organisation in the ",
    "an organization in the ",
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
    /// Whether the brief has several parts (a one-line question has one).
    pub fn has_parts(&self) -> bool {
        self.parts.len() >= 2
    }

    /// What the brief parsed from `topic` is about, for ranking ([`subject_text`]).
    pub fn subject<'a>(&'a self, topic: &'a str) -> &'a str {
        if self.parts.len() >= 2 && !self.context.trim().is_empty() {
            &self.context
        } else {
            topic
        }
    }

    /// The report's title: the topic itself when it is a question or short, else "Research brief: "
    /// and the brief's subject (its first entity), else the topic's first words — a
    /// long brief is shown in full under the title, not as it.
    pub fn title(&self, topic: &str) -> String {
        let topic = topic.split_whitespace().collect::<Vec<_>>().join(" ");
        // A question with context or instructions around it is titled by the question.
        if let [question] = self.parts.as_slice() {
            let question = question.split_whitespace().collect::<Vec<_>>().join(" ");
            if !self.instructions.is_empty() && question.chars().count() <= MAX_TITLE_CHARS {
                return question;
            }
        }
        let is_brief = self.parts.len() >= 2 || !self.instructions.is_empty();
        if !is_brief || topic.chars().count() <= MAX_TITLE_CHARS {
            return topic;
        }
        if let Some(entity) = self.entities.first() {
            return format!("Research brief: {entity}");
        }
        let mut title = String::new();
        for word in topic.split(' ') {
            if title.chars().count() + word.chars().count() + 1 > MAX_TITLE_CHARS {
                break;
            }
            if !title.is_empty() {
                title.push(' ');
            }
            title.push_str(word);
        }
        format!("{title} …")
    }

    /// The brief as parsed, for a report's Run details: its parts, writing instructions
    /// and entities (a one-line question has none worth listing).
    pub fn details(&self) -> Vec<(&'static str, String)> {
        if self.parts.len() < 2 && self.instructions.is_empty() {
            return Vec::new();
        }
        let mut lines = Vec::new();
        if self.parts.len() >= 2 {
            let parts: Vec<String> = self
                .parts
                .iter()
                .enumerate()
                .map(|(i, p)| format!("({}) {p}", i + 1))
                .collect();
            lines.push(("Brief parts", parts.join("; ")));
        }
        if !self.instructions.is_empty() {
            lines.push(("Writing instructions", self.instructions.join(" ")));
        }
        if !self.entities.is_empty() {
            lines.push(("Brief entities", self.entities.join(", ")));
        }
        lines
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
    // What the context says that a role or persona line did not add: a one-part
    // brief's part.
    let mut asked: Vec<String> = Vec::new();
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
            } else if let Some(named) = subject_of_lead(&lead) {
                // "Write a brief on Tidewater Cartage's new depot, covering:" names the
                // subject; its enumeration words go.
                push_context(&named, &mut context, &mut brief.instructions);
            }
            continue;
        }
        if let Some((lead, parts)) = enumeration(&sentence).filter(|_| brief.parts.is_empty()) {
            brief.parts = parts;
            // "We are weighing a loan to X and need a note that answers the following:"
            // names the subject; the enumeration's own lead words go.
            push_context(lead, &mut context, &mut brief.instructions);
            continue;
        }
        let before = context.len();
        let instruction = push_context(&sentence, &mut context, &mut brief.instructions);
        if !instruction {
            asked.extend(context.get(before..).unwrap_or(&[]).iter().cloned());
        }
    }
    brief.context = context.join(" ");
    brief.entities = entities(&brief.context);
    // Names the parts add (competitors, products) come after the context's subject.
    for name in entities(&brief.parts.join(". ")) {
        if !brief.entities.contains(&name) {
            brief.entities.push(name);
        }
    }
    if brief.parts.is_empty() {
        let whole = if !asked.is_empty() {
            asked.join(" ")
        } else if brief.context.is_empty() {
            text.trim().to_string()
        } else {
            brief.context.clone()
        };
        brief.parts.push(whole);
    }
    brief
}

/// An instruction or persona sentence goes to the instructions, anything else with
/// words to the context; whether it was an instruction.
fn push_context(sentence: &str, context: &mut Vec<String>, instructions: &mut Vec<String>) -> bool {
    let trimmed = sentence.trim();
    if trimmed.is_empty() {
        return true;
    }
    if is_instruction(trimmed) || is_persona(trimmed) {
        instructions.push(trimmed.to_string());
        // A role line ("You are preparing a brief on X, a …", "I am the CFO of X")
        // also names the subject.
        let lowered = trimmed.to_ascii_lowercase();
        if let Some(at) = [" on ", " about ", " of "]
            .iter()
            .filter_map(|w| lowered.find(w).map(|i| i + w.len()))
            .min()
        {
            if ["you are", "you're", "i am", "i'm"]
                .iter()
                .any(|r| lowered.starts_with(r))
            {
                // ASCII lower-casing keeps byte offsets.
                if let Some(subject) = trimmed.get(at..) {
                    context.push(subject.to_string());
                }
            }
        }
        true
    } else {
        context.push(trimmed.to_string());
        false
    }
}

/// What an enumeration's lead names ("Write a brief on Tidewater Cartage's new depot
/// from the team's mail, covering:" → its words before "covering"), when it names
/// something (a capitalised name past its first word).
fn subject_of_lead(lead: &str) -> Option<String> {
    let lowered = lead.trim().to_lowercase();
    let cut = ENUMERATION_LEADS
        .iter()
        .filter_map(|l| lowered.rfind(l.trim_end_matches(':')))
        .min()?;
    // ASCII and Unicode lower-casing may differ in length: cut the original at a
    // character boundary only.
    let named = lead
        .trim()
        .get(..cut)?
        .trim()
        .trim_end_matches([',', ';', ':'])
        .trim();
    (!entities(named).is_empty()).then(|| named.to_string())
}

/// Whether a sentence says who the report is for or what its reader's situation is
/// ([`PERSONA_OPENERS`]).
fn is_persona(sentence: &str) -> bool {
    let lowered = sentence.to_lowercase();
    PERSONA_OPENERS.iter().any(|o| lowered.starts_with(o))
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
        cuts = dotted_cuts(sentence);
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

/// Inline `1. … 2. … 3. …` markers: a number of one or two digits, a period and a space,
/// after a space or at the start — taken only when they count 1, 2, 3 … in order, so
/// "version 2. The" or "3.5" is never a part.
fn dotted_cuts(sentence: &str) -> Vec<(usize, usize)> {
    let bytes = sentence.as_bytes();
    let mut cuts = Vec::new();
    let mut expected = 1;
    for (i, _) in sentence.char_indices() {
        let preceded = i == 0 || bytes[i - 1] == b' ';
        let digits = bytes[i..]
            .iter()
            .take(3)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if !preceded || digits == 0 || digits > 2 {
            continue;
        }
        let end = i + digits;
        if bytes.get(end) != Some(&b'.') || bytes.get(end + 1) != Some(&b' ') {
            continue;
        }
        if sentence[i..end].parse::<usize>().ok() == Some(expected) {
            cuts.push((i, end + 1));
            expected += 1;
        }
    }
    cuts
}

/// "… covering: X, Y and Z." → [X, Y, Z].
fn enumeration(sentence: &str) -> Option<(&str, Vec<String>)> {
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
    let pieces = list_items(sentence.get(at + lead.len()..)?);
    let before = sentence.get(..at)?;
    // The words before the lead that only introduce it ("… a note that answers") go —
    // never a name ("… asked you to research Acme Corp, covering:" keeps Acme Corp).
    let before = [" that ", " which "]
        .iter()
        .filter_map(|w| before.rfind(w))
        .max()
        .filter(|cut| {
            before
                .get(*cut..)
                .is_some_and(|tail| !tail.chars().any(char::is_uppercase))
        })
        .and_then(|cut| before.get(..cut))
        .unwrap_or(before);
    (pieces.len() >= 2).then_some((before, pieces))
}

/// The items of a list: "X, Y and Z" → [X, Y, Z]. Only the last piece's "and" joins
/// the list; an earlier "X and Y" is one item ("payload and battery life, pricing, and
/// …"). A list whose items are set apart by semicolons is split at them only: its items
/// may hold commas ("how loyal its customers are, including churn; the people side").
/// Joining words and final punctuation are dropped.
pub fn list_items(list: &str) -> Vec<String> {
    let by_semicolons = list.contains(';');
    let separators: &[char] = if by_semicolons { &[';'] } else { &[',', ';'] };
    list.split(separators)
        .map(str::trim)
        .collect::<Vec<_>>()
        .split_last()
        .map(|(last, firsts)| {
            // Only the last piece holds the list's own "and" ("A, B and C"); an
            // earlier "X and Y" is one part ("payload and battery life, pricing, and …").
            let mut pieces: Vec<&str> = firsts.to_vec();
            // Items set apart by semicolons hold their own "and"s ("the budget, reserves
            // and debt"); the list's joins the last item ("; and the people side").
            match last.rsplit_once(" and ") {
                Some((before, after)) if !last.starts_with("and ") && !by_semicolons => {
                    pieces.extend([before, after])
                }
                _ => pieces.push(last),
            }
            pieces
        })
        .unwrap_or_default()
        .into_iter()
        .map(clean_part)
        .filter(|p| !p.is_empty())
        .collect()
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

#[cfg(test)]
mod tests;
