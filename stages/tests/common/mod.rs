//! Helpers shared by the source-reading tests (`no_io.rs`, `layout.rs`).
#![allow(dead_code)]

/// The text of `source` without its `#[cfg(test)]` items: from each attribute to the
/// end of the item it gates (the matching closing brace, or the `;` of a `mod x;`).
pub fn production_code(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let open = item.find('{');
        let semicolon = item.find(';');
        let end = match (open, semicolon) {
            (Some(open), Some(semi)) if semi < open => semi + 1,
            (Some(open), _) => {
                let mut depth = 0usize;
                let mut end = item.len();
                for (offset, c) in item[open..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = open + offset + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, Some(semi)) => semi + 1,
            (None, None) => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// Whether `path` is a test module's file: its parent module declares it with
/// `#[cfg(test)] mod name;` (`score/tests.rs` under `score.rs`, `pdf/limits_tests.rs`
/// under `pdf.rs`). Such a file is test code whatever it holds.
pub fn is_test_module(path: &std::path::Path) -> bool {
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
        return false;
    };
    let name = stem.to_string_lossy();
    if name == "mod" || name == "lib" || name == "main" {
        return false;
    }
    // The parent module: `dir.rs` beside the folder, or the folder's own `mod.rs`
    // (`lib.rs`, `main.rs` at a crate's root).
    let mut parents = vec![dir.join("mod.rs"), dir.join("lib.rs"), dir.join("main.rs")];
    if let (Some(up), Some(folder)) = (dir.parent(), dir.file_name()) {
        parents.push(up.join(format!("{}.rs", folder.to_string_lossy())));
    }
    let declaration = format!("mod {name};");
    parents.iter().any(|parent| {
        let Ok(text) = std::fs::read_to_string(parent) else {
            return false;
        };
        text.match_indices("#[cfg(test)]").any(|(at, attribute)| {
            let after = text[at + attribute.len()..].trim_start();
            let after = after
                .strip_prefix("pub(crate) ")
                .or_else(|| after.strip_prefix("pub "))
                .unwrap_or(after);
            after.starts_with(&declaration)
        })
    })
}
