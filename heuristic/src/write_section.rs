//! Write a section: the claims as prose, invented nowhere. Paragraphs follow the
//! sources — documents in order of their first claim, each document's claims together
//! in the order of their sentences in it, short runs from several documents sharing a
//! paragraph — so claims that share a source read together.
//! A sentence is the claim's own text when that stands on its quotes, else the quote
//! itself (verbatim, so it always stands); no connective filler is added. The heading
//! is the subquestion's subject: a quoted document heading, or the question without
//! its question words.

use std::collections::BTreeSet;

use deepr_evidence::amounts::marked_figures;
use deepr_evidence::normalise;
use deepr_evidence::prose::{check_heading, check_sentence};
use deepr_tasks::one_line;
use deepr_tasks::write_section::{
    shown_claims, Answer, AnswerParagraph, AnswerSentence, Claim, Input, WriteSection,
    MAX_HEADING_CHARS,
};

use crate::text::{with_final_stop, without_list_number};
use crate::Heuristic;

/// Most sentences a paragraph gathers from different sources (one source's claims are
/// never split, however many).
const PARAGRAPH_SENTENCES: usize = 4;

impl Heuristic for WriteSection {
    /// 2: a sentence without a final stop (a list item, a table row) gets one.
    /// 3: a subject too long for a heading is cut at its first clause.
    /// 4: a list item's number is left out of the prose ("3. The PRAGMA …"); a heading
    /// is never cut inside brackets or quotes.
    /// 5: a heading asked as an aspect of a clause is named after both.
    /// 6: a heading that loses a number its quotes lack keeps a subject that reads as
    /// one ("SQLite database file header record", not "The byte at offset of the …").
    /// 7: a claim whose every figure an earlier section states ([`Claim::stated_earlier`])
    /// is left out, unless the section would be left with nothing.
    const VERSION: u32 = 7;

    fn answer(input: &Input) -> Answer {
        let shown = shown_claims(&input.claims, &input.documents);
        let claims = not_restating(&input.claims);
        // Documents in order of first appearance; each claim goes with its first quote's.
        let mut documents: Vec<&str> = Vec::new();
        for claim in &claims {
            if let Some(quote) = claim.quotes.first() {
                if !documents.contains(&quote.document.as_str()) {
                    documents.push(&quote.document);
                }
            }
        }
        let mut written: BTreeSet<String> = BTreeSet::new();
        let mut paragraphs = Vec::new();
        for document in documents {
            let mut own: Vec<&Claim> = claims
                .iter()
                .copied()
                .filter(|c| c.quotes.first().is_some_and(|q| q.document == document))
                .collect();
            own.sort_by_key(|c| c.quotes.first().map(|q| q.sentence));
            let mut sentences = Vec::new();
            for claim in own {
                let ids = vec![claim.id.clone()];
                let text = one_line(&claim.text);
                let text = if check_sentence(&text, &ids, |id| shown.get(id).cloned()).is_ok() {
                    text
                } else if let Some(quote) = claim.quotes.first() {
                    one_line(&quote.text)
                } else {
                    continue;
                };
                // A list item or table row has no final period; as prose it gets one,
                // and loses its number.
                let text = with_final_stop(without_list_number(&text).to_string());
                if written.insert(normalise(&text)) {
                    sentences.push(AnswerSentence {
                        text,
                        claim_ids: ids,
                    });
                }
            }
            if sentences.is_empty() {
                continue;
            }
            // A source's claims stay together; a lone sentence joins its neighbour's
            // paragraph rather than standing alone, up to PARAGRAPH_SENTENCES.
            match paragraphs.last_mut() {
                Some(AnswerParagraph { sentences: last })
                    if (last.len() == 1 || sentences.len() == 1)
                        && last.len() + sentences.len() <= PARAGRAPH_SENTENCES =>
                {
                    last.extend(sentences)
                }
                _ => paragraphs.push(AnswerParagraph { sentences }),
            }
        }
        let quotes: Vec<String> = input
            .claims
            .iter()
            .flat_map(|c| c.quotes.iter().map(|q| q.text.clone()))
            .collect();
        let mut heading = heading_for(input.subquestions.first().map(String::as_str).unwrap_or(""));
        if check_heading(&heading, &quotes, &[]).is_err() {
            // A number or quoted term the quotes do not hold: leave those words out.
            heading = without_unheld_terms(&heading);
        }
        Answer {
            heading,
            paragraphs,
        }
    }
}

/// The claims to write: every fact once — a claim whose every figure an earlier
/// section states (all its figures in [`Claim::stated_earlier`]) is left out, since
/// the earlier section says it; unless every claim is such a one (a section is never
/// left empty).
fn not_restating(claims: &[Claim]) -> Vec<&Claim> {
    let restates = |claim: &Claim| {
        let figures = marked_figures(&claim.text);
        !figures.is_empty()
            && figures
                .iter()
                .all(|(written, _)| claim.stated_earlier.contains(written))
    };
    let kept: Vec<&Claim> = claims.iter().filter(|c| !restates(c)).collect();
    if kept.is_empty() {
        claims.iter().collect()
    } else {
        kept
    }
}

/// A heading without the numbers and quoted terms its section's quotes do not hold.
/// Each part ("subject: aspect") keeps its longest run of words between the words left
/// out, without joining words at its ends, so what is left still reads as a subject:
/// "The byte at offset 18 of the SQLite database file header record" → "SQLite database
/// file header record". A part with nothing left is dropped.
fn without_unheld_terms(heading: &str) -> String {
    const JOINING: [&str; 15] = [
        "of", "the", "a", "an", "at", "in", "on", "for", "to", "and", "or", "with", "by", "from",
        "about",
    ];
    let left_out = |w: &str| {
        w.chars()
            .any(|c| c.is_ascii_digit() || "\"“”«»`".contains(c))
            || !deepr_evidence::prose::code_terms(w).is_empty()
    };
    let parts: Vec<String> = heading
        .split(": ")
        .filter_map(|part| {
            // A document heading's own number ("1.3.3.") is no word of its subject.
            let words: Vec<&str> = part
                .split_whitespace()
                .skip_while(|w| w.chars().all(|c| c.is_ascii_digit() || c == '.'))
                .collect();
            if !words.iter().any(|w| left_out(w)) {
                return (!words.is_empty()).then(|| words.join(" "));
            }
            let mut runs: Vec<Vec<&str>> = vec![Vec::new()];
            for word in words {
                match runs.last_mut() {
                    Some(run) if !left_out(word) => run.push(word),
                    _ => runs.push(Vec::new()),
                }
            }
            let mut best: Vec<&str> = Vec::new();
            for mut run in runs {
                while run
                    .first()
                    .is_some_and(|w| JOINING.contains(&w.to_lowercase().as_str()))
                {
                    run.remove(0);
                }
                while run
                    .last()
                    .is_some_and(|w| JOINING.contains(&w.to_lowercase().as_str()))
                {
                    run.pop();
                }
                if run.len() > best.len() {
                    best = run;
                }
            }
            let joined = best.join(" ");
            let mut chars = joined.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars).collect())
        })
        .collect();
    if parts.is_empty() {
        "Findings".into()
    } else {
        parts.join(": ")
    }
}

/// A heading that names the subquestion's subject.
pub fn heading_for(subquestion: &str) -> String {
    let line = one_line(subquestion);
    // "What does the documentation say about “Heading”?" → the heading itself; "…
    // about “Single File Commit”, regarding how SQLite guarantees atomic commits?" → the
    // subject with the aspect (a document's heading alone names no section's subject).
    if let Some((_, rest)) = line.split_once('“') {
        if let Some((inner, after)) = rest.split_once('”') {
            if let Some(subject) = after.strip_prefix(", regarding ") {
                let subject = subject.trim().trim_end_matches(['?', '.', ' ']);
                return aspect_heading(subject, inner.trim());
            }
            if !inner.trim().is_empty() {
                return clip(inner.trim());
            }
        }
    }
    let mut text = line.trim().trim_end_matches(['?', '.', ' ']).to_string();
    let lowered = text.to_lowercase();
    for prefix in [
        "what does the documentation say about ",
        "what are the limits and failure cases of ",
        "how is performance affected by ",
        "what are the alternatives to ",
        "how is it configured: ",
        "what else is known about ",
        "how does ",
        "how do ",
        "how is ",
        "how are ",
        "how can ",
        "what is ",
        "what are ",
        "what does ",
        "what do ",
        "why does ",
        "why do ",
        "why is ",
        "why are ",
        "when does ",
        "when is ",
        "which ",
        "what ",
        "how ",
        "why ",
        "when ",
    ] {
        if lowered.starts_with(prefix) {
            if prefix == "how does " {
                if let Some(rest) = text.get(prefix.len()..) {
                    text = format!("How {}", third_person(rest.trim()));
                }
                break;
            }
            if let Some(rest) = text.get(prefix.len()..) {
                let kind = match prefix {
                    "what are the limits and failure cases of " => "Limits and failure cases of ",
                    "how is performance affected by " => "Performance and ",
                    "what are the alternatives to " => "Alternatives to ",
                    "how is it configured: " => "Configuring ",
                    _ => "",
                };
                text = format!("{kind}{}", rest.trim());
            }
            break;
        }
    }
    let mut chars = text.chars();
    let capitalised: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "Findings".into(),
    };
    clip(&capitalised)
}

/// "How SQLite guarantees atomic commits: Single File Commit" — a subject and one of
/// its aspects, the subject cut at a whole word when both do not fit.
fn aspect_heading(subject: &str, aspect: &str) -> String {
    let mut chars = subject.chars();
    let subject: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => return clip(aspect),
    };
    let room = MAX_HEADING_CHARS.saturating_sub(aspect.chars().count() + 2);
    let mut kept = String::new();
    for word in outside_brackets(&subject).split_whitespace() {
        if kept.chars().count() + word.chars().count() + 1 > room {
            break;
        }
        if !kept.is_empty() {
            kept.push(' ');
        }
        kept.push_str(word);
    }
    let kept = kept.trim_end_matches([',', ';', ':', '-', '—']);
    if kept.is_empty() {
        clip(aspect)
    } else {
        clip(&format!("{kept}: {aspect}"))
    }
}

/// "the rollback journal protect a transaction" → "the rollback journal protects a
/// transaction": the verb after "how does" takes its third-person form. The verb is the
/// second word when the subject is one word (no article first), else the word before
/// the next article or preposition; left as is when that cannot be told. Without a
/// part-of-speech model this is a guess: a two-word subject without an article ("WAL
/// mode apply…") takes the `s` on its second word.
fn third_person(clause: &str) -> String {
    const ARTICLES: [&str; 4] = ["the", "a", "an", "its"];
    const JOINS: [&str; 14] = [
        "the", "a", "an", "its", "in", "of", "to", "with", "when", "on", "for", "from", "into",
        "during",
    ];
    let mut words: Vec<String> = clause.split_whitespace().map(String::from).collect();
    let first_is_article = words
        .first()
        .is_some_and(|w| ARTICLES.contains(&w.to_lowercase().as_str()));
    let verb = if !first_is_article {
        (words.len() > 1).then_some(1)
    } else {
        (2..words.len())
            .find(|&i| JOINS.contains(&words[i].to_lowercase().as_str()))
            .map(|i| i - 1)
            .filter(|&i| i >= 2)
    };
    if let Some(i) = verb {
        let w = &words[i];
        let lower = w.to_lowercase();
        let consonant_y = lower.ends_with('y')
            && !lower.ends_with("ay")
            && !lower.ends_with("ey")
            && !lower.ends_with("oy")
            && !lower.ends_with("uy");
        words[i] = if consonant_y {
            format!("{}ies", &w[..w.len() - 1])
        } else if ["s", "sh", "ch", "x", "z", "o"]
            .iter()
            .any(|e| lower.ends_with(e))
        {
            format!("{w}es")
        } else {
            format!("{w}s")
        };
    }
    words.join(" ")
}

/// A heading of at most [`MAX_HEADING_CHARS`]: a longer subject is cut at its first
/// clause — the head before a colon or the first comma ("Milk supply side: how many
/// farms supply the co-op, how much milk came in last year and …" → "Milk supply
/// side") — else at the last whole word that fits, never mid-clause when a clause fits.
fn clip(text: &str) -> String {
    if text.chars().count() <= MAX_HEADING_CHARS {
        return text.to_string();
    }
    let head = [": ", ", ", "; "]
        .iter()
        .filter_map(|separator| text.split_once(separator).map(|(head, _)| head.trim()))
        .map(outside_brackets)
        .filter(|head| head.chars().count() >= 3)
        .min_by_key(|head| head.len());
    if let Some(head) = head.filter(|h| h.chars().count() <= MAX_HEADING_CHARS) {
        return head.to_string();
    }
    let cut: String = text.chars().take(MAX_HEADING_CHARS - 1).collect();
    let cut = cut.rsplit_once(' ').map(|(head, _)| head).unwrap_or(&cut);
    outside_brackets(cut).to_string()
}

/// `text` cut before a bracket or quote it opens and does not close ("… in the
/// market (Acme" → "… in the market"): a heading is never cut inside one.
fn outside_brackets(text: &str) -> &str {
    let mut open: Vec<(char, usize)> = Vec::new();
    for (at, c) in text.char_indices() {
        match c {
            '(' | '[' | '“' | '‘' => open.push((c, at)),
            ')' | ']' | '”' | '’' => {
                let opener = match c {
                    ')' => '(',
                    ']' => '[',
                    '”' => '“',
                    _ => '‘',
                };
                if open.last().is_some_and(|(o, _)| *o == opener) {
                    open.pop();
                }
            }
            '"' => match open.last() {
                Some(('"', _)) => {
                    open.pop();
                }
                _ => open.push(('"', at)),
            },
            _ => {}
        }
    }
    match open.first() {
        Some((_, at)) => text[..*at]
            .trim_end()
            .trim_end_matches([',', ';', ':', '-', '—'])
            .trim_end(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use deepr_evidence::report::Verdict;
    use deepr_tasks::write_section::{heading_problem, Quote};
    use deepr_tasks::ModelTask;

    use super::*;

    fn claim(id: &str, text: &str, document: &str, sentence: u32, quote: &str) -> Claim {
        Claim {
            id: id.into(),
            text: text.into(),
            verdict: Verdict::Supported,
            quotes: vec![Quote {
                document: document.into(),
                sentence,
                text: quote.into(),
            }],
            stated_earlier: Vec::new(),
        }
    }

    #[test]
    fn paragraphs_follow_sources_and_nothing_is_invented() {
        let input = Input {
            topic: "t".into(),
            instructions: Vec::new(),
            documents: Vec::new(),
            subquestions: vec!["How does SQLite guarantee atomic commits?".into()],
            claims: vec![
                claim(
                    "c1",
                    "The journal is deleted at commit.",
                    "d1",
                    9,
                    "The journal is deleted at commit.",
                ),
                claim("c2", "WAL appends frames.", "d2", 1, "WAL appends frames."),
                claim(
                    "c3",
                    "The journal is written first.",
                    "d1",
                    2,
                    "The journal is written first.",
                ),
                // A claim whose text adds a number its quote lacks: its quote is used.
                claim(
                    "c4",
                    "The log holds 1000 frames.",
                    "d2",
                    5,
                    "The log holds many frames.",
                ),
                // The same sentence again: written once.
                claim("c5", "WAL appends frames.", "d2", 1, "WAL appends frames."),
                // A lone sentence from a third source joins the paragraph before it.
                claim(
                    "c6",
                    "Readers see a snapshot.",
                    "d3",
                    4,
                    "Readers see a snapshot.",
                ),
            ],
            words: 300,
        };
        let answer = WriteSection::answer(&input);
        assert_eq!(answer.heading, "How SQLite guarantees atomic commits");
        let texts: Vec<Vec<&str>> = answer
            .paragraphs
            .iter()
            .map(|p| p.sentences.iter().map(|s| s.text.as_str()).collect())
            .collect();
        assert_eq!(
            texts,
            [
                vec![
                    "The journal is written first.",
                    "The journal is deleted at commit."
                ],
                vec![
                    "WAL appends frames.",
                    "The log holds many frames.",
                    "Readers see a snapshot."
                ],
            ]
        );
        assert_eq!(WriteSection::validate(&input, &answer), Ok(()));
    }

    #[test]
    fn a_claim_an_earlier_section_states_is_left_out_but_never_every_claim() {
        let restating = |id: &str, text: &str, earlier: &[&str]| Claim {
            stated_earlier: earlier.iter().map(|s| s.to_string()).collect(),
            ..claim(id, text, "d1", 1, text)
        };
        let input = |claims: Vec<Claim>| Input {
            topic: "t".into(),
            instructions: Vec::new(),
            documents: Vec::new(),
            subquestions: vec!["What does it cost?".into()],
            claims,
            words: 300,
        };
        let written = |input: &Input| -> Vec<String> {
            WriteSection::answer(input)
                .paragraphs
                .iter()
                .flat_map(|p| p.sentences.iter().map(|s| s.text.clone()))
                .collect()
        };
        let section = input(vec![
            // Every figure stated earlier: left out.
            restating("c1", "The S5 lists at $1,890 a month.", &["$1,890"]),
            // A figure of its own as well: kept.
            restating("c2", "The S5 at $1,890 wins 61% of tenders.", &["$1,890"]),
            // No figure at all: kept.
            restating("c3", "Hospitals buy on uptime.", &[]),
        ]);
        assert_eq!(
            written(&section),
            [
                "The S5 at $1,890 wins 61% of tenders.",
                "Hospitals buy on uptime."
            ]
        );
        // A section whose every claim was stated earlier still says something.
        let all_earlier = input(vec![restating(
            "c1",
            "The S5 lists at $1,890 a month.",
            &["$1,890"],
        )]);
        assert_eq!(written(&all_earlier), ["The S5 lists at $1,890 a month."]);
    }

    #[test]
    fn a_heading_is_never_cut_inside_brackets_or_quotes() {
        assert_eq!(
            outside_brackets("How it stands in the logistics market (Acme"),
            "How it stands in the logistics market"
        );
        assert_eq!(
            outside_brackets("Pricing (list and net)"),
            "Pricing (list and net)"
        );
        assert_eq!(outside_brackets("The “Kestrel S5"), "The");
        let long = "How it is positioned against the current competitive landscape in autonomous hospital delivery (Swiftlane Robotics, MediRover and Corvid Logistics)";
        let heading = clip(long);
        assert!(!heading.contains('('), "{heading}");
    }

    #[test]
    fn headings_name_the_subject() {
        for (question, heading) in [
            (
                "What does the documentation say about “Hot Rollback Journals”?",
                "Hot Rollback Journals",
            ),
            ("what changes in WAL mode?", "Changes in WAL mode"),
            (
                "How does the rollback journal protect a transaction?",
                "How the rollback journal protects a transaction",
            ),
            (
                "What are the limits and failure cases of checkpoint?",
                "Limits and failure cases of checkpoint",
            ),
            ("", "Findings"),
            (
                "What does the documentation say about “Milk supply side: how many farms \
                 supply the co-op, how much milk came in last year and what members are \
                 being paid per litre right now” for Harrowgate Dairy Co-operative?",
                "Milk supply side",
            ),
            (
                "What does the documentation say about “People side, from headcount, hiring \
                 and attrition to leadership changes and any dependence on particular \
                 individuals”?",
                "People side",
            ),
        ] {
            assert_eq!(heading_for(question), heading);
            assert_eq!(heading_problem(&heading_for(question)), None);
        }
    }

    #[test]
    fn a_heading_loses_what_its_quotes_do_not_hold_and_still_names_a_subject() {
        for (heading, kept) in [
            (
                "The byte at offset 18 of the SQLite database file header record: File format version numbers",
                "SQLite database file header record: File format version numbers",
            ),
            ("Q1 2026 revenue and margin", "Revenue and margin"),
            ("2026: Headcount", "Headcount"),
            ("Revenue in 2026: The Board Deck", "Revenue: The Board Deck"),
            ("The 18th byte: 1.3. The Database File", "Byte: The Database File"),
            ("42", "Findings"),
        ] {
            assert_eq!(without_unheld_terms(heading), kept, "{heading}");
        }
    }
}
