//! Reading documents with `deepr-documents` from the adapters: every file and fetched
//! page goes through one bounded reader (its own thread, a time limit, panics
//! contained), and what the reader found besides the text — version status, heading
//! offsets, places — becomes the [`Outline`] the pipeline sees beside the document.

use deepr_documents::{Document, Format, Limits, ReadError, READ_TIMEOUT};
use deepr_orchestrator::Outline;

/// Read `bytes` as `format` within the default limits and [`READ_TIMEOUT`]. Blocks the
/// calling thread: from async code use [`read_off_runtime`].
pub fn read_bounded(bytes: Vec<u8>, format: Format) -> Result<Document, ReadError> {
    deepr_documents::read_bounded(bytes, format, Limits::default(), READ_TIMEOUT)
}

/// Every document of a file (a message and its attachments, a mailbox, a chat
/// export: [`deepr_documents::read_parts`]) within the default limits and
/// [`READ_TIMEOUT`]. Blocks the calling thread.
pub fn read_parts_bounded(
    bytes: Vec<u8>,
    format: Format,
) -> Result<Vec<deepr_documents::Part>, ReadError> {
    deepr_documents::read_parts_bounded(bytes, format, Limits::default(), READ_TIMEOUT)
}

/// [`read_bounded`] on the blocking pool, so a slow document never stalls the runtime.
pub async fn read_off_runtime(bytes: Vec<u8>, format: Format) -> Result<Document, ReadError> {
    tokio::task::spawn_blocking(move || read_bounded(bytes, format))
        .await
        .unwrap_or(Err(ReadError::ReaderPanicked(format.as_str())))
}

/// The outline of a read document: its status (when not current), every heading's
/// offset and level, and the offsets where its place (page, slide, sheet row) changes.
pub fn outline_of(doc: &Document) -> Outline {
    let status = (doc.status != deepr_documents::DocStatus::Current)
        .then(|| doc.status.as_str().to_string());
    let offset = |at: usize| u32::try_from(at).unwrap_or(u32::MAX);
    // A block that starts afresh (a new slide or sheet) closes every heading: level 0.
    let headings = doc
        .marks
        .iter()
        .filter_map(|m| match (m.heading, m.fresh) {
            (Some(level), _) => Some((offset(m.at), level)),
            (None, true) => Some((offset(m.at), 0)),
            (None, false) => None,
        })
        .collect();
    let mut places: Vec<(u32, String)> = Vec::new();
    for mark in &doc.marks {
        let Some(place) = &mark.place else { continue };
        let fragment = place.fragment();
        if places.last().is_none_or(|(_, last)| *last != fragment) {
            places.push((offset(mark.at), fragment));
        }
    }
    let range = |&(start, end): &(usize, usize)| (offset(start), offset(end));
    Outline {
        status,
        headings,
        places,
        author: doc.author.clone(),
        date_basis: doc.date_basis.clone(),
        quoted: doc.quoted.iter().map(range).collect(),
        units: doc.units.iter().map(range).collect(),
        bylines: doc.bylines.iter().map(|&at| offset(at)).collect(),
    }
}

/// The format of a fetched page from its content type, else from its URL's extension.
pub fn format_of_page(content_type: &str, url: &str, body: &[u8]) -> Option<Format> {
    let content_type = content_type.to_ascii_lowercase();
    let by_type = [
        ("application/pdf", Format::Pdf),
        ("html", Format::Html),
        ("text/markdown", Format::Markdown),
        ("text/csv", Format::Csv),
        ("wordprocessingml", Format::Docx),
        ("presentationml", Format::Pptx),
        ("spreadsheetml", Format::Xlsx),
        ("opendocument.text", Format::Odt),
        ("opendocument.presentation", Format::Odp),
        ("opendocument.spreadsheet", Format::Ods),
        ("application/epub", Format::Epub),
    ];
    if body.starts_with(b"%PDF-") {
        return Some(Format::Pdf);
    }
    if let Some((_, format)) = by_type.iter().find(|(t, _)| content_type.contains(t)) {
        return Some(*format);
    }
    let path = url.split(['?', '#']).next().unwrap_or("");
    let by_extension = path
        .rsplit_once('/')
        .map_or(path, |(_, name)| name)
        .rsplit_once('.')
        .and_then(|(_, ext)| Format::from_extension(ext));
    match by_extension {
        Some(format) => Some(format),
        None if content_type.starts_with("text/plain") || content_type.is_empty() => {
            Some(Format::Text)
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outlines_keep_headings_places_and_status() {
        let mut builder = deepr_documents::Builder::new(Limits::default());
        builder.place(deepr_documents::Place::Page(1));
        builder.heading(1, "Report").unwrap();
        builder.paragraph("Intro text.").unwrap();
        builder.place(deepr_documents::Place::Page(2));
        builder.heading(2, "Revenue").unwrap();
        builder.list_item("", "Quarterly revenue: $14.2M").unwrap();
        let doc = builder
            .finish(None, deepr_documents::DocStatus::Superseded)
            .unwrap();
        let outline = outline_of(&doc);
        assert_eq!(outline.status.as_deref(), Some("superseded"));
        assert!(outline.is_stale());
        let item = doc.text.find("Quarterly").unwrap();
        assert_eq!(outline.heading_path(&doc.text, item), ["Report", "Revenue"]);
        assert_eq!(outline.fragment_at(item), Some("page=2"));
        assert_eq!(outline.fragment_at(0), Some("page=1"));
        let revenue = doc.text.find("Revenue").unwrap();
        assert!(outline.is_heading_at(revenue));
        assert_eq!(outline.heading_path(&doc.text, revenue), ["Report"]);
    }

    #[test]
    fn page_formats_from_type_then_extension() {
        assert_eq!(
            format_of_page("text/html; charset=utf-8", "https://a/x", b""),
            Some(Format::Html)
        );
        assert_eq!(
            format_of_page("application/octet-stream", "https://a/r.docx?x=1", b""),
            Some(Format::Docx)
        );
        assert_eq!(
            format_of_page("", "https://a/doc", b"%PDF-1.4"),
            Some(Format::Pdf)
        );
        assert_eq!(format_of_page("image/png", "https://a/p.png", b""), None);
        assert_eq!(
            format_of_page("text/plain", "https://a/notes", b""),
            Some(Format::Text)
        );
    }
}
