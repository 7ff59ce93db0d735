//! Plain text (and a PDF page's text layer): blank lines separate blocks; a line that
//! starts with a bullet (`-`, `*`, `•`) or a number (`3.`, `3)`) is a list item of its
//! own, so a list without final periods still gives one evidence unit per item; a
//! short line standing alone (no final punctuation, no comma) is taken as a heading;
//! consecutive lines whose cells are set apart by runs of spaces or tabs, the same
//! number of cells each, are a table whose first line labels the others.

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
        && !line.contains(',')
        && !line.ends_with(['.', ',', ';', ':', '!', '?'])
        && line.chars().next().is_some_and(char::is_alphanumeric)
}

/// Lines into blocks: tables (see the module docs), paragraphs (lines joined up to a
/// blank line), list items (one per marked line, continuation lines joined), and lone
/// short lines as headings of level 2 (the first one of the text: level 1).
pub(super) fn blocks_of_lines(builder: &mut Builder, text: &str) -> Result<(), ReadError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut seen_heading = false;
    let mut chunk: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some((end, rows)) = table_run(&lines, i) {
            chunk_blocks(builder, &std::mem::take(&mut chunk), &mut seen_heading)?;
            builder.table(
                rows.first().map(Vec::as_slice),
                rows.get(1..).unwrap_or(&[]),
            )?;
            i = end;
            continue;
        }
        if lines[i].trim().is_empty() {
            chunk_blocks(builder, &std::mem::take(&mut chunk), &mut seen_heading)?;
        } else {
            chunk.push(lines[i]);
        }
        i += 1;
    }
    chunk_blocks(builder, &chunk, &mut seen_heading)
}

/// A line's cells: text set apart by two or more spaces or a tab.
fn cells(line: &str) -> Vec<String> {
    line.split('\t')
        .flat_map(|part| part.split("  "))
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

/// The table starting at line `start` (consecutive lines, up to a blank line): where
/// it ends and its rows, header first — a header of labels and at least one row of the
/// same width.
fn table_run(lines: &[&str], start: usize) -> Option<(usize, Vec<Vec<String>>)> {
    let header = cells(lines.get(start)?);
    // A header labels columns: short cells, none ending a sentence ("One.  Two." is
    // prose typed with two spaces, not a table).
    let labels = header
        .iter()
        .all(|c| c.chars().count() <= 40 && !c.ends_with(['.', '!', '?', ';', ',']));
    if header.len() < 2 || !labels || list_marker(lines[start]).is_some() {
        return None;
    }
    let mut rows = vec![header];
    let mut end = start + 1;
    for line in &lines[start + 1..] {
        let row = cells(line);
        if line.trim().is_empty() || row.len() != rows[0].len() {
            break;
        }
        rows.push(row);
        end += 1;
    }
    (rows.len() >= 2).then_some((end, rows))
}

/// One run of non-blank lines: a heading, or paragraphs and list items.
fn chunk_blocks(
    builder: &mut Builder,
    chunk: &[&str],
    seen_heading: &mut bool,
) -> Result<(), ReadError> {
    let lines: Vec<&str> = chunk.iter().map(|l| l.trim()).collect();
    if lines.is_empty() {
        return Ok(());
    }
    if lines.len() == 1 && list_marker(lines[0]).is_none() && looks_like_heading(lines[0]) {
        builder.heading(if *seen_heading { 2 } else { 1 }, lines[0])?;
        *seen_heading = true;
        return Ok(());
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
    flush(builder, &mut open, &mut open_marker)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_headings_paragraphs_and_items() {
        let text = "Fleet report\n\nWe run robots in\nthree regions.\n\nKey numbers:\n- Robots deployed: 1,240\n- Uptime 99.2%\n  across sites\n1. First step\n\nRisks\n\nSupply is tight.\nRound    Date    Amount\nSeed    Jun 2019    $3.5M\nSeries C\tOct 2025\t$48M\n\nPrepared by Dana Okafor, CEO, 2026-04-14\n\nOne.  Two.\nThree.  Four.";
        let doc = read(text, &Limits::default()).unwrap();
        assert_eq!(
            doc.text,
            "Fleet report\n\nWe run robots in three regions.\n\nKey numbers:\n\nRobots deployed: 1,240\n\nUptime 99.2% across sites\n\n1. First step\n\nRisks\n\nSupply is tight.\n\nRound: Seed · Date: Jun 2019 · Amount: $3.5M\n\nRound: Series C · Date: Oct 2025 · Amount: $48M\n\nPrepared by Dana Okafor, CEO, 2026-04-14\n\nOne. Two. Three. Four."
        );
        let at = doc.text.find("Supply").unwrap();
        assert_eq!(doc.heading_path(at), ["Fleet report", "Risks"]);
    }
}
