//! A run opened for one session ([`OpenRun`]): its folder, checkpoint store, record and
//! progress reporter, and the run's state as `runs list` shows it ([`set_state`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use deepr_orchestrator::CheckpointStore;

use crate::options::{SessionOptions, Start};
use crate::progress::Reporter;
use crate::record::{now_secs, run_dir, write_owner, write_run_file, RunFile, RunRecord, RunState};
use crate::wiring::FleetLink;
use crate::Failure;

/// Records the run's state in `run.json`.
pub(crate) fn set_state(dir: &Path, record: &RunRecord, state: RunState, note: Option<String>) {
    set_state_labelled(dir, record, state, note, None);
}

/// Like [`set_state`], with the short cause `runs list` shows beside the state
/// (`incomplete (provider unavailable)`, `failed (auth)`).
pub(crate) fn set_state_labelled(
    dir: &Path,
    record: &RunRecord,
    state: RunState,
    note: Option<String>,
    label: Option<&str>,
) {
    let file = RunFile {
        record: record.clone(),
        state,
        note,
        label: label.map(String::from),
        updated: now_secs(),
    };
    // run.json is a convenience copy for `runs list`; the store is authoritative.
    let _ = write_run_file(dir, &file);
}

/// A run opened for one session: its folder, checkpoint store and record.
pub(crate) struct OpenRun {
    pub(crate) dir: PathBuf,
    pub(crate) store: Arc<dyn CheckpointStore>,
    pub(crate) record: RunRecord,
    /// The run's first session (its record was written by this one).
    pub(crate) first: bool,
    pub(crate) reporter: Arc<Reporter>,
    /// Parallel steps for this session.
    pub(crate) concurrency: usize,
}

/// Opens the run's store and record: a new run's record goes first, flushed, before
/// any other work; a resumed one is read from its store.
pub(crate) async fn open(
    state_dir: &Path,
    start: Start,
    options: &SessionOptions,
    fleet: Option<&FleetLink>,
) -> Result<OpenRun, Failure> {
    let run_id = match &start {
        Start::New(record) => record.run_id.clone(),
        Start::Resume(run_id) => run_id.clone(),
    };
    let dir = run_dir(state_dir, &run_id);
    if fleet.is_some() {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let store: Arc<dyn CheckpointStore> = match fleet {
        Some(link) => Arc::clone(&link.store),
        None => Arc::new(crate::record::open_store(&dir, &run_id).await?),
    };
    let (mut record, first) = match start {
        Start::New(record) => (*record, true),
        Start::Resume(_) => (
            crate::record::stored_record(store.as_ref(), &run_id)?,
            false,
        ),
    };
    if let Some(link) = fleet {
        record.out = link.out.clone();
    }
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("run.log"))
        .ok();
    let reporter = Arc::new(Reporter::new(options.events.clone(), log));
    if !options.dry_run {
        write_owner(&dir).context("cannot record the run's owner")?;
    }
    if first {
        set_state(&dir, &record, RunState::Running, None);
        let value = serde_json::to_value(&record).context("cannot serialise the run record")?;
        store
            .put_meta("run", &value)
            .await
            .context("cannot record the run")?;
        reporter.log_line(&format!("run record: {value}"));
    } else if !options.dry_run {
        set_state(&dir, &record, RunState::Running, None);
        reporter.log_line("resume");
    }
    Ok(OpenRun {
        concurrency: options.concurrency.unwrap_or(record.concurrency),
        dir,
        store,
        record,
        first,
        reporter,
    })
}
