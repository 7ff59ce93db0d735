//! The real sentence-embedding model (all-MiniLM-L6-v2 from `DEEPR_TEST_EMBED_MODEL`):
//! it loads, its vectors are unit length and rank by meaning, and its disk cache is
//! used and survives a damaged entry.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)] // test code

use std::path::PathBuf;

use deepr_orchestrator::SentenceEmbedder;
use deepr_providers::LocalEmbedder;

fn model_dir() -> Option<PathBuf> {
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

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[tokio::test]
async fn vectors_rank_by_meaning_and_are_cached_on_disk() {
    let Some(dir) = model_dir() else { return };
    let cache = tempfile::tempdir().unwrap();
    let model = LocalEmbedder::open(&dir, Some(cache.path())).unwrap();
    assert!(
        model.model_id().starts_with("bert-mean-t128-v2/"),
        "{}",
        model.model_id()
    );
    let texts: Vec<String> = [
        "Will my data survive if the power fails during a write?",
        "A transaction that commits is preserved across a sudden loss of electricity.",
        "The query planner chooses an index for each table in a join.",
        "",
    ]
    .map(String::from)
    .to_vec();
    let vectors = model.embed(&texts).await.unwrap();
    assert_eq!(vectors.len(), 4);
    assert_eq!(vectors[0].len(), 384);
    for v in &vectors[..3] {
        let norm = dot(v, v).sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "unit length, got {norm}");
    }
    let related = dot(&vectors[0], &vectors[1]);
    let unrelated = dot(&vectors[0], &vectors[2]);
    assert!(
        related > unrelated + 0.1,
        "the durability sentence is nearer the question ({related}) than the planner one ({unrelated})"
    );

    // Every text has a cache file; a fresh instance reads them instead of computing.
    let files: Vec<PathBuf> = walk(cache.path());
    assert_eq!(files.len(), 4, "{files:?}");
    // A damaged entry is ignored and rewritten, never returned.
    std::fs::write(&files[0], b"not a vector").unwrap();
    let again = LocalEmbedder::open(&dir, Some(cache.path())).unwrap();
    let cached = again.embed(&texts).await.unwrap();
    for (a, b) in cached.iter().zip(&vectors) {
        assert!(dot(a, b) > 0.9999, "same vector from cache or recompute");
    }
    assert_eq!(std::fs::read(&files[0]).unwrap().len(), 384 * 4);
}

#[tokio::test]
async fn a_damaged_weights_file_is_an_error_not_a_panic() {
    let Some(dir) = model_dir() else { return };
    let broken = tempfile::tempdir().unwrap();
    for file in ["config.json", "tokenizer.json"] {
        std::fs::copy(dir.join(file), broken.path().join(file)).unwrap();
    }
    std::fs::write(broken.path().join("model.safetensors"), b"truncated").unwrap();
    let model = LocalEmbedder::open(broken.path(), None).unwrap();
    let error = model.embed(&["a sentence".to_string()]).await.unwrap_err();
    assert!(error.to_string().contains("model.safetensors"), "{error}");
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}
