//! The document model: a document is a sequence of blocks (headings, paragraphs, list
//! items, table rows with their header, captions, code, sheet rows) plus position marks
//! (pages, slides, sheets), and its archived text is those blocks rendered to lines.
//!
//! Rendering rules (the archived text is what quotes are cut from, so they are the
//! contract of every reader):
//! * each block is one paragraph of the archived text, separated from the next by a
//!   blank line, so no sentence can span two blocks;
//! * a block's whitespace is folded to single spaces (code keeps its lines);
//! * a table row or sheet row is its header-labelled cells:
//!   `Offset: 18 · Size: 1 · Description: File format write version.`;
//! * no markup is added: no `#`, no `**`, no list bullets.
//!
//! Each block's start is recorded with its heading path, so any byte offset of the
//! archived text maps back to the headings above it ([`Document::heading_path`]) and to
//! its place in the file ([`Document::fragment_at`]: `page=3`, `slide=4`,
//! `sheet=Budget!row=12`).

use serde::{Deserialize, Serialize};

use crate::ReadError;

/// Separator between the labelled cells of a rendered row.
pub const CELL_SEPARATOR: &str = " · ";

/// What a block is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// A heading of level 1 (title) to 6.
    Heading(u8),
    Paragraph,
    ListItem,
    TableRow,
    Caption,
    Code,
}

/// Where in its file a block sits, beyond the heading path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Place {
    Page(u32),
    Slide(u32),
    /// A spreadsheet's sheet and 1-based row number.
    Row {
        sheet: String,
        row: u32,
    },
    /// A CSV record by the 1-based line it starts on.
    Line(u32),
}

impl Place {
    /// The locator fragment: `page=3`, `slide=4`, `sheet=Budget!row=12`.
    pub fn fragment(&self) -> String {
        match self {
            Self::Page(n) => format!("page={n}"),
            Self::Slide(n) => format!("slide={n}"),
            Self::Row { sheet, row } => format!("sheet={sheet}!row={row}"),
            Self::Line(n) => format!("row={n}"),
        }
    }
}

/// Where a block of the archived text starts, and what is above it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockMark {
    /// Byte offset of the block's first character in the archived text.
    pub at: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<Place>,
    /// The heading level, if the block is a heading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heading: Option<u8>,
    /// The block starts afresh: no heading before it is above it (a new slide, sheet
    /// or chapter).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fresh: bool,
}

/// Whether a document is the current version of what it says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DocStatus {
    #[default]
    Current,
    Draft,
    /// Kept for the record (`archive/`, `old/` folders).
    Archived,
    /// Says itself that something newer replaces it.
    Superseded,
}

impl DocStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Current => "current",
            Self::Draft => "draft",
            Self::Archived => "archived",
            Self::Superseded => "superseded",
        }
    }

    /// An archived or superseded document is stale: a newer one states the facts.
    pub fn is_stale(self) -> bool {
        matches!(self, Self::Archived | Self::Superseded)
    }
}

/// A document as deepr read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    pub title: String,
    /// The archived text: the blocks rendered (see the module docs).
    pub text: String,
    /// One mark per block, in text order.
    pub marks: Vec<BlockMark>,
    /// The document's own date (`YYYY-MM-DD`, or `YYYY-MM`), from its metadata or text.
    pub date: Option<String>,
    pub status: DocStatus,
    /// Parts of the file that could not be read ("page 7 could not be read"): the rest
    /// was, and the run says what is missing.
    pub gaps: Vec<String>,
    /// The title would be a data row's words: the file stated no title, has no heading
    /// and starts with a table or sheet row (a CSV, an untitled spreadsheet). A caller
    /// that knows the file's name titles it by that instead ([`Document::apply_path`]);
    /// a text's first line stays its title.
    pub untitled: bool,
    /// Who wrote it, when the format says (an email's sender: `Dana Ruiz
    /// <dana@example.com>`; a chat channel-day's speakers are in its headings).
    pub author: Option<String>,
    /// Why `date` is the date it is, when the document's sources of a date disagree
    /// ("its text is dated 2026-03-02; the file's metadata says 2013-12-23").
    pub date_basis: Option<String>,
    /// Byte ranges of the archived text that repeat what others wrote before (an
    /// email's quoted reply, its signature): read and archived, never new evidence.
    pub quoted: Vec<(usize, usize)>,
    /// Byte ranges of blocks that are one unit however many sentences they hold (a
    /// chat message): quoted whole, never cut at a sentence boundary.
    pub units: Vec<(usize, usize)>,
    /// Byte offsets of headings that say who wrote and when (an email's `From … to …,
    /// date` line, a chat message's speaker and time), not what a part is about.
    pub bylines: Vec<usize>,
}

impl Document {
    /// The mark of the block holding byte `offset`.
    fn mark_at(&self, offset: usize) -> Option<&BlockMark> {
        let after = self.marks.partition_point(|m| m.at <= offset);
        after.checked_sub(1).and_then(|i| self.marks.get(i))
    }

    /// The headings above the text at `offset`, outermost first (a heading's own path
    /// ends with its parent). Computed from the heading marks, so a document keeps one
    /// copy of each heading, however many blocks sit under it.
    pub fn heading_path(&self, offset: usize) -> Vec<String> {
        let mut open: Vec<(u8, &str)> = Vec::new();
        for mark in self.marks.iter().take_while(|m| m.at <= offset) {
            if mark.fresh {
                open.clear();
            }
            let Some(level) = mark.heading else { continue };
            open.retain(|(l, _)| *l < level);
            let heading = block_text(&self.text, mark.at);
            if offset < mark.at + heading.len().max(1) {
                break;
            }
            open.push((level, heading));
        }
        open.into_iter().map(|(_, h)| h.to_string()).collect()
    }

    /// The locator fragment of the text at `offset` (`page=3`), if the format has one.
    pub fn fragment_at(&self, offset: usize) -> Option<String> {
        self.mark_at(offset)
            .and_then(|m| m.place.as_ref())
            .map(Place::fragment)
    }
}

/// Limits every reader works within.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Longest archived text (bytes).
    pub max_text_bytes: usize,
    /// Most blocks in one document.
    pub max_blocks: usize,
    /// Most bytes one compressed part may inflate to: a zip entry, or a PDF stream (a
    /// font, a CMap, an object or cross-reference stream).
    pub max_part_bytes: u64,
    /// Most bytes all parts of one container may inflate to together: a zip's entries,
    /// or every stream of one PDF.
    pub max_unpacked_bytes: u64,
    /// Most content bytes one PDF page (its content streams joined) or one form it
    /// draws may hand the PDF parser, which takes up to some 300 bytes of memory for
    /// each byte of content it parses.
    pub max_page_content_bytes: u64,
    /// Deepest element nesting an HTML or XML document may have.
    pub max_nesting: usize,
}

impl Limits {
    /// Small limits for fuzzing and property tests: every cap is reached quickly.
    pub fn tight() -> Self {
        Self {
            max_text_bytes: 1 << 20,
            max_blocks: 10_000,
            max_part_bytes: 1 << 22,
            max_unpacked_bytes: 1 << 23,
            max_page_content_bytes: 1 << 18,
            max_nesting: 64,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_text_bytes: 16 * 1024 * 1024,
            max_blocks: 200_000,
            max_part_bytes: 64 * 1024 * 1024,
            max_unpacked_bytes: 256 * 1024 * 1024,
            max_page_content_bytes: 4 * 1024 * 1024,
            max_nesting: 512,
        }
    }
}

/// A byte count in a unit people read: `512 bytes`, `64 KB`, `20 MB`, `1.5 GB` (binary
/// units, one decimal where it is not whole).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1023.95 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let tenths = (value * 10.0).round() / 10.0;
    if tenths.fract() == 0.0 {
        format!("{tenths:.0} {}", UNITS[unit])
    } else {
        format!("{tenths:.1} {}", UNITS[unit])
    }
}

/// A count with its thousands set apart: `200,000`.
pub fn grouped(count: u64) -> String {
    let digits = count.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Builds a [`Document`] block by block, keeping the heading stack and the limits.
#[derive(Debug)]
pub struct Builder {
    limits: Limits,
    text: String,
    marks: Vec<BlockMark>,
    /// The next block starts afresh ([`Builder::reset_headings`]).
    fresh: bool,
    gaps: Vec<String>,
    place: Option<Place>,
    title: Option<String>,
    first_heading: Option<String>,
    /// The first block is a table or sheet row (its words make no title).
    starts_with_row: Option<bool>,
    quoted: Vec<(usize, usize)>,
    units: Vec<(usize, usize)>,
    bylines: Vec<usize>,
    /// Why the last block was refused, when a limit refused it ([`Builder::full`]).
    full: Option<String>,
}

impl Builder {
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            text: String::new(),
            marks: Vec::new(),
            fresh: false,
            gaps: Vec::new(),
            place: None,
            title: None,
            first_heading: None,
            starts_with_row: None,
            quoted: Vec::new(),
            units: Vec::new(),
            bylines: Vec::new(),
            full: None,
        }
    }

    /// Why the document holds no more, once a block was refused for the text or block
    /// limit (`its text reached 16 MB, the most one document may hold`): a reader that
    /// can stop there keeps what it has read and says where it stopped.
    pub fn full(&self) -> Option<&str> {
        self.full.as_deref()
    }

    /// How many bytes one more block may have before the text limit refuses it.
    pub fn text_room(&self) -> usize {
        self.limits
            .max_text_bytes
            .saturating_sub(self.text.len())
            .saturating_sub(2)
    }

    /// Whether `err` is this builder's refusal of a block for a limit (the document so
    /// far is whole, and a reader may stop there), not another error.
    pub fn refused(&self, err: &ReadError) -> bool {
        self.full.is_some() && matches!(err, ReadError::TooLarge(_) | ReadError::TooComplex(_))
    }

    /// A heading that says who wrote what follows and when ([`Document::bylines`]).
    pub fn byline(&mut self, level: u8, text: &str) -> Result<(), ReadError> {
        let before = self.marks.len();
        self.heading(level, text)?;
        if self.marks.len() > before {
            if let Some(mark) = self.marks.last() {
                self.bylines.push(mark.at);
            }
        }
        Ok(())
    }

    /// A paragraph that repeats what someone wrote before (a quoted reply, a
    /// signature): in the text, marked as quoted ([`Document::quoted`]).
    pub fn quoted_paragraph(&mut self, text: &str) -> Result<(), ReadError> {
        self.marked(text, true)
    }

    /// A block that is one unit however many sentences it holds (a chat message):
    /// marked as a unit ([`Document::units`]).
    pub fn unit(&mut self, text: &str) -> Result<(), ReadError> {
        self.marked(text, false)
    }

    fn marked(&mut self, text: &str, quoted: bool) -> Result<(), ReadError> {
        let before = self.marks.len();
        self.push(&fold(text))?;
        if self.marks.len() > before {
            let start = self.marks.last().map_or(0, |m| m.at);
            let range = (start, self.text.len());
            if quoted {
                self.quoted.push(range);
            } else {
                self.units.push(range);
            }
        }
        Ok(())
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Blocks from here on are on this page, slide or sheet row.
    pub fn place(&mut self, place: Place) {
        self.place = Some(place);
    }

    /// A part of the file that could not be read; the document is read without it.
    pub fn gap(&mut self, what: String) {
        self.gaps.push(what);
    }

    /// Headings opened so far are closed (a new slide or sheet starts afresh).
    pub fn reset_headings(&mut self) {
        self.fresh = true;
    }

    /// The document's title, if the format states one apart from its headings.
    pub fn title(&mut self, title: &str) {
        let title = fold(title);
        if !title.is_empty() {
            self.title = Some(title);
        }
    }

    pub fn heading(&mut self, level: u8, text: &str) -> Result<(), ReadError> {
        let level = level.clamp(1, 6);
        let text = fold(text);
        if text.is_empty() {
            return Ok(());
        }
        self.push(&text)?;
        if let Some(mark) = self.marks.last_mut() {
            mark.heading = Some(level);
        }
        if self.first_heading.is_none() {
            self.first_heading = Some(text);
        }
        Ok(())
    }

    pub fn paragraph(&mut self, text: &str) -> Result<(), ReadError> {
        self.push(&fold(text))
    }

    /// A list item; `marker` is kept for ordered lists (`"3."`), empty for bullets.
    pub fn list_item(&mut self, marker: &str, text: &str) -> Result<(), ReadError> {
        let text = fold(text);
        if text.is_empty() {
            return Ok(());
        }
        if marker.is_empty() {
            self.push(&text)
        } else {
            self.push(&format!("{marker} {text}"))
        }
    }

    pub fn caption(&mut self, text: &str) -> Result<(), ReadError> {
        self.push(&fold(text))
    }

    /// Code keeps its lines (trailing whitespace trimmed, blank lines dropped so the
    /// block stays one paragraph).
    pub fn code(&mut self, text: &str) -> Result<(), ReadError> {
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.trim().is_empty())
            .collect();
        self.push(&lines.join("\n"))
    }

    /// A table: the header row labels every other row's cells. Without a header each
    /// row is its cells joined.
    pub fn table(
        &mut self,
        header: Option<&[String]>,
        rows: &[Vec<String>],
    ) -> Result<(), ReadError> {
        let header: Option<Vec<String>> = header.map(|h| h.iter().map(|c| fold(c)).collect());
        for row in rows {
            let line = labelled_row(header.as_deref(), row);
            self.push(&line)?;
        }
        Ok(())
    }

    /// One row of a table or sheet, labelled by its header.
    pub fn row(&mut self, header: Option<&[String]>, cells: &[String]) -> Result<(), ReadError> {
        let header: Option<Vec<String>> = header.map(|h| h.iter().map(|c| fold(c)).collect());
        let row = labelled_row(header.as_deref(), cells);
        if !row.is_empty() {
            self.starts_with_row.get_or_insert(true);
        }
        self.push(&row)
    }

    fn push(&mut self, block: &str) -> Result<(), ReadError> {
        if block.is_empty() {
            return Ok(());
        }
        self.starts_with_row.get_or_insert(false);
        if self.marks.len() >= self.limits.max_blocks {
            self.full = Some(format!(
                "it reached {} blocks, the most one document may hold",
                grouped(self.limits.max_blocks as u64)
            ));
            return Err(ReadError::TooComplex(format!(
                "more than {} blocks",
                self.limits.max_blocks
            )));
        }
        if self.text.len() + block.len() + 2 > self.limits.max_text_bytes {
            self.full = Some(format!(
                "its text reached {}, the most one document may hold",
                human_bytes(self.limits.max_text_bytes as u64)
            ));
            return Err(ReadError::TooLarge(format!(
                "its text exceeds {} bytes",
                self.limits.max_text_bytes
            )));
        }
        if !self.text.is_empty() {
            self.text.push_str("\n\n");
        }
        self.marks.push(BlockMark {
            at: self.text.len(),
            place: self.place.clone(),
            heading: None,
            fresh: std::mem::take(&mut self.fresh),
        });
        self.text.push_str(block);
        Ok(())
    }

    /// The stated title, the first heading, or the first block's first words.
    fn best_title(&self) -> String {
        if let Some(title) = self.title.as_ref().or(self.first_heading.as_ref()) {
            return title.chars().take(200).collect();
        }
        block_text(&self.text, 0).chars().take(120).collect()
    }

    /// The finished document. `date` and `status` come from the caller, which knows
    /// the format's metadata and the file's path.
    pub fn finish(self, date: Option<String>, status: DocStatus) -> Result<Document, ReadError> {
        if self.text.trim().is_empty() {
            return Err(ReadError::NoText);
        }
        let title = self.best_title();
        let untitled = self.title.is_none()
            && self.first_heading.is_none()
            && self.starts_with_row == Some(true);
        Ok(Document {
            title,
            untitled,
            text: self.text,
            marks: self.marks,
            date,
            status,
            gaps: self.gaps,
            author: None,
            date_basis: None,
            quoted: self.quoted,
            units: self.units,
            bylines: self.bylines,
        })
    }
}

/// The text of the block starting at `at`.
fn block_text(text: &str, at: usize) -> &str {
    let rest = text.get(at..).unwrap_or("");
    rest.split("\n\n").next().unwrap_or("")
}

/// Cells joined by [`CELL_SEPARATOR`], each labelled `Header: value` where the header
/// names it; empty cells are left out.
pub fn labelled_row(header: Option<&[String]>, cells: &[String]) -> String {
    let mut parts = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        let cell = fold(cell);
        if cell.is_empty() {
            continue;
        }
        let label = header.and_then(|h| h.get(i)).filter(|l| !l.is_empty());
        match label {
            Some(label) if *label != cell => parts.push(format!("{label}: {cell}")),
            _ => parts.push(cell),
        }
    }
    parts.join(CELL_SEPARATOR)
}

/// Whitespace runs (any Unicode whitespace, newlines included) folded to one space,
/// zero-width characters dropped, ends trimmed.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if matches!(c, '\u{200B}'..='\u{200D}' | '\u{FEFF}' | '\u{00AD}') {
            continue;
        }
        if c.is_whitespace() || c.is_control() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn blocks_render_as_paragraphs_with_heading_paths() {
        let mut b = Builder::new(Limits::default());
        b.heading(1, "Q1 2026 Operations Report").unwrap();
        b.heading(2, "Revenue").unwrap();
        b.list_item("", "Quarterly  revenue:\n$14.2M").unwrap();
        b.table(
            Some(&strings(&["Round", "Date", "Amount"])),
            &[strings(&["Series C", "Oct 2025", "$48M"])],
        )
        .unwrap();
        b.heading(2, "Fleet").unwrap();
        b.paragraph("We run 1,240 units.").unwrap();
        let doc = b.finish(None, DocStatus::Current).unwrap();
        assert_eq!(
            doc.text,
            "Q1 2026 Operations Report\n\nRevenue\n\nQuarterly revenue: $14.2M\n\nRound: Series C · Date: Oct 2025 · Amount: $48M\n\nFleet\n\nWe run 1,240 units."
        );
        assert_eq!(doc.title, "Q1 2026 Operations Report");
        let at = doc.text.find("Round:").unwrap();
        assert_eq!(
            doc.heading_path(at),
            ["Q1 2026 Operations Report", "Revenue"]
        );
        let at = doc.text.find("We run").unwrap();
        assert_eq!(doc.heading_path(at), ["Q1 2026 Operations Report", "Fleet"]);
        assert_eq!(doc.heading_path(0), [] as [String; 0]);
    }

    #[test]
    fn places_give_fragments() {
        let mut b = Builder::new(Limits::default());
        b.place(Place::Page(1));
        b.paragraph("First page.").unwrap();
        b.place(Place::Row {
            sheet: "Budget".into(),
            row: 12,
        });
        b.paragraph("A row.").unwrap();
        let doc = b.finish(None, DocStatus::Current).unwrap();
        assert_eq!(doc.fragment_at(0).as_deref(), Some("page=1"));
        let at = doc.text.find("A row").unwrap();
        assert_eq!(doc.fragment_at(at).as_deref(), Some("sheet=Budget!row=12"));
    }

    #[test]
    fn limits_end_in_typed_errors() {
        let mut b = Builder::new(Limits {
            max_blocks: 2,
            ..Limits::default()
        });
        b.paragraph("one").unwrap();
        b.paragraph("two").unwrap();
        assert!(matches!(
            b.paragraph("three"),
            Err(ReadError::TooComplex(_))
        ));
        let empty = Builder::new(Limits::default());
        assert!(matches!(
            empty.finish(None, DocStatus::Current),
            Err(ReadError::NoText)
        ));
    }

    #[test]
    fn sizes_and_counts_read_as_people_write_them() {
        let cases = [
            (0, "0 bytes"),
            (1023, "1023 bytes"),
            (1024, "1 KB"),
            (1536, "1.5 KB"),
            (20 * 1024 * 1024, "20 MB"),
            (60 * 1024 * 1024 + 300 * 1024, "60.3 MB"),
            (16 * 1024 * 1024 - 3, "16 MB"),
            (1536 * 1024 * 1024, "1.5 GB"),
        ];
        for (bytes, human) in cases {
            assert_eq!(human_bytes(bytes), human, "{bytes}");
        }
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(200_000), "200,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }

    #[test]
    fn a_full_builder_says_why_and_keeps_what_it_holds() {
        let mut b = Builder::new(Limits {
            max_text_bytes: 12,
            ..Limits::default()
        });
        b.paragraph("one two").unwrap();
        assert_eq!(b.full(), None);
        let err = b.paragraph("three four five").unwrap_err();
        assert!(b.refused(&err), "{err:?}");
        assert_eq!(
            b.full(),
            Some("its text reached 12 bytes, the most one document may hold")
        );
        assert!(!b.refused(&ReadError::NoText));
        assert_eq!(b.finish(None, DocStatus::Current).unwrap().text, "one two");
    }

    #[test]
    fn rows_label_cells_and_skip_empty_ones() {
        let header = strings(&["Offset", "Size", "Description"]);
        assert_eq!(
            labelled_row(
                Some(&header),
                &strings(&["18", "", "File format write version."])
            ),
            "Offset: 18 · Description: File format write version."
        );
        assert_eq!(labelled_row(None, &strings(&["a", "b"])), "a · b");
    }
}
