//! The fleet worker (`deepr worker --db URL`): pull runs from the fleet queue and
//! execute them as sessions.
//!
//! A claimed run is executed as a session whose checkpoint store, response cache and
//! call journal are the fleet's (`deepr_fleet::PgStore`, `PgAnswers`, `PgCallLog`), so
//! a run another worker started resumes where it stopped and no completed model call is
//! paid twice. While it works the worker extends the run's lease every third of
//! [`LEASE_SECS`]; a lease found lost stops the session (its late writes are refused
//! anyway). Corpora are read at the path the run names (it must be readable on every
//! worker); archived texts, corpus indexes and embeddings stay in this worker's state
//! dir. The reports (and a verifiable export bundle) are stored in the database and
//! also written to the run's `--out` when that folder exists here.
//!
//! How a session ends decides what happens to the run: finished or stopped by a budget
//! → settled with its reports; a provider unavailable, a missing key or corpus, an
//! error → released to the queue after a pause (another worker may have what this one
//! lacks), parked after `--max-attempts` claims; Ctrl-C → every held run released
//! at once.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use backon::BackoffBuilder;
use deepr_checkpoints::ArchiveMirror;
use deepr_fleet::{Claim, Fleet, FleetError, PgAnswers, PgArchive, PgCallLog, PgRateGate, PgStore};
use deepr_orchestrator::CheckpointStore;

pub mod connection;
mod heartbeat;
mod settled;

use deepr_session::options::Say;
use deepr_session::record::FleetJob;
use deepr_session::wiring::FleetLink;
use deepr_session::{
    state, usage, ExitStatus, Failure, SessionEnd, SessionOptions, Shortfall, Signal, Start,
};

use connection::connect;
use heartbeat::Heartbeat;
use settled::{done, Settle};

/// The note of a run released because a provider stayed unavailable.
const UNAVAILABLE: &str = "a provider stayed unavailable; checkpoints kept";
/// The end of the note of a run released because a provider refused the credentials.
const AUTH_REFUSED: &str = "a provider refused the credentials it has; left for another worker";

/// How a parked run ended, when its last release says (a provider unavailable, the
/// credentials refused): the exit status a local run would have had. `None`: it failed.
pub fn parked_status(note: &str) -> Option<ExitStatus> {
    if note.ends_with(UNAVAILABLE) {
        Some(ExitStatus::Unavailable)
    } else if note.ends_with(AUTH_REFUSED) {
        Some(ExitStatus::AuthRefused)
    } else {
        None
    }
}

/// A claim's lease unless `--lease` says otherwise (seconds).
pub const LEASE_SECS: u64 = 30;

/// How a worker works (`deepr worker`'s flags).
#[derive(Debug)]
pub struct WorkerOptions {
    /// Runs this worker executes at once (1–16).
    pub concurrency: usize,
    /// Seconds a claim holds a run without a heartbeat before another worker may take it
    /// over (5–3600).
    pub lease: u64,
    /// Claims after which a run that never settles is parked with its last error.
    pub max_attempts: u32,
    /// Exit once the queue has nothing visible and no run is held (batch jobs, tests).
    pub exit_when_idle: bool,
}

/// How a worker speaks: through the front end's `say` (the command line: stderr),
/// its news (claims, settled runs) only when not `quiet`, its trouble always.
#[derive(Clone)]
pub struct Voice {
    pub quiet: bool,
    pub say: Say,
}

impl Voice {
    /// Claims and settled runs: not said with `--quiet`.
    fn news(&self, line: &str) {
        if !self.quiet {
            (self.say)(line);
        }
    }

    /// Errors (a lost lease, the database away): said even with `--quiet`.
    fn trouble(&self, line: &str) {
        (self.say)(line);
    }
}

/// Where this worker is, for `runs list` ("host/pid").
fn worker_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "worker".into());
    format!("{host}/{}", std::process::id())
}

/// Serves the fleet at `url` until stopped (or idle, with `exit_when_idle`); archived
/// texts, corpus indexes and embeddings go to `state_dir`.
pub fn execute(
    url: &str,
    state_dir: &Path,
    args: &WorkerOptions,
    voice: Voice,
) -> Result<ExitStatus, Failure> {
    if !(1..=16).contains(&args.concurrency) {
        return Err(usage(format!(
            "--concurrency {} is out of range; use 1–16",
            args.concurrency
        )));
    }
    if !(5..=3600).contains(&args.lease) {
        return Err(usage(format!(
            "--lease {} is out of range; use 5–3600 seconds",
            args.lease
        )));
    }
    if args.max_attempts == 0 || args.max_attempts > 1000 {
        return Err(usage("--max-attempts must be 1–1000"));
    }
    state::prepare(state_dir)?;
    connection::runtime()?.block_on(work(url, state_dir, args, voice))
}

async fn work(
    url: &str,
    state_dir: &Path,
    args: &WorkerOptions,
    voice: Voice,
) -> Result<ExitStatus, Failure> {
    let fleet = connect(url).await?;
    let mirror: Arc<dyn ArchiveMirror> =
        Arc::new(PgArchive::start(fleet.options.clone()).map_err(connection::failure)?);
    let name = worker_name();
    let lease = i32::try_from(args.lease).unwrap_or(30);
    let max_attempts = i32::try_from(args.max_attempts).unwrap_or(5);
    voice.news(&format!(
        "deepr worker {name}: serving {} (concurrency {}, lease {} s)",
        fleet.shown, args.concurrency, args.lease
    ));
    let stop = Arc::new(AtomicBool::new(false));
    // First Ctrl-C/SIGTERM: stop claiming, let held runs checkpoint and release them.
    // Second: exit at once (their leases run out and other workers resume them).
    let flag = Arc::clone(&stop);
    // Which signal stopped it, for the exit status (0 until one does).
    let caught = Arc::new(std::sync::atomic::AtomicU8::new(0));
    let caught_by = Arc::clone(&caught);
    let (first, second) = (voice.clone(), voice.clone());
    deepr_session::signals::on_interrupt(
        move |signal| {
            caught_by.store(signal.code(), Ordering::SeqCst);
            flag.store(true, Ordering::SeqCst);
            first.trouble("\ndeepr worker: stopping — held runs checkpoint and go back to the queue (press Ctrl-C again to quit at once)");
        },
        move |_| {
            second.trouble("\ndeepr worker: stopped at once; held runs will be resumed by other workers when their leases run out")
        },
    );
    let context = Arc::new(Worker {
        fleet: fleet.clone(),
        mirror,
        state_dir: state_dir.to_path_buf(),
        name: name.clone(),
        lease,
        stop_all: Arc::clone(&stop),
        voice: voice.clone(),
    });
    let mut held = tokio::task::JoinSet::new();
    let reconnect = || {
        backon::ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(500))
            .with_max_delay(Duration::from_secs(30))
            .with_jitter()
            .without_max_times()
            .build()
    };
    let mut backoff = reconnect();
    loop {
        while held.try_join_next().is_some() {}
        if stop.load(Ordering::SeqCst) {
            break;
        }
        if held.len() < args.concurrency {
            match fleet.claim(&name, lease, max_attempts).await {
                Ok(Some(claim)) => {
                    backoff = reconnect();
                    voice.news(&format!(
                        "deepr worker {name}: claimed run {} (attempt {})",
                        claim.run_id, claim.attempt
                    ));
                    held.spawn(execute_claim(Arc::clone(&context), claim));
                    continue;
                }
                Ok(None) if args.exit_when_idle && held.is_empty() => break,
                Ok(None) => {}
                Err(error) => {
                    // The database went away: start nothing, retry with backoff. Held runs
                    // keep what they checkpointed; their leases run out if this lasts.
                    let delay = backoff.next().unwrap_or(Duration::from_secs(30));
                    voice.trouble(&format!(
                        "deepr worker {name}: {error}; retrying in {:.1} s",
                        delay.as_secs_f64()
                    ));
                    tokio::time::sleep(delay).await;
                    continue;
                }
            }
        }
        tokio::select! {
            _ = held.join_next(), if !held.is_empty() => {}
            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
        }
    }
    while held.join_next().await.is_some() {}
    Ok(match Signal::from_code(caught.load(Ordering::SeqCst)) {
        Some(signal) => ExitStatus::Interrupted(signal),
        None => ExitStatus::Success,
    })
}

/// What every run a worker holds shares.
struct Worker {
    fleet: Fleet,
    mirror: Arc<dyn ArchiveMirror>,
    state_dir: PathBuf,
    name: String,
    lease: i32,
    stop_all: Arc<AtomicBool>,
    voice: Voice,
}

/// Execute one claimed run to a settled state (or back to the queue). The heartbeat
/// runs until the settlement or release has committed.
async fn execute_claim(worker: Arc<Worker>, claim: Claim) {
    let run_id = claim.run_id.clone();
    let fleet = &worker.fleet;
    let beat = Heartbeat::start(fleet, &claim, worker.lease, &worker.stop_all);
    let outcome = match run_claim(&worker, &claim, &beat).await {
        Err(FleetError::LeaseLost(run)) => Err(FleetError::LeaseLost(run)),
        // Anything else that stopped the claim goes back to the queue with its reason
        // (and counts towards parking).
        Err(error) => Ok(Settle::Release {
            delay: worker.lease.max(1),
            note: format!("worker {}: {error}", worker.name),
            graceful: false,
        }),
        other => other,
    };
    let mut retries = backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(500))
        .with_max_delay(Duration::from_secs(10))
        .with_max_times(6)
        .build();
    let settled = loop {
        let attempt = match &outcome {
            Ok(Settle::Done {
                state,
                note,
                reports,
                memory,
            }) => {
                let settled = fleet
                    .settle(&claim, state, note.as_deref(), reports)
                    .await
                    .map(|()| state.to_string());
                if let (Ok(_), Some(memory)) = (&settled, memory) {
                    // Research memory is a convenience: a failure here fails nothing.
                    let _ = fleet.remember(&claim.run_id, memory).await;
                }
                settled
            }
            Ok(Settle::Release {
                delay,
                note,
                graceful,
            }) => fleet
                .release(&claim, *delay, note, *graceful)
                .await
                .map(|()| format!("released ({note})")),
            Err(FleetError::LeaseLost(run)) => Err(FleetError::LeaseLost(run.clone())),
            Err(other) => Err(FleetError::Db(other.to_string())),
        };
        match attempt {
            // The database is away for a moment: the lease is still ours while we beat.
            Err(FleetError::Db(_)) if !beat.lost.load(Ordering::SeqCst) => match retries.next() {
                Some(pause) => tokio::time::sleep(pause).await,
                None => break attempt,
            },
            done => break done,
        }
    };
    drop(beat);
    let name = &worker.name;
    match settled {
        Ok(what) => worker
            .voice
            .news(&format!("deepr worker {name}: run {run_id}: {what}")),
        Err(error) => worker
            .voice
            .trouble(&format!("deepr worker {name}: run {run_id}: {error}")),
    }
}

async fn run_claim(worker: &Worker, claim: &Claim, beat: &Heartbeat) -> Result<Settle, FleetError> {
    let job = match checked_job(claim) {
        Ok(job) => job,
        Err(why) => return Ok(refused(why)),
    };
    let max_time = match job.max_time_secs.map(Duration::try_from_secs_f64) {
        None => None,
        Some(Ok(max_time)) => Some(max_time),
        Some(Err(_)) => return Ok(refused("its --max-time is not a duration".into())),
    };
    let (link, resume) = link(worker, claim, &job, beat).await?;
    let local_out = link.out.clone();
    let options = SessionOptions::unattended(job.max_tokens, job.max_cost, max_time);
    let start = if resume {
        Start::Resume(claim.run_id.clone())
    } else {
        Start::New(Box::new(job.record.clone()))
    };
    let ended = deepr_session::session(&worker.state_dir, start, options, Some(link)).await;
    if beat.lost.load(Ordering::SeqCst) {
        return Err(FleetError::LeaseLost(claim.run_id.clone()));
    }
    Ok(settle(worker, claim, &job, &local_out, ended))
}

/// A claimed run that cannot run is settled as failed, with why.
fn refused(why: String) -> Settle {
    Settle::Done {
        state: "failed",
        note: Some(why),
        reports: serde_json::json!({}),
        memory: None,
    }
}

/// The claim's job, checked like any input before it names a path or a duration.
fn checked_job(claim: &Claim) -> Result<FleetJob, String> {
    let job: FleetJob = serde_json::from_value(claim.record.clone()).map_err(|error| {
        format!("its record is from another deepr version or damaged ({error})")
    })?;
    if let Err(error) = state::check_run_id(&claim.run_id) {
        let why = match error {
            Failure::Usage(why) => why,
            Failure::Run(why) => why.to_string(),
        };
        return Err(format!("its run id is unusable: {why}"));
    }
    Ok(job)
}

/// The session's link to the fleet (store, answers, journal, rate gate, archive
/// mirror, a local folder for the reports), and whether the run already started.
async fn link(
    worker: &Worker,
    claim: &Claim,
    job: &FleetJob,
    beat: &Heartbeat,
) -> Result<(FleetLink, bool), FleetError> {
    let fleet = &worker.fleet;
    let store = PgStore::open(&fleet.pool, &claim.run_id, claim.epoch)
        .await
        .map_err(|e| FleetError::Db(e.to_string()))?;
    let spent = deepr_fleet::answers::spent(&fleet.pool, &claim.run_id).await?;
    let resume = store.get_meta("run").ok().flatten().is_some();
    let out_dir = worker.state_dir.join("fleet-out").join(&claim.run_id);
    let _ = std::fs::remove_dir_all(&out_dir);
    std::fs::create_dir_all(&out_dir).map_err(|e| FleetError::Db(e.to_string()))?;
    let file_name = job
        .record
        .out
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "report.md".into());
    let link = FleetLink {
        store: Arc::new(store),
        answers: Arc::new(PgAnswers {
            pool: fleet.pool.clone(),
        }),
        calls: Arc::new(PgCallLog {
            pool: fleet.pool.clone(),
            run_id: claim.run_id.clone(),
            worker: worker.name.clone(),
        }),
        spent,
        rate: Arc::new(PgRateGate {
            pool: fleet.pool.clone(),
        }),
        archive: Arc::clone(&worker.mirror),
        out: out_dir.join(&file_name),
        stop: Arc::clone(&beat.stop),
    };
    Ok((link, resume))
}

/// How a session's end settles the claimed run: done (finished, or incomplete by its
/// budget), or released for a later attempt (interrupted, a provider unavailable or
/// refusing the credentials, a failure).
fn settle(
    worker: &Worker,
    claim: &Claim,
    job: &FleetJob,
    local_out: &Path,
    ended: Result<SessionEnd, Failure>,
) -> Settle {
    let (state_dir, name) = (worker.state_dir.as_path(), worker.name.as_str());
    // Back off per attempt: half a lease, a lease, one and a half… at most ten minutes.
    let attempt_pause = (worker.lease / 2)
        .max(1)
        .saturating_mul(claim.attempt.max(1))
        .min(600);
    let release = |delay: i32, note: String| Settle::Release {
        delay,
        note,
        graceful: false,
    };
    match ended {
        // A worker's session is never a dry run or plan-only (those run locally).
        Ok(SessionEnd::Finished(..) | SessionEnd::Previewed | SessionEnd::PlanWritten(_)) => {
            done("finished", None, state_dir, &worker.mirror, job, local_out)
        }
        Ok(SessionEnd::Incomplete {
            shortfall: Shortfall::Budget,
            ..
        }) => done(
            "incomplete",
            Some("stopped by its budget".into()),
            state_dir,
            &worker.mirror,
            job,
            local_out,
        ),
        Ok(SessionEnd::Interrupted(_)) => Settle::Release {
            delay: 0,
            note: format!("worker {name} stopped; checkpoints kept"),
            graceful: true,
        },
        Ok(SessionEnd::Incomplete {
            shortfall: Shortfall::Unavailable,
            ..
        }) => release(60, UNAVAILABLE.into()),
        Ok(SessionEnd::AuthRefused { .. }) => {
            release(attempt_pause, format!("worker {name}: {AUTH_REFUSED}"))
        }
        Err(Failure::Usage(message)) => release(attempt_pause, format!("worker {name}: {message}")),
        Err(Failure::Run(error)) => release(
            attempt_pause,
            format!("worker {name}: {}", first_line(&format!("{error:#}"))),
        ),
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parked_run_ends_as_a_local_run_of_its_last_release_would() {
        let parked = |last: &str| format!("parked after 5 attempts; last: {last}");
        assert_eq!(
            parked_status(&parked(UNAVAILABLE)),
            Some(ExitStatus::Unavailable)
        );
        assert_eq!(
            parked_status(&parked(&format!("worker h/1: {AUTH_REFUSED}"))),
            Some(ExitStatus::AuthRefused)
        );
        assert_eq!(
            parked_status(&parked("worker h/1: openai:x needs OPENAI_API_KEY")),
            None
        );
    }
}
