//! Writing documents in the formats deepr reads, from a small Markdown subset: the
//! test data of the readers and of the fact bench's document share are generated
//! from text sources in the repository, never committed as binary files.
//!
//! A **source** is a header of `key: value` lines (`title`, `author`, `created`,
//! `modified`, `vintage`), a line `===`, then a body: `#` headings, paragraphs, `- `
//! list items, pipe tables (header, `|---|`, rows); `--- page ---` separates PDF
//! pages, `--- slide ---` slides (a `Notes: ` line is the slide's speaker notes) and
//! `--- sheet: Name ---` spreadsheet sheets (CSV rows, header first). [`write`]
//! renders a source as the format its file name asks for (`report.pdf.txt` → PDF).
//!
//! Compiled for this crate's tests and behind the `writers` feature; no I/O.

mod mail;
mod office;
mod pdf;
mod pdf_raw;

use crate::Format;

pub use mail::{base64, quoted_printable, write_eml, write_slack};
pub use office::{write_docx, write_pptx, write_xlsx, zip};
pub use pdf::{write_pdf, write_pdf_typeset, Typeset};
pub use pdf_raw::{assemble_pdf, deflate_bomb, one_page_pdf, stream_object};

/// A source's header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    pub title: String,
    pub author: String,
    /// RFC 3339, as in `docProps/core.xml`.
    pub created: String,
    pub modified: String,
}

/// One block of a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    Heading(u8, String),
    Paragraph(String),
    Item(String),
    /// Rows of cells, the header row first.
    Table(Vec<Vec<String>>),
    /// A slide's speaker notes.
    Notes(String),
}

/// Why a source cannot be written.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WriteError {
    #[error("no `===` line ends the header")]
    NoHeader,
    #[error("`{0}` names no format deepr writes (name sources like report.pdf.txt)")]
    UnknownFormat(String),
    #[error("cannot write {0}: {1}")]
    Encoding(&'static str, String),
}

/// A source split into its header and body.
pub fn parse_source(text: &str) -> Result<(Meta, &str), WriteError> {
    let (header, body) = text.split_once("\n===\n").ok_or(WriteError::NoHeader)?;
    let mut meta = Meta::default();
    for line in header.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim().to_string();
        match key.trim() {
            "title" => meta.title = value,
            "author" => meta.author = value,
            "created" => meta.created = value,
            "modified" => meta.modified = value,
            _ => {}
        }
    }
    Ok((meta, body))
}

/// The format a source's file name asks for: `name.pdf.txt` → PDF.
pub fn target_format(source_name: &str) -> Result<Format, WriteError> {
    let stem = source_name.strip_suffix(".txt").unwrap_or(source_name);
    stem.rsplit_once('.')
        .and_then(|(_, ext)| Format::from_extension(ext))
        .ok_or_else(|| WriteError::UnknownFormat(source_name.to_string()))
}

/// A source rendered as `format`'s bytes.
pub fn write(text: &str, format: Format) -> Result<Vec<u8>, WriteError> {
    if format == Format::Eml {
        return write_eml(text);
    }
    let (meta, body) = parse_source(text)?;
    match format {
        // A memo typeset in a narrow column at 1.5 lines (`typeset: memo`).
        Format::Pdf if text.lines().any(|l| l.trim() == "typeset: memo") => {
            write_pdf_typeset(&meta, &sections(body, "--- page ---"), &Typeset::default())
        }
        Format::Pdf => write_pdf(&meta, &sections(body, "--- page ---")),
        Format::Docx => write_docx(&meta, &blocks(body)),
        Format::Pptx => write_pptx(&meta, &sections(body, "--- slide ---")),
        Format::Xlsx => write_xlsx(&meta, &sheets(body)),
        Format::Html => Ok(write_html(&meta, &blocks(body)).into_bytes()),
        Format::Markdown => Ok(markdown(body).into_bytes()),
        Format::Text | Format::Csv | Format::Mbox | Format::Mattermost => {
            Ok(body.trim_start().as_bytes().to_vec())
        }
        Format::Slack => write_slack(body),
        other => Err(WriteError::UnknownFormat(other.as_str().to_string())),
    }
}

/// The body as Markdown a person would write: its own lines (bold kept), a blank line
/// between blocks, so no table or paragraph is read as a list item's continuation.
fn markdown(body: &str) -> String {
    let kind = |line: &str| match line.trim_start() {
        l if l.starts_with('|') => 1,
        l if l.starts_with("- ") => 2,
        _ => 0,
    };
    let mut out = String::new();
    let mut previous: Option<u8> = None;
    for line in body.lines().filter(|l| !l.trim().is_empty()) {
        let this = kind(line);
        if previous.is_some_and(|p| p != this || this == 0) {
            out.push('\n');
        }
        out.push_str(line);
        out.push('\n');
        previous = Some(this);
    }
    out
}

/// A share's files from their sources: each `(path.ext.txt, text)` becomes
/// `(path.ext, bytes)` in the format its name asks for.
pub fn share_files(sources: &[(String, String)]) -> Result<Vec<(String, Vec<u8>)>, WriteError> {
    sources
        .iter()
        .map(|(name, text)| {
            let format = target_format(name)?;
            let target = name.strip_suffix(".txt").unwrap_or(name).to_string();
            Ok((target, write(text, format)?))
        })
        .collect()
}

/// The body cut at `separator` lines, each part's blocks.
pub fn sections(body: &str, separator: &str) -> Vec<Vec<Block>> {
    body.split(&format!("\n{separator}\n"))
        .map(blocks)
        .collect()
}

/// Sheets of `--- sheet: Name ---` sections, each row's cells (CSV).
pub fn sheets(body: &str) -> Vec<(String, Vec<Vec<String>>)> {
    let mut out: Vec<(String, Vec<Vec<String>>)> = Vec::new();
    for line in body.lines() {
        if let Some(name) = line
            .strip_prefix("--- sheet:")
            .and_then(|r| r.strip_suffix("---"))
        {
            out.push((name.trim().to_string(), Vec::new()));
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        if out.is_empty() {
            out.push(("Sheet1".into(), Vec::new()));
        }
        if let Some((_, rows)) = out.last_mut() {
            rows.push(csv_cells(line));
        }
    }
    out
}

/// One CSV line's cells (double quotes group, `""` escapes a quote).
fn csv_cells(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                if let Some(cell) = cells.last_mut() {
                    cell.push('"');
                }
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(String::new()),
            (c, _) => {
                if let Some(cell) = cells.last_mut() {
                    cell.push(c);
                }
            }
        }
    }
    cells
}

/// `**bold**` and `` `code` `` markers dropped: the formats carry no Markdown.
fn plain(text: &str) -> String {
    text.replace("**", "").replace('`', "").trim().to_string()
}

/// The blocks of a body in the Markdown subset.
pub fn blocks(body: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut table: Vec<Vec<String>> = Vec::new();
    for line in body.lines() {
        let line = line.trim_end();
        if line.starts_with('|') {
            let cells: Vec<String> = line.trim_matches('|').split('|').map(plain).collect();
            if !cells
                .iter()
                .all(|c| c.chars().all(|ch| ch == '-' || ch == ':'))
            {
                table.push(cells);
            }
            continue;
        }
        if !table.is_empty() {
            out.push(Block::Table(std::mem::take(&mut table)));
        }
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let hashes = trimmed.bytes().take_while(|b| *b == b'#').count();
        if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
            out.push(Block::Heading(hashes as u8, plain(&trimmed[hashes..])));
        } else if let Some(item) = trimmed.strip_prefix("- ") {
            out.push(Block::Item(plain(item)));
        } else if let Some(notes) = trimmed.strip_prefix("Notes: ") {
            out.push(Block::Notes(plain(notes)));
        } else {
            out.push(Block::Paragraph(plain(trimmed)));
        }
    }
    if !table.is_empty() {
        out.push(Block::Table(table));
    }
    out
}

/// Text escaped for XML and HTML.
pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// An HTML page with site navigation and a footer around the article, as intranet
/// pages have (the reader must find the main text).
pub fn write_html(meta: &Meta, blocks: &[Block]) -> String {
    let mut body = String::new();
    let mut in_list = false;
    for block in blocks {
        let is_item = matches!(block, Block::Item(_));
        if in_list && !is_item {
            body.push_str("</ul>\n");
        }
        if is_item && !in_list {
            body.push_str("<ul>\n");
        }
        in_list = is_item;
        match block {
            Block::Heading(level, text) => {
                body.push_str(&format!("<h{level}>{}</h{level}>\n", escape(text)))
            }
            Block::Paragraph(text) | Block::Notes(text) => {
                body.push_str(&format!("<p>{}</p>\n", escape(text)))
            }
            Block::Item(text) => body.push_str(&format!("<li>{}</li>\n", escape(text))),
            Block::Table(rows) => {
                body.push_str("<table>\n");
                for (i, row) in rows.iter().enumerate() {
                    let tag = if i == 0 { "th" } else { "td" };
                    let cells: String = row
                        .iter()
                        .map(|c| format!("<{tag}>{}</{tag}>", escape(c)))
                        .collect();
                    body.push_str(&format!("<tr>{cells}</tr>\n"));
                }
                body.push_str("</table>\n");
            }
        }
    }
    if in_list {
        body.push_str("</ul>\n");
    }
    let date = meta.modified.get(..10).unwrap_or("");
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title>\
         <meta name=\"author\" content=\"{author}\"><meta property=\"article:modified_time\" content=\"{modified}\"></head>\n\
         <body><nav><a href=\"/\">Intranet</a> | <a href=\"/it\">IT</a> | <a href=\"/hr\">People</a></nav>\n\
         <main><article>\n{body}</article></main>\n<footer>Last updated {date}. Internal use only.</footer></body></html>\n",
        title = escape(&meta.title),
        author = escape(&meta.author),
        modified = escape(&meta.modified),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{read, Limits};

    const SOURCE: &str = "title: Q1 2026 Board Update\nauthor: Dana Okafor\ncreated: 2026-04-14T09:30:00Z\nmodified: 2026-04-15T16:05:00Z\nvintage: current\n===\n# Q1 2026 Board Update\nThe quarter was our strongest to date.\n## Financial results\n- **Quarterly revenue: $14.2M** (prior year: $10.3M, +38% YoY)\n| Round | Date | Amount |\n|---|---|---|\n| Series C | Oct 2025 | $48M |\nNotes: mention the audit\n";

    /// Every writable format read back: the list item and the table row are units of
    /// their own under their heading, and the metadata date survives where the format
    /// keeps one.
    #[test]
    fn every_format_reads_back_with_its_structure() {
        let formats = [
            Format::Pdf,
            Format::Docx,
            Format::Pptx,
            Format::Html,
            Format::Markdown,
        ];
        for format in formats {
            let bytes = write(SOURCE, format).unwrap();
            let doc = read(&bytes, format, &Limits::default())
                .unwrap_or_else(|e| panic!("{format:?}: {e}"));
            let item = doc
                .text
                .find("Quarterly revenue: $14.2M (prior year: $10.3M, +38% YoY)");
            let item = item.unwrap_or_else(|| panic!("{format:?}: {}", doc.text));
            assert!(
                doc.text[..item].ends_with("\n\n"),
                "{format:?}: {}",
                doc.text
            );
            // A slide has one heading, its title; the rest is body text.
            let heading = if format == Format::Pptx {
                "Q1 2026 Board Update"
            } else {
                "Financial results"
            };
            let path = doc.heading_path(item);
            assert_eq!(path.last().map(String::as_str), Some(heading), "{format:?}");
            let row = "Round: Series C · Date: Oct 2025 · Amount: $48M";
            assert!(doc.text.contains(row), "{format:?}: {}", doc.text);
            assert!(!doc.text.contains("**"), "{format:?}");
            if format != Format::Markdown {
                assert_eq!(doc.date.as_deref(), Some("2026-04-15"), "{format:?}");
            }
        }
        let sheet = "title: Budget\nmodified: 2026-04-09T18:30:00Z\n===\n--- sheet: Summary ---\nMetric,Value\nFY2026 revenue target,$68M\n";
        let doc = read(
            &write(sheet, Format::Xlsx).unwrap(),
            Format::Xlsx,
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(
            doc.text,
            "Summary\n\nMetric: FY2026 revenue target · Value: $68M"
        );
    }

    #[test]
    fn bodies_become_blocks() {
        let body = "# Report\n\nSome **bold** text.\n- **Revenue: $14.2M** (prior: $10.3M)\n| Round | Amount |\n|---|---|\n| Series C | $48M |\nNotes: say it slowly";
        assert_eq!(
            blocks(body),
            [
                Block::Heading(1, "Report".into()),
                Block::Paragraph("Some bold text.".into()),
                Block::Item("Revenue: $14.2M (prior: $10.3M)".into()),
                Block::Table(vec![
                    vec!["Round".into(), "Amount".into()],
                    vec!["Series C".into(), "$48M".into()]
                ]),
                Block::Notes("say it slowly".into()),
            ]
        );
        assert_eq!(target_format("ops/plan.xlsx.txt"), Ok(Format::Xlsx));
        assert!(
            target_format("notes.txt").is_err() || target_format("notes.txt") == Ok(Format::Text)
        );
        assert_eq!(
            sheets("--- sheet: A ---\nx,\"y, z\"\n1,2\n")[0].1[0],
            ["x", "y, z"]
        );
    }
}
