//! Keys never leave the environment, end to end: with OPENAI_API_KEY, ANTHROPIC_API_KEY,
//! BRAVE_API_KEY and TAVILY_API_KEY set to distinctive values, runs against local
//! servers that echo every request (headers and body) back in their error bodies and
//! headers leave no trace of any key in any file of the state dir, the reports, logs,
//! journal and cache, `config show`, the `--json` events or stderr. The servers must
//! have received every key, so the test cannot pass by never sending one.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use common::{command, fixture_corpus, serve, stderr, HttpResponse};

const KEYS: [(&str, &str); 4] = [
    ("OPENAI_API_KEY", "sk-redact-openai-5d1e9a"),
    ("ANTHROPIC_API_KEY", "sk-ant-redact-77c3b0"),
    ("BRAVE_API_KEY", "brv-redact-41fa26"),
    ("TAVILY_API_KEY", "tvly-redact-9b08d4"),
];

/// Echoes each request into its answer: status by path (OpenAI 400, Anthropic 401,
/// Brave 401, Tavily 429), the whole request in the body and in a response header.
/// Returns the port and everything received.
fn echo_server() -> (u16, Arc<Mutex<String>>) {
    let received = Arc::new(Mutex::new(String::new()));
    let log = Arc::clone(&received);
    let port = serve(move |seen| {
        let request = format!("{}{}", seen.head, String::from_utf8_lossy(&seen.body));
        if let Ok(mut log) = log.lock() {
            log.push_str(&request);
        }
        let path = seen.path();
        let status = if path.contains("/chat/completions") {
            "400 Bad Request"
        } else if path.contains("/res/v1/web/search") || path.contains("/messages") {
            "401 Unauthorized"
        } else {
            "429 Too Many Requests"
        };
        let echoed = serde_json::json!({"error": {"message": format!("Incorrect request, you sent: {request}")}}).to_string();
        let header_echo: String = request
            .lines()
            .filter(|l| {
                let l = l.to_ascii_lowercase();
                l.starts_with("authorization")
                    || l.starts_with("x-api-key")
                    || l.starts_with("x-subscription-token")
            })
            .map(|l| l.replace(':', "=").trim().to_string())
            .collect::<Vec<_>>()
            .join("; ");
        HttpResponse {
            status: status.into(),
            headers: format!("Retry-After: 1\r\nX-Echo: {header_echo}\r\n"),
            content_type: "application/json".into(),
            body: echoed,
        }
    });
    (port, received)
}

fn with_keys(mut command: std::process::Command) -> std::process::Output {
    for (name, value) in KEYS {
        command.env(name, value);
    }
    command.output().expect("run deepr")
}

/// Every file under `dir`, as bytes.
fn files(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(files(&path));
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.push((path, bytes));
            }
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[test]
#[allow(clippy::too_many_lines)] // one end-to-end scenario, step by step
fn no_key_appears_in_anything_a_run_leaves() {
    let home = tempfile::tempdir().expect("tempdir");
    let h = home.path();
    let (port, received) = echo_server();
    let base = format!("http://127.0.0.1:{port}");
    let state = h.join("state");
    let s = state.to_str().expect("utf-8");
    let corpus = fixture_corpus();
    let config = h.join("deepr.toml");
    std::fs::write(&config, "[limits]\nmax_retries = 0\n").expect("config");
    let c = config.to_str().expect("utf-8");
    let mut outputs = Vec::new();

    // OpenAI-compatible model (400 with the request echoed: each step degrades, and
    // says why in the report) and the keyed searches.
    let openai_base = format!("{base}/v1");
    let out = h.join("openai.md");
    let run = with_keys(command(
        h,
        &[
            "--json",
            "--config",
            c,
            "--state-dir",
            s,
            "run",
            "How does the rollback journal work?",
            "--corpus",
            corpus.to_str().expect("utf-8"),
            "--sources",
            "corpus,brave,tavily",
            "--brave-url",
            &base,
            "--tavily-url",
            &base,
            "--llm",
            "openai:echo-model",
            "--llm-base-url",
            &openai_base,
            "--depth",
            "quick",
            "--out",
            out.to_str().expect("utf-8"),
            "--run-id",
            "openai",
        ],
    ));
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let report = std::fs::read_to_string(h.join("openai.md")).expect("report");
    assert!(
        report.contains("HTTP 400"),
        "the server's echo reached the report"
    );
    outputs.push(run);

    // Anthropic (401 with the request echoed).
    let out = h.join("anthropic.md");
    let run = with_keys(command(
        h,
        &[
            "--config",
            c,
            "--state-dir",
            s,
            "run",
            "How does the rollback journal work?",
            "--corpus",
            corpus.to_str().expect("utf-8"),
            "--llm",
            "anthropic:echo-model",
            "--llm-base-url",
            &base,
            "--depth",
            "quick",
            "--out",
            out.to_str().expect("utf-8"),
            "--run-id",
            "anthropic",
        ],
    ));
    assert_eq!(run.status.code(), Some(6), "{}", stderr(&run));
    outputs.push(run);

    for args in [
        vec!["--config", c, "config", "show"],
        vec!["--state-dir", s, "runs", "list"],
        vec!["--state-dir", s, "runs", "show", "openai"],
    ] {
        outputs.push(with_keys(command(h, &args)));
    }

    let received = received.lock().map(|r| r.clone()).unwrap_or_default();
    let left = files(h);
    assert!(
        left.len() > 10,
        "the runs left their files ({})",
        left.len()
    );
    for (name, key) in KEYS {
        assert!(
            received.contains(key),
            "{name} was sent, so an echo could leak it"
        );
        for (path, bytes) in &left {
            assert!(!contains(bytes, key), "{name} found in {}", path.display());
        }
        for output in &outputs {
            assert!(!contains(&output.stdout, key), "{name} found on stdout");
            assert!(!contains(&output.stderr, key), "{name} found on stderr");
        }
    }
}
