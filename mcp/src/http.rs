//! `deepr mcp --http`: the streamable HTTP transport on a loopback address (another
//! only with `--bind`), every request carrying `Authorization: Bearer $DEEPR_MCP_TOKEN`
//! (checked before MCP sees it: 401 otherwise), bodies bounded to
//! [`MAX_REQUEST_BYTES`]. Without a token the server refuses to start.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{header, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use crate::server::DeeprServer;
use deepr_session::Failure;

/// The shortest token accepted.
const MIN_TOKEN_CHARS: usize = 16;

/// The largest request body read (a JSON-RPC call is a few kilobytes); a longer one is
/// cut off and refused, so no client can make the server buffer without bound.
const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// The token every request must carry, from `DEEPR_MCP_TOKEN`.
pub fn token_from_env() -> Result<String, String> {
    match std::env::var("DEEPR_MCP_TOKEN") {
        Ok(token) if token.trim().chars().count() >= MIN_TOKEN_CHARS => Ok(token.trim().to_string()),
        Ok(_) => Err(format!("DEEPR_MCP_TOKEN is shorter than {MIN_TOKEN_CHARS} characters; set a long random token (e.g. `openssl rand -hex 32`)")),
        Err(_) => Err("--http needs DEEPR_MCP_TOKEN set to a bearer token clients send (e.g. `export DEEPR_MCP_TOKEN=$(openssl rand -hex 32)`); without one HTTP does not start".into()),
    }
}

/// `--http PORT` or `--http HOST:PORT` (loopback), or another address with `--bind IP`.
pub fn listen_address(http: &str, bind: Option<&str>) -> Result<SocketAddr, String> {
    let addr = match http.parse::<u16>() {
        Ok(port) => SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port),
        Err(_) => http.parse::<SocketAddr>().map_err(|_| {
            format!("--http {http:?} is not a port or HOST:PORT; pass e.g. --http 127.0.0.1:8765")
        })?,
    };
    match bind {
        Some(ip) => {
            let ip: IpAddr = ip.parse().map_err(|_| format!("--bind {ip:?} is not an IP address; pass e.g. --bind 0.0.0.0"))?;
            Ok(SocketAddr::new(ip, addr.port()))
        }
        None if addr.ip().is_loopback() => Ok(addr),
        None => Err(format!("--http {http} is not a loopback address; the server listens on 127.0.0.1 unless --bind IP says otherwise")),
    }
}

type Body = BoxBody<Bytes, Infallible>;

fn unauthorized() -> Response<Body> {
    let mut response = Response::new(
        Full::new(Bytes::from_static(
            b"missing or wrong bearer token (Authorization: Bearer $DEEPR_MCP_TOKEN)\n",
        ))
        .boxed(),
    );
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    response
}

/// 413, for a body declared longer than [`MAX_REQUEST_BYTES`] (an undeclared one is cut
/// off there while it is read).
fn too_large() -> Response<Body> {
    let mut response =
        Response::new(Full::new(Bytes::from_static(b"request body over 4 MiB\n")).boxed());
    *response.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
    response
}

/// The request's `Content-Length`, if it declares one.
fn declared_length(request: &Request<Incoming>) -> Option<usize> {
    request
        .headers()
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether the request carries the token (compared in constant time).
fn authorized(request: &Request<Incoming>, token: &str) -> bool {
    let Some(value) = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some((scheme, given)) = value.split_once(' ') else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer")
        && given.len() == token.len()
        && given
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// Serves until SIGINT/SIGTERM.
pub async fn serve(handler: DeeprServer, addr: SocketAddr, token: String) -> Result<(), Failure> {
    let say = Arc::clone(&handler.shared.say);
    let mut config = StreamableHttpServerConfig::default();
    if !addr.ip().is_loopback() {
        // Bound beyond loopback on purpose (--bind): any Host may reach it; the token guards it.
        config = config.disable_allowed_hosts();
    }
    let service: StreamableHttpService<DeeprServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        deepr_session::usage(format!("cannot listen on {addr}: {e}; pick another port"))
    })?;
    let bound = listener.local_addr().unwrap_or(addr);
    say(&format!(
        "deepr: MCP server on http://{bound}/mcp (bearer token required)"
    ));
    let token: Arc<str> = token.into();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    say(&format!("deepr: accept failed: {e}"));
                    continue;
                }
            },
            () = deepr_session::signals::first_signal() => return Ok(()),
        };
        let (service, token) = (service.clone(), Arc::clone(&token));
        let connection_say = Arc::clone(&say);
        tokio::spawn(async move {
            let handle = service_fn(move |request: Request<Incoming>| {
                let (service, token) = (service.clone(), Arc::clone(&token));
                async move {
                    if !authorized(&request, &token) {
                        return Ok::<_, Infallible>(unauthorized());
                    }
                    if declared_length(&request).is_some_and(|n| n > MAX_REQUEST_BYTES) {
                        return Ok(too_large());
                    }
                    let request = request.map(|body| Limited::new(body, MAX_REQUEST_BYTES));
                    Ok(service.handle(request).await)
                }
            });
            if let Err(e) = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), handle)
                .await
            {
                connection_say(&format!("deepr: HTTP connection from {peer}: {e}"));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::listen_address;

    #[test]
    fn http_listens_on_loopback_unless_bind_says_otherwise() {
        assert_eq!(
            listen_address("8765", None).map(|a| a.to_string()),
            Ok("127.0.0.1:8765".into())
        );
        assert!(listen_address("0.0.0.0:8765", None)
            .unwrap_err()
            .contains("--bind"));
        assert_eq!(
            listen_address("8765", Some("0.0.0.0")).map(|a| a.to_string()),
            Ok("0.0.0.0:8765".into())
        );
        assert!(listen_address("eighty", None).is_err());
    }
}
