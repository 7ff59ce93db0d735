//! The archive of extracted texts, content-addressed by SHA-256 and shared by runs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use deepr_orchestrator::provider::{ArchivedText, TextArchive};

/// A second home for archived texts — in fleet mode the database (`deepr-fleet`) —
/// written through on every `put` and read on a local miss, so a run resumed on another
/// machine finds every text the first one archived. What it returns is checked against
/// its hash like a file.
pub trait ArchiveMirror: Send + Sync {
    /// Keep `text` under `sha` durably before returning.
    fn store(&self, sha: &str, text: &str) -> std::io::Result<()>;
    /// The text stored under `sha`, if any.
    fn load(&self, sha: &str) -> Option<String>;
}

/// Archived texts as files `archive/<aa>/<sha256>.txt`, written atomically.
pub struct FileArchive {
    root: PathBuf,
    memo: Mutex<HashMap<String, ArchivedText>>,
    mirror: Option<Arc<dyn ArchiveMirror>>,
}

impl FileArchive {
    /// Open (creating) the archive under `state_dir/archive`.
    pub fn open(state_dir: &Path) -> std::io::Result<Self> {
        let root = state_dir.join("archive");
        std::fs::create_dir_all(&root)?;
        Ok(Self {
            root,
            memo: Mutex::new(HashMap::new()),
            mirror: None,
        })
    }

    /// Also write every text to `mirror` and read from it what is missing here.
    pub fn with_mirror(mut self, mirror: Arc<dyn ArchiveMirror>) -> Self {
        self.mirror = Some(mirror);
        self
    }

    fn path_for(&self, sha: &str) -> Option<PathBuf> {
        if sha.len() != 64
            || !sha
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        {
            return None; // never let a hash choose a path
        }
        Some(self.root.join(&sha[..2]).join(format!("{sha}.txt")))
    }

    /// Store `text`, returning its SHA-256. Idempotent; safe across processes.
    pub fn put(&self, text: &str) -> std::io::Result<String> {
        let sha = deepr_evidence::content_sha256(text);
        let path = self
            .path_for(&sha)
            .ok_or_else(|| std::io::Error::other("invalid content hash"))?;
        if !path.exists() {
            let dir = path.parent().unwrap_or(&self.root);
            std::fs::create_dir_all(dir)?;
            crate::atomic::write_atomically(&path, text.as_bytes())?;
        }
        if let Some(mirror) = &self.mirror {
            // Before the caller checkpoints anything that names this text.
            mirror.store(&sha, text)?;
        }
        Ok(sha)
    }

    /// Whether a text with this hash is archived.
    pub fn contains(&self, sha: &str) -> bool {
        self.path_for(sha).is_some_and(|p| p.exists())
    }
}

impl TextArchive for FileArchive {
    fn get(&self, content_sha256: &str) -> Option<ArchivedText> {
        if let Some(found) = self.memo.lock().ok()?.get(content_sha256) {
            return Some(found.clone());
        }
        let path = self.path_for(content_sha256)?;
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(_) => {
                let text = self.mirror.as_ref()?.load(content_sha256)?;
                if deepr_evidence::content_sha256(&text) != content_sha256 {
                    return None;
                }
                // Keep a local copy (best effort) so the next read stays here.
                let _ = path
                    .parent()
                    .map(std::fs::create_dir_all)
                    .transpose()
                    .ok()
                    .and_then(|_| crate::atomic::write_atomically(&path, text.as_bytes()).ok());
                text
            }
        };
        let archived = ArchivedText::new(&text);
        // A damaged file never serves quotes.
        if archived.content_sha256 != content_sha256 {
            return None;
        }
        if let Ok(mut memo) = self.memo.lock() {
            memo.insert(content_sha256.to_string(), archived.clone());
        }
        Some(archived)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_tamper_detection() {
        let dir = tempfile::tempdir().expect("tempdir");
        let archive = FileArchive::open(dir.path()).expect("open");
        let sha = archive.put("Hello. World.").expect("put");
        assert_eq!(archive.put("Hello. World.").expect("put twice"), sha);
        let got = archive.get(&sha).expect("get");
        assert_eq!(got.sentence(1), Some("World."));
        assert!(archive.get("../../etc/passwd").is_none());

        let fresh = FileArchive::open(dir.path()).expect("reopen");
        let path = fresh.path_for(&sha).expect("path");
        std::fs::write(path, "tampered").expect("write");
        assert!(
            fresh.get(&sha).is_none(),
            "a text that no longer hashes to its name is refused"
        );
    }
}
