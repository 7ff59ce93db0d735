//! Code a newcomer can live in, checked over every crate of the workspace:
//! - no import cycle between the files of one crate (a file that names `crate::a` or
//!   `super::a` depends on `a`'s file; the module graph must be acyclic), so each file
//!   can be read bottom-up;
//! - no source file over [`MAX_LINES`] production lines (test modules — inline, or a
//!   file declared `#[cfg(test)] mod x;` — and comment lines excluded): split a file by
//!   job before it grows past it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod common;

const MAX_LINES: usize = 500;

const CRATES: &[&str] = &[
    "evidence",
    "documents",
    "orchestrator",
    "prompts",
    "tasks",
    "heuristic",
    "stages",
    "checkpoints",
    "providers",
    "settings",
    "benches",
    "fleet",
    "session",
    "evaluation",
    "mcp",
    "worker",
    "cli",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `source` without its `#[cfg(test)]` items and without comment lines (doc links
/// included: they are not dependencies).
fn production_code(source: &str) -> String {
    common::production_code(source)
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `.rs` file under `dir`, with its module path (`[]` for the crate root,
/// `["web", "search"]` for `web/search.rs` or `web/search/mod.rs`).
fn modules(src: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read source dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).expect("under src");
            let mut parts: Vec<String> = relative
                .iter()
                .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
                parts.clear();
            }
            out.push((path, parts));
        }
    }
    out.sort();
    out
}

/// The identifiers of a path after a `crate::` or `super::…` prefix, resolved to an
/// absolute module path from `here`.
fn referenced_paths(code: &str, here: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for (at, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        // Only a path start: not `deepr_crate::` or `my_super::`.
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let mut base: Vec<String> = if code[at..].starts_with("crate::") {
            Vec::new()
        } else {
            here.to_vec()
        };
        let mut rest = &code[at..];
        if rest.starts_with("crate::") {
            rest = &rest["crate::".len()..];
        }
        while let Some(after) = rest.strip_prefix("super::") {
            base.pop();
            rest = after;
        }
        for segment in rest.split("::") {
            let ident: String = segment
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if ident.is_empty() {
                break;
            }
            base.push(ident.clone());
            if ident.len() != segment.len() {
                break;
            }
        }
        out.push(base);
    }
    out
}

/// Strongly connected components of more than one file (petgraph's Tarjan).
fn cycles(edges: &BTreeMap<usize, BTreeSet<usize>>, nodes: usize) -> Vec<Vec<usize>> {
    let mut graph = petgraph::graph::DiGraph::<(), ()>::new();
    let index: Vec<_> = (0..nodes).map(|_| graph.add_node(())).collect();
    for (from, targets) in edges {
        for to in targets {
            graph.add_edge(index[*from], index[*to], ());
        }
    }
    petgraph::algo::tarjan_scc(&graph)
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| component.into_iter().map(|n| n.index()).collect())
        .collect()
}

/// The import cycles among one crate's files, as lists of file names.
fn crate_cycles(src: &Path) -> Vec<Vec<String>> {
    let files = modules(src);
    let by_path: BTreeMap<Vec<String>, usize> = files
        .iter()
        .enumerate()
        .map(|(i, (_, m))| (m.clone(), i))
        .collect();
    let mut edges: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for (i, (path, module)) in files.iter().enumerate() {
        let code = production_code(&std::fs::read_to_string(path).expect("read source"));
        for mut target in referenced_paths(&code, module) {
            // The deepest prefix of the path that is a file of this crate.
            while !target.is_empty() && !by_path.contains_key(&target) {
                target.pop();
            }
            if let Some(&j) = by_path.get(&target) {
                // The crate root only declares modules and re-exports: not an edge.
                if j != i && !target.is_empty() && !module.starts_with(&target) {
                    edges.entry(i).or_default().insert(j);
                }
            }
        }
    }
    cycles(&edges, files.len())
        .into_iter()
        .map(|component| {
            let mut names: Vec<String> = component
                .into_iter()
                .map(|i| {
                    files[i]
                        .0
                        .strip_prefix(src)
                        .unwrap_or(&files[i].0)
                        .display()
                        .to_string()
                })
                .collect();
            names.sort();
            names
        })
        .collect()
}

#[test]
fn no_file_of_a_crate_is_in_an_import_cycle() {
    let mut found = Vec::new();
    for name in CRATES {
        for cycle in crate_cycles(&root().join(name).join("src")) {
            found.push(format!("{name}: {}", cycle.join(" ⇄ ")));
        }
    }
    assert!(found.is_empty(), "import cycles: {found:#?}");
}

#[test]
fn the_cycle_finder_finds_a_planted_cycle() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\nmod c;\n").expect("write");
    std::fs::write(src.join("a.rs"), "use crate::b::thing;\n").expect("write");
    std::fs::write(src.join("b.rs"), "pub fn thing() { super::a::x(); }\n").expect("write");
    std::fs::write(
        src.join("c.rs"),
        "use crate::a;\n#[cfg(test)]\nmod tests { use crate::c; }\n",
    )
    .expect("write");
    assert_eq!(
        crate_cycles(src),
        [vec!["a.rs".to_string(), "b.rs".to_string()]]
    );
}

#[test]
fn a_file_its_parent_declares_under_cfg_test_is_test_code() {
    let src = root();
    assert!(common::is_test_module(
        &src.join("stages/src/score/tests.rs")
    ));
    assert!(common::is_test_module(
        &src.join("documents/src/formats/pdf/limits_tests.rs")
    ));
    assert!(!common::is_test_module(
        &src.join("stages/src/score/stems.rs")
    ));
    assert!(!common::is_test_module(&src.join("stages/src/lib.rs")));
}

#[test]
fn no_source_file_is_over_the_line_limit() {
    let mut over = Vec::new();
    let mut checked = 0;
    for name in CRATES {
        for (path, _) in modules(&root().join(name).join("src")) {
            checked += 1;
            if common::is_test_module(&path) {
                continue; // test code, however long
            }
            let code = production_code(&std::fs::read_to_string(&path).expect("read source"));
            let lines = code.lines().count();
            let relative = path
                .strip_prefix(root())
                .unwrap_or(&path)
                .display()
                .to_string();
            if lines > MAX_LINES {
                over.push(format!("{relative}: {lines} production lines"));
            }
        }
    }
    assert!(checked > 50, "only {checked} files read");
    assert!(
        over.is_empty(),
        "split these files (limit {MAX_LINES}): {over:#?}"
    );
}
