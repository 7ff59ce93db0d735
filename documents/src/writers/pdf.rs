//! A PDF with a real text layer (lopdf, through pdf-extract's re-export): Helvetica,
//! one line per `Tj`, paragraphs wrapped at [`WRAP`] characters, a blank line after
//! each block, list items as `- ` lines, table rows as lines of their cells set apart by
//! spaces (a PDF keeps no table structure), and an Info dictionary with the title and dates.

use pdf_extract::content::{Content, Operation};
use pdf_extract::{dictionary, Document as Pdf, Object, Stream, StringFormat};

use super::{Block, Meta, WriteError};

/// Characters per line before a paragraph wraps.
const WRAP: usize = 92;

/// Lines of one page: each block's lines, then a blank line.
fn page_lines(blocks: &[Block]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_list = false;
    for block in blocks {
        // A list ends with a blank line, as typeset lists are spaced from what follows.
        if in_list && !matches!(block, Block::Item(_)) {
            lines.push(String::new());
        }
        in_list = matches!(block, Block::Item(_));
        match block {
            Block::Heading(_, text) => lines.push(text.clone()),
            Block::Paragraph(text) => lines.extend(wrap(text, "")),
            Block::Item(text) => {
                lines.extend(wrap(&format!("- {text}"), "  "));
                continue;
            }
            Block::Table(rows) => lines.extend(rows.iter().map(|row| row.join("    "))),
            Block::Notes(_) => continue,
        }
        lines.push(String::new());
    }
    lines
}

/// `text` wrapped at word boundaries; continuation lines start with `indent`.
fn wrap(text: &str, indent: &str) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let Some(line) = lines.last_mut() else { break };
        if !line.is_empty() && line.len() + word.len() + 1 > WRAP {
            lines.push(format!("{indent}{word}"));
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

/// Latin-1 bytes of a line (WinAnsi covers them; anything else becomes `?`).
fn latin1(line: &str) -> Vec<u8> {
    line.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

/// `2026-04-14T09:30:00Z` → `D:20260414093000Z`.
fn pdf_date(rfc3339: &str) -> String {
    let digits: String = rfc3339
        .chars()
        .filter(char::is_ascii_digit)
        .take(14)
        .collect();
    format!("D:{digits}Z")
}

/// A PDF of `pages`, each a list of blocks.
pub fn write_pdf(meta: &Meta, pages: &[Vec<Block>]) -> Result<Vec<u8>, WriteError> {
    let mut doc = Pdf::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let resources_id = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font_id } });
    let mut kids: Vec<Object> = Vec::new();
    for page in pages {
        let mut operations = vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 10.into()]),
            Operation::new("TL", vec![13.into()]),
            Operation::new("Td", vec![40.into(), 800.into()]),
        ];
        for line in page_lines(page) {
            operations.push(Operation::new(
                "Tj",
                vec![Object::String(latin1(&line), StringFormat::Literal)],
            ));
            operations.push(Operation::new("T*", vec![]));
        }
        operations.push(Operation::new("ET", vec![]));
        let content = Content { operations }
            .encode()
            .map_err(|e| WriteError::Encoding("pdf", e.to_string()))?;
        let content_id = doc.add_object(Stream::new(dictionary! {}, content));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 842.into()],
        });
        kids.push(page_id.into());
    }
    let count = i64::try_from(kids.len()).unwrap_or(i64::MAX);
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids, "Count" => count, "Resources" => resources_id,
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    let info_id = doc.add_object(dictionary! {
        "Title" => Object::String(latin1(&meta.title), StringFormat::Literal),
        "Author" => Object::String(latin1(&meta.author), StringFormat::Literal),
        "CreationDate" => Object::string_literal(pdf_date(&meta.created)),
        "ModDate" => Object::string_literal(pdf_date(&meta.modified)),
    });
    doc.trailer.set("Info", info_id);
    let mut out = Vec::new();
    doc.save_to(&mut out)
        .map_err(|e| WriteError::Encoding("pdf", e.to_string()))?;
    Ok(out)
}
