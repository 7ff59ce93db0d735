//! Architecture invariant: stages (and the pure crates under them) have no I/O of their
//! own — they reach files, networks, processes, the environment and the wall clock only
//! through the provider traits. This test reads every production line of their sources
//! (everything but `#[cfg(test)]` items, wherever they sit in a file) and fails on a
//! direct use.
//!
//! Time: production code reads time and sleeps only through the `Clock` it is given
//! (`orchestrator/src/clock.rs`, the one file that touches a real clock), never
//! `Instant`, `SystemTime`, tokio's timers or a blocking sleep.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

use std::path::Path;

mod common;

use common::production_code;

const FORBIDDEN: &[&str] = &[
    "std::fs",
    "std::net",
    "std::process",
    "std::env",
    "tokio::fs",
    "tokio::net",
    "tokio::process",
    "File::open",
    "File::create",
    "SystemTime",
    "std::time::Instant",
    "time::{Duration, Instant}",
    "time::{Instant",
    "thread::sleep",
    "chrono::",
    "Instant::now",
    "tokio::time::Instant",
    "time::sleep",
    "time::timeout",
];

/// The one file allowed to touch a real clock: the clock itself.
const CLOCK_FILE: &str = "orchestrator/src/clock.rs";

/// The crates whose production code must do no I/O.
const PURE_CRATES: &[&str] = &[
    "stages",
    "documents",
    "orchestrator",
    "evidence",
    "prompts",
    "tasks",
    "settings",
];

fn check(crate_dir: &str) -> (Vec<String>, usize) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(crate_dir)
        .join("src");
    let mut offences = Vec::new();
    let mut files = 0;
    let mut stack = vec![src];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read source dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files += 1;
                if path.ends_with(CLOCK_FILE) || common::is_test_module(&path) {
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("read source");
                let code = production_code(&text);
                for word in FORBIDDEN {
                    if code.contains(word) {
                        offences.push(format!("{}: {word}", path.display()));
                    }
                }
            }
        }
    }
    (offences, files)
}

#[test]
fn stages_and_pure_crates_do_no_io_of_their_own() {
    let mut offences = Vec::new();
    for crate_dir in PURE_CRATES {
        let (found, files) = check(crate_dir);
        assert!(files > 0, "{crate_dir}: no source files read");
        offences.extend(found);
    }
    assert!(
        offences.is_empty(),
        "direct I/O outside providers: {offences:#?}"
    );
}

#[test]
fn code_after_a_test_module_is_still_checked() {
    let source = "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn t() { let _ = std::fs::read(\"x\"); }\n}\nfn b() { std::env::var(\"K\"); }\n";
    let code = production_code(source);
    assert!(!code.contains("std::fs"), "test module removed: {code}");
    assert!(code.contains("std::env"), "code after it kept: {code}");
    let gated_use = "#[cfg(test)]\nuse std::fs;\nfn c() { std::process::exit(0) }\n";
    let code = production_code(gated_use);
    assert!(
        !code.contains("std::fs") && code.contains("std::process"),
        "{code}"
    );
}
