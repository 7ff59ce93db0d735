//! Synthesize: the first not-yet-used claim of each subquestion, in plan order, as a
//! summary point.

use deepr_tasks::synthesize::{Answer, AnswerPoint, Input, Synthesize, MAX_POINTS};

use crate::Heuristic;

impl Heuristic for Synthesize {
    const VERSION: u32 = 1;

    fn answer(input: &Input) -> Answer {
        let mut summary = Vec::new();
        let mut used: Vec<&str> = Vec::new();
        for group in &input.subquestions {
            if let Some(claim) = group
                .claims
                .iter()
                .find(|c| !used.contains(&c.text.as_str()))
            {
                used.push(&claim.text);
                let text = &claim.text;
                let short: String = if text.chars().count() > 220 {
                    let cut: String = text.chars().take(220).collect();
                    format!(
                        "{}…",
                        cut.rsplit_once(' ').map(|(head, _)| head).unwrap_or(&cut)
                    )
                } else {
                    text.to_string()
                };
                summary.push(AnswerPoint {
                    text: short,
                    claim_ids: vec![claim.id.clone()],
                });
            }
            if summary.len() >= MAX_POINTS {
                break;
            }
        }
        Answer { summary }
    }
}
