//! The private-network guard of the HTTP client: which addresses are private, the
//! injectable host lookup, `--allow-host` entries, and the resolver that filters every
//! address before it is connected to (the `http` module shows how the client uses it).

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

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
pub(crate) fn parse_allow(entry: &str) -> (String, Option<u16>) {
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
pub(crate) fn host_allowed(allow_hosts: &[String], host: &str, port: Option<u16>) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    allow_hosts
        .iter()
        .map(|a| parse_allow(a))
        .any(|(h, p)| h.eq_ignore_ascii_case(host) && (p.is_none() || p == port))
}

/// Is `host` opened only for some ports (so its other ports stay guarded)?
pub(crate) fn port_scoped_only(allow_hosts: &[String], host: &str) -> bool {
    let entries: Vec<(String, Option<u16>)> = allow_hosts
        .iter()
        .map(|a| parse_allow(a))
        .filter(|(h, _)| h.eq_ignore_ascii_case(host))
        .collect();
    !entries.is_empty() && entries.iter().all(|(_, p)| p.is_some())
}

/// A resolver that drops private addresses (unless allowed).
pub(crate) struct GuardedResolver {
    pub(crate) allow_private: bool,
    /// Names whose private addresses this client may reach.
    pub(crate) private_names: Arc<Vec<String>>,
    pub(crate) lookup: Arc<dyn HostResolver>,
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

pub(crate) fn literal_is_refused(
    url: &url::Url,
    allow_private: bool,
    allow_hosts: &[String],
) -> bool {
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
}
