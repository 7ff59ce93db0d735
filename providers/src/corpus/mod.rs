//! Local corpus search: a folder of documents in any format `deepr-documents` reads
//! (Markdown, text, HTML, PDF, DOCX, PPTX, XLSX/ODS/CSV, ODT/ODP, EPUB), indexed with
//! tantivy and served through the orchestrator's `SearchProvider` and `Fetcher` (`adapters.rs`).
//!
//! # Layout
//!
//! The index of a corpus lives in `state_dir/corpus/<key>/`, where `<key>` is the
//! first 16 hex digits of the BLAKE3 hash of the corpus folder's canonical path;
//! nothing is ever written inside the corpus. The folder holds `manifest.json` (which
//! file was indexed from which bytes, and what text was archived for it) and
//! `tantivy/` (the inverted index). Each document's extracted text goes to the
//! shared content-addressed archive ([`FileArchive`]); the index does not store it.
//!
//! # Incremental updates
//!
//! Every open reads every file and hashes its bytes (BLAKE3); modification times are
//! never consulted. A file whose hash matches the manifest and whose text is still
//! archived is reused as is; a new or changed file is extracted, archived and
//! re-indexed; a file that disappeared is removed. The index is committed, and the
//! manifest rewritten (temp file + rename), only when something changed; a change
//! also merges the index into one segment without deleted documents, so scores after
//! any update history equal those of a fresh build. An index
//! folder that cannot be opened, was built with another schema or analyzer, or does
//! not agree with its manifest is rebuilt from scratch.
//!
//! # Bad files
//!
//! Unsupported types, encrypted or scanned PDFs, malformed or too complex files (each
//! reader is bounded in time and memory), unreadable or empty files, links leaving the
//! folder (unless followed) and files over [`MAX_FILE_BYTES`] are skipped with a reason
//! ([`CorpusScan::skipped`]); they never fail the open. A text, Markdown, CSV or log
//! file over [`MAX_TEXT_HEAD_BYTES`] is read in part — its first bytes, cut at a line
//! end — and, like every document a reader read in part (a PDF's pages past its
//! limits, a sheet's rows past the row limit), listed with what was read
//! ([`CorpusScan::partial`]). The archive holds exactly the text read, and the
//! manifest keys such a file by the part read and the file's size, so a resumed run
//! reads the same text. Hidden files and folders, and `README.md` at the corpus
//! root (the provenance note of a bundled corpus), are not documents.
//!
//! # Ranking
//!
//! Queries are analyzed with the index's own analyzer (see [`crate::analyzer`]) and
//! become an OR of term queries over body and title (title ×2), scored by BM25. There
//! is no query syntax, so no user text can fail to parse. Ties are broken by
//! `doc_key`, so results never depend on segment layout.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use deepr_checkpoints::FileArchive;
use deepr_documents::Format;
use deepr_orchestrator::{DocMeta, SearchHit};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{IndexReader, TantivyDocument, Term};
use thiserror::Error;

mod adapters;
mod files;
mod index_store;
#[cfg(test)]
mod read_in_part_tests;
mod update;

use crate::analyzer::{MultiScriptTokenizer, ANALYZER_VERSION, TOKENIZER_NAME};
pub use adapters::{CorpusFetcher, CorpusSearch};
use files::*;
use index_store::*;
use update::{lock_index, Update};

/// Files larger than this are skipped (20 MB), except those [`MAX_TEXT_HEAD_BYTES`]
/// reads in part.
pub const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;

/// Text, Markdown, CSV and log files longer than this are read in part: their first
/// 16 MB, cut at a line end — the most text one document holds
/// (`deepr_documents::Limits::max_text_bytes`), so the reader does not cut them again.
pub const MAX_TEXT_HEAD_BYTES: u64 = 16 * 1024 * 1024;

/// Authority prior of a corpus document: local documentation the user chose.
pub const CORPUS_AUTHORITY: f64 = 0.8;

/// Distinct query terms beyond this many are ignored (keeps pasted essays cheap).
pub const MAX_QUERY_TERMS: usize = 256;

/// Memory budget of the (single-threaded) index writer.
const WRITER_MEMORY_BYTES: usize = 50_000_000;

/// Title matches weigh this much more than body matches.
const TITLE_BOOST: f32 = 2.0;

/// Snippets are at most this many characters of the title.
const SNIPPET_CHARS: usize = 200;

const MANIFEST_FILE: &str = "manifest.json";
const TANTIVY_DIR: &str = "tantivy";

/// What one [`CorpusIndex::open`] did. Paths are corpus-relative with `/` separators.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CorpusScan {
    /// Files read: each gave at least one document.
    pub files_read: usize,
    /// Documents (re-)extracted and (re-)indexed by this open, in walk order.
    pub extracted: Vec<String>,
    /// Documents unchanged since the last open: neither extracted nor re-indexed.
    pub reused: Vec<String>,
    /// Documents indexed before that no longer exist.
    pub removed: Vec<String>,
    /// Files that look like documents but were not indexed: `(relpath, reason)`.
    pub skipped: Vec<(String, String)>,
    /// Documents read in part: `(relpath, what could not be read)`.
    pub partial: Vec<(String, String)>,
}

/// Why a corpus could not be opened. Per-file problems are never errors; they are
/// reported in [`CorpusScan::skipped`].
#[derive(Error, Debug, Clone, PartialEq, Eq)]
pub enum CorpusError {
    #[error("corpus folder {0} does not exist; check the corpus path")]
    NotFound(PathBuf),
    #[error("corpus path {0} is not a folder; pass the folder that holds the documents")]
    NotADirectory(PathBuf),
    #[error("cannot read corpus folder {0}: {1}; check that it exists and is readable")]
    Unreadable(PathBuf, String),
    #[error(
        "corpus folder {0} holds no documents deepr reads; add documents or pass another folder"
    )]
    Empty(PathBuf),
    #[error("no file in corpus folder {0} could be read as a text document (all were skipped); fix or replace them")]
    NoUsableDocuments(PathBuf),
    #[error("corpus index: {0}")]
    Index(String),
    #[error("corpus storage: {0}")]
    Io(String),
}

/// A searchable, incrementally maintained index of one corpus folder.
pub struct CorpusIndex {
    root: PathBuf,
    reader: IndexReader,
    fields: Fields,
    analyzer: MultiScriptTokenizer,
    docs: BTreeMap<String, ManifestEntry>,
}

impl std::fmt::Debug for CorpusIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CorpusIndex")
            .field("root", &self.root)
            .field("documents", &self.docs.len())
            .finish()
    }
}

/// A file the walk found that looks like a document.
struct Candidate {
    relpath: String,
    path: PathBuf,
    kind: Format,
}

fn io_error(what: &str, path: &Path, err: impl std::fmt::Display) -> CorpusError {
    CorpusError::Io(format!(
        "{what} {}: {err}; check free space and permissions of the state folder",
        path.display()
    ))
}

fn index_error(what: &str, err: impl std::fmt::Display) -> CorpusError {
    CorpusError::Index(format!("{what}: {err}"))
}

/// The corpus folder as the index would open it: it exists, is a folder and can be
/// read; its canonical path. Front ends check a corpus with this before a run starts.
pub fn check_corpus_folder(corpus_dir: &Path) -> Result<PathBuf, CorpusError> {
    canonical_corpus_root(corpus_dir)
}

/// Every corpus document the state dir has indexed: locator (path relative to its
/// corpus root) → content hashes of its archived texts. Lets `deepr verify` find the
/// archived text of a markdown footnote that names only its locator.
pub fn indexed_locators(state_dir: &Path) -> BTreeMap<String, Vec<String>> {
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(state_dir.join("corpus")) else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(raw) = std::fs::read(entry.path().join(MANIFEST_FILE)) else {
            continue;
        };
        let Ok(manifest) = serde_json::from_slice::<Manifest>(&raw) else {
            continue;
        };
        for (locator, doc) in manifest.docs {
            let shas = found.entry(locator).or_default();
            if !shas.contains(&doc.content_sha256) {
                shas.push(doc.content_sha256);
            }
        }
    }
    found
}

impl CorpusIndex {
    /// Index `corpus_dir` into `state_dir/corpus/<blake3 of canonical corpus path, 16
    /// hex>/` (never inside the corpus), archiving each document's extracted text into
    /// `archive` (deepr_checkpoints::FileArchive::put).
    pub fn open(
        corpus_dir: &Path,
        state_dir: &Path,
        archive: &FileArchive,
    ) -> Result<(Self, CorpusScan), CorpusError> {
        Self::open_with(corpus_dir, state_dir, archive, false)
    }

    /// [`open`](Self::open), reading through symbolic links that leave the corpus
    /// folder when `follow_links` (the user asked with `--follow-links`).
    pub fn open_with(
        corpus_dir: &Path,
        state_dir: &Path,
        archive: &FileArchive,
        follow_links: bool,
    ) -> Result<(Self, CorpusScan), CorpusError> {
        let root = canonical_corpus_root(corpus_dir)?;
        let key = hex::encode(&blake3::hash(root.as_os_str().as_encoded_bytes()).as_bytes()[..8]);
        let index_dir = state_dir.join("corpus").join(&key);
        if resolve_path(&index_dir).starts_with(&root) {
            return Err(CorpusError::Index(format!(
                "the state folder {} is inside the corpus {}; choose a state folder outside the corpus",
                state_dir.display(),
                root.display()
            )));
        }

        let _lock = lock_index(state_dir, &key)?;
        let mut report = CorpusScan::default();
        let candidates = walk_corpus(&root, follow_links, &mut report.skipped);
        if candidates.is_empty() && report.skipped.is_empty() {
            return Err(CorpusError::Empty(root));
        }

        let (schema, fields) = build_schema();
        let analyzer = MultiScriptTokenizer::default();
        let (index, manifest, fresh) = open_or_rebuild(&index_dir, &root, &schema, &analyzer)?;
        let mut update = Update::new(&index, &index_dir, fields, manifest.docs, fresh);
        for candidate in candidates {
            update.file(candidate, archive, &mut report)?;
        }
        let docs = update.finish(&root, &mut report)?;
        if docs.is_empty() {
            return Err(CorpusError::NoUsableDocuments(root));
        }

        let reader = open_reader(&index)?;
        Ok((
            Self {
                root,
                reader,
                fields,
                analyzer,
                docs,
            },
            report,
        ))
    }

    /// The best `limit` documents for `query`, by BM25 score (ties by `doc_key`).
    /// Any text is a valid query; one with no indexable word returns no hits.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, CorpusError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut analyzer = self.analyzer.clone();
        let mut seen = BTreeSet::new();
        let terms: Vec<String> = analyzer
            .terms(query)
            .into_iter()
            .filter(|t| seen.insert(t.clone()))
            .take(MAX_QUERY_TERMS)
            .collect();
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::with_capacity(terms.len() * 2);
        for term in &terms {
            clauses.push((
                Occur::Should,
                Box::new(TermQuery::new(
                    Term::from_field_text(self.fields.body, term),
                    IndexRecordOption::WithFreqs,
                )),
            ));
            clauses.push((
                Occur::Should,
                Box::new(BoostQuery::new(
                    Box::new(TermQuery::new(
                        Term::from_field_text(self.fields.title, term),
                        IndexRecordOption::WithFreqs,
                    )),
                    TITLE_BOOST,
                )),
            ));
        }
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let collector =
            TopDocs::with_limit(limit.saturating_mul(2).saturating_add(10)).order_by_score();
        let top = searcher.search(&query, &collector).map_err(|e| {
            index_error(
                "search failed; delete the corpus index folder to rebuild it",
                e,
            )
        })?;

        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            let stored: TantivyDocument = searcher.doc(address).map_err(|e| {
                index_error(
                    "cannot read a stored document; delete the corpus index folder to rebuild it",
                    e,
                )
            })?;
            let Some(doc_key) = stored
                .get_first(self.fields.doc_key)
                .and_then(|v| v.as_str())
            else {
                continue;
            };
            let title = match self.docs.get(doc_key) {
                Some(entry) => entry.title.clone(),
                None => stored
                    .get_first(self.fields.title)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string(),
            };
            hits.push(SearchHit {
                doc_key: doc_key.to_string(),
                locator: doc_key.to_string(),
                snippet: title.chars().take(SNIPPET_CHARS).collect(),
                title,
                score: f64::from(score),
            });
        }
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.doc_key.cmp(&b.doc_key))
        });
        hits.truncate(limit);
        Ok(hits)
    }

    /// Metadata of one indexed document.
    pub fn doc(&self, doc_key: &str) -> Option<DocMeta> {
        self.docs.get(doc_key).map(|entry| doc_meta(doc_key, entry))
    }

    /// Metadata of every indexed document, sorted by `doc_key`.
    pub fn documents(&self) -> Vec<DocMeta> {
        self.docs
            .iter()
            .map(|(key, entry)| doc_meta(key, entry))
            .collect()
    }

    /// The canonical path of the corpus folder.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

fn doc_meta(doc_key: &str, entry: &ManifestEntry) -> DocMeta {
    DocMeta {
        doc_key: doc_key.to_string(),
        locator: doc_key.to_string(),
        title: entry.title.clone(),
        content_sha256: entry.content_sha256.clone(),
        date: entry.date.clone(),
        authority: CORPUS_AUTHORITY,
        outline: entry.outline.clone(),
    }
}
