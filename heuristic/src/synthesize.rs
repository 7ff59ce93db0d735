//! Synthesize: the answer-first summary. For each clause of the topic ("how does X…",
//! "and what changes in Y…") one claim comes first: one holding the clause's exact
//! terms ("offset 18"); else the claim that answers the clause's ask ("how …" wants a
//! mechanism: "… is how X implements …", "the method by which …"; "what changes …"
//! wants a difference: "instead", "unlike", "no longer") and shares the most of its
//! content words, in the section written for that clause (the one whose heading shares the most of
//! them: a section's claims stand in its ranked order, so its first answers before a
//! side remark elsewhere that merely names the clause's words); else the claim sharing
//! the most of them anywhere. Then the claims most related to the whole topic, at most
//! two per section, up to [`SUMMARY_SENTENCES`]. Each sentence is the claim's text when it
//! stands on its quotes, else its first quote — nothing is invented.

use std::collections::BTreeSet;

use deepr_evidence::normalise;
use deepr_evidence::prose::{check_sentence, CitedClaim};
use deepr_evidence::terms::content_terms;
use deepr_tasks::one_line;
use deepr_tasks::synthesize::{Answer, AnswerPoint, Claim, Input, Synthesize};

use crate::text::with_final_stop;
use crate::Heuristic;
use deepr_tasks::brief::topic_clauses;

/// Sentences in the summary the offline writer writes.
pub const SUMMARY_SENTENCES: usize = 4;
/// Most summary sentences from one section.
const PER_SECTION: usize = 2;

impl Heuristic for Synthesize {
    /// 2: answer-first — sentences chosen by the topic's clauses, not one per section.
    /// 3: a brief's parts are its clauses; a sentence without a final stop gets one.
    /// 4: a claim holding a clause's exact terms ("offset 18") answers it first.
    /// 5: else the clause is answered from the section written for it first, by a
    /// claim that answers its ask (a mechanism, a difference).
    /// 6: a sentence that names "the mechanism" states none.
    const VERSION: u32 = 6;

    fn answer(input: &Input) -> Answer {
        let claims: Vec<(usize, &Claim)> = input
            .subquestions
            .iter()
            .enumerate()
            .flat_map(|(section, g)| g.claims.iter().map(move |c| (section, c)))
            .collect();
        let claim_terms: Vec<BTreeSet<String>> = claims
            .iter()
            .map(|(_, c)| content_terms(&c.text).into_iter().collect())
            .collect();
        let shares =
            |i: usize, terms: &BTreeSet<String>| claim_terms[i].intersection(terms).count();
        let topic_terms: BTreeSet<String> = content_terms(&input.topic).into_iter().collect();
        let mut order: Vec<usize> = Vec::new();
        // A brief's parts are the clauses it asks about; a question's are its own.
        let brief = deepr_tasks::brief::parse_brief(&input.topic);
        let clauses = if brief.parts.len() >= 2 {
            brief.parts
        } else {
            topic_clauses(&input.topic)
        };
        let heading_terms: Vec<BTreeSet<String>> = input
            .subquestions
            .iter()
            .map(|g| content_terms(&g.text).into_iter().collect())
            .collect();
        for clause in clauses {
            let clause_terms: BTreeSet<String> = content_terms(&clause).into_iter().collect();
            // A clause's exact terms ("offset 18") pick the claim that holds them first.
            let exact = deepr_evidence::terms::exact_terms(&clause);
            let holds = |i: usize| deepr_evidence::terms::holds_exact(&claims[i].1.text, &exact);
            let ask = Ask::of(&clause);
            let answers = |i: usize| ask.answered_by(&claims[i].1.text);
            // The section written for the clause: its heading shares the most of it.
            let home = (0..input.subquestions.len())
                .map(|s| (heading_terms[s].intersection(&clause_terms).count(), s))
                .filter(|(shared, _)| *shared > 0)
                .max_by_key(|&(shared, s)| (shared, std::cmp::Reverse(s)))
                .map(|(_, s)| s);
            let best_in = |in_home: bool| {
                (0..claims.len())
                    .filter(|i| !order.contains(i) && shares(*i, &clause_terms) > 0)
                    .filter(|&i| !in_home || Some(claims[i].0) == home)
                    .max_by_key(|&i| {
                        (
                            holds(i),
                            answers(i),
                            shares(i, &clause_terms),
                            shares(i, &topic_terms),
                            std::cmp::Reverse(i),
                        )
                    })
            };
            let exact_anywhere = best_in(false).filter(|&i| holds(i));
            if let Some(i) = exact_anywhere
                .or_else(|| best_in(true))
                .or_else(|| best_in(false))
            {
                order.push(i);
            }
        }
        let mut rest: Vec<usize> = (0..claims.len()).filter(|i| !order.contains(i)).collect();
        rest.sort_by_key(|&i| (std::cmp::Reverse(shares(i, &topic_terms)), i));
        order.extend(rest);

        Answer {
            summary: summary_of(&claims, order, input.subquestions.len()),
        }
    }
}

/// The summary's sentences, claims taken in `order`: at most [`SUMMARY_SENTENCES`], at
/// most [`PER_SECTION`] from one of `sections`, each the claim's text when it stands on
/// its quotes, else its first quote, never one sentence twice.
fn summary_of(claims: &[(usize, &Claim)], order: Vec<usize>, sections: usize) -> Vec<AnswerPoint> {
    let mut summary = Vec::new();
    let mut written: BTreeSet<String> = BTreeSet::new();
    let mut per_section = vec![0usize; sections];
    for i in order {
        if summary.len() >= SUMMARY_SENTENCES {
            break;
        }
        let (section, claim) = claims[i];
        if per_section[section] >= PER_SECTION {
            continue;
        }
        let ids = vec![claim.id.clone()];
        let lookup = |_: &str| {
            Some(CitedClaim {
                verdict: claim.verdict,
                quotes: claim.quotes.clone(),
                sources: claim.sources.clone(),
            })
        };
        let text = one_line(&claim.text);
        let text = if check_sentence(&text, &ids, lookup).is_ok() {
            text
        } else if let Some(quote) = claim.quotes.first() {
            one_line(quote)
        } else {
            continue;
        };
        let text = with_final_stop(text);
        if written.insert(normalise(&text)) {
            per_section[section] += 1;
            summary.push(AnswerPoint {
                text,
                claim_ids: ids,
            });
        }
    }
    summary
}

/// What a clause asks for, as far as its first words tell.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ask {
    /// "How does …", "how is …": a mechanism.
    Mechanism,
    /// "What changes …", "how does … differ": a difference.
    Difference,
    Other,
}

impl Ask {
    fn of(clause: &str) -> Self {
        let lower = clause.trim().to_lowercase();
        let words: Vec<&str> = lower.split_whitespace().collect();
        let differ = words.iter().any(|w| {
            [
                "changes",
                "change",
                "changed",
                "differ",
                "differs",
                "difference",
                "differences",
            ]
            .contains(&w.trim_matches(|c: char| !c.is_alphanumeric()))
        });
        let first = words
            .iter()
            .find(|w| !["and", "or", "but", "so"].contains(w))
            .copied()
            .unwrap_or("");
        match first {
            "what" | "how" | "which" if differ => Self::Difference,
            "how" => Self::Mechanism,
            _ => Self::Other,
        }
    }

    /// Whether `text` states what this ask wants: a mechanism names how or by what
    /// something is done; a difference says what is instead, unlike or no longer.
    fn answered_by(self, text: &str) -> bool {
        let lower = format!(" {} ", text.to_lowercase());
        let markers: &[&str] = match self {
            Self::Mechanism => &[
                " is how ",
                " by which ",
                " by means of ",
                " method ",
                " implements ",
                " implemented ",
                " ensures ",
                " works by ",
                " relies on ",
            ],
            Self::Difference => &[
                " instead ",
                " unlike ",
                " rather than ",
                " no longer ",
                " whereas ",
                " differs ",
                " different ",
                " are not ",
                " is not ",
            ],
            Self::Other => &[],
        };
        markers.iter().any(|m| lower.contains(m))
    }
}

#[cfg(test)]
mod tests {
    use deepr_evidence::report::Verdict;
    use deepr_tasks::synthesize::Group;

    use super::*;

    fn claim(id: &str, text: &str) -> Claim {
        Claim {
            id: id.into(),
            text: text.into(),
            verdict: Verdict::Supported,
            quotes: vec![text.into()],
            sources: Vec::new(),
        }
    }

    #[test]
    fn each_clause_of_the_topic_is_answered_first() {
        let input = Input {
            topic: "How does SQLite guarantee atomic commits, and what changes in WAL mode?".into(),
            instructions: Vec::new(),
            subquestions: vec![
                Group {
                    id: "q1".into(),
                    text: "Locking".into(),
                    claims: vec![
                        claim("q1-c1", "A reserved lock is taken before writing."),
                        claim(
                            "q1-c2",
                            "Atomic commits rely on the rollback journal being synced.",
                        ),
                    ],
                },
                Group {
                    id: "q2".into(),
                    text: "WAL".into(),
                    claims: vec![claim(
                        "q2-c1",
                        "In WAL mode, changes are appended to the write-ahead log.",
                    )],
                },
            ],
            conflicts: vec![],
        };
        let answer = Synthesize::answer(&input);
        let ids: Vec<&str> = answer
            .summary
            .iter()
            .map(|p| p.claim_ids[0].as_str())
            .collect();
        assert_eq!(ids, ["q1-c2", "q2-c1", "q1-c1"]);
    }

    #[test]
    fn a_clause_is_answered_from_the_section_written_for_it() {
        let input = Input {
            topic: "How does SQLite guarantee atomic commits, and what changes in WAL mode?".into(),
            instructions: Vec::new(),
            subquestions: vec![
                Group {
                    id: "q1".into(),
                    text: "How SQLite guarantees atomic commits".into(),
                    claims: vec![claim(
                        "q1-c1",
                        "A hot journal is rolled back when the database is next opened, which is how SQLite makes a commit atomic.",
                    )],
                },
                Group {
                    id: "q2".into(),
                    text: "Journal modes".into(),
                    claims: vec![claim(
                        "q2-c1",
                        "The OFF journal mode disables the atomic commit capabilities of SQLite.",
                    )],
                },
                Group {
                    id: "q3".into(),
                    text: "Changes in WAL mode".into(),
                    claims: vec![claim(
                        "q3-c1",
                        "In WAL mode, changes are appended to the write-ahead log.",
                    )],
                },
            ],
            conflicts: vec![],
        };
        let answer = Synthesize::answer(&input);
        let ids: Vec<&str> = answer
            .summary
            .iter()
            .map(|p| p.claim_ids[0].as_str())
            .collect();
        // The side remark shares as many of the clause's words, and more of the
        // topic's ("atomic commit capabilities"), but stands in another section.
        assert_eq!(ids[..2], ["q1-c1", "q3-c1"]);
    }

    #[test]
    fn a_how_clause_is_answered_by_a_mechanism_first() {
        let input = Input {
            topic: "How does SQLite guarantee atomic commits, and what changes in WAL mode?".into(),
            instructions: Vec::new(),
            subquestions: vec![
                Group {
                    id: "q1".into(),
                    text: "How SQLite guarantees atomic commits".into(),
                    claims: vec![
                        claim("q1-c1", "The OFF journal mode disables the atomic commit capabilities of SQLite."),
                        claim("q1-c0", "Someone discovers a failure mode for the atomic commit mechanism in SQLite."),
                        claim("q1-c2", "The default method by which SQLite implements atomic commit is a rollback journal."),
                    ],
                },
                Group {
                    id: "q2".into(),
                    text: "Changes in WAL mode".into(),
                    claims: vec![
                        claim("q2-c1", "WAL mode changes the file format version numbers to 2."),
                        claim("q2-c2", "In WAL mode, changes are appended to a log instead of the database file."),
                    ],
                },
            ],
            conflicts: vec![],
        };
        let answer = Synthesize::answer(&input);
        let ids: Vec<&str> = answer
            .summary
            .iter()
            .map(|p| p.claim_ids[0].as_str())
            .collect();
        assert_eq!(ids[..2], ["q1-c2", "q2-c2"]);
        assert!(Ask::of("and what changes in WAL mode") == Ask::Difference);
        assert!(Ask::of("How does SQLite guarantee atomic commits") == Ask::Mechanism);
        assert!(Ask::of("Which company leads the Series C") == Ask::Other);
    }
}
