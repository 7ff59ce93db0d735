//! HTTP fetching for deepr: one client with polite defaults, a body-size cap enforced
//! while streaming, a redirect cap, and a guard against private networks.
//!
//! The guard: addresses that are loopback, private (RFC 1918, unique-local), link-local,
//! CGNAT, multicast or unspecified are refused unless explicitly allowed — both for IP
//! literals in URLs (and in every redirect) and for every address a host name resolves
//! to (a resolver that filters, so a name cannot smuggle a private address past the
//! check). Text from pages and reports therefore never chooses an address on a private
//! network.
//!
//! * The address checked is the address connected to: the guard is the resolver
//!   itself, so there is no second lookup between check and connect (DNS rebinding).
//!   The lookup behind it is injectable ([`HostResolver`]) so tests can resolve names
//!   to private addresses, or differently on each lookup.
//! * `--allow-host HOST` opens a host on every port; `HOST:PORT` opens exactly that
//!   port. A name allowed only with ports is resolved by a second client, used only for
//!   those (host, port) pairs, whose redirects cannot leave them.
//! * A guarded client (one that refuses private addresses) never uses a proxy:
//!   `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY` would let the proxy resolve names, and the
//!   guard would never see the address. Trusted endpoints the user configures (search
//!   APIs, model servers) use an unguarded client and honour those variables.

use std::sync::Arc;
use std::time::Duration;

use deepr_evidence::report::CallStatus;

use crate::guard::{
    host_allowed, literal_is_refused, parse_allow, port_scoped_only, GuardedResolver,
};
pub use crate::guard::{is_private, HostResolver, SystemResolver};
use thiserror::Error;

/// deepr's User-Agent: who we are and where to read about it.
pub const USER_AGENT: &str = concat!(
    "deepr/",
    env!("CARGO_PKG_VERSION"),
    " (deep-research tool; checks and archives cited pages)"
);

#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{}: {detail}", status.as_str())]
pub struct FetchFailure {
    pub status: CallStatus,
    pub detail: String,
}

fn failure(status: CallStatus, detail: impl Into<String>) -> FetchFailure {
    FetchFailure {
        status,
        detail: detail.into(),
    }
}

/// A fetched page.
#[derive(Clone, Debug)]
pub struct Page {
    pub final_url: String,
    pub content_type: String,
    pub body: Vec<u8>,
    /// `ETag` and `Last-Modified` validators, for conditional re-fetches.
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    /// True when the server answered 304 Not Modified (the body is empty).
    pub not_modified: bool,
}

/// An HTTP client with deepr's limits.
#[derive(Clone)]
pub struct HttpClient {
    /// Reaches private addresses only of hosts allowed on every port.
    client: reqwest::Client,
    /// Also reaches those of hosts allowed on some ports; used only for those
    /// (host, port) pairs.
    scoped: reqwest::Client,
    allow_private: bool,
    allow_hosts: Arc<Vec<String>>,
    max_bytes: usize,
}

impl HttpClient {
    /// `timeout` bounds the whole request; `max_bytes` the body.
    pub fn new(allow_private: bool, timeout: Duration, max_bytes: usize) -> Result<Self, String> {
        Self::with_allowed_hosts(allow_private, Vec::new(), timeout, max_bytes)
    }

    /// Like [`HttpClient::new`], with `HOST` or `HOST:PORT` entries that are reachable
    /// even on private addresses (`--allow-host`; tests serve pages on 127.0.0.1 this way).
    /// A host allowed by name is reachable on any port; `HOST:PORT` allows exactly that port.
    pub fn with_allowed_hosts(
        allow_private: bool,
        allow_hosts: Vec<String>,
        timeout: Duration,
        max_bytes: usize,
    ) -> Result<Self, String> {
        Self::with_resolver(
            allow_private,
            allow_hosts,
            timeout,
            max_bytes,
            Arc::new(SystemResolver),
        )
    }

    /// Like [`HttpClient::with_allowed_hosts`], with the name lookup behind the guard.
    pub fn with_resolver(
        allow_private: bool,
        allow_hosts: Vec<String>,
        timeout: Duration,
        max_bytes: usize,
        lookup: Arc<dyn HostResolver>,
    ) -> Result<Self, String> {
        let allow_hosts = Arc::new(allow_hosts);
        let parsed: Vec<(String, Option<u16>)> =
            allow_hosts.iter().map(|a| parse_allow(a)).collect();
        let every_port: Vec<String> = parsed
            .iter()
            .filter(|(_, p)| p.is_none())
            .map(|(h, _)| h.clone())
            .collect();
        let any_port: Vec<String> = parsed.iter().map(|(h, _)| h.clone()).collect();
        let build = |private_names: Vec<String>| {
            build_client(
                allow_private,
                Arc::clone(&allow_hosts),
                private_names,
                timeout,
                Arc::clone(&lookup),
            )
        };
        Ok(Self {
            client: build(every_port)?,
            scoped: build(any_port)?,
            allow_private,
            allow_hosts,
            max_bytes,
        })
    }

    /// GET a URL. Every failure is a status: never a panic, never a silent empty page.
    pub async fn get(&self, raw_url: &str) -> Result<Page, FetchFailure> {
        self.send(raw_url, |b| b).await
    }

    /// A conditional GET: `If-None-Match` / `If-Modified-Since` from an earlier fetch.
    pub async fn get_conditional(
        &self,
        raw_url: &str,
        etag: Option<&str>,
        last_modified: Option<&str>,
    ) -> Result<Page, FetchFailure> {
        let (etag, last_modified) = (etag.map(String::from), last_modified.map(String::from));
        self.send(raw_url, move |mut b| {
            if let Some(etag) = etag {
                b = b.header(reqwest::header::IF_NONE_MATCH, etag);
            }
            if let Some(date) = last_modified {
                b = b.header(reqwest::header::IF_MODIFIED_SINCE, date);
            }
            b
        })
        .await
    }

    /// GET with one extra header (an API key header).
    pub async fn get_with_header(
        &self,
        raw_url: &str,
        name: &'static str,
        value: &str,
    ) -> Result<Page, FetchFailure> {
        let value = value.to_string();
        self.send(raw_url, move |b| b.header(name, value)).await
    }

    /// POST a JSON body, with an optional bearer token.
    pub async fn post_json(
        &self,
        raw_url: &str,
        body: &serde_json::Value,
        bearer: Option<&str>,
    ) -> Result<Page, FetchFailure> {
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        let bearer = bearer.map(String::from);
        self.send_method(reqwest::Method::POST, raw_url, move |b| {
            let b = b
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes);
            match bearer {
                Some(token) => b.bearer_auth(token),
                None => b,
            }
        })
        .await
    }

    async fn send<F>(&self, raw_url: &str, decorate: F) -> Result<Page, FetchFailure>
    where
        F: FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    {
        self.send_method(reqwest::Method::GET, raw_url, decorate)
            .await
    }

    async fn send_method<F>(
        &self,
        method: reqwest::Method,
        raw_url: &str,
        decorate: F,
    ) -> Result<Page, FetchFailure>
    where
        F: FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    {
        let url = url::Url::parse(raw_url)
            .map_err(|e| failure(CallStatus::BadResponse, format!("not a URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(failure(
                CallStatus::Skipped,
                format!("{} URLs are not fetched", url.scheme()),
            ));
        }
        if literal_is_refused(&url, self.allow_private, &self.allow_hosts) {
            return Err(failure(CallStatus::Skipped, "private or loopback address refused (allow private networks explicitly to fetch it)"));
        }
        // A name opened only on some ports goes through the client that may reach its
        // private addresses only when this is one of those ports; on any other port it
        // is guarded like every other name.
        let client = match url.host_str() {
            Some(host) if host_allowed(&self.allow_hosts, host, url.port_or_known_default()) => {
                &self.scoped
            }
            _ => &self.client,
        };
        let mut response = decorate(client.request(method, url))
            .send()
            .await
            .map_err(|e| classify(&e))?;
        let status = response.status();
        let header = |name: reqwest::header::HeaderName| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(String::from)
        };
        let (etag, last_modified) = (
            header(reqwest::header::ETAG),
            header(reqwest::header::LAST_MODIFIED),
        );
        if status == reqwest::StatusCode::NOT_MODIFIED {
            return Ok(Page {
                final_url: response.url().to_string(),
                content_type: String::new(),
                body: Vec::new(),
                etag,
                last_modified,
                not_modified: true,
            });
        }
        if !status.is_success() {
            let kind = match status.as_u16() {
                401 | 403 => CallStatus::AuthFailed,
                429 => CallStatus::RateLimited,
                500..=599 => CallStatus::Unreachable,
                _ => CallStatus::BadResponse,
            };
            return Err(failure(kind, format!("HTTP {status}")));
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let final_url = response.url().to_string();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| classify(&e))? {
            if body.len() + chunk.len() > self.max_bytes {
                return Err(failure(
                    CallStatus::BadResponse,
                    format!("body larger than {} bytes", self.max_bytes),
                ));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Page {
            final_url,
            content_type,
            body,
            etag,
            last_modified,
            not_modified: false,
        })
    }
}

/// One reqwest client behind the guard: private addresses only of `private_names`
/// (or of every name with `allow_private`); redirects checked against the same rules.
fn build_client(
    allow_private: bool,
    allow_hosts: Arc<Vec<String>>,
    private_names: Vec<String>,
    timeout: Duration,
    lookup: Arc<dyn HostResolver>,
) -> Result<reqwest::Client, String> {
    let redirect_hosts = Arc::clone(&allow_hosts);
    // reqwest is built without a default crypto provider: use ring.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let redirects = reqwest::redirect::Policy::custom(move |attempt| {
        let target = attempt.url();
        let off_port = !allow_private
            && target.host_str().is_some_and(|host| {
                port_scoped_only(&redirect_hosts, host)
                    && !host_allowed(&redirect_hosts, host, target.port_or_known_default())
            });
        if attempt.previous().len() >= 5 {
            attempt.error("more than 5 redirects")
        } else if literal_is_refused(target, allow_private, &redirect_hosts) || off_port {
            attempt.error("redirect to a private address refused")
        } else if !matches!(target.scheme(), "http" | "https") {
            attempt.error("redirect to a non-HTTP URL refused")
        } else {
            attempt.follow()
        }
    });
    let mut builder = reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .redirect(redirects)
        .dns_resolver(Arc::new(GuardedResolver {
            allow_private,
            private_names: Arc::new(private_names),
            lookup,
        }));
    if !allow_private {
        // Through a proxy the proxy resolves names: the guard would never see them.
        builder = builder.no_proxy();
    }
    builder
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

fn classify(error: &reqwest::Error) -> FetchFailure {
    let text = error.to_string();
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(error);
    let mut chain = text.clone();
    while let Some(inner) = source {
        chain.push_str(": ");
        chain.push_str(&inner.to_string());
        source = inner.source();
    }
    if error.is_timeout() {
        failure(CallStatus::Timeout, chain)
    } else if chain.contains("refused") && chain.contains("private") {
        failure(CallStatus::Skipped, chain)
    } else if error.is_connect() || error.is_request() {
        failure(CallStatus::Unreachable, chain)
    } else {
        failure(CallStatus::BadResponse, chain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn private_addresses_are_refused_unless_allowed() {
        let guarded = HttpClient::new(false, Duration::from_secs(2), 1 << 20).expect("client");
        for url in [
            "http://127.0.0.1:9/x",
            "http://localhost:9/x",
            "http://[::1]:9/",
            "http://169.254.169.254/latest/meta-data",
        ] {
            let error = guarded.get(url).await.expect_err("refused");
            assert_eq!(error.status, CallStatus::Skipped, "{url}: {error}");
        }
        assert_eq!(
            guarded
                .get("file:///etc/passwd")
                .await
                .expect_err("scheme")
                .status,
            CallStatus::Skipped
        );
        assert_eq!(
            guarded.get("not a url").await.expect_err("parse").status,
            CallStatus::BadResponse
        );
        // Allowed: a closed local port is simply unreachable.
        let open = HttpClient::new(true, Duration::from_secs(2), 1 << 20).expect("client");
        let error = open
            .get("http://127.0.0.1:9/x")
            .await
            .expect_err("closed port");
        assert_eq!(error.status, CallStatus::Unreachable, "{error}");
    }
}
