//! `deepr doctor`: which search sources are configured and usable, and (with `--probe`)
//! reachable right now. Keyless providers count as usable without probing.

use deepr_orchestrator::SentenceEmbedder as _;
use deepr_session::ExitStatus;
use std::time::Duration;

use deepr_orchestrator::SearchProvider;
use deepr_providers::{WebApi, WebSearch};

use crate::{Failure, Globals};

#[derive(clap::Args, Debug)]
pub struct DoctorArgs {
    /// Send one small query to each configured provider and report its status.
    #[arg(long)]
    pub probe: bool,
    #[command(flatten)]
    pub urls: crate::SourceUrls,
    /// Read this corpus folder as a run would and list every file it cannot read,
    /// with the reason, before any run.
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<std::path::PathBuf>,
    /// With --corpus: read through links that leave the folder, as `run --follow-links`.
    #[arg(long, requires = "corpus")]
    pub follow_links: bool,
}

pub fn execute(globals: &Globals, args: &DoctorArgs) -> Result<ExitStatus, Failure> {
    if let Some(corpus) = &args.corpus {
        return corpus_files(globals, corpus, args.follow_links);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Run(e.into()))?;
    let apis: Vec<(WebApi, &Option<String>)> = args
        .urls
        .pairs()
        .into_iter()
        .filter_map(|(name, url)| WebApi::parse(name).map(|api| (api, url)))
        .collect();
    let mut usable = 0;
    outln!("{:<10} {:<12} DETAIL", "SOURCE", "STATE");
    outln!(
        "{:<10} {:<12} local folders (--corpus DIR)",
        "corpus",
        "usable"
    );
    usable += 1;
    for (api, url) in apis {
        let key = api
            .key_var()
            .and_then(|v| std::env::var(v).ok())
            .filter(|k| !k.trim().is_empty());
        match WebSearch::new(api, url.as_deref(), key, Duration::from_secs(15)) {
            Err(why) => outln!("{:<10} {:<12} {why}", api.name(), "not set up"),
            Ok(provider) if args.probe => {
                let outcome = runtime.block_on(provider.search("database", 1));
                let state = outcome.status.as_str();
                let ok = matches!(
                    outcome.status,
                    deepr_evidence::report::CallStatus::Ok
                        | deepr_evidence::report::CallStatus::NoResults
                );
                usable += usize::from(ok);
                outln!(
                    "{:<10} {:<12} {}",
                    api.name(),
                    if ok { "reachable" } else { state },
                    outcome
                        .detail
                        .unwrap_or_else(|| format!("{} hit(s)", outcome.hits.len()))
                );
            }
            Ok(_) => {
                usable += 1;
                let detail = if api.key_var().is_some() {
                    "key set"
                } else {
                    "keyless"
                };
                outln!(
                    "{:<10} {:<12} {detail} (use --probe to check it is reachable)",
                    api.name(),
                    "usable"
                );
            }
        }
    }
    // The re-ranker is optional: without it deepr ranks candidates by words only.
    match deepr_session::embedder::embedder(None) {
        Ok(Some(model)) => outln!(
            "re-ranker: {} ({}) in {}",
            model.display_name(),
            model.model_id(),
            model.dir().display()
        ),
        Ok(None) => outln!(
            "re-ranker: none (candidates ranked by words only; set DEEPR_EMBED_MODEL to an all-MiniLM-L6-v2 folder, see README)"
        ),
        Err(Failure::Usage(why)) => outln!("re-ranker: unusable: {why}"),
        Err(Failure::Run(why)) => outln!("re-ranker: unusable: {why:#}"),
    }
    Ok(if usable > 0 {
        ExitStatus::Success
    } else {
        ExitStatus::Failed
    })
}

/// `doctor --corpus DIR`: index the folder as a run would (the index is kept for the
/// run) and list what was read and every file that was not, with its reason. Exit 0
/// when every file was read, 1 when some were not, 2 when the folder is unusable.
fn corpus_files(
    globals: &Globals,
    corpus: &std::path::Path,
    follow_links: bool,
) -> Result<ExitStatus, Failure> {
    let state_dir = crate::state::resolve(globals.state_dir.as_deref())?;
    crate::state::prepare(&state_dir)?;
    let archive =
        deepr_checkpoints::FileArchive::open(&state_dir).map_err(|e| Failure::Run(e.into()))?;
    let (_, report) =
        deepr_providers::CorpusIndex::open_with(corpus, &state_dir, &archive, follow_links)
            .map_err(|e| crate::usage(e.to_string()))?;
    let documents = report.extracted.len() + report.reused.len();
    let held = if documents > report.files_read {
        format!(" ({documents} documents)")
    } else {
        String::new()
    };
    outln!(
        "corpus {}: {} files read{held}, {} not read",
        corpus.display(),
        report.files_read,
        report.skipped.len()
    );
    for key in report.extracted.iter().chain(&report.reused) {
        if key.contains('#') {
            outln!("read: {key}");
        }
    }
    for (path, reason) in &report.skipped {
        outln!("not read: {path} — {reason}");
    }
    for (path, what) in &report.partial {
        outln!("read in part: {path} — {what}");
    }
    Ok(match report.skipped.is_empty() {
        true => ExitStatus::Success,
        false => ExitStatus::Failed,
    })
}
