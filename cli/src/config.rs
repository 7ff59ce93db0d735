//! The optional TOML config file (`--config`). Unknown keys are an error, so a typo
//! never silently does nothing.

use std::path::Path;

use serde::Deserialize;

use crate::{usage, Failure};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub depth: Option<String>,
    pub strategy: Option<String>,
    pub concurrency: Option<usize>,
    pub llm: Option<String>,
    /// Simulated offline-model latency, e.g. "200ms".
    pub offline_latency: Option<String>,
    /// Folder of prompt overrides.
    pub prompts: Option<String>,
}

pub fn load(path: Option<&Path>) -> Result<FileConfig, Failure> {
    let Some(path) = path else {
        return Ok(FileConfig::default());
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        usage(format!(
            "cannot read config file {}: {e}; check the --config path",
            path.display()
        ))
    })?;
    toml::from_str(&text).map_err(|e| {
        let first = e.to_string().lines().next().unwrap_or("").to_string();
        usage(format!(
            "config file {} is invalid: {first} (keys: depth, strategy, concurrency, llm, offline_latency, prompts)",
            path.display()
        ))
    })
}
