//! The web fetcher against a loopback server that fails in every way the web does:
//! each fault ends in its status, never a panic or a hang, and a per-run cache means a
//! page already read is never fetched again.
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
use std::time::{Duration, Instant};

use deepr_checkpoints::{FileArchive, ResponseCache};
use deepr_evidence::report::CallStatus;
use deepr_orchestrator::{Fetcher, SearchHit, SearchProvider, TextArchive};
use deepr_providers::{WebApi, WebCache, WebFetcher, WebSearch};

fn page(title: &str) -> String {
    format!("<html><head><title>{title}</title></head><body><article><h1>{title}</h1><p>{}</p></article></body></html>", "The rollback journal keeps the original page content so that an interrupted transaction can be rolled back. ".repeat(4))
}

/// Serves the fault table; returns the port and a request counter.
#[allow(clippy::too_many_lines)] // one stand-in web server: its routes, in one place
fn server() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let counter = Arc::clone(&counter);
            std::thread::spawn(move || {
                let mut buffer = [0u8; 4096];
                let n = stream.read(&mut buffer).unwrap_or(0);
                let request = String::from_utf8_lossy(&buffer[..n]).into_owned();
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
                if path != "/robots.txt" {
                    counter.fetch_add(1, Ordering::SeqCst);
                }
                let head = |status: &str, kind: &str, len: usize, extra: &str| {
                    format!("HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len}\r\n{extra}Connection: close\r\n\r\n")
                };
                match path.as_str() {
                    "/robots.txt" => {
                        let body = "User-agent: *\nDisallow: /private\n";
                        let _ = write!(
                            stream,
                            "{}{body}",
                            head("200 OK", "text/plain", body.len(), "")
                        );
                    }
                    "/ok" | "/private/x" => {
                        let body = page("Journal");
                        let _ = write!(
                            stream,
                            "{}{body}",
                            head("200 OK", "text/html; charset=utf-8", body.len(), "")
                        );
                    }
                    "/limited" => {
                        let _ = write!(
                            stream,
                            "{}",
                            head(
                                "429 Too Many Requests",
                                "text/plain",
                                0,
                                "Retry-After: 30\r\n"
                            )
                        );
                    }
                    "/forbidden" => {
                        let _ = write!(stream, "{}", head("403 Forbidden", "text/plain", 0, ""));
                    }
                    "/loop" => {
                        let _ = write!(
                            stream,
                            "{}",
                            head("302 Found", "text/plain", 0, "Location: /loop\r\n")
                        );
                    }
                    "/big" => {
                        let _ = write!(stream, "{}", head("200 OK", "text/plain", 50 << 20, ""));
                        let chunk = vec![b'a'; 1 << 20];
                        for _ in 0..50 {
                            if stream.write_all(&chunk).is_err() {
                                break;
                            }
                        }
                    }
                    "/drip" => {
                        let _ = write!(stream, "{}", head("200 OK", "text/plain", 1000, ""));
                        for _ in 0..100 {
                            if stream.write_all(b"x").is_err() {
                                break;
                            }
                            std::thread::sleep(Duration::from_millis(100));
                        }
                    }
                    "/truncated" => {
                        let _ = write!(stream, "{}short", head("200 OK", "text/plain", 5000, ""));
                    }
                    "/jswall" => {
                        let body = "<html><head><script>load()</script></head><body><div id=app></div></body></html>";
                        let _ = write!(
                            stream,
                            "{}{body}",
                            head("200 OK", "text/html", body.len(), "")
                        );
                    }
                    "/doc.pdf" => {
                        let body = tiny_pdf("The rollback journal is written before the commit.");
                        let _ = write!(
                            stream,
                            "{}",
                            head("200 OK", "application/pdf", body.len(), "")
                        );
                        let _ = stream.write_all(&body);
                    }
                    "/binary" => {
                        let _ = write!(
                            stream,
                            "{}",
                            head("200 OK", "application/octet-stream", 4, "")
                        );
                        let _ = stream.write_all(&[0, 1, 2, 3]);
                    }
                    "/latin1" => {
                        let body =
                            b"Le journal est \xe9crit avant la validation de la transaction.";
                        let _ = write!(
                            stream,
                            "{}",
                            head("200 OK", "text/plain; charset=iso-8859-1", body.len(), "")
                        );
                        let _ = stream.write_all(body);
                    }
                    _ => {
                        let _ = write!(stream, "{}", head("404 Not Found", "text/plain", 0, ""));
                    }
                }
            });
        }
    });
    (port, count)
}

fn hit(port: u16, path: &str) -> SearchHit {
    let url = format!("http://127.0.0.1:{port}{path}");
    SearchHit {
        doc_key: url.clone(),
        locator: url,
        title: path.into(),
        score: 0.0,
        snippet: String::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_ends_in_its_status() {
    let (port, count) = server();
    let state = tempfile::tempdir().expect("tempdir");
    let archive = Arc::new(FileArchive::open(state.path()).expect("archive"));
    let cache = WebCache {
        cache: Arc::new(ResponseCache::open(state.path()).expect("cache")),
        namespace: "run-1".into(),
    };
    let fetcher = WebFetcher::new(
        Arc::clone(&archive),
        vec![format!("127.0.0.1:{port}")],
        Duration::from_secs(3),
        10 << 20,
        4,
    )
    .expect("fetcher")
    .with_cache(cache);
    let cases: &[(&str, CallStatus)] = &[
        ("/ok", CallStatus::Ok),
        ("/latin1", CallStatus::Ok),
        ("/limited", CallStatus::RateLimited),
        ("/forbidden", CallStatus::AuthFailed),
        ("/loop", CallStatus::BadResponse),
        ("/big", CallStatus::BadResponse),
        ("/drip", CallStatus::Timeout),
        ("/truncated", CallStatus::BadResponse),
        ("/jswall", CallStatus::BadResponse),
        ("/binary", CallStatus::Skipped),
        ("/doc.pdf", CallStatus::Ok),
        ("/private/x", CallStatus::Skipped),
        ("/missing", CallStatus::BadResponse),
    ];
    for (path, want) in cases {
        let started = Instant::now();
        let outcome = fetcher.fetch(&hit(port, path)).await;
        assert_eq!(outcome.status, *want, "{path}: {:?}", outcome.detail);
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{path} is bounded in time"
        );
    }
    let latin = fetcher.fetch(&hit(port, "/latin1")).await;
    let text = archive
        .get(&latin.doc.expect("doc").content_sha256)
        .expect("archived");
    assert!(
        text.text.contains("écrit"),
        "decoded with the header's charset: {}",
        text.text
    );

    // Definitive answers are cached for the run: the same pages are not fetched again.
    let before = count.load(Ordering::SeqCst);
    for path in ["/ok", "/forbidden", "/binary"] {
        fetcher.fetch(&hit(port, path)).await;
    }
    assert_eq!(
        count.load(Ordering::SeqCst),
        before,
        "cached pages are not refetched"
    );
    // Transient failures are not cached: a rate-limited page is asked again.
    fetcher.fetch(&hit(port, "/limited")).await;
    assert_eq!(count.load(Ordering::SeqCst), before + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loopback_address_that_was_not_allowed_is_never_connected() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let connections = Arc::new(AtomicUsize::new(0));
    {
        let connections = Arc::clone(&connections);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                connections.fetch_add(1, Ordering::SeqCst);
                drop(stream);
            }
        });
    }
    let state = tempfile::tempdir().expect("tempdir");
    let archive = Arc::new(FileArchive::open(state.path()).expect("archive"));
    // Another port on the same host is allowed; this one is not.
    let fetcher = WebFetcher::new(
        archive,
        vec!["127.0.0.1:1".into()],
        Duration::from_secs(2),
        1 << 20,
        2,
    )
    .expect("fetcher");
    for url in [
        format!("http://127.0.0.1:{port}/x"),
        format!("http://localhost:{port}/x"),
        format!("http://[::ffff:127.0.0.1]:{port}/x"),
    ] {
        let outcome = fetcher
            .fetch(&SearchHit {
                doc_key: url.clone(),
                locator: url.clone(),
                title: String::new(),
                score: 0.0,
                snippet: String::new(),
            })
            .await;
        assert_eq!(
            outcome.status,
            CallStatus::Skipped,
            "{url}: {:?}",
            outcome.detail
        );
    }
    assert_eq!(connections.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn arxiv_requests_are_spaced_three_seconds_apart() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let times = Arc::new(std::sync::Mutex::new(Vec::new()));
    {
        let times = Arc::clone(&times);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                if let Ok(mut t) = times.lock() {
                    t.push(Instant::now());
                }
                let mut buffer = [0u8; 2048];
                let _ = stream.read(&mut buffer);
                let body =
                    r#"<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"></feed>"#;
                let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: application/atom+xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
            }
        });
    }
    let arxiv = WebSearch::new(
        WebApi::Arxiv,
        Some(&format!("http://127.0.0.1:{port}")),
        None,
        Duration::from_secs(5),
    )
    .expect("arxiv");
    // Both at once, as a retrieve step issues them: the limiter still spaces them.
    let issued = Instant::now();
    let (first, second) = tokio::join!(arxiv.search("a", 5), arxiv.search("b", 5));
    assert_eq!(first.status, CallStatus::NoResults);
    assert_eq!(second.status, CallStatus::NoResults);
    let times = times.lock().expect("times").clone();
    assert_eq!(times.len(), 2);
    // Measured from when both were issued: a busy machine can only delay when the
    // server notes a request, never make the second arrive before the limiter let it go.
    let last = times.iter().max().expect("two requests");
    assert!(
        last.duration_since(issued) >= Duration::from_millis(2900),
        "at most one arXiv request per 3 s: the second arrived {:?} after both were issued",
        last.duration_since(issued)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_run_refetches_with_a_conditional_get() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let conditional = Arc::new(AtomicUsize::new(0));
    {
        let conditional = Arc::clone(&conditional);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut buffer = [0u8; 4096];
                let n = stream.read(&mut buffer).unwrap_or(0);
                let request = String::from_utf8_lossy(&buffer[..n]).to_ascii_lowercase();
                if request.contains("if-none-match: \"v1\"") {
                    conditional.fetch_add(1, Ordering::SeqCst);
                    let _ = write!(
                        stream,
                        "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nConnection: close\r\n\r\n"
                    );
                } else if request.starts_with("get /robots.txt") {
                    let _ = write!(
                        stream,
                        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    );
                } else {
                    let body = page("Conditional");
                    let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nETag: \"v1\"\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
                }
            }
        });
    }
    let state = tempfile::tempdir().expect("tempdir");
    let archive = Arc::new(FileArchive::open(state.path()).expect("archive"));
    let responses = Arc::new(ResponseCache::open(state.path()).expect("cache"));
    let fetcher = |run: &str| {
        WebFetcher::new(
            Arc::clone(&archive),
            vec![format!("127.0.0.1:{port}")],
            Duration::from_secs(3),
            1 << 20,
            2,
        )
        .expect("fetcher")
        .with_cache(WebCache {
            cache: Arc::clone(&responses),
            namespace: run.into(),
        })
    };
    let first = fetcher("run-a").fetch(&hit(port, "/page")).await;
    assert_eq!(first.status, CallStatus::Ok);
    let second = fetcher("run-b").fetch(&hit(port, "/page")).await;
    assert_eq!(second.status, CallStatus::Ok, "{:?}", second.detail);
    assert_eq!(
        conditional.load(Ordering::SeqCst),
        1,
        "the second run asked with If-None-Match"
    );
    assert_eq!(
        second.doc.map(|d| d.content_sha256),
        first.doc.map(|d| d.content_sha256),
        "304: the archived text is reused"
    );
}

/// A minimal one-page PDF with a text layer, built with correct xref offsets.
fn tiny_pdf(text: &str) -> Vec<u8> {
    let content = format!("BT /F1 18 Tf 72 720 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_string(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_string(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pdf_text_is_read_in_a_contained_task() {
    use deepr_documents::Format;
    use deepr_providers::reading::read_off_runtime;
    let doc = read_off_runtime(
        tiny_pdf("The journal is written before the commit."),
        Format::Pdf,
    )
    .await
    .expect("pdf text");
    assert!(doc.text.contains("journal"), "{:?}", doc.text);
    for hostile in [
        b"%PDF-1.4\n1 0 obj << garbage".to_vec(),
        b"%PDF-".to_vec(),
        vec![0xff; 4096],
    ] {
        let result = read_off_runtime(hostile, Format::Pdf).await;
        assert!(
            result.is_err(),
            "a broken PDF is an error, never a panic or a hang"
        );
    }
}

/// Six pages of one host fetched at once, as a fetch step now does: the per-host rate
/// limit (2 per second, burst 2) spaces them, the global cap (2) bounds how many are in
/// flight — each page takes 1.2 s, so the rate limit alone would let a third start —
/// robots.txt is asked once, and every page still arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_fetches_keep_the_per_host_limit_and_the_global_cap() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let arrivals: Arc<std::sync::Mutex<Vec<Instant>>> = Arc::default();
    let in_flight = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let robots = Arc::new(AtomicUsize::new(0));
    {
        let (arrivals, in_flight, peak, robots) = (
            Arc::clone(&arrivals),
            Arc::clone(&in_flight),
            Arc::clone(&peak),
            Arc::clone(&robots),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let (arrivals, in_flight, peak, robots) = (
                    Arc::clone(&arrivals),
                    Arc::clone(&in_flight),
                    Arc::clone(&peak),
                    Arc::clone(&robots),
                );
                std::thread::spawn(move || {
                    let mut buffer = [0u8; 2048];
                    let n = stream.read(&mut buffer).unwrap_or(0);
                    let request = String::from_utf8_lossy(&buffer[..n]).into_owned();
                    if request.starts_with("GET /robots.txt") {
                        robots.fetch_add(1, Ordering::SeqCst);
                        let _ = write!(stream, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                        return;
                    }
                    if let Ok(mut a) = arrivals.lock() {
                        a.push(Instant::now());
                    }
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(1200));
                    let body = page("Concurrent");
                    let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
    }
    let state = tempfile::tempdir().expect("tempdir");
    let archive = Arc::new(FileArchive::open(state.path()).expect("archive"));
    let fetcher = Arc::new(
        WebFetcher::new(
            archive,
            vec![format!("127.0.0.1:{port}")],
            Duration::from_secs(5),
            1 << 20,
            2,
        )
        .expect("fetcher"),
    );
    let mut fetches = tokio::task::JoinSet::new();
    for i in 0..6 {
        let fetcher = Arc::clone(&fetcher);
        fetches.spawn(async move { fetcher.fetch(&hit(port, &format!("/page{i}"))).await });
    }
    let mut statuses = Vec::new();
    while let Some(outcome) = fetches.join_next().await {
        statuses.push(outcome.expect("task").status);
    }
    assert_eq!(statuses, vec![CallStatus::Ok; 6], "every page arrives");
    let mut arrivals = arrivals.lock().expect("arrivals").clone();
    arrivals.sort();
    assert_eq!(arrivals.len(), 6, "each page was requested once");
    let span = arrivals[5].duration_since(arrivals[0]);
    assert!(
        span >= Duration::from_millis(1900),
        "2 per second with a burst of 2: six requests span at least 2 s, not {span:?}"
    );
    assert_eq!(
        peak.load(Ordering::SeqCst),
        2,
        "the global cap holds, and is reached"
    );
    assert_eq!(
        robots.load(Ordering::SeqCst),
        1,
        "robots.txt is asked once per host"
    );
}
