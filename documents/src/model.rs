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

/// The text of the block starting at `at`.
pub(crate) fn block_text(text: &str, at: usize) -> &str {
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
    use crate::{Builder, ReadError};

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
