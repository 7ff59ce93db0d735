//! Which model a run asks: `offline`, or `provider:model` for a remote one (`openai:`,
//! `ollama:`, `anthropic:`, …), parsed from untrusted text into a typed spec.

/// Which wire protocol a provider speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    OpenAi,
    Anthropic,
}

/// A model chosen with `--llm`: `offline`, `openai:MODEL`, `ollama:MODEL`, `anthropic:MODEL`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LlmSpec {
    Offline,
    Remote {
        provider: String,
        api: Api,
        model: String,
    },
}

pub const OPENAI_DEFAULT_BASE: &str = "https://api.openai.com/v1";
pub const OLLAMA_DEFAULT_BASE: &str = "http://127.0.0.1:11434/v1";
pub const ANTHROPIC_DEFAULT_BASE: &str = "https://api.anthropic.com";

impl LlmSpec {
    /// Parse `--llm`. The error says what is accepted.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text == "offline" {
            return Ok(Self::Offline);
        }
        let (provider, model) = text
            .split_once(':')
            .ok_or_else(|| format!("--llm {text:?} is not a model; use offline, openai:MODEL, ollama:MODEL or anthropic:MODEL"))?;
        if model.trim().is_empty() || model.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(format!(
                "--llm {text:?} has no valid model name after the colon"
            ));
        }
        let api = match provider {
            "openai" | "ollama" => Api::OpenAi,
            "anthropic" => Api::Anthropic,
            other => {
                return Err(format!(
                "--llm provider {other:?} is unknown; use openai, ollama or anthropic (or offline)"
            ))
            }
        };
        Ok(Self::Remote {
            provider: provider.to_string(),
            api,
            model: model.to_string(),
        })
    }

    /// The default base URL of the provider.
    pub fn default_base_url(&self) -> Option<&'static str> {
        match self {
            Self::Offline => None,
            Self::Remote { provider, .. } if provider == "ollama" => Some(OLLAMA_DEFAULT_BASE),
            Self::Remote {
                api: Api::Anthropic,
                ..
            } => Some(ANTHROPIC_DEFAULT_BASE),
            Self::Remote { .. } => Some(OPENAI_DEFAULT_BASE),
        }
    }

    pub fn as_string(&self) -> String {
        match self {
            Self::Offline => "offline".into(),
            Self::Remote {
                provider, model, ..
            } => format!("{provider}:{model}"),
        }
    }
}
