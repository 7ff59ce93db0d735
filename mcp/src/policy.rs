//! What an agent may ask of this server, whatever it was told: paths only under the
//! allowed roots (symlinks resolved before the check), and budgets no larger than the
//! server's caps (a call may lower them, never raise them).

use std::path::{Path, PathBuf};

/// The server's limits, from `deepr mcp`'s flags.
pub struct Policy {
    /// Canonical folders every corpus or report path must lie under.
    pub roots: Vec<PathBuf>,
    pub max_tokens: u64,
    pub max_cost: f64,
}

impl Policy {
    /// `roots` canonicalised; a root that does not exist is a usage error.
    pub fn new(roots: &[PathBuf], max_tokens: u64, max_cost: f64) -> Result<Self, String> {
        let roots = roots
            .iter()
            .map(|root| {
                std::fs::canonicalize(root)
                    .map_err(|e| format!("--root {}: {e}; pass an existing folder", root.display()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if !max_cost.is_finite() || max_cost <= 0.0 {
            return Err(format!(
                "--max-cost-per-run {max_cost} is not a positive amount of dollars; pass e.g. 2.50"
            ));
        }
        if max_tokens == 0 {
            return Err("--max-tokens-per-run 0 allows nothing; pass a positive number".into());
        }
        Ok(Self {
            roots,
            max_tokens,
            max_cost,
        })
    }

    /// `path` resolved (symlinks followed) and checked to lie under an allowed root.
    pub fn inside_roots(&self, what: &str, path: &str) -> Result<PathBuf, String> {
        let resolved = std::fs::canonicalize(Path::new(path)).map_err(|e| {
            format!(
                "{what} {path:?}: {e}; pass an existing path under {}",
                self.shown_roots()
            )
        })?;
        if self.roots.iter().any(|root| resolved.starts_with(root)) {
            Ok(resolved)
        } else {
            Err(format!(
                "{what} {path:?} resolves to {}, outside the allowed roots ({}); the server's --root decides what it may read",
                resolved.display(),
                self.shown_roots()
            ))
        }
    }

    fn shown_roots(&self) -> String {
        self.roots
            .iter()
            .map(|root| root.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The budgets a run gets: the call's, refused above the caps; the caps when absent.
    pub fn budgets(&self, tokens: Option<u64>, cost: Option<f64>) -> Result<(u64, f64), String> {
        if let Some(asked) = tokens.filter(|t| *t > self.max_tokens) {
            return Err(format!(
                "max_tokens {asked} is above this server's cap of {} tokens per run (--max-tokens-per-run); pass at most {}",
                self.max_tokens, self.max_tokens
            ));
        }
        if let Some(asked) = cost.filter(|c| *c > self.max_cost) {
            return Err(format!(
                "max_cost ${asked} is above this server's cap of ${} per run (--max-cost-per-run); pass at most {}",
                self.max_cost, self.max_cost
            ));
        }
        Ok((
            tokens.unwrap_or(self.max_tokens),
            cost.unwrap_or(self.max_cost),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_out_of_the_roots_is_refused_and_budgets_only_go_down() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
        std::fs::create_dir_all(root.join("docs")).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        std::os::unix::fs::symlink(&outside, root.join("link")).expect("symlink");
        let policy = Policy::new(std::slice::from_ref(&root), 1000, 1.0).expect("policy");
        let inside = root.join("docs").display().to_string();
        assert!(policy.inside_roots("corpus", &inside).is_ok());
        let link = root.join("link").display().to_string();
        let refused = policy.inside_roots("corpus", &link).unwrap_err();
        assert!(refused.contains("outside the allowed roots"), "{refused}");
        let dotdot = format!("{}/docs/../../outside", root.display());
        assert!(policy.inside_roots("corpus", &dotdot).is_err());
        assert_eq!(policy.budgets(None, None), Ok((1000, 1.0)));
        assert_eq!(policy.budgets(Some(10), Some(0.5)), Ok((10, 0.5)));
        assert!(policy
            .budgets(Some(1001), None)
            .unwrap_err()
            .contains("cap"));
        assert!(policy.budgets(None, Some(1.5)).unwrap_err().contains("cap"));
    }
}
