//! Research memory: every finished run leaves a short summary in the state dir
//! (`memory/<run-id>.json`: topic, date, key supported claims with their sources, report
//! path). `deepr runs search QUERY` finds past runs by topic and content, and a new run
//! on a topic close to a past one mentions it.

use std::collections::BTreeSet;
use std::path::Path;

use deepr_evidence::report::{Report, Verdict};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Memory {
    pub run_id: String,
    pub topic: String,
    /// RFC 3339 UTC.
    pub date: String,
    pub report: String,
    /// Up to 8 supported claims: (claim, source locator).
    pub claims: Vec<(String, String)>,
}

fn terms(text: &str) -> BTreeSet<String> {
    deepr_evidence::terms::content_terms(text)
        .into_iter()
        .collect()
}

/// The day part (`YYYY-MM-DD`) of a stored date: the first 10 characters, cut on a
/// character boundary (the memory file is read from disk and may hold anything).
pub fn day(date: &str) -> &str {
    let end = date
        .char_indices()
        .nth(10)
        .map(|(i, _)| i)
        .unwrap_or(date.len());
    &date[..end]
}

/// Record a finished run's summary in the state dir (best effort).
pub fn remember(state_dir: &Path, report: &Report, report_path: &Path, date: String) {
    let memory = summarise(report, report_path, date);
    let dir = state_dir.join("memory");
    if std::fs::create_dir_all(&dir).is_ok() {
        if let Ok(bytes) = serde_json::to_vec_pretty(&memory) {
            let _ =
                crate::util::write_atomically(&dir.join(format!("{}.json", report.run_id)), &bytes);
        }
    }
}

/// A finished run's summary: topic, date, up to 8 supported claims with their sources.
pub fn summarise(report: &Report, report_path: &Path, date: String) -> Memory {
    let locators: std::collections::BTreeMap<&str, &str> = report
        .sources
        .iter()
        .map(|s| (s.id.as_str(), s.locator.as_str()))
        .collect();
    let claims = report
        .claims
        .iter()
        .filter(|c| c.verdict == Verdict::Supported)
        .take(8)
        .map(|c| {
            (
                c.text.clone(),
                c.citations
                    .first()
                    .and_then(|q| locators.get(q.source.as_str()))
                    .copied()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    Memory {
        run_id: report.run_id.clone(),
        topic: report.topic.clone(),
        date,
        report: report_path.display().to_string(),
        claims,
    }
}

pub fn all(state_dir: &Path) -> Vec<Memory> {
    let mut memories: Vec<Memory> = std::fs::read_dir(state_dir.join("memory"))
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
                .collect()
        })
        .unwrap_or_default();
    memories.sort_by(|a, b| b.date.cmp(&a.date).then(a.run_id.cmp(&b.run_id)));
    memories
}

/// Past runs ranked by how many of the query's content words their topic and claims
/// contain (topic words count double).
pub fn search(state_dir: &Path, query: &str) -> Vec<(f64, Memory)> {
    search_in(all(state_dir), query)
}

/// [`search`] over given memories (the fleet's, from its database).
pub fn search_in(memories: Vec<Memory>, query: &str) -> Vec<(f64, Memory)> {
    let wanted = terms(query);
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut found: Vec<(f64, Memory)> = memories
        .into_iter()
        .filter_map(|m| {
            let topic = terms(&m.topic);
            let body: BTreeSet<String> = m.claims.iter().flat_map(|(c, _)| terms(c)).collect();
            let score = wanted
                .iter()
                .map(|t| {
                    if topic.contains(t) {
                        2.0
                    } else if body.contains(t) {
                        1.0
                    } else {
                        0.0
                    }
                })
                .sum::<f64>()
                / (2.0 * wanted.len() as f64);
            (score > 0.0).then_some((score, m))
        })
        .collect();
    found.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.run_id.cmp(&b.1.run_id)));
    found
}

/// A past run whose topic is close to `topic` (Jaccard of content words ≥ 0.5).
pub fn close_to(state_dir: &Path, topic: &str) -> Option<Memory> {
    let wanted = terms(topic);
    all(state_dir).into_iter().find(|m| {
        let other = terms(&m.topic);
        let union = wanted.union(&other).count();
        union > 0 && wanted.intersection(&other).count() as f64 / union as f64 >= 0.5
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn day_cuts_on_a_character_boundary() {
        assert_eq!(super::day("2026-12-01T03:00:00Z"), "2026-12-01");
        assert_eq!(super::day("2026"), "2026");
        // Byte 10 falls inside "é": slicing bytes would panic.
        assert_eq!(super::day("2026-12-0é-rest"), "2026-12-0é");
        assert_eq!(super::day(""), "");
    }
}
