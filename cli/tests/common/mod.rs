//! Helpers shared by the binary's integration tests: launching `deepr` with HOME and
//! XDG dirs inside a temp dir, and the fixture corpus.
#![allow(dead_code)]

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
        .env_remove("BRAVE_API_KEY")
        .env_remove("TAVILY_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("NO_COLOR", "1");
    command
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
