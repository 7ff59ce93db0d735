//! The local sentence-embedding model: a BERT sentence-transformer (all-MiniLM-L6-v2)
//! run in-process with candle, mean-pooled and unit-length, as the score stage's
//! re-ranker. No API and no tokens: it reads a model folder (`config.json`,
//! `tokenizer.json`, `model.safetensors`) from a path or the Hugging Face hub cache.
//!
//! Embeddings are cached by the text's blake3 hash, in memory and (when given a folder)
//! on disk, one little-endian `f32` file per text under a folder named by the model's
//! hash, written atomically. The model itself is loaded on the first call that misses
//! the cache, so a resumed run whose scores are checkpointed never loads it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use deepr_orchestrator::{EmbedError, SentenceEmbedder};
use thiserror::Error;
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

/// The hub repository the model is looked up under in the hub cache.
pub const HUB_REPO: &str = "sentence-transformers/all-MiniLM-L6-v2";
/// The files a model folder must hold.
const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];
/// Tokens per text (the model was trained at up to 256): a candidate's first 128
/// tokens (~500 characters) say what it is about, at half the cost of a long one.
const MAX_TOKENS: usize = 128;
/// Texts per forward pass.
const BATCH: usize = 32;
/// How a text becomes a vector here (truncation, pooling): in the model id and the
/// cache folder, so a change never serves vectors made another way.
const RECIPE: &str = "mean-t128-v2";

/// Why a model folder could not be used.
#[derive(Debug, Error)]
pub enum EmbedLoadError {
    #[error("{path} is not a sentence-embedding model folder: {file} is missing (it needs config.json, tokenizer.json and model.safetensors)")]
    Missing { path: String, file: &'static str },
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

/// The snapshot folder of [`HUB_REPO`] in a hub cache (`<hub>/models--…/snapshots/<rev>`),
/// preferring the revision `refs/main` names; `None` if none holds the model's files.
pub fn hub_snapshot(hub_cache: &Path) -> Option<PathBuf> {
    let repo = hub_cache.join(format!("models--{}", HUB_REPO.replace('/', "--")));
    let snapshots = repo.join("snapshots");
    let main = std::fs::read_to_string(repo.join("refs").join("main"))
        .ok()
        .map(|rev| snapshots.join(rev.trim()));
    let mut candidates: Vec<PathBuf> = main.into_iter().collect();
    if let Ok(entries) = std::fs::read_dir(&snapshots) {
        let mut others: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        others.sort();
        candidates.extend(others);
    }
    candidates
        .into_iter()
        .find(|dir| FILES.iter().all(|f| dir.join(f).is_file()))
}

/// The loaded model; see the module documentation.
pub struct LocalEmbedder {
    inner: Arc<Inner>,
}

struct Inner {
    dir: PathBuf,
    model_id: String,
    name: String,
    cache_dir: Option<PathBuf>,
    dimension: Option<usize>,
    memory: Mutex<HashMap<[u8; 32], Arc<[f32]>>>,
    loaded: OnceLock<Result<Loaded, String>>,
    /// One computation at a time: the model already uses every core, and a caller that
    /// waited finds what the one before it computed (subquestions share sentences).
    computing: Mutex<()>,
}

struct Loaded {
    model: BertModel,
    tokenizer: Tokenizer,
    dimension: usize,
}

impl LocalEmbedder {
    /// Checks the folder and hashes its files (the model id); the weights are loaded on
    /// first use. `cache_dir`: where embeddings are kept between runs.
    pub fn open(dir: &Path, cache_dir: Option<&Path>) -> Result<Self, EmbedLoadError> {
        let mut hasher = blake3::Hasher::new();
        for file in FILES {
            let path = dir.join(file);
            if !path.is_file() {
                return Err(EmbedLoadError::Missing {
                    path: dir.display().to_string(),
                    file,
                });
            }
            let bytes = std::fs::read(&path).map_err(|e| EmbedLoadError::Read {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
            hasher.update(file.as_bytes());
            hasher.update(&(bytes.len() as u64).to_le_bytes());
            hasher.update(&bytes);
        }
        let hash = hasher.finalize().to_hex();
        let model_id = format!("bert-{RECIPE}/{}", &hash.as_str()[..16]);
        // The vector length a cached file must have (`hidden_size`; checked again when
        // the weights load).
        let dimension = std::fs::read(dir.join("config.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|c| c.get("hidden_size")?.as_u64())
            .map(|d| d as usize);
        let name = model_name(dir);
        Ok(Self {
            inner: Arc::new(Inner {
                dir: dir.to_path_buf(),
                cache_dir: cache_dir.map(|c| c.join(format!("{RECIPE}-{}", &hash.as_str()[..16]))),
                dimension,
                model_id,
                name,
                memory: Mutex::new(HashMap::new()),
                loaded: OnceLock::new(),
                computing: Mutex::new(()),
            }),
        })
    }

    /// The folder the model was read from.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// Embeds on this thread (what [`SentenceEmbedder::embed`] runs off the async
    /// runtime).
    pub fn embed_blocking(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.inner.embed(texts)
    }
}

/// A readable name: the hub repository's (`models--org--name/snapshots/rev`), or the
/// folder's.
fn model_name(dir: &Path) -> String {
    let from_hub = dir
        .ancestors()
        .filter_map(|a| a.file_name()?.to_str())
        .find_map(|n| n.strip_prefix("models--"))
        .and_then(|n| n.rsplit("--").next().map(str::to_string));
    // A folder called just "model" (as pip packages ship it) is named by its parent.
    let folder = |d: &Path| d.file_name().and_then(|n| n.to_str()).map(str::to_string);
    from_hub
        .or_else(|| match folder(dir).as_deref() {
            Some("model") => dir.parent().and_then(folder),
            _ => folder(dir),
        })
        .unwrap_or_else(|| "sentence-embedding model".to_string())
}

impl Inner {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let keys: Vec<[u8; 32]> = texts
            .iter()
            .map(|t| *blake3::hash(t.as_bytes()).as_bytes())
            .collect();
        // The lock guards nothing but turns: a panic in an earlier turn leaves nothing
        // inconsistent behind it.
        let _turn = self
            .computing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut found: Vec<Option<Arc<[f32]>>> = {
            let memory = self
                .memory
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            keys.iter().map(|k| memory.get(k).cloned()).collect()
        };
        for (slot, key) in found.iter_mut().zip(&keys) {
            if slot.is_none() {
                *slot = self.read_disk(key);
            }
        }
        // Each distinct missing text once; its copies are filled from memory below.
        let mut seen = std::collections::HashSet::new();
        let missing: Vec<usize> = (0..texts.len())
            .filter(|&i| found[i].is_none() && seen.insert(keys[i]))
            .collect();
        if !missing.is_empty() {
            let loaded = self
                .loaded
                .get_or_init(|| load(&self.dir))
                .as_ref()
                .map_err(|e| EmbedError(e.clone()))?;
            // Shorter texts together: less padding per batch.
            let mut order = missing.clone();
            order.sort_by_key(|&i| (texts[i].len(), i));
            for chunk in order.chunks(BATCH) {
                let batch: Vec<&str> = chunk.iter().map(|&i| texts[i].as_str()).collect();
                let vectors = forward(loaded, &batch).map_err(|e| EmbedError(e.to_string()))?;
                for (&i, vector) in chunk.iter().zip(vectors) {
                    let vector: Arc<[f32]> = Arc::from(vector);
                    self.write_disk(&keys[i], &vector);
                    found[i] = Some(vector);
                }
            }
            let mut memory = self
                .memory
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for &i in &missing {
                if let Some(v) = &found[i] {
                    memory.insert(keys[i], v.clone());
                }
            }
            for (slot, key) in found.iter_mut().zip(&keys) {
                if slot.is_none() {
                    *slot = memory.get(key).cloned();
                }
            }
        }
        found
            .into_iter()
            .map(|v| {
                v.map(|v| v.to_vec())
                    .ok_or_else(|| EmbedError("a text was not embedded".into()))
            })
            .collect()
    }

    fn disk_path(&self, key: &[u8; 32]) -> Option<PathBuf> {
        let hex = hex::encode(key);
        Some(
            self.cache_dir
                .as_ref()?
                .join(&hex[..2])
                .join(format!("{hex}.f32")),
        )
    }

    /// A cached vector, if its file is whole (a damaged one is ignored and rewritten).
    fn read_disk(&self, key: &[u8; 32]) -> Option<Arc<[f32]>> {
        let bytes = std::fs::read(self.disk_path(key)?).ok()?;
        if bytes.is_empty() || Some(bytes.len()) != self.dimension.map(|d| d * 4) {
            return None;
        }
        let vector: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        ((norm - 1.0).abs() < 1e-3).then(|| Arc::from(vector))
    }

    /// Best effort: a cache that cannot be written costs time, never a result.
    fn write_disk(&self, key: &[u8; 32], vector: &[f32]) {
        let Some(path) = self.disk_path(key) else {
            return;
        };
        let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = deepr_checkpoints::atomic::write_atomically(&path, &bytes);
    }
}

fn load(dir: &Path) -> Result<Loaded, String> {
    let read = |file: &str| {
        std::fs::read(dir.join(file))
            .map_err(|e| format!("cannot read {}: {e}", dir.join(file).display()))
    };
    let config: Config = serde_json::from_slice(&read("config.json")?)
        .map_err(|e| format!("{}: config.json is not a BERT config: {e}", dir.display()))?;
    let dimension = config.hidden_size;
    let mut tokenizer = Tokenizer::from_bytes(read("tokenizer.json")?)
        .map_err(|e| format!("{}: tokenizer.json: {e}", dir.display()))?;
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: MAX_TOKENS,
            ..Default::default()
        }))
        .map_err(|e| format!("{}: tokenizer.json: {e}", dir.display()))?;
    tokenizer.with_padding(Some(PaddingParams::default()));
    let weights =
        VarBuilder::from_buffered_safetensors(read("model.safetensors")?, DType::F32, &Device::Cpu)
            .map_err(|e| format!("{}: model.safetensors: {e}", dir.display()))?;
    let model = BertModel::load(weights, &config).map_err(|e| {
        format!(
            "{}: model.safetensors does not fit config.json: {e}",
            dir.display()
        )
    })?;
    Ok(Loaded {
        model,
        tokenizer,
        dimension,
    })
}

/// One forward pass: token embeddings averaged over the real tokens, unit length.
fn forward(loaded: &Loaded, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
    let encodings = loaded
        .tokenizer
        .encode_batch(texts.to_vec(), true)
        .map_err(|e| format!("tokenizing: {e}"))?;
    let width = encodings
        .iter()
        .map(|e| e.get_ids().len())
        .max()
        .unwrap_or(0);
    if width == 0 {
        return Ok(texts.iter().map(|_| vec![0.0; loaded.dimension]).collect());
    }
    let rows = encodings.len();
    let flat = |get: &dyn Fn(&tokenizers::Encoding) -> &[u32]| -> Vec<u32> {
        encodings.iter().flat_map(|e| get(e).to_vec()).collect()
    };
    let ids = flat(&|e| e.get_ids());
    let types = flat(&|e| e.get_type_ids());
    let mask = flat(&|e| e.get_attention_mask());
    let device = Device::Cpu;
    let tensor = |v: Vec<u32>| Tensor::from_vec(v, (rows, width), &device);
    let run = || -> candle_core::Result<Vec<Vec<f32>>> {
        let ids = tensor(ids)?;
        let types = tensor(types)?;
        let mask = tensor(mask)?;
        let hidden = loaded.model.forward(&ids, &types, Some(&mask))?;
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        mean.broadcast_div(&norms)?.to_vec2::<f32>()
    };
    run().map_err(|e| format!("model: {e}"))
}

#[async_trait]
impl SentenceEmbedder for LocalEmbedder {
    fn model_id(&self) -> &str {
        &self.inner.model_id
    }

    fn display_name(&self) -> &str {
        &self.inner.name
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let inner = self.inner.clone();
        let texts = texts.to_vec();
        tokio::task::spawn_blocking(move || inner.embed(&texts))
            .await
            .map_err(|e| EmbedError(format!("embedding task: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_without_the_model_files_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.json"), "{}").unwrap();
        let Err(error) = LocalEmbedder::open(dir.path(), None) else {
            panic!("a folder without tokenizer.json opened");
        };
        assert!(
            error.to_string().contains("tokenizer.json is missing"),
            "{error}"
        );
    }

    #[test]
    fn the_hub_cache_snapshot_is_found_by_its_main_ref() {
        let hub = tempfile::tempdir().unwrap();
        let repo = hub
            .path()
            .join("models--sentence-transformers--all-MiniLM-L6-v2");
        for rev in ["aaa", "bbb"] {
            let dir = repo.join("snapshots").join(rev);
            std::fs::create_dir_all(&dir).unwrap();
            for f in FILES {
                std::fs::write(dir.join(f), "x").unwrap();
            }
        }
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs/main"), "bbb\n").unwrap();
        let found = hub_snapshot(hub.path()).unwrap();
        assert!(found.ends_with("snapshots/bbb"), "{}", found.display());
        assert_eq!(model_name(&found), "all-MiniLM-L6-v2");
        assert!(hub_snapshot(&hub.path().join("elsewhere")).is_none());
    }
}
