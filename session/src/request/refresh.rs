//! An earlier run's research again (`deepr refresh RUN_ID`, the MCP `refresh_run`),
//! over its sources as they are now, as a run of its own linked to it. It asks the
//! earlier run's subquestions (its plan, with the queries it searched first), so an
//! unchanged document gives the same prompts and every such model call is answered by
//! the response cache: the cost grows with what changed. Its report adds "What changed
//! since …" (`deepr_stages::changes`). `if_changed` first compares what the sources
//! hold with what they held for the earlier run and, when nothing changed, creates no
//! run (for a nightly cron job or systemd timer).

use std::path::{Path, PathBuf};

use crate::lineage::{Lineage, Relation, SourcesSeen, PARENT_REPORT, PARENT_SOURCES};
use deepr_stages::research::PlannedQuestion;

use super::{
    check_budget, check_corpus, make_run_dir, prepare_out, session_options, Globals, NewRun,
    RefreshRequest,
};
use crate::record::{now_secs, read_run_file, run_dir, RunRecord};
use crate::{state, usage, Failure};

/// What a refresh asked for comes to.
pub enum Refreshed {
    /// `if_changed`, and no source changed: why nothing was created.
    Unchanged(String),
    /// The refresh run, created, ready for its first session.
    Ready(Box<NewRun>),
}

/// Checks the refresh and creates it in the state dir without running it (`deepr
/// refresh`, and the MCP server's `refresh_run`).
pub fn prepare_refresh(globals: &Globals, args: &RefreshRequest) -> Result<Refreshed, Failure> {
    if super::db_url(globals)?.is_some() {
        return Err(usage(
            "refresh runs on this machine, where its earlier run's report is: drop --db (or unset DEEPR_DB)",
        ));
    }
    let state_dir = state::resolve(globals.state_dir.as_deref())?;
    let parent = super::follow_up::parent_record(&state_dir, &args.parent)?;
    let parent_dir = run_dir(&state_dir, &args.parent);
    if let Some(lineage) = parent
        .lineage
        .as_ref()
        .filter(|l| l.relation == Relation::Ask)
    {
        return Err(usage(format!(
            "run {} is a follow-up of run {}; refresh that run, then ask again",
            parent.run_id, lineage.parent
        )));
    }
    let parent_report = parent.out.with_extension("json");
    let report_bytes = std::fs::read(&parent_report).map_err(|e| {
        usage(format!(
            "run {} has no report at {} ({e}); resume it first (deepr resume {0})",
            parent.run_id,
            parent_report.display()
        ))
    })?;
    // Another run may have written its report to the same path since.
    let report = serde_json::from_slice::<serde_json::Value>(&report_bytes).unwrap_or_default();
    if report["run_id"].as_str() != Some(parent.run_id.as_str()) {
        return Err(usage(format!(
            "{} is no longer run {}'s report (another run wrote it since); re-render that run first (deepr resume {1})",
            parent_report.display(),
            parent.run_id
        )));
    }
    // What changed is told against a finished report, and a refresh starts from its
    // parent's steps: an incomplete one would be written again at the refresh's cost.
    if report["complete"] == serde_json::Value::Bool(false) {
        let why = report["incomplete_reason"]
            .as_str()
            .unwrap_or("stopped early");
        return Err(usage(format!(
            "run {} stopped before its report was complete ({why}); resume it first (deepr resume {0}), then refresh it",
            parent.run_id
        )));
    }
    let max_time = check_budget(&args.budget)?;
    if let Some(corpus) = parent.corpus.as_deref() {
        check_corpus(corpus)?;
    }
    let seen_then = SourcesSeen::read(&parent_dir);
    if args.if_changed {
        // Night after night: against the newest finished refresh, so one change is
        // refreshed once.
        let latest = latest_refresh(&state_dir, &parent.run_id)
            .and_then(|dir| SourcesSeen::read(&dir))
            .or_else(|| seen_then.clone());
        if let Some(unchanged) = unchanged_since(&state_dir, &parent, latest.as_ref())? {
            return Ok(Refreshed::Unchanged(unchanged));
        }
    }
    let record = refreshed(&state_dir, &parent, args)?;
    prepare_out(&record.out)?;
    state::prepare(&state_dir)?;
    make_run_dir(&state_dir, &record.run_id)?;
    let dir = run_dir(&state_dir, &record.run_id);
    let keep = |name: &str, bytes: &[u8]| {
        crate::util::write_atomically(&dir.join(name), bytes).map_err(Failure::Run)
    };
    keep(PARENT_REPORT, &report_bytes)?;
    if let Some(seen) = &seen_then {
        keep(
            PARENT_SOURCES,
            &serde_json::to_vec(seen).map_err(|e| Failure::Run(e.into()))?,
        )?;
    }
    let notices = vec![format!(
        "deepr: a refresh of run {} ({} subquestions as it planned them); unchanged documents cost nothing again",
        parent.run_id,
        record.user_plan.as_ref().map_or(0, Vec::len)
    )];
    Ok(Refreshed::Ready(Box::new(NewRun {
        options: session_options(globals, &args.budget, max_time, notices),
        state_dir,
        record,
    })))
}

/// The folder of the newest finished refresh of run `parent`, if any.
fn latest_refresh(state_dir: &Path, parent: &str) -> Option<PathBuf> {
    let entries = std::fs::read_dir(state_dir.join("runs")).ok()?;
    entries
        .flatten()
        .filter_map(|entry| {
            let file = read_run_file(&entry.path())?;
            let lineage = file.record.lineage.as_ref()?;
            let refreshes = lineage.relation == Relation::Refresh && lineage.parent == parent;
            (refreshes && file.state == crate::record::RunState::Finished)
                .then(|| (file.record.created, entry.path()))
        })
        .max()
        .map(|(_, dir)| dir)
}

/// `Some(what to say)` when the sources hold what they held for `parent`: the corpus
/// indexed now (unchanged files reused) gives the same search fingerprint. Web
/// sources, or an earlier run that kept no fingerprint, are never "unchanged".
fn unchanged_since(
    state_dir: &Path,
    parent: &RunRecord,
    seen_then: Option<&SourcesSeen>,
) -> Result<Option<String>, Failure> {
    let Some(then) = seen_then else {
        return Ok(None);
    };
    let web = parent.sources.iter().any(|s| s != "corpus");
    let Some(corpus) = parent.corpus.as_deref().filter(|_| !web) else {
        return Ok(None);
    };
    let archive = deepr_checkpoints::FileArchive::open(state_dir)
        .map_err(|e| Failure::Run(anyhow::anyhow!("cannot open the text archive: {e}")))?;
    let (index, _) =
        deepr_providers::CorpusIndex::open_with(corpus, state_dir, &archive, parent.follow_links)
            .map_err(|e| usage(e.to_string()))?;
    let now = crate::wiring::search_fingerprint(parent, Some(&index));
    Ok((now == then.fingerprint).then(|| {
        format!(
            "deepr: no source of run {} changed since it (or its latest refresh) ran; no new report (refresh without --if-changed to run it again)",
            parent.run_id
        )
    }))
}

/// The refresh's record: the parent's settings and plan, a new id, a new report path.
fn refreshed(
    state_dir: &Path,
    parent: &RunRecord,
    args: &RefreshRequest,
) -> Result<RunRecord, Failure> {
    let run_id = state::chosen_run_id(args.new_id.as_deref(), &parent.topic)?;
    let out = match &args.out {
        Some(out) => std::path::absolute(out).unwrap_or_else(|_| out.clone()),
        None => {
            let stem = parent
                .out
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("report");
            parent.out.with_file_name(format!("{stem}.{run_id}.md"))
        }
    };
    Ok(RunRecord {
        run_id,
        out,
        created: now_secs(),
        user_plan: Some(parent_plan(state_dir, parent)?),
        plan_only: None,
        lineage: Some(Lineage {
            parent: parent.run_id.clone(),
            relation: Relation::Refresh,
            parent_created: parent.created,
            documents: Vec::new(),
            note: None,
        }),
        ..parent.clone()
    })
}

/// The subquestions the parent researched first, with the queries searched for each
/// (its planner's or its query step's), read from its checkpoints.
fn parent_plan(state_dir: &Path, parent: &RunRecord) -> Result<Vec<PlannedQuestion>, Failure> {
    let planned = crate::lineage::first_plan(state_dir, &parent.run_id)?;
    Ok(planned
        .into_iter()
        .map(|(question, queries)| PlannedQuestion { question, queries })
        .collect())
}
