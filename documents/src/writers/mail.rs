//! Mail and chat test files from text sources: an `.eml` from a header of
//! `from`/`to`/`subject`/`date`/`encoding`/`alternative` lines and a body, each
//! `--- attachment: NAME ---` section after the body an attachment written from its
//! own source (any format, a forwarded `.eml` included, whose own attachments are
//! `--- attachment+: NAME ---`, one `+` a level); a Slack export (`.zip`) from
//! `--- file: PATH ---` sections; an mbox or a Mattermost JSONL export as the body
//! itself (both are text).

use super::{office::zip, target_format, write, WriteError};
use crate::Format;

const BOUNDARY_MIXED: &str = "deepr-mixed-7f3a";
const BOUNDARY_ALTERNATIVE: &str = "deepr-alt-19c2";

/// An `.eml` message from its source.
pub fn write_eml(text: &str) -> Result<Vec<u8>, WriteError> {
    let (header, rest) = text.split_once("\n===\n").ok_or(WriteError::NoHeader)?;
    let mut sections = rest.split("\n--- attachment: ");
    let body = sections.next().unwrap_or("").trim();
    let value = |key: &str| {
        header.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let encoding = value("encoding").unwrap_or_else(|| "7bit".into());
    let mut out = String::new();
    for (key, name) in [
        ("from", "From"),
        ("to", "To"),
        ("subject", "Subject"),
        ("date", "Date"),
    ] {
        if let Some(v) = value(key) {
            out.push_str(&format!("{name}: {v}\r\n"));
        }
    }
    out.push_str("MIME-Version: 1.0\r\n");
    out.push_str(&format!(
        "Content-Type: multipart/mixed; boundary=\"{BOUNDARY_MIXED}\"\r\n\r\n"
    ));
    out.push_str(&format!("--{BOUNDARY_MIXED}\r\n"));
    if value("alternative").is_some() {
        out.push_str(&format!(
            "Content-Type: multipart/alternative; boundary=\"{BOUNDARY_ALTERNATIVE}\"\r\n\r\n--{BOUNDARY_ALTERNATIVE}\r\n"
        ));
        out.push_str(&text_part("text/plain", body, &encoding));
        out.push_str(&format!("--{BOUNDARY_ALTERNATIVE}\r\n"));
        let html = format!(
            "<html><body><p>{}</p></body></html>",
            super::escape(body).replace("\n\n", "</p><p>")
        );
        out.push_str(&text_part("text/html", &html, &encoding));
        out.push_str(&format!("--{BOUNDARY_ALTERNATIVE}--\r\n"));
    } else {
        out.push_str(&text_part("text/plain", body, &encoding));
    }
    for section in sections {
        let (name, source) = section.split_once(" ---\n").ok_or(WriteError::NoHeader)?;
        out.push_str(&format!("--{BOUNDARY_MIXED}\r\n"));
        out.push_str(&attachment(name.trim(), source)?);
    }
    out.push_str(&format!("--{BOUNDARY_MIXED}--\r\n"));
    Ok(out.into_bytes())
}

/// A text part in `encoding` (`quoted-printable`, `base64` or `7bit`), UTF-8.
fn text_part(content_type: &str, text: &str, encoding: &str) -> String {
    let crlf = text.replace('\n', "\r\n");
    let encoded = match encoding {
        "quoted-printable" => quoted_printable(&crlf),
        "base64" => base64(crlf.as_bytes()),
        _ => crlf,
    };
    format!(
        "Content-Type: {content_type}; charset=\"utf-8\"\r\nContent-Transfer-Encoding: {encoding}\r\n\r\n{encoded}\r\n"
    )
}

/// An attachment written from its source in the format its name asks for: a forwarded
/// `.eml` as `message/rfc822`, anything else base64.
fn attachment(name: &str, source: &str) -> Result<String, WriteError> {
    let format = target_format(&format!("{name}.txt"))?;
    // A forwarded message's own attachments are marked one `+` deeper.
    let source = source.replace("\n--- attachment+", "\n--- attachment");
    let bytes = write(&source, format)?;
    if format == Format::Eml {
        return Ok(format!(
            "Content-Type: message/rfc822\r\nContent-Disposition: attachment; filename=\"{name}\"\r\n\r\n{}\r\n",
            String::from_utf8_lossy(&bytes)
        ));
    }
    Ok(format!(
        "Content-Type: application/octet-stream; name=\"{name}\"\r\nContent-Disposition: attachment; filename=\"{name}\"\r\nContent-Transfer-Encoding: base64\r\n\r\n{}\r\n",
        base64(&bytes)
    ))
}

/// A Slack export: each `--- file: PATH ---` section a file of the zip.
pub fn write_slack(body: &str) -> Result<Vec<u8>, WriteError> {
    let mut files = Vec::new();
    for section in body.split("--- file: ").skip(1) {
        let (path, text) = section.split_once(" ---\n").ok_or(WriteError::NoHeader)?;
        files.push((path.trim().to_string(), text.trim().to_string()));
    }
    zip(&files)
}

/// Quoted-printable (RFC 2045): bytes outside printable ASCII and `=` escaped, lines
/// kept under 76 characters with soft breaks.
pub fn quoted_printable(text: &str) -> String {
    let mut out = String::new();
    for (n, line) in text.split("\r\n").enumerate() {
        if n > 0 {
            out.push_str("\r\n");
        }
        let mut width = 0;
        for byte in line.bytes() {
            let piece = if (b' '..=b'~').contains(&byte) && byte != b'=' {
                char::from(byte).to_string()
            } else {
                format!("={byte:02X}")
            };
            if width + piece.len() > 75 {
                out.push_str("=\r\n");
                width = 0;
            }
            width += piece.len();
            out.push_str(&piece);
        }
    }
    out
}

/// Base64 (RFC 4648) in lines of 76 characters.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for (n, chunk) in bytes.chunks(3).enumerate() {
        if n > 0 && n % 19 == 0 {
            out.push_str("\r\n");
        }
        let value = chunk
            .iter()
            .enumerate()
            .fold(0u32, |v, (i, b)| v | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(value >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
