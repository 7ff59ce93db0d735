//! Re-ranking a subquestion's best lexical candidates by meaning, with the local
//! sentence-embedding model: cosine similarity to the topic mixed with the lexical
//! weight. An embedding failure is recorded and the lexical order kept.

use std::collections::BTreeMap;

use deepr_orchestrator::{SentenceEmbedder, TextArchive};

use crate::types::Rerank;

/// Lexical candidates the embedding model re-ranks per subquestion.
pub const RERANK_POOL: usize = 45;

/// Share of a re-ranked candidate's weight that comes from meaning (the rest is its
/// lexical weight relative to the best candidate's).
pub const MEANING_WEIGHT: f64 = 0.3;

/// The best [`RERANK_POOL`] candidates ordered by meaning and lexical weight together;
/// the rest keep their lexical order after them.
pub(crate) async fn rerank(
    mut scored: Vec<(f64, String, u32, Option<u32>)>,
    topic: &str,
    archive: &dyn TextArchive,
    embedder: &dyn SentenceEmbedder,
) -> (Vec<(f64, String, u32, Option<u32>)>, Option<Rerank>) {
    let pool = scored.len().min(RERANK_POOL);
    let mut texts = vec![topic.to_string()];
    let mut texts_of = BTreeMap::new();
    for (_, sha, first, last) in &scored[..pool] {
        let text = texts_of
            .entry(sha.clone())
            .or_insert_with(|| archive.get(sha));
        let quote = text
            .as_ref()
            .and_then(|t| t.quote(*first, *last))
            .unwrap_or_default();
        texts.push(quote.to_string());
    }
    let mut record = Rerank {
        model: embedder.display_name().to_string(),
        model_id: embedder.model_id().to_string(),
        sentences: pool as u32,
        failure: None,
    };
    if pool == 0 {
        return (scored, Some(record));
    }
    let vectors = match embedder.embed(&texts).await {
        Ok(v)
            if v.len() == texts.len()
                && v.iter().all(|x| !x.is_empty() && x.len() == v[0].len()) =>
        {
            v
        }
        Ok(_) => {
            record.failure = Some("the model returned the wrong number or size of vectors".into());
            return (scored, Some(record));
        }
        Err(e) => {
            record.failure = Some(e.to_string());
            return (scored, Some(record));
        }
    };
    let dot = |a: &[f32], b: &[f32]| -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| f64::from(*x) * f64::from(*y))
            .sum()
    };
    let topic_vector = &vectors[0];
    let best = scored[..pool].iter().map(|s| s.0).fold(0.0_f64, f64::max);
    let mut head: Vec<(f64, String, u32, Option<u32>)> = scored
        .drain(..pool)
        .zip(&vectors[1..])
        .map(|((weight, sha, first, last), vector)| {
            // Meaning is measured against the topic, the reader's own question: a
            // subquestion can drift into the corpus's headings (measured: against the
            // nearer of subquestion and topic, the tuning questions lost 0.07×).
            let meaning = dot(vector, topic_vector).max(0.0);
            let lexical = if best > 0.0 { weight / best } else { 0.0 };
            let mixed = round4((1.0 - MEANING_WEIGHT) * lexical + MEANING_WEIGHT * meaning);
            (mixed, sha, first, last)
        })
        .collect();
    head.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.cmp(&b.1))
            .then(a.2.cmp(&b.2))
            .then(a.3.cmp(&b.3))
    });
    head.extend(scored);
    (head, Some(record))
}

/// A weight rounded to four decimals, so reports and keys do not carry float noise.
pub(crate) fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}
