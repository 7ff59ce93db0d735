//! The date a text states for itself: a dateline or byline ("Product team, March
//! 2026", "Memo — 4 March 2026 — Dana Ruiz") in its first or last lines, never a date
//! it merely mentions mid-text; and when that date wins over a file's metadata.

use crate::model::CELL_SEPARATOR;

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

/// Whether a short line is a section's name dated after one comma ("Penetration test,
/// July 2026", "Board meeting, 20 October 2026"): a date follows the comma, no dateline
/// marker ("Prepared by …") opens it, and no digit stands before the comma.
pub(crate) fn dated_name(line: &str) -> bool {
    let Some((name, date)) = line.split_once(',') else {
        return false;
    };
    let words: Vec<&str> = date.split_whitespace().collect();
    let lower = name.to_lowercase();
    !date.contains(',')
        && !name.trim().is_empty()
        && !name.contains(|c: char| c.is_ascii_digit())
        && !DATELINE_MARKERS.iter().any(|(m, _)| opens_with(&lower, m))
        && (1..=3).contains(&words.len())
        && words_date(&words).is_some()
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
pub(crate) fn stated_date_outside(text: &str, skipped: &[(usize, usize)]) -> Option<StatedDate> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_name_dated_after_a_comma_is_told_from_a_byline_and_a_sentence() {
        for line in [
            "Penetration test, July 2026",
            "Board meeting, 20 October 2026",
        ] {
            assert!(dated_name(line), "{line}");
        }
        for line in [
            "Prepared by Dana Ruiz, 2 March 2026",
            "Incident review, September 2, 2026",
            "Revenue rose, as expected",
            "Leeds, Manchester, March 2026",
            "Site 4, March 2026",
            "Penetration test",
            "Founded, 2013",
        ] {
            assert!(!dated_name(line), "{line}");
        }
    }
}
