//! The `deepr` binary: parses the command line, wires real providers to the pipeline,
//! and maps outcomes to exit codes. All research logic lives in the library crates.
//!
//! Exit codes: one map, `deepr_session::ExitStatus` (listed by `deepr --help`).

#[macro_use]
mod output;

mod args;
mod ask;
mod bench;
mod config;
mod console;
mod doctor;
mod export;
mod fleet;
mod mcp;
mod refresh;
mod resume;
mod run;
mod runs;
mod verify;
mod verify_prose;
mod verify_quotes;

use std::path::PathBuf;

// The session library's modules, under the names the commands use.
use deepr_session as session;
pub use deepr_session::request::Globals;
pub use deepr_session::{memory, progress, record, reports, signals, state, util, wiring};
pub use deepr_session::{usage, ExitStatus, Failure};
use std::process::ExitCode;

pub use args::*;

use clap::{Parser, Subcommand};

/// deepr — checkpointed deep research with verbatim quotes.
#[derive(Parser, Debug)]
#[command(name = "deepr", version, about, long_about = None, after_help = ExitStatus::help())]
struct Cli {
    /// Where runs, archived texts and indexes live (default: $DEEPR_STATE_DIR, else the XDG state dir).
    #[arg(long, global = true, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(long, global = true)]
    quiet: bool,
    /// Progress as machine-readable events on stdout, one JSON object per line.
    #[arg(long, global = true)]
    json: bool,
    /// A TOML config file (default: $XDG_CONFIG_HOME/deepr/deepr.toml if it exists).
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Fleet mode: the PostgreSQL database of the shared queue and state
    /// (postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=…]; default $DEEPR_DB, else
    /// `db` in the config file). `run` queues the run for `deepr worker`s; `runs` lists
    /// the fleet's runs.
    #[arg(long, global = true, value_name = "URL")]
    db: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Research a topic and write a report (markdown + JSON sidecar).
    Run(Box<RunArgs>),
    /// Continue a stopped or killed run from its checkpoints; re-renders a finished one.
    Resume(ResumeArgs),
    /// Ask a follow-up question on an earlier run, answered from the documents it read
    /// (no fetch again): a short report of its own, resumable, linked to that run.
    Ask(deepr_session::request::FollowUpRequest),
    /// Run an earlier run's research again over its sources as they are now: a new
    /// report with "What changed since …"; --if-changed skips it when nothing changed.
    Refresh(deepr_session::request::RefreshRequest),
    /// List, inspect, export or remove runs in the state dir.
    #[command(subcommand)]
    Runs(RunsCommand),
    /// Run every topic × strategy and compare tokens, cost, time and quality.
    Bench(BenchArgs),
    /// Show the resolved configuration (secrets redacted).
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Which search sources are configured and usable (`--probe`: reachable now).
    Doctor(doctor::DoctorArgs),
    /// Serve deep research to agents over MCP (stdio, or streamable HTTP with --http).
    Mcp(McpArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Fleet mode: pull runs from the --db queue and execute them (any number of
    /// workers, on any number of machines).
    Worker(fleet::WorkerArgs),
    /// Fleet mode: the database schema.
    #[command(subcommand)]
    Db(DbCommand),
    /// Re-check every quote of a report against the texts it was cut from.
    /// Exit 0 PASS, 1 FAIL, 3 UNVERIFIED (nothing could be checked), 2 bad usage.
    Verify(VerifyArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return match error.use_stderr() {
                true => ExitStatus::Usage.into(),
                false => ExitStatus::Success.into(),
            };
        }
    };
    let globals = cli_globals(&cli);
    let outcome = match cli.command {
        Command::Run(ref args) => run::execute(&globals, args),
        Command::Resume(ref args) => resume::execute(&globals, args),
        Command::Ask(ref args) => ask::execute(&globals, args),
        Command::Refresh(ref args) => refresh::execute(&globals, args),
        Command::Runs(ref command) => runs::execute(&globals, command),
        Command::Verify(ref args) => verify::execute(&globals, args),
        Command::Bench(ref args) => bench::execute(&globals, args),
        Command::Doctor(ref args) => doctor::execute(&globals, args),
        Command::Mcp(ref args) => mcp::execute(&globals, args),
        Command::Worker(ref args) => fleet::work(&globals, args),
        Command::Db(DbCommand::Migrate) => fleet::migrate(&globals),
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut command, "deepr", &mut std::io::stdout());
            Ok(ExitStatus::Success)
        }
        Command::Config(ConfigCommand::Show) => {
            config::show(globals.config.as_deref(), globals.state_dir.as_deref())
        }
    };
    match outcome {
        Ok(status) => status.into(),
        Err(failure) => {
            match &failure {
                Failure::Usage(message) => errln!("error: {message}"),
                Failure::Run(error) => errln!("error: {error:#}"),
            }
            ExitStatus::from(&failure).into()
        }
    }
}

fn cli_globals(cli: &Cli) -> Globals {
    Globals {
        state_dir: cli.state_dir.clone(),
        quiet: cli.quiet,
        events: Some(console::events(cli.quiet, cli.json)),
        config: cli.config.clone(),
        db: cli.db.clone(),
    }
}
