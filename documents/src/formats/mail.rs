//! Email: `.eml` (RFC 5322 and MIME, parsed by Stalwart's `mail-parser`: multipart,
//! quoted-printable, base64, charsets, HTML bodies as text) and `.mbox` (every
//! message). A message is a document: its subject is the title, its `Date` the date,
//! its sender the author; the headers are not evidence — they become the heading
//! above the body (`Dana Ruiz <dana@example.com> to Ops <ops@example.com>,
//! 2026-03-04 09:12`), which a heading path shows and no quote can cut. Quoted replies
//! (`> …`, everything after "On … wrote:" or an "Original Message" line) and the
//! signature (after a `-- ` line) are kept as quoted blocks ([`Document::quoted`]):
//! archived, never new evidence.
//!
//! Every attachment in a supported format is a document of its own, named after the
//! message's (`budget.eml#budget-note.pdf`; an mbox's `inbox.mbox#message-2#plan.xlsx`),
//! read by its format's reader within the same limits; a forwarded message
//! (`message/rfc822`) is read as a message. An attachment that is not read (an image, a
//! format deepr does not read, past the limits) is a part with its reason: listed,
//! never skipped silently.

use mail_parser::{Message, MessageParser, MimeHeaders};

use super::Part;
use crate::dates::metadata_date;
use crate::{Builder, DocStatus, Document, Format, Limits, ReadError};

/// Most attachments read from one message; the rest are listed as not read.
pub const MAX_ATTACHMENTS: usize = 100;
/// Most messages read from one mbox; the rest are listed as not read.
pub const MAX_MESSAGES: usize = 5_000;
/// Deepest forwarded message (a message attached to a message …) read.
const MAX_FORWARD_DEPTH: usize = 3;

/// An `.eml` file: the message, then its attachments.
pub(super) fn read_eml(bytes: &[u8], limits: &Limits) -> Result<Vec<Part>, ReadError> {
    let message = parse(bytes)?;
    let mut reading = Reading::new(limits);
    reading.message(&message, "", 0);
    Ok(reading.parts)
}

/// An `.mbox` file: each message with its attachments, in the file's order.
pub(super) fn read_mbox(bytes: &[u8], limits: &Limits) -> Result<Vec<Part>, ReadError> {
    let messages = split_mbox(bytes);
    if messages.is_empty() {
        return Err(ReadError::malformed(
            Format::Mbox,
            "no message starts with a \"From \" line",
        ));
    }
    let mut reading = Reading::new(limits);
    for (n, raw) in messages.iter().enumerate() {
        let name = format!("message-{}", n + 1);
        if n == MAX_MESSAGES {
            reading.parts.push(Part {
                name,
                read: Err(ReadError::TooComplex(format!(
                    "{} more messages past the limit of {MAX_MESSAGES} an mbox",
                    messages.len() - MAX_MESSAGES
                ))),
            });
            break;
        }
        match parse(raw) {
            Ok(message) => reading.message(&message, &name, 0),
            Err(err) => reading.parts.push(Part {
                name,
                read: Err(err),
            }),
        }
    }
    Ok(reading.parts)
}

/// A message as `mail-parser` reads it; bytes with no header at all are no message.
fn parse(bytes: &[u8]) -> Result<Message<'_>, ReadError> {
    let message = MessageParser::default()
        .parse(bytes)
        .ok_or_else(|| ReadError::malformed(Format::Eml, "not an RFC 5322 message"))?;
    let known = message.from().is_some()
        || message.subject().is_some()
        || message.date().is_some()
        || message.to().is_some()
        || message.message_id().is_some();
    if !known {
        return Err(ReadError::malformed(
            Format::Eml,
            "no header lines (From:, Date:, Subject:) before the body",
        ));
    }
    Ok(message)
}

/// The messages of an mbox. A message starts at a `From ` line at the top of the file
/// or after a blank line, followed by a header line; an unescaped `From ` line inside a
/// body (which `mail-parser`'s iterator would take for a new message) stays in its
/// body. `>From ` lines are unescaped (mboxrd).
fn split_mbox(bytes: &[u8]) -> Vec<Vec<u8>> {
    let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    let mut messages: Vec<Vec<u8>> = Vec::new();
    let mut blank_before = true;
    for (i, line) in lines.iter().enumerate() {
        let starts = line.starts_with(b"From ")
            && blank_before
            && lines.get(i + 1).is_some_and(|next| is_header_line(next));
        blank_before = line.iter().all(u8::is_ascii_whitespace);
        if starts {
            messages.push(Vec::new());
            continue;
        }
        let Some(current) = messages.last_mut() else {
            continue;
        };
        let quoted_from = line.iter().position(|&b| b != b'>').unwrap_or(0);
        if quoted_from > 0 && line[quoted_from..].starts_with(b"From ") {
            current.extend_from_slice(&line[1..]);
        } else {
            current.extend_from_slice(line);
        }
    }
    messages
}

/// `Name: value` with a header-like name.
fn is_header_line(line: &[u8]) -> bool {
    let Some(colon) = line.iter().position(|&b| b == b':') else {
        return false;
    };
    colon > 0
        && line[..colon]
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'-')
}

/// The parts of one file read so far, and what its attachments have used of the
/// limits.
struct Reading {
    limits: Limits,
    parts: Vec<Part>,
    attachment_bytes: u64,
}

impl Reading {
    fn new(limits: &Limits) -> Self {
        Self {
            limits: *limits,
            parts: Vec::new(),
            attachment_bytes: 0,
        }
    }

    /// A message (named `name`; `""` for the file itself) and its attachments.
    fn message(&mut self, message: &Message<'_>, name: &str, depth: usize) {
        self.parts.push(Part {
            name: name.to_string(),
            read: message_document(message, &self.limits),
        });
        let mut names: Vec<String> = Vec::new();
        for (n, attachment) in message.attachments().enumerate() {
            let own = unique_name(attachment_name(attachment, n), &mut names);
            let part_name = if name.is_empty() {
                own
            } else {
                format!("{name}#{own}")
            };
            if n == MAX_ATTACHMENTS {
                let more = message.attachment_count() - MAX_ATTACHMENTS;
                self.parts.push(Part {
                    name: part_name,
                    read: Err(ReadError::TooComplex(format!(
                        "this and {} more attachments past the limit of {MAX_ATTACHMENTS} a message",
                        more - 1
                    ))),
                });
                break;
            }
            self.attachment(attachment, part_name, depth);
        }
    }

    fn attachment(&mut self, part: &mail_parser::MessagePart<'_>, name: String, depth: usize) {
        if let Some(forwarded) = part.message() {
            if depth >= MAX_FORWARD_DEPTH {
                self.parts.push(Part {
                    name,
                    read: Err(ReadError::TooComplex(format!(
                        "a message forwarded more than {MAX_FORWARD_DEPTH} levels deep"
                    ))),
                });
            } else {
                self.message(forwarded, &name, depth + 1);
            }
            return;
        }
        let bytes = part.contents();
        self.attachment_bytes += bytes.len() as u64;
        let read = if bytes.len() as u64 > self.limits.max_part_bytes {
            Err(ReadError::TooLarge(format!(
                "an attachment of {} bytes (the limit is {})",
                bytes.len(),
                self.limits.max_part_bytes
            )))
        } else if self.attachment_bytes > self.limits.max_unpacked_bytes {
            Err(ReadError::TooLarge(format!(
                "the message's attachments exceed {} bytes together",
                self.limits.max_unpacked_bytes
            )))
        } else {
            match attachment_format(part, &name) {
                Some(Format::Eml) if depth < MAX_FORWARD_DEPTH => match parse(bytes) {
                    Ok(message) => {
                        self.message(&message, &name, depth + 1);
                        return;
                    }
                    Err(err) => Err(err),
                },
                Some(format) if !format.holds_many() => super::read(bytes, format, &self.limits),
                Some(format) => Err(ReadError::Unsupported(format!(
                    " (a .{} file attached to a message; save it beside the message to read it)",
                    format.as_str()
                ))),
                // A part with no name's extension and no known type, whose bytes are
                // text (a body under a boundary that never opened): plain text.
                None if !name.contains('.') && std::str::from_utf8(bytes).is_ok() => {
                    super::read(bytes, Format::Text, &self.limits)
                }
                None => Err(ReadError::Unsupported(extension_note(&name))),
            }
        };
        self.parts.push(Part { name, read });
    }
}

/// An attachment's file name, or `attachment-N` when it states none. Characters that
/// would make a poor locator (`#`, `/`, control characters) become `_`.
fn attachment_name(part: &mail_parser::MessagePart<'_>, n: usize) -> String {
    let stated = part.attachment_name().map(str::trim).unwrap_or("");
    let clean: String = stated
        .chars()
        .map(|c| {
            if c == '#' || c == '/' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .take(120)
        .collect();
    if clean.trim().is_empty() {
        format!("attachment-{}", n + 1)
    } else {
        clean
    }
}

/// `name`, or `name-2`, `name-3` … when a part of the message already has it.
fn unique_name(name: String, taken: &mut Vec<String>) -> String {
    let mut candidate = name.clone();
    let mut n = 1;
    while taken.contains(&candidate) {
        n += 1;
        candidate = match name.rsplit_once('.') {
            Some((stem, ext)) => format!("{stem}-{n}.{ext}"),
            None => format!("{name}-{n}"),
        };
    }
    taken.push(candidate.clone());
    candidate
}

/// An attachment's format: from its name's extension, else its content type.
fn attachment_format(part: &mail_parser::MessagePart<'_>, name: &str) -> Option<Format> {
    let by_name = name
        .rsplit_once('.')
        .and_then(|(_, ext)| Format::from_extension(ext));
    by_name.or_else(|| {
        // A part that states no type is plain text (RFC 2045).
        let Some(content_type) = part.content_type() else {
            return Some(Format::Text);
        };
        let subtype = content_type.subtype().unwrap_or("").to_ascii_lowercase();
        match (
            content_type.ctype().to_ascii_lowercase().as_str(),
            subtype.as_str(),
        ) {
            ("application", "pdf") => Some(Format::Pdf),
            ("text", "html") => Some(Format::Html),
            ("text", "csv") => Some(Format::Csv),
            ("text", "markdown") => Some(Format::Markdown),
            ("text", _) => Some(Format::Text),
            ("message", "rfc822") => Some(Format::Eml),
            _ => None,
        }
    })
}

/// Why an attachment with this name is not read: its extension.
fn extension_note(name: &str) -> String {
    match name.rsplit_once('.') {
        Some((_, ext)) => format!(" (.{ext})"),
        None => " (an attachment with no extension or known content type)".to_string(),
    }
}

/// A message's own document: its byline heading, then its body.
fn message_document(message: &Message<'_>, limits: &Limits) -> Result<Document, ReadError> {
    let mut builder = Builder::new(*limits);
    let subject = message.subject().map(str::trim).unwrap_or("");
    if !subject.is_empty() {
        builder.title(subject);
        builder.heading(1, subject)?;
    }
    let author = message.from().and_then(|a| a.first()).map(address);
    let date = message
        .date()
        .and_then(|d| metadata_date(&format!("{:04}-{:02}-{:02}", d.year, d.month, d.day)));
    let byline = byline(message, author.as_deref(), date.as_deref());
    if !byline.is_empty() {
        builder.byline(2, &byline)?;
    }
    let mut any_body = false;
    for n in 0..message.text_body_count().max(1) {
        if let Some(body) = message.body_text(n) {
            any_body |= !body.trim().is_empty();
            body_blocks(&mut builder, &body)?;
        }
    }
    if !any_body && subject.is_empty() {
        return Err(ReadError::NoText);
    }
    if !any_body {
        builder.gap("the message has no text body".into());
    }
    let mut doc = builder.finish(date, DocStatus::Current)?;
    doc.author = author;
    Ok(doc)
}

/// `Dana Ruiz <dana@example.com>`, or whichever of the two the address has.
fn address(addr: &mail_parser::Addr<'_>) -> String {
    match (addr.name().map(str::trim), addr.address()) {
        (Some(name), Some(mail)) if !name.is_empty() => format!("{name} <{mail}>"),
        (Some(name), None) => name.to_string(),
        (_, Some(mail)) => mail.to_string(),
        (_, None) => String::new(),
    }
}

/// Who wrote to whom, when: `Dana Ruiz <dana@example.com> to Ops <ops@example.com>,
/// 2026-03-04 09:12`. Never ends like a sentence, so it is never a quote.
fn byline(message: &Message<'_>, author: Option<&str>, date: Option<&str>) -> String {
    let mut line = author.unwrap_or("").to_string();
    let to: Vec<String> = message
        .to()
        .map(|a| a.iter().take(5).map(address).collect())
        .unwrap_or_default();
    if !to.is_empty() {
        line.push_str(if line.is_empty() { "To " } else { " to " });
        line.push_str(&to.join(", "));
    }
    if let Some(date) = date {
        let time = message
            .date()
            .map(|d| format!(" {:02}:{:02}", d.hour, d.minute))
            .unwrap_or_default();
        if !line.is_empty() {
            line.push_str(", ");
        }
        line.push_str(date);
        line.push_str(&time);
    }
    line.trim_end_matches(['.', '!', '?']).to_string()
}

/// Where a body's own words end: the line that opens a quoted reply or a signature.
fn is_quote_opener(line: &str) -> bool {
    let trimmed = line.trim();
    let lower = trimmed.to_lowercase();
    trimmed == "--"
        || line.trim_end_matches(['\r', '\n']) == "-- "
        || (lower.starts_with("on ") && lower.ends_with("wrote:"))
        || (lower.starts_with("-----") && lower.contains("original message"))
        || lower.starts_with("-----forwarded message")
        || lower.starts_with("---------- forwarded message")
}

/// A body's paragraphs: its own words read as plain text (lists, tables, paragraphs);
/// `>` lines, and everything from a reply's or signature's opening line on, as
/// quoted blocks.
fn body_blocks(builder: &mut Builder, body: &str) -> Result<(), ReadError> {
    let mut own = String::new();
    let mut quoted: Vec<String> = Vec::new();
    let mut rest_quoted = false;
    let mut paragraph = String::new();
    for line in body.lines() {
        rest_quoted |= is_quote_opener(line);
        let is_quoted = rest_quoted || line.trim_start().starts_with('>');
        if !is_quoted {
            flush_quoted(builder, &mut quoted, &mut paragraph)?;
            own.push_str(line);
            own.push('\n');
            continue;
        }
        flush_own(builder, &mut own)?;
        let stripped = line.trim_start().trim_start_matches(['>', ' ']);
        if stripped.trim().is_empty() {
            if !paragraph.trim().is_empty() {
                quoted.push(std::mem::take(&mut paragraph));
            }
        } else {
            paragraph.push_str(stripped);
            paragraph.push('\n');
        }
    }
    flush_own(builder, &mut own)?;
    flush_quoted(builder, &mut quoted, &mut paragraph)
}

/// A body's own words: paragraphs (lines joined up to a blank line) and list items.
/// A short line alone ("Dana", "Thanks") is a paragraph, never a heading: a message
/// has no headings of its own.
fn flush_own(builder: &mut Builder, own: &mut String) -> Result<(), ReadError> {
    let mut paragraph: Vec<&str> = Vec::new();
    for line in own.lines().chain(std::iter::once("")) {
        if let Some((marker, item)) = super::text::list_marker(line) {
            builder.paragraph(&paragraph.join(" "))?;
            paragraph.clear();
            builder.list_item(marker, item)?;
        } else if line.trim().is_empty() {
            builder.paragraph(&paragraph.join(" "))?;
            paragraph.clear();
        } else {
            paragraph.push(line);
        }
    }
    own.clear();
    Ok(())
}

fn flush_quoted(
    builder: &mut Builder,
    quoted: &mut Vec<String>,
    paragraph: &mut String,
) -> Result<(), ReadError> {
    if !paragraph.trim().is_empty() {
        quoted.push(std::mem::take(paragraph));
    }
    paragraph.clear();
    for block in quoted.drain(..) {
        builder.quoted_paragraph(&block)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(parts: &[Part]) -> Vec<&str> {
        parts.iter().map(|p| p.name.as_str()).collect()
    }

    const ALTERNATIVE: &str = "From: Dana Ruiz <dana@harborfreight.example>\r\nTo: Ops Team <ops@harborfreight.example>\r\nSubject: Yard decision\r\nDate: Wed, 4 Mar 2026 09:12:00 +0100\r\nMIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nWe will lease the Harbor Street yard from 1 April for =E2=82=AC18,500 a mo=\r\nnth.\r\n\r\nOn Tue, 3 Mar 2026, Sam Lee wrote:\r\n> Pier 9 costs more.\r\n--b1\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>We will lease the Harbor Street yard.</p>\r\n--b1--\r\n";

    #[test]
    fn a_quoted_printable_message_is_a_document_with_its_author_and_date() {
        let parts = read_eml(ALTERNATIVE.as_bytes(), &Limits::default()).unwrap();
        assert_eq!(names(&parts), [""]);
        let doc = parts[0].read.as_ref().unwrap();
        assert_eq!(doc.title, "Yard decision");
        assert_eq!(doc.date.as_deref(), Some("2026-03-04"));
        assert_eq!(
            doc.author.as_deref(),
            Some("Dana Ruiz <dana@harborfreight.example>")
        );
        let own = "We will lease the Harbor Street yard from 1 April for €18,500 a month.";
        let at = doc.text.find(own).expect("the soft line break is joined");
        assert!(doc.quoted.iter().all(|(s, e)| !(*s..*e).contains(&at)));
        let quoted = doc.text.find("Pier 9 costs more.").unwrap();
        assert!(doc.quoted.iter().any(|(s, e)| (*s..*e).contains(&quoted)));
        assert!(!doc.text.contains("Content-Transfer-Encoding"));
        assert!(!doc.text.contains("=E2"));
        let byline = doc.text.find("Dana Ruiz <dana@").unwrap();
        assert!(doc
            .marks
            .iter()
            .any(|m| m.at == byline && m.heading == Some(2)));
        assert_eq!(doc.bylines, [byline]);
        // The sign-off alone on its line ("Dana") is no heading.
        let headings = doc.marks.iter().filter(|m| m.heading.is_some()).count();
        assert_eq!(headings, 2, "{}", doc.text);
    }

    /// A message with a PDF attachment in base64 and a forwarded message holding a
    /// CSV: three documents, each named after the message.
    fn with_attachments() -> String {
        let pdf = crate::writers::write_pdf(
            &crate::writers::Meta::default(),
            &[crate::writers::blocks(
                "The yard budget is $222,000 a year.",
            )],
        )
        .unwrap();
        let forwarded = "From: Sam Lee <sam@harborfreight.example>\r\nSubject: Bays\r\nDate: Mon, 2 Mar 2026 08:00:00 +0000\r\nContent-Type: multipart/mixed; boundary=\"in\"\r\n\r\n--in\r\nContent-Type: text/plain\r\n\r\nBay counts attached.\r\n--in\r\nContent-Type: text/csv; name=\"bays.csv\"\r\nContent-Disposition: attachment; filename=\"bays.csv\"\r\n\r\nYard,Bays\r\nHarbor Street,24\r\nPier 9,18\r\n--in--\r\n";
        format!(
            "From: Dana Ruiz <dana@harborfreight.example>\r\nSubject: Budget\r\nDate: Wed, 4 Mar 2026 09:12:00 +0000\r\nContent-Type: multipart/mixed; boundary=\"out\"\r\n\r\n--out\r\nContent-Type: text/plain\r\n\r\nBudget note attached.\r\n\r\n-- \r\nDana Ruiz, Operations\r\n--out\r\nContent-Type: application/pdf; name=\"budget-note.pdf\"\r\nContent-Disposition: attachment; filename=\"budget-note.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n{}\r\n--out\r\nContent-Type: image/png; name=\"logo.png\"\r\nContent-Disposition: attachment; filename=\"logo.png\"\r\nContent-Transfer-Encoding: base64\r\n\r\niVBORw0KGgo=\r\n--out\r\nContent-Type: message/rfc822\r\nContent-Disposition: attachment; filename=\"fwd.eml\"\r\n\r\n{forwarded}\r\n--out--\r\n",
            crate::writers::base64(&pdf)
        )
    }

    #[test]
    fn attachments_are_documents_of_their_own_and_an_image_is_listed() {
        let parts = read_eml(with_attachments().as_bytes(), &Limits::default()).unwrap();
        assert_eq!(
            names(&parts),
            [
                "",
                "budget-note.pdf",
                "logo.png",
                "fwd.eml",
                "fwd.eml#bays.csv"
            ]
        );
        let pdf = parts[1].read.as_ref().unwrap();
        assert!(
            pdf.text.contains("The yard budget is $222,000 a year."),
            "{}",
            pdf.text
        );
        assert!(matches!(parts[2].read, Err(ReadError::Unsupported(_))));
        let forwarded = parts[3].read.as_ref().unwrap();
        assert_eq!(
            forwarded.author.as_deref(),
            Some("Sam Lee <sam@harborfreight.example>")
        );
        let csv = parts[4].read.as_ref().unwrap();
        assert!(
            csv.text.contains("Yard: Harbor Street · Bays: 24"),
            "{}",
            csv.text
        );
        let message = parts[0].read.as_ref().unwrap();
        let signature = message.text.find("Dana Ruiz, Operations").unwrap();
        assert!(message
            .quoted
            .iter()
            .any(|(s, e)| (*s..*e).contains(&signature)));
    }

    #[test]
    fn an_mbox_keeps_its_thread_in_order_and_a_from_line_in_a_body() {
        let mbox = "From dana@x Wed Mar  4 09:12:00 2026\nFrom: Dana Ruiz <dana@x>\nSubject: Yard\nDate: Wed, 4 Mar 2026 09:12:00 +0000\n\nWe pick Harbor Street.\nFrom there the trucks reach the ring road in 6 minutes.\n\nFrom sam@x Wed Mar  4 10:00:00 2026\nFrom: Sam Lee <sam@x>\nSubject: Re: Yard\nDate: Wed, 4 Mar 2026 10:00:00 +0000\n\nAgreed.\n>From the numbers, it is cheaper.\n\nFrom lee@x Thu Mar  5 10:00:00 2026\nFrom: Lee Park <lee@x>\nSubject: Re: Yard\nDate: Thu, 5 Mar 2026 10:00:00 +0000\n\nSigned.\n";
        let parts = read_mbox(mbox.as_bytes(), &Limits::default()).unwrap();
        assert_eq!(names(&parts), ["message-1", "message-2", "message-3"]);
        let first = parts[0].read.as_ref().unwrap();
        assert!(first
            .text
            .contains("From there the trucks reach the ring road in 6 minutes."));
        let authors: Vec<&str> = parts
            .iter()
            .filter_map(|p| p.read.as_ref().ok()?.author.as_deref())
            .collect();
        assert_eq!(
            authors,
            ["Dana Ruiz <dana@x>", "Sam Lee <sam@x>", "Lee Park <lee@x>"]
        );
        let second = parts[1].read.as_ref().unwrap();
        assert!(second.text.contains("From the numbers"), "{}", second.text);
    }

    /// Hostile messages end bounded: a deep nest of multiparts, ten thousand
    /// attachments, a malformed boundary, a huge base64 part past the limits.
    #[test]
    fn hostile_messages_are_bounded_and_say_why() {
        let limits = Limits::tight();
        let mut nested = String::from("From: a@x\r\nSubject: Nest\r\n");
        for n in 0..5_000 {
            nested.push_str(&format!(
                "Content-Type: multipart/mixed; boundary=\"b{n}\"\r\n\r\n--b{n}\r\n"
            ));
        }
        nested.push_str("Content-Type: text/plain\r\n\r\nDeep inside.\r\n");
        let _ = read_eml(nested.as_bytes(), &limits);
        let mut many = String::from("From: a@x\r\nSubject: Many\r\nContent-Type: multipart/mixed; boundary=\"m\"\r\n\r\n--m\r\nContent-Type: text/plain\r\n\r\nSee the files.\r\n");
        for n in 0..10_000 {
            many.push_str(&format!("--m\r\nContent-Type: text/plain; name=\"f{n}.txt\"\r\nContent-Disposition: attachment; filename=\"f{n}.txt\"\r\n\r\nFile {n} text.\r\n"));
        }
        many.push_str("--m--\r\n");
        let parts = read_eml(many.as_bytes(), &limits).unwrap();
        assert_eq!(parts.len(), 1 + MAX_ATTACHMENTS + 1);
        assert!(matches!(
            parts.last().map(|p| &p.read),
            Some(Err(ReadError::TooComplex(_)))
        ));
        let broken = "From: a@x\r\nSubject: Broken\r\nContent-Type: multipart/mixed; boundary=\"never\"\r\n\r\n--other\r\nContent-Type: text/plain\r\n\r\nStill text.\r\n";
        let parts = read_eml(broken.as_bytes(), &limits).unwrap();
        assert!(parts[0].read.is_ok());
        let big = format!(
            "From: a@x\r\nSubject: Big\r\nContent-Type: multipart/mixed; boundary=\"g\"\r\n\r\n--g\r\nContent-Type: text/plain\r\n\r\nBig file.\r\n--g\r\nContent-Type: application/pdf; name=\"big.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n{}\r\n--g--\r\n",
            "QUFB".repeat(2_000_000)
        );
        let parts = read_eml(big.as_bytes(), &limits).unwrap();
        assert!(
            matches!(parts[1].read, Err(ReadError::TooLarge(_))),
            "{:?}",
            parts[1].read
        );
        assert!(read_eml(b"just some words, no headers", &limits).is_err());
    }
}
