//! providers: the only crate with file/network adapters; local corpus search now,
//! web later.
//!
//! * [`corpus`] — a folder of Markdown, text and HTML files, indexed with tantivy
//!   ([`CorpusIndex`]) and exposed to the orchestrator as a search provider
//!   ([`CorpusSearch`]) and a fetcher ([`CorpusFetcher`]).
//! * [`analyzer`] — the multi-script tokenizer the corpus index uses (jieba for Han
//!   text, English and Russian stemming).

pub mod analyzer;
pub mod corpus;

pub use corpus::{CorpusError, CorpusFetcher, CorpusIndex, CorpusSearch, IndexReport};
