//! Provider traits: the only doors from stages to the world.
//!
//! Stages never open files, sockets or clocks themselves; they call these traits,
//! which the binary wires to real implementations (`deepr-providers`,
//! `deepr-checkpoints`) and tests wire to fakes. Every call ends as data — a status,
//! never a panic or an aborted run.

use std::sync::Arc;

use async_trait::async_trait;
use deepr_evidence::report::CallStatus;
use deepr_evidence::Sentence;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

/// Which model tier a task wants: strong for decompose/synthesize, cheap otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Strong,
    Cheap,
}

/// One LLM task request. `system`/`user` are the rendered prompt a real model sees;
/// `task_input` is the same information as structured data, which the offline model
/// reads instead of parsing prose. `schema` is the JSON schema of the expected answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LlmRequest {
    /// Stage name, for the ledger (`decompose`, `extract`, `judge`, …).
    pub stage: String,
    /// Prompt id (`deepr-prompts`), e.g. `extract`.
    pub prompt_id: String,
    pub prompt_version: u32,
    pub tier: Tier,
    pub system: String,
    pub user: String,
    pub schema: Value,
    pub task_input: Value,
    /// Ask the model again: never served from the response cache (`resume
    /// --retry-degraded` recomputing a step whose cached answer was unusable). Left out
    /// of the serialised request when false, so ordinary requests keep their hashes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fresh: bool,
}

/// An LLM answer plus its token accounting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LlmResponse {
    /// The raw answer text (JSON for structured tasks). Untrusted.
    pub text: String,
    pub model: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
    /// True when the answer came from the response cache: nothing was spent now.
    #[serde(default)]
    pub cache_hit: bool,
    /// True when the server reported no usage and the tokens were counted locally.
    #[serde(default)]
    pub usage_estimated: bool,
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum LlmError {
    #[error("{}: {message}", status.as_str())]
    Call { status: CallStatus, message: String },
    /// The run's budget is spent: the call was not started.
    #[error("budget exhausted: {0}")]
    Budget(String),
}

/// A chat model.
#[async_trait]
pub trait LlmProvider: Send + Sync {
    /// `provider:model`, recorded in the ledger and in checkpoint keys.
    fn model_id(&self) -> String;
    /// The id of what answers task `prompt_id`: what node keys and response-cache keys
    /// name. The same as [`model_id`](Self::model_id) for a remote model; a provider
    /// whose answers come from per-task code (the heuristic model) adds the task's code
    /// version, so changed code is never served from older checkpoints or caches.
    fn model_id_for(&self, prompt_id: &str) -> String {
        let _ = prompt_id;
        self.model_id()
    }
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError>;
}

/// One search hit. `doc_key` identifies the page across providers (canonical URL, or
/// the corpus-relative path); fusion merges hits by it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    pub doc_key: String,
    pub locator: String,
    pub title: String,
    pub score: f64,
    pub snippet: String,
}

impl SearchHit {
    /// Whether the hit is a web page (fetched over the network), not a document of a
    /// local corpus (read from the archive).
    pub fn is_web(&self) -> bool {
        self.locator.starts_with("http://") || self.locator.starts_with("https://")
    }
}

/// The outcome of one search call: a status and zero or more hits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchOutcome {
    pub status: CallStatus,
    pub hits: Vec<SearchHit>,
    /// Human-readable detail for failures.
    pub detail: Option<String>,
}

#[async_trait]
pub trait SearchProvider: Send + Sync {
    /// Provider name as used in `--sources` and in coverage (`corpus`, `wikipedia`, …).
    fn name(&self) -> String;
    /// Weight in reciprocal rank fusion.
    fn weight(&self) -> f64 {
        1.0
    }
    async fn search(&self, query: &str, limit: usize) -> SearchOutcome;
}

/// Metadata of an archived document (its text lives in the [`TextArchive`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DocMeta {
    pub doc_key: String,
    pub locator: String,
    pub title: String,
    /// Hex SHA-256 of the archived text; the archive key.
    pub content_sha256: String,
    /// Content date (`YYYY-MM-DD`) if the page states one.
    pub date: Option<String>,
    /// Provider authority prior in [0, 1] (documentation corpus, encyclopedia, forum…).
    pub authority: f64,
    /// The document's structure and version, as its reader found them.
    #[serde(default, skip_serializing_if = "Outline::is_empty")]
    pub outline: Outline,
}

/// What a reader knows of an archived text beyond its characters: whether the document
/// is a current version, where its headings start, and where its places (pages,
/// slides, sheet rows) change. Blocks of an archived text are separated by blank
/// lines, so a heading's text is the block at its offset.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outline {
    /// `draft`, `archived` or `superseded`; `None` for a current (or unmarked) document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// (byte offset, level 1–6) of every heading block, in text order; level 0 marks
    /// a block that closes every heading (a new slide, sheet or chapter).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headings: Vec<(u32, u8)>,
    /// (byte offset, locator fragment such as `page=3`) where the place changes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub places: Vec<(u32, String)>,
    /// Who wrote the document, when its format says (an email's sender).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Why the document's date is the one it has, when its sources of a date
    /// disagree (its text against its file's metadata).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date_basis: Option<String>,
    /// (start, end) byte ranges that repeat what others wrote (an email's quoted
    /// reply, its signature): never new evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quoted: Vec<(u32, u32)>,
    /// (start, end) byte ranges of blocks that are one unit however many sentences
    /// they hold (a chat message): quoted whole.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub units: Vec<(u32, u32)>,
    /// Offsets of headings that say who wrote and when (an email's sender line, a chat
    /// message's speaker): in heading paths, never a topic of the document.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bylines: Vec<u32>,
}

impl Outline {
    pub fn is_empty(&self) -> bool {
        self.status.is_none()
            && self.headings.is_empty()
            && self.places.is_empty()
            && self.author.is_none()
            && self.date_basis.is_none()
            && self.quoted.is_empty()
            && self.units.is_empty()
            && self.bylines.is_empty()
    }

    /// Whether byte `offset` lies in a quoted range (an earlier message, a signature).
    pub fn is_quoted_at(&self, offset: usize) -> bool {
        range_at(&self.quoted, offset).is_some()
    }

    /// The unit block holding byte `offset` (a chat message), if it lies in one.
    pub fn unit_at(&self, offset: usize) -> Option<(usize, usize)> {
        range_at(&self.units, offset)
    }

    /// Whether the document says a newer version replaces it (archived or superseded).
    pub fn is_stale(&self) -> bool {
        matches!(self.status.as_deref(), Some("archived" | "superseded"))
    }

    /// Whether the document is a draft: its figures may not be final.
    pub fn is_draft(&self) -> bool {
        self.status.as_deref() == Some("draft")
    }

    /// The headings above byte `offset` of `text` (the archived text this outline
    /// describes), outermost first; a heading's own path ends with its parent. For many
    /// lookups in one text, build [`Outline::heading_index`] once.
    pub fn heading_path(&self, text: &str, offset: usize) -> Vec<String> {
        self.heading_index(text)
            .path_at(offset)
            .iter()
            .map(|h| h.to_string())
            .collect()
    }

    /// The heading paths of `text`, computed once: each lookup is a binary search.
    pub fn heading_index<'t>(&self, text: &'t str) -> HeadingIndex<'t> {
        let mut index = HeadingIndex::default();
        let mut open: Vec<(u8, &'t str)> = Vec::new();
        for &(at, level) in &self.headings {
            let at = at as usize;
            let Some(rest) = text.get(at..) else { break };
            let heading = rest.split("\n\n").next().unwrap_or("");
            if level > 0 && heading.is_empty() {
                continue; // not the text this outline describes
            }
            if level == 0 {
                open.clear();
            } else {
                open.retain(|(l, _)| *l < level);
            }
            let own: Vec<&'t str> = open.iter().map(|(_, h)| *h).collect();
            if level > 0 {
                open.push((level, heading));
            }
            index.starts.push(at);
            index
                .ends
                .push(if level > 0 { at + heading.len() } else { at });
            index.own.push(own);
            index.after.push(open.iter().map(|(_, h)| *h).collect());
        }
        index
    }

    /// Whether a heading block starts at byte `offset`.
    pub fn is_heading_at(&self, offset: usize) -> bool {
        self.headings
            .binary_search_by_key(&offset, |&(at, _)| at as usize)
            .is_ok_and(|i| self.headings.get(i).is_some_and(|(_, level)| *level > 0))
    }

    /// The locator fragment (`page=3`) of the text at byte `offset`, if any.
    pub fn fragment_at(&self, offset: usize) -> Option<&str> {
        let after = self
            .places
            .partition_point(|(at, _)| (*at as usize) <= offset);
        after
            .checked_sub(1)
            .and_then(|i| self.places.get(i))
            .map(|(_, f)| f.as_str())
    }
}

/// The range of `ranges` (sorted, not overlapping) holding `offset`.
fn range_at(ranges: &[(u32, u32)], offset: usize) -> Option<(usize, usize)> {
    let after = ranges.partition_point(|(start, _)| (*start as usize) <= offset);
    let (start, end) = *ranges.get(after.checked_sub(1)?)?;
    ((offset as u64) < u64::from(end)).then_some((start as usize, end as usize))
}

/// Heading paths of one archived text, for many lookups ([`Outline::heading_index`]).
#[derive(Clone, Debug, Default)]
pub struct HeadingIndex<'t> {
    /// Where each heading (or heading reset) starts, and where its block ends.
    starts: Vec<usize>,
    ends: Vec<usize>,
    /// The path above each heading itself, and the path in effect after it.
    own: Vec<Vec<&'t str>>,
    after: Vec<Vec<&'t str>>,
}

impl<'t> HeadingIndex<'t> {
    /// The headings above byte `offset`, outermost first.
    pub fn path_at(&self, offset: usize) -> &[&'t str] {
        let after = self.starts.partition_point(|at| *at <= offset);
        let Some(k) = after.checked_sub(1) else {
            return &[];
        };
        let inside = self.ends.get(k).is_some_and(|end| offset < *end);
        let paths = if inside { &self.own } else { &self.after };
        paths.get(k).map_or(&[], Vec::as_slice)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FetchOutcome {
    pub status: CallStatus,
    pub doc: Option<DocMeta>,
    pub detail: Option<String>,
}

/// Turns a search hit into an archived document.
#[async_trait]
pub trait Fetcher: Send + Sync {
    async fn fetch(&self, hit: &SearchHit) -> FetchOutcome;
}

/// An archived text with its sentences, shared read-only.
#[derive(Clone, Debug)]
pub struct ArchivedText {
    pub content_sha256: String,
    pub text: Arc<str>,
    pub sentences: Arc<Vec<Sentence>>,
}

impl ArchivedText {
    pub fn new(text: &str) -> Self {
        Self {
            content_sha256: deepr_evidence::content_sha256(text),
            sentences: Arc::new(deepr_evidence::split_sentences(text)),
            text: Arc::from(text),
        }
    }

    /// The exact text of sentence `index`, if it exists.
    pub fn sentence(&self, index: u32) -> Option<&str> {
        self.sentences
            .get(index as usize)
            .and_then(|s| s.text(&self.text))
    }

    /// The exact text from sentence `first` through sentence `last` (`None`: just
    /// `first`), if they exist.
    pub fn quote(&self, first: u32, last: Option<u32>) -> Option<&str> {
        match last {
            None => self.sentence(first),
            Some(last) => deepr_evidence::span(&self.text, &self.sentences, first, last),
        }
    }
}

/// Content-addressed archive of extracted texts.
pub trait TextArchive: Send + Sync {
    /// The text whose SHA-256 is `content_sha256`, verified on read.
    fn get(&self, content_sha256: &str) -> Option<ArchivedText>;
}

/// A local sentence-embedding model: re-ranks candidate sentences by meaning, on this
/// machine (no API, no tokens). Its `model_id` enters the score node's key, so a
/// different model (or none) recomputes scoring and what follows.
#[async_trait]
pub trait SentenceEmbedder: Send + Sync {
    /// What identifies the model's behaviour: a hash of its files.
    fn model_id(&self) -> &str;
    /// What a reader is told ("all-MiniLM-L6-v2").
    fn display_name(&self) -> &str;
    /// One unit-length vector per text, in input order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Why sentences could not be embedded (a damaged model file, say).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("sentence embedding failed: {0}")]
pub struct EmbedError(pub String);

/// The clock, as a provider: only `## Run details` may show what it says.
pub trait Clock: Send + Sync {
    /// Now, as an RFC 3339 UTC timestamp.
    fn now_rfc3339(&self) -> String;
}

#[cfg(test)]
mod outline_tests {
    use super::*;

    #[test]
    fn heading_paths_follow_levels_siblings_and_resets() {
        let text = "A\n\nB\n\nunder B\n\nC\n\nunder C\n\nSlide 2 text";
        let at = |s: &str| text.find(s).unwrap() as u32;
        let outline = Outline {
            headings: vec![(at("A"), 1), (at("B"), 2), (at("C"), 2), (at("Slide 2"), 0)],
            ..Outline::default()
        };
        let path = |s: &str| outline.heading_path(text, text.find(s).unwrap());
        assert_eq!(path("under B"), ["A", "B"]);
        // A heading's own path is its parent's, not its sibling's.
        assert_eq!(path("C\n"), ["A"]);
        assert_eq!(path("under C"), ["A", "C"]);
        // A reset (a new slide) closes every heading; it is not a heading itself.
        assert!(path("Slide 2").is_empty());
        assert!(!outline.is_heading_at(at("Slide 2") as usize));
        assert!(outline.is_heading_at(at("C") as usize));
        assert!(outline.heading_path("", 0).is_empty());
    }
}
