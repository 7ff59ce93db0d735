//! `deepr mcp` driven by a client deepr did not write: the official MCP Python SDK
//! (PyPI `mcp`, which `.ci/run` installs) runs the scenarios of `mcp_client.py` against
//! the built binary — the research flow over stdio with progress, reading and
//! verifying; refusals (roots, symlinks, budget caps, bad arguments) as tool errors;
//! cancel and resume paying nothing twice; `kill -9` of the server mid-run and a new
//! server resuming to the uninterrupted report; the HTTP transport's bearer token; and
//! hostile JSON-RPC lines; and, with a fleet database, research queued for a worker and
//! read back. Without the SDK (or PostgreSQL) the tests skip, and fail under `CI=true`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::process::Command;

use common::{fixture_corpus, root};

/// Whether `program args` succeeds; `false` fails the test under `CI=true` (`.ci/run`
/// installs what it needs), else skips it saying `what` is missing.
fn available(program: &str, args: &[&str], what: &str) -> bool {
    let present = Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success());
    if !present {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but {what} (.ci/run provides it)"
        );
        eprintln!("skipped: {what}");
    }
    present
}

/// Whether `python3` can import the MCP SDK.
fn python_sdk_present() -> bool {
    available(
        "python3",
        // A submodule: a bare `import mcp` also succeeds on any folder named `mcp` on
        // the path (as the deepr-mcp crate's is, from the repository root).
        &["-c", "import mcp.client.stdio, anyio"],
        "python3 cannot import the MCP SDK (pip install mcp)",
    )
}

/// Runs one scenario of `mcp_client.py` in a fresh temp dir and checks it passed.
fn scenario(name: &str) {
    if !python_sdk_present() {
        return;
    }
    let work = tempfile::tempdir().expect("temp dir");
    let script = root().join("cli/tests/mcp_client.py");
    let output = Command::new("python3")
        .arg(&script)
        .arg(name)
        .env("DEEPR_BIN", env!("CARGO_BIN_EXE_deepr"))
        .env("WORK", work.path())
        .env("CORPUS", fixture_corpus())
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains(&format!("PASS {name}")),
        "scenario {name} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    // The scenario's checks ran (not an early, silent exit).
    assert!(
        stdout.lines().filter(|l| l.starts_with("ok: ")).count() >= 3,
        "{stdout}"
    );
}

#[test]
fn an_agent_researches_reads_and_verifies_through_mcp_alone() {
    scenario("flow");
}

#[test]
fn an_agent_reviews_a_plan_and_researches_it_as_edited() {
    scenario("plan");
}

#[test]
fn an_agent_asks_a_follow_up_and_refreshes_a_finished_run() {
    scenario("later");
}

#[test]
fn cancel_run_checkpoints_and_resume_run_pays_nothing_twice() {
    scenario("cancel");
}

#[test]
fn a_killed_server_leaves_a_run_a_new_server_resumes_to_the_same_report() {
    scenario("kill9");
}

#[test]
fn http_refuses_requests_without_the_bearer_token_and_serves_with_it() {
    scenario("http");
}

#[test]
fn hostile_json_rpc_lines_neither_crash_nor_stop_the_server() {
    scenario("malformed");
}

/// Whether the fleet tests' PostgreSQL answers.
fn postgres_present() -> bool {
    let admin = std::env::var("DEEPR_TEST_PG")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    available(
        "psql",
        &[admin.as_str(), "-qAt", "-c", "SELECT 1"],
        &format!("PostgreSQL at {admin} does not answer"),
    )
}

#[test]
fn with_a_fleet_database_research_is_queued_for_workers_and_read_back() {
    if postgres_present() {
        scenario("fleet");
    }
}
