//! Runs as pgmq messages: submit, claim, extend, settle, release, requeue.
//!
//! A run is one row of `deepr_runs` and one message of the [`crate::QUEUE`] queue,
//! written in one transaction by [`Fleet::submit`]. A worker claims it by reading the
//! message with a visibility timeout — its lease — and stamping the run with a new
//! claim number (`lease_epoch`, one more at every claim), and the checkpoint store
//! refuses writes made under an older one. A message the run no longer answers to (it
//! was settled, or queued again with a new message) is deleted when read. The worker
//! extends the lease while it works ([`Fleet::extend`]); if it dies the message becomes
//! visible again when the lease runs out and another worker claims the run and resumes
//! it from the shared checkpoints. A run whose claims failed more than `max_attempts`
//! times (clean worker stops do not count) is parked with its last error (pgmq's
//! archive), never retried forever.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::Row;

use crate::{Fleet, FleetError, QUEUE};

/// The queue message: only the run's id (the record is in the run table).
#[derive(Debug, Serialize, Deserialize)]
struct RunMessage {
    run_id: String,
}

/// A worker's hold on a run.
#[derive(Clone, Debug)]
pub struct Claim {
    pub run_id: String,
    pub msg_id: i64,
    /// This claim's write token: the run's claim counter, one more at every claim
    /// (checkpoints, heartbeats and settlement are accepted only under the latest).
    pub epoch: i32,
    /// How many times this run's message has been read (parking counts these).
    pub attempt: i32,
    pub record: Value,
}

pub(crate) const NOW: &str = "extract(epoch from clock_timestamp())::float8";

/// Send a run's message (its only content is the run id); returns the message id.
async fn send_message(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    run_id: &str,
) -> Result<i64, FleetError> {
    Ok(sqlx::query_scalar("SELECT pgmq.send($1::text, $2::jsonb)")
        .bind(QUEUE)
        .bind(serde_json::json!(RunMessage {
            run_id: run_id.to_string()
        }))
        .fetch_one(&mut **tx)
        .await?)
}

/// An update made under a claim matched its run only while the claim's epoch is the
/// run's: otherwise another worker has taken the run over.
fn still_held(result: &sqlx::postgres::PgQueryResult, claim: &Claim) -> Result<(), FleetError> {
    if result.rows_affected() == 0 {
        return Err(FleetError::LeaseLost(claim.run_id.clone()));
    }
    Ok(())
}

/// Make a run's message visible again `seconds` from now (its lease, or a pause).
async fn set_visibility(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    msg_id: i64,
    seconds: i32,
) -> Result<(), FleetError> {
    sqlx::query("SELECT msg_id FROM pgmq.set_vt($1::text, $2::bigint, $3::integer)")
        .bind(QUEUE)
        .bind(msg_id)
        .bind(seconds)
        .fetch_optional(&mut **tx)
        .await?;
    Ok(())
}

impl Fleet {
    /// Queue a new run: its row and its message in one transaction.
    pub async fn submit(&self, run_id: &str, record: &Value) -> Result<(), FleetError> {
        let mut tx = self.pool.begin().await?;
        let inserted = sqlx::query(&format!(
            "INSERT INTO deepr_runs (run_id, record, state, submitted, updated) \
             VALUES ($1, $2, 'queued', {NOW}, {NOW}) ON CONFLICT (run_id) DO NOTHING"
        ))
        .bind(run_id)
        .bind(record)
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 0 {
            return Err(FleetError::RunExists(run_id.to_string()));
        }
        let msg_id = send_message(&mut tx, run_id).await?;
        sqlx::query("UPDATE deepr_runs SET msg_id = $2 WHERE run_id = $1")
            .bind(run_id)
            .bind(msg_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Claim the next visible run for `lease_secs`, stamping it with this claim's epoch.
    /// Messages of runs that are gone or settled are deleted; a run read more than
    /// `max_attempts` times is parked. `None`: nothing to do now.
    pub async fn claim(
        &self,
        worker: &str,
        lease_secs: i32,
        max_attempts: i32,
    ) -> Result<Option<Claim>, FleetError> {
        loop {
            let row = sqlx::query(
                "SELECT msg_id, read_ct, message FROM pgmq.read($1::text, $2::integer, 1)",
            )
            .bind(QUEUE)
            .bind(lease_secs)
            .fetch_optional(&self.pool)
            .await?;
            let Some(row) = row else { return Ok(None) };
            let msg_id: i64 = row.try_get("msg_id")?;
            let read_ct: i32 = row.try_get("read_ct")?;
            let message: Value = row.try_get("message")?;
            let Ok(message) = serde_json::from_value::<RunMessage>(message) else {
                // Not ours (or damaged): keep it for inspection, out of the way.
                self.archive_message(msg_id).await?;
                continue;
            };
            let mut tx = self.pool.begin().await?;
            let current = sqlx::query(
                "SELECT state, msg_id, note, record, graceful_releases FROM deepr_runs WHERE run_id = $1 FOR UPDATE",
            )
            .bind(&message.run_id)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(current) = current else {
                tx.rollback().await?;
                self.delete_message(msg_id).await?;
                continue;
            };
            let state: String = current.try_get("state")?;
            let current_msg: Option<i64> = current.try_get("msg_id")?;
            if current_msg != Some(msg_id)
                || matches!(
                    state.as_str(),
                    "finished" | "incomplete" | "failed" | "parked"
                )
            {
                // A message the run no longer answers to (settled, or queued again).
                tx.rollback().await?;
                if current_msg != Some(msg_id) {
                    self.delete_message(msg_id).await?;
                }
                continue;
            }
            // Reads that ended in a graceful release were not attempts that failed.
            let graceful: i32 = current.try_get("graceful_releases")?;
            if read_ct - graceful > max_attempts {
                let note: Option<String> = current.try_get("note")?;
                let why = format!(
                    "parked after {max_attempts} attempts; last: {}",
                    note.unwrap_or_else(|| "its worker stopped without a word".into())
                );
                // The epoch moves on: a holder whose lease ran out writes nothing more.
                sqlx::query(&format!(
                    "UPDATE deepr_runs SET state = 'parked', note = $2, lease_epoch = lease_epoch + 1, \
                     updated = {NOW} WHERE run_id = $1"
                ))
                .bind(&message.run_id)
                .bind(&why)
                .execute(&mut *tx)
                .await?;
                sqlx::query("SELECT pgmq.archive($1::text, $2::bigint)")
                    .bind(QUEUE)
                    .bind(msg_id)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                continue;
            }
            let record: Value = current.try_get("record")?;
            let epoch: i32 = sqlx::query_scalar(&format!(
                "UPDATE deepr_runs SET state = 'running', lease_epoch = lease_epoch + 1, attempts = $2, \
                 worker = $3, lease_secs = $4, claimed = {NOW}, heartbeat = {NOW}, updated = {NOW} \
                 WHERE run_id = $1 RETURNING lease_epoch"
            ))
            .bind(&message.run_id)
            .bind(read_ct)
            .bind(worker)
            .bind(lease_secs)
            .fetch_one(&mut *tx)
            .await?;
            tx.commit().await?;
            return Ok(Some(Claim {
                run_id: message.run_id,
                msg_id,
                epoch,
                attempt: read_ct,
                record,
            }));
        }
    }

    /// Queue a settled run again (`deepr resume RUN_ID --db`): its job replaced (larger
    /// budgets, say), a new message, its checkpoints kept. Refused while it is queued or
    /// running.
    pub async fn requeue(&self, run_id: &str, job: &Value) -> Result<(), FleetError> {
        let mut tx = self.pool.begin().await?;
        let state: Option<String> =
            sqlx::query_scalar("SELECT state FROM deepr_runs WHERE run_id = $1 FOR UPDATE")
                .bind(run_id)
                .fetch_optional(&mut *tx)
                .await?;
        match state.as_deref() {
            None => return Err(FleetError::UnknownRun(run_id.to_string())),
            Some("queued" | "running") => {
                return Err(FleetError::NotSettled(run_id.to_string()));
            }
            Some(_) => {}
        }
        let msg_id = send_message(&mut tx, run_id).await?;
        sqlx::query(&format!(
            "UPDATE deepr_runs SET record = $2, msg_id = $3, state = 'queued', note = NULL, \
             worker = NULL, heartbeat = NULL, graceful_releases = 0, submitted = {NOW}, updated = {NOW} \
             WHERE run_id = $1"
        ))
        .bind(run_id)
        .bind(job)
        .bind(msg_id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Extend the lease by `lease_secs` from now. `Err(LeaseLost)` once another claim
    /// has taken the run.
    pub async fn extend(&self, claim: &Claim, lease_secs: i32) -> Result<(), FleetError> {
        let mut tx = self.pool.begin().await?;
        let held = sqlx::query(&format!(
            "UPDATE deepr_runs SET heartbeat = {NOW} WHERE run_id = $1 AND lease_epoch = $2"
        ))
        .bind(&claim.run_id)
        .bind(claim.epoch)
        .execute(&mut *tx)
        .await?;
        still_held(&held, claim)?;
        set_visibility(&mut tx, claim.msg_id, lease_secs).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Settle a claimed run: its final state, note and reports (extension → text), and
    /// its message deleted — all in one transaction, refused if the lease was lost.
    pub async fn settle(
        &self,
        claim: &Claim,
        state: &str,
        note: Option<&str>,
        reports: &Value,
    ) -> Result<(), FleetError> {
        let mut tx = self.pool.begin().await?;
        let held = sqlx::query(&format!(
            "UPDATE deepr_runs SET state = $3, note = $4, reports = $5, updated = {NOW}, heartbeat = NULL \
             WHERE run_id = $1 AND lease_epoch = $2"
        ))
        .bind(&claim.run_id)
        .bind(claim.epoch)
        .bind(state)
        .bind(note)
        .bind(reports)
        .execute(&mut *tx)
        .await?;
        still_held(&held, claim)?;
        sqlx::query("SELECT pgmq.delete($1::text, $2::bigint)")
            .bind(QUEUE)
            .bind(claim.msg_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Give a claimed run back to the queue, visible again after `delay_secs` (0: now),
    /// with why (a worker stopping, a provider this worker has no key for, an error). A
    /// `graceful` release (a worker stopping) does not count towards parking.
    pub async fn release(
        &self,
        claim: &Claim,
        delay_secs: i32,
        note: &str,
        graceful: bool,
    ) -> Result<(), FleetError> {
        let mut tx = self.pool.begin().await?;
        let held = sqlx::query(&format!(
            "UPDATE deepr_runs SET state = 'queued', note = $3, worker = NULL, heartbeat = NULL, updated = {NOW}, \
             graceful_releases = graceful_releases + $4 WHERE run_id = $1 AND lease_epoch = $2"
        ))
        .bind(&claim.run_id)
        .bind(claim.epoch)
        .bind(note)
        .bind(i32::from(graceful))
        .execute(&mut *tx)
        .await?;
        still_held(&held, claim)?;
        set_visibility(&mut tx, claim.msg_id, delay_secs).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn delete_message(&self, msg_id: i64) -> Result<(), FleetError> {
        sqlx::query("SELECT pgmq.delete($1::text, $2::bigint)")
            .bind(QUEUE)
            .bind(msg_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn archive_message(&self, msg_id: i64) -> Result<(), FleetError> {
        sqlx::query("SELECT pgmq.archive($1::text, $2::bigint)")
            .bind(QUEUE)
            .bind(msg_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
