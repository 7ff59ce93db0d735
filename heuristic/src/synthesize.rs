//! Synthesize: the answer-first summary. For each clause of the topic ("how does X…",
//! "and what changes in Y…") the claim that shares the most of that clause's content
//! words comes first, then the claims most related to the whole topic, at most two
//! per section, up to [`SUMMARY_SENTENCES`]. Each sentence is the claim's text when it
//! stands on its quotes, else its first quote — nothing is invented.

use std::collections::BTreeSet;

use deepr_evidence::normalise;
use deepr_evidence::prose::{check_sentence, CitedClaim};
use deepr_evidence::terms::content_terms;
use deepr_tasks::one_line;
use deepr_tasks::synthesize::{Answer, AnswerPoint, Claim, Input, Synthesize};

use crate::decompose::topic_clauses;
use crate::text::with_final_stop;
use crate::Heuristic;

/// Sentences in the summary the offline writer writes.
pub const SUMMARY_SENTENCES: usize = 4;
/// Most summary sentences from one section.
const PER_SECTION: usize = 2;

impl Heuristic for Synthesize {
    /// 2: answer-first — sentences chosen by the topic's clauses, not one per section.
    /// 3: a brief's parts are its clauses; a sentence without a final stop gets one.
    /// 4: a claim holding a clause's exact terms ("offset 18") answers it first.
    const VERSION: u32 = 4;

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
        for clause in clauses {
            let clause_terms: BTreeSet<String> = content_terms(&clause).into_iter().collect();
            // A clause's exact terms ("offset 18") pick the claim that holds them first.
            let exact = deepr_evidence::terms::exact_terms(&clause);
            let holds = |i: usize| deepr_evidence::terms::holds_exact(&claims[i].1.text, &exact);
            let best = (0..claims.len())
                .filter(|i| !order.contains(i) && shares(*i, &clause_terms) > 0)
                .max_by_key(|&i| {
                    (
                        holds(i),
                        shares(i, &clause_terms),
                        shares(i, &topic_terms),
                        std::cmp::Reverse(i),
                    )
                });
            if let Some(i) = best {
                order.push(i);
            }
        }
        let mut rest: Vec<usize> = (0..claims.len()).filter(|i| !order.contains(i)).collect();
        rest.sort_by_key(|&i| (std::cmp::Reverse(shares(i, &topic_terms)), i));
        order.extend(rest);

        let mut summary = Vec::new();
        let mut written: BTreeSet<String> = BTreeSet::new();
        let mut per_section = vec![0usize; input.subquestions.len()];
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
        Answer { summary }
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
}
