//! The report contract: `report.json`, schema `deepr.report.v1`.
//!
//! These types *are* the contract; `ARCHITECTURE.md` describes it in prose. Every
//! field is always present (empty lists, `null` for absent options) so consumers
//! never guess. Ordering inside every list is deterministic: subquestions, claims and
//! sources by ID, coverage by (provider, query).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The schema identifier written to `report.json`.
pub const REPORT_SCHEMA: &str = "deepr.report.v1";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Always [`REPORT_SCHEMA`].
    pub schema: String,
    pub run_id: String,
    pub topic: String,
    /// `quick | standard | deep`.
    pub depth: String,
    /// `linear | per-claim | free-quote | no-judge`.
    pub strategy: String,
    /// False when the run stopped early (budget, interruption); see `incomplete_reason`.
    pub complete: bool,
    pub incomplete_reason: Option<String>,
    pub subquestions: Vec<Subquestion>,
    /// Every claim, whatever its verdict.
    pub claims: Vec<Claim>,
    pub conflicts: Vec<Conflict>,
    pub sources: Vec<Source>,
    pub coverage: Vec<Coverage>,
    pub usage: Usage,
    /// The article `report.md` shows: summary and sections in prose, every sentence
    /// citing claim IDs. Added to v1 without a version bump (absent in older reports,
    /// read as empty).
    #[serde(default)]
    pub article: Article,
    /// The corpus files read and not read (absent without a corpus, and in reports
    /// written before it was added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus_files: Option<CorpusFiles>,
    /// What the reader must be told the sources lack: names the brief gives that no
    /// document read mentions, sections resting on one source or on stale documents
    /// only. One sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<String>,
    /// A refresh's changes since the run it refreshes (`deepr refresh`); absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<Changes>,
}

/// What changed between a run and its refresh: claims whose documents are new or
/// changed, claims their changed or removed documents no longer state, and values
/// stated anew in the same place with other figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Changes {
    /// The earlier run and the day it started (`YYYY-MM-DD`).
    pub parent_run: String,
    pub since: String,
    /// Documents new, changed and removed since (corpus-relative paths or URLs).
    pub new_documents: Vec<String>,
    pub changed_documents: Vec<String>,
    pub removed_documents: Vec<String>,
    /// `claims[].id`s stated by a new or changed document, new since.
    pub added: Vec<String>,
    /// The earlier run's claims their document no longer states.
    pub no_longer_supported: Vec<PastClaim>,
    /// A figure that changed: the earlier claim, and the claim that states it now.
    pub values: Vec<ValueChange>,
}

/// A claim of an earlier report, with the quote it stood on then.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PastClaim {
    pub text: String,
    pub quote: String,
    pub locator: String,
    /// The document's date then, if it stated one.
    pub date: Option<String>,
}

/// One figure, then and now.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ValueChange {
    pub was: PastClaim,
    /// The `claims[].id` that states it now.
    pub now: String,
    /// The figures only the old quote states, and only the new one.
    pub old_values: Vec<String>,
    pub new_values: Vec<String>,
}

/// The report as prose. Every sentence cites `claims[].id`s; its quotes are those
/// claims' citations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Article {
    /// The answer-first summary: its first paragraph answers the topic.
    pub summary: Vec<Paragraph>,
    pub sections: Vec<Section>,
    /// Sentences a writer wrote that failed the grounding check, with why.
    pub dropped: Vec<DroppedSentence>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// The `subquestions[].id`s the section answers (a subquestion and its follow-ups).
    pub subquestions: Vec<String>,
    pub heading: String,
    pub paragraphs: Vec<Paragraph>,
    /// Set when the model's section was unusable and the offline writer wrote it.
    pub degraded: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paragraph {
    pub sentences: Vec<ProseSentence>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProseSentence {
    pub text: String,
    /// `claims[].id`s the sentence rests on (at least one).
    pub claims: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DroppedSentence {
    /// `summary`, or the first subquestion id of the section.
    pub section: String,
    pub text: String,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subquestion {
    pub id: String,
    pub text: String,
    /// 0 = the initial decomposition; n = the n-th deepen round.
    pub round: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Supported,
    Partial,
    Unsupported,
    Unjudged,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Supported => "supported",
            Self::Partial => "partial",
            Self::Unsupported => "unsupported",
            Self::Unjudged => "unjudged",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    pub id: String,
    /// The `subquestions[].id` this claim answers.
    pub subquestion: String,
    pub text: String,
    pub verdict: Verdict,
    pub citations: Vec<Citation>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Citation {
    /// Equals a `sources[].id`.
    pub source: String,
    /// Sentence index in the source's archived text (the quote's first sentence).
    pub sentence: u32,
    /// The quote's last sentence, when it spans more than one (a sentence quoted with
    /// the one before it that it leans on). Added to v1; absent for one sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sentence_end: Option<u32>,
    /// The quote: an exact slice of the source's archived text.
    pub quote: String,
    /// Hex SHA-256 of the UTF-8 bytes of `normalise(quote)`.
    pub quote_sha256: String,
    /// Where in its file the quote stands, when the format has places: `page=3`,
    /// `slide=4`, `sheet=Budget!row=12`, `row=7`. Footnotes append it to the locator
    /// (`report.pdf#page=3`). Added to v1; absent for formats without places.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
}

/// A footnote locator split into the source's locator and deepr's place fragment
/// (`board/update.pdf#page=3` → (`board/update.pdf`, `page=3`)); other fragments stay
/// part of the locator.
pub fn split_place(locator: &str) -> (&str, Option<&str>) {
    let at = ["#page=", "#slide=", "#sheet=", "#row="]
        .iter()
        .filter_map(|p| locator.find(p))
        .min();
    match at {
        Some(at) => (&locator[..at], locator.get(at + 1..)),
        None => (locator, None),
    }
}

/// A place as a URL fragment: `%`, `#` and whitespace percent-encoded, so a sheet named
/// `Q#1 plan` cannot end the fragment or break the footnote.
pub fn encode_place(place: &str) -> String {
    let mut out = String::with_capacity(place.len());
    for c in place.chars() {
        match c {
            '%' => out.push_str("%25"),
            '#' => out.push_str("%23"),
            c if c.is_whitespace() => out.push_str("%20"),
            c => out.push(c),
        }
    }
    out
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    pub subquestion: String,
    pub summary: String,
    /// IDs of the claims that disagree.
    pub claims: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Source {
    pub id: String,
    /// A URL, or a path relative to the corpus root.
    pub locator: String,
    pub title: String,
    /// Hex SHA-256 of the archived text.
    pub content_sha256: String,
    /// Combined relevance/authority/recency score in [0, 1]; low scores are kept.
    pub score: f64,
    /// How the source was obtained (`ok`, or a failure status).
    pub status: String,
    /// The document's own date, if it states one (`YYYY-MM-DD` or `YYYY-MM`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// `draft`, `archived` or `superseded` when the document says a newer version
    /// replaces it or it is not final; absent for a current document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc_status: Option<String>,
    /// Who wrote it, when its format says (an email's sender: `Dana Ruiz
    /// <dana@example.com>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Why `date` is the date used, when the document's own text and its file's
    /// metadata disagree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date_basis: Option<String>,
    /// Why the document was judged off-topic for the brief, when it was: read, never
    /// quoted or followed up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_topic: Option<String>,
}

/// What a run read of its corpus folder: how many files, and every file it did not
/// read with the reason (nothing is skipped silently).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CorpusFiles {
    /// Files read as documents.
    pub read: usize,
    /// Documents those files held, when more than the files (an email's attachments,
    /// a mailbox's messages, a chat export's channel-days); 0 when one a file.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub documents: usize,
    /// Files not read: (corpus-relative path, reason), in walk order.
    pub skipped: Vec<SkippedFile>,
    /// Files read in part: (path, what could not be read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partial: Vec<SkippedFile>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedFile {
    pub path: String,
    pub reason: String,
}

/// The outcome of one provider call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CallStatus {
    Ok,
    NoResults,
    AuthFailed,
    RateLimited,
    Timeout,
    Unreachable,
    BadResponse,
    Skipped,
}

impl CallStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::NoResults => "no-results",
            Self::AuthFailed => "auth-failed",
            Self::RateLimited => "rate-limited",
            Self::Timeout => "timeout",
            Self::Unreachable => "unreachable",
            Self::BadResponse => "bad-response",
            Self::Skipped => "skipped",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    pub provider: String,
    pub query: String,
    pub status: CallStatus,
    pub hits: u32,
}

/// Token and cost totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageTotals {
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
}

impl UsageTotals {
    pub fn add(&mut self, other: &UsageTotals) {
        self.calls += other.calls;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_tokens += other.cached_tokens;
        self.cost_usd += other.cost_usd;
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
    /// Keyed by stage name (`decompose`, `extract`, `judge`, …).
    pub by_stage: BTreeMap<String, UsageTotals>,
}

impl Usage {
    /// The totals of some model calls, each given with its stage, overall and by stage.
    pub fn of_calls(calls: impl IntoIterator<Item = (String, UsageTotals)>) -> Usage {
        let mut by_stage: BTreeMap<String, UsageTotals> = BTreeMap::new();
        let mut total = UsageTotals::default();
        for (stage, call) in calls {
            by_stage.entry(stage).or_default().add(&call);
            total.add(&call);
        }
        Usage {
            calls: total.calls,
            prompt_tokens: total.prompt_tokens,
            completion_tokens: total.completion_tokens,
            cached_tokens: total.cached_tokens,
            cost_usd: total.cost_usd,
            by_stage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_of_calls_totals_them_overall_and_by_stage() {
        let call = |tokens: u64| UsageTotals {
            calls: 1,
            prompt_tokens: tokens,
            completion_tokens: 1,
            cached_tokens: 0,
            cost_usd: 0.5,
        };
        let usage = Usage::of_calls([
            ("judge".to_string(), call(10)),
            ("extract".to_string(), call(20)),
            ("judge".to_string(), call(30)),
        ]);
        assert_eq!(
            (usage.calls, usage.prompt_tokens, usage.completion_tokens),
            (3, 60, 3)
        );
        assert_eq!(usage.cost_usd, 1.5);
        assert_eq!(usage.by_stage["judge"].calls, 2);
        assert_eq!(usage.by_stage["judge"].prompt_tokens, 40);
        assert_eq!(usage.by_stage["extract"].prompt_tokens, 20);
    }

    #[test]
    fn places_split_off_footnote_locators() {
        assert_eq!(
            split_place("board/update.pdf#page=3"),
            ("board/update.pdf", Some("page=3"))
        );
        assert_eq!(
            split_place("a.xlsx#sheet=Q1%20Plan!row=12"),
            ("a.xlsx", Some("sheet=Q1%20Plan!row=12"))
        );
        assert_eq!(
            split_place("deck.pptx#slide=4"),
            ("deck.pptx", Some("slide=4"))
        );
        // Another fragment is part of the locator (a URL's anchor).
        assert_eq!(
            split_place("https://a.org/p#intro"),
            ("https://a.org/p#intro", None)
        );
        assert_eq!(split_place("notes.md"), ("notes.md", None));
    }

    #[test]
    fn enums_use_contract_spellings() {
        let statuses = [
            CallStatus::Ok,
            CallStatus::NoResults,
            CallStatus::AuthFailed,
            CallStatus::RateLimited,
            CallStatus::Timeout,
            CallStatus::Unreachable,
            CallStatus::BadResponse,
            CallStatus::Skipped,
        ];
        for status in statuses {
            let json = serde_json::to_string(&status).expect("serialise");
            assert_eq!(json, format!("\"{}\"", status.as_str()));
        }
        for verdict in [
            Verdict::Supported,
            Verdict::Partial,
            Verdict::Unsupported,
            Verdict::Unjudged,
        ] {
            let json = serde_json::to_string(&verdict).expect("serialise");
            assert_eq!(json, format!("\"{}\"", verdict.as_str()));
        }
    }
}
