//! The corpus folder on disk: its canonical root, walking it (hidden entries and the
//! root README are not documents), and reading a document within the size limit — a
//! text, Markdown, CSV or log file past it read in part: its first bytes, cut at a line
//! end, read from disk without reading the rest.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use deepr_documents::{human_bytes, Format};

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

/// A document file's bytes as read.
#[derive(Debug)]
pub(super) struct FileBytes {
    pub(super) bytes: Vec<u8>,
    /// What the manifest knows the file's bytes by: their BLAKE3 — for a file read in
    /// part, that of the part read and of the file's size, which together decide what
    /// is read from it, so an unchanged part of an unchanged size is reused.
    pub(super) key: String,
    /// What was read of a file read in part: `first 16 MB of 60 MB`.
    pub(super) part: Option<String>,
}

/// The bytes of a document file of format `kind`, or why it cannot be used.
pub(super) fn read_document(path: &Path, kind: Format) -> Result<FileBytes, String> {
    read_document_within(path, kind, MAX_FILE_BYTES, MAX_TEXT_HEAD_BYTES)
}

/// [`read_document`] within `max_file` bytes a file, and `max_head` bytes read of a
/// file in a format that reads in part ([`Format::reads_in_part`]).
fn read_document_within(
    path: &Path,
    kind: Format,
    max_file: u64,
    max_head: u64,
) -> Result<FileBytes, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("unreadable: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if kind.reads_in_part() && meta.len() > max_head {
        return read_head(path, meta.len(), max_head);
    }
    let too_large = |size: u64| {
        format!(
            "too large: {}, past the {} a file may be (only text, Markdown, CSV and log files are read in part)",
            human_bytes(size),
            human_bytes(max_file)
        )
    };
    if meta.len() > max_file {
        return Err(too_large(meta.len()));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("unreadable: {e}"))?;
    if bytes.len() as u64 > max_file {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(FileBytes {
        key: blake3::hash(&bytes).to_hex().to_string(),
        bytes,
        part: None,
    })
}

/// The first `limit` bytes of a file of `size` bytes, cut where [`cut_point`] says; the
/// rest is never read. A file that turns out shorter is whole.
fn read_head(path: &Path, size: u64, limit: u64) -> Result<FileBytes, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("unreadable: {e}"))?;
    let mut head = Vec::with_capacity(usize::try_from(limit).unwrap_or(0));
    file.take(limit)
        .read_to_end(&mut head)
        .map_err(|e| format!("unreadable: {e}"))?;
    if (head.len() as u64) < limit {
        let key = blake3::hash(&head).to_hex().to_string();
        return Ok(FileBytes {
            bytes: head,
            key,
            part: None,
        });
    }
    let mut hasher = blake3::Hasher::new();
    hasher.update(&head);
    hasher.update(b"\0read in part of a file of bytes: ");
    hasher.update(&size.to_le_bytes());
    let key = hasher.finalize().to_hex().to_string();
    head.truncate(cut_point(&head));
    let part = format!(
        "first {} of {}",
        human_bytes(head.len() as u64),
        human_bytes(size)
    );
    Ok(FileBytes {
        bytes: head,
        key,
        part: Some(part),
    })
}

/// Where a text's first bytes end: after their last line end, if that is in their
/// second half (a text of one long line keeps more); else before a character the cut
/// left unfinished.
fn cut_point(head: &[u8]) -> usize {
    if let Some(at) = head.iter().rposition(|b| *b == b'\n') {
        if at + 1 >= head.len() / 2 {
            return at + 1;
        }
    }
    match std::str::from_utf8(head) {
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        _ => head.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_file(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        (dir, path)
    }

    #[test]
    fn a_text_past_the_limit_is_read_up_to_its_last_line_end_within_it() {
        let log: String = (0..1000)
            .map(|n| format!("line {n:04} of the yard log\n"))
            .collect();
        let (_dir, path) = temp_file("yard.log", log.as_bytes());
        let read = read_document_within(&path, Format::Text, 1 << 20, 1000).expect("read");
        let text = std::str::from_utf8(&read.bytes).expect("utf-8");
        assert!(
            text.len() <= 1000 && text.ends_with("of the yard log\n"),
            "{text:?}"
        );
        assert_eq!(text, &log[..text.len()]);
        assert_eq!(read.part.as_deref(), Some("first 988 bytes of 25.4 KB"));
        // The key is the part read and the size: the same for the same part and size,
        // another for another size.
        let again = read_document_within(&path, Format::Text, 1 << 20, 1000).expect("read");
        assert_eq!(again.key, read.key);
        assert_ne!(read.key, blake3::hash(log.as_bytes()).to_hex().to_string());
        let (_longer, longer) = temp_file("yard.log", format!("{log}one more line\n").as_bytes());
        let other = read_document_within(&longer, Format::Text, 1 << 20, 1000).expect("read");
        assert_ne!(other.key, read.key);
        // Within the limit: whole, keyed by its bytes.
        let whole = read_document_within(&path, Format::Text, 1 << 20, 1 << 20).expect("read");
        assert_eq!((whole.bytes.len(), whole.part), (log.len(), None));
        assert_eq!(whole.key, blake3::hash(log.as_bytes()).to_hex().to_string());
    }

    #[test]
    fn a_cut_never_splits_a_character_and_other_formats_stay_too_large() {
        let line = "é".repeat(600);
        let (_dir, path) = temp_file("one-line.md", line.as_bytes());
        let read = read_document_within(&path, Format::Markdown, 1 << 20, 999).expect("read");
        assert_eq!(read.bytes.len(), 998);
        assert!(std::str::from_utf8(&read.bytes).is_ok());
        let (_pdf, pdf) = temp_file("scan.pdf", &[b'%'; 3000]);
        let refused = read_document_within(&pdf, Format::Pdf, 2000, 999).expect_err("too large");
        assert!(
            refused.starts_with("too large: 2.9 KB, past the 2 KB a file may be"),
            "{refused}"
        );
    }
}
