//! Building a [`Document`] block by block: each reader pushes headings, paragraphs,
//! list items, rows, captions and code; the builder renders them to the archived text,
//! keeps the heading stack, places, quoted ranges, units and bylines, and refuses what
//! passes the limits.

use crate::model::{
    block_text, fold, grouped, human_bytes, labelled_row, BlockMark, DocStatus, Document, Limits,
    Place,
};
use crate::ReadError;

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
