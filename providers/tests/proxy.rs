//! Proxy variables and the address guard, in a process of their own (the variables are
//! process-wide): a guarded client never goes through a proxy, since the proxy would
//! resolve names and the guard could not see the address; a client for trusted
//! endpoints (search APIs, model servers) honours the variables.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use deepr_evidence::report::CallStatus;
use deepr_providers::http::HttpClient;

/// A listener that counts connections and answers each with `response`.
fn listener(response: &'static str) -> (u16, Arc<AtomicUsize>) {
    let socket = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = socket.local_addr().expect("addr").port();
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in socket.incoming() {
            let Ok(mut stream) = stream else { continue };
            counter.fetch_add(1, Ordering::SeqCst);
            let mut buffer = [0u8; 4096];
            let _ = stream.read(&mut buffer);
            let _ = stream.write_all(response.as_bytes());
        }
    });
    (port, count)
}

const OK_PAGE: &str = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 41\r\nConnection: close\r\n\r\n<html><body><p>Allowed.</p></body></html>";
const REFUSE: &str = "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// The only test of this binary, so no other test sees the variables.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guarded_client_never_goes_through_a_proxy() {
    let (proxy, proxy_connects) = listener(REFUSE);
    let (target, target_connects) = listener(OK_PAGE);
    let proxy_url = format!("http://127.0.0.1:{proxy}");
    for var in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        std::env::set_var(var, &proxy_url);
    }
    std::env::remove_var("NO_PROXY");
    std::env::remove_var("no_proxy");

    let guarded = HttpClient::with_allowed_hosts(
        false,
        vec![format!("127.0.0.1:{target}")],
        Duration::from_secs(2),
        1 << 20,
    )
    .expect("client");
    let page = guarded
        .get(&format!("http://127.0.0.1:{target}/"))
        .await
        .expect("direct, not through the proxy");
    assert!(String::from_utf8_lossy(&page.body).contains("Allowed."));
    assert_eq!(target_connects.load(Ordering::SeqCst), 1);
    let error = guarded
        .get(&format!("http://localhost:{}/", target + 1))
        .await
        .expect_err("loopback by name, not allowed");
    assert_eq!(error.status, CallStatus::Skipped, "{error}");
    assert_eq!(
        proxy_connects.load(Ordering::SeqCst),
        0,
        "the proxy is never used"
    );

    // The variables are live: a trusted-endpoint client (search APIs, model servers)
    // does go through the proxy.
    let trusted = HttpClient::new(true, Duration::from_secs(2), 1 << 20).expect("client");
    let _ = trusted.get("http://api.example.com/search").await;
    assert!(
        proxy_connects.load(Ordering::SeqCst) >= 1,
        "trusted endpoints honour the proxy"
    );
}
