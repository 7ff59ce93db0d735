//! The tantivy side of a corpus index: the schema, the manifest, opening an index or
//! rebuilding it when it cannot be trusted, and committing changes.

use std::collections::BTreeMap;
use std::path::Path;

use deepr_documents::Format;
use deepr_orchestrator::Outline;
use serde::{Deserialize, Serialize};
use tantivy::collector::Count;
use tantivy::indexer::NoMergePolicy;
use tantivy::query::TermQuery;
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, STORED, STRING,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Term};

use super::*;

/// The schema version of a corpus index folder (manifest layout, tantivy schema and
/// analyzer output). A folder with another version is rebuilt.
pub(super) fn schema_version() -> String {
    format!(
        "deepr.corpus.v2+{TOKENIZER_NAME}.{ANALYZER_VERSION}+reader.{}",
        deepr_documents::READER_VERSION
    )
}

/// One indexed document, as remembered in the manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct ManifestEntry {
    /// BLAKE3 of the file's bytes.
    pub(super) raw_blake3: String,
    /// SHA-256 of the archived (extracted) text.
    pub(super) content_sha256: String,
    pub(super) title: String,
    pub(super) date: Option<String>,
    pub(super) kind: Format,
    /// Status, headings and places, as the reader found them.
    #[serde(default, skip_serializing_if = "Outline::is_empty")]
    pub(super) outline: Outline,
    /// Parts of the file its reader could not read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) gaps: Vec<String>,
    /// The documents of this file that could not be read — (locator, reason): an
    /// attachment in a format deepr does not read, a message past the limits — kept
    /// with the file's first document so a reused file lists them again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) unread_parts: Vec<(String, String)>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Manifest {
    pub(super) schema: String,
    /// Canonical corpus path the index was built from (diagnostics; also checked).
    pub(super) corpus_root: String,
    pub(super) docs: BTreeMap<String, ManifestEntry>,
}

#[derive(Clone, Copy)]
pub(super) struct Fields {
    pub(super) doc_key: Field,
    pub(super) title: Field,
    pub(super) body: Field,
}

pub(super) fn build_schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(TOKENIZER_NAME)
        .set_index_option(IndexRecordOption::WithFreqs);
    let doc_key = builder.add_text_field("doc_key", STRING | STORED);
    let title = builder.add_text_field(
        "title",
        TextOptions::default()
            .set_indexing_options(indexing.clone())
            .set_stored(),
    );
    let body = builder.add_text_field(
        "body",
        TextOptions::default().set_indexing_options(indexing),
    );
    (
        builder.build(),
        Fields {
            doc_key,
            title,
            body,
        },
    )
}

pub(super) fn register_analyzer(index: &Index, analyzer: &MultiScriptTokenizer) {
    index.tokenizers().register(
        TOKENIZER_NAME,
        tantivy::tokenizer::TextAnalyzer::from(analyzer.clone()),
    );
}

/// Open the index folder if it is sound and matches this build, else rebuild it
/// empty. The flag says whether it was (re)built.
pub(super) fn open_or_rebuild(
    index_dir: &Path,
    root: &Path,
    schema: &Schema,
    analyzer: &MultiScriptTokenizer,
) -> Result<(Index, Manifest, bool), CorpusError> {
    if let Some((index, manifest)) = try_open_existing(index_dir, root, schema, analyzer) {
        return Ok((index, manifest, false));
    }
    if std::fs::symlink_metadata(index_dir).is_ok() {
        std::fs::remove_dir_all(index_dir)
            .map_err(|e| io_error("cannot clear the damaged corpus index", index_dir, e))?;
    }
    let tantivy_dir = index_dir.join(TANTIVY_DIR);
    std::fs::create_dir_all(&tantivy_dir)
        .map_err(|e| io_error("cannot create the corpus index folder", &tantivy_dir, e))?;
    let index = Index::create_in_dir(&tantivy_dir, schema.clone())
        .map_err(|e| index_error("cannot create the corpus index", e))?;
    register_analyzer(&index, analyzer);
    let manifest = Manifest {
        schema: schema_version(),
        corpus_root: root_string(root),
        docs: BTreeMap::new(),
    };
    Ok((index, manifest, true))
}

pub(super) fn try_open_existing(
    index_dir: &Path,
    root: &Path,
    schema: &Schema,
    analyzer: &MultiScriptTokenizer,
) -> Option<(Index, Manifest)> {
    let raw = std::fs::read(index_dir.join(MANIFEST_FILE)).ok()?;
    let manifest: Manifest = serde_json::from_slice(&raw).ok()?;
    if manifest.schema != schema_version() || manifest.corpus_root != root_string(root) {
        return None;
    }
    let index = Index::open_in_dir(index_dir.join(TANTIVY_DIR)).ok()?;
    if &index.schema() != schema {
        return None;
    }
    register_analyzer(&index, analyzer);
    let reader = open_reader(&index).ok()?;
    let searcher = reader.searcher();
    if searcher.num_docs() != manifest.docs.len() as u64 {
        return None;
    }
    // Every manifest entry must be in the index exactly once (a crash between the
    // index commit and the manifest rename can leave them apart).
    let doc_key = schema.get_field("doc_key").ok()?;
    for key in manifest.docs.keys() {
        let query = TermQuery::new(
            Term::from_field_text(doc_key, key),
            IndexRecordOption::Basic,
        );
        if searcher.search(&query, &Count).ok()? != 1 {
            return None;
        }
    }
    Some((index, manifest))
}

pub(super) fn open_reader(index: &Index) -> Result<IndexReader, CorpusError> {
    index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()
        .map_err(|e| index_error("cannot open the corpus index for reading", e))
}

/// A single-threaded writer (deterministic segment contents, bounded memory) whose
/// merges happen only in [`compact`].
pub(super) fn open_writer(index: &Index, index_dir: &Path) -> Result<IndexWriter, CorpusError> {
    let writer: IndexWriter = index
        .writer_with_num_threads(1, WRITER_MEMORY_BYTES)
        .map_err(|e| match e {
            tantivy::TantivyError::LockFailure(..) => CorpusError::Index(format!(
                "another deepr process is updating the corpus index in {}; wait for it to finish and retry",
                index_dir.display()
            )),
            other => index_error("cannot open the corpus index for writing", other),
        })?;
    writer.set_merge_policy(Box::new(NoMergePolicy));
    Ok(writer)
}

/// Merge the index into one segment without deleted documents, so that BM25
/// statistics (document counts, frequencies, lengths) — and so scores — are exactly
/// those of a fresh build of the same files, whatever the update history. Costs a
/// rewrite of the index on each change; corpora here are local documentation sets.
pub(super) fn compact(index: &Index, writer: &mut IndexWriter) -> Result<(), CorpusError> {
    let metas = index
        .searchable_segment_metas()
        .map_err(|e| index_error("cannot list the corpus index segments", e))?;
    if metas.len() > 1 || metas.iter().any(|m| m.has_deletes()) {
        let ids: Vec<_> = metas.iter().map(|m| m.id()).collect();
        writer
            .merge(&ids)
            .wait()
            .map_err(|e| index_error("cannot merge the corpus index", e))?;
    }
    Ok(())
}

pub(super) fn write_manifest(index_dir: &Path, manifest: &Manifest) -> Result<(), CorpusError> {
    let path = index_dir.join(MANIFEST_FILE);
    let json = serde_json::to_vec_pretty(manifest)
        .map_err(|e| io_error("cannot serialise the corpus manifest", &path, e))?;
    deepr_checkpoints::write_atomically(&path, &json)
        .map_err(|e| io_error("cannot write the corpus manifest", &path, e))
}
