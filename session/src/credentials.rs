//! Model credentials: whether the key a remote model needs is in the environment
//! (checked when a run is validated and when it is wired), and which variable holds a
//! provider's key (named when a provider refuses it).

use deepr_providers::llm::Api;
use deepr_providers::LlmSpec;

use crate::{usage, Failure};

/// Is a key available where the provider needs one? (Local servers need none.)
pub fn check_credentials(spec: &LlmSpec, base_url: Option<&str>) -> Result<(), Failure> {
    let LlmSpec::Remote { provider, api, .. } = spec else {
        return Ok(());
    };
    let local =
        base_url.is_some() || std::env::var_os("OPENAI_BASE_URL").is_some() || provider == "ollama";
    let (var, needed) = match api {
        Api::OpenAi => ("OPENAI_API_KEY", !local),
        Api::Anthropic => (
            "ANTHROPIC_API_KEY",
            base_url.is_none() && std::env::var_os("ANTHROPIC_BASE_URL").is_none(),
        ),
    };
    if needed
        && std::env::var(var)
            .map(|v| v.trim().is_empty())
            .unwrap_or(true)
    {
        return Err(usage(format!(
            "{} needs {var} in the environment (or --llm-base-url for a local server)",
            spec.as_string()
        )));
    }
    Ok(())
}

/// The environment variable holding the key of a model provider (`openai:…`).
pub fn key_variable(provider: &str) -> &'static str {
    match provider.split(':').next() {
        Some("anthropic") => "ANTHROPIC_API_KEY",
        Some("openai") => "OPENAI_API_KEY",
        _ => "the provider's key variable",
    }
}
