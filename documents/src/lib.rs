//! Every format people keep knowledge in, read into one document model.
//!
//! A reader turns a file's bytes into [`Document`]: blocks (headings, paragraphs, list
//! items, table rows labelled by their header, captions, code, sheet rows) rendered
//! into the **archived text** quotes are cut from, with each block's heading path and
//! place (page, slide, sheet row) kept beside it. Formats: HTML (dom_smoothie's main
//! text, then its structure), Markdown (pulldown-cmark, rendered without markup),
//! plain text, PDF (the text layer, page by page), DOCX, PPTX (slides and notes),
//! XLSX/ODS (calamine), CSV, ODT/ODP and EPUB.
//!
//! Every reader is bounded ([`Limits`]: text size, block count, inflated size of each
//! compressed part and of a whole container, element nesting) and [`read_bounded`]
//! adds a time bound and contains panics, so a hostile file ends as a [`ReadError`]
//! with its reason — never a panic, a stall or a silent skip. Dates and statuses
//! (current, draft, archived, superseded) come from metadata, the text and the path
//! ([`dates`]).
//!
//! This crate does no I/O: callers hand it bytes.

mod builder;
pub mod dates;
mod formats;
pub mod model;
mod stated_date;
#[cfg(any(test, feature = "writers"))]
pub mod writers;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use builder::Builder;
pub use dates::{content_date, find_iso_date, metadata_date, path_status, text_status};
pub use model::{
    fold, grouped, human_bytes, labelled_row, BlockMark, DocStatus, Document, Limits, Place,
};

/// Version of every reader's output (text, marks, title, date, status). Bump it
/// whenever any reader's output can change: stored indexes, validators and
/// checkpoints built by another version are then rebuilt instead of reused.
/// 4: a file that states no title and starts with a table row is titled by its name.
/// 5: email, mailboxes and chat exports (several documents a file); quoted and unit
/// ranges; authors; PDF lines of one paragraph joined; dates the text contradicts.
/// 6: PDF streams inflated within the limits; text, Markdown, CSV and sheets past the
/// text, block or row limits read in part; `.log` files read as text.
/// 7: a text table's header of one cell fewer than its rows labels all columns but
/// the first (a stub column's blank header: a PDF's "2025  2024" over its rows); a
/// row of one cell fewer keeps its table (its last cell blank).
/// 8: a lone text or PDF line naming a section dated after a comma ("Penetration
/// test, July 2026") is a heading; a table's cell ("renewal_date: 2027-10-31") dates
/// no document.
pub const READER_VERSION: u32 = 8;

/// The formats deepr reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Html,
    Markdown,
    Text,
    Pdf,
    Docx,
    Pptx,
    Xlsx,
    Ods,
    Csv,
    Odt,
    Odp,
    Epub,
    /// One email message (RFC 5322, MIME) with its attachments.
    Eml,
    /// A mailbox of messages, each with its attachments.
    Mbox,
    /// A Slack workspace export (`.zip`): one document per channel and day.
    Slack,
    /// A Mattermost bulk export (`.jsonl`): one document per channel and day.
    Mattermost,
}

/// Every format, for listings and tests.
pub const FORMATS: [Format; 16] = [
    Format::Html,
    Format::Markdown,
    Format::Text,
    Format::Pdf,
    Format::Docx,
    Format::Pptx,
    Format::Xlsx,
    Format::Ods,
    Format::Csv,
    Format::Odt,
    Format::Odp,
    Format::Epub,
    Format::Eml,
    Format::Mbox,
    Format::Slack,
    Format::Mattermost,
];

impl Format {
    /// Format from a file extension (case-insensitive); `None` for unsupported files.
    pub fn from_extension(ext: &str) -> Option<Self> {
        Some(match ext.to_ascii_lowercase().as_str() {
            "html" | "htm" | "xhtml" => Self::Html,
            "md" | "markdown" => Self::Markdown,
            "txt" | "text" | "log" => Self::Text,
            "pdf" => Self::Pdf,
            "docx" => Self::Docx,
            "pptx" => Self::Pptx,
            "xlsx" | "xlsm" => Self::Xlsx,
            "ods" => Self::Ods,
            "csv" => Self::Csv,
            "odt" => Self::Odt,
            "odp" => Self::Odp,
            "epub" => Self::Epub,
            "eml" => Self::Eml,
            "mbox" | "mbx" => Self::Mbox,
            "zip" => Self::Slack,
            "jsonl" => Self::Mattermost,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Html => "html",
            Self::Markdown => "markdown",
            Self::Text => "text",
            Self::Pdf => "pdf",
            Self::Docx => "docx",
            Self::Pptx => "pptx",
            Self::Xlsx => "xlsx",
            Self::Ods => "ods",
            Self::Csv => "csv",
            Self::Odt => "odt",
            Self::Odp => "odp",
            Self::Epub => "epub",
            Self::Eml => "eml",
            Self::Mbox => "mbox",
            Self::Slack => "slack",
            Self::Mattermost => "mattermost",
        }
    }

    /// Whether a file of this format holds several documents ([`read_parts`]): a
    /// message and its attachments, a mailbox, a chat export.
    pub fn holds_many(self) -> bool {
        matches!(
            self,
            Self::Eml | Self::Mbox | Self::Slack | Self::Mattermost
        )
    }

    /// Whether the first part of a file of this format, cut at a line end, is itself a
    /// file of the format that reads as what it holds (plain text and logs, Markdown,
    /// CSV), so a file too large to read whole is read up to a limit. A zip container
    /// or a PDF cut short is no file at all.
    pub fn reads_in_part(self) -> bool {
        matches!(self, Self::Text | Self::Markdown | Self::Csv)
    }

    /// Why a file with this extension is not read, when deepr knows the format but
    /// has no reader for it.
    pub fn unread_reason(ext: &str) -> Option<&'static str> {
        match ext.to_ascii_lowercase().as_str() {
            "msg" => Some("an Outlook .msg message (no maintained reader); save it as .eml from Outlook (File > Save As) to read it"),
            "pst" | "ost" => Some("an Outlook mailbox file; export its messages as .eml or .mbox to read them"),
            _ => None,
        }
    }
}

/// One document of a file: the file itself (`name` empty) or a document it holds —
/// an email's attachment (`budget-note.pdf`), an mbox's message (`message-2`, its
/// attachments `message-2#plan.xlsx`), a chat export's channel-day
/// (`general/2026-03-04`). A part that could not be read keeps its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub name: String,
    pub read: Result<Document, ReadError>,
}

impl Part {
    /// The part's locator under the file's: `budget.eml#budget-note.pdf`.
    pub fn locator(&self, file: &str) -> String {
        if self.name.is_empty() {
            file.to_string()
        } else {
            format!("{file}#{}", self.name)
        }
    }
}

/// Why a document could not be read. Each is reported per file and never aborts a run.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ReadError {
    #[error("unsupported file type{0}")]
    Unsupported(String),
    #[error("binary content (NUL bytes), not a text document")]
    Binary,
    #[error("invalid UTF-8 at byte {0}")]
    InvalidUtf8(usize),
    #[error("encrypted (password-protected); save an unprotected copy to read it")]
    Encrypted,
    #[error("no text layer (a scanned or image-only PDF); run OCR on it first")]
    NoTextLayer,
    #[error("too large: {0}")]
    TooLarge(String),
    #[error("too complex: {0}")]
    TooComplex(String),
    #[error("malformed {format}: {detail}")]
    Malformed {
        format: &'static str,
        detail: String,
    },
    #[error("no readable text found")]
    NoText,
    #[error("too complex: reading took longer than {0} s")]
    TimedOut(u64),
    #[error("the {0} reader failed on this file (a parser bug, contained)")]
    ReaderPanicked(&'static str),
}

impl ReadError {
    pub(crate) fn malformed(format: Format, detail: impl std::fmt::Display) -> Self {
        Self::Malformed {
            format: format.as_str(),
            detail: detail.to_string(),
        }
    }
}

/// Reader threads [`read_bounded`] lets run at once, abandoned ones included.
pub const MAX_READERS: usize = 32;

/// Reader threads running now.
static READERS: AtomicUsize = AtomicUsize::new(0);

/// How long [`read_bounded`] lets one document take by default.
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Read a document. Dates and statuses from the text and the format's metadata are
/// set; the caller adds what the path says ([`Document::apply_path`]).
pub fn read(bytes: &[u8], format: Format, limits: &Limits) -> Result<Document, ReadError> {
    if format.holds_many() {
        let mut parts = formats::read_parts(bytes, format, limits)?;
        return match parts.iter().position(|p| p.name.is_empty()) {
            Some(at) => parts.swap_remove(at).read,
            None => Err(ReadError::Unsupported(format!(
                " (a .{} file holds several documents; read it with read_parts)",
                format.as_str()
            ))),
        };
    }
    formats::read(bytes, format, limits)
}

/// Every document of a file: one part for most formats, the message and its
/// attachments, a mailbox's messages or a chat export's channel-days for the formats
/// that [hold many](Format::holds_many). An error is the whole file's.
pub fn read_parts(bytes: &[u8], format: Format, limits: &Limits) -> Result<Vec<Part>, ReadError> {
    if format.holds_many() {
        return formats::read_parts(bytes, format, limits);
    }
    formats::read(bytes, format, limits).map(|doc| {
        vec![Part {
            name: String::new(),
            read: Ok(doc),
        }]
    })
}

/// [`read_parts`] on its own thread, within `timeout`, with panics contained (see
/// [`read_bounded`]).
pub fn read_parts_bounded(
    bytes: Vec<u8>,
    format: Format,
    limits: Limits,
    timeout: Duration,
) -> Result<Vec<Part>, ReadError> {
    on_reader_thread(format, timeout, move || read_parts(&bytes, format, &limits))
}

/// [`read`] on its own thread, within `timeout`, with panics contained. A reader that
/// runs out of time is left to finish on its thread; its result is discarded.
pub fn read_bounded(
    bytes: Vec<u8>,
    format: Format,
    limits: Limits,
    timeout: Duration,
) -> Result<Document, ReadError> {
    on_reader_thread(format, timeout, move || read(&bytes, format, &limits))
}

/// `reading` on a reader thread of its own, within `timeout`, panics contained.
fn on_reader_thread<T: Send + 'static>(
    format: Format,
    timeout: Duration,
    reading: impl FnOnce() -> Result<T, ReadError> + Send + std::panic::UnwindSafe + 'static,
) -> Result<T, ReadError> {
    // Readers that ran out of time keep their threads until they finish (each within
    // its limits); past MAX_READERS at once, more files are refused rather than
    // letting hostile files pile up work.
    if READERS.fetch_add(1, Ordering::SeqCst) >= MAX_READERS {
        READERS.fetch_sub(1, Ordering::SeqCst);
        return Err(ReadError::TooComplex(format!(
            "{MAX_READERS} readers are still busy with earlier files; try again later"
        )));
    }
    let (send, receive) = std::sync::mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name(format!("read-{}", format.as_str()))
        .spawn(move || {
            let result = std::panic::catch_unwind(reading)
                .unwrap_or(Err(ReadError::ReaderPanicked(format.as_str())));
            READERS.fetch_sub(1, Ordering::SeqCst);
            let _ = send.send(result);
        });
    if spawned.is_err() {
        READERS.fetch_sub(1, Ordering::SeqCst);
        return Err(ReadError::TooComplex(
            "no reader thread could be started".into(),
        ));
    }
    match receive.recv_timeout(timeout) {
        Ok(result) => result,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            Err(ReadError::TimedOut(timeout.as_secs()))
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Err(ReadError::ReaderPanicked(format.as_str()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Any bytes in any format: a document or a typed error, never a panic.
        #[test]
        fn any_bytes_in_any_format(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            for format in FORMATS {
                let _ = read(&bytes, format, &Limits::tight());
            }
        }

        /// Any text as a text format: what is read is the blocks joined by blank
        /// lines, never an empty document.
        #[test]
        fn any_text_reads_or_says_why(text in "\\PC{0,400}") {
            for format in [Format::Text, Format::Markdown, Format::Html, Format::Csv] {
                if let Ok(doc) = read(text.as_bytes(), format, &Limits::tight()) {
                    proptest::prop_assert!(!doc.text.trim().is_empty());
                    proptest::prop_assert!(doc.marks.iter().all(|m| doc.text.is_char_boundary(m.at)));
                }
            }
        }
    }

    #[test]
    fn a_table_without_a_title_is_titled_by_its_file_name_and_a_text_by_its_first_line() {
        let csv = b"Account,Stage,ARR\nLakeshore Health System,Negotiation,4.62\n";
        let mut table = read(csv, Format::Csv, &Limits::default()).expect("a CSV reads");
        assert!(table.untitled, "{}", table.title);
        table.apply_path("sales/pipeline-q2-2026.csv");
        assert_eq!(table.title, "pipeline q2 2026");
        let mut text = read(
            b"Legacy storage notes, 2019-05-02\n\nThe page size was 1024 bytes.",
            Format::Text,
            &Limits::default(),
        )
        .expect("a text reads");
        text.apply_path("legacy-notes.txt");
        assert_eq!(text.title, "Legacy storage notes, 2019-05-02");
    }

    #[test]
    fn the_bounded_reader_returns_the_readers_verdict() {
        let deep = "<div>".repeat(100);
        let limits = Limits {
            max_nesting: 10,
            ..Limits::default()
        };
        let result = read_bounded(deep.into_bytes(), Format::Html, limits, READ_TIMEOUT);
        assert!(
            matches!(result, Err(ReadError::TooComplex(_))),
            "{result:?}"
        );
        let doc = read_bounded(
            b"# Title\n\nText.".to_vec(),
            Format::Markdown,
            Limits::default(),
            READ_TIMEOUT,
        );
        assert_eq!(doc.map(|d| d.text).as_deref(), Ok("Title\n\nText."));
        // A reader that outlives its time is abandoned with a reason (8 MB of list
        // items take far longer than a millisecond to read).
        let long = "- an item of a very long list\n"
            .repeat(280_000)
            .into_bytes();
        let late = read_bounded(
            long,
            Format::Markdown,
            Limits::default(),
            std::time::Duration::from_millis(1),
        );
        assert!(matches!(late, Err(ReadError::TimedOut(_))), "{late:?}");
    }
}
