//! PDF: the text layer, page by page (lopdf parses, pdf-extract lays out the text),
//! each page's blocks on `page=N`. Lines are grouped as in plain text (blank lines
//! separate blocks; bulleted or numbered lines are list items). The title and date come
//! from the Info dictionary (`Title`, `ModDate`, else `CreationDate`).
//!
//! An encrypted PDF that opens with the empty password is read; one that needs a real
//! password is [`ReadError::Encrypted`]; pages with no text at all (a scan) are
//! [`ReadError::NoTextLayer`].

use pdf_extract::{Document as Pdf, Object, PlainTextOutput};

use super::text::blocks_of_lines;
use crate::dates::metadata_date;
use crate::{Builder, DocStatus, Document, Format, Limits, Place, ReadError};

/// Most pages read from one PDF.
const MAX_PAGES: usize = 5_000;

pub(super) fn read(bytes: &[u8], limits: &Limits) -> Result<Document, ReadError> {
    if !bytes.starts_with(b"%PDF")
        && !bytes
            .get(..1024)
            .is_some_and(|head| contains(head, b"%PDF-"))
    {
        return Err(ReadError::malformed(Format::Pdf, "no %PDF header"));
    }
    let mut pdf = Pdf::load_mem(bytes).map_err(|e| ReadError::malformed(Format::Pdf, e))?;
    if pdf.is_encrypted() && pdf.decrypt("").is_err() {
        return Err(ReadError::Encrypted);
    }
    let pages = pdf.get_pages();
    if pages.len() > MAX_PAGES {
        return Err(ReadError::TooComplex(format!(
            "more than {MAX_PAGES} pages"
        )));
    }
    let mut builder = Builder::new(*limits);
    let (title, date) = info(&pdf);
    if let Some(title) = &title {
        builder.title(title);
    }
    let mut any_text = false;
    for &number in pages.keys() {
        let mut text = String::new();
        {
            let mut output = PlainTextOutput::new(&mut text);
            if let Err(e) = pdf_extract::output_doc_page(&pdf, &mut output, number) {
                builder.gap(format!("page {number} could not be read ({e})"));
                continue;
            }
        }
        if text.trim().is_empty() {
            continue;
        }
        any_text = true;
        builder.place(Place::Page(number));
        blocks_of_lines(&mut builder, &text)?;
    }
    if !any_text {
        return Err(ReadError::NoTextLayer);
    }
    builder.finish(date, DocStatus::Current)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Title and date from the trailer's Info dictionary.
fn info(pdf: &Pdf) -> (Option<String>, Option<String>) {
    let Some(dict) = pdf.trailer.get(b"Info").ok().and_then(|o| match o {
        Object::Reference(id) => pdf.get_dictionary(*id).ok(),
        Object::Dictionary(d) => Some(d),
        _ => None,
    }) else {
        return (None, None);
    };
    let string = |key: &[u8]| match dict.get(key).ok()? {
        Object::String(bytes, _) => Some(pdf_string(bytes)),
        _ => None,
    };
    let date = string(b"ModDate")
        .and_then(|d| pdf_date(&d))
        .or_else(|| string(b"CreationDate").and_then(|d| pdf_date(&d)));
    (string(b"Title").filter(|t| !t.trim().is_empty()), date)
}

/// A PDF text string: UTF-16BE with a BOM, else PDFDocEncoding read as Latin-1.
fn pdf_string(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        let units: Vec<u16> = rest
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        return String::from_utf16_lossy(&units);
    }
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// `D:20260414093000Z` → `2026-04-14`.
fn pdf_date(value: &str) -> Option<String> {
    let digits = value.strip_prefix("D:").unwrap_or(value);
    let date = digits.get(..8)?;
    if !date.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    metadata_date(&format!("{}-{}-{}", &date[..4], &date[4..6], &date[6..8]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::writers::{blocks, write_pdf, Meta};

    fn pdf(pages: &[&str], title: &str, modified: &str) -> Vec<u8> {
        let meta = Meta {
            title: title.into(),
            modified: modified.into(),
            ..Meta::default()
        };
        let pages: Vec<_> = pages.iter().map(|p| blocks(p)).collect();
        write_pdf(&meta, &pages).unwrap()
    }

    #[test]
    fn pages_lines_lists_and_metadata() {
        let bytes = pdf(
            &[
                "# Board update\n\nRevenue grew this quarter.\n- Quarterly revenue: $14.2M",
                "## Funding\n\nWe raised $48M in October.",
            ],
            "Q1 Board Update",
            "2026-04-14T09:30:00Z",
        );
        let doc = read(&bytes, &Limits::default()).unwrap();
        assert_eq!(doc.title, "Q1 Board Update");
        assert_eq!(doc.date.as_deref(), Some("2026-04-14"));
        let item = doc.text.find("Quarterly revenue: $14.2M").unwrap();
        assert_eq!(doc.fragment_at(item).as_deref(), Some("page=1"));
        let funding = doc.text.find("We raised $48M").unwrap();
        assert_eq!(doc.fragment_at(funding).as_deref(), Some("page=2"));
        assert!(
            doc.text.contains("\n\nQuarterly revenue: $14.2M"),
            "{}",
            doc.text
        );
    }

    #[test]
    fn bad_pdfs_are_typed_errors() {
        let limits = Limits::default();
        assert!(matches!(
            read(b"hello", &limits),
            Err(ReadError::Malformed { .. })
        ));
        let whole = pdf(&["Some text here."], "t", "2026-01-01T00:00:00Z");
        assert!(read(&whole[..whole.len() / 3], &limits).is_err());
        let blank = pdf(&[""], "t", "2026-01-01T00:00:00Z");
        assert_eq!(read(&blank, &limits), Err(ReadError::NoTextLayer));
    }
}
