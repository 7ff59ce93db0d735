//! Triage offline: which documents a run's searches found are in scope of the brief or
//! question, and which are off-topic — the office's own paperwork (a hybrid-work
//! policy, brand rules, a canteen menu, an IT access review, an event agenda) that
//! shares the brief's words (the organisation's name, its products) but not its
//! subject. Offline and deterministic: a document is off-topic when its title names an
//! administrative kind of document and neither its title nor its headings name any
//! subject the brief asks about. A document worded unlike the brief (a headcount plan,
//! a pipeline workbook) names no administrative kind and stays in scope: judging too
//! much off-topic would lose facts, so the rule needs both signals.
//!
//! The offline model's triage answer, and the rule score applies when no model
//! triages (`stages/src/triage.rs`). Off-topic documents are never candidates, never
//! followed up, and are listed under References with the reason.

use std::collections::BTreeSet;

use crate::brief::Brief;
use deepr_evidence::stem::snowball;
use deepr_evidence::terms::{is_stop_word, words};

/// Words of a title that name a document of the office's own running, as stems of
/// one word or as two-word phrases.
const ADMIN_WORDS: &[&str] = &[
    "policy",
    "policies",
    "handbook",
    "guidelines",
    "guideline",
    "branding",
    "template",
    "menu",
    "canteen",
    "cafeteria",
    "agenda",
    "newsletter",
    "calendar",
    "faq",
    "intranet",
    "helpdesk",
    "offsite",
    "kickoff",
    "hackathon",
    "relocation",
    "password",
    "passwords",
    "laptop",
    "laptops",
    "etiquette",
    "wellbeing",
    "timesheet",
    "timesheets",
    "parking",
];
const ADMIN_PHRASES: &[&str] = &[
    "brand guidelines",
    "brand rules",
    "brand guide",
    "brand book",
    "brand standards",
    "visual identity",
    "logo usage",
    "style guide",
    "service desk",
    "office move",
    "social club",
    "code of conduct",
    "dress code",
    "access review",
    "car park",
    "travel and expenses",
    "expense policy",
    "training calendar",
    "seating plan",
    "fire drill",
    "team building",
    "kick off",
    "staff briefing",
    "near miss",
    "release notes",
    "change log",
    "changelog",
];

/// One-word kinds a file name may be judged by alone: an office event or a facility,
/// never a product's own documentation ("hackathon-2026-results.md" titled "Quillhack
/// 2026: the results"; "faq.html" or "policy.md" may document a product).
const FILE_NAME_WORDS: &[&str] = &[
    "hackathon",
    "canteen",
    "cafeteria",
    "newsletter",
    "offsite",
    "kickoff",
    "parking",
    "wellbeing",
    "etiquette",
];

/// Kinds of paperwork that may be what a brief asks about (a pricing policy, a
/// safety bulletin): one word of the brief in the title keeps them in scope.
const WEAK_KINDS: &[&str] = &[
    "policy",
    "policies",
    "guideline",
    "guidelines",
    "template",
    "access review",
    "near miss",
    "code of conduct",
    "expense policy",
    "travel and expenses",
    // A release's notes list what shipped and what was fixed: the subject of a
    // question about that release, detail beside a brief's "where the roadmap stands".
    "release notes",
    "change log",
    "changelog",
];

/// Words of a brief that name no subject of its documents.
const GENERIC: &[&str] = &[
    "company",
    "current",
    "key",
    "including",
    "include",
    "brief",
    "briefing",
    "note",
    "notes",
    "report",
    "overview",
    "summary",
    "position",
    "positioned",
    "against",
    "new",
    "main",
    "overall",
    "general",
    "documents",
    "document",
    "team",
    "organisation",
    "organization",
    "business",
    "today",
];

/// Why a document is off-topic for `brief`, or `None` when it is in scope. `headings`
/// are the headings its reader found.
pub fn off_topic(title: &str, headings: &[String], brief: &Brief) -> Option<String> {
    let kind = admin_kind(title)?;
    let subjects = subject_stems(brief);
    let named = |text: &str| {
        stems(text)
            .into_iter()
            .filter(|s| subjects.contains(s))
            .collect::<BTreeSet<_>>()
            .len()
    };
    let names_a_subject = |text: &str| named(text) > 0;
    // A policy may be the brief's own subject ("Pricing Policy"): one word of the brief
    // in its title brings it into scope. An agenda, a menu, a newsletter names the
    // brief's words by chance ("Sales Kick-off - Agenda"): it takes two.
    let weak = WEAK_KINDS.contains(&kind.as_str());
    if named(title) >= if weak { 1 } else { 2 } {
        return None;
    }
    // Headings speak for a policy's subject; an agenda's or a newsletter's name the
    // brief's words by chance ("Membership", "Service levels").
    if !weak {
        return Some(format!(
            "a {kind} document whose title names nothing the brief asks about"
        ));
    }
    // A heading may share a brief's word by chance ("Budget and contacts" in a
    // password policy): the headings count when two, and a third of them, do.
    let matching = headings.iter().filter(|h| names_a_subject(h)).count();
    if matching >= 2 && matching * 3 >= headings.len() {
        return None;
    }
    Some(format!(
        "a {kind} document whose title and headings name nothing the brief asks about"
    ))
}

/// [`off_topic`] by the document's title, or, when its title names no kind of
/// paperwork, by its file name (`locator`'s last part) when that names a two-word kind
/// ("bristol-office-move-faq.md" titled "Moving to Cargo Works: your questions
/// answered") or one of [`FILE_NAME_WORDS`]: one word of a terse file name
/// ("faq.html", "policy.md") is too often a product's own documentation to judge by.
pub fn off_topic_by_name(
    title: &str,
    locator: &str,
    headings: &[String],
    brief: &Brief,
) -> Option<String> {
    if admin_kind(title).is_some() {
        return off_topic(title, headings, brief);
    }
    let file = locator.rsplit(['/', '\\']).next().unwrap_or(locator);
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    let name = stem.replace(['-', '_'], " ");
    admin_kind(&name)
        .filter(|kind| kind.contains(' ') || FILE_NAME_WORDS.contains(&kind.as_str()))
        .and_then(|_| off_topic(&name, headings, brief))
}

/// The administrative kind a title names ("policy", "brand guidelines"), if any.
fn admin_kind(title: &str) -> Option<String> {
    let lower = words(title).join(" ");
    if let Some(phrase) = ADMIN_PHRASES.iter().find(|p| contains_phrase(&lower, p)) {
        return Some((*phrase).to_string());
    }
    words(title)
        .into_iter()
        .find(|w| ADMIN_WORDS.contains(&w.as_str()))
}

fn contains_phrase(text: &str, phrase: &str) -> bool {
    text == phrase
        || text.starts_with(&format!("{phrase} "))
        || text.ends_with(&format!(" {phrase}"))
        || text.contains(&format!(" {phrase} "))
}

/// What the brief asks about, as stems: its parts' and its context's content words,
/// without the names of its entities (every document of a share names its
/// organisation) and without words that name no subject.
fn subject_stems(brief: &Brief) -> BTreeSet<String> {
    let names: BTreeSet<String> = brief.entities.iter().flat_map(|e| stems(e)).collect();
    brief
        .parts
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(brief.context.as_str()))
        .flat_map(stems)
        .filter(|s| !names.contains(s))
        .collect()
}

/// Content words as stems, without stop words, numbers and generic words.
fn stems(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|w| w.chars().count() > 2 && w.chars().all(char::is_alphabetic))
        .filter(|w| !is_stop_word(w) && !GENERIC.contains(&w.as_str()))
        .map(|w| snowball(&w))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brief() -> Brief {
        crate::brief::parse_brief(
            "You are preparing a brief on Kestrelmoor Robotics. Write a brief covering: (1) funding history, (2) the product line and pricing, (3) operational performance and risks.",
        )
    }

    #[test]
    fn office_paperwork_is_off_topic_and_a_fact_document_worded_unlike_the_brief_is_not() {
        let b = brief();
        assert!(off_topic(
            "Kestrelmoor Brand Guidelines",
            &["Logo".into(), "Colours".into()],
            &b
        )
        .is_some());
        assert!(off_topic("Hybrid Work Policy 2026", &["Anchor days".into()], &b).is_some());
        // A title that names no paperwork is judged by its file name.
        let faq = "facilities/bristol-office-move-faq.md";
        assert!(off_topic_by_name(
            "Moving to Cargo Works: your questions answered",
            faq,
            &[],
            &b
        )
        .is_some());
        assert!(
            off_topic_by_name("2026 Headcount Plan", "hr/headcount-plan.xlsx", &[], &b).is_none()
        );
        assert!(off_topic_by_name("Notes", "product/pricing-policy-s4.docx", &[], &b).is_none());
        // One word of a file name is not enough: a product's own FAQ stays.
        assert!(
            off_topic_by_name("Frequently Asked Questions", "docs/faq.html", &[], &b).is_none()
        );
        // …unless it names an office event: a hackathon's results are no product fact.
        let hackathon = "engineering/hackathon-2026-results.md";
        assert!(off_topic_by_name("Quillhack 2026: the results", hackathon, &[], &b).is_some());
        // A release's notes are detail beside a brief on a company; the subject of a
        // question about its releases.
        let notes = "product/release-notes-2026-09.md";
        let fixes = ["New".to_string(), "Fixed".to_string()];
        assert!(off_topic_by_name("Quillfeather Dispatch 2026.9", notes, &fixes, &b).is_some());
        let asks_releases = crate::brief::parse_brief("What did the last two releases fix?");
        assert!(off_topic_by_name("Release notes 2026.9", notes, &fixes, &asks_releases).is_none());
        // Brand rules by any of their names.
        for title in [
            "Brand rules",
            "Kestrelmoor brand book 2026",
            "Visual identity",
        ] {
            assert!(off_topic(title, &[], &b).is_some(), "{title}");
        }
        // Worded unlike the brief, but no paperwork: in scope.
        assert!(off_topic("2026 Headcount Plan", &[], &b).is_none());
        // Paperwork about what the brief asks: in scope.
        assert!(off_topic("Pricing Policy for the Kestrel S4", &[], &b).is_none());
        let risks = [
            "Operational risk register".to_string(),
            "Risk owners and performance".to_string(),
        ];
        assert!(off_topic("Information Security Policy", &risks, &b).is_none());
        // One heading sharing a word by chance does not bring paperwork into scope.
        let chance = [
            "Passwords".to_string(),
            "Devices".to_string(),
            "Budget and pricing contacts".to_string(),
            "Exceptions".to_string(),
        ];
        assert!(off_topic("IT Policy - Passwords and Devices", &chance, &b).is_some());
    }
}
