//! One reader per format, behind [`read`]; what every reader shares: UTF-8 text files,
//! the date and status a finished document takes from its own text.

mod chat;
mod epub;
mod html;
mod mail;
mod markdown;
mod odf;
mod ooxml;
mod pdf;
mod sheet;
mod text;
mod transcript;
mod zipped;

use crate::dates::text_status;
use crate::{Document, Format, Limits, Part, ReadError};

/// The documents of a file that holds several ([`Format::holds_many`]), each finished
/// as [`read`] finishes one.
pub(crate) fn read_parts(
    bytes: &[u8],
    format: Format,
    limits: &Limits,
) -> Result<Vec<Part>, ReadError> {
    let mut parts = match format {
        Format::Eml => mail::read_eml(bytes, limits)?,
        Format::Mbox => mail::read_mbox(bytes, limits)?,
        Format::Slack => chat::read_slack(bytes, limits)?,
        Format::Mattermost => chat::read_mattermost(utf8_text(bytes)?, limits)?,
        _ => {
            return read(bytes, format, limits).map(|doc| {
                vec![Part {
                    name: String::new(),
                    read: Ok(doc),
                }]
            })
        }
    };
    for part in &mut parts {
        if let Ok(doc) = &mut part.read {
            finish(doc);
        }
    }
    Ok(parts)
}

pub(crate) fn read(bytes: &[u8], format: Format, limits: &Limits) -> Result<Document, ReadError> {
    let mut doc = match format {
        Format::Html => html::read(utf8_text(bytes)?, limits)?,
        Format::Markdown => markdown::read(utf8_text(bytes)?, limits)?,
        Format::Text => {
            let text = utf8_text(bytes)?;
            if transcript::carries_mail_or_chat(text) {
                transcript::read(text, limits)?
            } else {
                text::read(text, limits)?
            }
        }
        Format::Csv => sheet::read_csv(utf8_text(bytes)?, limits)?,
        Format::Pdf => pdf::read(bytes, limits)?,
        Format::Docx => ooxml::read_docx(bytes, limits)?,
        Format::Pptx => ooxml::read_pptx(bytes, limits)?,
        Format::Xlsx | Format::Ods => sheet::read_workbook(bytes, format, limits)?,
        Format::Odt | Format::Odp => odf::read(bytes, format, limits)?,
        Format::Epub => epub::read(bytes, limits)?,
        Format::Eml | Format::Mbox | Format::Slack | Format::Mattermost => {
            return crate::read(bytes, format, limits)
        }
    };
    finish(&mut doc);
    Ok(doc)
}

/// What every finished document takes from its own text: a date when its format
/// gave none or one its text contradicts ([`Document::settle_date`]), and a status the
/// text states.
fn finish(doc: &mut Document) {
    doc.settle_date();
    if let Some(status) = text_status(&doc.text) {
        doc.status = doc.status.max(status);
    }
}

/// The text of a text file: no NUL bytes in its head, valid UTF-8, a BOM dropped, not
/// blank.
pub(crate) fn utf8_text(bytes: &[u8]) -> Result<&str, ReadError> {
    let sniff = &bytes[..bytes.len().min(8192)];
    if sniff.contains(&0) {
        return Err(ReadError::Binary);
    }
    let text = std::str::from_utf8(bytes).map_err(|e| ReadError::InvalidUtf8(e.valid_up_to()))?;
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(ReadError::NoText);
    }
    Ok(text)
}
