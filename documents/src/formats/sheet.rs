//! Spreadsheets: XLSX and ODS through calamine, CSV through the csv crate. Each sheet
//! opens with its name as a heading; its first non-empty row is the header and every
//! later row is one block of header-labelled cells on `sheet=Name!row=N` (CSV:
//! `row=N`), so a figure in a budget row is an evidence unit that says what it is. A
//! second row that describes the columns rather than holding data (`Fiscal quarter |
//! USD, millions | count`) joins the header: `Breach cost (USD, millions): 1.2`. Cells
//! are never cut: a cell is kept whole.
//!
//! A CSV of more rows than the row limit (`Limits::max_blocks`) keeps its first rows up
//! to it, and a sheet or CSV whose rows pass the text or block limit keeps the rows
//! before the one that would pass it: the document is read in part, and a gap says how
//! many rows of how many (per sheet; the sheets after it are listed as not read).
//!
//! The container is inflated once within the limits before calamine sees it (calamine
//! inflates without a cap), and a sheet whose grid is too large for calamine to allocate
//! is refused before calamine allocates it: that cannot be read in part.

use std::io::Cursor;

use calamine::{Data, Reader};

use super::zipped::Container;
use crate::{grouped, Builder, DocStatus, Document, Format, Limits, Place, ReadError};

pub(super) fn read_workbook(
    bytes: &[u8],
    format: Format,
    limits: &Limits,
) -> Result<Document, ReadError> {
    let mut container = Container::open(bytes, format, limits)?;
    container.check_all()?;
    refuse_huge_grids(&mut container, format, limits)?;
    let (mut builder, date) = match format {
        Format::Ods => super::odf::metadata(&mut container, format, limits)?,
        _ => super::ooxml::core_properties(&mut container, format, limits)?,
    };
    let mut workbook =
        calamine::open_workbook_auto_from_rs(Cursor::new(bytes)).map_err(|e| match e {
            calamine::Error::Ods(calamine::OdsError::Password) => ReadError::Encrypted,
            other => ReadError::malformed(format, other),
        })?;
    let mut unread: Vec<String> = Vec::new();
    for name in workbook.sheet_names() {
        if builder.full().is_some() {
            unread.push(name);
            continue;
        }
        let range = workbook
            .worksheet_range(&name)
            .map_err(|e| ReadError::malformed(format, format!("sheet {name}: {e}")))?;
        let (height, width) = range.get_size();
        if height.saturating_mul(width.max(1)) > limits.max_blocks.saturating_mul(64) {
            return Err(ReadError::TooComplex(format!(
                "sheet {name} has {height} rows × {width} columns"
            )));
        }
        let first_row = range.start().map_or(0, |(row, _)| row);
        let rows = range.rows().enumerate().map(|(i, cells)| {
            let number = first_row
                .saturating_add(u32::try_from(i).unwrap_or(u32::MAX))
                .saturating_add(1);
            (number, cells.iter().map(cell_text).collect::<Vec<String>>())
        });
        let stopped = sheet(&mut builder, &name, rows, |number| Place::Row {
            sheet: name.clone(),
            row: number,
        })?;
        match stopped {
            Some(0) => unread.push(name),
            Some(read) => {
                let full = builder.full().unwrap_or_default().to_string();
                builder.gap(format!(
                    "sheet {name}: first {} of {} rows: {full}",
                    grouped(read as u64),
                    grouped(height as u64)
                ));
            }
            None => {}
        }
    }
    if !unread.is_empty() {
        let full = builder.full().unwrap_or_default().to_string();
        let what = if unread.len() == 1 { "sheet" } else { "sheets" };
        builder.gap(format!("{what} {} not read: {full}", unread.join(", ")));
    }
    builder.finish(date, DocStatus::Current)
}

/// A row of a sheet: the line or row number it starts on, and its cells.
type Row = (u32, Vec<String>);

/// A CSV's records, up to the row limit (the rest only counted), as sheet rows.
pub(super) fn read_csv(text: &str, limits: &Limits) -> Result<Document, ReadError> {
    let (rows, total) = csv_rows(text, limits.max_blocks)?;
    let kept = rows.len();
    let mut builder = Builder::new(*limits);
    let stopped = sheet(&mut builder, "", rows.into_iter(), Place::Line)?;
    let total = total.map_or("more".to_string(), |t| grouped(t as u64));
    match stopped {
        Some(read) => {
            let full = builder.full().unwrap_or_default().to_string();
            builder.gap(format!(
                "first {} of {total} rows: {full}",
                grouped(read as u64)
            ));
        }
        None if total != grouped(kept as u64) => {
            builder.gap(format!("first {} of {total} rows", grouped(kept as u64)));
        }
        None => {}
    }
    builder.finish(None, DocStatus::Current)
}

/// The first `limit` records of a CSV, each with the line it starts on, and how many
/// records it has (`None` when one past the limit cannot be read: "of more").
fn csv_rows(text: &str, limit: usize) -> Result<(Vec<Row>, Option<usize>), ReadError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rows = Vec::new();
    // Lines counted as the reader moves on: (byte reached, line number there).
    let mut counted = (0usize, 1usize);
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => {
                let total = rows.len();
                return Ok((rows, Some(total)));
            }
            Err(e) if rows.len() < limit => return Err(ReadError::malformed(Format::Csv, e)),
            Err(_) => return Ok((rows, None)),
        }
        if rows.len() >= limit {
            let mut more = csv::ByteRecord::new();
            let mut total = rows.len() + 1;
            loop {
                match reader.read_byte_record(&mut more) {
                    Ok(true) => total += 1,
                    Ok(false) => return Ok((rows, Some(total))),
                    Err(_) => return Ok((rows, None)),
                }
            }
        }
        // The record's line in the file (the csv crate's own count skips blank lines).
        let byte = record.position().map_or(0, |p| p.byte());
        let mut byte = usize::try_from(byte).unwrap_or(usize::MAX).min(text.len());
        // A record's position is where the reader stood: before any blank lines.
        while matches!(text.as_bytes().get(byte), Some(b'\n' | b'\r')) {
            byte += 1;
        }
        let from = counted.0.min(byte);
        let newlines = text.as_bytes()[from..byte]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        counted = (byte, counted.1 + newlines);
        let number = u32::try_from(counted.1).unwrap_or(u32::MAX);
        rows.push((
            number,
            record.iter().map(str::to_string).collect::<Vec<String>>(),
        ));
    }
}

/// Calamine allocates a sheet's whole grid (rows × columns between its first and last
/// cell) before it can be measured: two cells at A1 and XFD1048576 ask for 17 billion.
/// So the grid each worksheet's cells span (XLSX), and the cells an ODS repeats, are
/// measured in the XML first, and a sheet past the limit is refused.
fn refuse_huge_grids(
    container: &mut Container<'_>,
    format: Format,
    limits: &Limits,
) -> Result<(), ReadError> {
    let cap = u64::try_from(limits.max_blocks.saturating_mul(64)).unwrap_or(u64::MAX);
    let parts: Vec<String> = container
        .names()
        .into_iter()
        .filter(|n| match format {
            Format::Ods => n == "content.xml",
            _ => n.starts_with("xl/worksheets/") && n.ends_with(".xml"),
        })
        .collect();
    for part in parts {
        let Some(xml) = container.read(&part)? else {
            continue;
        };
        let cells = match format {
            Format::Ods => repeated_cells(&xml),
            _ => grid_of_cell_refs(&xml),
        };
        if cells > cap {
            return Err(ReadError::TooComplex(format!("{part} spans {cells} cells")));
        }
    }
    Ok(())
}

/// The cells of the grid an XLSX worksheet's cell references (`<c r="B7"`) span.
fn grid_of_cell_refs(xml: &[u8]) -> u64 {
    let (mut rows, mut cols) = ((u64::MAX, 0u64), (u64::MAX, 0u64));
    let mut rest = xml;
    while let Some(at) = rest.windows(6).position(|w| w == b"<c r=\"") {
        rest = &rest[at + 6..];
        let reference: Vec<u8> = rest
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .take(12)
            .copied()
            .collect();
        let letters = reference
            .iter()
            .take_while(|b| b.is_ascii_alphabetic())
            .count();
        let col = reference[..letters].iter().fold(0u64, |n, b| {
            n.saturating_mul(26)
                .saturating_add(u64::from(b.to_ascii_uppercase() - b'A' + 1))
        });
        let row = std::str::from_utf8(&reference[letters..])
            .ok()
            .and_then(|r| r.parse::<u64>().ok())
            .unwrap_or(0);
        rows = (rows.0.min(row), rows.1.max(row));
        cols = (cols.0.min(col), cols.1.max(col));
    }
    if rows.1 == 0 {
        return 0;
    }
    (rows.1 - rows.0.min(rows.1) + 1).saturating_mul(cols.1 - cols.0.min(cols.1) + 1)
}

/// The most cells one non-empty repeated ODS cell stands for (an empty trailing cell,
/// `<table:table-cell table:number-columns-repeated="16000"/>`, costs nothing).
fn repeated_cells(xml: &[u8]) -> u64 {
    const ATTRIBUTE: &[u8] = b"number-columns-repeated=\"";
    let mut most = 0;
    let mut rest = xml;
    while let Some(at) = rest.windows(ATTRIBUTE.len()).position(|w| w == ATTRIBUTE) {
        rest = &rest[at + ATTRIBUTE.len()..];
        let digits: Vec<u8> = rest
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .take(12)
            .copied()
            .collect();
        let times = std::str::from_utf8(&digits)
            .ok()
            .and_then(|d| d.parse::<u64>().ok())
            .unwrap_or(0);
        let tag_end = rest.iter().position(|b| *b == b'>').unwrap_or(rest.len());
        let empty = tag_end > 0 && rest.get(tag_end - 1) == Some(&b'/');
        if !empty {
            most = most.max(times);
        }
    }
    most
}

/// A cell as text: integers without `.0`, everything else as calamine shows it.
fn cell_text(cell: &Data) -> String {
    match cell {
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", *f as i64),
        other => other.to_string(),
    }
}

/// How many rows after a sheet's second row are looked at to tell a row of column
/// descriptions from data.
const LOOKAHEAD_ROWS: usize = 10;

/// Cells that stand for a missing value: a row of them is data, not descriptions.
const PLACEHOLDERS: &[&str] = &[
    "n/a", "na", "-", "--", "—", "–", "?", "tbd", "tba", "none", "null", "nil", "unknown",
    "pending",
];

/// Words that name a unit, a currency or a format rather than a value.
const UNIT_WORDS: &[&str] = &[
    "usd",
    "eur",
    "gbp",
    "jpy",
    "chf",
    "cad",
    "aud",
    "currency",
    "percent",
    "percentage",
    "pct",
    "count",
    "number",
    "units",
    "unit",
    "thousands",
    "thousand",
    "millions",
    "million",
    "billions",
    "billion",
    "mn",
    "bn",
    "per",
    "ratio",
    "rate",
    "hours",
    "hrs",
    "days",
    "weeks",
    "months",
    "years",
    "minutes",
    "seconds",
    "kg",
    "km",
    "tonnes",
    "tons",
    "kwh",
    "mwh",
    "gb",
    "tb",
    "description",
    "fiscal",
    "yyyy",
];

/// One sheet: its name as a heading, its first non-empty row as the header (with the
/// row below it, where that row describes the columns: [`describes_columns`]), every
/// later non-empty row a labelled block at its place. Where the builder's limits stop
/// it, how many of its rows came before the one they refused.
fn sheet(
    builder: &mut Builder,
    name: &str,
    rows: impl Iterator<Item = (u32, Vec<String>)>,
    place: impl Fn(u32) -> Place,
) -> Result<Option<usize>, ReadError> {
    let mut rows = rows.enumerate().peekable();
    builder.reset_headings();
    if let Some((_, (first, _))) = rows.peek() {
        builder.place(place(*first));
    }
    if !name.trim().is_empty() {
        if let Err(err) = builder.heading(2, name) {
            return stopped(builder, err, 0);
        }
    }
    let mut rows = rows.filter(|(_, (_, cells))| cells.iter().any(|c| !c.trim().is_empty()));
    let Some((header_index, (header_at, mut labels))) = rows.next() else {
        return Ok(None);
    };
    let mut ahead: Vec<(usize, (u32, Vec<String>))> =
        rows.by_ref().take(LOOKAHEAD_ROWS + 1).collect();
    if let [(_, (_, second)), after @ ..] = ahead.as_slice() {
        let after: Vec<(u32, Vec<String>)> = after.iter().map(|(_, row)| row.clone()).collect();
        if describes_columns(&labels, second, &after) {
            labels = described_labels(&labels, second);
            ahead.remove(0);
        }
    }
    let mut written = 0usize;
    for (index, (number, cells)) in ahead.into_iter().chain(rows) {
        builder.place(place(number));
        if let Err(err) = builder.row(Some(&labels), &cells) {
            return stopped(builder, err, index);
        }
        written += 1;
    }
    // A sheet of one row has no header to label: the row itself is the content.
    if written == 0 {
        builder.place(place(header_at));
        if let Err(err) = builder.row(None, &labels) {
            return stopped(builder, err, header_index);
        }
    }
    Ok(None)
}

/// `read` rows read when the builder refused a row for its limits; any other error.
fn stopped(builder: &Builder, err: ReadError, read: usize) -> Result<Option<usize>, ReadError> {
    if builder.refused(&err) {
        Ok(Some(read))
    } else {
        Err(err)
    }
}

/// Whether a sheet's second row describes its columns (`Fiscal quarter | USD,
/// millions | count` under `Quarter | Breach cost | Incidents`) rather than holding
/// data. Only when every non-empty cell is a short text without digits (not `n/a`), at
/// least one stands over a column of figures in the rows below, and either one of
/// those over figures names a unit (`USD`, `%`, `count`, `millions`…) or, with two rows
/// or more below, every one stands over a column whose cells all hold digits. A list
/// of names and statuses, or a text value in a column of figures (`pending`), stays a
/// row.
fn describes_columns(header: &[String], second: &[String], after: &[(u32, Vec<String>)]) -> bool {
    let described: Vec<usize> = (0..second.len())
        .filter(|i| !second[*i].trim().is_empty())
        .collect();
    let repeats_header = described.iter().all(|i| {
        header
            .get(*i)
            .is_some_and(|h| h.trim() == second[*i].trim())
    });
    if described.is_empty() || repeats_header || !described.iter().all(|i| descriptive(&second[*i]))
    {
        return false;
    }
    let below = |i: usize, test: fn(&str) -> bool| {
        let mut cells = after
            .iter()
            .filter_map(|(_, row)| row.get(i).map(|c| c.trim()))
            .filter(|c| !c.is_empty())
            .peekable();
        cells.peek().is_some() && cells.all(test)
    };
    let has_digit = |c: &str| c.contains(|ch: char| ch.is_ascii_digit());
    let over_figures: Vec<usize> = described
        .iter()
        .copied()
        .filter(|i| below(*i, figure))
        .collect();
    !over_figures.is_empty()
        && (over_figures.iter().any(|i| names_unit(&second[*i]))
            || (after.len() >= 2 && described.iter().all(|i| below(*i, has_digit))))
}

/// A cell that could describe a column: at most eight words, no digits, not a
/// placeholder for a missing value.
fn descriptive(cell: &str) -> bool {
    let cell = cell.trim();
    cell.split_whitespace().count() <= 8
        && !cell.contains(|c: char| c.is_ascii_digit())
        && !PLACEHOLDERS.contains(&cell.to_lowercase().as_str())
}

/// A cell that names a unit: a currency or percent sign, or a [`UNIT_WORDS`] word.
fn names_unit(cell: &str) -> bool {
    let lower = cell.to_lowercase();
    lower.contains(['%', '$', '€', '£', '¥'])
        || lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| UNIT_WORDS.contains(&w))
}

/// A figure: digits with signs, separators, currency and percent signs, and at most a
/// magnitude suffix (`$1.2M`, `-4%`, `3,400`, `2026-03-02`, `1.5bn`).
fn figure(cell: &str) -> bool {
    let lower = cell.trim().to_lowercase();
    let number = ["bn", "mn", "k", "m", "b", "x"]
        .iter()
        .find_map(|s| lower.strip_suffix(s))
        .unwrap_or(&lower);
    number.contains(|c: char| c.is_ascii_digit())
        && number
            .chars()
            .all(|c| c.is_ascii_digit() || " .,:/+-−()%$€£¥'".contains(c))
}

/// The header's labels with the descriptions below them: `Breach cost (USD,
/// millions)`; a description under no label is the label, one that repeats its label
/// adds nothing.
fn described_labels(header: &[String], second: &[String]) -> Vec<String> {
    let width = header.len().max(second.len());
    (0..width)
        .map(|i| {
            let label = header.get(i).map_or("", |s| s.trim());
            let note = second.get(i).map_or("", |s| s.trim());
            if note.is_empty() || label.eq_ignore_ascii_case(note) {
                label.to_string()
            } else if label.is_empty() {
                note.to_string()
            } else {
                format!("{label} ({note})")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::writers::{write_xlsx, Meta};

    fn xlsx(sheets: &[(&str, Vec<Vec<&str>>)], modified: &str) -> Vec<u8> {
        let meta = Meta {
            modified: modified.into(),
            ..Meta::default()
        };
        let sheets: Vec<(String, Vec<Vec<String>>)> = sheets
            .iter()
            .map(|(name, rows)| {
                (
                    name.to_string(),
                    rows.iter()
                        .map(|r| r.iter().map(|c| c.to_string()).collect())
                        .collect(),
                )
            })
            .collect();
        write_xlsx(&meta, &sheets).unwrap()
    }

    #[test]
    fn xlsx_rows_are_labelled_by_their_header() {
        let bytes = xlsx(
            &[(
                "Summary",
                vec![
                    vec!["Metric", "Value", "Owner"],
                    vec![],
                    vec!["FY2026 revenue target", "$68M", "Priya Raman"],
                    vec!["Headcount plan", "365", ""],
                ],
            )],
            "2026-04-09T18:30:00Z",
        );
        let doc = read_workbook(&bytes, Format::Xlsx, &Limits::default()).unwrap();
        assert_eq!(
            doc.text,
            "Summary\n\nMetric: FY2026 revenue target · Value: $68M · Owner: Priya Raman\n\nMetric: Headcount plan · Value: 365"
        );
        let at = doc.text.find("Metric: Headcount").unwrap();
        assert_eq!(doc.fragment_at(at).as_deref(), Some("sheet=Summary!row=4"));
        assert_eq!(doc.heading_path(at), ["Summary"]);
        assert_eq!(doc.date.as_deref(), Some("2026-04-09"));
    }

    #[test]
    fn a_row_describing_the_columns_joins_the_header() {
        let bytes = xlsx(
            &[(
                "Breaches",
                vec![
                    vec!["Quarter", "Breach cost", "Incidents"],
                    vec!["Fiscal quarter", "USD, millions", "count"],
                    vec!["Q1 2025", "1.2", "4"],
                    vec!["Q2 2025", "0.8", "3"],
                ],
            )],
            "2026-04-09T18:30:00Z",
        );
        let doc = read_workbook(&bytes, Format::Xlsx, &Limits::default()).unwrap();
        assert_eq!(
            doc.text,
            "Breaches\n\nQuarter (Fiscal quarter): Q1 2025 · Breach cost (USD, millions): 1.2 · Incidents (count): 4\n\nQuarter (Fiscal quarter): Q2 2025 · Breach cost (USD, millions): 0.8 · Incidents (count): 3"
        );
        let at = doc.text.find("Quarter (Fiscal quarter): Q1").unwrap();
        assert_eq!(doc.fragment_at(at).as_deref(), Some("sheet=Breaches!row=3"));
        let csv = read_csv(
            "Region,Revenue,Growth\n,in USD,%\nEMEA,\"$14.2M\",+12%\n",
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(
            csv.text,
            "Region: EMEA · Revenue (in USD): $14.2M · Growth (%): +12%"
        );
    }

    #[test]
    fn a_second_row_of_text_data_stays_a_row() {
        let cases: &[(&str, &str)] = &[
            (
                "Name,Status\nAlice Wong,Active\nBob Lee,On leave\n",
                "Name: Alice Wong · Status: Active\n\nName: Bob Lee · Status: On leave",
            ),
            (
                "Metric,Value\nRevenue,pending\nCost,5\n",
                "Metric: Revenue · Value: pending\n\nMetric: Cost · Value: 5",
            ),
            (
                "Metric,Value\nRevenue,in progress\nCost,5\nMargin,7\n",
                "Metric: Revenue · Value: in progress\n\nMetric: Cost · Value: 5\n\nMetric: Margin · Value: 7",
            ),
            (
                "Item,Price\nWidget,free\nGadget 2,5\n",
                "Item: Widget · Price: free\n\nItem: Gadget 2 · Price: 5",
            ),
            (
                "Quarter,Cost\nFiscal quarter,USD millions\n",
                "Quarter: Fiscal quarter · Cost: USD millions",
            ),
        ];
        for (csv, text) in cases {
            let doc = read_csv(csv, &Limits::default()).unwrap();
            assert_eq!(doc.text, *text, "{csv}");
        }
    }

    #[test]
    fn cells_are_never_cut() {
        let long = format!("{}end", "a long note, ".repeat(2_000));
        let bytes = xlsx(
            &[("Notes", vec![vec!["Topic", "Note"], vec!["Plan", &long]])],
            "2026-04-09T18:30:00Z",
        );
        let doc = read_workbook(&bytes, Format::Xlsx, &Limits::default()).unwrap();
        assert!(
            doc.text.ends_with(&format!("Note: {}", long.trim())),
            "xlsx"
        );
        let doc = read_csv(
            &format!("Topic,Note\nPlan,\"{long}\"\n"),
            &Limits::default(),
        )
        .unwrap();
        assert!(doc.text.ends_with(&format!("Note: {}", long.trim())), "csv");
    }

    #[test]
    fn huge_grids_are_refused_before_they_are_allocated() {
        let corner = |sheet_xml: &str| {
            crate::writers::zip(&[
                ("xl/workbook.xml".into(), r#"<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>"#.into()),
                ("xl/_rels/workbook.xml.rels".into(), r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#.into()),
                ("xl/worksheets/sheet1.xml".into(), sheet_xml.into()),
            ])
            .unwrap()
        };
        let far = r#"<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1"><v>1</v></c></row><row r="1048576"><c r="XFD1048576"><v>2</v></c></row></sheetData></worksheet>"#;
        let result = read_workbook(&corner(far), Format::Xlsx, &Limits::default());
        assert!(
            matches!(result, Err(ReadError::TooComplex(_))),
            "{result:?}"
        );
        assert_eq!(grid_of_cell_refs(br#"<c r="B2"/><c r="C4"/>"#), 6);
        assert_eq!(
            repeated_cells(
                br#"<c number-columns-repeated="9000"/><c number-columns-repeated="70"><p>x</p>"#
            ),
            70
        );
    }

    #[test]
    fn csv_rows_and_bad_input() {
        let doc = read_csv(
            "Quarter,Revenue\nQ1 2026,14.2\n\nQ2 2026,15.8\n",
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(
            doc.text,
            "Quarter: Q1 2026 · Revenue: 14.2\n\nQuarter: Q2 2026 · Revenue: 15.8"
        );
        let at = doc.text.find("Q2").unwrap();
        assert_eq!(doc.fragment_at(at).as_deref(), Some("row=4"));
        let limits = Limits::default();
        for junk in [&b"PK\x03\x04junk"[..], b"", &[0xff; 32]] {
            assert!(read_workbook(junk, Format::Xlsx, &limits).is_err());
            assert!(read_workbook(junk, Format::Ods, &limits).is_err());
        }
    }

    /// A CSV past the row limit keeps its first rows, one past the text limit the rows
    /// before it; a workbook's sheet past the block limit its first rows, and the sheets
    /// after it are listed as not read.
    #[test]
    fn sheets_past_the_limits_keep_their_first_rows_and_say_how_many() {
        let limits = Limits::tight();
        let csv: String = std::iter::once("Bay,Trailer,Length\n".to_string())
            .chain((1..25_000).map(|n| format!("{n},Reefer {n},53 ft\n")))
            .collect();
        let doc = read_csv(&csv, &limits).unwrap();
        assert_eq!(doc.marks.len(), 9_999);
        assert!(doc
            .text
            .ends_with("Bay: 9999 · Trailer: Reefer 9999 · Length: 53 ft"));
        assert_eq!(doc.gaps, ["first 10,000 of 25,000 rows"]);
        let wide = Limits {
            max_text_bytes: 4_000,
            ..Limits::tight()
        };
        let doc = read_csv(&csv, &wide).unwrap();
        let read = doc.marks.len() + 1;
        assert_eq!(
            doc.gaps,
            [format!("first {read} of 25,000 rows: its text reached 3.9 KB, the most one document may hold")]
        );
        let big: Vec<Vec<&str>> = std::iter::once(vec!["Bay", "Note"])
            .chain((1..12_000).map(|_| vec!["7", "takes reefers"]))
            .collect();
        let bytes = xlsx(
            &[("Big", big), ("Small", vec![vec!["A"], vec!["1"]])],
            "2026-04-09T18:30:00Z",
        );
        let doc = read_workbook(&bytes, Format::Xlsx, &limits).unwrap();
        assert_eq!(
            doc.gaps,
            [
                "sheet Big: first 10,000 of 12,000 rows: it reached 10,000 blocks, the most one document may hold",
                "sheet Small not read: it reached 10,000 blocks, the most one document may hold",
            ]
        );
    }
}
