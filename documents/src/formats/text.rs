//! Plain text (and a PDF page's text layer): blank lines separate blocks; a line that
//! starts with a bullet (`-`, `*`, `•`) or a number (`3.`, `3)`) is a list item of its
//! own, so a list without final periods still gives one evidence unit per item; a
//! short line standing alone (no final punctuation, no comma but one before a date:
//! "Penetration test, July 2026") is taken as a heading;
//! consecutive lines whose cells are set apart by runs of spaces or tabs, the same
//! number of cells each, are a table whose first line labels the others (a first line
//! of one cell fewer labels all columns but the first: a stub column's blank header; a
//! row of one cell fewer left its last cell blank).
//!
//! A text past the text or block limit is read in part: the lines up to the block that
//! would pass it (a long paragraph — a log's lines with no blank line between them —
//! keeps as many of its lines as fit), and a gap that says how many lines that was.

use crate::{grouped, Builder, DocStatus, Document, Limits, ReadError};

pub(super) fn read(text: &str, limits: &Limits) -> Result<Document, ReadError> {
    let mut builder = Builder::new(*limits);
    let lines: Vec<&str> = text.lines().collect();
    match lines_into(&mut builder, &lines) {
        Ok(()) => {}
        Err((read, err)) if builder.refused(&err) => {
            let full = builder.full().unwrap_or_default().to_string();
            builder.gap(format!(
                "first {} of {} lines: {full}",
                grouped(read as u64),
                grouped(lines.len() as u64)
            ));
        }
        Err((_, err)) => return Err(err),
    }
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

/// Whether a lone line reads as a heading: short, no final sentence punctuation, no
/// comma but one before its date ("Penetration test, July 2026"), and starting with a
/// letter or digit.
fn looks_like_heading(line: &str) -> bool {
    let line = line.trim();
    let words = line.split_whitespace().count();
    (1..=12).contains(&words)
        && line.chars().count() <= 90
        && (!line.contains(',') || crate::stated_date::dated_name(line))
        && !line.ends_with(['.', ',', ';', ':', '!', '?'])
        && line.chars().next().is_some_and(char::is_alphanumeric)
}

/// Lines into blocks: tables (see the module docs), paragraphs (lines joined up to a
/// blank line), list items (one per marked line, continuation lines joined), and lone
/// short lines as headings of level 2 (the first one of the text: level 1).
pub(super) fn blocks_of_lines(builder: &mut Builder, text: &str) -> Result<(), ReadError> {
    let lines: Vec<&str> = text.lines().collect();
    lines_into(builder, &lines).map_err(|(_, err)| err)
}

/// [`blocks_of_lines`] on `lines`; on an error, with how many lines were read before it.
fn lines_into(builder: &mut Builder, lines: &[&str]) -> Result<(), (usize, ReadError)> {
    let mut seen_heading = false;
    let mut chunk = 0;
    let mut i = 0;
    while i < lines.len() {
        if let Some((end, rows)) = table_run(lines, i) {
            chunk_into(builder, lines, chunk..i, &mut seen_heading)?;
            let (header, rows) = (
                rows.first().map(Vec::as_slice),
                rows.get(1..).unwrap_or(&[]),
            );
            builder.table(header, rows).map_err(|err| (i, err))?;
            i = end;
            chunk = i;
            continue;
        }
        if lines[i].trim().is_empty() {
            chunk_into(builder, lines, chunk..i, &mut seen_heading)?;
            chunk = i + 1;
        }
        i += 1;
    }
    chunk_into(builder, lines, chunk..lines.len(), &mut seen_heading)
}

/// The run of non-blank lines `range` into blocks; a plain paragraph too long for the
/// text limit keeps the lines that fit. On an error, how many lines were read before it.
fn chunk_into(
    builder: &mut Builder,
    lines: &[&str],
    range: std::ops::Range<usize>,
    seen_heading: &mut bool,
) -> Result<(), (usize, ReadError)> {
    let chunk = &lines[range.clone()];
    let Err(err) = chunk_blocks(builder, chunk, seen_heading) else {
        return Ok(());
    };
    let plain = chunk.len() > 1 && chunk.iter().all(|l| list_marker(l).is_none());
    if !plain || !builder.refused(&err) {
        return Err((range.start, err));
    }
    let room = builder.text_room();
    let mut length = 0;
    let fitting = chunk
        .iter()
        .take_while(|line| {
            length += line.trim().len() + 1;
            length <= room + 1
        })
        .count();
    if fitting == 0 {
        return Err((range.start, err));
    }
    let part = chunk[..fitting]
        .iter()
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" ");
    match builder.paragraph(&part) {
        Ok(()) => Err((range.start + fitting, err)),
        Err(err) => Err((range.start, err)),
    }
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
    let mut header = header;
    // A header over a stub column leaves its first cell blank ("      2025    2024"
    // over "Revenue   £1,184.6m   £1,093.8m"): the text layer shows one cell fewer.
    // Two rows of one cell more each make it the header of a blank first label.
    let wider = |at: usize| lines.get(at).map(|l| cells(l).len()) == Some(header.len() + 1);
    if wider(start + 1) && wider(start + 2) {
        header.insert(0, String::new());
    }
    let mut rows = vec![header];
    let mut end = start + 1;
    for line in &lines[start + 1..] {
        let mut row = cells(line);
        // A row one cell short left its last cell blank (a status column not yet
        // filled): the text layer shows no gap for it.
        if row.len() + 1 == rows[0].len() && row.len() >= 2 {
            row.push(String::new());
        }
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
        assert!(doc.gaps.is_empty());
        assert_eq!(
            doc.text,
            "Fleet report\n\nWe run robots in three regions.\n\nKey numbers:\n\nRobots deployed: 1,240\n\nUptime 99.2% across sites\n\n1. First step\n\nRisks\n\nSupply is tight.\n\nRound: Seed · Date: Jun 2019 · Amount: $3.5M\n\nRound: Series C · Date: Oct 2025 · Amount: $48M\n\nPrepared by Dana Okafor, CEO, 2026-04-14\n\nOne. Two. Three. Four."
        );
        let at = doc.text.find("Supply").unwrap();
        assert_eq!(doc.heading_path(at), ["Fleet report", "Risks"]);
    }

    /// A section named with its date after a comma is a heading; a byline is not.
    #[test]
    fn a_section_dated_after_a_comma_is_a_heading() {
        let text = "Security report\n\nPenetration test, July 2026\n\nSeverity    Raised    Open\nHigh    3    1\n\nPrepared by Dana Okafor, 2 October 2026\n\nRevenue rose, as planned\n";
        let doc = read(text, &Limits::default()).unwrap();
        let at = doc.text.find("Severity").unwrap();
        assert_eq!(
            doc.heading_path(at),
            ["Security report", "Penetration test, July 2026"]
        );
        let at = doc.text.find("Revenue rose").unwrap();
        assert_eq!(
            doc.heading_path(at),
            ["Security report", "Penetration test, July 2026"]
        );
    }

    /// A year-by-year table over a stub column: its header line has no first cell.
    #[test]
    fn a_header_over_a_stub_column_labels_every_column_but_the_first() {
        let text = "2025 at a glance\n        2025        2024\nRevenue    £1,184.6m    £1,093.8m\nOperating profit    £38.9m    £33.2m\n\nA header of two over one row of three is no table:\nNorth    South\nDepots    4    5\n";
        let read_text = |text: &str| read(text, &Limits::default()).unwrap().text;
        let out = read_text(text);
        assert!(
            out.contains("Revenue · 2025: £1,184.6m · 2024: £1,093.8m\n\nOperating profit · 2025: £38.9m · 2024: £33.2m"),
            "{out}"
        );
        assert!(!out.contains("North: Depots"), "{out}");
        // A row whose last cell is blank stays a row of its table.
        let text = "Milestone    Baseline    Forecast    Status\nShell weathertight    January 2026    February 2026    Complete\nWet commissioning    January 2027    February 2027\nFirst cheese    February 2027    March 2027\n";
        let out = read_text(text);
        assert!(
            out.contains("Milestone: Wet commissioning · Baseline: January 2027 · Forecast: February 2027\n\nMilestone: First cheese · Baseline: February 2027 · Forecast: March 2027"),
            "{out}"
        );
    }

    /// A log past the text limit: its first lines, and how many of how many.
    #[test]
    fn a_text_past_the_limits_keeps_its_first_lines_and_says_how_many() {
        let log: String = (1..=1000)
            .map(|n| {
                format!(
                    "2026-03-04 09:{:02}:{:02} yard gate {n} opened\n",
                    n / 60 % 60,
                    n % 60
                )
            })
            .collect();
        let limits = Limits {
            max_text_bytes: 10_000,
            ..Limits::default()
        };
        let doc = read(&log, &limits).unwrap();
        assert!(
            doc.text
                .starts_with("2026-03-04 09:00:01 yard gate 1 opened"),
            "{}",
            &doc.text[..80]
        );
        assert!(doc.text.len() <= 10_000);
        let read_lines = doc.text.matches("yard gate").count();
        assert_eq!(
            doc.gaps,
            [format!("first {read_lines} of 1,000 lines: its text reached 9.8 KB, the most one document may hold")]
        );
        // With blank lines between entries, the block limit stops it the same way.
        let spaced = log.replace('\n', "\n\n");
        let blocks = Limits {
            max_blocks: 100,
            ..Limits::default()
        };
        let doc = read(&spaced, &blocks).unwrap();
        assert_eq!(doc.marks.len(), 100);
        assert_eq!(
            doc.gaps,
            ["first 200 of 2,000 lines: it reached 100 blocks, the most one document may hold"]
        );
    }
}
