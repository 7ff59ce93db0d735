//! Generate a document share from its text sources: every `*.EXT.txt` under SRC
//! becomes `*.EXT` (PDF, DOCX, PPTX, XLSX, HTML, Markdown, CSV) under OUT.
//! `cargo run -p deepr-documents --features writers --example make_share -- test_data/share/docs /tmp/share`
#![allow(clippy::print_stdout, clippy::print_stderr)] // a command-line example prints

use std::path::Path;
use std::process::ExitCode;

fn sources(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, root, out)?;
        } else if path.extension().is_some_and(|e| e == "txt") {
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, std::fs::read_to_string(&path)?));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [src, out] = args.as_slice() else {
        eprintln!("usage: make_share SRC OUT");
        return ExitCode::from(2);
    };
    let mut found = Vec::new();
    if let Err(e) = sources(Path::new(src), Path::new(src), &mut found) {
        eprintln!("cannot read {src}: {e}");
        return ExitCode::from(1);
    }
    let files = match deepr_documents::writers::share_files(&found) {
        Ok(files) => files,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    for (rel, bytes) in &files {
        let path = Path::new(out).join(rel);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, bytes));
        if let Err(e) = written {
            eprintln!("cannot write {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    println!("{} files written under {out}", files.len());
    ExitCode::SUCCESS
}
