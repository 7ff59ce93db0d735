//! The config file of a request: `--config PATH`, else `$XDG_CONFIG_HOME/deepr/deepr.toml`
//! (or `~/.config/deepr/deepr.toml`) if it exists. Unknown keys are an error, so a typo
//! never silently does nothing; API keys come only from the environment.

use std::path::{Path, PathBuf};

use deepr_settings::FileConfig;

use crate::{usage, Failure};

/// Environment variables deepr reads.
pub const ENV_VARS: &[&str] = &[
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "DEEPR_STATE_DIR",
    "DEEPR_DB",
];

/// The config file in use: `flag`, else the XDG one if it exists.
pub fn config_path(flag: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = flag {
        return Some(path.to_path_buf());
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        })?;
    let default = base.join("deepr").join("deepr.toml");
    default.exists().then_some(default)
}

/// The config file read and parsed (none: every key at its default).
pub fn load_config(flag: Option<&Path>) -> Result<FileConfig, Failure> {
    let Some(path) = config_path(flag) else {
        return Ok(FileConfig::default());
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        usage(format!(
            "cannot read config file {}: {e}; check the --config path",
            path.display()
        ))
    })?;
    deepr_settings::parse(&text).map_err(|first| {
        usage(format!(
            "config file {} is invalid: {first}",
            path.display()
        ))
    })
}
