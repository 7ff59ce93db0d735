//! Configuration: `deepr.toml` (the XDG config dir, or `--config PATH`), environment
//! variables and flags. Precedence: flags > environment > file > defaults. Unknown keys
//! are an error, so a typo never silently does nothing. API keys come only from the
//! environment and are never printed (`deepr config show` redacts them).

use std::path::{Path, PathBuf};

pub use deepr_settings::FileConfig;

use crate::{usage, Failure};

/// The config file in use: `--config PATH`, else `$XDG_CONFIG_HOME/deepr/deepr.toml`
/// (or `~/.config/deepr/deepr.toml`) if it exists.
pub fn path(flag: Option<&Path>) -> Option<PathBuf> {
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

pub fn load(flag: Option<&Path>) -> Result<FileConfig, Failure> {
    let Some(path) = path(flag) else {
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

/// Environment variables deepr reads.
pub const ENV_VARS: &[&str] = &[
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "DEEPR_STATE_DIR",
    "DEEPR_DB",
];

fn is_secret(name: &str) -> bool {
    name.ends_with("_KEY")
}

/// `deepr config show`: the resolved settings, secrets redacted.
pub fn show(flag: Option<&Path>, state_dir: Option<&Path>) -> Result<u8, Failure> {
    let file = load(flag)?;
    outln!(
        "# config file: {}",
        path(flag)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "(none)".into())
    );
    outln!(
        "# state dir: {}",
        crate::state::resolve(state_dir)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "(unresolved)".into())
    );
    for name in ENV_VARS {
        let value = match std::env::var(name) {
            Ok(v) if is_secret(name) && !v.is_empty() => "set (redacted)".to_string(),
            Ok(v) if *name == "DEEPR_DB" => deepr_fleet::redact(&v),
            Ok(v) => v,
            Err(_) => "(not set)".to_string(),
        };
        outln!("# env {name}: {value}");
    }
    let limits = file.limits.clone().unwrap_or_default();
    let resolved = FileConfig {
        depth: Some(file.depth.unwrap_or(deepr_stages::Depth::Standard)),
        strategy: Some(file.strategy.unwrap_or(deepr_stages::Strategy::Linear)),
        concurrency: Some(
            file.concurrency
                .unwrap_or(deepr_stages::concurrent::DEFAULT_CONCURRENCY),
        ),
        io_concurrency: Some(
            file.io_concurrency
                .unwrap_or(deepr_stages::concurrent::DEFAULT_IO_CONCURRENCY),
        ),
        llm: file.llm.clone().or_else(|| Some("offline".into())),
        limits: Some(limits),
        db: file.db.as_deref().map(deepr_fleet::redact),
        ..file
    };
    let text = toml::to_string_pretty(&resolved).map_err(|e| Failure::Run(e.into()))?;
    out!("{text}");
    Ok(0)
}
