//! `deepr doctor`: which search sources are configured and usable, and (with `--probe`)
//! reachable right now. Keyless providers count as usable without probing.

use std::time::Duration;

use deepr_orchestrator::SearchProvider;
use deepr_providers::{WebApi, WebSearch};

use crate::{Failure, Globals};

#[derive(clap::Args, Debug)]
pub struct DoctorArgs {
    /// Send one small query to each configured provider and report its status.
    #[arg(long)]
    pub probe: bool,
    #[arg(long, value_name = "URL")]
    pub wikipedia_url: Option<String>,
    #[arg(long, value_name = "URL")]
    pub arxiv_url: Option<String>,
    #[arg(long, value_name = "URL")]
    pub hn_url: Option<String>,
    #[arg(long, value_name = "URL")]
    pub searxng_url: Option<String>,
    #[arg(long, value_name = "URL")]
    pub brave_url: Option<String>,
    #[arg(long, value_name = "URL")]
    pub tavily_url: Option<String>,
}

pub fn execute(_globals: &Globals, args: &DoctorArgs) -> Result<u8, Failure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Run(e.into()))?;
    let apis = [
        (WebApi::Wikipedia, &args.wikipedia_url),
        (WebApi::Arxiv, &args.arxiv_url),
        (WebApi::HackerNews, &args.hn_url),
        (WebApi::Searxng, &args.searxng_url),
        (WebApi::Brave, &args.brave_url),
        (WebApi::Tavily, &args.tavily_url),
    ];
    let mut usable = 0;
    println!("{:<10} {:<12} DETAIL", "SOURCE", "STATE");
    println!(
        "{:<10} {:<12} local folders (--corpus DIR)",
        "corpus", "usable"
    );
    usable += 1;
    for (api, url) in apis {
        let key = api
            .key_var()
            .and_then(|v| std::env::var(v).ok())
            .filter(|k| !k.trim().is_empty());
        match WebSearch::new(api, url.as_deref(), key, Duration::from_secs(15)) {
            Err(why) => println!("{:<10} {:<12} {why}", api.name(), "not set up"),
            Ok(provider) if args.probe => {
                let outcome = runtime.block_on(provider.search("database", 1));
                let state = outcome.status.as_str();
                let ok = matches!(
                    outcome.status,
                    deepr_evidence::report::CallStatus::Ok
                        | deepr_evidence::report::CallStatus::NoResults
                );
                usable += usize::from(ok);
                println!(
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
                println!(
                    "{:<10} {:<12} {detail} (use --probe to check it is reachable)",
                    api.name(),
                    "usable"
                );
            }
        }
    }
    Ok(if usable > 0 { 0 } else { 1 })
}
