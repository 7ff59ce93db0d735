//! `deepr bench --qa`: scoring reports against official answers, beside BM25
//! baselines at the same budget.

use std::path::Path;

use serde::{Deserialize, Serialize};

use deepr_session::{usage, Failure};

/// One question with its official answer.
#[derive(Clone, Debug, Deserialize)]
pub struct QaItem {
    pub question: String,
    pub answer: String,
}

#[derive(Deserialize)]
struct QaFile {
    items: Vec<QaItem>,
}

pub fn read_qa(path: &Path, limit: Option<usize>) -> Result<Vec<QaItem>, Failure> {
    let bytes = std::fs::read(path)
        .map_err(|e| usage(format!("cannot read QA file {}: {e}", path.display())))?;
    let file: QaFile = serde_json::from_slice(&bytes).map_err(|e| {
        usage(format!(
            "QA file {} is not {{\"items\": [{{\"question\", \"answer\"}}]}}: {e}",
            path.display()
        ))
    })?;
    let items: Vec<QaItem> = file
        .items
        .into_iter()
        .filter(|i| !i.question.trim().is_empty() && !i.answer.trim().is_empty())
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    if items.is_empty() {
        return Err(usage(format!(
            "QA file {} has no questions with answers",
            path.display()
        )));
    }
    Ok(items)
}

/// QA quality of one method over the questions.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct QaRow {
    pub method: String,
    pub questions: u64,
    /// Mean share of the answer's content words found in the quoted sentences.
    pub answer_recall: f64,
    /// Share of questions where some single quote shares ≥ 3 content words with the answer.
    pub with_evidence: f64,
    /// Mean number of sentences quoted per question.
    pub sentences: f64,
    /// Mean characters quoted per question.
    #[serde(default)]
    pub characters: f64,
    /// deepr rows: mean answer recall ÷ that of the BM25 sentences at the same
    /// characters per question, over all questions and over each half.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_bm25_same_characters: Option<Halves>,
    /// deepr rows: mean share of the answer in the candidate sentences shown to the
    /// extractor (what retrieval found), beside `answer_recall` (what it chose).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_pool_recall: Option<f64>,
}

/// A ratio over all questions and over the first and second half (the first half is
/// for tuning, the second for checking).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Halves {
    pub all: f64,
    pub first_half: f64,
    pub second_half: f64,
    /// 95 % bootstrap interval of `all` ([`bootstrap_interval`]): how far the ratio
    /// moves with which questions happened to be asked. A difference inside it is noise.
    #[serde(default)]
    pub all_interval: [f64; 2],
}

/// One question's figures for one strategy (a line of `qa.jsonl`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct QaQuestionRow {
    pub question_index: usize,
    pub question: String,
    pub strategy: String,
    pub deepr_recall: f64,
    pub bm25_same_characters_recall: f64,
    pub bm25_same_sentences_recall: f64,
    pub bm25_top5_recall: f64,
    pub candidate_pool_recall: Option<f64>,
    pub quotes: usize,
    pub characters: usize,
}

pub fn terms(text: &str) -> std::collections::BTreeSet<String> {
    deepr_evidence::terms::content_terms(text)
        .into_iter()
        .collect()
}

/// (recall, has evidence) of `quotes` against `answer`.
pub fn answer_coverage(answer: &str, quotes: &[String]) -> (f64, bool) {
    let wanted = terms(answer);
    if wanted.is_empty() {
        return (0.0, false);
    }
    let mut covered = std::collections::BTreeSet::new();
    let mut evidence = false;
    for quote in quotes {
        let found: Vec<String> = terms(quote)
            .into_iter()
            .filter(|t| wanted.contains(t))
            .collect();
        evidence |= found.len() >= wanted.len().min(3);
        covered.extend(found);
    }
    (covered.len() as f64 / wanted.len() as f64, evidence)
}

/// Ranked sentences, de-duplicated (through the normaliser), taken in rank order until
/// their characters reach `budget`: the BM25 baseline at deepr's quoted characters.
pub fn take_until_characters(
    ranked: impl IntoIterator<Item = String>,
    budget: usize,
) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut taken = Vec::new();
    let mut characters = 0;
    for sentence in ranked {
        if characters >= budget {
            break;
        }
        if seen.insert(deepr_evidence::normalise(&sentence)) {
            characters += sentence.chars().count();
            taken.push(sentence);
        }
    }
    taken
}

/// One method's scores over the questions: (recall, has evidence, sentences, characters).
pub(crate) type Score = (f64, bool, usize, usize);

pub fn qa_row(method: &str, scores: &[Score]) -> QaRow {
    let n = scores.len().max(1) as f64;
    QaRow {
        method: method.to_string(),
        questions: scores.len() as u64,
        answer_recall: scores.iter().map(|s| s.0).sum::<f64>() / n,
        with_evidence: scores.iter().filter(|s| s.1).count() as f64 / n,
        sentences: scores.iter().map(|s| s.2 as f64).sum::<f64>() / n,
        characters: scores.iter().map(|s| s.3 as f64).sum::<f64>() / n,
        vs_bm25_same_characters: None,
        candidate_pool_recall: None,
    }
}

/// Mean of `ours` ÷ mean of `theirs`, over all questions and each half.
pub(crate) fn ratio_halves(ours: &[f64], theirs: &[f64]) -> Halves {
    let ratio = |a: &[f64], b: &[f64]| quotient(a.iter().sum(), b.iter().sum());
    let half = ours.len().div_ceil(2);
    Halves {
        all: ratio(ours, theirs),
        first_half: ratio(&ours[..half], &theirs[..half]),
        second_half: ratio(&ours[half..], &theirs[half..]),
        all_interval: bootstrap_interval(ours, theirs),
    }
}

/// `ours ÷ theirs` of two summed recalls; 0 when the baseline found nothing.
fn quotient(ours: f64, theirs: f64) -> f64 {
    if theirs > 0.0 {
        ours / theirs
    } else {
        0.0
    }
}

/// Resamples of the questions behind [`bootstrap_interval`].
const BOOTSTRAP_RESAMPLES: u64 = 2_000;

/// The 95 % percentile bootstrap interval of Σ`ours` ÷ Σ`theirs`: the questions are
/// drawn again with replacement [`BOOTSTRAP_RESAMPLES`] times (pairs kept together)
/// and the 2.5th and 97.5th percentiles of the ratio are returned. The draws come from
/// BLAKE3 of a fixed label and the draw's number, so the interval is the same on every
/// machine and in every run. `[0, 0]` when there is nothing to resample.
pub fn bootstrap_interval(ours: &[f64], theirs: &[f64]) -> [f64; 2] {
    let n = ours.len().min(theirs.len());
    if n == 0 {
        return [0.0, 0.0];
    }
    let draw = |resample: u64, k: u64| -> usize {
        let mut hasher = blake3::Hasher::new();
        hasher.update(b"deepr bench qa bootstrap");
        hasher.update(&resample.to_le_bytes());
        hasher.update(&k.to_le_bytes());
        let bytes = hasher.finalize();
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes.as_bytes()[..8]);
        (u64::from_le_bytes(word) % n as u64) as usize
    };
    let mut ratios: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|resample| {
            let (mut a, mut b) = (0.0, 0.0);
            for k in 0..n as u64 {
                let i = draw(resample, k);
                a += ours[i];
                b += theirs[i];
            }
            quotient(a, b)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    [at(0.025), at(0.975)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The interval holds the ratio, is the same on every call, collapses when every
    /// question says the same, and widens when the questions disagree.
    #[test]
    fn bootstrap_interval_measures_how_much_the_ratio_depends_on_the_questions() {
        let theirs = [0.4; 20];
        let steady = [0.5; 20];
        let [low, high] = bootstrap_interval(&steady, &theirs);
        assert!(
            (low - 1.25).abs() < 1e-9 && (high - 1.25).abs() < 1e-9,
            "{low}–{high}"
        );
        // Half the questions double the baseline, half lose everything: the same mean
        // ratio (1.0), but a wide interval around it.
        let split: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 0.8 } else { 0.0 })
            .collect();
        let [low, high] = bootstrap_interval(&split, &theirs);
        assert!(low < 0.8 && high > 1.2, "{low}–{high}");
        assert!(low <= 1.0 && 1.0 <= high);
        assert_eq!(bootstrap_interval(&split, &theirs), [low, high]);
        // Each resample's ratio is (questions drawn from the good half) ÷ 10, a
        // Binomial(20, ½) count: its 2.5th and 97.5th percentiles are 6 and 14.
        assert!(
            (low - 0.6).abs() < 1e-9 && (high - 1.4).abs() < 1e-9,
            "{low}–{high}"
        );
        // One question much better than BM25 among nineteen level ones moves the mean
        // but not the lower bound.
        let mut one: Vec<f64> = vec![0.4; 20];
        one[3] = 4.0;
        let [low, high] = bootstrap_interval(&one, &theirs);
        assert!((low - 1.0).abs() < 1e-9 && high > 1.4, "{low}–{high}");
        assert_eq!(bootstrap_interval(&[], &[]), [0.0, 0.0]);
    }

    /// The same-characters baseline on a hand-made corpus: BM25's rank order, the same
    /// sentence (through the normaliser) once, and sentences until the budget is reached.
    #[test]
    fn bm25_baseline_takes_ranked_sentences_until_the_character_budget() {
        let corpus = [
            (
                "a.md",
                0,
                "The journal is deleted when the transaction commits.",
            ),
            ("a.md", 1, "Bananas are yellow."),
            (
                "b.md",
                0,
                "The  journal is deleted when the transaction commits.",
            ),
            (
                "b.md",
                1,
                "A hot journal is rolled back when the database is opened.",
            ),
            (
                "c.md",
                0,
                "WAL mode keeps a separate log; the journal is not used.",
            ),
        ];
        let index = deepr_providers::SentenceIndex::build(corpus.iter().copied()).expect("index");
        let text = |doc: &str, i: u32| {
            corpus
                .iter()
                .find(|(d, n, _)| *d == doc && *n == i)
                .map(|(_, _, t)| t.to_string())
                .expect("sentence")
        };
        let ranked: Vec<String> = index
            .search("when is the journal deleted", 10)
            .expect("search")
            .iter()
            .map(|(d, i)| text(d, *i))
            .collect();
        assert_eq!(
            ranked[0],
            "The journal is deleted when the transaction commits."
        );
        // A budget of 60 characters: the first sentence (53), its whitespace twin skipped,
        // then the next distinct one crosses the budget and is the last taken.
        let taken = take_until_characters(ranked.clone(), 60);
        assert_eq!(taken.len(), 2, "{taken:?}");
        assert_eq!(taken[0], ranked[0]);
        assert!(taken.iter().all(|t| !t.contains("Bananas")));
        assert_ne!(
            deepr_evidence::normalise(&taken[1]),
            deepr_evidence::normalise(&taken[0])
        );
        assert!(take_until_characters(ranked.clone(), 0).is_empty());
        assert_eq!(
            take_until_characters(ranked, 10_000).len(),
            3,
            "every distinct sentence BM25 ranked (the banana shares no term)"
        );
    }

    #[test]
    fn ratios_cover_all_questions_and_each_half() {
        let halves = ratio_halves(&[0.5, 0.5, 0.2, 0.2], &[0.25, 0.25, 0.2, 0.2]);
        assert!((halves.all - 1.4 / 0.9).abs() < 1e-9);
        assert!((halves.first_half - 2.0).abs() < 1e-9);
        assert!((halves.second_half - 1.0).abs() < 1e-9);
    }
}
