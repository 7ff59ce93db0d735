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

use crate::model::{DocStatus, Document, CELL_SEPARATOR};

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
/// page's date, so none is better than a wrong one.
pub fn content_date(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let mut found = None;
    for marker in DATE_MARKERS {
        for (at, _) in lower.match_indices(marker) {
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
    find_iso_date(&text[..head_end])
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

/// How many non-empty lines at each end of a text may hold its dateline.
const DATELINE_LINES: usize = 5;

/// Longest line read as a dateline (bytes): a byline is short, a sentence is not.
const DATELINE_BYTES: usize = 120;

/// Most words before an unmarked dateline's date ("Product team, March 2026").
const SIGNER_WORDS: usize = 6;

/// Most days between a file's metadata date and its text's own date that still agree
/// (a year, a leap day included); further apart, the text wins.
const AGREEING_DAYS: i64 = 366;

/// Phrases that open a dateline ("Prepared by Dana Ruiz, 2 March 2026"). Every one
/// takes a date that ends the line; those marked `true` also one right after them
/// ("Date: 2026-03-02 (rev. 3)").
const DATELINE_MARKERS: &[(&str, bool)] = &[
    ("date:", true),
    ("dated", true),
    ("prepared by", false),
    ("prepared on", true),
    ("prepared:", true),
    ("written by", false),
    ("compiled by", false),
    ("authored by", false),
    ("last updated", true),
    ("last modified", true),
    ("last revised", true),
    ("updated:", true),
    ("updated on", true),
    ("revised:", true),
    ("revised on", true),
    ("issued:", true),
    ("issued on", true),
    ("published:", true),
    ("published on", true),
];

/// Month names, January first (their first three letters, and `Sept`, also count).
const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// A date a text gives for itself, and the line that gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatedDate {
    /// `YYYY-MM-DD`, or `YYYY-MM` where the line names only the month.
    pub date: String,
    /// The line, trimmed.
    pub line: String,
}

/// A calendar date, to the day or to the month.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Date {
    year: i64,
    month: i64,
    day: Option<i64>,
}

impl Date {
    /// A real date of years 1900–2199 (no 31 February).
    fn new(year: i64, month: i64, day: Option<i64>) -> Option<Self> {
        let real = (1900..2200).contains(&year) && (1..=12).contains(&month);
        let fits = |d: i64| (1..=month_length(year, month)).contains(&d);
        (real && day.is_none_or(fits)).then_some(Self { year, month, day })
    }

    /// `YYYY-MM-DD` or `YYYY-MM`.
    fn parse(text: &str) -> Option<Self> {
        let mut parts = text.splitn(3, '-');
        let mut number = |len: usize| {
            let part = parts.next().filter(|p| p.len() == len)?;
            part.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| part.parse().ok())?
        };
        let (year, month) = (number(4)?, number(2)?);
        let day = match text.len() {
            7 => None,
            10 => Some(number(2)?),
            _ => return None,
        };
        Self::new(year, month, day)
    }

    fn iso(self) -> String {
        match self.day {
            Some(day) => format!("{:04}-{:02}-{day:02}", self.year, self.month),
            None => format!("{:04}-{:02}", self.year, self.month),
        }
    }

    /// The first and last day it covers, as days since 1970-01-01.
    fn days(self) -> (i64, i64) {
        let first = day_number(self.year, self.month, 1);
        match self.day {
            Some(day) => (first + day - 1, first + day - 1),
            None => (first, first + month_length(self.year, self.month) - 1),
        }
    }

    /// Days between the nearest days the two cover (0 where they overlap).
    fn distance(self, other: Self) -> i64 {
        let ((a0, a1), (b0, b1)) = (self.days(), other.days());
        (b0 - a1).max(a0 - b1).max(0)
    }
}

/// The days of a month.
fn month_length(year: i64, month: i64) -> i64 {
    let (next_year, next_month) = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    day_number(next_year, next_month, 1) - day_number(year, month, 1)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn day_number(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The month a capitalized word names (`March`, `Mar.`, `Sept`, `MARCH`).
fn month_number(word: &str) -> Option<i64> {
    if !word.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    let word = word.to_ascii_lowercase();
    let at = MONTHS.iter().position(|m| {
        *m == word
            || (word.len() == 3 && m.starts_with(&word))
            || (word == "sept" && *m == "september")
    })?;
    i64::try_from(at + 1).ok()
}

/// A day of the month: `2`, `02`, `2nd`.
fn day_of_month(word: &str) -> Option<i64> {
    let digits = word.trim_end_matches(['s', 't', 'n', 'd', 'r', 'h']);
    let ordinal = &word[digits.len()..];
    let ok = matches!(ordinal, "" | "st" | "nd" | "rd" | "th") && (1..=2).contains(&digits.len());
    ok.then(|| digits.parse().ok()).flatten()
}

/// The date some words are, all of them: `2026-03-02`, `March 2026`, `2 March 2026`,
/// `March 2, 2026` (a bare year is no date: "founded in 2013").
fn words_date(words: &[&str]) -> Option<Date> {
    let trim = |w: &&str| w.trim_matches([',', '.', ';', '(', ')']).to_string();
    let words: Vec<String> = words.iter().map(trim).collect();
    let year = |w: &str| (w.len() == 4).then(|| w.parse::<i64>().ok()).flatten();
    match words.as_slice() {
        [iso] if iso.len() == 10 => Date::parse(iso),
        [month, y] => Date::new(year(y)?, month_number(month)?, None),
        [a, b, y] => match month_number(b) {
            Some(month) => Date::new(year(y)?, month, Some(day_of_month(a)?)),
            None => Date::new(year(y)?, month_number(a)?, Some(day_of_month(b)?)),
        },
        _ => None,
    }
}

/// The date that ends `words`, the longest reading first, and how many words precede it.
fn ending_date(words: &[&str]) -> Option<(Date, usize)> {
    (1..=3.min(words.len()))
        .rev()
        .find_map(|n| Some((words_date(&words[words.len() - n..])?, words.len() - n)))
}

/// The date that opens `words` (after an `on`), the longest reading first.
fn leading_date(words: &[&str]) -> Option<Date> {
    let words = words.strip_prefix(&["on"]).unwrap_or(words);
    (1..=3.min(words.len()))
        .rev()
        .find_map(|n| words_date(&words[..n]))
}

/// Whether `line` (lower case) opens with `marker` as whole words.
fn opens_with(line: &str, marker: &str) -> bool {
    line.strip_prefix(marker)
        .is_some_and(|rest| marker.ends_with(':') || !rest.starts_with(char::is_alphanumeric))
}

/// The date a line gives as a dateline, and whether a marker introduced it: a marker
/// then a date ("Prepared by Dana Ruiz, 2 March 2026", "Date: 2026-03-02"), a short
/// signature then a date ending the line ("Product team, March 2026"), or a date
/// alone. Long lines (sentences) and table rows are none.
fn dateline(line: &str) -> Option<(Date, bool)> {
    if line.len() > DATELINE_BYTES || line.contains(CELL_SEPARATOR) {
        return None;
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let lower = line.to_lowercase();
    if let Some((marker, follows)) = DATELINE_MARKERS.iter().find(|(m, _)| opens_with(&lower, m)) {
        let rest = &words[marker.split_whitespace().count().min(words.len())..];
        let signed = |(date, before): (Date, usize)| marked_signer(&rest[..before]).then_some(date);
        let ending = ending_date(rest).and_then(signed);
        let date = ending.or_else(|| follows.then(|| leading_date(rest)).flatten());
        return date.map(|date| (date, true));
    }
    let (date, before) = ending_date(&words)?;
    signer(&words[..before]).then_some((date, false))
}

/// Whether the words before a date sign it: none, or at most [`SIGNER_WORDS`] words
/// without digits or sentence marks ending in a comma or a dash ("Product team,").
fn signer(words: &[&str]) -> bool {
    let Some((last, rest)) = words.split_last() else {
        return true;
    };
    let words = match *last {
        "-" | "–" | "—" | "|" => rest,
        last if last.ends_with(',') => words,
        _ => return false,
    };
    (1..=SIGNER_WORDS).contains(&words.len()) && words.iter().all(|w| plain_word(w))
}

/// Whether the words between a marker and the date ending its line sign it: as
/// [`signer`], or ending in `on` or `in` ("Prepared by the product team in March 2026").
fn marked_signer(words: &[&str]) -> bool {
    match words.split_last() {
        Some((&("on" | "in"), rest)) => {
            rest.len() <= SIGNER_WORDS && rest.iter().all(|w| plain_word(w))
        }
        _ => signer(words),
    }
}

/// A word of a signature: no digits, no sentence marks but a comma.
fn plain_word(word: &str) -> bool {
    !word.contains(|c: char| c.is_ascii_digit() || ":;!?".contains(c))
}

/// The date a text gives for itself in its opening or closing lines (its last
/// [`DATELINE_LINES`] first, then its first): a byline or signature such as "Product
/// team, March 2026", "Prepared by Dana Ruiz, 2 March 2026" or "Date: 2026-03-02".
/// Dates the text mentions in passing ("founded in 2013", a table of past years) are
/// none.
pub fn stated_date(text: &str) -> Option<StatedDate> {
    stated_date_outside(text, &[])
}

/// [`stated_date`], passing over lines in the byte ranges `skipped` (text quoted from
/// others).
fn stated_date_outside(text: &str, skipped: &[(usize, usize)]) -> Option<StatedDate> {
    let own = |line: &&str| {
        let at = line.as_ptr() as usize - text.as_ptr() as usize;
        !line.is_empty() && !skipped.iter().any(|(from, to)| (*from..*to).contains(&at))
    };
    let lines: Vec<&str> = text.lines().map(str::trim).filter(own).collect();
    let head = DATELINE_LINES.min(lines.len());
    let tail = lines.len().saturating_sub(DATELINE_LINES).max(head);
    window_date(&lines[tail..]).or_else(|| window_date(&lines[..head]))
}

/// The last dateline among some opening or closing lines. Two or more unmarked ones
/// ("Series A, March 2013", "Series B, May 2015") are a list of past dates, not a
/// signature, and are passed over.
fn window_date(lines: &[&str]) -> Option<StatedDate> {
    let found: Vec<(Date, bool, &str)> = lines
        .iter()
        .filter_map(|line| dateline(line).map(|(date, marked)| (date, marked, *line)))
        .collect();
    let unmarked = found.iter().filter(|(_, marked, _)| !marked).count();
    let (date, _, line) = found
        .into_iter()
        .rfind(|(_, marked, _)| *marked || unmarked < 2)?;
    Some(StatedDate {
        date: date.iso(),
        line: line.to_string(),
    })
}

/// Why the text's own date replaces the metadata's, if the two disagree by more than
/// a year (`dated 2026-03 by its text ("Product team, March 2026"); the file's
/// metadata says 2013-12-23`); `None` where they agree or either is unreadable.
pub fn text_over_metadata(metadata: &str, stated: &StatedDate) -> Option<String> {
    let (meta, text) = (Date::parse(metadata)?, Date::parse(&stated.date)?);
    (meta.distance(text) > AGREEING_DAYS).then(|| {
        format!(
            "dated {} by its text (\"{}\"); the file's metadata says {metadata}",
            stated.date, stated.line
        )
    })
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
            self.date = content_date(&self.text);
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
