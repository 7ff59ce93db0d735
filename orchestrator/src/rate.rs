//! A rate limit held beyond one process: in fleet mode every worker's calls to a
//! provider draw on one budget (a GCRA kept in the fleet database, `deepr-fleet`), and a
//! `Retry-After` one worker sees pauses them all. A remote model applies its own
//! in-process limiter first and then, when one is wired, this gate.

use std::time::Duration;

use async_trait::async_trait;

#[async_trait]
pub trait SharedRateGate: Send + Sync {
    /// Wait until `cost` units of `key`'s allowance are free — `per_window` units per
    /// `window`, at most `per_window` at once — and take them. A gate that cannot be
    /// reached lets the call through (the caller's own limiter still holds).
    async fn acquire(&self, key: &str, cost: u32, per_window: u32, window: Duration);
    /// Every later `acquire` of `key` waits until `delay` from now.
    async fn pause(&self, key: &str, delay: Duration);
}
