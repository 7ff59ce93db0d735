//! Print a file as deepr reads it: its title, date and status, then the archived text.
//! `cargo run -p deepr-documents --example read -- FILE`
#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line example prints

use std::process::ExitCode;

use deepr_documents::{read_bounded, Format, Limits, READ_TIMEOUT};

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: read FILE");
        return ExitCode::from(2);
    };
    let format = std::path::Path::new(&path)
        .extension()
        .and_then(|e| e.to_str())
        .and_then(Format::from_extension);
    let Some(format) = format else {
        eprintln!("{path}: unsupported file type");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(1);
        }
    };
    match read_bounded(bytes, format, Limits::default(), READ_TIMEOUT) {
        Ok(mut doc) => {
            doc.apply_path(&path);
            println!(
                "title: {}\ndate: {:?}\nstatus: {}\n---\n{}",
                doc.title,
                doc.date,
                doc.status.as_str(),
                doc.text
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{path}: not read: {e}");
            ExitCode::from(1)
        }
    }
}
