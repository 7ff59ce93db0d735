//! `deepr mcp`: the binary's half of the MCP server (`deepr-mcp`). It turns the flags
//! into the server's options and answers what the server asks of a front end — a
//! research call read as the `deepr run` command line it stands for (this parser, this
//! validation, this config file: the run is the one the CLI would start), and the
//! `deepr verify` gate.

use std::path::Path;
use std::sync::Arc;

use clap::Parser;
use deepr_evidence::verify::RowVerdict;
use deepr_mcp::host::{CreatedRun, Host, RefreshStart};
use deepr_session::record::FleetJob;
use serde_json::{json, Value};

use crate::{state, usage, Failure, Globals, McpArgs, RunArgs};

pub fn execute(globals: &Globals, args: &McpArgs) -> Result<u8, Failure> {
    let roots = match args.roots.is_empty() {
        true => vec![std::env::current_dir().map_err(|e| {
            usage(format!(
                "cannot read the working directory ({e}); pass --root DIR"
            ))
        })?],
        false => args.roots.clone(),
    };
    let fleet = crate::fleet::db_url(globals)?;
    let state_dir = state::resolve(globals.state_dir.as_deref())?;
    let host = CliHost {
        globals: Globals {
            state_dir: Some(state_dir.clone()),
            quiet: true,
            json: false,
            config: globals.config.clone(),
            db: fleet.clone(),
        },
    };
    let options = deepr_mcp::ServeOptions {
        state_dir,
        roots,
        max_tokens_per_run: args.max_tokens_per_run,
        max_cost_per_run: args.max_cost_per_run,
        http: args.http.clone(),
        bind: args.bind.clone(),
        fleet,
    };
    deepr_mcp::serve(options, Arc::new(host)).map(|()| 0)
}

/// The command line's side of the server: the server's own flags, quiet.
struct CliHost {
    globals: Globals,
}

fn one_line(tool: &str, failure: Failure) -> String {
    match failure {
        Failure::Usage(message) => format!("{tool}: {message}"),
        Failure::Run(error) => format!("{tool}: {error:#}"),
    }
}

/// `deepr COMMAND ARGS…` parsed by the CLI's own parser.
fn parsed(tool: &str, command: &str, line: &[String]) -> Result<crate::Command, String> {
    let argv = ["deepr", command]
        .into_iter()
        .map(str::to_string)
        .chain(line.iter().cloned());
    crate::Cli::try_parse_from(argv)
        .map(|cli| cli.command)
        .map_err(|e| {
            format!(
                "{tool}: {}",
                e.to_string().lines().next().unwrap_or("bad arguments")
            )
        })
}

/// `deepr run ARGS…` parsed by the CLI's own parser.
fn run_args(tool: &str, line: &[String]) -> Result<Box<RunArgs>, String> {
    match parsed(tool, "run", line)? {
        crate::Command::Run(args) => Ok(args),
        _ => Err(format!("{tool}: not a run command line")),
    }
}

impl Host for CliHost {
    fn create_run(&self, line: &[String]) -> Result<CreatedRun, String> {
        let args = run_args("research", line)?;
        let new_run =
            crate::run::prepare_local(&self.globals, &args).map_err(|f| one_line("research", f))?;
        Ok(CreatedRun {
            record: new_run.record,
            options: new_run.options,
        })
    }

    fn create_follow_up(&self, line: &[String]) -> Result<CreatedRun, String> {
        let crate::Command::Ask(args) = parsed("ask_followup", "ask", line)? else {
            return Err("ask_followup: not a follow-up command line".into());
        };
        let new_run =
            crate::ask::prepare(&self.globals, &args).map_err(|f| one_line("ask_followup", f))?;
        Ok(CreatedRun {
            record: new_run.record,
            options: new_run.options,
        })
    }

    fn create_refresh(&self, line: &[String]) -> Result<RefreshStart, String> {
        let crate::Command::Refresh(args) = parsed("refresh_run", "refresh", line)? else {
            return Err("refresh_run: not a refresh command line".into());
        };
        match crate::refresh::prepare(&self.globals, &args)
            .map_err(|f| one_line("refresh_run", f))?
        {
            crate::refresh::Refreshed::Unchanged(why) => Ok(RefreshStart::Unchanged(why)),
            crate::refresh::Refreshed::Ready(new_run) => {
                Ok(RefreshStart::Created(Box::new(CreatedRun {
                    record: new_run.record,
                    options: new_run.options,
                })))
            }
        }
    }

    fn fleet_job(&self, line: &[String]) -> Result<FleetJob, String> {
        let args = run_args("research", line)?;
        match crate::run::prepare_fleet(&self.globals, &args) {
            Ok(Some((_, job))) => Ok(job),
            Ok(None) => {
                Err("research: no fleet database is configured any more; restart deepr mcp".into())
            }
            Err(failure) => Err(one_line("research", failure)),
        }
    }

    fn estimate(&self, line: &[String]) -> Result<Value, String> {
        let args = run_args("estimate_cost", line)?;
        let settings = crate::settings::validate(&self.globals, &args)
            .map_err(|f| one_line("estimate_cost", f))?;
        let (summary, dollars) =
            crate::run::estimate_of(&settings).map_err(|f| one_line("estimate_cost", f))?;
        let e = deepr_stages::estimate::estimate(
            settings.depth,
            settings.strategy,
            settings.model_reading(),
        );
        Ok(json!({
            "summary": summary,
            "depth": settings.depth.as_str(),
            "strategy": settings.strategy.as_str(),
            "reading": settings.model_reading().map_or("ranked", |r| r.as_str()),
            "model": settings.llm_cheap,
            "calls": [e.calls_low, e.calls_high],
            "tokens": [e.tokens_low, e.tokens_high],
            "dollars": dollars.map(|(low, high)| [low, high]),
        }))
    }

    fn verify(&self, path: &Path, state_dir: Option<&Path>) -> Result<Value, String> {
        let checked = crate::verify::check(path, state_dir, None)
            .map_err(|f| one_line("verify_report", f))?;
        let gate = checked.gate();
        let failed_quotes = checked
            .rows
            .iter()
            .zip(&checked.verdicts)
            .filter(|(_, v)| matches!(v, RowVerdict::Failed(_)))
            .map(|(row, v)| {
                json!({"row": row.row, "claim": row.claim, "locator": row.locator, "why": v.why()})
            });
        let failed_prose = checked
            .prose
            .iter()
            .zip(&checked.prose_verdicts)
            .filter(|(_, v)| matches!(v, RowVerdict::Failed(_)))
            .map(
                |(p, v)| json!({"row": format!("P{}", p.row), "sentence": p.text, "why": v.why()}),
            );
        Ok(json!({
            "summary": gate.lines.last().cloned().unwrap_or_default(),
            "outcome": gate.outcome.as_str(),
            "exit_code": gate.code,
            "quotes": checked.rows.len(),
            "prose_sentences": checked.prose.len(),
            "failed": failed_quotes.chain(failed_prose).collect::<Vec<_>>(),
            "warnings": checked.warnings,
            "path": path.display().to_string(),
        }))
    }
}
