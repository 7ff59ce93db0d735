//! Web research: keyless and keyed search providers, canonical URLs, and a polite web
//! fetcher that archives every page it reads. One file per job: `apis/` (one file per
//! search API), `search.rs` (what every API shares), `canonical.rs`, `cache.rs` (the
//! per-run cache), `decode.rs` (charsets, PDF), `fetch.rs` (`WebFetcher`), `routing.rs`.
//!
//! * Search: `wikipedia` (MediaWiki search API), `arxiv` (Atom API, ≤ 1 request per 3 s),
//!   `hn` (Hacker News Algolia API), `searxng` (self-hosted), `brave` (`BRAVE_API_KEY`),
//!   `tavily` (`TAVILY_API_KEY`). Each base URL is configurable; these endpoints are
//!   configured by the user and trusted.
//! * Every hit's `doc_key` is its **canonical URL** (lower-case scheme and host, no
//!   fragment, no tracking parameters, default port and trailing slash removed), so
//!   fusion merges the same page found by different providers or queries.
//! * Fetch: addresses from results, pages and redirects go through the guarded
//!   [`HttpClient`]; a keyed governor limiter per host plus a global concurrency cap;
//!   robots.txt respected (cached per host); charset from headers, BOM, meta, then
//!   sniffing; HTML main text, text/plain as is; everything else skipped with a status.

pub mod apis;
mod cache;
mod canonical;
mod decode;
mod fetch;
mod routing;
mod search;

pub use cache::WebCache;
pub use canonical::canonical_url;
pub use decode::{decode, page_bytes};
pub use fetch::{parse_robots, WebFetcher};
pub use routing::RoutingFetcher;
pub use search::{WebApi, WebSearch};
