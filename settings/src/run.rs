//! How deep a run researches and how it judges: the [`Depth`] (and what it means to the
//! pipeline, its [`DepthLimits`]) and the [`Strategy`]. Typed from the config file and the
//! command line to the stages; each serialises to its name (`standard`, `per-claim`).

use serde::{Deserialize, Serialize};

/// How wide and deep a run researches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Depth {
    /// 1–5 subquestions, no extra round.
    Quick,
    /// 5–10 subquestions, at most one deepening round (the default).
    Standard,
    /// 10–20 subquestions, at most three deepening rounds.
    Deep,
}

/// What a depth means to the pipeline: how many subquestions the planner writes, how
/// many claims each extractor returns, and how many deepening rounds follow the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DepthLimits {
    /// Subquestions the planner writes at least.
    pub min_subquestions: usize,
    /// Subquestions the planner writes at most.
    pub max_subquestions: usize,
    /// Subquestions the planner aims at.
    pub target_subquestions: usize,
    /// Claims each subquestion's extractor may return.
    pub claims_per_subquestion: usize,
    /// Claims each subquestion's extractor may return when the topic is a brief with
    /// several parts: it asks for more than one question does, and the depth's word
    /// range has room (standard's 1,200–3,000 words held ~1,300 at five claims).
    pub brief_claims_per_subquestion: usize,
    /// Deepening rounds allowed after the first round.
    pub extra_rounds: u32,
}

impl Depth {
    /// Quick: 1–5 subquestions (aim 4: a question is padded with document headings it
    /// shares words with, never with generic probes — on the SQLite FAQ those cost
    /// characters that a one-section answer spends on the question), 4 claims each (6 for
    /// a brief's: its parts ask for more — on four document shares 4 covered 43 · 19 · 25
    /// · 47 % of the key facts, 6 covered 54 · 31 · 30 · 58 %), no deepening. Standard:
    /// 5–10 (aim 6), 5 claims (10 for a brief's: offline, 8 covered 93 · 88 · 80 · 89 %
    /// of the four shares' key facts, 10 covered 100 · 88 · 83 · 95 % for 12 % more
    /// tokens — every fact gained had been a candidate the extractor had no room for),
    /// one deepening round. Deep: 10–20 (aim 12), 6 claims (10), three.
    pub const fn limits(self) -> DepthLimits {
        let (min, max, target, claims, brief_claims, rounds) = match self {
            Self::Quick => (1, 5, 4, 4, 6, 0),
            Self::Standard => (5, 10, 6, 5, 10, 1),
            Self::Deep => (10, 20, 12, 6, 10, 3),
        };
        DepthLimits {
            min_subquestions: min,
            max_subquestions: max,
            target_subquestions: target,
            claims_per_subquestion: claims,
            brief_claims_per_subquestion: brief_claims,
            extra_rounds: rounds,
        }
    }

    /// Claims each subquestion's extractor may return; `brief_with_parts`: the topic is a
    /// brief with several parts ([`DepthLimits::brief_claims_per_subquestion`]).
    pub fn claims_per_subquestion(self, brief_with_parts: bool) -> usize {
        let plan = self.limits();
        if brief_with_parts {
            plan.brief_claims_per_subquestion
        } else {
            plan.claims_per_subquestion
        }
    }

    /// Every depth, in order.
    pub const ALL: [Self; 3] = [Self::Quick, Self::Standard, Self::Deep];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Quick => "quick",
            Self::Standard => "standard",
            Self::Deep => "deep",
        }
    }

    /// What the depth means, for `--help`, errors and tool schemas.
    pub fn help(self) -> &'static str {
        match self {
            Self::Quick => "1–5 subquestions, no extra round",
            Self::Standard => "5–10 subquestions, at most one deepening round (the default)",
            Self::Deep => "10–20 subquestions, at most three deepening rounds",
        }
    }
}

/// How a run's claims are judged.
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
    /// Every strategy, in order.
    pub const ALL: [Self; 4] = [Self::Linear, Self::PerClaim, Self::FreeQuote, Self::NoJudge];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Linear => "linear",
            Self::PerClaim => "per-claim",
            Self::FreeQuote => "free-quote",
            Self::NoJudge => "no-judge",
        }
    }

    /// What the strategy does, for `--help`, errors and tool schemas.
    pub fn help(self) -> &'static str {
        match self {
            Self::Linear => "candidates by ID, one judge call per 8 claims (the default)",
            Self::PerClaim => "3 verifier votes per claim, each reading its full sources",
            Self::FreeQuote => "the model copies its own quotes; kept as written",
            Self::NoJudge => "no judging: every claim stays unjudged",
        }
    }
}

/// How a model extractor reads a subquestion's documents (the offline heuristic always
/// reads its ranked share).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reading {
    /// The candidate units ranked by the question's words (and meaning), up to
    /// `--model-pool` of them (the default: on two shares a capable model covered more
    /// this way, and stated fewer stale values — benches/README.md).
    #[default]
    Ranked,
    /// The documents as documents: each found document's units in their order under
    /// their headings — a short one whole, a long one by the sections holding its
    /// best-ranked units — within a token budget per call.
    Documents,
}

impl Reading {
    /// Every value with what it means, for `--help`, errors and tool schemas.
    pub const VALUES: [(&'static str, &'static str); 2] = [
        ("ranked", "the candidate units ranked by the question's words, up to --model-pool"),
        ("documents", "documents whole under their headings (a long one by its best sections), within a token budget per call"),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ranked => "ranked",
            Self::Documents => "documents",
        }
    }

    /// The reading a name stands for.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "ranked" => Some(Self::Ranked),
            "documents" => Some(Self::Documents),
            _ => None,
        }
    }
}

/// A report's file formats: the markdown report (always written) and the extra ones
/// `--format` asks for beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportFormat {
    /// The long-form markdown report (always written).
    Md,
    /// One self-contained HTML file.
    Html,
    /// One line per supported claim with its citation.
    Bullets,
    /// Question/answer flashcards as TSV (Anki imports it).
    Cards,
    /// The article as a PDF with embedded fonts, its footnotes' quotes and sources,
    /// links and Run details.
    Pdf,
}

impl ReportFormat {
    /// Every format, in order.
    pub const ALL: [Self; 5] = [Self::Md, Self::Html, Self::Bullets, Self::Cards, Self::Pdf];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Md => "md",
            Self::Html => "html",
            Self::Bullets => "bullets",
            Self::Cards => "cards",
            Self::Pdf => "pdf",
        }
    }

    /// What the format's file is, for `--help`, errors and tool schemas.
    pub fn help(self) -> &'static str {
        match self {
            Self::Md => "the markdown report (always written)",
            Self::Html => "report.html, one self-contained file",
            Self::Bullets => "report.bullets.md, one line per supported claim",
            Self::Cards => "report.cards.tsv, question/answer flashcards (Anki)",
            Self::Pdf => "report.pdf, embedded fonts, footnotes with their quotes",
        }
    }

    /// The extra file a run's record asks the session for (`md` is always written:
    /// none).
    pub fn extra_file(self) -> Option<&'static str> {
        match self {
            Self::Md => None,
            other => Some(other.as_str()),
        }
    }
}

/// A value list on the command line: its names (`as_str`) and help (`help`) defined
/// once, above, and read by clap as by the MCP server's schemas.
#[cfg(feature = "cli")]
macro_rules! value_enum {
    ($($list:ty),*) => {$(
        impl clap::ValueEnum for $list {
            fn value_variants<'a>() -> &'a [Self] {
                &Self::ALL
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(clap::builder::PossibleValue::new(self.as_str()).help(self.help()))
            }
        }
    )*};
}

#[cfg(feature = "cli")]
value_enum!(Depth, Strategy, ReportFormat);
