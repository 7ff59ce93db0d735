//! providers: the crate of file and network adapters — the local corpus, the web,
//! remote models and the local sentence-embedding model.
//!
//! * [`corpus`] — a folder of documents in every format `deepr-documents` reads, indexed with tantivy
//!   ([`CorpusIndex`]) and exposed to the orchestrator as a search provider
//!   ([`CorpusSearch`]) and a fetcher ([`CorpusFetcher`]).
//! * [`http`] — the HTTP client: size and redirect caps, and a guard that refuses
//!   private, loopback and link-local addresses unless explicitly allowed.
//! * [`llm`] — remote chat models (OpenAI-compatible, Anthropic) with rate limits,
//!   retries honouring `Retry-After`, and structured-output fallbacks.
//! * [`prices`] — the shipped price table and the wrapper that prices every call.
//! * [`web`] — web search providers (Wikipedia, arXiv, HN, SearXNG, Brave, Tavily),
//!   canonical URLs, and the polite, guarded web fetcher.
//! * [`analyzer`] — the multi-script tokenizer the corpus index uses (jieba for Han
//!   text, English and Russian stemming).

pub mod analyzer;
pub mod corpus;
pub mod embed;
pub mod guard;
pub mod http;
pub mod llm;
pub mod llm_spec;
mod llm_wire;
pub mod prices;
pub mod read_before;
pub mod reading;
pub mod sentence_index;
pub mod web;

pub use corpus::{
    indexed_locators, CorpusError, CorpusFetcher, CorpusIndex, CorpusScan, CorpusSearch,
};
pub use embed::{hub_snapshot, EmbedLoadError, LocalEmbedder};
pub use http::{FetchFailure, HttpClient, Page};
pub use llm::{LlmLimits, LlmSpec, RemoteLlm};
pub use prices::{PriceTable, PricedLlm};
pub use read_before::{ArchivedFirst, ReadBefore, EARLIER};
pub use sentence_index::SentenceIndex;
pub use web::{canonical_url, RoutingFetcher, WebApi, WebCache, WebFetcher, WebSearch};
