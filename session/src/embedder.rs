//! The sentence-embedding re-ranker's model: found for a new run (`DEEPR_EMBED_MODEL`,
//! else the Hugging Face hub cache), recorded in the run record, and reopened by every
//! later session of that run (or refused, visibly, when it is gone or changed).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::record::{EmbedChoice, RunRecord};
use crate::{usage, Failure};

/// The sentence-embedding re-ranker: `DEEPR_EMBED_MODEL` (a model folder, or `off`),
/// else all-MiniLM-L6-v2 in the Hugging Face hub cache (`$HF_HUB_CACHE`,
/// `$HF_HOME/hub` or `~/.cache/huggingface/hub`). None found: candidates are ranked by
/// their words only, and the report says so. A folder named but unusable is an error.
/// `cache`: where embeddings are kept between runs (`<state>/cache/embed`).
pub fn embedder(cache: Option<&Path>) -> Result<Option<deepr_providers::LocalEmbedder>, Failure> {
    let named = std::env::var_os("DEEPR_EMBED_MODEL").filter(|v| !v.is_empty());
    let (dir, from) = match named {
        Some(value) if value == "off" => return Ok(None),
        Some(value) => (PathBuf::from(value), "DEEPR_EMBED_MODEL"),
        None => match hub_cache().and_then(|hub| deepr_providers::hub_snapshot(&hub)) {
            Some(dir) => (dir, "the Hugging Face hub cache"),
            None => return Ok(None),
        },
    };
    let model = deepr_providers::LocalEmbedder::open(&dir, cache).map_err(|e| {
        usage(format!(
            "sentence-embedding model from {from}: {e}; set DEEPR_EMBED_MODEL to a sentence-transformers model folder, or to off"
        ))
    })?;
    Ok(Some(model))
}

/// The model a new run will re-rank with, as its record keeps it (the model is opened
/// once here, so an unusable one stops the run before it is recorded).
pub fn embed_choice() -> Result<EmbedChoice, Failure> {
    use deepr_orchestrator::SentenceEmbedder as _;
    Ok(match embedder(None)? {
        None => EmbedChoice::None,
        Some(model) => EmbedChoice::Local {
            dir: std::path::absolute(model.dir()).unwrap_or_else(|_| model.dir().to_path_buf()),
            name: model.display_name().to_string(),
            model_id: model.model_id().to_string(),
        },
    })
}

/// The run's recorded model; records from before the choice was kept use the
/// environment. When the recorded folder no longer holds that model, the resume goes
/// on with its scores' keys unchanged: checkpointed steps keep their ranking, and a
/// step that must rank again keeps the word order and the report says why.
pub(crate) fn recorded_embedder(
    record: &RunRecord,
    cache: &Path,
) -> Result<Option<Arc<dyn deepr_orchestrator::SentenceEmbedder>>, Failure> {
    use deepr_orchestrator::SentenceEmbedder as _;
    let (dir, name, model_id) = match &record.embed {
        None => {
            return Ok(embedder(Some(cache))?
                .map(|m| Arc::new(m) as Arc<dyn deepr_orchestrator::SentenceEmbedder>))
        }
        Some(EmbedChoice::None) => return Ok(None),
        Some(EmbedChoice::Local {
            dir,
            name,
            model_id,
        }) => (dir, name, model_id),
    };
    let why = match deepr_providers::LocalEmbedder::open(dir, Some(cache)) {
        Ok(model) if model.model_id() == model_id => return Ok(Some(Arc::new(model))),
        Ok(model) => format!(
            "{} now holds another model ({})",
            dir.display(),
            model.model_id()
        ),
        Err(e) => format!("the model in {} cannot be used now: {e}", dir.display()),
    };
    Ok(Some(Arc::new(MissingEmbedder {
        name: name.clone(),
        model_id: model_id.clone(),
        why: format!(
            "{why}; put the run's model back and `deepr resume {} --retry-degraded` re-ranks these steps",
            record.run_id
        ),
    })))
}

/// The recorded model when it is gone: same identity, every request refused.
struct MissingEmbedder {
    name: String,
    model_id: String,
    why: String,
}

#[async_trait::async_trait]
impl deepr_orchestrator::SentenceEmbedder for MissingEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }
    fn display_name(&self) -> &str {
        &self.name
    }
    async fn embed(&self, _: &[String]) -> Result<Vec<Vec<f32>>, deepr_orchestrator::EmbedError> {
        Err(deepr_orchestrator::EmbedError(self.why.clone()))
    }
}

/// The Hugging Face hub cache folder, where `huggingface-cli download` puts models.
fn hub_cache() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("HF_HUB_CACHE").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(home) = std::env::var_os("HF_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(home).join("hub"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/huggingface/hub"))
}
