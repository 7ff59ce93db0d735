//! Durable state: the per-run checkpoint store (sled) and the content-addressed file
//! stores that runs share (archived page texts, response caches).
//!
//! Layout under the state dir:
//! ```text
//! runs/<run-id>/checkpoints.sled   one sled database per run (sled locks per process)
//! runs/<run-id>/run.log            the run's log
//! runs/<run-id>/calls.jsonl         journal of every model call (what the run spent)
//! archive/<aa>/<sha256>.txt        archived texts, by SHA-256 of their content
//! cache/llm/<aa>/<blake3>.json      model answers by request hash (shared by runs)
//! corpus/<blake3(path)>/           corpus indexes (deepr-providers)
//! ```
//! Shared stores are written by temp-file + rename, so two runs writing the same
//! entry at once both succeed and a reader never sees half a file.

pub mod archive;
pub mod atomic;
pub mod cache;
pub mod sled_store;

pub use archive::{ArchiveMirror, FileArchive};
pub use atomic::write_atomically;
pub use cache::{AnswerCache, CachedLlm, CallJournal, CallLog, JournalEntry, ResponseCache};
pub use sled_store::{SledStore, SCHEMA_VERSION};
