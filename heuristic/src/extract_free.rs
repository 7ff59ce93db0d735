//! Free-quote extract: informative sentences that share words with the subquestion,
//! copied exactly from the document text shown.

use std::collections::BTreeSet;

use deepr_evidence::terms::content_terms;
use deepr_tasks::extract_free::{Answer, AnswerClaim, ExtractFree, Input};

use crate::Heuristic;

impl Heuristic for ExtractFree {
    const VERSION: u32 = 1;

    fn answer(input: &Input) -> Answer {
        let question: BTreeSet<String> = content_terms(&input.subquestion).into_iter().collect();
        let mut scored: Vec<(usize, usize, &str, &str)> = Vec::new();
        for (order, doc) in input.documents.iter().enumerate() {
            for sentence in deepr_evidence::split_sentences(&doc.text) {
                let Some(body) = sentence.text(&doc.text) else {
                    continue;
                };
                if !(30..=400).contains(&body.chars().count()) || !body.ends_with(['.', '!', '?']) {
                    continue;
                }
                let overlap = content_terms(body)
                    .iter()
                    .filter(|t| question.contains(*t))
                    .count();
                if overlap > 0 {
                    scored.push((overlap, order, &doc.id, body));
                }
            }
        }
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut seen = BTreeSet::new();
        let claims = scored
            .into_iter()
            .filter(|(_, _, _, body)| seen.insert(*body))
            .take(input.max_claims)
            .map(|(_, _, id, body)| AnswerClaim {
                text: body.split_whitespace().collect::<Vec<_>>().join(" "),
                quote: body.to_string(),
                document: id.to_string(),
            })
            .collect();
        Answer { claims }
    }
}
