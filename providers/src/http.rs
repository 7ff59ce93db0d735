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

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use deepr_evidence::report::CallStatus;
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

/// Is this an address deepr must not reach without explicit permission?
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || (o[0] == 100 && (64..128).contains(&o[1])) // CGNAT 100.64/10
                || o[0] == 0
        }
        IpAddr::V6(v6) => {
            if v6.is_loopback() || v6.is_unspecified() {
                return true;
            }
            // Addresses that carry an IPv4 address follow the IPv4 rules.
            if embedded_ipv4(v6)
                .iter()
                .any(|v4| is_private(IpAddr::V4(*v4)))
            {
                return true;
            }
            let first = v6.segments()[0];
            v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (first & 0xffc0) == 0xfec0 // site-local fec0::/10 (deprecated)
        }
    }
}

/// The IPv4 addresses an IPv6 address carries: IPv4-mapped (::ffff:a.b.c.d) and
/// -compatible (::a.b.c.d), NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48, last
/// 32 bits), 6to4 (2002::/16, bits 16–47) and Teredo (2001::/32: the server in bits
/// 32–63, the client's address inverted in the last 32 bits).
fn embedded_ipv4(v6: std::net::Ipv6Addr) -> Vec<std::net::Ipv4Addr> {
    let s = v6.segments();
    let pair = |hi: u16, lo: u16| std::net::Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    let last = pair(s[6], s[7]);
    if let Some(v4) = v6.to_ipv4_mapped() {
        return vec![v4];
    }
    if s[..6].iter().all(|x| *x == 0) {
        return vec![last]; // IPv4-compatible
    }
    if s[0] == 0x0064 && s[1] == 0xff9b && (s[2..6].iter().all(|x| *x == 0) || s[2] == 0x0001) {
        return vec![last]; // NAT64
    }
    if s[0] == 0x2002 {
        return vec![pair(s[1], s[2])]; // 6to4
    }
    if s[0] == 0x2001 && s[1] == 0x0000 {
        return vec![pair(s[2], s[3]), pair(!s[6], !s[7])]; // Teredo
    }
    Vec::new()
}

/// Turns a host name into addresses: the system resolver in production, a test's own
/// in tests. The guard filters exactly what this returns, and the connection goes to
/// what passed, so nothing resolves the name a second time.
pub trait HostResolver: Send + Sync {
    fn lookup(
        &self,
        host: &str,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>>;
}

/// The operating system's resolver.
pub struct SystemResolver;

impl HostResolver for SystemResolver {
    fn lookup(
        &self,
        host: &str,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>> {
        let host = host.to_string();
        Box::pin(async move {
            Ok(tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .map(|a| a.ip())
                .collect())
        })
    }
}

/// An `--allow-host` entry: `HOST` (every port) or `HOST:PORT` (that port only);
/// IPv6 literals may be bracketed.
fn parse_allow(entry: &str) -> (String, Option<u16>) {
    let entry = entry.trim();
    if let Some(rest) = entry.strip_prefix('[') {
        if let Some((host, tail)) = rest.split_once(']') {
            let port = tail.strip_prefix(':').and_then(|p| p.parse().ok());
            return (host.to_ascii_lowercase(), port);
        }
    }
    match entry.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(port) => (host.to_ascii_lowercase(), Some(port)),
            Err(_) => (entry.to_ascii_lowercase(), None),
        },
        _ => (entry.to_ascii_lowercase(), None),
    }
}

/// Is `host` (on `port`) opened by an `--allow-host` entry?
fn host_allowed(allow_hosts: &[String], host: &str, port: Option<u16>) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    allow_hosts
        .iter()
        .map(|a| parse_allow(a))
        .any(|(h, p)| h.eq_ignore_ascii_case(host) && (p.is_none() || p == port))
}

/// Is `host` opened only for some ports (so its other ports stay guarded)?
fn port_scoped_only(allow_hosts: &[String], host: &str) -> bool {
    let entries: Vec<(String, Option<u16>)> = allow_hosts
        .iter()
        .map(|a| parse_allow(a))
        .filter(|(h, _)| h.eq_ignore_ascii_case(host))
        .collect();
    !entries.is_empty() && entries.iter().all(|(_, p)| p.is_some())
}

/// A resolver that drops private addresses (unless allowed).
struct GuardedResolver {
    allow_private: bool,
    /// Names whose private addresses this client may reach.
    private_names: Arc<Vec<String>>,
    lookup: Arc<dyn HostResolver>,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        let allow_private = self.allow_private
            || self
                .private_names
                .iter()
                .any(|h| h.eq_ignore_ascii_case(&host));
        let lookup = self.lookup.lookup(&host);
        Box::pin(async move {
            let resolved: Vec<SocketAddr> = lookup
                .await?
                .into_iter()
                .map(|ip| SocketAddr::new(ip, 0))
                .collect();
            let allowed: Vec<SocketAddr> = resolved
                .iter()
                .copied()
                .filter(|a| allow_private || !is_private(a.ip()))
                .collect();
            if allowed.is_empty() && !resolved.is_empty() {
                return Err(format!("{host} resolves only to private addresses; refused (allow private networks explicitly to fetch it)").into());
            }
            let addrs: reqwest::dns::Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

fn literal_is_refused(url: &url::Url, allow_private: bool, allow_hosts: &[String]) -> bool {
    if allow_private {
        return false;
    }
    if let Some(host) = url.host_str() {
        if host_allowed(allow_hosts, host, url.port_or_known_default()) {
            return false;
        }
    }
    match url.host() {
        Some(url::Host::Ipv4(ip)) => is_private(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => is_private(IpAddr::V6(ip)),
        Some(url::Host::Domain(d)) => {
            d.eq_ignore_ascii_case("localhost") || d.to_ascii_lowercase().ends_with(".localhost")
        }
        None => true,
    }
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

    #[test]
    fn private_ranges() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_private(ip.parse().expect("ip")), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:4700::1111", "8.8.8.8"] {
            assert!(!is_private(ip.parse().expect("ip")), "{ip}");
        }
    }

    #[test]
    fn ipv6_forms_that_carry_ipv4_follow_the_ipv4_rules() {
        for ip in [
            "::127.0.0.1",                 // IPv4-compatible
            "64:ff9b::a00:1",              // NAT64 of 10.0.0.1
            "64:ff9b::7f00:1",             // NAT64 of 127.0.0.1
            "64:ff9b:1::a9fe:a9fe",        // local-use NAT64 of 169.254.169.254
            "2002:c0a8:101::1",            // 6to4 of 192.168.1.1
            "2002:7f00:1::",               // 6to4 of 127.0.0.1
            "2001:0:a00:1::",              // Teredo server 10.0.0.1
            "2001:0:5db8:8d12::80ff:fffe", // Teredo client !(7f00:0001) = 127.0.0.1
            "fec0::1",                     // site-local
        ] {
            assert!(is_private(ip.parse().expect("ip")), "{ip}");
        }
        for ip in [
            "64:ff9b::808:808",            // NAT64 of 8.8.8.8
            "2002:808:808::1",             // 6to4 of 8.8.8.8
            "2001:0:5db8:8d12::f7f7:f7f7", // Teredo, public both ends
        ] {
            assert!(!is_private(ip.parse().expect("ip")), "{ip}");
        }
    }

    #[test]
    fn allow_entries_scope_by_port() {
        assert_eq!(
            parse_allow("Docs.Example:8080"),
            ("docs.example".into(), Some(8080))
        );
        assert_eq!(parse_allow("docs.example"), ("docs.example".into(), None));
        assert_eq!(parse_allow("[::1]:9000"), ("::1".into(), Some(9000)));
        assert_eq!(parse_allow("::1"), ("::1".into(), None));
        let allow = vec!["a.test:8080".to_string(), "b.test".to_string()];
        assert!(host_allowed(&allow, "a.test", Some(8080)));
        assert!(!host_allowed(&allow, "a.test", Some(8081)));
        assert!(host_allowed(&allow, "B.test", Some(1)));
        assert!(port_scoped_only(&allow, "a.test"));
        assert!(!port_scoped_only(&allow, "b.test"));
        assert!(!port_scoped_only(&allow, "c.test"));
    }

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
