//! Configuration: `deepr.toml` (the XDG config dir, or `--config PATH`), environment
//! variables and flags. Precedence: flags > environment > file > defaults. Unknown keys
//! are an error, so a typo never silently does nothing. API keys come only from the
//! environment and are never printed (`deepr config show` redacts them).

use deepr_session::ExitStatus;
use std::path::Path;

pub use deepr_settings::FileConfig;

use crate::Failure;

pub use deepr_session::request::{config_path as path, load_config as load, ENV_VARS};

fn is_secret(name: &str) -> bool {
    name.ends_with("_KEY")
}

/// `deepr config show`: the resolved settings, secrets redacted.
pub fn show(flag: Option<&Path>, state_dir: Option<&Path>) -> Result<ExitStatus, Failure> {
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
    Ok(ExitStatus::Success)
}
