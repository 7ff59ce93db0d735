//! Document reading benchmarks: indexing throughput per format, cold (read, archive,
//! index from nothing) and warm (reopen unchanged: hash and reuse), on the fictional
//! share of `test_data/share` generated in each format (MB/s of files on disk); and
//! reading mail and chat (`.eml`, `.mbox`, Slack, Mattermost) from the mail share of
//! `test_data/mailshare` without an index.
// A benchmark harness: a failed setup aborts the benchmark with its reason.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use deepr_checkpoints::FileArchive;
use deepr_documents::writers::write;
use deepr_documents::Format;
use deepr_providers::CorpusIndex;

/// How many copies of the share's sources make one format's corpus (so each corpus
/// is large enough to time).
const COPIES: usize = 4;

/// Every text source of the share.
fn sources() -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../test_data/share/docs")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("share sources").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "txt") {
                out.push(std::fs::read_to_string(&path).expect("source"));
            }
        }
    }
    out.sort();
    out
}

/// A corpus of every source rendered as `format` (spreadsheets take the sheet
/// sources), `COPIES` times; its size in bytes.
fn corpus_in(format: Format, dir: &Path) -> u64 {
    let ext = match format {
        Format::Markdown => "md",
        other => other.as_str(),
    };
    let mut bytes = 0;
    for copy in 0..COPIES {
        for (i, source) in sources().iter().enumerate() {
            let is_sheet = source.contains("--- sheet:");
            if is_sheet != (format == Format::Xlsx) {
                continue;
            }
            let rendered = write(source, format).expect("renders");
            bytes += rendered.len() as u64;
            std::fs::write(dir.join(format!("doc-{copy}-{i}.{ext}")), rendered).expect("write");
        }
    }
    bytes
}

fn indexing_by_format(c: &mut Criterion) {
    let formats = [
        Format::Markdown,
        Format::Html,
        Format::Pdf,
        Format::Docx,
        Format::Pptx,
        Format::Xlsx,
    ];
    let mut group = c.benchmark_group("index_by_format");
    group.sample_size(10);
    for format in formats {
        let corpus = tempfile::tempdir().expect("tempdir");
        let size = corpus_in(format, corpus.path());
        group.throughput(Throughput::Bytes(size));
        group.bench_function(format!("{}/cold", format.as_str()), |b| {
            b.iter_batched(
                || tempfile::tempdir().expect("tempdir"),
                |state| {
                    let archive = FileArchive::open(state.path()).expect("archive");
                    let (_, report) =
                        CorpusIndex::open(corpus.path(), state.path(), &archive).expect("index");
                    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
                    report.extracted.len()
                },
                BatchSize::PerIteration,
            )
        });
        let warm = tempfile::tempdir().expect("tempdir");
        let archive = FileArchive::open(warm.path()).expect("archive");
        let _ = CorpusIndex::open(corpus.path(), warm.path(), &archive).expect("index");
        group.bench_function(format!("{}/warm", format.as_str()), |b| {
            b.iter(|| {
                CorpusIndex::open(corpus.path(), warm.path(), &archive)
                    .expect("index")
                    .1
                    .reused
                    .len()
            })
        });
    }
    group.finish();
}

/// The mail share's sources of one format (`test_data/mailshare`), rendered.
fn mail_files(ext: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut stack =
        vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../test_data/mailshare/docs")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)
            .expect("mail share sources")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(&format!(".{ext}.txt")) {
                let source = std::fs::read_to_string(&path).expect("source");
                let format = Format::from_extension(ext).expect("a format");
                out.push(write(&source, format).expect("renders"));
            }
        }
    }
    out
}

/// Reading mail and chat (no index): every document of each file, MB/s of files.
fn reading_mail_and_chat(c: &mut Criterion) {
    let mut group = c.benchmark_group("read_mail_chat");
    group.sample_size(20);
    for ext in ["eml", "mbox", "zip", "jsonl"] {
        // Enough copies of the share's files of this format to time.
        let files: Vec<Vec<u8>> = mail_files(ext).into_iter().cycle().take(200).collect();
        let size: u64 = files.iter().map(|f| f.len() as u64).sum();
        let format = Format::from_extension(ext).expect("a format");
        group.throughput(Throughput::Bytes(size));
        group.bench_function(format.as_str(), |b| {
            b.iter(|| {
                files
                    .iter()
                    .map(|bytes| {
                        deepr_documents::read_parts(
                            bytes,
                            format,
                            &deepr_documents::Limits::default(),
                        )
                        .expect("reads")
                        .len()
                    })
                    .sum::<usize>()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, indexing_by_format, reading_mail_and_chat);
criterion_main!(benches);
