//! Triage: the offline rule ([`deepr_tasks::triage::off_topic`]) as the model's answer —
//! a document whose title names office paperwork and nothing the brief asks about is
//! off-topic; every other document is in scope (the heuristic has no sense of
//! "background").

use deepr_tasks::brief::parse_brief;
use deepr_tasks::triage::{off_topic, Answer, Input, Scope, Triage, Verdict};

use crate::Heuristic;

impl Heuristic for Triage {
    /// 2: release notes and change logs are paperwork unless the brief asks about
    /// releases; a brief's "note" names no subject.
    const VERSION: u32 = 2;

    fn answer(input: &Input) -> Answer {
        let brief = parse_brief(&input.topic);
        let verdicts = input
            .documents
            .iter()
            .map(|doc| match off_topic(&doc.title, &doc.headings, &brief) {
                Some(reason) => Verdict {
                    id: doc.id.clone(),
                    scope: Scope::OffTopic,
                    reason,
                },
                None => Verdict {
                    id: doc.id.clone(),
                    scope: Scope::InScope,
                    reason: "its title names no office paperwork, or names what the brief asks"
                        .to_string(),
                },
            })
            .collect();
        Answer { verdicts }
    }
}
