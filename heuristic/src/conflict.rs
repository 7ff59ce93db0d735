//! Conflict: pairs of claims from different sources about the same subject (shared
//! content words) that give disjoint numbers, or where exactly one is negated.

use std::collections::BTreeSet;

use deepr_evidence::terms::{content_terms, is_stop_word, numbers, words, NEGATIONS};
use deepr_tasks::conflict::{Answer, AnswerConflict, ConflictDetect, Input, MAX_CONFLICTS};

use crate::text::jaccard;
use crate::Heuristic;

fn negated(text: &str) -> bool {
    words(text).iter().any(|w| NEGATIONS.contains(&w.as_str()))
}

/// Content terms that are not bare numbers.
fn subject_terms(text: &str) -> BTreeSet<String> {
    content_terms(text)
        .into_iter()
        .filter(|t| {
            !t.chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
        })
        .collect()
}

/// What a number is, as written: a release ("3.7.0", two dots or more) or a quantity
/// (whole or decimal: "2.5 %" and "3 %" may well disagree). A release and a quantity
/// count different things ("version numbers back to 1" against "SQLite version
/// 3.7.0"): they never disagree.
fn kind(number: &str) -> usize {
    usize::from(number.matches('.').count() >= 2)
}

/// Words that are neither stop words nor numbers, in order.
fn plain_words(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|w| !is_stop_word(w) && w.chars().any(char::is_alphabetic))
        .collect()
}

/// One measure for one period stated with different values by two claims (a sheet
/// row's `Breach cost: $1.2M` and an email's "≈$2M" for the same quarter): the
/// measure's words, the period, and each value as written.
fn measured_disagreement(a: &str, b: &str) -> Option<(String, String, String, String)> {
    let (amounts_a, amounts_b) = (crate::measures::amounts(a), crate::measures::amounts(b));
    for x in &amounts_a {
        for y in &amounts_b {
            if crate::measures::disagree(x, y) {
                let measure = x.measure.iter().cloned().collect::<Vec<_>>().join(" ");
                let period = x
                    .period
                    .clone()
                    .unwrap_or_default()
                    .to_uppercase()
                    .replace('-', " ");
                return Some((measure, period, x.written.clone(), y.written.clone()));
            }
        }
    }
    None
}

impl Heuristic for ConflictDetect {
    /// 2: numbers compare canonically ("1,000" = "1000").
    /// 3: one measure for one period with different amounts (a sheet row and an
    /// email), found by measure and period rather than word overlap.
    /// 4: a release number and a quantity never disagree.
    const VERSION: u32 = 4;

    fn answer(input: &Input) -> Answer {
        let claims = &input.claims;
        let mut found: Vec<(f64, AnswerConflict)> = Vec::new();
        let mut seen_pairs: BTreeSet<(&str, &str)> = BTreeSet::new();
        for (i, a) in claims.iter().enumerate() {
            for b in claims.iter().skip(i + 1) {
                if a.source == b.source {
                    continue; // one source cannot disagree with itself here
                }
                let (ta, tb) = (subject_terms(&a.text), subject_terms(&b.text));
                let shared_count = ta.intersection(&tb).count();
                let plain_b = plain_words(&b.text);
                let shared: Vec<String> = plain_words(&a.text)
                    .into_iter()
                    .filter(|w| plain_b.contains(w))
                    .collect();
                let similarity = jaccard(&ta, &tb);
                let (na, nb) = (numbers(&a.text), numbers(&b.text));
                let numeric = !na.is_empty()
                    && !nb.is_empty()
                    && na.iter().all(|n| !nb.contains(n))
                    && na.iter().any(|x| nb.iter().any(|y| kind(x) == kind(y)))
                    && shared_count >= 3
                    && similarity >= 0.4;
                let negation =
                    negated(&a.text) != negated(&b.text) && shared_count >= 3 && similarity >= 0.5;
                let pair = if a.text <= b.text {
                    (a.text.as_str(), b.text.as_str())
                } else {
                    (b.text.as_str(), a.text.as_str())
                };
                let measured = if numeric || negation {
                    None
                } else {
                    measured_disagreement(&a.text, &b.text)
                };
                if let Some((measure, period, va, vb)) = measured {
                    if seen_pairs.insert(pair) {
                        found.push((
                            similarity,
                            AnswerConflict {
                                claim_ids: vec![a.id.clone(), b.id.clone()],
                                summary: format!(
                                    "Sources give different values for {measure} in {period}: {} says {va}; {} says {vb}.",
                                    a.title, b.title
                                ),
                            },
                        ));
                    }
                    continue;
                }
                if (numeric || negation) && seen_pairs.insert(pair) {
                    let subject = shared
                        .iter()
                        .take(4)
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                        .join(", ");
                    let summary = if numeric {
                        format!(
                            "Sources give different numbers about {subject}: {} says {}; {} says {}.",
                            a.title,
                            na.join(", "),
                            b.title,
                            nb.join(", ")
                        )
                    } else {
                        format!(
                            "Sources disagree about {subject}: one affirms what the other denies ({} vs {}).",
                            a.title, b.title
                        )
                    };
                    found.push((
                        similarity,
                        AnswerConflict {
                            claim_ids: vec![a.id.clone(), b.id.clone()],
                            summary,
                        },
                    ));
                }
            }
        }
        // Strongest first; ties by the IDs as JSON (the order answers always had).
        found.sort_by(|x, y| {
            y.0.total_cmp(&x.0).then_with(|| {
                serde_json::to_string(&x.1.claim_ids)
                    .unwrap_or_default()
                    .cmp(&serde_json::to_string(&y.1.claim_ids).unwrap_or_default())
            })
        });
        Answer {
            conflicts: found
                .into_iter()
                .take(MAX_CONFLICTS)
                .map(|(_, c)| c)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use deepr_tasks::conflict::Claim;

    use super::*;

    fn claim(id: &str, source: &str, text: &str) -> Claim {
        Claim {
            id: id.into(),
            subquestion: "q1".into(),
            verdict: "supported".into(),
            source: source.into(),
            title: source.to_uppercase(),
            text: text.into(),
        }
    }

    #[test]
    fn different_numbers_about_one_subject_conflict() {
        let input = Input {
            claims: vec![
                claim(
                    "q1-c1",
                    "a",
                    "The default page size of the database file is 4096 bytes.",
                ),
                claim(
                    "q1-c2",
                    "b",
                    "The default page size of the database file is 1024 bytes.",
                ),
                claim(
                    "q1-c3",
                    "c",
                    "WAL mode uses a separate write-ahead log file.",
                ),
                // A decimal and a whole number of one measure do.
                claim(
                    "q1-c5",
                    "e",
                    "The default page size of the database file is 4.5 kilobytes in total.",
                ),
                // A release is no page size: different kinds of number never disagree.
                claim(
                    "q1-c4",
                    "d",
                    "The default page size of the database file changed in version 3.12.0.",
                ),
            ],
        };
        let answer = ConflictDetect::answer(&input);
        let pairs: Vec<&[String]> = answer.conflicts.iter().map(|c| &c.claim_ids[..]).collect();
        assert_eq!(pairs.len(), 3, "{pairs:?}");
        assert!(pairs.contains(&&["q1-c1".to_string(), "q1-c2".to_string()][..]));
        assert!(pairs.iter().any(|p| p.contains(&"q1-c5".to_string())));
        assert!(!pairs.iter().any(|p| p.contains(&"q1-c4".to_string())));
    }

    #[test]
    fn negation_conflicts_and_same_source_does_not() {
        let input = Input {
            claims: vec![
                claim("a", "x", "Readers block writers in rollback journal mode."),
                claim(
                    "b",
                    "y",
                    "Readers do not block writers in rollback journal mode.",
                ),
                claim(
                    "c",
                    "y",
                    "Readers never block writers in rollback journal mode.",
                ),
            ],
        };
        let pairs: Vec<Vec<String>> = ConflictDetect::answer(&input)
            .conflicts
            .into_iter()
            .map(|c| c.claim_ids)
            .collect();
        assert!(pairs.contains(&vec!["a".to_string(), "b".to_string()]));
        assert!(!pairs.contains(&vec!["b".to_string(), "c".to_string()]));
    }

    #[test]
    fn a_sheet_row_and_an_email_disagree_on_one_quarters_amount() {
        let input =
            Input {
                claims: vec![
                claim("q1-c1", "sheet", "Quarter: Q3 2026 · Breach cost: $1.2M · Incidents: 3"),
                claim(
                    "q2-c1",
                    "mail",
                    "All in, the Q3 2026 breach cost us roughly ≈$2M once legal fees are counted.",
                ),
            ],
            };
        let answer = ConflictDetect::answer(&input);
        assert_eq!(answer.conflicts.len(), 1, "{:?}", answer.conflicts);
        assert!(
            answer.conflicts[0].summary.contains("$1.2M")
                && answer.conflicts[0].summary.contains("$2M"),
            "{}",
            answer.conflicts[0].summary
        );
    }
}
