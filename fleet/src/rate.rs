//! [`PgRateGate`]: the fleet's shared rate limits, a GCRA (generic cell rate algorithm)
//! per key in PostgreSQL.
//!
//! A key allows `per_window` units per `window`: each unit costs the emission interval
//! `T = window / per_window`, and a request may take its units when, after taking them,
//! the key's theoretical arrival time is no more than one window ahead of now — so at
//! most `per_window` units at once and then one per `T`. The row is read `FOR UPDATE`
//! and written in one transaction, so workers on any number of machines draw on one
//! allowance; the database's clock is the only clock. A `Retry-After` sets
//! `paused_until` and every taker waits for it.

use std::time::Duration;

use async_trait::async_trait;
use deepr_orchestrator::SharedRateGate;
use sqlx::{PgPool, Row};

/// The fleet's rate limits.
pub struct PgRateGate {
    pub pool: PgPool,
}

/// What a taker must do: go, or wait this long and ask again.
enum Verdict {
    Go,
    Wait(f64),
}

impl PgRateGate {
    async fn try_take(
        &self,
        key: &str,
        cost: u32,
        per_window: u32,
        window: Duration,
    ) -> Result<Verdict, sqlx::Error> {
        let window = window.as_secs_f64().max(0.001);
        let interval = window / f64::from(per_window.max(1));
        let cost = f64::from(cost.clamp(1, per_window.max(1)));
        let mut tx = self.pool.begin().await?;
        sqlx::query("INSERT INTO deepr_rate (key) VALUES ($1) ON CONFLICT (key) DO NOTHING")
            .bind(key)
            .execute(&mut *tx)
            .await?;
        let row = sqlx::query(
            "SELECT tat, paused_until, extract(epoch from clock_timestamp())::float8 AS now \
             FROM deepr_rate WHERE key = $1 FOR UPDATE",
        )
        .bind(key)
        .fetch_one(&mut *tx)
        .await?;
        let tat: f64 = row.try_get("tat")?;
        let paused_until: f64 = row.try_get("paused_until")?;
        let now: f64 = row.try_get("now")?;
        if paused_until > now {
            tx.rollback().await?;
            return Ok(Verdict::Wait(paused_until - now));
        }
        let next = tat.max(now) + cost * interval;
        let ahead = next - now - window;
        if ahead > 1e-6 {
            tx.rollback().await?;
            return Ok(Verdict::Wait(ahead));
        }
        sqlx::query("UPDATE deepr_rate SET tat = $2 WHERE key = $1")
            .bind(key)
            .bind(next)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Verdict::Go)
    }
}

#[async_trait]
impl SharedRateGate for PgRateGate {
    async fn acquire(&self, key: &str, cost: u32, per_window: u32, window: Duration) {
        loop {
            match self.try_take(key, cost, per_window, window).await {
                Ok(Verdict::Go) | Err(_) => return,
                Ok(Verdict::Wait(seconds)) => {
                    tokio::time::sleep(Duration::from_secs_f64(seconds.clamp(0.001, 3600.0))).await;
                }
            }
        }
    }

    async fn pause(&self, key: &str, delay: Duration) {
        let _ = sqlx::query(
            "INSERT INTO deepr_rate (key, paused_until) VALUES ($1, extract(epoch from clock_timestamp()) + $2) \
             ON CONFLICT (key) DO UPDATE SET paused_until = GREATEST(deepr_rate.paused_until, EXCLUDED.paused_until)",
        )
        .bind(key)
        .bind(delay.as_secs_f64())
        .execute(&self.pool)
        .await;
    }
}
