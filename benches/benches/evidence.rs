//! Evidence-layer benchmarks: sentence splitting throughput, corpus indexing cold and
//! warm, and a BM25 query over the bundled corpus.
// A benchmark harness: a failed setup aborts the benchmark with its reason.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use deepr_checkpoints::FileArchive;
use deepr_documents::{read, Format, Limits};
use deepr_evidence::split_sentences;
use deepr_providers::CorpusIndex;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/sqlite-docs")
}

fn corpus_bytes() -> u64 {
    std::fs::read_dir(corpus())
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn sentences(c: &mut Criterion) {
    let html = std::fs::read(corpus().join("atomiccommit.html")).expect("bundled page");
    let text = read(&html, Format::Html, &Limits::default())
        .expect("extract")
        .text;
    let mut group = c.benchmark_group("sentences");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("split_atomiccommit", |b| {
        b.iter(|| split_sentences(&text).len())
    });
    group.finish();
}

fn indexing(c: &mut Criterion) {
    let mut group = c.benchmark_group("corpus_index");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(corpus_bytes()));
    group.bench_function("cold", |b| {
        b.iter_batched(
            || tempfile::tempdir().expect("tempdir"),
            |dir| {
                let archive = FileArchive::open(dir.path()).expect("archive");
                CorpusIndex::open(&corpus(), dir.path(), &archive)
                    .expect("index")
                    .1
                    .extracted
                    .len()
            },
            BatchSize::PerIteration,
        )
    });
    let warm = tempfile::tempdir().expect("tempdir");
    let archive = FileArchive::open(warm.path()).expect("archive");
    let _ = CorpusIndex::open(&corpus(), warm.path(), &archive).expect("index");
    group.bench_function("warm", |b| {
        b.iter(|| {
            CorpusIndex::open(&corpus(), warm.path(), &archive)
                .expect("index")
                .1
                .reused
                .len()
        })
    });
    group.finish();

    let (index, _) = CorpusIndex::open(&corpus(), warm.path(), &archive).expect("index");
    c.bench_function("bm25_query", |b| {
        b.iter(|| {
            index
                .search("atomic commit rollback journal", 10)
                .expect("search")
                .len()
        })
    });
}

criterion_group!(benches, sentences, indexing);
criterion_main!(benches);
