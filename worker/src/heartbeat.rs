//! A claimed run's heartbeat: it extends the run's lease while the worker works on it,
//! and tells the session to stop when the lease is lost or the worker is stopping.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use deepr_fleet::{Claim, Fleet, FleetError};

/// A claim's heartbeat: extends the lease every third of it until dropped; a lost lease
/// — refused, or not extended for a whole lease because the database is out of reach —
/// or the worker stopping sets `stop` (the session stops starting steps).
pub struct Heartbeat {
    pub stop: Arc<AtomicBool>,
    pub lost: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Heartbeat {
    /// Beat for `claim` every third of `lease` seconds; `stop_all` (the worker stopping)
    /// stops the run too.
    pub fn start(fleet: &Fleet, claim: &Claim, lease: i32, stop_all: &Arc<AtomicBool>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let lost = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn({
            let fleet = fleet.clone();
            let claim = claim.clone();
            let (stop, lost) = (Arc::clone(&stop), Arc::clone(&lost));
            let stop_all = Arc::clone(stop_all);
            async move {
                let lease = Duration::from_secs(u64::try_from(lease).unwrap_or(30));
                let beat = lease / 3;
                let mut since = tokio::time::Instant::now();
                let mut extended = since;
                loop {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    if stop_all.load(Ordering::SeqCst) {
                        stop.store(true, Ordering::SeqCst);
                    }
                    if since.elapsed() < beat {
                        continue;
                    }
                    since = tokio::time::Instant::now();
                    let seconds = i32::try_from(lease.as_secs()).unwrap_or(i32::MAX);
                    // An attempt may take what is left of the lease (a busy pool is slow,
                    // not gone); one over a cut link never answers.
                    let left = lease
                        .saturating_sub(extended.elapsed())
                        .max(Duration::from_millis(500));
                    match tokio::time::timeout(left, fleet.extend(&claim, seconds)).await {
                        Ok(Ok(())) => extended = tokio::time::Instant::now(),
                        Ok(Err(FleetError::LeaseLost(_))) => {
                            lost.store(true, Ordering::SeqCst);
                            stop.store(true, Ordering::SeqCst);
                            return;
                        }
                        // The database is away (an error, or no answer while the lease
                        // lasted, as over a cut link): keep trying while it lasts; past it,
                        // another worker may hold the run, so start no more steps (the
                        // store refuses writes if another worker took it).
                        Ok(Err(_)) | Err(_) => {
                            if extended.elapsed() >= lease {
                                lost.store(true, Ordering::SeqCst);
                                stop.store(true, Ordering::SeqCst);
                                return;
                            }
                        }
                    }
                }
            }
        });
        Self { stop, lost, task }
    }
}

impl Drop for Heartbeat {
    /// Whatever ends the claim — settled, released, an error, a panic — ends the beat,
    /// so a run is never kept alive by a worker that stopped working on it.
    fn drop(&mut self) {
        self.task.abort();
    }
}
