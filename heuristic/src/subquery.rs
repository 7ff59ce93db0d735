//! Subquery: the subquestion's keywords; a quoted heading as its own query; the
//! keywords plus the topic's keywords.

use deepr_evidence::terms::{is_stop_word, words};
use deepr_tasks::subquery::{Answer, Input, Subquery};

use crate::Heuristic;

fn keywords(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|w| !is_stop_word(w) && w.chars().any(char::is_alphanumeric))
        .collect()
}

impl Heuristic for Subquery {
    const VERSION: u32 = 1;

    fn answer(input: &Input) -> Answer {
        let subquestion = input.subquestion.as_str();
        let own = keywords(subquestion);
        let mut queries = vec![own.join(" ")];
        if let (Some(start), Some(end)) = (subquestion.find('“'), subquestion.find('”')) {
            if end > start {
                let heading = keywords(&subquestion[start..end]).join(" ");
                if !heading.is_empty() {
                    queries.push(heading);
                }
            }
        }
        let extra: Vec<String> = keywords(&input.topic)
            .into_iter()
            .filter(|w| !own.contains(w))
            .take(3)
            .collect();
        if !extra.is_empty() && queries.len() < 3 {
            queries.push(format!(
                "{} {}",
                own.iter().take(4).cloned().collect::<Vec<_>>().join(" "),
                extra.join(" ")
            ));
        }
        queries.retain(|q| !q.trim().is_empty());
        queries.dedup();
        if queries.is_empty() {
            queries.push(subquestion.to_string());
        }
        Answer {
            queries,
            ranking_question: subquestion.to_string(),
        }
    }
}
