//! `WebFetcher`: fetches pages politely (per-host governor, global cap, robots.txt),
//! through the guarded client, and archives their main text; conditional GET with
//! validators kept per extractor version; definitive outcomes cached per run.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use deepr_checkpoints::FileArchive;
use deepr_evidence::report::CallStatus;
use deepr_orchestrator::{DocMeta, FetchOutcome, Fetcher, SearchHit};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use serde_json::Value;
use tokio::sync::Semaphore;

use super::cache::{definitive, WebCache};
use super::decode::page_bytes;
use crate::http::HttpClient;
use crate::reading::{outline_of, read_off_runtime};

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
        validators_key(url, deepr_documents::READER_VERSION)
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
        let (page, known) = match self.get_page(&hit.locator).await {
            Ok(got) => got,
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
        self.archive_page(hit, page).await
    }

    /// The page, asked only for changes when an earlier fetch of this URL (any run)
    /// left validators and its text is still archived; that earlier document with it.
    async fn get_page(
        &self,
        locator: &str,
    ) -> Result<(crate::http::Page, Option<DocMeta>), crate::http::FetchFailure> {
        let validators = self.validators(locator);
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
                self.client.get_conditional(locator, etag, modified).await
            }
            None => self.client.get(locator).await,
        };
        Ok((page?, known))
    }

    /// A fetched page read (bounded, off the async runtime), archived, and described.
    async fn archive_page(&self, hit: &SearchHit, page: crate::http::Page) -> FetchOutcome {
        let fail = |status: CallStatus, detail: String| FetchOutcome {
            status,
            doc: None,
            detail: Some(detail),
        };
        let Some((format, bytes)) = page_bytes(&page.content_type, &hit.locator, &page.body) else {
            return fail(
                CallStatus::Skipped,
                format!("{} is not a readable document type", page.content_type),
            );
        };
        let extracted = match read_off_runtime(bytes, format).await {
            Ok(extracted) => extracted,
            Err(why) => return fail(CallStatus::BadResponse, format!("not read: {why}")),
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
            extracted.title.clone()
        };
        let doc = DocMeta {
            doc_key: hit.doc_key.clone(),
            locator: hit.locator.clone(),
            title,
            content_sha256: sha,
            date: extracted.date.clone(),
            authority: 0.6,
            outline: outline_of(&extracted),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validators_are_kept_per_extractor_version() {
        let url = "https://sqlite.org/wal.html";
        assert_ne!(validators_key(url, 2), validators_key(url, 3));
        assert_eq!(
            WebFetcher::validators_key(url),
            validators_key(url, deepr_documents::READER_VERSION)
        );
    }

    #[test]
    fn robots_rules_for_every_agent() {
        let rules = parse_robots("User-agent: Googlebot\nDisallow: /g\n\nUser-agent: *\nDisallow: /private\nDisallow:\n# c\nUser-agent: other\nDisallow: /o\n");
        assert_eq!(rules, ["/private"]);
    }
}
