//! Ctrl-C and SIGTERM for the commands that run work: the first signal asks the work to
//! stop (running steps finish and checkpoint), a second exits at once. What "stop"
//! means and what is said are the caller's.

use tokio::signal::unix::{signal, SignalKind};

use crate::Signal;

/// Call `first(signal)` on the first SIGINT/SIGTERM, and on any later one
/// `second(signal)` and exit with its code (130 / 143). Needs a running tokio runtime.
pub fn on_interrupt(
    first: impl Fn(Signal) + Send + 'static,
    second: impl Fn(Signal) + Send + 'static,
) {
    let (Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    tokio::spawn(async move {
        let mut seen = false;
        loop {
            let caught = tokio::select! {
                _ = interrupt.recv() => Signal::Interrupt,
                _ = terminate.recv() => Signal::Terminate,
            };
            if seen {
                second(caught);
                std::process::exit(i32::from(caught.code()));
            }
            seen = true;
            first(caught);
        }
    });
}

/// Resolves at the first SIGINT or SIGTERM (never, if they cannot be watched). For a
/// front end that stops its own work (the MCP server).
pub async fn first_signal() {
    match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(mut interrupt), Ok(mut terminate)) => {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        }
        _ => std::future::pending().await,
    }
}
