//! The address guard, with name lookups injected: a public-looking name that resolves to
//! a private address, `--allow-host HOST:PORT` opening exactly that port (redirects
//! included), and a resolver that answers differently on its second lookup (proxies set
//! in the environment: `proxy.rs`, its own process). Every test shows the request was attempted (the lookup happened,
//! or the allowed port was reached) and counts connections on the ports that must stay
//! untouched.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

use std::future::Future;
use std::io::{Read, Write};
use std::net::{IpAddr, TcpListener};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use deepr_evidence::report::CallStatus;
use deepr_providers::http::{HostResolver, HttpClient};

/// A listener that counts connections and answers each with `response(port)`.
fn listener(response: fn(u16) -> String) -> (u16, Arc<AtomicUsize>) {
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
            let _ = stream.write_all(response(port).as_bytes());
        }
    });
    (port, count)
}

fn ok_page(_: u16) -> String {
    let body = "<html><body><p>Allowed.</p></body></html>";
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Resolves every name through a table, counting lookups; `then` answers from the
/// second lookup on (a rebinding name).
struct Table {
    first: IpAddr,
    then: IpAddr,
    lookups: AtomicUsize,
}

impl Table {
    fn fixed(ip: &str) -> Arc<Self> {
        let ip = ip.parse().expect("ip");
        Arc::new(Self {
            first: ip,
            then: ip,
            lookups: AtomicUsize::new(0),
        })
    }
}

impl HostResolver for Table {
    fn lookup(
        &self,
        _host: &str,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send>> {
        let n = self.lookups.fetch_add(1, Ordering::SeqCst);
        let ip = if n == 0 { self.first } else { self.then };
        Box::pin(async move { Ok(vec![ip]) })
    }
}

fn client(allow: Vec<String>, table: &Arc<Table>) -> HttpClient {
    HttpClient::with_resolver(
        false,
        allow,
        Duration::from_secs(2),
        1 << 20,
        Arc::clone(table) as Arc<dyn HostResolver>,
    )
    .expect("client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_looking_name_with_a_private_address_is_never_connected() {
    let (port, connects) = listener(ok_page);
    let table = Table::fixed("127.0.0.1");
    let guarded = client(vec![], &table);
    let error = guarded
        .get(&format!("http://docs.example.com:{port}/page"))
        .await
        .expect_err("refused");
    assert_eq!(error.status, CallStatus::Skipped, "{error}");
    assert_eq!(
        table.lookups.load(Ordering::SeqCst),
        1,
        "the request was attempted"
    );
    assert_eq!(connects.load(Ordering::SeqCst), 0, "never connected");

    // The same name opened by --allow-host: the lookup answers and the page arrives.
    let open = client(vec!["docs.example.com".into()], &table);
    let page = open
        .get(&format!("http://docs.example.com:{port}/page"))
        .await
        .expect("allowed");
    assert!(String::from_utf8_lossy(&page.body).contains("Allowed."));
    assert_eq!(connects.load(Ordering::SeqCst), 1);
}

fn redirect_to_refused(port: u16) -> String {
    // The allowed port answers with a redirect to the refused port (port + 1 is not
    // known here; the test's REFUSED static carries it).
    let target = REFUSED.load(Ordering::SeqCst);
    let _ = port;
    format!("HTTP/1.1 302 Found\r\nLocation: http://intranet.test:{target}/secret\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
}

static REFUSED: AtomicUsize = AtomicUsize::new(0);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_host_with_a_port_opens_exactly_that_port() {
    let (allowed, allowed_connects) = listener(ok_page);
    let (refused, refused_connects) = listener(ok_page);
    REFUSED.store(usize::from(refused), Ordering::SeqCst);
    let (redirecting, redirect_connects) = listener(redirect_to_refused);
    let table = Table::fixed("127.0.0.1");
    let scoped = client(
        vec![
            format!("intranet.test:{allowed}"),
            format!("intranet.test:{redirecting}"),
        ],
        &table,
    );
    let page = scoped
        .get(&format!("http://intranet.test:{allowed}/"))
        .await
        .expect("the named port is open");
    assert!(String::from_utf8_lossy(&page.body).contains("Allowed."));
    assert_eq!(allowed_connects.load(Ordering::SeqCst), 1);

    let error = scoped
        .get(&format!("http://intranet.test:{refused}/"))
        .await
        .expect_err("another port of the same name");
    assert_eq!(error.status, CallStatus::Skipped, "{error}");

    let error = scoped
        .get(&format!("http://intranet.test:{redirecting}/"))
        .await
        .expect_err("a redirect to another port");
    assert_eq!(
        redirect_connects.load(Ordering::SeqCst),
        1,
        "the redirect was served"
    );
    assert!(
        matches!(
            error.status,
            CallStatus::Skipped | CallStatus::BadResponse | CallStatus::Unreachable
        ),
        "{error}"
    );
    assert_eq!(
        refused_connects.load(Ordering::SeqCst),
        0,
        "the other port is never connected"
    );
    assert!(
        table.lookups.load(Ordering::SeqCst) >= 3,
        "every request was attempted"
    );

    // A literal address with a port is scoped the same way.
    let literal = client(vec![format!("127.0.0.1:{allowed}")], &table);
    assert!(literal
        .get(&format!("http://127.0.0.1:{allowed}/"))
        .await
        .is_ok());
    let error = literal
        .get(&format!("http://127.0.0.1:{refused}/"))
        .await
        .expect_err("literal, other port");
    assert_eq!(error.status, CallStatus::Skipped);
    assert_eq!(refused_connects.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checked_address_is_the_connected_address() {
    let (port, connects) = listener(ok_page);
    // First lookup: a public (unreachable here) address; later lookups: loopback.
    let table = Arc::new(Table {
        first: "198.18.0.1".parse().expect("ip"),
        then: "127.0.0.1".parse().expect("ip"),
        lookups: AtomicUsize::new(0),
    });
    let guarded = client(vec![], &table);
    let url = format!("http://rebind.example.com:{port}/");
    let first = guarded
        .get(&url)
        .await
        .expect_err("198.18.0.1 is not reachable here");
    assert_ne!(first.status, CallStatus::Ok);
    let second = guarded
        .get(&url)
        .await
        .expect_err("the rebound answer is refused");
    assert_eq!(second.status, CallStatus::Skipped, "{second}");
    assert_eq!(
        table.lookups.load(Ordering::SeqCst),
        2,
        "one lookup per request, none after the check"
    );
    assert_eq!(
        connects.load(Ordering::SeqCst),
        0,
        "loopback never connected"
    );
}
