//! The documentation keeps up with the binary: every command and every long flag that
//! `deepr --help` and each command's `--help` list (found from the help itself, nested
//! commands included) appears in `docs/*.md`; the README stays a short front page that
//! holds the exact quick-start command and the test command `.ci/run` runs; and every
//! relative link in the README and `docs/` leads to a file and heading that exist.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{deepr, root, stderr};

const QUICK_START: &str = "cargo run --release -- run \"How does SQLite guarantee atomic commits, and what changes in WAL mode?\" --corpus examples/sqlite-docs --out report.md";
const TEST_COMMAND: &str = "cargo test --workspace --locked";
const README_MAX_LINES: usize = 200;

/// `deepr PATH… --help`, which must succeed.
fn help(home: &Path, path: &[String]) -> String {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let output = deepr(home, &args);
    assert!(
        output.status.success(),
        "deepr {} failed: {}",
        args.join(" "),
        stderr(&output)
    );
    String::from_utf8(output.stdout).expect("help is UTF-8")
}

/// The commands a help text lists under `Commands:` (clap's own `help` left out).
fn subcommands(help: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut lines = help.lines().skip_while(|line| line.trim() != "Commands:");
    lines.next();
    for line in lines {
        if line.trim().is_empty() || !line.starts_with(' ') {
            break;
        }
        // A command's line starts at two spaces; its wrapped description goes deeper.
        if line.starts_with("  ") && !line[2..].starts_with(' ') {
            let name = line.split_whitespace().next().unwrap_or_default();
            if name != "help" {
                names.push(name.to_string());
            }
        }
    }
    names
}

fn is_flag_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

/// Every long flag (`--name`) a help text mentions, in its options or its prose.
fn long_flags(help: &str) -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    for (at, _) in help.match_indices("--") {
        if help[..at].chars().next_back().is_some_and(is_flag_char) {
            continue;
        }
        let name: String = help[at + 2..]
            .chars()
            .take_while(|&c| is_flag_char(c))
            .collect();
        let name = name.trim_end_matches('-');
        if name.starts_with(|c: char| c.is_ascii_lowercase()) {
            flags.insert(format!("--{name}"));
        }
    }
    flags
}

/// Does `text` hold `word` with no flag character glued to either end (`--llm` is not
/// found in `--llm-strong`, `deepr run` not in `deepr runs`)?
fn mentions(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_flag_char) && !after.is_some_and(is_flag_char)
    })
}

fn docs_pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.expect("read docs/").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

#[test]
fn every_command_and_flag_is_documented() {
    let home = tempfile::tempdir().expect("tempdir");
    let docs: String = docs_pages().iter().map(|page| read(page)).collect();
    let top = help(home.path(), &[]);
    // Every exit code docs/exit-codes.md lists is in `--help`, with its meaning.
    let table = read(&root().join("docs/exit-codes.md"));
    let documented: Vec<u32> = table
        .lines()
        .filter_map(|line| line.strip_prefix("| "))
        .flat_map(|row| row.split(" | ").next().unwrap_or_default().split(" / "))
        .filter_map(|code| code.trim().parse().ok())
        .collect();
    assert_eq!(documented, [0, 1, 2, 3, 4, 5, 6, 130, 143], "{table}");
    for code in documented {
        assert!(
            top.contains(&format!(" {code} ")) || top.contains(&format!(": {code} ")),
            "`deepr --help` lists no exit code {code}:\n{top}"
        );
    }
    for meaning in [
        "2 usage error",
        "5 a provider stayed unavailable",
        "6 a provider refused",
    ] {
        assert!(
            top.contains(meaning),
            "`deepr --help` lacks {meaning:?}:\n{top}"
        );
    }
    let commands = subcommands(&top);
    assert!(
        commands.len() >= 5,
        "found only {commands:?} under Commands: in `deepr --help`:\n{top}"
    );
    let mut missing = Vec::new();
    let mut flags_checked = 0;
    // Every command of the tree, nested ones included: (its path, its help).
    let mut queue: Vec<(Vec<String>, String)> = vec![(Vec::new(), top)];
    let mut visited = 0;
    while let Some((path, text)) = queue.pop() {
        visited += 1;
        let shown = std::iter::once("deepr")
            .chain(path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        if !path.is_empty() && !mentions(&docs, &shown) {
            missing.push(format!("command `{shown}`"));
        }
        for flag in long_flags(&text) {
            flags_checked += 1;
            if !mentions(&docs, &flag) {
                missing.push(format!("flag `{flag}` (from `{shown} --help`)"));
            }
        }
        for name in subcommands(&text) {
            let mut child = path.clone();
            child.push(name);
            let child_help = help(home.path(), &child);
            queue.push((child, child_help));
        }
    }
    println!("checked {visited} help texts, {flags_checked} flag mentions");
    assert!(
        missing.is_empty(),
        "docs/*.md never mention:\n  {}\n(document each in docs/usage.md or its subject's page)",
        missing.join("\n  ")
    );
}

#[test]
fn readme_is_short_and_keeps_its_commands() {
    let readme = read(&root().join("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines; keep it at most {README_MAX_LINES} and move detail to docs/"
    );
    for (what, command) in [("quick-start", QUICK_START), ("test", TEST_COMMAND)] {
        assert!(
            code_lines(&readme)
                .iter()
                .any(|line| line.trim() == command),
            "README.md has no code block line that is exactly the {what} command:\n{command}"
        );
    }
    // The report excerpt is the quick start's real report: every line of the README's
    // `markdown` blocks is a line of the golden snapshot `golden.rs` keeps.
    let snapshot = read(&root().join("cli/tests/snapshots/golden__readme_report.snap"));
    let report: BTreeSet<&str> = snapshot.lines().collect();
    let excerpt = markdown_blocks(&readme);
    assert!(!excerpt.is_empty(), "README.md shows no report excerpt");
    for line in excerpt.iter().filter(|line| !line.trim().is_empty()) {
        assert!(
            report.contains(line),
            "README.md's excerpt line is not in the golden report (update it from the snapshot):\n{line}"
        );
    }
    // `.ci/run` runs the README's test command: the two must not drift apart.
    let ci = read(&root().join(".ci/run"));
    assert!(
        ci.lines().any(|line| line.trim() == TEST_COMMAND),
        ".ci/run no longer runs the README's test command {TEST_COMMAND:?}"
    );
}

/// The lines inside fenced code blocks.
fn code_lines(markdown: &str) -> Vec<&str> {
    let mut inside = false;
    let mut lines = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
        } else if inside {
            lines.push(line);
        }
    }
    lines
}

/// The lines inside fenced ```` ```markdown ```` blocks.
fn markdown_blocks(markdown: &str) -> Vec<&str> {
    let mut inside = false;
    let mut lines = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside && line.trim() == "```markdown";
        } else if inside {
            lines.push(line);
        }
    }
    lines
}

/// GitHub's anchors of a markdown file's headings (outside code blocks).
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut inside = false;
    let mut found = BTreeSet::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
            continue;
        }
        if inside || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim().to_lowercase();
        let slug: String = title
            .chars()
            .filter(|&c| c.is_alphanumeric() || c == ' ' || c == '-' || c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        found.insert(slug);
    }
    found
}

/// Relative link targets (`](target)`) of a markdown file, outside code blocks.
fn links(markdown: &str) -> Vec<String> {
    let mut inside = false;
    let mut targets = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
            continue;
        }
        if inside {
            continue;
        }
        for (at, _) in line.match_indices("](") {
            let rest = &line[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if !target.contains("://") && !target.starts_with("mailto:") {
                targets.push(target.to_string());
            }
        }
    }
    targets
}

#[test]
fn documentation_links_lead_somewhere() {
    let mut files = vec![root().join("README.md")];
    files.extend(docs_pages());
    let index = read(&root().join("docs/README.md"));
    let front = read(&root().join("README.md"));
    let mut broken = Vec::new();
    for file in &files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if file.parent().is_some_and(|d| d.ends_with("docs")) && name != "README.md" {
            if !index.contains(&format!("]({name})")) {
                broken.push(format!("docs/README.md does not link docs/{name}"));
            }
            if !front.contains(&format!("](docs/{name}")) {
                broken.push(format!("README.md does not link docs/{name}"));
            }
        }
        let text = read(file);
        for target in links(&text) {
            let (path, anchor) = target.split_once('#').unwrap_or((target.as_str(), ""));
            let dest = match path {
                "" => file.clone(),
                _ => file.parent().expect("a folder").join(path),
            };
            if !dest.exists() {
                broken.push(format!("{}: {target} (no such file)", file.display()));
            } else if !anchor.is_empty()
                && dest.extension().is_some_and(|e| e == "md")
                && !anchors(&read(&dest)).contains(anchor)
            {
                broken.push(format!("{}: {target} (no such heading)", file.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "broken links:\n  {}",
        broken.join("\n  ")
    );
}
