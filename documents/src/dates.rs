//! A document's date and status.
//!
//! Dates come from the content — the format's metadata (HTML meta tags, PDF Info,
//! `docProps/core.xml`, EPUB OPF), else a date the text marks as its own ("last
//! modified on …", "Prepared by …, 2026-04-14"), else a date in its first line — never
//! from file modification times (a checkout sets them to the moment of the clone, so
//! reports would depend on the clock), and never an unmarked date from the body (a
//! release date is not the page's date). Where the metadata's date and the byline of
//! the text's opening or closing lines ("Product team, March 2026") are more than a
//! year apart, the text wins and [`Document::date_basis`] says why: a file made from a
//! template keeps the template's date (python-docx's says 2013-12-23).
//!
//! The status — current, draft, archived, superseded — comes from the text's head
//! ("SUPERSEDED", "Status: Draft") and from the path (`archive/`, `old/`, `draft`,
//! `v0.9`): stale documents are still read, and everything downstream is told.

use crate::model::{DocStatus, Document};
pub use crate::stated_date::{stated_date, StatedDate};
use crate::stated_date::{stated_date_outside, text_over_metadata};

/// Phrases that introduce the date a page was written or last changed.
const DATE_MARKERS: &[&str] = &[
    "last modified",
    "last updated",
    "updated on",
    "updated:",
    "published",
    "modified on",
    "date:",
    "prepared",
    "as of",
    "effective",
    "issued",
];

/// The date a text states for itself: a date right after a marker such as "last
/// modified on" (the last such marker wins: footers follow headers), else its
/// [`stated_date`] (a byline), else a date in the text's first 200 bytes (a dated
/// header line). Other dates in the body — release dates, history — are not the
/// page's date, so none is better than a wrong one; nor is a column's
/// ("renewal_date: 2027-10-31"). `text` may be a page's raw markup.
pub fn content_date(text: &str) -> Option<String> {
    date_of(text, false)
}

/// [`content_date`] of a read document's text, whose table rows are lines of cells
/// ("Framework: SOC 2 · Date: 2026-08-21"): a row's date is not the document's.
fn text_date(text: &str) -> Option<String> {
    date_of(text, true)
}

/// [`content_date`], passing over markers in table rows when `rows` (a read text's
/// lines of cells).
fn date_of(text: &str, rows: bool) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let mut found = None;
    for marker in DATE_MARKERS {
        for (at, _) in lower.match_indices(marker) {
            if !marks_the_page(&lower, at, rows) {
                continue;
            }
            let start = at + marker.len();
            let mut end = (start + 80).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            if let Some(window) = text.get(start..end) {
                if let Some(date) = find_iso_date(window) {
                    if found.as_ref().is_none_or(|(pos, _)| start > *pos) {
                        found = Some((start, date));
                    }
                }
            }
        }
    }
    if let Some((_, date)) = found {
        return Some(date);
    }
    if let Some(stated) = stated_date(text) {
        return Some(stated.date);
    }
    let head_end = (0..=200.min(text.len()))
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    text[..head_end]
        .lines()
        .filter(|line| !rows || !line.contains(crate::model::CELL_SEPARATOR))
        .find_map(find_iso_date)
}

/// Bytes either side of a marker searched for the table row it may stand in.
const ROW_WINDOW: usize = 240;

/// Whether a date marker at byte `at` of `lower` speaks for the page: not a column's
/// name ("renewal_date:") and, in a read text (`rows`), in no table row (a line of
/// cells, looked for within [`ROW_WINDOW`] bytes: a bounded search on any input).
fn marks_the_page(lower: &str, at: usize, rows: bool) -> bool {
    let before = lower[..at].chars().next_back();
    if before == Some('_') {
        return false;
    }
    if !rows {
        return true;
    }
    if before.is_some_and(char::is_alphanumeric) {
        return false;
    }
    let boundary = |mut i: usize| {
        while !lower.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let from = boundary(at.saturating_sub(ROW_WINDOW));
    let to = boundary((at + ROW_WINDOW).min(lower.len()));
    let line_start = lower[from..at].rfind('\n').map_or(from, |i| from + i + 1);
    let line_end = lower[at..to].find('\n').map_or(to, |i| at + i);
    !lower[line_start..line_end].contains(crate::model::CELL_SEPARATOR)
}

/// The first plausible `YYYY-MM-DD` date in the text (years 1900–2199).
pub fn find_iso_date(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    if bytes.len() < 10 {
        return None;
    }
    for i in 0..=bytes.len() - 10 {
        let window = &bytes[i..i + 10];
        let digits_at = |r: std::ops::Range<usize>| window[r].iter().all(u8::is_ascii_digit);
        if digits_at(0..4)
            && window[4] == b'-'
            && digits_at(5..7)
            && window[7] == b'-'
            && digits_at(8..10)
        {
            let before_ok = i == 0 || !bytes[i - 1].is_ascii_digit();
            let after_ok = bytes.get(i + 10).is_none_or(|b| !b.is_ascii_digit());
            let year: u32 = text[i..i + 4].parse().ok()?;
            let month: u32 = text[i + 5..i + 7].parse().ok()?;
            let day: u32 = text[i + 8..i + 10].parse().ok()?;
            if before_ok
                && after_ok
                && (1900..2200).contains(&year)
                && (1..=12).contains(&month)
                && (1..=31).contains(&day)
            {
                return Some(text[i..i + 10].to_string());
            }
        }
    }
    None
}

/// How far into a document its own status line may be (bytes).
const STATUS_HEAD_BYTES: usize = 1_000;

/// The status a text gives itself: "superseded" (any case) or "DRAFT" (capitals) in
/// its head, or a `Status:` line anywhere that says so. A body that merely mentions an
/// older plan ("this supersedes…") is still current.
pub fn text_status(text: &str) -> Option<DocStatus> {
    let head_end = (0..=STATUS_HEAD_BYTES.min(text.len()))
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    let head = &text[..head_end];
    let head_lower = head.to_lowercase();
    let status_lines: Vec<String> = text
        .lines()
        .map(|l| l.trim().to_lowercase())
        .filter(|l| l.starts_with("status:") || l.starts_with("document status:"))
        .collect();
    let says = |word: &str| status_lines.iter().any(|l| l.contains(word));
    if head_lower.contains("superseded") || says("superseded") || says("obsolete") {
        return Some(DocStatus::Superseded);
    }
    if says("archived") {
        return Some(DocStatus::Archived);
    }
    let draft_word = head
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w == "DRAFT");
    if draft_word || says("draft") {
        return Some(DocStatus::Draft);
    }
    None
}

/// Folder names that hold documents kept for the record.
const ARCHIVE_FOLDERS: &[&str] = &[
    "archive",
    "archives",
    "archived",
    "old",
    "obsolete",
    "deprecated",
    "previous",
    "superseded",
    "historical",
];

/// The status a corpus-relative path gives a document: an archive folder, a name that
/// says superseded, old or draft, or a pre-release version (`v0.9`).
pub fn path_status(relpath: &str) -> Option<DocStatus> {
    let lower = relpath.to_lowercase();
    let mut parts: Vec<&str> = lower.split('/').collect();
    let file = parts.pop().unwrap_or("");
    if parts.iter().any(|p| ARCHIVE_FOLDERS.contains(p)) {
        return Some(DocStatus::Archived);
    }
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    let words: Vec<&str> = stem
        .split(|c: char| !c.is_alphanumeric() && c != '.')
        .filter(|w| !w.is_empty())
        .collect();
    if words
        .iter()
        .any(|w| matches!(*w, "superseded" | "obsolete" | "old" | "outdated"))
    {
        return Some(DocStatus::Superseded);
    }
    let pre_release = words.iter().any(|w| {
        w.strip_prefix("v0.")
            .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()))
    });
    if parts.contains(&"drafts")
        || words.iter().any(|w| *w == "draft" || *w == "wip")
        || pre_release
    {
        return Some(DocStatus::Draft);
    }
    None
}

/// `YYYY-MM-DD` from a PDF date (`D:20260414093000+02'00'`) or an ISO timestamp
/// (`2026-04-14T09:30:00Z`, as `docProps/core.xml` and OPF write them).
pub fn metadata_date(value: &str) -> Option<String> {
    let value = value.trim();
    if let Some(digits) = value
        .strip_prefix("D:")
        .or_else(|| value.strip_prefix("d:"))
    {
        let digits: String = digits.chars().take(8).collect();
        if digits.len() == 8 && digits.chars().all(|c| c.is_ascii_digit()) {
            return find_iso_date(&format!(
                "{}-{}-{}",
                &digits[..4],
                &digits[4..6],
                &digits[6..]
            ));
        }
        return None;
    }
    find_iso_date(value.get(..10.min(value.len())).unwrap_or(""))
}

impl Document {
    /// The date the document's own text settles: where its format gave none, the
    /// [`content_date`]; where the metadata's date and the text's [`stated_date`] (its
    /// byline, quoted text passed over) are more than a year apart, the text's, with
    /// [`Document::date_basis`] saying so (a template's 2013 creation date under a
    /// brief signed "March 2026"). Dates within a year keep the metadata's.
    pub fn settle_date(&mut self) {
        let Some(metadata) = self.date.as_deref() else {
            self.date = text_date(&self.text);
            return;
        };
        let Some(stated) = stated_date_outside(&self.text, &self.quoted) else {
            return;
        };
        if let Some(basis) = text_over_metadata(metadata, &stated) {
            self.date = Some(stated.date);
            self.date_basis = Some(basis);
        }
    }

    /// What the path adds: its status when the text and metadata said nothing
    /// stronger (a superseded text in a current folder stays superseded), and the
    /// title of a document that states none (`sales/pipeline-q2-2026.csv` →
    /// "pipeline q2 2026", not its first data row).
    pub fn apply_path(&mut self, relpath: &str) {
        if let Some(status) = path_status(relpath) {
            self.status = self.status.max(status);
        }
        if self.untitled {
            if let Some(title) = title_from_path(relpath) {
                self.title = title;
                self.untitled = false;
            }
        }
    }
}

/// A file name as a title: its stem with `-`, `_` and `.` as spaces.
fn title_from_path(relpath: &str) -> Option<String> {
    let name = relpath.rsplit(['/', '\\']).next()?;
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    let title = stem
        .split(['-', '_', '.', ' '])
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    (!title.is_empty()).then_some(title)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        // Any text, markup or read, multi-byte or not: a date or none, never a panic;
        // a date found is written `YYYY-MM` or `YYYY-MM-DD`.
        #[test]
        fn any_text_gets_a_date_or_none(text in "(\\PC|[·:_\n ]|date:|published|2026-03-02){0,80}") {
            for date in [content_date(&text), text_date(&text)].into_iter().flatten() {
                let shape = (date.len() == 7 || date.len() == 10)
                    && date[..4].bytes().all(|b| b.is_ascii_digit())
                    && date.as_bytes()[4] == b'-';
                proptest::prop_assert!(shape, "{date} from {text:?}");
            }
        }
    }

    #[test]
    fn a_table_cell_dates_no_page() {
        let sheet = "rank: 1 · account: Northmoor · renewal_date: 2029-06-30\n\nrank: 2 · account: Pennant · renewal_date: 2027-10-31";
        assert_eq!(text_date(sheet), None);
        let rows = "Framework: SOC 2 · Date: 2026-08-21\n\nNotes follow.";
        assert_eq!(text_date(rows), None);
        assert_eq!(
            text_date("Fleet report\n\nDate: 2026-03-02\n\nRobots: 1,240."),
            Some("2026-03-02".into())
        );
        // A page's raw markup keeps its dates: a navigation bar's dots, JSON-LD's
        // "datePublished".
        assert_eq!(
            content_date("<nav>Home · About</nav> Published: 2026-03-02"),
            Some("2026-03-02".into())
        );
        assert_eq!(
            content_date(r#"{"datePublished":"2026-04-01"}"#),
            Some("2026-04-01".into())
        );
    }

    #[test]
    fn an_untitled_file_is_titled_by_its_name() {
        assert_eq!(
            title_from_path("sales/pipeline-q2-2026.csv").as_deref(),
            Some("pipeline q2 2026")
        );
        assert_eq!(
            title_from_path("notes_2024.v2.txt").as_deref(),
            Some("notes 2024 v2")
        );
        assert_eq!(title_from_path("dir/.csv"), None);
    }

    #[test]
    fn dates_come_from_content() {
        assert_eq!(
            find_iso_date("updated 2024-01-15."),
            Some("2024-01-15".into())
        );
        assert_eq!(find_iso_date("v12024-01-159"), None);
        assert_eq!(find_iso_date("2024-13-01"), None);
        assert_eq!(find_iso_date("é2024-02-03"), Some("2024-02-03".into()));
    }

    #[test]
    fn the_page_date_is_the_marked_one_not_the_first_mentioned() {
        let page = "Version 3.7.9 (2011-11-01) changed this.\n... body ...\nThis page last modified on 2022-10-04 12:00";
        let padded = format!("{}{page}", "x".repeat(300));
        assert_eq!(content_date(&padded), Some("2022-10-04".into()));
        assert_eq!(
            content_date("Legacy notes, 2019-05-02\nbody"),
            Some("2019-05-02".into())
        );
        let unmarked = format!("{} released 2011-11-01", "x".repeat(300));
        assert_eq!(
            content_date(&unmarked),
            None,
            "an unmarked date deep in the body is not the page date"
        );
        assert_eq!(
            content_date("Updated: 2020-01-01 ... last updated 2023-05-06"),
            Some("2023-05-06".into())
        );
    }

    /// Metadata date, text, expected date, expected basis.
    type SettleCase<'a> = (Option<&'a str>, &'a str, Option<&'a str>, Option<&'a str>);

    /// A document of `text` whose metadata gave `metadata`, its date settled.
    fn settled(metadata: Option<&str>, text: &str) -> (Option<String>, Option<String>) {
        let mut builder = crate::Builder::new(crate::Limits::default());
        for block in text.split("\n\n") {
            builder.paragraph(block).unwrap();
        }
        let mut doc = builder
            .finish(metadata.map(str::to_string), DocStatus::Current)
            .unwrap();
        doc.settle_date();
        (doc.date, doc.date_basis)
    }

    #[test]
    fn the_text_wins_over_metadata_it_contradicts_by_more_than_a_year() {
        let brief = "Product brief\n\nProduct team, March 2026\n\nThe tracker ships in May.";
        let signed = "Brief\n\nBody.\n\nPrepared by Dana Ruiz, 2 March 2026";
        let cases: &[SettleCase] = &[
            (
                Some("2013-12-23"),
                brief,
                Some("2026-03"),
                Some("dated 2026-03 by its text (\"Product team, March 2026\"); the file's metadata says 2013-12-23"),
            ),
            (Some("2026-02-27"), brief, Some("2026-02-27"), None),
            (Some("2025-03-31"), brief, Some("2025-03-31"), None),
            (
                Some("2013-12-23"),
                signed,
                Some("2026-03-02"),
                Some("dated 2026-03-02 by its text (\"Prepared by Dana Ruiz, 2 March 2026\"); the file's metadata says 2013-12-23"),
            ),
            (
                Some("2013-12-23"),
                "Memo\n\nDate: 2026-03-02\n\nBody.",
                Some("2026-03-02"),
                Some("dated 2026-03-02 by its text (\"Date: 2026-03-02\"); the file's metadata says 2013-12-23"),
            ),
            (
                Some("2026-03-01"),
                "About us\n\nWe have served clients since 2013.\n\nAcme, founded in 2013",
                Some("2026-03-01"),
                None,
            ),
            (
                Some("2026-03-01"),
                "Funding\n\nSeed, January 2012\n\nSeries A, March 2013\n\nSeries B, May 2015",
                Some("2026-03-01"),
                None,
            ),
            (
                Some("2026-03-01"),
                "Plan\n\nBy March 2013 we had shipped v1, and in March 2013 we hired.",
                Some("2026-03-01"),
                None,
            ),
            (None, brief, Some("2026-03"), None),
        ];
        for (metadata, text, date, basis) in cases {
            let (got_date, got_basis) = settled(*metadata, text);
            assert_eq!(got_date.as_deref(), *date, "{text}");
            assert_eq!(got_basis.as_deref(), *basis, "{text}");
        }
    }

    #[test]
    fn datelines_and_what_is_not_one() {
        let cases: &[(&str, Option<&str>)] = &[
            ("Product team, March 2026", Some("2026-03")),
            ("Prepared by Dana Ruiz, 2 March 2026", Some("2026-03-02")),
            (
                "Prepared by Jane Okafor, Head of Finance, 2026-04-14",
                Some("2026-04-14"),
            ),
            ("Date: 2026-03-02", Some("2026-03-02")),
            ("Date: March 2, 2026 (rev. 3)", Some("2026-03-02")),
            ("Last updated on 2nd Mar. 2026", Some("2026-03-02")),
            (
                "Prepared by the product team in March 2026",
                Some("2026-03"),
            ),
            ("Dana Ruiz — 2 March 2026", Some("2026-03-02")),
            ("March 2026", Some("2026-03")),
            ("Founded in 2013", None),
            ("We have grown since March 2013", None),
            ("Last updated figures show growth since March 2013", None),
            ("Date: 31 February 2026", None),
            ("Date: TBD", None),
            ("Year: 2013 · Revenue: $4M · Date: March 2013", None),
            ("Q1 2026 report, March 2026", None),
            ("Team, may 2026", None),
        ];
        for (line, date) in cases {
            let got = stated_date(line).map(|s| s.date);
            assert_eq!(got.as_deref(), *date, "{line}");
        }
        let long = format!("Notes{}, March 2026", " word".repeat(30));
        assert_eq!(stated_date(&long), None, "a sentence is no byline");
        let mid = format!(
            "Title\n{}Product team, March 2026\n{}",
            "Body.\n".repeat(6),
            "More.\n".repeat(6)
        );
        assert_eq!(stated_date(&mid), None, "a dateline mid-text is a mention");
    }

    #[test]
    fn quoted_text_gives_no_date() {
        let mut builder = crate::Builder::new(crate::Limits::default());
        builder.paragraph("Thanks, see below.").unwrap();
        builder
            .quoted_paragraph("Product team, March 2013")
            .unwrap();
        let mut doc = builder
            .finish(Some("2026-03-02".into()), DocStatus::Current)
            .unwrap();
        doc.settle_date();
        assert_eq!(doc.date.as_deref(), Some("2026-03-02"));
        assert_eq!(doc.date_basis, None);
    }

    #[test]
    fn statuses_from_text_and_path() {
        assert_eq!(
            text_status("Concept one-pager\nNOTE: early concept figures - superseded by the 2026 product brief."),
            Some(DocStatus::Superseded)
        );
        assert_eq!(
            text_status("DRAFT - not for circulation\nbody"),
            Some(DocStatus::Draft)
        );
        assert_eq!(
            text_status("Report\nStatus: Archived"),
            Some(DocStatus::Archived)
        );
        assert_eq!(
            text_status("This plan supersedes the old one. A draft horse."),
            None
        );
        assert_eq!(
            path_status("ops/archive/q1-2025-report.pdf"),
            Some(DocStatus::Archived)
        );
        assert_eq!(
            path_status("product/concept-one-pager-v0.9.md"),
            Some(DocStatus::Draft)
        );
        assert_eq!(
            path_status("finance/budget-draft.docx"),
            Some(DocStatus::Draft)
        );
        assert_eq!(
            path_status("finance/plan-superseded.md"),
            Some(DocStatus::Superseded)
        );
        assert_eq!(path_status("finance/oldham-office.md"), None);
        assert_eq!(path_status("product/v1.2-notes.md"), None);
    }

    #[test]
    fn metadata_dates() {
        assert_eq!(
            metadata_date("D:20260414093000+02'00'"),
            Some("2026-04-14".into())
        );
        assert_eq!(
            metadata_date("2026-04-14T09:30:00Z"),
            Some("2026-04-14".into())
        );
        assert_eq!(metadata_date("D:2026"), None);
        assert_eq!(metadata_date("yesterday"), None);
        assert_eq!(
            content_date("Q1 report\nPrepared by Jane Okafor, Head of Finance, 2026-04-14\n"),
            Some("2026-04-14".into())
        );
    }
}
