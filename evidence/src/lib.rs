//! The evidence layer: everything deepr needs to promise that every quote is an
//! exact slice of a text it really read.
//!
//! * [`normalise`] — the one text-comparison function (extraction, verification and
//!   tests all use it; nothing else compares text).
//! * [`sentences`] — splits archived text into sentences addressed by
//!   (document, index) with byte offsets, stable across runs and machines.
//! * [`hash`] — content and quote hashes used in reports (SHA-256) and internal keys.
//! * [`report`] — the `deepr.report.v1` contract (report.json) as serde types.
//! * [`verify`] — the verification gate's core: is a cited quote in its source?
//!
//! Reading documents into archived text is `deepr-documents`' job.
//!
//! This crate does no I/O: callers hand it bytes and strings.

pub mod amounts;
pub mod hash;
pub mod normalise;
pub mod prose;
pub mod quoted;
pub mod report;
pub mod sentences;
pub mod stated_values;
pub mod stem;
pub mod terms;
pub mod verify;

pub use hash::{content_sha256, quote_sha256, sha256_hex};
pub use normalise::normalise;
pub use sentences::{context_span, span, split_sentences, Sentence};
