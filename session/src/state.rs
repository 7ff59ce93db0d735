//! The state dir: where it is, and the safe names of runs inside it.

use std::path::{Path, PathBuf};

use crate::{usage, Failure};

/// `--state-dir`, else `$DEEPR_STATE_DIR`, else `$XDG_STATE_HOME/deepr`, else
/// `~/.local/state/deepr`.
pub fn resolve(flag: Option<&Path>) -> Result<PathBuf, Failure> {
    if let Some(dir) = flag {
        return Ok(dir.to_path_buf());
    }
    if let Some(dir) = std::env::var_os("DEEPR_STATE_DIR").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir).join("deepr"));
    }
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(home).join(".local/state/deepr"));
    }
    Err(usage(
        "no state dir: set --state-dir, DEEPR_STATE_DIR or HOME",
    ))
}

/// Create the state dir and check it is writable.
pub fn prepare(dir: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(dir.join("runs")).map_err(|e| {
        usage(format!(
            "cannot create state dir {}: {e}; pass a writable --state-dir",
            dir.display()
        ))
    })?;
    let probe = tempfile::NamedTempFile::new_in(dir).map_err(|e| {
        usage(format!(
            "state dir {} is not writable: {e}; pass a writable --state-dir",
            dir.display()
        ))
    })?;
    drop(probe);
    Ok(())
}

/// A run id is a safe file name: 1–64 of `[A-Za-z0-9._-]`, not starting with '.'.
pub fn check_run_id(id: &str) -> Result<(), Failure> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(usage(format!("invalid --run-id {id:?}: use 1–64 letters, digits, '-', '_' or '.', not starting with '.'")))
    }
}

/// The run id `--run-id` chose (checked), else a fresh one for `topic`.
pub fn chosen_run_id(chosen: Option<&str>, topic: &str) -> Result<String, Failure> {
    match chosen {
        Some(id) => {
            check_run_id(id)?;
            Ok(id.to_string())
        }
        None => Ok(new_run_id(topic)),
    }
}

/// A fresh run id: UTC time plus a short random-ish suffix.
pub fn new_run_id(topic: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut hasher = blake3::Hasher::new();
    hasher.update(topic.as_bytes());
    hasher.update(&now.as_nanos().to_le_bytes());
    hasher.update(&std::process::id().to_le_bytes());
    let suffix = &hasher.finalize().to_hex()[..6];
    format!("{}-{suffix}", crate::util::utc_compact(now.as_secs()))
}

/// A file-name slug of the topic: lower-case ASCII words joined by '-', ≤ 60 chars.
pub fn slug(topic: &str) -> String {
    let mut out = String::new();
    for word in topic
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word: String = word
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .flat_map(|c| c.to_lowercase())
            .collect();
        if word.is_empty() {
            continue;
        }
        if out.len() + word.len() + 1 > 60 {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word);
    }
    if out.is_empty() {
        "report".into()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_must_be_safe_names() {
        for bad in [
            "",
            "../x",
            "a/b",
            "a\\b",
            ".hidden",
            "sp ace",
            &"x".repeat(65),
        ] {
            assert!(check_run_id(bad).is_err(), "{bad:?}");
        }
        for good in ["nightly-1", "a.b_c", "X9"] {
            assert!(check_run_id(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn slugs() {
        assert_eq!(
            slug("How does SQLite guarantee atomic commits?"),
            "how-does-sqlite-guarantee-atomic-commits"
        );
        assert_eq!(slug("数据库"), "report");
    }
}
