//! The one atomic file write of the workspace: a temp file in the target's folder,
//! written, fsynced, then renamed over the target — a reader sees the old bytes or the
//! new ones, never a torn file, whatever kills the process.

use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` atomically (the folder must exist).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_whole_file_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.json");
        write_atomically(&path, b"first, longer content").expect("write");
        write_atomically(&path, b"second").expect("overwrite");
        assert_eq!(std::fs::read(&path).expect("read"), b"second");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(write_atomically(&dir.path().join("missing/b.json"), b"x").is_err());
    }
}
