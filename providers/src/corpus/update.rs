//! Bringing a corpus index up to date: one process at a time (a lock file per
//! index), each changed file read and archived and (re-)indexed, unchanged files
//! reused, vanished ones dropped, then one commit and the manifest.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::Path;

use deepr_checkpoints::FileArchive;
use tantivy::{Index, IndexWriter, TantivyDocument, Term};

use super::index_store::{
    compact, open_writer, schema_version, write_manifest, Fields, Manifest, ManifestEntry,
};
use super::{index_error, io_error, root_string, Candidate, CorpusError, IndexReport};

/// One process at a time updates a corpus index: a second run starting at the same
/// moment waits here, then finds the index built and reuses it. The lock holds while
/// the returned file is open.
pub(super) fn lock_index(state_dir: &Path, key: &str) -> Result<File, CorpusError> {
    let locks = state_dir.join("locks");
    std::fs::create_dir_all(&locks)
        .map_err(|e| io_error("cannot create the lock folder", &locks, e))?;
    let lock_path = locks.join(format!("corpus-{key}.lock"));
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| io_error("cannot open the corpus index lock", &lock_path, e))?;
    lock.lock()
        .map_err(|e| io_error("cannot lock the corpus index", &lock_path, e))?;
    Ok(lock)
}

/// An index update in progress.
pub(super) struct Update<'a> {
    index: &'a Index,
    index_dir: &'a Path,
    fields: Fields,
    /// Opened at the first change.
    writer: Option<IndexWriter>,
    changed: bool,
    /// What the manifest listed and no file has claimed yet.
    old_docs: BTreeMap<String, ManifestEntry>,
    docs: BTreeMap<String, ManifestEntry>,
}

impl<'a> Update<'a> {
    pub(super) fn new(
        index: &'a Index,
        index_dir: &'a Path,
        fields: Fields,
        old_docs: BTreeMap<String, ManifestEntry>,
        fresh: bool,
    ) -> Self {
        Self {
            index,
            index_dir,
            fields,
            writer: None,
            changed: fresh,
            old_docs,
            docs: BTreeMap::new(),
        }
    }

    fn writer(&mut self) -> Result<&mut IndexWriter, CorpusError> {
        if self.writer.is_none() {
            self.writer = Some(open_writer(self.index, self.index_dir)?);
        }
        self.writer
            .as_mut()
            .ok_or_else(|| index_error("cannot open the corpus index writer", "no writer"))
    }

    /// One file of the corpus: reused when its bytes and archived text are unchanged,
    /// else read, archived and indexed; a file that cannot be read is skipped with why.
    pub(super) fn file(
        &mut self,
        candidate: Candidate,
        archive: &FileArchive,
        report: &mut IndexReport,
    ) -> Result<(), CorpusError> {
        let bytes = match super::read_document(&candidate.path) {
            Ok(bytes) => bytes,
            Err(reason) => {
                report.skipped.push((candidate.relpath, reason));
                return Ok(());
            }
        };
        let raw_blake3 = blake3::hash(&bytes).to_hex().to_string();
        let unchanged = self.old_docs.get(&candidate.relpath).is_some_and(|old| {
            old.raw_blake3 == raw_blake3 && archive.contains(&old.content_sha256)
        });
        if unchanged {
            if let Some(old) = self.old_docs.remove(&candidate.relpath) {
                if !old.gaps.is_empty() {
                    report
                        .partial
                        .push((candidate.relpath.clone(), old.gaps.join("; ")));
                }
                self.docs.insert(candidate.relpath.clone(), old);
            }
            report.reused.push(candidate.relpath);
            return Ok(());
        }
        let mut extracted = match crate::reading::read_bounded(bytes, candidate.kind) {
            Ok(extracted) => extracted,
            Err(err) => {
                report.skipped.push((candidate.relpath, err.to_string()));
                return Ok(());
            }
        };
        extracted.apply_path(&candidate.relpath);
        let content_sha256 = archive
            .put(&extracted.text)
            .map_err(|e| io_error("cannot archive the text of", &candidate.path, e))?;
        let fields = self.fields;
        let writer = self.writer()?;
        writer.delete_term(Term::from_field_text(fields.doc_key, &candidate.relpath));
        let mut doc = TantivyDocument::default();
        doc.add_text(fields.doc_key, &candidate.relpath);
        doc.add_text(fields.title, &extracted.title);
        doc.add_text(fields.body, &extracted.text);
        writer
            .add_document(doc)
            .map_err(|e| index_error("cannot add a document to the index", e))?;
        self.changed = true;
        self.old_docs.remove(&candidate.relpath);
        if !extracted.gaps.is_empty() {
            report
                .partial
                .push((candidate.relpath.clone(), extracted.gaps.join("; ")));
        }
        self.docs.insert(
            candidate.relpath.clone(),
            ManifestEntry {
                raw_blake3,
                content_sha256,
                outline: crate::reading::outline_of(&extracted),
                gaps: extracted.gaps.clone(),
                title: extracted.title,
                date: extracted.date,
                kind: candidate.kind,
            },
        );
        report.extracted.push(candidate.relpath);
        Ok(())
    }

    /// Drops what the manifest still lists (gone, or now unreadable), commits and
    /// compacts the index, and writes the manifest if anything changed. The documents
    /// indexed now.
    pub(super) fn finish(
        mut self,
        root: &Path,
        report: &mut IndexReport,
    ) -> Result<BTreeMap<String, ManifestEntry>, CorpusError> {
        let skipped_now: BTreeSet<String> = report.skipped.iter().map(|(p, _)| p.clone()).collect();
        let gone: Vec<String> = self.old_docs.keys().cloned().collect();
        for relpath in gone {
            let doc_key = self.fields.doc_key;
            self.writer()?
                .delete_term(Term::from_field_text(doc_key, &relpath));
            self.changed = true;
            if !skipped_now.contains(&relpath) {
                report.removed.push(relpath);
            }
        }
        if let Some(mut writer) = self.writer.take() {
            writer
                .commit()
                .map_err(|e| index_error("cannot commit the corpus index", e))?;
            compact(self.index, &mut writer)?;
            writer
                .wait_merging_threads()
                .map_err(|e| index_error("cannot finish merging the corpus index", e))?;
        }
        if self.changed {
            write_manifest(
                self.index_dir,
                &Manifest {
                    schema: schema_version(),
                    corpus_root: root_string(root),
                    docs: self.docs.clone(),
                },
            )?;
        }
        Ok(self.docs)
    }
}
