//! PDF: the text layer, page by page (lopdf parses, pdf-extract lays out the text),
//! each page's blocks on `page=N`. Lines are grouped as in plain text (blank lines
//! separate blocks; bulleted or numbered lines are list items). The title and date come
//! from the Info dictionary (`Title`, `ModDate`, else `CreationDate`).
//!
//! pdf-extract's plain text puts a blank line wherever a line sits more than 1.5 font
//! sizes below the last, so a memo at 1.5 line spacing comes out with a blank line
//! after every line and every wrapped sentence would be cut into blocks. The reader
//! therefore takes each line with its position ([`PageLines`], breaking lines exactly
//! where the plain text does) and decides each break itself ([`break_after`]): a line
//! below the page's usual line spacing (its most common gap) that goes on with the
//! sentence above — the line above ends no sentence, and the next starts in lower case
//! or the line above is full (the next one's first word would not have fitted) —
//! runs on into one paragraph, a word broken by a hyphen at the line end is joined
//! ([`join`]), while a wider gap, a sentence's end, a heading, a list item or a table
//! row still starts a block.
//!
//! An encrypted PDF that opens with the empty password is read; one that needs a real
//! password is [`ReadError::Encrypted`]; pages with no text at all (a scan) are
//! [`ReadError::NoTextLayer`].
//!
//! Its streams are decoded within the limits before pdf-extract reads a page (`raw`
//! keeps lopdf from inflating any while it loads; `streams` decodes them page by page;
//! `decode` is the bounded decoder), so a stream that would inflate to gigabytes reads
//! as its first part: the page is "read in part", or past the document's limit the
//! later pages are not read, and the document's gaps say which. A page whose forms
//! would make pdf-extract recurse without end is not read (`forms`), and a page on which
//! pdf-extract fails is a gap, not the document's failure.

mod decode;
mod forms;
mod paragraphs;
#[cfg(test)]
use paragraphs::join;
mod page_tree;
mod raw;
mod streams;

use std::panic::AssertUnwindSafe;

use pdf_extract::{Document as Pdf, MediaBox, Object, ObjectId, OutputDev, OutputError, Transform};

use super::text::{blocks_of_lines, list_marker};
use crate::dates::metadata_date;
use crate::{grouped, Builder, DocStatus, Document, Format, Limits, Place, ReadError};
use streams::{Page, Streams};

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
    let prepared = raw::prepare(bytes, limits)?;
    let mut pdf = Pdf::load_mem(&prepared).map_err(|e| ReadError::malformed(Format::Pdf, e))?;
    if pdf.is_encrypted() && pdf.decrypt("").is_err() {
        return Err(ReadError::Encrypted);
    }
    let mut streams = Streams::load(&mut pdf, &prepared, limits)?;
    drop(prepared);
    let pages = pdf.get_pages();
    if pages.len() > MAX_PAGES {
        return Err(ReadError::TooComplex(format!(
            "more than {MAX_PAGES} pages"
        )));
    }
    streams.settle(&mut pdf, &pages);
    let mut builder = Builder::new(*limits);
    let (title, date) = info(&pdf);
    if let Some(title) = &title {
        builder.title(title);
    }
    let read = read_pages(&mut pdf, &pages, &mut streams, &mut builder)?;
    if !read.any_text {
        if streams.spent() {
            return Err(ReadError::TooLarge(format!(
                "its streams inflate past {} before any page with text",
                crate::human_bytes(limits.max_unpacked_bytes)
            )));
        }
        if !read.failed.is_empty() {
            return Err(ReadError::malformed(Format::Pdf, read.failed.join("; ")));
        }
        return Err(ReadError::NoTextLayer);
    }
    for gap in read
        .failed
        .into_iter()
        .chain(streams.gaps(read.pages, pages.len()))
    {
        builder.gap(gap);
    }
    builder.finish(date, DocStatus::Current)
}

/// What reading the pages came to.
struct PagesRead {
    /// Pages read (in part or whole), from the first.
    pages: u32,
    any_text: bool,
    /// Why pages among them could not be read.
    failed: Vec<String>,
}

/// The pages in order into `builder`, each made ready by `streams` first, until the
/// document's limits stop them.
fn read_pages(
    pdf: &mut Pdf,
    pages: &std::collections::BTreeMap<u32, ObjectId>,
    streams: &mut Streams,
    builder: &mut Builder,
) -> Result<PagesRead, ReadError> {
    let mut read = PagesRead {
        pages: 0,
        any_text: false,
        failed: Vec::new(),
    };
    for (&number, &page) in pages {
        if streams.open_page(pdf, number, page) == Page::Stop {
            break;
        }
        read.pages = number;
        let text = page_text_of(pdf, number, page);
        streams.close_page(pdf, number);
        let text = match text {
            Ok(text) if text.trim().is_empty() => continue,
            Ok(text) => text,
            Err(gap) => {
                read.failed.push(gap);
                continue;
            }
        };
        read.any_text = true;
        builder.place(Place::Page(number));
        match blocks_of_lines(builder, &text) {
            Ok(()) => {}
            Err(err) if builder.refused(&err) => {
                let full = builder.full().unwrap_or_default().to_string();
                builder.gap(match pages.len() as u32 {
                    last if last == number => format!("page {number} read in part: {full}"),
                    _ => format!(
                        "pages 1–{number} of {}: {full}",
                        grouped(pages.len() as u64)
                    ),
                });
                break;
            }
            Err(err) => return Err(err),
        }
    }
    Ok(read)
}

/// Page `number`'s text as pdf-extract lays it out, or the gap that says why it could
/// not be read. pdf-extract panics on much it does not expect; a panic is this page's.
fn page_text_of(pdf: &Pdf, number: u32, page: ObjectId) -> Result<String, String> {
    if let Some(why) = forms::unsafe_forms(pdf, page) {
        return Err(format!("page {number} could not be read: {why}"));
    }
    let mut lines = PageLines::default();
    let run = std::panic::catch_unwind(AssertUnwindSafe(|| {
        pdf_extract::output_doc_page(pdf, &mut lines, number)
    }));
    match run {
        Ok(Ok(())) => Ok(paragraphs::page_text(&lines.into_lines())),
        Ok(Err(e)) => Err(format!("page {number} could not be read ({e})")),
        Err(_) => Err(format!(
            "page {number} could not be read (the PDF reader failed on it)"
        )),
    }
}

/// One line of a page as pdf-extract lays it out, with where it sits.
#[derive(Debug, Default)]
struct Line {
    /// The newlines pdf-extract's plain text puts before it (2: a blank line).
    breaks: usize,
    /// Its text, with the space pdf-extract puts before a line that starts to the right
    /// of where the last one ended.
    text: String,
    /// Its baseline, points down from the top of the page, and its font size.
    y: f64,
    size: f64,
    /// Where its first visible glyph starts, its first word ends and its last visible
    /// glyph ends (points from the left; `None` for a line of spaces).
    left: Option<f64>,
    first_word: Option<f64>,
    right: f64,
}

/// The page's lines, broken where pdf-extract's `PlainTextOutput` breaks them (the same
/// thresholds and spaces, so a line's text is what it was), each with its position,
/// which the plain text loses: at 1.5 line spacing it puts a blank line between every
/// two lines, the wrapped lines of a paragraph as much as two paragraphs.
#[derive(Debug)]
struct PageLines {
    done: Vec<Line>,
    line: Line,
    flip: Transform,
    last_end: f64,
    last_y: f64,
    first_char: bool,
}

impl Default for PageLines {
    fn default() -> Self {
        Self {
            done: Vec::new(),
            line: Line::default(),
            flip: Transform::identity(),
            last_end: 100_000.0,
            last_y: 0.0,
            first_char: false,
        }
    }
}

impl PageLines {
    /// The line a character at `(x, y)` goes on, as `PlainTextOutput` decides at the
    /// start of a text string: a new one when it moved down more than 1.5 sizes (a
    /// blank line), or left and down more than half a size (a newline); a space first
    /// when it starts past the last one's end.
    fn line_for(&mut self, x: f64, y: f64, size: f64) -> &mut Line {
        if self.first_char {
            let drop = (y - self.last_y).abs();
            let breaks = usize::from(drop > size * 1.5)
                + usize::from(x < self.last_end && drop > size * 0.5);
            if breaks > 0 {
                let next = Line {
                    breaks,
                    ..Line::default()
                };
                let line = std::mem::replace(&mut self.line, next);
                self.done.extend((!line.text.is_empty()).then_some(line));
            }
        }
        if self.line.text.is_empty() {
            (self.line.y, self.line.size) = (y, size);
        }
        if self.first_char && x > self.last_end + size * 0.1 {
            self.line.end_first_word();
            self.line.text.push(' ');
        }
        &mut self.line
    }

    /// The page's lines, top to bottom as the content stream set them.
    fn into_lines(mut self) -> Vec<Line> {
        if !self.line.text.is_empty() {
            self.done.push(self.line);
        }
        self.done
    }
}

impl Line {
    /// Appends `text` (a character as pdf-extract decodes it) set from `x` to `end`.
    fn push(&mut self, text: &str, x: f64, end: f64) {
        if text.trim().is_empty() {
            self.end_first_word();
        } else {
            self.left.get_or_insert(x);
            self.right = end;
        }
        self.text.push_str(text);
    }

    /// A space after visible text ends the first word, if none has ended yet.
    fn end_first_word(&mut self) {
        if self.left.is_some() && self.first_word.is_none() {
            self.first_word = Some(self.right);
        }
    }
}

impl OutputDev for PageLines {
    fn begin_page(
        &mut self,
        _page: u32,
        media_box: &MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.flip = Transform::row_major(1., 0., 0., -1., 0., media_box.ury - media_box.lly);
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        let position = trm.post_transform(&self.flip);
        // The side of the square with the area of the font size transformed, as
        // `PlainTextOutput` measures it.
        let (sx, sy) = (
            font_size * trm.m11 + font_size * trm.m21,
            font_size * trm.m12 + font_size * trm.m22,
        );
        let size = (sx * sy).sqrt();
        let (x, y) = (position.m31, position.m32);
        let end = x + width * size;
        self.line_for(x, y, size).push(char, x, end);
        self.first_char = false;
        self.last_y = y;
        self.last_end = end;
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.first_char = true;
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
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
mod limits_tests;

#[cfg(test)]
mod modern_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::writers::{blocks, write_pdf, write_pdf_typeset, Meta, Typeset};

    fn pdf(pages: &[&str], title: &str, modified: &str) -> Vec<u8> {
        let meta = Meta {
            title: title.into(),
            modified: modified.into(),
            ..Meta::default()
        };
        let pages: Vec<_> = pages.iter().map(|p| blocks(p)).collect();
        write_pdf(&meta, &pages).unwrap()
    }

    /// A memo as a word processor sets it: a sentence wrapped over three lines and
    /// followed by another, a word broken at a soft hyphen, two paragraphs that end
    /// with periods, bold headings (one in sentence case), a list item that wraps, a
    /// table.
    const MEMO: &str = "# Harbor Street Yard\nThe Harbor Street yard has space for 24 trailers, and its loading dock has six doors, two of which take refrigerated trailers. The night shift opera\u{AD}tions start at 22:00 under the 2025 lease.\nThe yard is staffed by a crew of nine.\n## Loading Dock Doors\n- Doors 1 and 2 take refrigerated trailers up to 53 feet long\n- Doors 3 to 6 take dry vans\n| Door | Trailer | Length |\n|---|---|---|\n| 1 | Reefer | 53 ft |\n| 3 | Dry van | 48 ft |\n## Next steps\nThe lease renewal is due in March 2027 and needs approval from the regional director before the end of the year.";

    /// The memo's blocks as they should read however it is set: each with its heading
    /// level, if a heading.
    const MEMO_BLOCKS: [(Option<u8>, &str); 10] = [
        (Some(1), "Harbor Street Yard"),
        (None, "The Harbor Street yard has space for 24 trailers, and its loading dock has six doors, two of which take refrigerated trailers. The night shift operations start at 22:00 under the 2025 lease."),
        (None, "The yard is staffed by a crew of nine."),
        (Some(2), "Loading Dock Doors"),
        (None, "Doors 1 and 2 take refrigerated trailers up to 53 feet long"),
        (None, "Doors 3 to 6 take dry vans"),
        (None, "Door: 1 · Trailer: Reefer · Length: 53 ft"),
        (None, "Door: 3 · Trailer: Dry van · Length: 48 ft"),
        (Some(2), "Next steps"),
        (None, "The lease renewal is due in March 2027 and needs approval from the regional director before the end of the year."),
    ];

    fn memo(set: Typeset) -> Vec<u8> {
        write_pdf_typeset(&Meta::default(), &[blocks(MEMO)], &set).unwrap()
    }

    /// A document's blocks, each with its heading level if a heading.
    fn blocks_of(doc: &Document) -> Vec<(Option<u8>, &str)> {
        let ends = doc
            .marks
            .iter()
            .skip(1)
            .map(|m| m.at)
            .chain([doc.text.len()]);
        doc.marks
            .iter()
            .zip(ends)
            .map(|(mark, end)| (mark.heading, doc.text[mark.at..end].trim_end()))
            .collect()
    }

    /// What pdf-extract's plain text makes of the memo at 1.5 lines: a blank line
    /// after every line, a paragraph's wrapped lines as much as its last, so the
    /// paragraphs below are the reader's work.
    #[test]
    fn plain_text_at_one_and_a_half_lines_has_a_blank_line_after_every_line() {
        let plain = pdf_extract::extract_text_from_mem(&memo(Typeset::default())).unwrap();
        for wrapped in [
            "The Harbor Street yard has space for 24 trailers,\n\nand its loading dock has six doors, two of which\n\n",
            "The night shift opera-\n\ntions start",
            "\n\nThe yard is staffed by a crew of nine.\n\nLoading Dock Doors\n\n",
        ] {
            assert!(plain.contains(wrapped), "{wrapped:?} in {plain:?}");
        }
    }

    /// The memo reads as whole paragraphs however it is set: the sentence wrapped over
    /// three lines is one block (no blank line inside it), the hyphenated word is
    /// whole, and headings, list items, table rows and the paragraph after a period
    /// stay blocks of their own.
    #[test]
    fn memo_reads_as_whole_paragraphs_at_any_spacing() {
        let memo_set = Typeset::default();
        let cases = [
            ("1.5 lines, no space after paragraphs", memo_set),
            (
                "1.5 lines, 8 pt after",
                Typeset {
                    space_after: 8.0,
                    ..memo_set
                },
            ),
            (
                "double spacing",
                Typeset {
                    spacing: 2.0,
                    ..memo_set
                },
            ),
            (
                "single spacing, 6 pt after",
                Typeset {
                    spacing: 1.0,
                    space_after: 6.0,
                    ..memo_set
                },
            ),
            (
                "words set apart by offsets",
                Typeset {
                    word_gaps: true,
                    ..memo_set
                },
            ),
            (
                "a wider column at 11 pt",
                Typeset {
                    size: 11.0,
                    column: 300.0,
                    ..memo_set
                },
            ),
        ];
        for (name, set) in cases {
            let doc = read(&memo(set), &Limits::default()).unwrap();
            assert_eq!(blocks_of(&doc), MEMO_BLOCKS, "{name}: {:?}", doc.text);
            let at = doc.text.find("The lease renewal").unwrap();
            assert_eq!(
                doc.heading_path(at),
                ["Harbor Street Yard", "Next steps"],
                "{name}"
            );
        }
    }

    /// At single spacing with no space between blocks the plain text runs every line
    /// into the next; a title-case heading still stands alone and the wrapped sentence
    /// is still one.
    #[test]
    fn single_spacing_without_space_keeps_title_case_headings() {
        let set = Typeset {
            spacing: 1.0,
            ..Typeset::default()
        };
        let doc = read(&memo(set), &Limits::default()).unwrap();
        let blocks = blocks_of(&doc);
        assert!(
            blocks.contains(&(Some(2), "Loading Dock Doors")),
            "{blocks:?}"
        );
        assert!(doc.text.contains(MEMO_BLOCKS[1].1), "{}", doc.text);
    }

    /// The lines break exactly where pdf-extract's plain text breaks them, with its
    /// spaces: only the breaks between them are the reader's own.
    #[test]
    fn lines_break_where_the_plain_text_does() {
        let typeset = Typeset {
            word_gaps: true,
            ..Typeset::default()
        };
        let default = pdf(&[MEMO], "t", "2026-01-01T00:00:00Z");
        for bytes in [memo(Typeset::default()), memo(typeset), default] {
            let doc = Pdf::load_mem(&bytes).unwrap();
            let mut lines = PageLines::default();
            pdf_extract::output_doc_page(&doc, &mut lines, 1).unwrap();
            let rebuilt: String = lines
                .into_lines()
                .iter()
                .map(|line| format!("{}{}", "\n".repeat(line.breaks), line.text))
                .collect();
            assert_eq!(rebuilt, pdf_extract::extract_text_from_mem(&bytes).unwrap());
        }
    }

    /// A line that ends in a hyphen runs on into the next without a space; the hyphen
    /// goes where it only broke a word.
    #[test]
    fn line_end_hyphens() {
        let cases = [
            (
                "night shift opera-",
                "tions start",
                "night shift operations start",
            ),
            ("a long-", "term lease", "a longterm lease"),
            ("with Jean-", "Luc Martin", "with Jean-Luc Martin"),
            ("after COVID-", "19 rules", "after COVID-19 rules"),
            ("a state-of-the-", "art dock", "a state-of-the-art dock"),
            ("soft opera\u{AD}", "tions", "soft operations"),
            ("from 2019 -", "2020 on", "from 2019 - 2020 on"),
            ("24 trailers,", "and its dock", "24 trailers, and its dock"),
        ];
        for (line, next, joined) in cases {
            let mut text = line.to_string();
            join(&mut text, next);
            assert_eq!(text, joined);
        }
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
