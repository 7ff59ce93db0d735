//! `deepr mcp`: the binary's half of the MCP server (`deepr-mcp`). It turns the flags
//! into the server's options and answers what the server asks of a front end: the
//! `deepr verify` gate. Runs are created by the session library's request, as `deepr
//! run` creates them.

use deepr_session::ExitStatus;
use std::path::Path;
use std::sync::Arc;

use deepr_evidence::verify::RowVerdict;
use deepr_mcp::host::Host;
use serde_json::{json, Value};

use crate::{state, usage, Failure, Globals, McpArgs};

pub fn execute(globals: &Globals, args: &McpArgs) -> Result<ExitStatus, Failure> {
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
    let options = deepr_mcp::ServeOptions {
        state_dir,
        roots,
        max_tokens_per_run: args.max_tokens_per_run,
        max_cost_per_run: args.max_cost_per_run,
        http: args.http.clone(),
        bind: args.bind.clone(),
        fleet,
        config: globals.config.clone(),
        say: crate::console::say(),
    };
    deepr_mcp::serve(options, Arc::new(CliHost)).map(|()| ExitStatus::Success)
}

/// The command line's side of the server: the verify gate.
struct CliHost;

fn one_line(tool: &str, failure: Failure) -> String {
    match failure {
        Failure::Usage(message) => format!("{tool}: {message}"),
        Failure::Run(error) => format!("{tool}: {error:#}"),
    }
}

impl Host for CliHost {
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
            "exit_code": gate.status().code(),
            "quotes": checked.rows.len(),
            "prose_sentences": checked.prose.len(),
            "failed": failed_quotes.chain(failed_prose).collect::<Vec<_>>(),
            "warnings": checked.warnings,
            "path": path.display().to_string(),
        }))
    }
}
