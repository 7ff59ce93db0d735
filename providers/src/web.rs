//! Web research: keyless and keyed search providers, canonical URLs, and a polite web
//! fetcher that archives every page it reads.
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

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use deepr_checkpoints::FileArchive;
use deepr_evidence::report::CallStatus;
use deepr_evidence::{extract_text, DocKind};
use deepr_orchestrator::{
    DocMeta, FetchOutcome, Fetcher, SearchHit, SearchOutcome, SearchProvider,
};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota, RateLimiter};
use serde_json::Value;
use tokio::sync::Semaphore;

use crate::http::{FetchFailure, HttpClient};

/// Tracking parameters dropped from canonical URLs.
const TRACKING: &[&str] = &[
    "fbclid", "gclid", "mc_cid", "mc_eid", "ref", "ref_src", "igshid", "yclid", "msclkid",
];

/// The canonical form of a URL; `None` for anything that is not http(s).
pub fn canonical_url(raw: &str) -> Option<String> {
    // Parsing lower-cases scheme and host and drops default ports.
    let mut url = url::Url::parse(raw.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return None;
    }
    url.set_fragment(None);
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| {
            let k = k.to_ascii_lowercase();
            !k.starts_with("utm_") && !TRACKING.contains(&k.as_str())
        })
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if kept.is_empty() {
        url.set_query(None);
    } else {
        url.query_pairs_mut().clear().extend_pairs(kept);
    }
    let path = url.path().to_string();
    if path.len() > 1 && path.ends_with('/') {
        url.set_path(path.trim_end_matches('/'));
    }
    let text = url.to_string();
    // "https://host/" and "https://host" are the same page.
    Some(if url.path() == "/" && url.query().is_none() {
        text.trim_end_matches('/').to_string()
    } else {
        text
    })
}

/// Which web search API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WebApi {
    Wikipedia,
    Arxiv,
    HackerNews,
    Searxng,
    Brave,
    Tavily,
}

impl WebApi {
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim() {
            "wikipedia" => Some(Self::Wikipedia),
            "arxiv" => Some(Self::Arxiv),
            "hn" => Some(Self::HackerNews),
            "searxng" => Some(Self::Searxng),
            "brave" => Some(Self::Brave),
            "tavily" => Some(Self::Tavily),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Wikipedia => "wikipedia",
            Self::Arxiv => "arxiv",
            Self::HackerNews => "hn",
            Self::Searxng => "searxng",
            Self::Brave => "brave",
            Self::Tavily => "tavily",
        }
    }

    /// Default base URL (`None`: must be configured, as for SearXNG).
    pub fn default_base(self) -> Option<&'static str> {
        match self {
            Self::Wikipedia => Some("https://en.wikipedia.org"),
            Self::Arxiv => Some("https://export.arxiv.org"),
            Self::HackerNews => Some("https://hn.algolia.com"),
            Self::Searxng => None,
            Self::Brave => Some("https://api.search.brave.com"),
            Self::Tavily => Some("https://api.tavily.com"),
        }
    }

    /// Environment variable holding the API key, for keyed providers.
    pub fn key_var(self) -> Option<&'static str> {
        match self {
            Self::Brave => Some("BRAVE_API_KEY"),
            Self::Tavily => Some("TAVILY_API_KEY"),
            _ => None,
        }
    }

    /// Polite default: requests per period.
    fn quota(self) -> Quota {
        match self {
            // arXiv asks for at most one request every 3 seconds.
            Self::Arxiv => Quota::with_period(Duration::from_secs(3))
                .unwrap_or_else(|| Quota::per_minute(NonZeroU32::MIN)),
            Self::Brave => Quota::per_second(NonZeroU32::MIN),
            Self::Tavily => Quota::per_minute(NonZeroU32::new(100).unwrap_or(NonZeroU32::MIN)),
            _ => Quota::per_second(NonZeroU32::new(3).unwrap_or(NonZeroU32::MIN)),
        }
    }
}

/// A response cache and the namespace (the run id) that scopes it: a resumed run never
/// asks again what it already asked, and a later run does not reuse stale results.
#[derive(Clone)]
pub struct WebCache {
    pub cache: Arc<deepr_checkpoints::ResponseCache>,
    pub namespace: String,
}

impl WebCache {
    fn key(&self, parts: &[&str]) -> String {
        let mut hasher = blake3::Hasher::new();
        hasher.update(b"deepr.web-cache.v1\0");
        hasher.update(self.namespace.as_bytes());
        for part in parts {
            hasher.update(b"\0");
            hasher.update(part.as_bytes());
        }
        hasher.finalize().to_hex().to_string()
    }
}

/// Only answers that would not change on retry are cached: results, no results, an
/// auth failure, a page that is skipped by rule; never timeouts, rate limits or 5xx.
fn definitive(status: CallStatus) -> bool {
    matches!(
        status,
        CallStatus::Ok | CallStatus::NoResults | CallStatus::AuthFailed | CallStatus::Skipped
    )
}

/// A web search provider.
pub struct WebSearch {
    api: WebApi,
    base: String,
    key: Option<String>,
    client: HttpClient,
    limiter: DefaultDirectRateLimiter,
    cache: Option<WebCache>,
}

impl WebSearch {
    /// `base`: the configured base URL (trusted). Keyed providers need `key`.
    pub fn new(
        api: WebApi,
        base: Option<&str>,
        key: Option<String>,
        timeout: Duration,
    ) -> Result<Self, String> {
        let base = base.or(api.default_base()).ok_or_else(|| {
            format!(
                "{} needs a base URL (e.g. --searxng-url http://127.0.0.1:8888)",
                api.name()
            )
        })?;
        let parsed = url::Url::parse(base)
            .map_err(|e| format!("{} base URL {base:?} is not a URL: {e}", api.name()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("{} base URL {base:?} must be http(s)", api.name()));
        }
        if api.key_var().is_some() && key.as_deref().is_none_or(|k| k.trim().is_empty()) {
            return Err(format!(
                "{} needs {} in the environment",
                api.name(),
                api.key_var().unwrap_or("a key")
            ));
        }
        // Configured endpoints are trusted: the private-address guard is for addresses
        // that come from results, pages and redirects.
        let client = HttpClient::new(true, timeout, 8 << 20)?;
        Ok(Self {
            api,
            base: base.trim_end_matches('/').to_string(),
            key,
            client,
            limiter: RateLimiter::direct(api.quota()),
            cache: None,
        })
    }

    /// Cache definitive answers (per run) so a resumed run asks nothing twice.
    pub fn with_cache(mut self, cache: WebCache) -> Self {
        self.cache = Some(cache);
        self
    }

    fn request_url(&self, query: &str, limit: usize) -> String {
        let q: String = url::form_urlencoded::byte_serialize(query.as_bytes()).collect();
        match self.api {
            WebApi::Wikipedia => format!(
                "{}/w/api.php?action=query&list=search&format=json&srlimit={limit}&srsearch={q}",
                self.base
            ),
            WebApi::Arxiv => format!(
                "{}/api/query?search_query=all:{q}&start=0&max_results={limit}",
                self.base
            ),
            WebApi::HackerNews => format!(
                "{}/api/v1/search?tags=story&hitsPerPage={limit}&query={q}",
                self.base
            ),
            WebApi::Searxng => format!("{}/search?format=json&q={q}", self.base),
            WebApi::Brave => format!("{}/res/v1/web/search?count={limit}&q={q}", self.base),
            WebApi::Tavily => format!("{}/search", self.base),
        }
    }

    /// Parse an API answer into hits (in the API's rank order).
    pub fn parse(api: WebApi, base: &str, body: &[u8]) -> Result<Vec<SearchHit>, String> {
        let hit = |url: &str, title: &str, snippet: &str| -> Option<SearchHit> {
            let key = canonical_url(url)?;
            Some(SearchHit {
                doc_key: key.clone(),
                locator: key,
                title: one_line(title),
                score: 0.0,
                snippet: one_line(snippet).chars().take(300).collect(),
            })
        };
        if api == WebApi::Arxiv {
            let text =
                std::str::from_utf8(body).map_err(|_| "the Atom feed is not UTF-8".to_string())?;
            let doc = roxmltree::Document::parse(text)
                .map_err(|e| format!("the Atom feed is not XML: {e}"))?;
            return Ok(doc
                .descendants()
                .filter(|n| n.has_tag_name("entry"))
                .filter_map(|entry| {
                    let child = |name: &str| {
                        entry
                            .children()
                            .find(|c| c.has_tag_name(name))
                            .and_then(|c| c.text())
                            .unwrap_or("")
                    };
                    hit(child("id"), child("title"), child("summary"))
                })
                .collect());
        }
        let value: Value =
            serde_json::from_slice(body).map_err(|e| format!("the answer is not JSON: {e}"))?;
        let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
        let s = |v: &Value, k: &str| v[k].as_str().unwrap_or("").to_string();
        let hits: Vec<SearchHit> = match api {
            WebApi::Wikipedia => list(&value["query"]["search"])
                .iter()
                .filter_map(|r| {
                    let title = s(r, "title");
                    let path: String =
                        url::form_urlencoded::byte_serialize(title.replace(' ', "_").as_bytes())
                            .collect();
                    hit(
                        &format!("{base}/wiki/{path}"),
                        &title,
                        &strip_tags(&s(r, "snippet")),
                    )
                })
                .collect(),
            WebApi::HackerNews => list(&value["hits"])
                .iter()
                .filter_map(|r| {
                    let url = r["url"]
                        .as_str()
                        .filter(|u| !u.is_empty())
                        .map(String::from)
                        .unwrap_or_else(|| {
                            format!("https://news.ycombinator.com/item?id={}", s(r, "objectID"))
                        });
                    hit(&url, &s(r, "title"), "")
                })
                .collect(),
            WebApi::Searxng | WebApi::Tavily => list(&value["results"])
                .iter()
                .filter_map(|r| hit(&s(r, "url"), &s(r, "title"), &s(r, "content")))
                .collect(),
            WebApi::Brave => list(&value["web"]["results"])
                .iter()
                .filter_map(|r| hit(&s(r, "url"), &s(r, "title"), &s(r, "description")))
                .collect(),
            WebApi::Arxiv => Vec::new(),
        };
        Ok(hits)
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// MediaWiki snippets carry `<span class="searchmatch">` markup.
fn strip_tags(text: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

fn failure_outcome(failure: FetchFailure) -> SearchOutcome {
    SearchOutcome {
        status: failure.status,
        hits: Vec::new(),
        detail: Some(failure.detail),
    }
}

#[async_trait]
impl SearchProvider for WebSearch {
    fn name(&self) -> String {
        self.api.name().to_string()
    }

    async fn search(&self, query: &str, limit: usize) -> SearchOutcome {
        let cache_key = self.cache.as_ref().map(|c| {
            c.key(&[
                "search",
                self.api.name(),
                &self.base,
                query,
                &limit.to_string(),
            ])
        });
        if let (Some(cache), Some(key)) = (&self.cache, &cache_key) {
            if let Some(outcome) = cache
                .cache
                .get("search", key)
                .and_then(|v| serde_json::from_value::<SearchOutcome>(v).ok())
            {
                return outcome;
            }
        }
        let outcome = self.search_live(query, limit).await;
        if let (Some(cache), Some(key)) = (&self.cache, &cache_key) {
            if definitive(outcome.status) {
                if let Ok(value) = serde_json::to_value(&outcome) {
                    let _ = cache.cache.put("search", key, &value);
                }
            }
        }
        outcome
    }
}

impl WebSearch {
    async fn search_live(&self, query: &str, limit: usize) -> SearchOutcome {
        self.limiter.until_ready().await;
        let url = self.request_url(query, limit);
        let page = match self.api {
            WebApi::Tavily => {
                let body =
                    serde_json::json!({"query": query, "max_results": limit, "api_key": self.key});
                self.client
                    .post_json(&url, &body, self.key.as_deref())
                    .await
            }
            WebApi::Brave => {
                self.client
                    .get_with_header(
                        &url,
                        "X-Subscription-Token",
                        self.key.as_deref().unwrap_or(""),
                    )
                    .await
            }
            _ => self.client.get(&url).await,
        };
        let page = match page {
            Ok(page) => page,
            Err(failure) => return failure_outcome(failure),
        };
        match Self::parse(self.api, &self.base, &page.body) {
            Ok(hits) if hits.is_empty() => SearchOutcome {
                status: CallStatus::NoResults,
                hits,
                detail: None,
            },
            Ok(mut hits) => {
                hits.truncate(limit);
                SearchOutcome {
                    status: CallStatus::Ok,
                    hits,
                    detail: None,
                }
            }
            Err(why) => SearchOutcome {
                status: CallStatus::BadResponse,
                hits: Vec::new(),
                detail: Some(why),
            },
        }
    }
}

/// Decode a body: charset from the Content-Type header, a BOM, an HTML meta tag, then
/// sniffing (chardetng).
pub fn decode(body: &[u8], content_type: &str) -> String {
    let from_label = |label: &str| {
        encoding_rs::Encoding::for_label(label.trim().trim_matches(['"', '\'']).as_bytes())
    };
    let header = content_type
        .split(';')
        .find_map(|p| p.trim().strip_prefix("charset="))
        .and_then(from_label);
    let bom = encoding_rs::Encoding::for_bom(body).map(|(e, _)| e);
    let meta = {
        let head = String::from_utf8_lossy(&body[..body.len().min(4096)]).to_ascii_lowercase();
        head.find("charset=").and_then(|at| {
            let rest = &head[at + 8..];
            let label: String = rest
                .trim_start_matches(['"', '\''])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            from_label(&label)
        })
    };
    let encoding = bom.or(header).or(meta).unwrap_or_else(|| {
        let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
        detector.feed(body, true);
        detector.guess(None, chardetng::Utf8Detection::Allow)
    });
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// Seconds a PDF may take to turn into text.
pub const PDF_TIMEOUT: Duration = Duration::from_secs(20);

/// PDF → text in a blocking task, bounded in time, with panics contained (PDF parsers
/// meet hostile files).
pub async fn pdf_text(bytes: Vec<u8>) -> Result<String, String> {
    let task = tokio::task::spawn_blocking(move || {
        std::panic::catch_unwind(move || pdf_extract::extract_text_from_mem(&bytes))
    });
    match tokio::time::timeout(PDF_TIMEOUT, task).await {
        Err(_) => Err(format!(
            "PDF text took longer than {} s",
            PDF_TIMEOUT.as_secs()
        )),
        Ok(Err(_)) | Ok(Ok(Err(_))) => {
            Err("the PDF could not be parsed (the parser failed)".into())
        }
        Ok(Ok(Ok(Err(e)))) => Err(format!("the PDF could not be read: {e}")),
        Ok(Ok(Ok(Ok(text)))) if text.trim().is_empty() => Err("the PDF has no text layer".into()),
        Ok(Ok(Ok(Ok(text)))) => Ok(text),
    }
}

fn validators_key(url: &str, extractor_version: u32) -> String {
    blake3::hash(format!("deepr.validators.v2\0{extractor_version}\0{url}").as_bytes())
        .to_hex()
        .to_string()
}

/// Fetches web pages politely and archives their main text.
pub struct WebFetcher {
    client: HttpClient,
    cache: Option<WebCache>,
    archive: Arc<FileArchive>,
    per_host: DefaultKeyedRateLimiter<String>,
    slots: Semaphore,
    /// robots.txt rules per origin, fetched once even when many pages of a new host are
    /// fetched at once.
    robots: Mutex<BTreeMap<String, Arc<tokio::sync::OnceCell<Vec<String>>>>>,
}

impl WebFetcher {
    /// `allow_hosts`: `HOST[:PORT]` entries reachable even on private addresses.
    pub fn new(
        archive: Arc<FileArchive>,
        allow_hosts: Vec<String>,
        timeout: Duration,
        max_bytes: usize,
        concurrency: usize,
    ) -> Result<Self, String> {
        Ok(Self {
            client: HttpClient::with_allowed_hosts(false, allow_hosts, timeout, max_bytes)?,
            cache: None,
            archive,
            per_host: RateLimiter::keyed(Quota::per_second(
                NonZeroU32::new(2).unwrap_or(NonZeroU32::MIN),
            )),
            slots: Semaphore::new(concurrency.max(1)),
            robots: Mutex::new(BTreeMap::new()),
        })
    }

    /// The key of a URL's validators. It carries the extractor's version: a 304 reuses
    /// the archived text, which must come from the extractor in use, so text from an
    /// older extractor is never served again.
    fn validators_key(url: &str) -> String {
        validators_key(url, deepr_evidence::EXTRACTOR_VERSION)
    }

    /// ETag / Last-Modified (and the page's archived text) from an earlier fetch.
    fn validators(&self, url: &str) -> Option<Value> {
        self.cache
            .as_ref()
            .and_then(|c| c.cache.get("validators", &Self::validators_key(url)))
    }

    fn remember_validators(&self, url: &str, page: &crate::http::Page, doc: &DocMeta) {
        if let Some(cache) = &self.cache {
            let value = serde_json::json!({"etag": page.etag, "last_modified": page.last_modified, "doc": doc});
            let _ = cache
                .cache
                .put("validators", &Self::validators_key(url), &value);
        }
    }

    /// Cache definitive outcomes (per run): a resumed run never refetches a page.
    pub fn with_cache(mut self, cache: WebCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Disallowed path prefixes for `User-agent: *` (cached per host; a missing or
    /// unreadable robots.txt allows everything).
    async fn disallowed(&self, origin: &str, host: &str) -> Vec<String> {
        let cell = match self.robots.lock() {
            Ok(mut robots) => Arc::clone(robots.entry(origin.to_string()).or_default()),
            Err(_) => Arc::default(),
        };
        cell.get_or_init(|| async {
            // robots.txt is a request to the host like any other: it waits its turn.
            self.per_host.until_key_ready(&host.to_string()).await;
            match self.client.get(&format!("{origin}/robots.txt")).await {
                Ok(page) => parse_robots(&String::from_utf8_lossy(&page.body)),
                Err(_) => Vec::new(),
            }
        })
        .await
        .clone()
    }
}

/// `Disallow` prefixes that apply to every user agent (`User-agent: *` groups).
pub fn parse_robots(text: &str) -> Vec<String> {
    let mut rules = Vec::new();
    let mut applies = false;
    let mut in_agents = false;
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some((field, value)) = line.split_once(':') else {
            continue;
        };
        let (field, value) = (field.trim().to_ascii_lowercase(), value.trim());
        match field.as_str() {
            "user-agent" => {
                if !in_agents {
                    applies = false;
                }
                in_agents = true;
                applies |= value == "*";
            }
            "disallow" => {
                in_agents = false;
                if applies && !value.is_empty() {
                    rules.push(value.to_string());
                }
            }
            _ => in_agents = false,
        }
    }
    rules
}

#[async_trait]
impl Fetcher for WebFetcher {
    async fn fetch(&self, hit: &SearchHit) -> FetchOutcome {
        let cache_key = self.cache.as_ref().map(|c| c.key(&["fetch", &hit.locator]));
        if let (Some(cache), Some(key)) = (&self.cache, &cache_key) {
            if let Some(outcome) = cache
                .cache
                .get("fetch", key)
                .and_then(|v| serde_json::from_value::<FetchOutcome>(v).ok())
            {
                // A cached page counts only while its archived text is still there.
                if outcome
                    .doc
                    .as_ref()
                    .is_none_or(|d| self.archive.contains(&d.content_sha256))
                {
                    return outcome;
                }
            }
        }
        let outcome = self.fetch_live(hit).await;
        if let (Some(cache), Some(key)) = (&self.cache, &cache_key) {
            if definitive(outcome.status) {
                if let Ok(value) = serde_json::to_value(&outcome) {
                    let _ = cache.cache.put("fetch", key, &value);
                }
            }
        }
        outcome
    }
}

impl WebFetcher {
    async fn fetch_live(&self, hit: &SearchHit) -> FetchOutcome {
        let fail = |status: CallStatus, detail: String| FetchOutcome {
            status,
            doc: None,
            detail: Some(detail),
        };
        let Ok(url) = url::Url::parse(&hit.locator) else {
            return fail(CallStatus::BadResponse, "not a URL".into());
        };
        let host = url.host_str().unwrap_or("").to_string();
        let origin = url.origin().ascii_serialization();
        let Ok(_slot) = self.slots.acquire().await else {
            return fail(CallStatus::Unreachable, "fetcher closed".into());
        };
        let path = url.path().to_string();
        if self
            .disallowed(&origin, &host)
            .await
            .iter()
            .any(|prefix| path.starts_with(prefix.as_str()))
        {
            return fail(
                CallStatus::Skipped,
                format!("robots.txt of {host} disallows {path}"),
            );
        }
        self.per_host.until_key_ready(&host).await;
        // Validators from an earlier fetch of this URL (any run): ask only for changes.
        let validators = self.validators(&hit.locator);
        let known = validators
            .as_ref()
            .and_then(|v| serde_json::from_value::<DocMeta>(v["doc"].clone()).ok())
            .filter(|d| self.archive.contains(&d.content_sha256));
        let page = match &known {
            Some(_) => {
                let etag = validators.as_ref().and_then(|v| v["etag"].as_str());
                let modified = validators
                    .as_ref()
                    .and_then(|v| v["last_modified"].as_str());
                self.client
                    .get_conditional(&hit.locator, etag, modified)
                    .await
            }
            None => self.client.get(&hit.locator).await,
        };
        let page = match page {
            Ok(page) => page,
            Err(failure) => return fail(failure.status, failure.detail),
        };
        if page.not_modified {
            if let Some(doc) = known {
                return FetchOutcome {
                    status: CallStatus::Ok,
                    doc: Some(DocMeta {
                        doc_key: hit.doc_key.clone(),
                        locator: hit.locator.clone(),
                        ..doc
                    }),
                    detail: Some("not modified (conditional GET)".into()),
                };
            }
        }
        let is_pdf =
            page.content_type.starts_with("application/pdf") || page.body.starts_with(b"%PDF-");
        let (kind, text) = if is_pdf {
            match pdf_text(page.body.clone()).await {
                Ok(text) => (DocKind::Text, text),
                Err(why) => return fail(CallStatus::BadResponse, why),
            }
        } else if page.content_type.contains("html") {
            (DocKind::Html, decode(&page.body, &page.content_type))
        } else if page.content_type.starts_with("text/plain") || page.content_type.is_empty() {
            (DocKind::Text, decode(&page.body, &page.content_type))
        } else {
            return fail(
                CallStatus::Skipped,
                format!("{} is not a readable text type", page.content_type),
            );
        };
        let extracted = match extract_text(text.as_bytes(), kind) {
            Ok(extracted) => extracted,
            Err(why) => return fail(CallStatus::BadResponse, format!("no readable text: {why}")),
        };
        let sha = match self.archive.put(&extracted.text) {
            Ok(sha) => sha,
            Err(e) => {
                return fail(
                    CallStatus::BadResponse,
                    format!("cannot archive the text: {e}"),
                )
            }
        };
        let title = if extracted.title.is_empty() {
            hit.title.clone()
        } else {
            extracted.title
        };
        let doc = DocMeta {
            doc_key: hit.doc_key.clone(),
            locator: hit.locator.clone(),
            title,
            content_sha256: sha,
            date: extracted.date,
            authority: 0.6,
        };
        if page.etag.is_some() || page.last_modified.is_some() {
            self.remember_validators(&hit.locator, &page, &doc);
        }
        FetchOutcome {
            status: CallStatus::Ok,
            doc: Some(doc),
            detail: None,
        }
    }
}

/// Sends URL hits to the web fetcher and corpus paths to the corpus fetcher.
pub struct RoutingFetcher {
    pub corpus: Option<Arc<dyn Fetcher>>,
    pub web: Option<Arc<dyn Fetcher>>,
}

#[async_trait]
impl Fetcher for RoutingFetcher {
    async fn fetch(&self, hit: &SearchHit) -> FetchOutcome {
        let is_url = hit.locator.starts_with("http://") || hit.locator.starts_with("https://");
        let target = if is_url { &self.web } else { &self.corpus };
        match target {
            Some(fetcher) => fetcher.fetch(hit).await,
            None => FetchOutcome {
                status: CallStatus::Skipped,
                doc: None,
                detail: Some("no fetcher for this kind of source".into()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validators_are_kept_per_extractor_version() {
        let url = "https://sqlite.org/wal.html";
        assert_ne!(validators_key(url, 2), validators_key(url, 3));
        assert_eq!(
            WebFetcher::validators_key(url),
            validators_key(url, deepr_evidence::EXTRACTOR_VERSION)
        );
    }

    #[test]
    fn canonical_urls_merge_the_same_page() {
        let cases = [
            (
                "HTTPS://Example.COM:443/a/b/?utm_source=x&id=3#top",
                "https://example.com/a/b?id=3",
            ),
            ("http://example.com:80/", "http://example.com"),
            ("https://example.com/a?fbclid=1", "https://example.com/a"),
            ("https://example.com:8443/a", "https://example.com:8443/a"),
        ];
        for (raw, want) in cases {
            assert_eq!(canonical_url(raw).as_deref(), Some(want), "{raw}");
        }
        assert_eq!(canonical_url("ftp://x/y"), None);
        assert_eq!(canonical_url("javascript:alert(1)"), None);
    }

    #[test]
    fn robots_rules_for_every_agent() {
        let rules = parse_robots("User-agent: Googlebot\nDisallow: /g\n\nUser-agent: *\nDisallow: /private\nDisallow:\n# c\nUser-agent: other\nDisallow: /o\n");
        assert_eq!(rules, ["/private"]);
    }

    #[test]
    fn charsets_from_header_bom_meta_and_sniffing() {
        let latin1 = b"caf\xe9 cr\xe8me";
        assert_eq!(
            decode(latin1, "text/plain; charset=ISO-8859-1"),
            "café crème"
        );
        assert_eq!(decode(b"\xef\xbb\xbfcaf\xc3\xa9", "text/plain"), "café");
        let meta = b"<html><head><meta charset=\"windows-1252\"></head><body>caf\xe9</body></html>";
        assert!(decode(meta, "text/html").contains("café"));
        assert!(decode("привет мир, это текст".as_bytes(), "").contains("привет"));
    }

    #[test]
    fn api_shapes_parse() {
        let wiki = br#"{"query":{"search":[{"title":"Write-ahead logging","snippet":"<span class=\"searchmatch\">WAL</span> is"}]}}"#;
        let hits =
            WebSearch::parse(WebApi::Wikipedia, "https://en.wikipedia.org", wiki).expect("wiki");
        assert_eq!(
            hits[0].locator,
            "https://en.wikipedia.org/wiki/Write-ahead_logging"
        );
        assert_eq!(hits[0].snippet, "WAL is");
        let atom = br#"<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/abs/1234.5678v1</id><title>A  Paper</title><summary>About logs.</summary></entry></feed>"#;
        let hits = WebSearch::parse(WebApi::Arxiv, "", atom).expect("atom");
        assert_eq!(
            (hits[0].locator.as_str(), hits[0].title.as_str()),
            ("http://arxiv.org/abs/1234.5678v1", "A Paper")
        );
        let hn = br#"{"hits":[{"title":"Show HN","url":null,"objectID":"42"},{"title":"T","url":"https://x.org/a?utm_medium=y"}]}"#;
        let hits = WebSearch::parse(WebApi::HackerNews, "", hn).expect("hn");
        assert_eq!(hits[0].locator, "https://news.ycombinator.com/item?id=42");
        assert_eq!(hits[1].locator, "https://x.org/a");
        assert!(WebSearch::parse(WebApi::Brave, "", b"not json").is_err());
    }
}
