//! A PDF's bytes made safe for lopdf to load. lopdf inflates some streams while it
//! loads, with no cap: cross-reference streams (to find the objects), object streams
//! (`/Type /ObjStm`, to take out the objects they hold; in an encrypted file any stream
//! the cross-reference table names as a container), and a container again for every
//! stream whose `/Length` is an object inside it. So before it loads, every stream's
//! filter names and `/ObjStm` type are renamed in place (`/FlateDecode` →
//! `/FlateDecod_`: same length, so every offset holds), which lopdf cannot decode — except
//! the cross-reference streams, which it must decode to load at all and which are
//! checked here first: one that inflates past `Limits::max_part_bytes` refuses the file.
//! The reader decodes the renamed streams itself, within its limits (`streams`).
//!
//! The scan does not parse the file: it takes every `>> stream` and renames names in
//! all the bytes since the previous stream's end, so a dictionary it misreads can only
//! leave a stream undecodable to lopdf, never decodable without a cap.

use super::decode::{chain_of_names, decode, Chain, Predictor};
use crate::{human_bytes, Format, Limits, ReadError};

/// Names renamed in every stream dictionary but a cross-reference stream's, each with
/// its last character made `_`.
const RENAMED: [&[u8]; 4] = [
    b"/FlateDecode",
    b"/LZWDecode",
    b"/ASCII85Decode",
    b"/ObjStm",
];

/// The object-stream type after renaming.
pub(super) const RENAMED_OBJECT_STREAM: &[u8] = b"ObjSt_";

/// `bytes` with every stream but the cross-reference streams renamed (see the module
/// docs), after checking each cross-reference stream.
pub(super) fn prepare(bytes: &[u8], limits: &Limits) -> Result<Vec<u8>, ReadError> {
    let mut out = bytes.to_vec();
    let mut from = 0;
    let mut at = 0;
    while let Some(keyword) = find(&out, b"stream", at) {
        at = keyword + b"stream".len();
        let Some(data) = data_start(&out, keyword) else {
            continue;
        };
        let header = rfind(&out[from..keyword], b"obj").map_or(from, |i| from + i + 3);
        let dict = header..keyword;
        if has_name(&out[dict.clone()], b"XRef") {
            check_xref(&out[dict.clone()], &out[data..], limits)?;
            rename(&mut out[from..header]);
        } else {
            rename(&mut out[from..keyword]);
        }
        let end = data_end(&out, &out[dict], data);
        at = end.max(at);
        from = at;
    }
    // What follows the last stream found (a stream this scan did not take for one
    // included) is renamed too.
    rename(&mut out[from..]);
    Ok(out)
}

/// Where the data of the stream whose `stream` keyword is at `keyword` starts: after
/// the keyword, optional spaces and one end of line — if a dictionary's `>>` (and white
/// space) comes before it (which `endstream` never has).
fn data_start(bytes: &[u8], keyword: usize) -> Option<usize> {
    let before = bytes[..keyword]
        .iter()
        .rposition(|b| !b.is_ascii_whitespace() && *b != 0)?;
    if before == 0 || &bytes[before - 1..=before] != b">>" {
        return None;
    }
    let mut at = keyword + b"stream".len();
    while matches!(bytes.get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    match (bytes.get(at), bytes.get(at + 1)) {
        (Some(b'\r'), Some(b'\n')) => Some(at + 2),
        (Some(b'\r' | b'\n'), _) => Some(at + 1),
        _ => None,
    }
}

/// Where the stream's data ends: its direct `/Length` if `endstream` follows there,
/// else the next `endstream`, else the file's end.
fn data_end(bytes: &[u8], dict: &[u8], data: usize) -> usize {
    let by_length = direct_length(dict)
        .and_then(|length| data.checked_add(length))
        .filter(|end| {
            let rest = bytes.get(*end..).unwrap_or(&[]);
            let skip = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
            rest[skip..].starts_with(b"endstream")
        });
    by_length
        .or_else(|| find(bytes, b"endstream", data))
        .unwrap_or(bytes.len())
}

/// A dictionary's `/Length` when it is a number, not a reference (`5 0 R`).
fn direct_length(dict: &[u8]) -> Option<usize> {
    let at = rfind_name(dict, b"Length")?;
    let tokens: Vec<&[u8]> = dict[at..]
        .split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
        .take(4)
        .collect();
    let value = tokens.get(1)?;
    if tokens.get(3).is_some_and(|t| t.starts_with(b"R")) {
        return None;
    }
    let digits: Vec<u8> = value
        .iter()
        .copied()
        .take_while(u8::is_ascii_digit)
        .collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

/// Every renamed name in `bytes` made undecodable (see [`RENAMED`]).
fn rename(bytes: &mut [u8]) {
    for name in RENAMED {
        let mut at = 0;
        while let Some(found) = find(bytes, name, at) {
            let end = found + name.len();
            if bytes.get(end).is_none_or(|b| delimits(*b)) {
                bytes[end - 1] = b'_';
            }
            at = end;
        }
    }
}

/// A cross-reference stream lopdf will inflate while loading: refused if it inflates
/// past the part limit, or if its predictor's rows would be longer than it (lopdf
/// allocates a row before reading one).
fn check_xref(dict: &[u8], data: &[u8], limits: &Limits) -> Result<(), ReadError> {
    let Chain::Known(filters) = chain_of_names(filter_names(dict)) else {
        return Ok(());
    };
    let cap = usize::try_from(limits.max_part_bytes).unwrap_or(usize::MAX);
    let Some(decoded) = decode(data, &filters, None, cap) else {
        return Ok(());
    };
    if decoded.cut {
        return Err(ReadError::TooLarge(format!(
            "its cross-reference stream inflates past {}",
            human_bytes(limits.max_part_bytes)
        )));
    }
    let predictor = Predictor {
        colors: largest_int_after(dict, b"Colors").unwrap_or(1),
        bits: largest_int_after(dict, b"BitsPerComponent").unwrap_or(8),
        columns: largest_int_after(dict, b"Columns").unwrap_or(1),
    };
    let rows_fit = predictor
        .row()
        .is_some_and(|(_, row)| row <= decoded.bytes.len().max(1 << 16));
    if has_name(dict, b"Predictor") && !rows_fit {
        return Err(ReadError::malformed(
            Format::Pdf,
            "its cross-reference stream's predictor rows are longer than the stream",
        ));
    }
    Ok(())
}

/// The names of a dictionary's last `/Filter` entry: one name or an array of names.
fn filter_names(dict: &[u8]) -> Vec<&[u8]> {
    let Some(at) = rfind_name(dict, b"Filter") else {
        return Vec::new();
    };
    let rest = &dict[at + b"/Filter".len()..];
    let rest = &rest[rest.iter().take_while(|b| b.is_ascii_whitespace()).count()..];
    let value = match rest.first() {
        Some(b'[') => &rest[1..rest.iter().position(|b| *b == b']').unwrap_or(rest.len())],
        Some(b'/') => {
            let end = rest[1..]
                .iter()
                .position(|b| delimits(*b))
                .map_or(rest.len(), |e| e + 1);
            &rest[..end]
        }
        _ => return Vec::new(),
    };
    value
        .split(|b| *b == b'/' || b.is_ascii_whitespace())
        .filter(|name| !name.is_empty())
        .collect()
}

/// The largest integer after any `/name` token in `dict`.
fn largest_int_after(dict: &[u8], name: &[u8]) -> Option<i64> {
    let token = [b"/", name].concat();
    let mut largest = None;
    let mut at = 0;
    while let Some(found) = find(dict, &token, at) {
        at = found + token.len();
        if !dict.get(at).is_none_or(|b| delimits(*b)) {
            continue;
        }
        let rest = &dict[at..];
        let rest = &rest[rest.iter().take_while(|b| b.is_ascii_whitespace()).count()..];
        let digits: Vec<u8> = rest
            .iter()
            .copied()
            .take_while(u8::is_ascii_digit)
            .collect();
        let value = std::str::from_utf8(&digits)
            .ok()
            .and_then(|d| d.parse::<i64>().ok())
            .unwrap_or(if digits.is_empty() { 0 } else { i64::MAX });
        largest = largest.max(Some(value));
    }
    largest
}

/// Whether `dict` holds the name token `/name`.
fn has_name(dict: &[u8], name: &[u8]) -> bool {
    rfind_name(dict, name).is_some()
}

/// Where the last `/name` token (not a longer name that starts with it) is in `dict`.
fn rfind_name(dict: &[u8], name: &[u8]) -> Option<usize> {
    let token = [b"/", name].concat();
    let mut end = dict.len();
    while let Some(at) = rfind(&dict[..end], &token) {
        if dict.get(at + token.len()).is_none_or(|b| delimits(*b)) {
            return Some(at);
        }
        end = at;
    }
    None
}

/// White space or a PDF delimiter: what ends a name.
fn delimits(byte: u8) -> bool {
    byte.is_ascii_whitespace() || b"/[]<>(){}%\0".contains(&byte)
}

/// The first `needle` in `haystack` at or after `from`.
fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let first = *needle.first()?;
    let mut at = from;
    while at + needle.len() <= haystack.len() {
        let next = haystack[at..].iter().position(|b| *b == first)?;
        at += next;
        if haystack.get(at..at + needle.len()) == Some(needle) {
            return Some(at);
        }
        at += 1;
    }
    None
}

/// The last `needle` in `haystack`.
fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_renamed_in_place_and_cross_reference_streams_kept() {
        let pdf = b"%PDF-1.5\n1 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Filter [/ASCII85Decode /FlateDecode] /Length 3 >>\nstream\nabc\nendstream\nendobj\n2 0 obj\n<< /Type /XRef /Filter /FlateDecode /Length 0 >>\nstream\n\nendstream\nendobj\n3 0 obj\n<</Filter/FlateDecode/Length 2>>stream\r\nxy\r\nendstream\nendobj\n";
        let out = prepare(pdf, &Limits::default()).unwrap();
        assert_eq!(out.len(), pdf.len());
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("/Type /ObjSt_ /N 1 /First 4 /Filter [/ASCII85Decod_ /FlateDecod_]"),
            "{text}"
        );
        assert!(
            text.contains("<< /Type /XRef /Filter /FlateDecode /Length 0 >>"),
            "{text}"
        );
        assert!(
            text.contains("<</Filter/FlateDecod_/Length 2>>stream"),
            "{text}"
        );
        // Names that only start with a renamed one stay as they are.
        let mut longer = b"<< /FlateDecodeX /ObjStmY >>".to_vec();
        rename(&mut longer);
        assert_eq!(longer, b"<< /FlateDecodeX /ObjStmY >>");
    }

    #[test]
    fn dictionaries_are_read_for_lengths_and_filters() {
        assert_eq!(
            direct_length(b"<< /Length 120 /Filter /FlateDecode >>"),
            Some(120)
        );
        assert_eq!(direct_length(b"<< /Length 12 0 R >>"), None);
        assert_eq!(
            filter_names(b"<< /Filter [ /A85 /Fl ] >>"),
            [&b"A85"[..], b"Fl"]
        );
        assert_eq!(
            filter_names(b"<</Filter/FlateDecode/Length 3>>"),
            [&b"FlateDecode"[..]]
        );
        assert!(filter_names(b"<< /Filter 5 0 R >>").is_empty());
        assert_eq!(
            largest_int_after(
                b"/Columns 5 /DecodeParms << /Columns 99999999999 >>",
                b"Columns"
            ),
            Some(99_999_999_999)
        );
    }
}
