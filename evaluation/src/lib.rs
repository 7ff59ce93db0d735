//! Measuring research reports, for `deepr bench`: one row per run from its report
//! (`rows`), fact coverage against a facts file (`facts`), answer recall beside BM25
//! sentence-retrieval baselines at the same budget (`qa`), on-topic and repeated quotes
//! (`quality`), key values stated in more than one section (`restated`), where each
//! fact a report missed was lost (`trail`), and the bench's files — bench.json,
//! bench.md, bench.svg (`table`).
//! Nothing here runs research: the bench command runs its cells as sessions
//! (`deepr_session`) and hands their reports here.

pub mod chart;
pub mod facts;
pub mod qa;
pub mod qa_table;
pub mod quality;
pub mod restated;
pub mod rows;
pub mod table;
pub mod trail;
mod values;

use serde::{Deserialize, Serialize};

pub use qa::QaRow;
pub use rows::{BenchRow, StrategyRow};

pub const BENCH_SCHEMA: &str = "deepr.bench.v1";

/// One topic × strategy run.

#[derive(Debug, Serialize, Deserialize)]
pub struct BenchFile {
    pub schema: String,
    pub strategies: Vec<StrategyRow>,
    pub runs: Vec<BenchRow>,
    /// With `--qa`: quality against the official answers, beside BM25 baselines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qa: Option<Vec<QaRow>>,
    /// With `--facts`: fact coverage per strategy, and every checkpoint's row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facts: Option<facts::FactsSummaryFile>,
    /// Columns that cannot fail with this bench's model (the offline model), and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_construction: Option<ByConstruction>,
}

/// Figures that hold by construction, not by measurement.
#[derive(Debug, Serialize, Deserialize)]
pub struct ByConstruction {
    pub columns: Vec<String>,
    pub why: String,
}
