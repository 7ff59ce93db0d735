//! The report as a PDF people can send (`--format pdf`): the markdown report — title,
//! summary, sections, disagreements, gaps, references, every footnote with its verbatim
//! quote and source, Run details — set on A4 pages in fonts embedded in the file
//! (Libertinus Serif, DejaVu Sans Mono; subset by krilla), with its links clickable and
//! its headings as bookmarks. No external tool, no I/O: markdown in, bytes out.
//!
//! [`blocks`] reads the markdown (pulldown-cmark), [`layout`] measures and breaks it
//! into lines and pages, [`paint`] draws them. Bounded: a report over
//! [`MAX_MARKDOWN_BYTES`] or [`layout::MAX_PAGES`] pages is an error, never a hang.

pub mod blocks;
pub mod layout;
pub mod paint;

/// Longest markdown report turned into a PDF (bytes).
pub const MAX_MARKDOWN_BYTES: usize = 16 * 1024 * 1024;

/// Why a PDF could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    #[error("the report is {0} bytes; a PDF is made of reports up to {MAX_MARKDOWN_BYTES} bytes")]
    TooBig(usize),
    #[error("the report would fill more than {0} pages")]
    TooLong(usize),
    #[error("font: {0}")]
    Font(String),
    #[error("cannot write the PDF: {0}")]
    Write(String),
}

/// The PDF of a markdown report whose title is `title`.
pub fn render_pdf(markdown: &str, title: &str) -> Result<Vec<u8>, PdfError> {
    if markdown.len() > MAX_MARKDOWN_BYTES {
        return Err(PdfError::TooBig(markdown.len()));
    }
    let fonts = layout::Fonts::bundled()?;
    let blocks = blocks::blocks(markdown);
    let laid = layout::lay_out(&fonts, &blocks)?;
    paint::paint(&fonts, &laid, title)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_become_uri_annotations_and_headings_bookmarks() {
        let markdown =
            "# A title\n\n## A section\n\nRead [the page](https://example.org/page) here.\n";
        let pdf = render_pdf(markdown, "A title").expect("a PDF");
        let raw = String::from_utf8_lossy(&pdf);
        assert!(raw.starts_with("%PDF-"));
        assert!(
            raw.contains("https://example.org/page"),
            "the link's URI is in the file"
        );
        assert!(raw.contains("/Outlines"), "the headings are bookmarks");
    }

    #[test]
    fn an_oversized_report_is_refused_not_laid_out() {
        let huge = "word ".repeat(MAX_MARKDOWN_BYTES / 5 + 1);
        assert!(matches!(render_pdf(&huge, "t"), Err(PdfError::TooBig(_))));
    }
}
