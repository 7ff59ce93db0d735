//! [`PgArchive`]: the fleet's copy of archived texts, behind the archive's
//! [`ArchiveMirror`] trait.
//!
//! The file archive calls its mirror from synchronous code, often on a worker thread of
//! the runtime that is meanwhile blocked elsewhere (a file lock, a CPU-bound step). So
//! the mirror owns its own thread, runtime and two connections, and a call waits for
//! that thread's answer: it never needs the caller's runtime to make progress.

use std::sync::mpsc;
use std::sync::Mutex;

use deepr_checkpoints::ArchiveMirror;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::FleetError;

enum Job {
    Store(String, String, mpsc::SyncSender<std::io::Result<()>>),
    Load(String, mpsc::SyncSender<Option<String>>),
}

/// Archived texts in the fleet database.
pub struct PgArchive {
    jobs: Mutex<mpsc::Sender<Job>>,
}

impl PgArchive {
    /// Start the mirror's thread and connect it.
    pub fn start(options: PgConnectOptions) -> Result<Self, FleetError> {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (ready, started) = mpsc::sync_channel::<Result<(), String>>(1);
        std::thread::Builder::new()
            .name("deepr-archive-mirror".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(error) => {
                        let _ = ready.send(Err(error.to_string()));
                        return;
                    }
                };
                let pool = match runtime.block_on(
                    crate::session_settings(PgPoolOptions::new())
                        .max_connections(2)
                        .acquire_timeout(std::time::Duration::from_secs(10))
                        .connect_with(options),
                ) {
                    Ok(pool) => pool,
                    Err(error) => {
                        let _ = ready.send(Err(error.to_string()));
                        return;
                    }
                };
                let _ = ready.send(Ok(()));
                // Until every sender is gone.
                while let Ok(job) = inbox.recv() {
                    match job {
                        Job::Store(sha, text, reply) => {
                            let stored = runtime
                                .block_on(
                                    sqlx::query(
                                        "INSERT INTO deepr_archive (content_sha256, text) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                                    )
                                    .bind(sha)
                                    .bind(text)
                                    .execute(&pool),
                                )
                                .map(|_| ())
                                .map_err(std::io::Error::other);
                            let _ = reply.send(stored);
                        }
                        Job::Load(sha, reply) => {
                            let text = runtime
                                .block_on(
                                    sqlx::query_scalar::<_, String>(
                                        "SELECT text FROM deepr_archive WHERE content_sha256 = $1",
                                    )
                                    .bind(sha)
                                    .fetch_optional(&pool),
                                )
                                .ok()
                                .flatten();
                            let _ = reply.send(text);
                        }
                    }
                }
            })
            .map_err(|e| FleetError::Db(format!("cannot start the archive mirror: {e}")))?;
        match started.recv() {
            Ok(Ok(())) => Ok(Self {
                jobs: Mutex::new(jobs),
            }),
            Ok(Err(error)) => Err(FleetError::Db(format!(
                "the archive mirror cannot connect: {error}"
            ))),
            Err(_) => Err(FleetError::Db("the archive mirror stopped".into())),
        }
    }

    fn send(&self, job: Job) -> bool {
        self.jobs
            .lock()
            .map(|jobs| jobs.send(job).is_ok())
            .unwrap_or(false)
    }
}

impl ArchiveMirror for PgArchive {
    fn store(&self, sha: &str, text: &str) -> std::io::Result<()> {
        let (reply, answer) = mpsc::sync_channel(1);
        if !self.send(Job::Store(sha.to_string(), text.to_string(), reply)) {
            return Err(std::io::Error::other("the archive mirror stopped"));
        }
        answer
            .recv()
            .unwrap_or_else(|_| Err(std::io::Error::other("the archive mirror stopped")))
    }

    fn load(&self, sha: &str) -> Option<String> {
        let (reply, answer) = mpsc::sync_channel(1);
        if !self.send(Job::Load(sha.to_string(), reply)) {
            return None;
        }
        answer.recv().ok().flatten()
    }
}
