//! Page bodies to what a reader takes: charset detection for text and HTML, binary
//! formats as they are (`page_bytes`, shared by the fetcher and `deepr verify --live`).

/// Decode a body: charset from the Content-Type header, a BOM, an HTML meta tag, then
/// sniffing (chardetng).
pub fn decode(body: &[u8], content_type: &str) -> String {
    let from_label = |label: &str| {
        encoding_rs::Encoding::for_label(label.trim().trim_matches(['"', '\'']).as_bytes())
    };
    let header = content_type
        .split(';')
        .find_map(|p| p.trim().strip_prefix("charset="))
        .and_then(from_label);
    let bom = encoding_rs::Encoding::for_bom(body).map(|(e, _)| e);
    let meta = {
        let head = String::from_utf8_lossy(&body[..body.len().min(4096)]).to_ascii_lowercase();
        head.find("charset=").and_then(|at| {
            let rest = &head[at + 8..];
            let label: String = rest
                .trim_start_matches(['"', '\''])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            from_label(&label)
        })
    };
    let encoding = bom.or(header).or(meta).unwrap_or_else(|| {
        let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
        detector.feed(body, true);
        detector.guess(None, chardetng::Utf8Detection::Allow)
    });
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// A fetched page's bytes as its reader takes them, and its format: text formats are
/// decoded by their declared or sniffed charset first (the fetcher and `deepr verify
/// --live` read a page alike). `None` for a type deepr does not read.
pub fn page_bytes(
    content_type: &str,
    url: &str,
    body: &[u8],
) -> Option<(deepr_documents::Format, Vec<u8>)> {
    let format = crate::reading::format_of_page(content_type, url, body)?;
    use deepr_documents::Format::{Csv, Html, Markdown, Text};
    let bytes = match format {
        Html | Text | Markdown | Csv => decode(body, content_type).into_bytes(),
        _ => body.to_vec(),
    };
    Some((format, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charsets_from_header_bom_meta_and_sniffing() {
        let latin1 = b"caf\xe9 cr\xe8me";
        assert_eq!(
            decode(latin1, "text/plain; charset=ISO-8859-1"),
            "café crème"
        );
        assert_eq!(decode(b"\xef\xbb\xbfcaf\xc3\xa9", "text/plain"), "café");
        let meta = b"<html><head><meta charset=\"windows-1252\"></head><body>caf\xe9</body></html>";
        assert!(decode(meta, "text/html").contains("café"));
        assert!(decode("привет мир, это текст".as_bytes(), "").contains("привет"));
    }
}
