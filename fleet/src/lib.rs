//! Fleet mode: deepr runs queued in PostgreSQL and executed by any number of workers on
//! any number of machines, sharing what a run leaves behind.
//!
//! * [`Fleet`] — a connection pool to the database named by one URL (libpq options such
//!   as `sslmode` honoured; the password redacted wherever the URL is shown), and
//!   [`Fleet::migrate`]: pgmq's SQL (the version the `pgmq` crate embeds, installed into
//!   a plain PostgreSQL — no extension, no network) and deepr's own versioned schema
//!   (`migrations/`, sqlx).
//! * [`queue`] — runs as pgmq messages: submit, claim with a lease (the message's
//!   visibility timeout, extended while the worker works), finish, release, park a run
//!   that keeps failing; the run table `runs list|show|rm|export` read.
//! * [`runs`] — the run table as `runs list|show|rm|export|search` read it.
//! * [`store::PgStore`] — the checkpoint store behind the same trait as sled's: node
//!   records and done markers in one transaction per node, refused once the writer's
//!   lease is gone.
//! * [`answers`] — the response cache and call journal behind the same traits as the
//!   files' (no completed model call is paid twice, whichever machine asks again).
//! * [`archive::PgArchive`] — archived texts written through by every worker, read
//!   where a worker lacks one (a run resumed on another machine).
//! * [`rate::PgRateGate`] — provider rate limits and `Retry-After` pauses held for all
//!   workers together (a GCRA per key).

pub mod answers;
pub mod archive;
pub mod queue;
pub mod rate;
pub mod runs;
pub mod store;

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::PgPool;
use thiserror::Error;

pub use answers::{PgAnswers, PgCallLog};
pub use archive::PgArchive;
pub use queue::Claim;
pub use rate::PgRateGate;
pub use runs::RunRow;
pub use store::PgStore;

/// The pgmq queue that carries one message per run.
pub const QUEUE: &str = "deepr_run_queue";

/// deepr's schema migrations, embedded at build time.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Why the fleet database could not be used. Every message is one line and names what
/// to do.
#[derive(Debug, Error)]
pub enum FleetError {
    #[error("database URL {0:?} is not valid ({1}); use postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…]")]
    BadUrl(String, String),
    #[error("cannot connect to {0}: {1}; check that PostgreSQL runs there and the URL is right")]
    Connect(String, String),
    #[error("database {0} refused deepr: {1}; grant the user CREATE on the database (or run `deepr db migrate` as its owner)")]
    Permission(String, String),
    #[error("database {0} holds a schema from a newer deepr (migration {1} is unknown here); upgrade deepr on this machine")]
    NewerSchema(String, i64),
    #[error("database {0} has no deepr schema yet; run `deepr db migrate --db URL` first")]
    NotMigrated(String),
    #[error("run {0} is not in the fleet database; `deepr runs list --db URL` lists them")]
    UnknownRun(String),
    #[error("run id {0:?} already exists in the fleet database; choose another --run-id")]
    RunExists(String),
    #[error(
        "run {0} is queued or running; wait for it to settle (`deepr runs follow {0} --db URL`)"
    )]
    NotSettled(String),
    #[error("run {0} is being executed by {1}; stop that worker (or wait for the run to settle), then remove it")]
    Held(String, String),
    #[error("the lease on run {0} was lost (another worker claimed it); this worker's writes are refused")]
    LeaseLost(String),
    #[error("fleet database error: {0}")]
    Db(String),
}

impl From<sqlx::Error> for FleetError {
    fn from(error: sqlx::Error) -> Self {
        FleetError::Db(error.to_string())
    }
}

impl From<pgmq::PgmqError> for FleetError {
    fn from(error: pgmq::PgmqError) -> Self {
        FleetError::Db(error.to_string())
    }
}

/// `url` with its password replaced by `***` (and never an error: an unparsable URL is
/// shown as `<unparsable URL>`), for every message and listing.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            // libpq also accepts the password as a query option.
            let pairs: Vec<(String, String)> = parsed
                .query_pairs()
                .map(|(k, v)| {
                    let value = if k.eq_ignore_ascii_case("password") {
                        "***".to_string()
                    } else {
                        v.into_owned()
                    };
                    (k.into_owned(), value)
                })
                .collect();
            if !pairs.is_empty() {
                parsed.query_pairs_mut().clear().extend_pairs(pairs);
            }
            parsed.to_string()
        }
        Err(_) => "<unparsable URL>".to_string(),
    }
}

/// How long a fleet session may sit idle inside a transaction before PostgreSQL ends
/// it (and releases its locks): deepr's transactions run their statements back to back.
pub const IDLE_IN_TRANSACTION_TIMEOUT: &str = "10s";

/// `pool` with every new session's settings: a worker cut off mid-transaction (its
/// machine's link down) would hold its row locks until the server noticed the dead
/// connection — hours of TCP keepalive — and every other worker's claim of its runs would
/// wait behind them. deepr's transactions never sit idle: past
/// [`IDLE_IN_TRANSACTION_TIMEOUT`], the server ends one. (Set after connecting, not as a
/// startup option, which a connection pooler such as PgBouncer may refuse.)
pub fn session_settings(pool: PgPoolOptions) -> PgPoolOptions {
    pool.after_connect(|connection, _| {
        Box::pin(async move {
            sqlx::query(&format!(
                "SET idle_in_transaction_session_timeout = '{IDLE_IN_TRANSACTION_TIMEOUT}'"
            ))
            .execute(connection)
            .await
            .map(|_| ())
        })
    })
}

/// A connection pool to the fleet database.
#[derive(Clone)]
pub struct Fleet {
    pub pool: PgPool,
    /// How to connect again (the archive mirror opens its own connections).
    pub options: PgConnectOptions,
    /// The URL with the password redacted, for messages.
    pub shown: String,
}

impl Fleet {
    /// Parse `url` (libpq's URL form and options) and connect. Nothing is written.
    pub async fn connect(url: &str) -> Result<Self, FleetError> {
        let shown = redact(url);
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(FleetError::BadUrl(
                shown,
                "it must start with postgres://".into(),
            ));
        }
        let options = PgConnectOptions::from_str(url)
            .map_err(|e| FleetError::BadUrl(shown.clone(), first_line(&e.to_string())))?
            .application_name("deepr");
        let pool = session_settings(PgPoolOptions::new())
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options.clone())
            .await
            .map_err(|e| FleetError::Connect(shown.clone(), first_line(&e.to_string())))?;
        Ok(Self {
            pool,
            options,
            shown,
        })
    }

    /// Install pgmq's SQL and apply deepr's migrations (idempotent; workers racing to do
    /// it wait for each other on an advisory lock).
    pub async fn migrate(&self) -> Result<(), FleetError> {
        let mut lock = self.pool.acquire().await?;
        sqlx::query("SELECT pg_advisory_lock(7291001)")
            .execute(&mut *lock)
            .await?;
        let done = self.migrate_locked().await;
        let _ = sqlx::query("SELECT pg_advisory_unlock(7291001)")
            .execute(&mut *lock)
            .await;
        done
    }

    async fn migrate_locked(&self) -> Result<(), FleetError> {
        self.check_not_newer().await?;
        pgmq::install::install_sql_from_embedded(&self.pool)
            .await
            .map_err(|e| self.classify(&e.to_string()))?;
        sqlx::query("SELECT pgmq.create($1::text)")
            .bind(QUEUE)
            .execute(&self.pool)
            .await
            .map_err(|e| self.classify(&e.to_string()))?;
        MIGRATOR.run(&self.pool).await.map_err(|e| match e {
            sqlx::migrate::MigrateError::VersionMissing(version) => {
                FleetError::NewerSchema(self.shown.clone(), version)
            }
            other => self.classify(&other.to_string()),
        })
    }

    /// A database whose schema has a migration this build does not know was written by
    /// a newer deepr: refuse it before writing anything.
    async fn check_not_newer(&self) -> Result<(), FleetError> {
        let applied: Option<Vec<i64>> = sqlx::query_scalar::<_, i64>(
            "SELECT version FROM _sqlx_migrations WHERE success ORDER BY version",
        )
        .fetch_all(&self.pool)
        .await
        .ok();
        let known: Vec<i64> = MIGRATOR.iter().map(|m| m.version).collect();
        if let Some(unknown) = applied
            .unwrap_or_default()
            .into_iter()
            .find(|v| !known.contains(v))
        {
            return Err(FleetError::NewerSchema(self.shown.clone(), unknown));
        }
        Ok(())
    }

    /// Check that the schema is this build's (migrating on first use when it is absent).
    pub async fn ready(&self) -> Result<(), FleetError> {
        self.check_not_newer().await?;
        let latest = MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0);
        let applied: Option<i64> =
            sqlx::query_scalar::<_, i64>("SELECT max(version) FROM _sqlx_migrations WHERE success")
                .fetch_one(&self.pool)
                .await
                .ok();
        if applied != Some(latest) {
            self.migrate().await?;
        }
        Ok(())
    }

    fn classify(&self, message: &str) -> FleetError {
        let lower = message.to_ascii_lowercase();
        if lower.contains("permission denied") || lower.contains("must be owner") {
            FleetError::Permission(self.shown.clone(), first_line(message))
        } else {
            FleetError::Db(first_line(message))
        }
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// Seconds since the Unix epoch (the fleet's timestamps, compared across machines).
pub fn now_secs() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact("postgres://deepr:s3cret@db.example:5433/fleet?sslmode=require"),
            "postgres://deepr:***@db.example:5433/fleet?sslmode=require"
        );
        assert_eq!(
            redact("postgres://deepr@db/fleet?password=s3cret&sslmode=verify-full"),
            "postgres://deepr@db/fleet?password=***&sslmode=verify-full"
        );
        assert_eq!(redact("postgres://db/fleet"), "postgres://db/fleet");
        assert_eq!(redact("not a url s3cret"), "<unparsable URL>");
    }
}
