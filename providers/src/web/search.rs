//! `WebSearch`: one search API behind the `SearchProvider` trait, with what every API
//! shares — a polite rate limit per API, the per-run cache of definitive answers, and
//! a status for every outcome. What differs per API lives in [`super::apis`].

use std::num::NonZeroU32;
use std::time::Duration;

use async_trait::async_trait;
use deepr_evidence::report::CallStatus;
use deepr_orchestrator::{SearchHit, SearchOutcome, SearchProvider};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

use super::apis::{arxiv, brave, hn, searxng, tavily, wikipedia};
use super::cache::{definitive, WebCache};
use crate::http::{FetchFailure, HttpClient};

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
        Self::ALL.into_iter().find(|api| api.name() == name.trim())
    }

    pub const ALL: [WebApi; 6] = [
        Self::Wikipedia,
        Self::Arxiv,
        Self::HackerNews,
        Self::Searxng,
        Self::Brave,
        Self::Tavily,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Wikipedia => wikipedia::NAME,
            Self::Arxiv => arxiv::NAME,
            Self::HackerNews => hn::NAME,
            Self::Searxng => searxng::NAME,
            Self::Brave => brave::NAME,
            Self::Tavily => tavily::NAME,
        }
    }

    /// Default base URL (`None`: must be configured, as for SearXNG).
    pub fn default_base(self) -> Option<&'static str> {
        match self {
            Self::Wikipedia => Some(wikipedia::DEFAULT_BASE),
            Self::Arxiv => Some(arxiv::DEFAULT_BASE),
            Self::HackerNews => Some(hn::DEFAULT_BASE),
            Self::Searxng => None,
            Self::Brave => Some(brave::DEFAULT_BASE),
            Self::Tavily => Some(tavily::DEFAULT_BASE),
        }
    }

    /// Environment variable holding the API key, for keyed providers.
    pub fn key_var(self) -> Option<&'static str> {
        match self {
            Self::Brave => Some(brave::KEY_VAR),
            Self::Tavily => Some(tavily::KEY_VAR),
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
        let base = &self.base;
        match self.api {
            WebApi::Wikipedia => wikipedia::request_url(base, query, limit),
            WebApi::Arxiv => arxiv::request_url(base, query, limit),
            WebApi::HackerNews => hn::request_url(base, query, limit),
            WebApi::Searxng => searxng::request_url(base, query),
            WebApi::Brave => brave::request_url(base, query, limit),
            WebApi::Tavily => tavily::request_url(base),
        }
    }

    /// Parse an API answer into hits (in the API's rank order).
    pub fn parse(api: WebApi, base: &str, body: &[u8]) -> Result<Vec<SearchHit>, String> {
        match api {
            WebApi::Wikipedia => wikipedia::parse(base, body),
            WebApi::Arxiv => arxiv::parse(body),
            WebApi::HackerNews => hn::parse(body),
            WebApi::Searxng => searxng::parse(body),
            WebApi::Brave => brave::parse(body),
            WebApi::Tavily => tavily::parse(body),
        }
    }

    async fn search_live(&self, query: &str, limit: usize) -> SearchOutcome {
        self.limiter.until_ready().await;
        let url = self.request_url(query, limit);
        let page = match self.api {
            WebApi::Tavily => {
                let body = tavily::request_body(query, limit, self.key.as_deref());
                self.client
                    .post_json(&url, &body, self.key.as_deref())
                    .await
            }
            WebApi::Brave => {
                self.client
                    .get_with_header(&url, brave::KEY_HEADER, self.key.as_deref().unwrap_or(""))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_api_is_found_by_its_name() {
        for api in WebApi::ALL {
            assert_eq!(WebApi::parse(api.name()), Some(api));
        }
        assert_eq!(WebApi::parse(" hn "), Some(WebApi::HackerNews));
        assert_eq!(WebApi::parse("bing"), None);
    }
}
