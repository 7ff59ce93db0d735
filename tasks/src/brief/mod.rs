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

mod asker;
mod entities;
mod lists;
mod subjects;
pub use lists::list_items;
use lists::{clean_part, enumeration, numbered_parts, ENUMERATION_LEADS};
pub use subjects::{
    asked_subject, is_name, listed_subjects, part_subjects, same_subject, split_pair, subject_of,
    subject_question, subjects_of_part, PartSubjects,
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

impl Brief {
    /// Whether the brief has several parts (a one-line question has one).
    pub fn has_parts(&self) -> bool {
        self.parts.len() >= 2
    }

    /// What the brief parsed from `topic` is about, for ranking ([`subject_text`]): with
    /// parts and a context, the context's words about its subject
    /// ([`asker::subject_words`]: the asker's own clauses give only their names — none
    /// when that is all the context says); else the topic.
    pub fn subject(&self, topic: &str) -> String {
        if self.parts.len() >= 2 && !self.context.trim().is_empty() {
            asker::subject_words(&self.context)
        } else {
            topic.to_string()
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
    parse_brief(topic).subject(topic)
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

#[cfg(test)]
mod tests;

/// Split a topic into clauses at question marks, semicolons and ", and" joins.
pub fn topic_clauses(topic: &str) -> Vec<String> {
    let mut clauses = Vec::new();
    for part in topic.split(['?', ';', '\n']) {
        for piece in part.split(", and ").flat_map(|p| {
            p.split(" and what ").enumerate().map(|(i, s)| {
                if i > 0 {
                    format!("what {s}")
                } else {
                    s.to_string()
                }
            })
        }) {
            let piece = piece.trim().trim_matches(',').trim();
            if !deepr_evidence::terms::content_terms(piece).is_empty() {
                clauses.push(piece.to_string());
            }
        }
    }
    if clauses.is_empty() && !topic.trim().is_empty() {
        clauses.push(topic.trim().to_string());
    }
    clauses
}
