//! `deepr runs list|show|rm`: the runs in the state dir.

use deepr_session::ExitStatus;
use std::collections::BTreeMap;
use std::path::Path;

use deepr_checkpoints::CallJournal;
use deepr_orchestrator::CheckpointStore;

use crate::record::open_store;
use crate::record::{age, process_alive, read_owner, read_run_file, run_dir, RunFile, RunState};
use crate::{state, usage, Failure, Globals, RunsCommand};

/// A run's state as shown: a `running` run whose process is gone was killed.
fn shown_state(dir: &std::path::Path, file: &RunFile) -> String {
    match file.state {
        RunState::Running => match read_owner(dir) {
            Some(owner) if process_alive(owner.pid) => format!("running (pid {})", owner.pid),
            _ => "killed (resumable)".to_string(),
        },
        other => match &file.label {
            Some(label) => format!("{} ({label})", other.as_str()),
            None => other.as_str().to_string(),
        },
    }
}

pub fn execute(globals: &Globals, command: &RunsCommand) -> Result<ExitStatus, Failure> {
    if let Some(url) = crate::fleet::db_url(globals)? {
        return crate::fleet::runs::execute(&url, command, globals.quiet);
    }
    let state_dir = state::resolve(globals.state_dir.as_deref())?;
    match command {
        RunsCommand::List => {
            list(&state_dir);
            Ok(ExitStatus::Success)
        }
        RunsCommand::Follow { .. } => Err(usage(
            "`runs follow` follows a fleet run: pass --db postgres://… or set DEEPR_DB",
        )),
        RunsCommand::Search { query } => {
            crate::console::print_found(&crate::memory::search(&state_dir, query), query);
            Ok(ExitStatus::Success)
        }
        RunsCommand::Show { run_id } => show(&state_dir, run_id),
        RunsCommand::Export { run_id, out } => {
            let dir = existing(&state_dir, run_id)?;
            crate::export::export(&state_dir, &dir, run_id, out)
        }
        RunsCommand::Rm { run_id } => remove(&state_dir, run_id, globals.quiet),
    }
}

/// `runs list`: every run of the state dir, oldest first.
fn list(state_dir: &Path) {
    let mut runs: Vec<(u64, String, String)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(state_dir.join("runs")) {
        for entry in entries.flatten() {
            let dir = entry.path();
            let Some(file) = read_run_file(&dir) else {
                continue;
            };
            let (tokens, _) = CallJournal::spent(&dir.join("calls.jsonl"));
            let topic = match &file.record.lineage {
                Some(l) => format!(
                    "[{} of {}] {}",
                    l.relation.as_str(),
                    l.parent,
                    file.record.topic
                ),
                None => file.record.topic.clone(),
            };
            let topic: String = topic.chars().take(60).collect();
            let line = format!(
                "{:<28} {:<20} {:>9} {:>5}  {topic}",
                file.record.run_id,
                shown_state(&dir, &file),
                tokens,
                age(file.record.created)
            );
            runs.push((file.record.created, file.record.run_id.clone(), line));
        }
    }
    runs.sort();
    outln!(
        "{:<28} {:<20} {:>9} {:>5}  TOPIC",
        "RUN",
        "STATE",
        "TOKENS",
        "AGE"
    );
    for (_, _, line) in runs {
        outln!("{line}");
    }
}

/// `runs show RUN_ID`: its record, state, model calls by stage and finished steps.
fn show(state_dir: &Path, run_id: &str) -> Result<ExitStatus, Failure> {
    let dir = existing(state_dir, run_id)?;
    let file = read_run_file(&dir).ok_or_else(|| {
        usage(format!(
            "run {run_id} has no run.json; it was stopped before it started"
        ))
    })?;
    show_record(&dir, run_id, &file);
    show_calls(&dir);
    show_steps(&dir, run_id)?;
    Ok(ExitStatus::Success)
}

fn show_record(dir: &Path, run_id: &str, file: &RunFile) {
    let record = &file.record;
    outln!("run:       {run_id}");
    outln!("topic:     {}", record.topic);
    if let Some(lineage) = &record.lineage {
        outln!(
            "follows:   run {} ({}; {} of its documents searched as `earlier`)",
            lineage.parent,
            lineage.relation.as_str(),
            lineage.documents.len()
        );
    }
    outln!(
        "state:     {}{}",
        shown_state(dir, file),
        file.note
            .as_deref()
            .map(|n| format!(" — {n}"))
            .unwrap_or_default()
    );
    outln!(
        "settings:  depth {}, strategy {}, concurrency {}",
        record.depth.as_str(),
        record.strategy.as_str(),
        record.concurrency
    );
    outln!(
        "models:    strong {}, cheap {}{}",
        record.llm_strong,
        record.llm_cheap,
        record
            .llm_base_url
            .as_deref()
            .map(|u| format!(" at {u}"))
            .unwrap_or_default()
    );
    outln!(
        "sources:   {}{}",
        record.sources.join(", "),
        record
            .corpus
            .as_ref()
            .map(|c| format!(" (corpus {})", c.display()))
            .unwrap_or_default()
    );
    let exists = if record.out.exists() {
        ""
    } else {
        " (not written yet)"
    };
    outln!("report:    {}{exists}", record.out.display());
}

/// Model calls by stage, from the run's call journal.
fn show_calls(dir: &Path) {
    let journal = CallJournal::read(&dir.join("calls.jsonl"));
    let mut by_stage: BTreeMap<&str, (u64, u64, u64)> = BTreeMap::new();
    for entry in &journal {
        let slot = by_stage.entry(entry.stage.as_str()).or_default();
        if entry.cache_hit {
            slot.2 += 1;
        } else {
            slot.0 += 1;
            slot.1 += entry.prompt_tokens + entry.completion_tokens;
        }
    }
    outln!("model calls by stage (calls, tokens, cache hits):");
    for (stage, (calls, tokens, hits)) in &by_stage {
        outln!("  {stage:<11} {calls:>4} {tokens:>9} {hits:>4}");
    }
}

/// Finished steps by stage, from the run's store (unavailable while another process
/// holds it).
fn show_steps(dir: &Path, run_id: &str) -> Result<(), Failure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Run(e.into()))?;
    match runtime.block_on(open_store(dir, run_id)) {
        Ok(store) => {
            let nodes = store.finished_nodes().map_err(|e| Failure::Run(e.into()))?;
            let mut per_stage: BTreeMap<String, usize> = BTreeMap::new();
            for node in &nodes {
                let stage = node.rsplit('/').next().unwrap_or(node).to_string();
                *per_stage.entry(stage).or_default() += 1;
            }
            let list: Vec<String> = per_stage.iter().map(|(s, n)| format!("{s} {n}")).collect();
            outln!("finished steps: {} ({})", nodes.len(), list.join(", "));
            Ok(())
        }
        Err(Failure::Usage(message)) => {
            outln!("finished steps: unavailable — {message}");
            Ok(())
        }
        Err(other) => Err(other),
    }
}

/// `runs rm RUN_ID`, refused while another process executes the run.
fn remove(state_dir: &Path, run_id: &str, quiet: bool) -> Result<ExitStatus, Failure> {
    let dir = existing(state_dir, run_id)?;
    {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Failure::Run(e.into()))?;
        match runtime.block_on(open_store(&dir, run_id)) {
            Err(Failure::Usage(message)) => return Err(usage(message)),
            Ok(_) | Err(Failure::Run(_)) => {}
        }
    }
    std::fs::remove_dir_all(&dir)
        .map_err(|e| Failure::Run(anyhow::anyhow!("cannot remove {}: {e}", dir.display())))?;
    if !quiet {
        errln!("deepr: removed run {run_id} (its report and the shared caches stay)");
    }
    Ok(ExitStatus::Success)
}

fn existing(state_dir: &std::path::Path, run_id: &str) -> Result<std::path::PathBuf, Failure> {
    state::check_run_id(run_id)?;
    let dir = run_dir(state_dir, run_id);
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(usage(format!(
            "no run {run_id:?} in {}; see `deepr runs list`",
            state_dir.display()
        )))
    }
}
