//! The response cache and call journal in PostgreSQL, behind the same traits as the
//! files' ([`AnswerCache`], [`CallLog`]): an answer one worker paid for is found by
//! every other, and a run's spending is summed across all its sessions on any machine
//! (its `--max-tokens`/`--max-cost` hold for the whole run).

use async_trait::async_trait;
use deepr_checkpoints::{AnswerCache, CallLog, JournalEntry};
use serde_json::Value;
use sqlx::PgPool;

/// Model answers by request hash, shared by the fleet.
pub struct PgAnswers {
    pub pool: PgPool,
}

#[async_trait]
impl AnswerCache for PgAnswers {
    async fn get_answer(&self, key: &str) -> Option<Value> {
        sqlx::query_scalar("SELECT answer FROM deepr_llm_cache WHERE request_key = $1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .ok()
            .flatten()
    }

    async fn put_answer(&self, key: &str, value: &Value) -> std::io::Result<()> {
        sqlx::query(
            "INSERT INTO deepr_llm_cache (request_key, answer) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        )
        .bind(key)
        .bind(value)
        .execute(&self.pool)
        .await
        .map(|_| ())
        .map_err(std::io::Error::other)
    }
}

/// One run's call journal in the fleet database.
pub struct PgCallLog {
    pub pool: PgPool,
    pub run_id: String,
    /// Which worker made the calls (shown by `runs show`).
    pub worker: String,
}

#[async_trait]
impl CallLog for PgCallLog {
    async fn append_call(&self, entry: &JournalEntry) -> std::io::Result<()> {
        let value = serde_json::to_value(entry).map_err(std::io::Error::other)?;
        sqlx::query("INSERT INTO deepr_calls (run_id, worker, entry) VALUES ($1, $2, $3)")
            .bind(&self.run_id)
            .bind(&self.worker)
            .bind(value)
            .execute(&self.pool)
            .await
            .map(|_| ())
            .map_err(std::io::Error::other)
    }
}

/// Every journaled call of a run, in the order they completed.
pub async fn calls(pool: &PgPool, run_id: &str) -> Result<Vec<JournalEntry>, sqlx::Error> {
    let values: Vec<Value> =
        sqlx::query_scalar("SELECT entry FROM deepr_calls WHERE run_id = $1 ORDER BY id")
            .bind(run_id)
            .fetch_all(pool)
            .await?;
    Ok(values
        .into_iter()
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect())
}

/// Tokens and dollars of a run's live (not cached) calls, across all its sessions.
pub async fn spent(pool: &PgPool, run_id: &str) -> Result<(u64, f64), sqlx::Error> {
    Ok(calls(pool, run_id)
        .await?
        .iter()
        .filter(|e| !e.cache_hit)
        .fold((0, 0.0), |(t, c), e| {
            (t + e.prompt_tokens + e.completion_tokens, c + e.cost_usd)
        }))
}
