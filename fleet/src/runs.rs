//! The run table as `deepr runs list|show|rm|export|search --db` see it: rows, reports,
//! checkpoint counts, tokens, research memory, removal.

use serde::Serialize;
use serde_json::Value;
use sqlx::Row;

use crate::queue::NOW;
use crate::{Fleet, FleetError, QUEUE};

/// One run as `runs list|show` see it.
#[derive(Clone, Debug, Serialize)]
pub struct RunRow {
    pub run_id: String,
    pub record: Value,
    pub state: String,
    pub note: Option<String>,
    pub worker: Option<String>,
    /// The last claim's lease, seconds.
    pub lease_secs: i32,
    pub attempts: i32,
    pub submitted: f64,
    pub claimed: Option<f64>,
    pub heartbeat: Option<f64>,
    pub updated: f64,
    /// The database's clock when this row was read (ages are computed against it).
    pub now: f64,
    /// Which report files are stored ("md", "json", "html", …).
    pub reports: Vec<String>,
}

impl RunRow {
    /// What `runs list` says of the run's state: queued runs say how long they have
    /// waited, running runs whose worker stopped beating say so.
    pub fn describe(&self) -> String {
        let lease_secs = f64::from(self.lease_secs);
        match self.state.as_str() {
            "queued" => {
                let waited = (self.now - self.submitted).max(0.0);
                match &self.note {
                    Some(note) => format!("queued, not claimed for {waited:.0} s ({note})"),
                    None => format!("queued, not claimed for {waited:.0} s"),
                }
            }
            "running" => {
                let worker = self.worker.as_deref().unwrap_or("?");
                let silent = (self.now - self.heartbeat.unwrap_or(self.updated)).max(0.0);
                if silent > lease_secs {
                    format!("running on {worker}, no heartbeat for {silent:.0} s (worker presumed dead; another worker will resume it)")
                } else {
                    format!("running on {worker} (attempt {})", self.attempts)
                }
            }
            other => match &self.note {
                Some(note) if other != "finished" => format!("{other}: {note}"),
                _ => other.to_string(),
            },
        }
    }
}

const SELECT_RUN: &str = "SELECT run_id, record, state, note, worker, lease_secs, attempts, submitted, claimed, heartbeat, updated, \
     extract(epoch from clock_timestamp())::float8 AS now, \
     ARRAY(SELECT jsonb_object_keys(reports) ORDER BY 1) AS report_keys FROM deepr_runs";

fn run_row(row: &sqlx::postgres::PgRow) -> Result<RunRow, sqlx::Error> {
    Ok(RunRow {
        run_id: row.try_get("run_id")?,
        record: row.try_get("record")?,
        state: row.try_get("state")?,
        note: row.try_get("note")?,
        worker: row.try_get("worker")?,
        lease_secs: row.try_get("lease_secs")?,
        attempts: row.try_get("attempts")?,
        submitted: row.try_get("submitted")?,
        claimed: row.try_get("claimed")?,
        heartbeat: row.try_get("heartbeat")?,
        updated: row.try_get("updated")?,
        now: row.try_get("now")?,
        reports: row.try_get("report_keys")?,
    })
}

impl Fleet {
    /// Keep a finished run's research memory (replacing an earlier one).
    pub async fn remember(&self, run_id: &str, memory: &Value) -> Result<(), FleetError> {
        sqlx::query(
            "INSERT INTO deepr_memory (run_id, memory) VALUES ($1, $2) \
             ON CONFLICT (run_id) DO UPDATE SET memory = EXCLUDED.memory",
        )
        .bind(run_id)
        .bind(memory)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Every run's research memory.
    pub async fn memories(&self) -> Result<Vec<Value>, FleetError> {
        Ok(
            sqlx::query_scalar("SELECT memory FROM deepr_memory ORDER BY run_id")
                .fetch_all(&self.pool)
                .await?,
        )
    }

    /// How many steps of a run are checkpointed.
    pub async fn node_count(&self, run_id: &str) -> Result<i64, FleetError> {
        Ok(
            sqlx::query_scalar("SELECT count(*) FROM deepr_nodes WHERE run_id = $1")
                .bind(run_id)
                .fetch_one(&self.pool)
                .await?,
        )
    }

    /// Tokens of live (not cached) model calls per run.
    pub async fn tokens_by_run(
        &self,
    ) -> Result<std::collections::BTreeMap<String, i64>, FleetError> {
        let rows = sqlx::query(
            "SELECT run_id, COALESCE(SUM((entry->>'prompt_tokens')::bigint + (entry->>'completion_tokens')::bigint), 0)::bigint AS tokens \
             FROM deepr_calls WHERE NOT (entry->>'cache_hit')::boolean GROUP BY run_id",
        )
        .fetch_all(&self.pool)
        .await?;
        let mut tokens = std::collections::BTreeMap::new();
        for row in rows {
            tokens.insert(row.try_get("run_id")?, row.try_get("tokens")?);
        }
        Ok(tokens)
    }

    /// Every run, newest first.
    pub async fn runs(&self) -> Result<Vec<RunRow>, FleetError> {
        let rows = sqlx::query(&format!("{SELECT_RUN} ORDER BY submitted DESC, run_id"))
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.iter().map(run_row).collect::<Result<_, _>>()?)
    }

    /// One run.
    pub async fn run(&self, run_id: &str) -> Result<RunRow, FleetError> {
        let row = sqlx::query(&format!("{SELECT_RUN} WHERE run_id = $1"))
            .bind(run_id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| FleetError::UnknownRun(run_id.to_string()))?;
        Ok(run_row(&row)?)
    }

    /// A run's stored reports: extension ("md", "json", "html", …) → text.
    pub async fn reports(&self, run_id: &str) -> Result<Value, FleetError> {
        let reports: Option<Value> =
            sqlx::query_scalar("SELECT reports FROM deepr_runs WHERE run_id = $1")
                .bind(run_id)
                .fetch_optional(&self.pool)
                .await?;
        reports.ok_or_else(|| FleetError::UnknownRun(run_id.to_string()))
    }

    /// Remove a run that no worker holds (checked under the run's lock, so no claim can
    /// slip in): its row, checkpoints, journal, memory and message.
    pub async fn remove(&self, run_id: &str) -> Result<(), FleetError> {
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query(&format!(
            "SELECT msg_id, state = 'running' AND {NOW} - COALESCE(heartbeat, updated) <= lease_secs AS held, \
             worker FROM deepr_runs WHERE run_id = $1 FOR UPDATE"
        ))
        .bind(run_id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| FleetError::UnknownRun(run_id.to_string()))?;
        if row.try_get::<Option<bool>, _>("held")?.unwrap_or(false) {
            let worker: Option<String> = row.try_get("worker")?;
            return Err(FleetError::Held(
                run_id.to_string(),
                worker.unwrap_or_else(|| "a worker".into()),
            ));
        }
        let msg_id: Option<i64> = row.try_get("msg_id")?;
        sqlx::query("DELETE FROM deepr_calls WHERE run_id = $1")
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM deepr_runs WHERE run_id = $1")
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        if let Some(msg_id) = msg_id {
            sqlx::query("SELECT pgmq.delete($1::text, $2::bigint)")
                .bind(QUEUE)
                .bind(msg_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}
