//! Concurrency inside one step: a step's independent calls (searches, fetches, judge
//! batches, votes) run at once, at most `limit` at a time, and their results come back
//! **in input order** — never in completion order — so a parallel step's output is
//! byte-identical to a sequential one's. `limit = 1` is the sequential switch
//! (`--io-concurrency 1`). Provider limits (governor rate limits, a fetcher's per-host
//! spacing and global cap, a model provider's concurrency cap) still apply inside each
//! call: this only decides how many calls a step keeps in flight.

use std::future::Future;

use futures::stream::{self, StreamExt};

/// Default number of calls one step keeps in flight.
pub const DEFAULT_IO_CONCURRENCY: usize = 8;

/// Default number of steps a run executes at once. Steps mostly wait on calls (each
/// provider's own limiter bounds what is in flight), so it is wider than a standard
/// plan (6 subquestions): at 5, the sixth subquestion's extract and writer each waited a
/// model round trip for a free slot (release bench at 1 s per call: 11.6 s per report,
/// wall ÷ bound 1.27).
pub const DEFAULT_CONCURRENCY: usize = 8;
/// The most calls one step may keep in flight.
pub const MAX_IO_CONCURRENCY: usize = 64;

/// Run the calls with at most `limit` in flight; results in input order.
///
/// Takes the calls as a `Vec` of futures (build them with `.map(|x| async move {…})
/// .collect()`): keeping the mapping closure out of the returned future keeps that
/// future `Send` for the executor.
pub async fn in_order<Fut: Future>(calls: Vec<Fut>, limit: usize) -> Vec<Fut::Output> {
    // Unordered, so a slow early call never keeps a free slot from starting the next
    // one; the index puts every result back in its place.
    let mut done: Vec<(usize, Fut::Output)> = stream::iter(
        calls
            .into_iter()
            .enumerate()
            .map(|(index, call)| async move { (index, call.await) }),
    )
    .buffer_unordered(limit.clamp(1, MAX_IO_CONCURRENCY))
    .collect()
    .await;
    done.sort_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, output)| output).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn results_keep_input_order_and_calls_overlap_up_to_the_limit() {
        let in_flight = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let started = tokio::time::Instant::now();
        // Later items finish first: order must still be the input order.
        let calls = (0..6u64)
            .map(|i| {
                let (in_flight, peak) = (&in_flight, &peak);
                async move {
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(100 * (6 - i))).await;
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    i * 10
                }
            })
            .collect();
        let out = in_order(calls, 3).await;
        assert_eq!(out, [0, 10, 20, 30, 40, 50]);
        assert_eq!(peak.load(Ordering::SeqCst), 3);
        // Sequential would take 2.1 s; three lanes take far less.
        assert!(started.elapsed() < Duration::from_millis(1200));
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_early_call_does_not_hold_up_the_free_slot() {
        let started = tokio::time::Instant::now();
        let calls = [1000u64, 100, 100, 100]
            .into_iter()
            .map(|ms| async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                ms
            })
            .collect();
        assert_eq!(in_order(calls, 2).await, [1000, 100, 100, 100]);
        // The second slot runs the three short calls while the first waits: 1 s, not
        // the 1.2 s of a queue that waits for its head.
        assert_eq!(started.elapsed(), Duration::from_millis(1000));
    }

    #[tokio::test(start_paused = true)]
    async fn limit_one_is_sequential() {
        let started = tokio::time::Instant::now();
        let calls = [3u64, 1, 2]
            .into_iter()
            .map(|i| async move {
                tokio::time::sleep(Duration::from_millis(100 * i)).await;
                i
            })
            .collect();
        let out = in_order(calls, 1).await;
        assert_eq!(out, [3, 1, 2]);
        assert_eq!(started.elapsed(), Duration::from_millis(600));
    }
}
