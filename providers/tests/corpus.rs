//! Integration tests of the local corpus index: multilingual retrieval, bad files,
//! incremental reuse, determinism, and the bundled SQLite documentation corpus.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use deepr_checkpoints::FileArchive;
use deepr_evidence::report::CallStatus;
use deepr_orchestrator::{Fetcher, SearchHit, SearchProvider, TextArchive};
use deepr_providers::{CorpusError, CorpusFetcher, CorpusIndex, CorpusScan, CorpusSearch};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn sqlite_docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/sqlite-docs")
}

/// Runs a future that never waits (the corpus adapters do no real I/O awaits).
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

fn open(corpus: &Path, state: &Path) -> Result<(CorpusIndex, CorpusScan), CorpusError> {
    let archive = FileArchive::open(state).expect("archive");
    CorpusIndex::open(corpus, state, &archive)
}

fn keys(hits: &[SearchHit]) -> Vec<&str> {
    hits.iter().map(|h| h.doc_key.as_str()).collect()
}

fn write(dir: &Path, rel: &str, bytes: impl AsRef<[u8]>) {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, bytes).expect("write fixture");
}

/// Every path under `dir` (relative), sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| {
            e.path()
                .strip_prefix(dir)
                .expect("prefix")
                .display()
                .to_string()
        })
        .collect();
    out.sort();
    out
}

#[test]
fn chinese_and_russian_queries_find_their_documents() {
    let state = tempfile::tempdir().expect("tempdir");
    let corpus = fixtures().join("multilingual");
    let (index, report) = open(&corpus, state.path()).expect("open");
    assert_eq!(
        report.extracted,
        [
            "ru/cooking.md",
            "ru/journal.md",
            "zh/database.md",
            "zh/weather.md"
        ]
    );
    assert!(
        index.doc("README.md").is_none(),
        "a root README.md is not a document"
    );

    let hits = index.search("事务日志", 10).expect("search zh");
    assert_eq!(keys(&hits).first(), Some(&"zh/database.md"), "{hits:?}");
    assert!(!keys(&hits).contains(&"zh/weather.md"), "{hits:?}");
    assert_eq!(
        keys(&index.search("明天天气怎么样", 10).expect("zh 2")).first(),
        Some(&"zh/weather.md")
    );

    // Neither inflection appears in the document ("журнал", "транзакций" do).
    let hits = index
        .search("журналов транзакциями", 10)
        .expect("search ru");
    assert_eq!(keys(&hits).first(), Some(&"ru/journal.md"), "{hits:?}");
    assert!(!keys(&hits).contains(&"ru/cooking.md"), "{hits:?}");
    assert_eq!(
        keys(&index.search("борщом", 10).expect("ru 2")),
        ["ru/cooking.md"]
    );

    let meta = index.doc("zh/database.md").expect("meta");
    assert_eq!(meta.title, "数据库事务日志");
    assert_eq!(meta.locator, "zh/database.md");
    assert!((meta.authority - 0.8).abs() < 1e-12);
    assert_eq!(hits[0].title, "Журнал транзакций");
    assert!(hits[0].score > 0.0);
}

#[test]
fn query_text_never_errors_and_noise_returns_nothing() {
    let state = tempfile::tempdir().expect("tempdir");
    let (index, _) = open(&fixtures().join("multilingual"), state.path()).expect("open");
    for query in [
        "",
        "   ",
        "\"",
        "AND(",
        "title:x OR",
        "* ? ~ ^2 [a TO b]",
        "the of и 的",
        "\u{0}",
    ] {
        let hits = index.search(query, 5);
        assert!(hits.is_ok(), "{query:?} → {hits:?}");
    }
    assert!(index
        .search("the of и 的", 5)
        .expect("stopwords")
        .is_empty());
    assert!(index.search("AND(", 5).expect("syntax").is_empty());
    assert!(index.search("事务", 0).expect("limit 0").is_empty());
    assert!(index.search("zzzzqqq", 5).expect("no match").is_empty());
}

#[test]
fn provider_and_fetcher_adapters() {
    let state = tempfile::tempdir().expect("tempdir");
    let (index, _) = open(&fixtures().join("multilingual"), state.path()).expect("open");
    let index = Arc::new(index);
    let search = CorpusSearch(index.clone());
    assert_eq!(search.name(), "corpus");

    let outcome = block_on(search.search("天气", 3));
    assert_eq!(outcome.status, CallStatus::Ok);
    assert_eq!(keys(&outcome.hits), ["zh/weather.md"]);
    let empty = block_on(search.search("zzzzqqq", 3));
    assert_eq!(empty.status, CallStatus::NoResults);
    assert!(empty.hits.is_empty());

    let fetcher = CorpusFetcher(index.clone());
    let fetched = block_on(fetcher.fetch(&outcome.hits[0]));
    assert_eq!(fetched.status, CallStatus::Ok);
    let meta = fetched.doc.expect("doc");
    assert_eq!(meta, index.doc("zh/weather.md").expect("meta"));
    let archive = FileArchive::open(state.path()).expect("archive");
    let text = archive.get(&meta.content_sha256).expect("archived text");
    assert!(text.text.contains("明天北京天气晴朗"));

    let mut unknown = outcome.hits[0].clone();
    unknown.doc_key = "nope.md".into();
    let missing = block_on(fetcher.fetch(&unknown));
    assert_eq!(missing.status, CallStatus::BadResponse);
    assert!(missing.doc.is_none() && missing.detail.is_some());

    let docs = index.documents();
    let doc_keys: Vec<&str> = docs.iter().map(|d| d.doc_key.as_str()).collect();
    assert_eq!(
        doc_keys,
        [
            "ru/cooking.md",
            "ru/journal.md",
            "zh/database.md",
            "zh/weather.md"
        ]
    );
}

#[test]
fn bad_files_are_skipped_with_reasons() {
    let corpus = tempfile::tempdir().expect("tempdir");
    let state = tempfile::tempdir().expect("tempdir");
    let c = corpus.path();
    write(
        c,
        "good.md",
        "# Good\n\nThe journal makes commits atomic.\n",
    );
    write(c, "sub/also-good.txt", "Rollback journal notes.\n");
    write(c, "x.txt", b"PK\x03\x04\x00\x00binary\x00");
    write(
        c,
        "bad-utf8.md",
        b"# Title\n\nvalid then \xff\xfe invalid\n",
    );
    write(c, "empty.txt", "");
    write(c, "blank.md", " \n\t\n");
    write(
        c,
        "page.html",
        "<html><body><script>var x = 1;</script></body></html>",
    );
    std::os::unix::fs::symlink(c.join("does-not-exist.md"), c.join("dangling.md"))
        .expect("symlink");
    std::fs::create_dir(c.join("real-dir")).expect("mkdir");
    std::os::unix::fs::symlink(c.join("real-dir"), c.join("dir-link.md")).expect("symlink");
    std::fs::create_dir(c.join("y.md")).expect("dir named like a document");
    write(c, ".hidden.md", "# Hidden\n");
    write(c, ".git/notes.md", "# Hidden folder\n");
    write(c, "image.png", b"\x89PNG\r\n");

    let (index, report) = open(c, state.path()).expect("open");
    assert_eq!(report.extracted, ["good.md", "sub/also-good.txt"]);
    let reasons: std::collections::BTreeMap<&str, &str> = report
        .skipped
        .iter()
        .map(|(p, r)| (p.as_str(), r.as_str()))
        .collect();
    let expect = [
        ("x.txt", "binary"),
        ("bad-utf8.md", "invalid UTF-8"),
        ("empty.txt", "no readable text"),
        ("blank.md", "no readable text"),
        ("page.html", "no readable text"),
        ("dangling.md", "a broken link"),
        ("dir-link.md", "a link to a folder"),
        ("image.png", "unsupported file type (.png)"),
    ];
    for (path, reason) in expect {
        let got = reasons
            .get(path)
            .unwrap_or_else(|| panic!("{path} not skipped: {report:?}"));
        assert!(
            got.contains(reason),
            "{path}: {got:?} should mention {reason:?}"
        );
    }
    assert_eq!(report.skipped.len(), expect.len(), "{:?}", report.skipped);
    assert_eq!(
        keys(&index.search("commits", 5).expect("search")),
        ["good.md"]
    );
    assert_eq!(index.documents().len(), 2);
}

#[test]
fn corpus_errors() {
    let state = tempfile::tempdir().expect("tempdir");
    let only_bad = tempfile::tempdir().expect("tempdir");
    write(only_bad.path(), "x.txt", b"\x00\x01\x02");
    write(only_bad.path(), "y.md", b"\xff\xff");
    write(only_bad.path(), "z.txt", "");
    assert!(matches!(
        open(only_bad.path(), state.path()),
        Err(CorpusError::NoUsableDocuments(_))
    ));

    let empty = tempfile::tempdir().expect("tempdir");
    assert!(matches!(
        open(empty.path(), state.path()),
        Err(CorpusError::Empty(_))
    ));
    write(empty.path(), "README.md", "# Only a provenance note\n");
    assert!(matches!(
        open(empty.path(), state.path()),
        Err(CorpusError::Empty(_))
    ));
    // An unsupported file is listed as skipped, so nothing usable is left.
    write(empty.path(), "data.bin", "a,b\n");
    assert!(matches!(
        open(empty.path(), state.path()),
        Err(CorpusError::NoUsableDocuments(_))
    ));

    let missing = state.path().join("no-such-corpus");
    assert_eq!(
        open(&missing, state.path()).err(),
        Some(CorpusError::NotFound(missing))
    );

    let file = state.path().join("file.md");
    std::fs::write(&file, "# not a folder").expect("write");
    assert!(matches!(
        open(&file, state.path()),
        Err(CorpusError::NotADirectory(_))
    ));

    // The index must never be written inside the corpus.
    let corpus = tempfile::tempdir().expect("tempdir");
    write(corpus.path(), "a.md", "# A\n\ntext\n");
    let inside = corpus.path().join("state");
    let archive_dir = tempfile::tempdir().expect("tempdir");
    let archive = FileArchive::open(archive_dir.path()).expect("archive");
    let err = CorpusIndex::open(corpus.path(), &inside, &archive).expect_err("state inside corpus");
    assert!(matches!(err, CorpusError::Index(_)), "{err}");
    assert!(!inside.exists());

    for err in [
        CorpusError::Empty(PathBuf::from("/c")),
        CorpusError::NoUsableDocuments(PathBuf::from("/c")),
        CorpusError::NotFound(PathBuf::from("/c")),
    ] {
        let message = err.to_string();
        assert!(
            !message.contains('\n') && message.contains(';'),
            "{message}"
        );
    }
}

#[test]
fn reopening_reuses_unchanged_documents() {
    let corpus = tempfile::tempdir().expect("tempdir");
    let state = tempfile::tempdir().expect("tempdir");
    let c = corpus.path();
    write(c, "a.md", "# Alpha\n\nThe rollback journal.\n");
    write(c, "b.md", "# Beta\n\nWrite-ahead logging.\n");
    write(c, "sub/c.txt", "Gamma: checkpoints move pages.\n");
    let before = tree(c);

    let (_, first) = open(c, state.path()).expect("first open");
    assert_eq!(first.extracted, ["a.md", "b.md", "sub/c.txt"]);
    assert!(first.reused.is_empty() && first.removed.is_empty() && first.skipped.is_empty());

    let (_, second) = open(c, state.path()).expect("second open");
    assert!(second.extracted.is_empty(), "{second:?}");
    assert_eq!(second.reused, ["a.md", "b.md", "sub/c.txt"]);

    write(
        c,
        "b.md",
        "# Beta\n\nWrite-ahead logging, revised: snapshots.\n",
    );
    let (index, third) = open(c, state.path()).expect("third open");
    assert_eq!(third.extracted, ["b.md"]);
    assert_eq!(third.reused, ["a.md", "sub/c.txt"]);
    assert_eq!(
        keys(&index.search("snapshot", 5).expect("search")),
        ["b.md"]
    );
    drop(index);

    std::fs::remove_file(c.join("a.md")).expect("rm");
    let (index, fourth) = open(c, state.path()).expect("fourth open");
    assert_eq!(fourth.removed, ["a.md"]);
    assert!(fourth.extracted.is_empty());
    assert!(index.search("rollback", 5).expect("search").is_empty());
    assert!(index.doc("a.md").is_none());

    // A file turning bad leaves the index (reported as skipped, not removed).
    write(c, "sub/c.txt", b"\x00binary now");
    let (index, fifth) = open(c, state.path()).expect("fifth open");
    assert_eq!(fifth.skipped.len(), 1);
    assert!(fifth.removed.is_empty());
    assert!(index.search("checkpoints", 5).expect("search").is_empty());
    drop(index);

    let mut expected = before.clone();
    expected.retain(|p| p != "a.md");
    assert_eq!(tree(c), expected, "nothing was written inside the corpus");
    let corpus_dirs: Vec<_> = std::fs::read_dir(state.path().join("corpus"))
        .expect("corpus dir")
        .collect();
    assert_eq!(corpus_dirs.len(), 1);
}

#[test]
fn lost_archive_texts_and_damaged_indexes_are_rebuilt() {
    let corpus = tempfile::tempdir().expect("tempdir");
    let state = tempfile::tempdir().expect("tempdir");
    let c = corpus.path();
    write(c, "a.md", "# Alpha\n\nThe rollback journal.\n");
    write(c, "b.md", "# Beta\n\nWrite-ahead logging.\n");
    open(c, state.path()).expect("first open");

    // An archived text went missing: only that document is extracted again.
    let (index, _) = open(c, state.path()).expect("open");
    let sha = index.doc("a.md").expect("a").content_sha256;
    drop(index);
    std::fs::remove_file(
        state
            .path()
            .join("archive")
            .join(&sha[..2])
            .join(format!("{sha}.txt")),
    )
    .expect("rm");
    let (_, report) = open(c, state.path()).expect("reopen");
    assert_eq!(report.extracted, ["a.md"]);
    assert_eq!(report.reused, ["b.md"]);

    // Damage the index folder: it is rebuilt rather than failing.
    let index_dir = std::fs::read_dir(state.path().join("corpus"))
        .expect("corpus dir")
        .next()
        .expect("one index")
        .expect("entry")
        .path();
    std::fs::write(index_dir.join("tantivy").join("meta.json"), "{ not json").expect("damage");
    let (index, report) = open(c, state.path()).expect("rebuilt");
    assert_eq!(report.extracted, ["a.md", "b.md"]);
    assert_eq!(keys(&index.search("journal", 5).expect("search")), ["a.md"]);
    drop(index);

    std::fs::write(index_dir.join("manifest.json"), "garbage").expect("damage manifest");
    let (_, report) = open(c, state.path()).expect("rebuilt again");
    assert_eq!(report.extracted, ["a.md", "b.md"]);
    let (_, report) = open(c, state.path()).expect("then reused");
    assert_eq!(report.reused, ["a.md", "b.md"]);
}

#[test]
fn results_are_deterministic_and_ties_break_by_doc_key() {
    let corpus = tempfile::tempdir().expect("tempdir");
    let c = corpus.path();
    let twin = "# Savepoints\n\nA savepoint marks a point in a transaction for partial rollback.\n";
    write(c, "z-twin.md", twin);
    write(c, "m-twin.md", twin);
    write(
        c,
        "a-other.md",
        "# Journal\n\nThe rollback journal holds original page content.\n",
    );
    write(
        c,
        "q/deep.txt",
        "Transactions commit atomically; a journal or WAL makes that possible.\n",
    );
    write(c, "zh.md", "# 事务\n\n事务的回滚依赖日志。\n");

    let state_a = tempfile::tempdir().expect("tempdir");
    let state_b = tempfile::tempdir().expect("tempdir");
    let (a, _) = open(c, state_a.path()).expect("open a");
    let (b, _) = open(c, state_b.path()).expect("open b");
    for query in [
        "savepoint",
        "rollback",
        "journal transaction",
        "事务 日志",
        "commit",
    ] {
        let hits_a = a.search(query, 10).expect("a");
        let hits_b = b.search(query, 10).expect("b");
        assert_eq!(hits_a, hits_b, "{query}");
        for pair in hits_a.windows(2) {
            assert!(
                pair[0].score > pair[1].score
                    || (pair[0].score == pair[1].score && pair[0].doc_key < pair[1].doc_key),
                "{query}: {pair:?}"
            );
        }
    }
    let savepoint = a.search("savepoint", 10).expect("savepoint");
    assert_eq!(keys(&savepoint), ["m-twin.md", "z-twin.md"]);
    assert_eq!(savepoint[0].score, savepoint[1].score);
    assert_eq!(
        keys(&a.search("savepoint", 1).expect("limit 1")),
        ["m-twin.md"]
    );
}

#[test]
fn incremental_updates_score_like_a_fresh_build() {
    let corpus = tempfile::tempdir().expect("tempdir");
    let c = corpus.path();
    write(
        c,
        "a.md",
        "# Alpha\n\nThe rollback journal holds original pages.\n",
    );
    write(
        c,
        "b.md",
        "# Beta\n\nWrite-ahead logging appends pages to the WAL.\n",
    );
    write(
        c,
        "c.md",
        "# Gamma\n\nCheckpoints copy WAL pages back into the database.\n",
    );
    let updated = tempfile::tempdir().expect("tempdir");
    open(c, updated.path()).expect("first");
    write(
        c,
        "b.md",
        "# Beta\n\nWrite-ahead logging appends changed pages to the WAL file.\n",
    );
    write(c, "d.md", "# Delta\n\nA journal, a WAL and pages again.\n");
    open(c, updated.path()).expect("second");
    std::fs::remove_file(c.join("a.md")).expect("rm");
    let (incremental, _) = open(c, updated.path()).expect("third");

    let fresh_state = tempfile::tempdir().expect("tempdir");
    let (fresh, report) = open(c, fresh_state.path()).expect("fresh");
    assert_eq!(report.extracted, ["b.md", "c.md", "d.md"]);
    for query in ["pages", "wal journal", "checkpoint database", "beta"] {
        assert_eq!(
            incremental.search(query, 10).expect("inc"),
            fresh.search(query, 10).expect("fresh"),
            "{query}"
        );
    }
}

#[test]
fn bundled_sqlite_corpus() {
    let state = tempfile::tempdir().expect("tempdir");
    let corpus = sqlite_docs();
    let started = Instant::now();
    let (index, report) = open(&corpus, state.path()).expect("open bundled corpus");
    eprintln!(
        "bundled corpus: {} extracted, {} skipped in {:?}",
        report.extracted.len(),
        report.skipped.len(),
        started.elapsed()
    );
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    assert_eq!(report.extracted.len(), 72);
    assert!(index.doc("README.md").is_none());
    assert!(!report.extracted.iter().any(|p| p == "README.md"));

    let atomic = index
        .search("atomic commit rollback journal", 5)
        .expect("search");
    assert!(
        keys(&atomic)[..3].contains(&"atomiccommit.html"),
        "{:?}",
        keys(&atomic)
    );
    let wal = index
        .search("write-ahead log checkpoint", 5)
        .expect("search");
    assert!(keys(&wal)[..3].contains(&"wal.html"), "{:?}", keys(&wal));

    // Extraction quality: the archived text of atomiccommit.html is the article.
    let archive = FileArchive::open(state.path()).expect("archive");
    let meta = index.doc("atomiccommit.html").expect("atomiccommit");
    let text = archive.get(&meta.content_sha256).expect("archived");
    assert!(
        text.text.len() > 5_000,
        "only {} bytes extracted",
        text.text.len()
    );
    assert!(
        text.text
            .contains("Atomic commit means that either all database changes"),
        "article body missing"
    );
    let head: String = text.text.chars().take(400).collect();
    for noise in [
        "function ",
        "Search Documentation",
        "gMsg",
        "Small. Fast. Reliable.",
    ] {
        assert!(
            !text.text.contains(noise),
            "site chrome {noise:?} in archived text; starts {head:?}"
        );
    }
}

/// Prints cold and warm open times of the bundled corpus:
/// `cargo test -p deepr-providers --test corpus -- --ignored --nocapture`.
#[test]
#[ignore]
fn timing_bundled_corpus() {
    let state = tempfile::tempdir().expect("tempdir");
    let corpus = sqlite_docs();
    let started = Instant::now();
    let (_, cold) = open(&corpus, state.path()).expect("cold");
    let cold_time = started.elapsed();
    let started = Instant::now();
    let (index, warm) = open(&corpus, state.path()).expect("warm");
    let warm_time = started.elapsed();
    let started = Instant::now();
    for _ in 0..100 {
        index
            .search("atomic commit rollback journal", 10)
            .expect("search");
    }
    let search_time = started.elapsed() / 100;
    eprintln!(
        "cold: {} extracted in {cold_time:?}; warm: {} reused in {warm_time:?}; search: {search_time:?}",
        cold.extracted.len(),
        warm.reused.len()
    );
    let archive = FileArchive::open(state.path()).expect("archive");
    for doc in index.documents() {
        let text = archive.get(&doc.content_sha256).expect("archived");
        eprintln!("{:>8} {:<24} {}", text.text.len(), doc.doc_key, doc.title);
    }
}
