//! A follow-up question on an earlier run (`deepr ask RUN_ID "QUESTION"`, the MCP
//! `ask_followup`), as a run of its own (checkpointed, resumable, linked to its
//! parent). It is answered from the documents the parent read — searched as
//! `earlier`, served from the archive, never fetched again — at quick depth, the
//! question its one subquestion (no planner or query call). Its sources are searched
//! again only with `search`, or when the parent's documents hold nothing on the
//! question, which the report then says.

use crate::lineage::{documents_read, Lineage, Relation};
use deepr_stages::research::PlannedQuestion;
use deepr_stages::Depth;

use super::{
    check_budget, check_corpus, check_topic, make_run_dir, out_of, prepare_out, session_options,
    FollowUpRequest, Globals, NewRun,
};
use crate::record::{now_secs, read_run_file, run_dir, RunRecord};
use crate::{state, usage, Failure};

/// Checks the follow-up and creates it in the state dir without running it (`deepr
/// ask`, and the MCP server's `ask_followup`).
pub fn prepare_follow_up(globals: &Globals, args: &FollowUpRequest) -> Result<NewRun, Failure> {
    let state_dir = state::resolve(globals.state_dir.as_deref())?;
    let parent = parent_record(&state_dir, &args.parent)?;
    let question = check_topic(&args.question)?;
    let max_time = check_budget(&args.budget)?;
    let documents = documents_read(&state_dir, &parent.run_id)?;
    let archive = deepr_checkpoints::FileArchive::open(&state_dir)
        .map_err(|e| Failure::Run(anyhow::anyhow!("cannot open the text archive: {e}")))?;
    let (read, _) = deepr_providers::ReadBefore::new(&documents, &archive)
        .map_err(|e| Failure::Run(anyhow::anyhow!(e)))?;
    if read.is_empty() && !args.search {
        return Err(usage(format!(
            "the archive holds none of the documents run {} read; ask with --search to search its sources again",
            parent.run_id
        )));
    }
    let holds_nothing = !read.speaks_to(&question);
    let mut sources = Vec::new();
    if !read.is_empty() {
        sources.push(deepr_providers::EARLIER.to_string());
    }
    let mut note = None;
    if args.search || holds_nothing {
        let searched = first_sources(&state_dir, &parent);
        if searched.is_empty() {
            return Err(usage(format!(
                "run {} searched no source of its own to search again; ask its parent",
                parent.run_id
            )));
        }
        if let Some(corpus) = parent
            .corpus
            .as_deref()
            .filter(|_| searched.iter().any(|s| s == "corpus"))
        {
            check_corpus(corpus)?;
        }
        if holds_nothing && !args.search {
            note = Some(format!(
                "The documents run {} read hold nothing on this question; deepr searched its sources ({}) again.",
                parent.run_id,
                searched.join(", ")
            ));
        }
        sources.extend(searched);
    }
    let record = follow_up(
        &parent,
        &question,
        args,
        sources,
        Lineage {
            parent: parent.run_id.clone(),
            relation: Relation::Ask,
            parent_created: parent.created,
            documents: if read.is_empty() {
                Vec::new()
            } else {
                documents
            },
            note: note.clone(),
        },
    )?;
    prepare_out(&record.out)?;
    state::prepare(&state_dir)?;
    make_run_dir(&state_dir, &record.run_id)?;
    let mut notices = vec![format!(
        "deepr: a follow-up of run {} over the {} documents it read{}",
        parent.run_id,
        read.len(),
        if args.search {
            ", and its sources again"
        } else {
            ""
        }
    )];
    notices.extend(note.map(|n| format!("deepr: {n}")));
    Ok(NewRun {
        options: session_options(globals, &args.budget, max_time, notices),
        state_dir,
        record,
    })
}

/// The sources the first run of a chain of follow-ups searched (a follow-up's own
/// list names only `earlier`).
fn first_sources(state_dir: &std::path::Path, parent: &RunRecord) -> Vec<String> {
    let mut record = parent.clone();
    // A chain is short; the bound keeps a damaged one from looping.
    for _ in 0..32 {
        let own: Vec<String> = record
            .sources
            .iter()
            .filter(|s| s.as_str() != deepr_providers::EARLIER)
            .cloned()
            .collect();
        let earlier = record.lineage.as_ref().map(|l| l.parent.clone());
        match (own.is_empty(), earlier) {
            (true, Some(id)) => match read_run_file(&run_dir(state_dir, &id)) {
                Some(file) => record = file.record,
                None => return Vec::new(),
            },
            _ => return own,
        }
    }
    Vec::new()
}

/// The follow-up's record: the parent's models, strategy and settings; the question as
/// its topic and its one planned subquestion, searched as asked; quick depth.
fn follow_up(
    parent: &RunRecord,
    question: &str,
    args: &FollowUpRequest,
    sources: Vec<String>,
    lineage: Lineage,
) -> Result<RunRecord, Failure> {
    let run_id = state::chosen_run_id(args.new_id.as_deref(), question)?;
    let out = out_of(args.out.as_deref(), question)?;
    let out = std::path::absolute(&out).unwrap_or(out);
    let formats = super::extra_files(&args.formats);
    Ok(RunRecord {
        run_id,
        topic: question.to_string(),
        brief: crate::record::brief_of(question),
        depth: Depth::Quick,
        sources,
        out,
        created: now_secs(),
        formats,
        user_plan: Some(vec![PlannedQuestion {
            question: question.to_string(),
            queries: vec![question.chars().take(200).collect()],
        }]),
        plan_only: None,
        lineage: Some(lineage),
        ..parent.clone()
    })
}

/// The record of the run `parent` names in `state_dir` (a follow-up's or a refresh's
/// parent); a bad id or a run that is not there is a usage error.
pub(super) fn parent_record(
    state_dir: &std::path::Path,
    parent: &str,
) -> Result<crate::record::RunRecord, Failure> {
    state::check_run_id(parent)?;
    let found = read_run_file(&run_dir(state_dir, parent)).ok_or_else(|| {
        usage(format!(
            "no run {parent:?} in {}; see `deepr runs list`",
            state_dir.display()
        ))
    })?;
    Ok(found.record)
}
