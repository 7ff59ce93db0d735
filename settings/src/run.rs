//! How deep a run researches and how it judges: the [`Depth`] (and what it means to the
//! pipeline, its [`DepthPlan`]) and the [`Strategy`]. Typed from the config file and the
//! command line to the stages; each serialises to its name (`standard`, `per-claim`).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Depth {
    Quick,
    Standard,
    Deep,
}

/// What a depth means to the pipeline: how many subquestions the planner writes, how
/// many claims each extractor returns, and how many deepening rounds follow the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DepthPlan {
    /// Subquestions the planner writes at least.
    pub min_subquestions: usize,
    /// Subquestions the planner writes at most.
    pub max_subquestions: usize,
    /// Subquestions the planner aims at.
    pub target_subquestions: usize,
    /// Claims each subquestion's extractor may return.
    pub claims_per_subquestion: usize,
    /// Deepening rounds allowed after the first round.
    pub extra_rounds: u32,
}

impl Depth {
    /// Quick: 3–5 subquestions (aim 4), 4 claims each, no deepening. Standard: 5–10
    /// (aim 6), 5 claims, one deepening round. Deep: 10–20 (aim 12), 6 claims, three.
    pub const fn plan(self) -> DepthPlan {
        let (min, max, target, claims, rounds) = match self {
            Self::Quick => (3, 5, 4, 4, 0),
            Self::Standard => (5, 10, 6, 5, 1),
            Self::Deep => (10, 20, 12, 6, 3),
        };
        DepthPlan {
            min_subquestions: min,
            max_subquestions: max,
            target_subquestions: target,
            claims_per_subquestion: claims,
            extra_rounds: rounds,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Quick => "quick",
            Self::Standard => "standard",
            Self::Deep => "deep",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Candidates by ID, one judge call per ≤ 8 claims.
    Linear,
    /// Each claim judged by 3 independent verifier calls that read its sources' full
    /// text (capped): the voting pattern many agents use.
    PerClaim,
    /// The model reads page text and writes its quotes itself; they are kept as written
    /// so how often they stop being verbatim is measured.
    FreeQuote,
    /// No judging: every claim stays `unjudged`.
    NoJudge,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Linear => "linear",
            Self::PerClaim => "per-claim",
            Self::FreeQuote => "free-quote",
            Self::NoJudge => "no-judge",
        }
    }
}
