//! The sentence-embedding re-ranker end to end: with the real all-MiniLM-L6-v2
//! (`DEEPR_TEST_EMBED_MODEL`) a run re-ranks every subquestion's candidates, says so,
//! verifies, caches its embeddings and is deterministic; without a model it ranks by
//! words and says so; a folder named but unusable is a usage error.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

use std::path::Path;

mod common;
use common::{above_run_details, command, fixture_corpus, stderr, test_embed_model};

const TOPIC: &str = "How does the rollback journal protect a transaction?";

fn run(home: &Path, model: Option<&Path>, out: &str) -> std::process::Output {
    run_in(home, "state", model, out, &[])
}

/// `deepr run TOPIC` on the fixture corpus in state folder `state`, with `extra` flags.
fn run_in(
    home: &Path,
    state: &str,
    model: Option<&Path>,
    out: &str,
    extra: &[&str],
) -> std::process::Output {
    let corpus = fixture_corpus();
    let mut args = vec![
        "--state-dir",
        state,
        "run",
        TOPIC,
        "--corpus",
        corpus.to_str().unwrap(),
        "--out",
        out,
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let mut cmd = command(home, &args);
    if let Some(model) = model {
        cmd.env("DEEPR_EMBED_MODEL", model);
    }
    cmd.output().unwrap()
}

fn files_under(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .map(|e| e.unwrap().path())
        .map(|p| if p.is_dir() { files_under(&p) } else { 1 })
        .sum()
}

#[test]
fn the_model_reranks_every_subquestion_and_the_report_verifies() {
    let Some(model) = test_embed_model() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let first = run(home.path(), Some(&model), "one.md");
    assert!(first.status.success(), "{}", stderr(&first));
    let report = std::fs::read_to_string(home.path().join("one.md")).unwrap();
    assert!(
        report.contains("re-ranked by meaning with all-MiniLM-L6-v2 (run locally, no tokens)."),
        "{report}"
    );
    assert!(!report.contains("Re-ranking failed"), "{report}");

    let mut doctor = command(home.path(), &["doctor"]);
    let doctor = doctor.env("DEEPR_EMBED_MODEL", &model).output().unwrap();
    let said = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        said.contains("re-ranker: all-MiniLM-L6-v2 (bert-mean-t128-v2/"),
        "{said}"
    );

    // Embeddings are cached by content hash; a second run on the same corpus computes
    // none again and writes the same report above its run details.
    let cache = home.path().join("state/cache/embed");
    let cached = files_under(&cache);
    assert!(cached > 10, "embeddings cached: {cached}");
    let second = run(home.path(), Some(&model), "two.md");
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(files_under(&cache), cached, "nothing new embedded");
    assert_eq!(
        above_run_details(&home.path().join("one.md")),
        above_run_details(&home.path().join("two.md"))
    );

    let verify = command(home.path(), &["--state-dir", "state", "verify", "one.md"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&verify.stdout);
    assert!(
        verify.status.success() && said.contains("PASS"),
        "{said}{}",
        stderr(&verify)
    );
}

#[test]
fn without_a_model_the_report_says_words_only_and_a_bad_folder_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let plain = run(home.path(), None, "plain.md");
    assert!(plain.status.success(), "{}", stderr(&plain));
    let report = std::fs::read_to_string(home.path().join("plain.md")).unwrap();
    assert!(
        report.contains("no sentence-embedding model was found, so none was re-ranked by meaning."),
        "{report}"
    );

    let doctor = command(home.path(), &["doctor"]).output().unwrap();
    let said = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        said.contains("re-ranker: none (candidates ranked by words only"),
        "{said}"
    );

    let empty = home.path().join("not-a-model");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("config.json"), "{}").unwrap();
    let refused = run(home.path(), Some(&empty), "refused.md");
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let message = stderr(&refused);
    assert!(
        message.contains("DEEPR_EMBED_MODEL") && message.contains("tokenizer.json is missing"),
        "{message}"
    );
    assert!(!home.path().join("refused.md").exists());
}

/// Run `TOPIC` as `run_id` in a state folder of its own (no answer cached by another
/// run), stopped by its token budget before most steps ran.
fn run_stopped_by_budget(home: &Path, model: &Path, run_id: &str) {
    let out = format!("{run_id}.md");
    let stopped = run_in(
        home,
        run_id,
        Some(model),
        &out,
        &["--run-id", run_id, "--max-tokens", "900"],
    );
    assert_eq!(stopped.status.code(), Some(4), "{}", stderr(&stopped));
}

fn resume(home: &Path, run_id: &str, model_env: &str) -> std::process::Output {
    command(
        home,
        &[
            "--state-dir",
            run_id,
            "--quiet",
            "resume",
            run_id,
            "--max-tokens",
            "1000000",
        ],
    )
    .env("DEEPR_EMBED_MODEL", model_env)
    .output()
    .unwrap()
}

#[test]
fn a_resume_ranks_with_the_model_the_run_began_with() {
    let Some(model) = test_embed_model() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    // A model folder of this test's own (links to the model's files), to take away.
    let own = home.path().join("own-model");
    let link_model = || {
        std::fs::create_dir_all(&own).unwrap();
        for entry in std::fs::read_dir(&model).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                std::os::unix::fs::symlink(&path, own.join(path.file_name().unwrap())).unwrap();
            }
        }
    };
    link_model();
    let whole = run(home.path(), Some(&own), "whole.md");
    assert!(whole.status.success(), "{}", stderr(&whole));
    let expected = above_run_details(&home.path().join("whole.md"));
    assert!(expected.contains("re-ranked by meaning with"), "{expected}");

    // The environment now says "no model": the run still ranks with the one it began
    // with, and ends as the uninterrupted run did.
    run_stopped_by_budget(home.path(), &own, "kept");
    let resumed = resume(home.path(), "kept", "off");
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(above_run_details(&home.path().join("kept.md")), expected);

    // The run's model is gone: the resume goes on (nothing paid twice, nothing left
    // "running"); steps that must rank again keep their word order and the report says
    // why, naming the folder.
    run_stopped_by_budget(home.path(), &own, "gone");
    std::fs::remove_dir_all(&own).unwrap();
    let resumed = resume(home.path(), "gone", "off");
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let report = std::fs::read_to_string(home.path().join("gone.md")).unwrap();
    assert!(report.contains("Re-ranking failed for"), "{report}");
    assert!(
        report.contains("own-model") && report.contains("cannot be used now"),
        "{report}"
    );
    assert!(report.contains("--retry-degraded"), "{report}");

    // The model back, `--retry-degraded` ranks those steps again: the report is the
    // uninterrupted run's.
    link_model();
    let retried = command(
        home.path(),
        &[
            "--state-dir",
            "gone",
            "--quiet",
            "resume",
            "gone",
            "--retry-degraded",
        ],
    )
    .env("DEEPR_EMBED_MODEL", "off")
    .output()
    .unwrap();
    assert!(retried.status.success(), "{}", stderr(&retried));
    assert_eq!(above_run_details(&home.path().join("gone.md")), expected);
}
