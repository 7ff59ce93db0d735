//! Plain text: blank lines separate blocks; a line that starts with a bullet (`-`, `*`,
//! `•`) or a number (`3.`, `3)`) is a list item of its own, so a list without final
//! periods still gives one evidence unit per item; a short line followed by a blank
//! line and standing alone (no final punctuation) is taken as a heading.

use crate::{Builder, DocStatus, Document, Limits, ReadError};

pub(super) fn read(text: &str, limits: &Limits) -> Result<Document, ReadError> {
    let mut builder = Builder::new(*limits);
    blocks_of_lines(&mut builder, text)?;
    builder.finish(None, DocStatus::Current)
}

/// The list marker a line starts with and the rest of the line, if it is a list item.
pub(super) fn list_marker(line: &str) -> Option<(&str, &str)> {
    let trimmed = line.trim_start();
    for bullet in ["- ", "* ", "• ", "◦ ", "▪ ", "– "] {
        if let Some(rest) = trimmed.strip_prefix(bullet) {
            return Some(("", rest));
        }
    }
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    if (1..=3).contains(&digits) {
        let after = &trimmed[digits..];
        if after.starts_with(". ") || after.starts_with(") ") {
            return Some((&trimmed[..digits + 1], &after[2..]));
        }
    }
    None
}

/// Whether a lone line reads as a heading: short, no final sentence punctuation, and
/// starting with a letter or digit.
fn looks_like_heading(line: &str) -> bool {
    let line = line.trim();
    let words = line.split_whitespace().count();
    (1..=12).contains(&words)
        && line.chars().count() <= 90
        && !line.ends_with(['.', ',', ';', ':', '!', '?'])
        && line.chars().next().is_some_and(char::is_alphanumeric)
}

/// Lines into blocks: paragraphs (lines joined up to a blank line), list items (one
/// per marked line, continuation lines joined), and lone short lines as headings of
/// level 2 (the first one of the text: level 1).
pub(super) fn blocks_of_lines(builder: &mut Builder, text: &str) -> Result<(), ReadError> {
    let mut seen_heading = false;
    for chunk in paragraphs(text) {
        let lines: Vec<&str> = chunk.iter().map(|l| l.trim()).collect();
        if lines.len() == 1 && list_marker(lines[0]).is_none() && looks_like_heading(lines[0]) {
            builder.heading(if seen_heading { 2 } else { 1 }, lines[0])?;
            seen_heading = true;
            continue;
        }
        let mut open = String::new();
        let mut open_marker: Option<String> = None;
        for line in lines {
            if let Some((marker, rest)) = list_marker(line) {
                flush(builder, &mut open, &mut open_marker)?;
                open_marker = Some(marker.to_string());
                open.push_str(rest);
            } else {
                if !open.is_empty() {
                    open.push(' ');
                }
                open.push_str(line);
            }
        }
        flush(builder, &mut open, &mut open_marker)?;
    }
    Ok(())
}

fn flush(
    builder: &mut Builder,
    open: &mut String,
    marker: &mut Option<String>,
) -> Result<(), ReadError> {
    if !open.trim().is_empty() {
        match marker.take() {
            Some(marker) => builder.list_item(&marker, open)?,
            None => builder.paragraph(open)?,
        }
    }
    open.clear();
    *marker = None;
    Ok(())
}

/// Runs of non-blank lines.
fn paragraphs(text: &str) -> Vec<Vec<&str>> {
    let mut out = Vec::new();
    let mut current = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
        } else {
            current.push(line);
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_headings_paragraphs_and_items() {
        let text = "Fleet report\n\nWe run robots in\nthree regions.\n\nKey numbers:\n- Robots deployed: 1,240\n- Uptime 99.2%\n  across sites\n1. First step\n\nRisks\n\nSupply is tight.";
        let doc = read(text, &Limits::default()).unwrap();
        assert_eq!(
            doc.text,
            "Fleet report\n\nWe run robots in three regions.\n\nKey numbers:\n\nRobots deployed: 1,240\n\nUptime 99.2% across sites\n\n1. First step\n\nRisks\n\nSupply is tight."
        );
        let at = doc.text.find("Supply").unwrap();
        assert_eq!(doc.heading_path(at), ["Fleet report", "Risks"]);
    }
}
