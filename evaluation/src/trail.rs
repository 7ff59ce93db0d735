//! Where a fact was lost. For each value a report does not state, the furthest stage of
//! the run whose texts hold it: the corpus's archived text, a document fetched for a
//! subquestion, a candidate unit ranked for an extractor, an extracted claim's quotes.
//! A value the corpus's text does not hold was never read (a format the reader missed,
//! or a value the facts file spells unlike its document). The figure says which part
//! of the pipeline to improve for a share: retrieval, ranking, extraction or writing.

use std::path::Path;

use deepr_orchestrator::store::CheckpointStore;
use deepr_orchestrator::TextArchive;
use deepr_stages::types::{ExtractOut, FetchOut, ScoreOut};
use serde::{Deserialize, Serialize};

/// How far a value travelled through a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reach {
    /// In no archived text of the corpus.
    Unread,
    /// In the corpus's text, but no subquestion fetched its document.
    Indexed,
    /// In a fetched document, but never ranked as a candidate unit.
    Fetched,
    /// In a subquestion's ranked candidates (what a model extractor is shown; the
    /// offline extractor reads its partitioned share of them), but in no extracted
    /// claim's quotes.
    Ranked,
    /// In a claim's quotes, but not in the article's prose.
    Claimed,
}

impl Reach {
    /// What `bench.md` says of a value lost at this stage.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unread => "not in the corpus's text",
            Self::Indexed => "never fetched",
            Self::Fetched => "fetched, never a candidate",
            Self::Ranked => "a candidate, never extracted",
            Self::Claimed => "extracted, not written",
        }
    }
}

/// The texts of one run, stage by stage, each folded as values are compared.
#[derive(Clone, Debug, Default)]
pub struct Trail {
    corpus: String,
    fetched: String,
    ranked: String,
    claimed: String,
}

impl Trail {
    /// A trail from each stage's texts (the corpus's, the fetched documents', the
    /// candidate units', the claims' quotes).
    pub fn new<'t>(
        corpus: impl IntoIterator<Item = &'t str>,
        fetched: impl IntoIterator<Item = &'t str>,
        ranked: impl IntoIterator<Item = &'t str>,
        claimed: impl IntoIterator<Item = &'t str>,
    ) -> Self {
        let join = |texts: &mut dyn Iterator<Item = &'t str>| {
            texts
                .map(crate::values::folded)
                .collect::<Vec<_>>()
                .join("\n\n")
        };
        Self {
            corpus: join(&mut corpus.into_iter()),
            fetched: join(&mut fetched.into_iter()),
            ranked: join(&mut ranked.into_iter()),
            claimed: join(&mut claimed.into_iter()),
        }
    }

    /// The furthest stage whose texts state `value` (compared as the prose is).
    pub fn reach(&self, value: &str) -> Reach {
        let value = crate::values::folded(value);
        let holds = |text: &str| crate::values::states(text, &value);
        if holds(&self.claimed) {
            Reach::Claimed
        } else if holds(&self.ranked) {
            Reach::Ranked
        } else if holds(&self.fetched) {
            Reach::Fetched
        } else if holds(&self.corpus) {
            Reach::Indexed
        } else {
            Reach::Unread
        }
    }
}

/// The trail of run `run_id` in `state_dir`: its fetch, score and extract nodes read
/// from its checkpoint store, their texts from the archive; `corpus`: the corpus's
/// archived texts.
pub fn read_trail(
    state_dir: &Path,
    run_id: &str,
    corpus: &[&str],
    archive: &dyn TextArchive,
) -> Result<Trail, String> {
    let dir = deepr_session::record::run_dir(state_dir, run_id);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let store = runtime
        .block_on(deepr_session::record::open_store(&dir, run_id))
        .map_err(|e| e.to_string())?;
    let nodes = store.finished_nodes().map_err(|e| e.to_string())?;
    let output = |id: &str| -> Result<serde_json::Value, String> {
        let record = store.get_node(id).map_err(|e| e.to_string())?;
        record
            .map(|r| r.output)
            .ok_or_else(|| format!("node {id} is listed but not stored"))
    };
    let parse = |id: &str, e: serde_json::Error| format!("node {id}: {e}");
    let mut fetched_docs = std::collections::BTreeSet::new();
    let (mut ranked, mut claimed) = (Vec::new(), Vec::new());
    for id in &nodes {
        if id.ends_with("/fetch") {
            let out: FetchOut = serde_json::from_value(output(id)?).map_err(|e| parse(id, e))?;
            // A document several subquestions fetched is read once.
            fetched_docs.extend(out.docs.into_iter().map(|(doc, _)| doc.content_sha256));
        } else if id.ends_with("/score") {
            let out: ScoreOut = serde_json::from_value(output(id)?).map_err(|e| parse(id, e))?;
            for c in out.candidates {
                ranked.extend(quote(
                    archive,
                    &c.content_sha256,
                    c.sentence,
                    c.sentence_end,
                ));
            }
        } else if id.ends_with("/extract") {
            let out: ExtractOut = serde_json::from_value(output(id)?).map_err(|e| parse(id, e))?;
            for r in out.claims.iter().flat_map(|c| &c.citations) {
                claimed.extend(quote(
                    archive,
                    &r.content_sha256,
                    r.sentence,
                    r.sentence_end,
                ));
            }
        }
    }
    let fetched: Vec<String> = fetched_docs
        .iter()
        .filter_map(|sha| archive.get(sha).map(|t| t.text.to_string()))
        .collect();
    Ok(Trail::new(
        corpus.iter().copied(),
        fetched.iter().map(String::as_str),
        ranked.iter().map(String::as_str),
        claimed.iter().map(String::as_str),
    ))
}

fn quote(archive: &dyn TextArchive, sha: &str, first: u32, last: Option<u32>) -> Option<String> {
    archive
        .get(sha)
        .and_then(|t| t.quote(first, last).map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_placed_at_the_furthest_stage_that_holds_it() {
        let trail = Trail::new(
            [
                "Gross margin: 42.5% for Q1. Headcount: 318.",
                "Lead time: 26 weeks",
            ],
            ["Gross margin: 42.5% for Q1. Headcount: 318."],
            ["Gross margin: 42.5% for Q1."],
            ["Gross margin: 42.5%"],
        );
        assert_eq!(trail.reach("42.5%"), Reach::Claimed);
        assert_eq!(trail.reach("318"), Reach::Fetched);
        assert_eq!(trail.reach("26 weeks"), Reach::Indexed);
        assert_eq!(trail.reach("$71.3M"), Reach::Unread);
        // Compared as prose is: case-folded, never inside a longer number.
        assert_eq!(trail.reach("GROSS MARGIN"), Reach::Claimed);
        assert_eq!(trail.reach("2.5%"), Reach::Unread);
        assert_eq!(Trail::default().reach("x"), Reach::Unread);
    }
}
