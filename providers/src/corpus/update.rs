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
use super::{index_error, io_error, root_string, Candidate, CorpusError, CorpusScan};

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

    /// One file of the corpus: reused when its bytes and archived texts are unchanged,
    /// else read — every document it holds (an email's attachments, a mailbox's
    /// messages, a chat export's channel-days: `file#part`) archived and indexed; a file
    /// or part that cannot be read is skipped with why.
    pub(super) fn file(
        &mut self,
        candidate: Candidate,
        archive: &FileArchive,
        report: &mut CorpusScan,
    ) -> Result<(), CorpusError> {
        let file = match super::read_document(&candidate.path, candidate.kind) {
            Ok(file) => file,
            Err(reason) => {
                report.skipped.push((candidate.relpath, reason));
                return Ok(());
            }
        };
        let raw_blake3 = file.key;
        if self.reuse(&candidate.relpath, &raw_blake3, archive, report) {
            return Ok(());
        }
        let parts = match crate::reading::read_parts_bounded(file.bytes, candidate.kind) {
            Ok(parts) => parts,
            Err(err) => {
                report.skipped.push((candidate.relpath, err.to_string()));
                return Ok(());
            }
        };
        let mut unread: Vec<(String, String)> = Vec::new();
        let mut first_key: Option<String> = None;
        for part in parts {
            let key = part.locator(&candidate.relpath);
            match part.read {
                Ok(mut doc) => {
                    // A file read in part says so first, then what the reader cut.
                    if let Some(read) = &file.part {
                        doc.gaps.insert(0, read.clone());
                    }
                    self.document(&candidate, &key, doc, &raw_blake3, archive, report)?;
                    first_key.get_or_insert(key);
                }
                Err(err) => unread.push((key, err.to_string())),
            }
        }
        // What a file's parts could not read is listed now and remembered with its
        // first document, so a reused file lists it again.
        if let Some(entry) = first_key.and_then(|key| self.docs.get_mut(&key)) {
            entry.unread_parts = unread.clone();
            report.files_read += 1;
        }
        report.skipped.extend(unread);
        Ok(())
    }

    /// The manifest's documents of a file reused when the file's bytes and every one of
    /// its archived texts are unchanged; whether they were.
    fn reuse(
        &mut self,
        relpath: &str,
        raw_blake3: &str,
        archive: &FileArchive,
        report: &mut CorpusScan,
    ) -> bool {
        let keys: Vec<String> = self
            .old_docs
            .keys()
            .filter(|key| super::files::is_part_of(key, relpath))
            .cloned()
            .collect();
        let unchanged = !keys.is_empty()
            && keys.iter().all(|key| {
                self.old_docs.get(key).is_some_and(|old| {
                    old.raw_blake3 == raw_blake3 && archive.contains(&old.content_sha256)
                })
            });
        if !unchanged {
            return false;
        }
        report.files_read += 1;
        for key in keys {
            let Some(old) = self.old_docs.remove(&key) else {
                continue;
            };
            if !old.gaps.is_empty() {
                report.partial.push((key.clone(), old.gaps.join("; ")));
            }
            report.skipped.extend(old.unread_parts.iter().cloned());
            self.docs.insert(key.clone(), old);
            report.reused.push(key);
        }
        true
    }

    /// One read document of a file, archived and indexed under `key`.
    fn document(
        &mut self,
        candidate: &Candidate,
        key: &str,
        mut extracted: deepr_documents::Document,
        raw_blake3: &str,
        archive: &FileArchive,
        report: &mut CorpusScan,
    ) -> Result<(), CorpusError> {
        extracted.apply_path(&candidate.relpath);
        let content_sha256 = archive
            .put(&extracted.text)
            .map_err(|e| io_error("cannot archive the text of", &candidate.path, e))?;
        let fields = self.fields;
        let writer = self.writer()?;
        writer.delete_term(Term::from_field_text(fields.doc_key, key));
        let mut doc = TantivyDocument::default();
        doc.add_text(fields.doc_key, key);
        doc.add_text(fields.title, &extracted.title);
        doc.add_text(fields.body, &extracted.text);
        writer
            .add_document(doc)
            .map_err(|e| index_error("cannot add a document to the index", e))?;
        self.changed = true;
        self.old_docs.remove(key);
        if !extracted.gaps.is_empty() {
            report
                .partial
                .push((key.to_string(), extracted.gaps.join("; ")));
        }
        self.docs.insert(
            key.to_string(),
            ManifestEntry {
                raw_blake3: raw_blake3.to_string(),
                content_sha256,
                outline: crate::reading::outline_of(&extracted),
                gaps: extracted.gaps.clone(),
                title: extracted.title,
                date: extracted.date,
                kind: candidate.kind,
                unread_parts: Vec::new(),
            },
        );
        report.extracted.push(key.to_string());
        Ok(())
    }

    /// Drops what the manifest still lists (gone, or now unreadable), commits and
    /// compacts the index, and writes the manifest if anything changed. The documents
    /// indexed now.
    pub(super) fn finish(
        mut self,
        root: &Path,
        report: &mut CorpusScan,
    ) -> Result<BTreeMap<String, ManifestEntry>, CorpusError> {
        let skipped_now: BTreeSet<String> = report.skipped.iter().map(|(p, _)| p.clone()).collect();
        let file_skipped = |key: &str| {
            skipped_now.contains(key)
                || skipped_now
                    .iter()
                    .any(|file| super::files::is_part_of(key, file))
        };
        let gone: Vec<String> = self.old_docs.keys().cloned().collect();
        for relpath in gone {
            let doc_key = self.fields.doc_key;
            self.writer()?
                .delete_term(Term::from_field_text(doc_key, &relpath));
            self.changed = true;
            if !file_skipped(&relpath) {
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
