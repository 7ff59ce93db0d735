//! Where time comes from. Stages time their calls, and the budget checks its deadline,
//! only through a [`Clock`] they are given — never by reading a clock of their own — so
//! a test can run them on virtual time.
//!
//! - [`TokioClock`]: real time through tokio's clock (which a test may also pause and
//!   advance with tokio's test utilities).
//! - [`VirtualClock`]: discrete-event time that moves only by what is slept: calls that
//!   sleep side by side cost their longest, calls one after another their sum, and each
//!   call measures its own latency exactly — without waiting.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

/// A future a clock returns from [`Clock::sleep`].
pub type Sleep = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A source of time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Time since this clock started.
    fn now(&self) -> Duration;
    /// Wait `duration` of this clock's time.
    fn sleep(&self, duration: Duration) -> Sleep;

    /// Time since `earlier` (a value of [`Clock::now`]), in whole milliseconds.
    fn elapsed_ms(&self, earlier: Duration) -> u64 {
        u64::try_from(self.now().saturating_sub(earlier).as_millis()).unwrap_or(u64::MAX)
    }
}

/// Real time (tokio's clock).
#[derive(Clone, Copy, Debug)]
pub struct TokioClock {
    origin: tokio::time::Instant,
}

impl TokioClock {
    pub fn new() -> Self {
        Self {
            origin: tokio::time::Instant::now(),
        }
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// Virtual time for tests and simulations: a discrete-event clock. [`VirtualClock::run`]
/// drives a future; whenever it is blocked and nothing else woke it, time jumps to the
/// earliest pending sleep's wake time and wakes that sleeper. No real time passes.
#[derive(Debug, Default)]
pub struct VirtualClock {
    state: Arc<Mutex<Timeline>>,
}

#[derive(Debug, Default)]
struct Timeline {
    now: Duration,
    /// Pending sleeps by (wake time, registration order).
    timers: BTreeMap<(Duration, u64), Waker>,
    next_id: u64,
}

impl VirtualClock {
    pub fn new() -> Self {
        Self::default()
    }

    /// Move the clock forward by `duration` (a test's "meanwhile"), waking every sleep
    /// that is due.
    pub fn advance(&self, duration: Duration) {
        let due: Vec<Waker> = match self.state.lock() {
            Ok(mut timeline) => {
                timeline.now += duration;
                let now = timeline.now;
                let later = timeline.timers.split_off(&(now, u64::MAX));
                std::mem::replace(&mut timeline.timers, later)
                    .into_values()
                    .collect()
            }
            Err(_) => Vec::new(),
        };
        due.into_iter().for_each(Waker::wake);
    }

    /// Drive `future` to completion on virtual time (on the calling thread).
    pub fn run<F: Future>(&self, future: F) -> F::Output {
        let woken = Arc::new(Flag(AtomicBool::new(true)));
        let waker = Waker::from(Arc::clone(&woken));
        let mut context = Context::from_waker(&waker);
        let mut future = std::pin::pin!(future);
        loop {
            woken.0.store(false, Ordering::SeqCst);
            if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
                return output;
            }
            if woken.0.load(Ordering::SeqCst) {
                continue;
            }
            // Blocked on sleeps only: jump to the earliest wake time.
            let next = self
                .state
                .lock()
                .ok()
                .and_then(|t| t.timers.keys().next().map(|(wake, _)| *wake));
            let Some(wake) = next else {
                // Blocked on something other than this clock: a test bug, not a hang.
                panic!("VirtualClock::run: the future is blocked and no sleep is pending");
            };
            let now = self.now();
            self.advance(wake.saturating_sub(now));
        }
    }
}

/// A waker that records that it was woken.
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Duration {
        self.state.lock().map(|t| t.now).unwrap_or_default()
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        let wake = self.now().saturating_add(duration);
        let state = Arc::clone(&self.state);
        Box::pin(std::future::poll_fn(move |cx| {
            let Ok(mut timeline) = state.lock() else {
                return Poll::Ready(());
            };
            if timeline.now >= wake {
                return Poll::Ready(());
            }
            let id = timeline.next_id;
            timeline.next_id += 1;
            timeline.timers.insert((wake, id), cx.waker().clone());
            Poll::Pending
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_by_side_sleeps_cost_the_longest_and_sequential_ones_the_sum() {
        let clock = VirtualClock::new();
        let clock = &clock;
        let each = clock.run(async {
            let timed = |ms: u64| async move {
                let start = clock.now();
                clock.sleep(Duration::from_millis(ms)).await;
                clock.elapsed_ms(start)
            };
            let side_by_side = tokio::join!(timed(300), timed(900), timed(600));
            let after = clock.now();
            clock.sleep(Duration::from_millis(100)).await;
            clock.sleep(Duration::from_millis(100)).await;
            (side_by_side, after, clock.now())
        });
        assert_eq!(
            each.0,
            (300, 900, 600),
            "each call measures its own latency"
        );
        assert_eq!(each.1, Duration::from_millis(900));
        assert_eq!(each.2, Duration::from_millis(1100));
        clock.advance(Duration::from_secs(1));
        assert_eq!(clock.now(), Duration::from_millis(2100));
    }

    #[tokio::test(start_paused = true)]
    async fn tokio_clock_follows_tokio_time() {
        let clock = TokioClock::new();
        let start = clock.now();
        clock.sleep(Duration::from_secs(5)).await;
        assert_eq!(clock.elapsed_ms(start), 5000);
    }
}
