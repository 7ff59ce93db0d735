//! Architecture invariant: stages (and the pure crates under them) have no I/O of their
//! own — they reach files, networks, processes and the environment only through the
//! provider traits. This test reads their sources and fails on a direct use.

use std::path::Path;

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
];

fn check(crate_dir: &str) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(crate_dir)
        .join("src");
    let mut offences = Vec::new();
    let mut stack = vec![src];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read source dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("read source");
                // Unit tests may use the file system for fixtures.
                let code = text.split("#[cfg(test)]").next().unwrap_or("");
                for word in FORBIDDEN {
                    if code.contains(word) {
                        offences.push(format!("{}: {word}", path.display()));
                    }
                }
            }
        }
    }
    offences
}

#[test]
fn stages_and_pure_crates_do_no_io_of_their_own() {
    let offences: Vec<String> = ["stages", "orchestrator", "evidence", "prompts", "settings"]
        .iter()
        .flat_map(|c| check(c))
        .collect();
    assert!(
        offences.is_empty(),
        "direct I/O outside providers: {offences:#?}"
    );
}
