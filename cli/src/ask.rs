//! `deepr ask RUN_ID "QUESTION"`: a follow-up question on an earlier run, as a run of
//! its own (checkpointed, resumable, linked to its parent). It is answered from the
//! documents the parent read — searched as `earlier`, served from the archive, never
//! fetched again — at quick depth, the question its one subquestion (no planner or
//! query call). Its sources are searched again only with `--search`, or when the
//! parent's documents hold nothing on the question, which the report then says.

use std::path::PathBuf;

use deepr_session::lineage::{documents_read, Lineage, Relation};
use deepr_stages::research::PlannedQuestion;
use deepr_stages::Depth;

use crate::record::{now_secs, read_run_file, run_dir, RunRecord};
use crate::settings::{check_budget_values, check_corpus, check_topic, out_of, prepare_out};
use crate::{state, usage, BudgetArgs, Failure, Globals};

#[derive(clap::Args, Debug)]
pub struct AskArgs {
    /// The earlier run (see `deepr runs list`).
    pub parent: String,
    /// The follow-up question.
    pub question: String,
    /// Search the earlier run's sources again too (its corpus or web providers), not
    /// only the documents it read.
    #[arg(long)]
    pub search: bool,
    /// Report path (default: a slug of the question in the current folder).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Choose the follow-up's run id (letters, digits, '-', '_', '.'; must not exist yet).
    #[arg(long = "run-id", value_name = "ID")]
    pub new_id: Option<String>,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Extra output formats beside --out (repeatable), as for `deepr run`.
    #[arg(long = "format", value_enum, value_name = "FORMAT")]
    pub formats: Vec<deepr_settings::ReportFormat>,
}

pub fn execute(globals: &Globals, args: &AskArgs) -> Result<u8, Failure> {
    let new_run = prepare(globals, args)?;
    let end = crate::session::execute(
        &new_run.state_dir,
        crate::session::Start::New(Box::new(new_run.record)),
        new_run.options,
    )?;
    Ok(crate::run::exit_code(&end))
}

/// Checks the follow-up and creates it in the state dir without running it (`deepr
/// ask`, and the MCP server's `ask_followup`).
pub fn prepare(globals: &Globals, args: &AskArgs) -> Result<crate::run::NewRun, Failure> {
    let state_dir = state::resolve(globals.state_dir.as_deref())?;
    state::check_run_id(&args.parent)?;
    let parent = read_run_file(&run_dir(&state_dir, &args.parent))
        .ok_or_else(|| {
            usage(format!(
                "no run {:?} in {}; see `deepr runs list`",
                args.parent,
                state_dir.display()
            ))
        })?
        .record;
    let question = check_topic(&args.question)?;
    let max_time = check_budget_values(&args.budget)?;
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
    crate::run::make_run_dir(&state_dir, &record.run_id)?;
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
    Ok(crate::run::NewRun {
        options: crate::run::new_session(globals, &args.budget, max_time, notices),
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
    args: &AskArgs,
    sources: Vec<String>,
    lineage: Lineage,
) -> Result<RunRecord, Failure> {
    let run_id = state::chosen_run_id(args.new_id.as_deref(), question)?;
    let out = out_of(args.out.as_deref(), question)?;
    let out = std::path::absolute(&out).unwrap_or(out);
    let mut formats: Vec<String> = args
        .formats
        .iter()
        .filter_map(|f| f.extra_file().map(String::from))
        .collect();
    formats.sort();
    formats.dedup();
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
