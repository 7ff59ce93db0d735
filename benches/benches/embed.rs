//! The sentence-embedding re-ranker's cost: 45 real sentences of the bundled corpus
//! (one subquestion's re-rank pool) embedded cold (never seen: every iteration changes
//! them by a prefix) and cached (the same texts again: served from memory). Needs the
//! model folder in `DEEPR_EMBED_MODEL` or `DEEPR_TEST_EMBED_MODEL`; says so and
//! measures nothing without it.
// A benchmark harness: a failed setup aborts the benchmark with its reason.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use deepr_documents::{read, Format, Limits};
use deepr_evidence::split_sentences;
use deepr_providers::LocalEmbedder;

const POOL: usize = 45;

fn pool() -> Vec<String> {
    let page =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/sqlite-docs/atomiccommit.html");
    let html = std::fs::read(page).expect("bundled page");
    let text = read(&html, Format::Html, &Limits::default())
        .expect("extract")
        .text;
    split_sentences(&text)
        .iter()
        .filter_map(|s| s.text(&text))
        .filter(|s| (30..=600).contains(&s.chars().count()))
        .take(POOL)
        .map(str::to_string)
        .collect()
}

fn embed(c: &mut Criterion) {
    let Some(dir) = ["DEEPR_EMBED_MODEL", "DEEPR_TEST_EMBED_MODEL"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .find(|d| d.join("model.safetensors").is_file())
    else {
        eprintln!(
            "embed bench: set DEEPR_EMBED_MODEL to an all-MiniLM-L6-v2 folder; nothing measured"
        );
        return;
    };
    let model = LocalEmbedder::open(&dir, None).expect("model folder");
    let texts = pool();
    model.embed_blocking(&texts).expect("embed"); // loads the weights
    let mut group = c.benchmark_group("embed");
    group.sample_size(10);
    group.throughput(Throughput::Elements(texts.len() as u64));
    let mut round = 0_u64;
    group.bench_function("pool_of_45_cold", |b| {
        b.iter(|| {
            round += 1;
            let fresh: Vec<String> = texts.iter().map(|t| format!("{round} {t}")).collect();
            model.embed_blocking(&fresh).expect("embed").len()
        })
    });
    group.bench_function("pool_of_45_cached", |b| {
        b.iter(|| model.embed_blocking(&texts).expect("embed").len())
    });
    group.finish();
}

criterion_group!(benches, embed);
criterion_main!(benches);
