//! The values a claim states that writers state once, across sections: its marked
//! figures ([`marked_figures`]: "$1,590", "99.2%", "3,412"), its dates ("September 15,
//! 2026", "15 Sept") and its counts with a unit ("250 kg", "a 26-week lead time") —
//! and its reference codes ("PT-26-H03") — each as written and as a key that writes the
//! same value the same way. A relayed writer stated one launch date in four sections,
//! and one pen-test finding in two: neither is a marked figure.
//! Years alone ("2026") and bare numbers ("15 of them") are none: a section may say them.

use crate::amounts::marked_figures;

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

/// Words a number is followed by that are no unit ("15 of", "250 and").
const NOT_UNITS: [&str; 28] = [
    "a", "an", "and", "are", "as", "at", "between", "by", "for", "from", "in", "into", "is", "of",
    "on", "or", "out", "over", "per", "than", "that", "the", "to", "under", "up", "was", "were",
    "with",
];

/// What kind of value a key names: dates may identify one fact across documents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// A marked figure ([`marked_figures`]).
    Figure,
    /// A day of a month, with its year when written; the key is "date:YYYY-MM-DD"
    /// ("date:?-MM-DD" without a year).
    Date,
    /// A number and the unit word after it; the key is "count:N unit" (singular).
    Count,
    /// A reference code ("PT-26-H03", "INC-2026-0902"): capitals and digits joined by
    /// hyphens; the key is "code:" and the code. A code names one thing wherever it is.
    Code,
}

/// One value a text states: as written, its key and its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatedValue {
    pub written: String,
    pub key: String,
    pub kind: ValueKind,
}

/// Every value `text` states, in its order: marked figures, dates, counts with units.
pub fn stated_values(text: &str) -> Vec<StatedValue> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out: Vec<StatedValue> = marked_figures(text)
        .into_iter()
        .map(|(written, key)| StatedValue {
            written,
            key,
            kind: ValueKind::Figure,
        })
        .collect();
    with_currency_codes(&words, &mut out);
    let mut i = 0;
    while i < words.len() {
        if let Some((value, used)) = date_at(&words[i..]) {
            out.push(value);
            i += used;
            continue;
        }
        if let Some(value) = count_at(&words[i..]).or_else(|| code_of(words[i])) {
            out.push(value);
        }
        i += 1;
    }
    out
}

/// An amount written with a currency code beside it ("1890 USD", "List price (USD):
/// 52000") keyed as with its sign ("$1890"): one price is one value however a row and a
/// sentence write it.
fn with_currency_codes(words: &[&str], values: &mut Vec<StatedValue>) {
    const CODES: [(&str, &str); 3] = [("usd", "$"), ("gbp", "£"), ("eur", "€")];
    for (i, word) in words.iter().enumerate() {
        let Some((_, sign)) = CODES.iter().find(|(code, _)| bare(word) == *code) else {
            continue;
        };
        let neighbours = [i.checked_sub(1), Some(i + 1)];
        for at in neighbours.into_iter().flatten() {
            let Some(next) = words.get(at) else {
                continue;
            };
            let written = next.trim_matches(|c: char| !c.is_ascii_digit());
            let number: String = written
                .chars()
                .filter(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let plain = written
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, ',' | '.'));
            if number.is_empty() || !plain || year_of(written).is_some() {
                continue;
            }
            let key = format!("{sign}{number}");
            match values
                .iter_mut()
                .find(|v| v.kind == ValueKind::Figure && v.key == number)
            {
                Some(value) => value.key = key,
                None => values.push(StatedValue {
                    written: written.to_string(),
                    key,
                    kind: ValueKind::Figure,
                }),
            }
        }
    }
}

/// Whether a date's key names a day that is neither a month's first nor its last
/// (nor the 28th–30th): such a day is one event's ("the S5 launches September 15,
/// 2026"), where a period's end ("March 31, 2026") dates many facts.
pub fn names_one_event(key: &str) -> bool {
    let Some(date) = key.strip_prefix("date:") else {
        return false;
    };
    let mut parts = date.split('-');
    let year = parts.next().unwrap_or("?");
    let day: u32 = parts.nth(1).and_then(|d| d.parse().ok()).unwrap_or(1);
    year != "?" && (2..28).contains(&day)
}

fn bare(word: &str) -> String {
    word.trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase()
}

/// The month a word names, in full or short ("September", "Sept", "Sep"): its name.
pub fn month_name(word: &str) -> Option<&'static str> {
    month_of(word).and_then(|m| MONTHS.get(m - 1)).copied()
}

fn month_of(word: &str) -> Option<usize> {
    let word = bare(word);
    MONTHS
        .iter()
        .position(|m| {
            *m == word
                || (word.len() == 3 && m.starts_with(word.as_str()))
                || (word == "sept" && *m == "september")
        })
        .map(|m| m + 1)
}

fn day_of(word: &str) -> Option<u32> {
    let word = bare(word);
    let digits = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|s| word.strip_suffix(s))
        .unwrap_or(&word);
    let day: u32 = digits.parse().ok()?;
    (digits.len() <= 2 && (1..=31).contains(&day)).then_some(day)
}

fn year_of(word: &str) -> Option<u32> {
    let word = bare(word);
    let year: u32 = word.parse().ok()?;
    (word.len() == 4 && (1900..=2100).contains(&year)).then_some(year)
}

/// A date opening `words` ("September 15, 2026", "15 Sept 2026", "Sept 15"): the value
/// and how many words it spans.
fn date_at(words: &[&str]) -> Option<(StatedValue, usize)> {
    if let Some(value) = words.first().and_then(|w| iso_date(w)) {
        return Some((value, 1));
    }
    let (month, day) = match (words.first(), words.get(1)) {
        (Some(first), Some(second)) => month_of(first)
            .zip(day_of(second))
            .or_else(|| day_of(first).zip(month_of(second)).map(|(d, m)| (m, d)))?,
        _ => return None,
    };
    // "15 March" then a year; "March 15," then a year — the day word must not end a
    // clause before the year ("March 15. 2026 was…").
    let year = words
        .get(2)
        .filter(|_| !words[1].ends_with(['.', ';', ':']))
        .and_then(|w| year_of(w));
    let used = if year.is_some() { 3 } else { 2 };
    let written = words[..used]
        .join(" ")
        .trim_end_matches(|c: char| !c.is_alphanumeric())
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .to_string();
    let year = year.map_or("?".to_string(), |y| y.to_string());
    Some((
        StatedValue {
            written,
            key: format!("date:{year}-{month:02}-{day:02}"),
            kind: ValueKind::Date,
        },
        used,
    ))
}

/// A date written as a sheet writes it ("2026-09-15"): the same value as "September 15,
/// 2026".
fn iso_date(word: &str) -> Option<StatedValue> {
    let written = word.trim_matches(|c: char| !c.is_ascii_digit());
    let mut parts = written.split('-');
    let (year, month, day) = (parts.next()?, parts.next()?, parts.next()?);
    let shaped = parts.next().is_none()
        && year.len() == 4
        && month.len() == 2
        && day.len() == 2
        && year_of(year).is_some();
    let (month, day): (u32, u32) = (month.parse().ok()?, day.parse().ok()?);
    (shaped && (1..=12).contains(&month) && (1..=31).contains(&day)).then(|| StatedValue {
        written: written.to_string(),
        key: format!("date:{year}-{month:02}-{day:02}"),
        kind: ValueKind::Date,
    })
}

/// A count and its unit opening `words` ("250 kg", "14 hours", "26-week", "250kg"):
/// the number plain (no currency, percentage or separator: those are figures) of two
/// digits or more, not a year, and its unit a word that is no joining word.
fn count_at(words: &[&str]) -> Option<StatedValue> {
    let first = words.first()?.trim_start_matches(['(', '[', '"', '“']);
    let digits: String = first.chars().take_while(char::is_ascii_digit).collect();
    // One digit is a label as often as a count ("Scope 1 and 2 emissions", "phase 2
    // buses"), and a small count may be said again.
    if digits.len() < 2 || year_of(first).is_some() {
        return None;
    }
    let rest = &first[digits.len()..];
    let (unit, written) = if rest.is_empty() {
        let next = words.get(1)?;
        (
            bare(next),
            format!(
                "{first} {}",
                next.trim_end_matches(|c: char| !c.is_alphanumeric())
            ),
        )
    } else {
        let attached = rest.strip_prefix('-').unwrap_or(rest);
        let unit = attached.trim_end_matches(|c: char| !c.is_alphanumeric());
        (
            unit.to_lowercase(),
            first
                .trim_end_matches(|c: char| !c.is_alphanumeric())
                .to_string(),
        )
    };
    let is_unit = unit.len() >= 2
        && unit.chars().all(char::is_alphabetic)
        && !NOT_UNITS.contains(&unit.as_str())
        && !["st", "nd", "rd", "th", "usd", "gbp", "eur"].contains(&unit.as_str())
        && month_of(&unit).is_none();
    if !is_unit {
        return None;
    }
    let singular = match unit.strip_suffix('s') {
        Some(stem) if stem.len() >= 3 => stem.to_string(),
        _ => unit,
    };
    Some(StatedValue {
        written,
        key: format!("count:{} {singular}", digits.trim_start_matches('0')),
        kind: ValueKind::Count,
    })
}

/// A reference code ("PT-26-H03", "C-2026-011"): at least two hyphenated parts,
/// opening with a capital, holding a digit, with no lower-case letter, five characters
/// or more; not a period ("FY-27", "Q4-2026", "H1-2026": many facts share one).
fn code_of(word: &str) -> Option<StatedValue> {
    let code = word.trim_matches(|c: char| !c.is_alphanumeric());
    let first = code.split('-').next().unwrap_or_default();
    let period = matches!(first, "FY" | "CY")
        || (first.len() == 2
            && first.starts_with(['Q', 'H'])
            && first.ends_with(|c: char| c.is_ascii_digit()));
    let is_code = !period
        && code.len() >= 5
        && code.starts_with(|c: char| c.is_ascii_uppercase())
        && code.contains('-')
        && code.split('-').all(|part| !part.is_empty())
        && code.chars().any(|c| c.is_ascii_digit())
        && code
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-');
    is_code.then(|| StatedValue {
        written: code.to_string(),
        key: format!("code:{code}"),
        kind: ValueKind::Code,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // Any text, however hostile: no panic, and every value is written as the text
        // writes it (what writers are told not to state again).
        #[test]
        fn every_value_is_cut_from_its_text(text in "(\\PC|[0-9$£€%,.\\- ]|USD|Sept|—){0,80}") {
            for value in stated_values(&text) {
                let words: Vec<&str> = value.written.split_whitespace().collect();
                prop_assert!(words.iter().all(|w| text.contains(w)), "{value:?} in {text:?}");
            }
        }
    }

    fn keys(text: &str) -> Vec<String> {
        stated_values(text).into_iter().map(|v| v.key).collect()
    }

    #[test]
    fn dates_and_counts_with_units_are_values_years_and_bare_numbers_are_not() {
        assert_eq!(
            keys("The S5 ships September 15, 2026 with a 250 kg payload and 14 hours a charge."),
            ["date:2026-09-15", "count:250 kg", "count:14 hour"]
        );
        assert_eq!(
            keys("From 15 Sept 2026 (a 26-week lead time; 250kg) in 2026, 15 of them."),
            ["date:2026-09-15", "count:26 week", "count:250 kg"]
        );
        // Marked figures first, as `marked_figures` reads them; a date without a year.
        assert_eq!(
            keys("$1,590 a month from March 4"),
            ["$1590", "date:?-03-04"]
        );
        // A sheet's date is the same date.
        assert_eq!(
            keys("effective 2026-09-15, from 2026-13-01"),
            ["date:2026-09-15"]
        );
        // A currency code beside an amount is its sign.
        assert_eq!(
            keys("It lists at 1890 USD; List price (USD): 1,590"),
            ["$1590", "$1890"]
        );
        // A reference code is a value; a hyphenated word or a period is not.
        assert_eq!(
            keys("Finding PT-26-H03 (see INC-2026-0902), a Wi-Fi issue in FY-27, Q4-2026."),
            ["code:PT-26-H03", "code:INC-2026-0902"]
        );
        // "May 2026" is a month, not a day; "the 3rd" is no unit.
        assert!(keys("In May 2026 the 3rd site and 2027 plans").is_empty());
        assert!(keys("Scope 1 and 2 emissions fell at 3 sites").is_empty());
        let written: Vec<String> = stated_values("launch on 15 September 2026.")
            .into_iter()
            .map(|v| v.written)
            .collect();
        assert_eq!(written, ["15 September 2026"]);
    }

    #[test]
    fn only_a_mid_month_day_with_its_year_names_one_event() {
        assert!(names_one_event("date:2026-09-15"));
        assert!(!names_one_event("date:2026-03-31"));
        assert!(!names_one_event("date:2026-01-01"));
        assert!(!names_one_event("date:?-09-15"));
        assert!(!names_one_event("count:15 site"));
    }
}
