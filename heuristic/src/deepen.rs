//! Deepen: a sharper follow-up built from each gap's own key terms.

use deepr_evidence::terms::{is_stop_word, words};
use deepr_tasks::deepen::{Answer, AnswerFollowup, Deepen, Input};

use crate::Heuristic;

impl Heuristic for Deepen {
    const VERSION: u32 = 1;

    fn answer(input: &Input) -> Answer {
        let followups = input
            .gaps
            .iter()
            .map(|gap| {
                let key: Vec<String> = words(&gap.text)
                    .into_iter()
                    .filter(|w| !is_stop_word(w) && w.chars().any(char::is_alphabetic))
                    .take(6)
                    .collect();
                let question = if gap.why.starts_with("sources disagree") {
                    format!(
                        "Which figure is correct for {}, and under what conditions does each hold?",
                        key.join(" ")
                    )
                } else {
                    format!(
                        "What specific mechanisms, numbers or conditions describe {}?",
                        key.join(" ")
                    )
                };
                AnswerFollowup {
                    gap_id: gap.id.clone(),
                    question,
                }
            })
            .collect();
        Answer { followups }
    }
}
