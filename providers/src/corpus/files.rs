//! The corpus folder on disk: its canonical root, walking it (hidden entries and the
//! root README are not documents), and reading a document within the size limit.

use std::path::{Component, Path, PathBuf};

use deepr_documents::Format;

use super::*;

pub(super) fn canonical_corpus_root(corpus_dir: &Path) -> Result<PathBuf, CorpusError> {
    let meta = match std::fs::metadata(corpus_dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(CorpusError::NotFound(corpus_dir.to_path_buf()))
        }
        Err(e) => {
            return Err(CorpusError::Unreadable(
                corpus_dir.to_path_buf(),
                e.to_string(),
            ))
        }
    };
    if !meta.is_dir() {
        return Err(CorpusError::NotADirectory(corpus_dir.to_path_buf()));
    }
    let root = std::fs::canonicalize(corpus_dir)
        .map_err(|e| CorpusError::Unreadable(corpus_dir.to_path_buf(), e.to_string()))?;
    std::fs::read_dir(&root).map_err(|e| CorpusError::Unreadable(root.clone(), e.to_string()))?;
    Ok(root)
}

/// `path` made absolute, with its longest existing prefix canonicalized (so symlinks
/// and `..` there are resolved) and the rest appended as written.
pub(super) fn resolve_path(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest: Vec<Component<'_>> = Vec::new();
    let mut prefix = absolute.as_path();
    loop {
        if let Ok(canonical) = std::fs::canonicalize(prefix) {
            let mut out = canonical;
            for component in rest.iter().rev() {
                match component {
                    Component::ParentDir => {
                        out.pop();
                    }
                    Component::CurDir => {}
                    other => out.push(other.as_os_str()),
                }
            }
            return out;
        }
        match (prefix.parent(), prefix.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                prefix = parent;
            }
            _ => return absolute,
        }
    }
}

pub(super) fn root_string(root: &Path) -> String {
    root.to_string_lossy().into_owned()
}

pub(super) fn is_hidden(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().first() == Some(&b'.')
}

/// Corpus-relative path with `/` separators, if every component is UTF-8.
pub(super) fn relpath_of(root: &Path, path: &Path) -> Result<String, String> {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let mut parts = Vec::new();
    for component in rel.components() {
        let part = component.as_os_str();
        match part.to_str() {
            Some(s) => parts.push(s.to_string()),
            None => parts.push(part.to_string_lossy().into_owned()),
        }
    }
    let joined = parts.join("/");
    if rel.to_str().is_some() {
        Ok(joined)
    } else {
        Err(joined)
    }
}

/// Every document-like file under `root`, depth-first in file-name order. Everything
/// else the walk meets — an unsupported type, a link leaving the folder (unless
/// `follow_links`), an unreadable entry — is appended to `skipped` with its reason,
/// except hidden entries and the root `README.md`, which are not documents.
pub(super) fn walk_corpus(
    root: &Path,
    follow_links: bool,
    skipped: &mut Vec<(String, String)>,
) -> Vec<Candidate> {
    let walker = walkdir::WalkDir::new(root)
        .follow_links(follow_links)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| entry.depth() == 0 || !is_hidden(entry.file_name()));
    let mut out = Vec::new();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                let rel = err
                    .path()
                    .map(|p| relpath_of(root, p).unwrap_or_else(|lossy| lossy))
                    .unwrap_or_default();
                let reason = match (err.loop_ancestor(), err.io_error()) {
                    (Some(_), _) => "a link that loops back to a folder above it".to_string(),
                    (None, Some(e)) => format!("unreadable: {e}"),
                    (None, None) => format!("unreadable: {err}"),
                };
                skipped.push((rel, reason));
                continue;
            }
        };
        if entry.file_type().is_dir() {
            continue;
        }
        let path = entry.path();
        let rel = || relpath_of(root, path).unwrap_or_else(|lossy| lossy);
        if entry.depth() == 1 && entry.file_name() == "README.md" {
            continue;
        }
        if entry.path_is_symlink() && !follow_links {
            if let Some(reason) = link_problem(root, path) {
                skipped.push((rel(), reason));
                continue;
            }
        }
        let extension = path.extension().and_then(|ext| ext.to_str());
        let Some(kind) = extension.and_then(Format::from_extension) else {
            let reason = match extension.and_then(Format::unread_reason) {
                Some(reason) => reason.to_string(),
                None => {
                    let what = extension.map_or("no extension".to_string(), |e| format!(".{e}"));
                    format!("unsupported file type ({what})")
                }
            };
            skipped.push((rel(), reason));
            continue;
        };
        match relpath_of(root, path) {
            Ok(relpath) => out.push(Candidate {
                relpath,
                path: path.to_path_buf(),
                kind,
            }),
            Err(lossy) => skipped.push((
                lossy,
                "file name is not valid UTF-8; rename the file".into(),
            )),
        }
    }
    out
}

/// Why a symbolic link inside the corpus is not read without `--follow-links`: it is
/// broken, leads outside the corpus folder, or leads to a folder.
fn link_problem(root: &Path, link: &Path) -> Option<String> {
    let target = match std::fs::canonicalize(link) {
        Ok(target) => target,
        Err(e) => return Some(format!("a broken link: {e}")),
    };
    if !target.starts_with(root) {
        return Some(format!(
            "a link to {} outside the corpus folder; pass --follow-links to read it",
            target.display()
        ));
    }
    if target.is_dir() {
        return Some("a link to a folder; pass --follow-links to read inside it".into());
    }
    None
}

/// Whether index key `key` is file `relpath` or one of the documents it holds
/// (`relpath#part`).
pub(super) fn is_part_of(key: &str, relpath: &str) -> bool {
    key.strip_prefix(relpath)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('#'))
}

/// The bytes of a document file, or why it cannot be used.
pub(super) fn read_document(path: &Path) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("unreadable: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "too large ({} bytes; the limit is {MAX_FILE_BYTES})",
            meta.len()
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("unreadable: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "too large ({} bytes; the limit is {MAX_FILE_BYTES})",
            bytes.len()
        ));
    }
    Ok(bytes)
}
