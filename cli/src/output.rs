//! The one place deepr writes to its standard streams. Commands print through
//! [`outln!`]/[`out!`] (stdout: what a command produces) and [`errln!`] (stderr:
//! progress, warnings, errors); the workspace lints refuse `println!` everywhere else,
//! and no library crate prints: sessions, the worker and the MCP server speak through
//! events and callbacks the command line shows (`console.rs`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::fmt::Arguments;

/// Write a line to stdout.
pub fn stdout_line(args: Arguments<'_>) {
    println!("{args}");
}

/// Write to stdout without a newline.
pub fn stdout(args: Arguments<'_>) {
    print!("{args}");
}

/// Write a line to stderr.
pub fn stderr_line(args: Arguments<'_>) {
    eprintln!("{args}");
}

/// `println!` for command output.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::output::stdout_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::output::stdout_line(format_args!($($arg)*))
    };
}

/// `print!` for command output.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::stdout(format_args!($($arg)*))
    };
}

/// `eprintln!` for progress, warnings and errors.
#[macro_export]
macro_rules! errln {
    () => {
        $crate::output::stderr_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::output::stderr_line(format_args!($($arg)*))
    };
}
