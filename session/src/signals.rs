//! Ctrl-C and SIGTERM for the commands that run work: the first signal asks the work to
//! stop (running steps finish and checkpoint), a second exits at once. What "stop"
//! means and what is said are the caller's.

use tokio::signal::unix::{signal, SignalKind};

/// Call `first(code)` on the first SIGINT/SIGTERM (code 130 / 143), and on any later
/// one `second(code)` and exit with that code. Needs a running tokio runtime.
pub fn on_interrupt(first: impl Fn(u8) + Send + 'static, second: impl Fn(u8) + Send + 'static) {
    let (Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    tokio::spawn(async move {
        let mut seen = false;
        loop {
            let code: u8 = tokio::select! {
                _ = interrupt.recv() => 130,
                _ = terminate.recv() => 143,
            };
            if seen {
                second(code);
                std::process::exit(i32::from(code));
            }
            seen = true;
            first(code);
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
