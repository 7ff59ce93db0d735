//! Amounts a claim states, with what they measure and for which period: a sheet row's
//! `Quarter: Q3 2026 · Breach cost: $1.2M` and an email's "the Q3 2026 breach cost us
//! roughly $2M" state one measure (breach cost) for one period (Q3 2026) with
//! different values — a disagreement across formats that word overlap alone misses.
//!
//! An amount is a number with a currency sign (`$`, `€`, `£`, `USD`…) or a magnitude
//! (`k`, `M`, `bn`, `million`…); a period is a quarter with its year (`Q3 2026`,
//! `Q3 FY2026`), a fiscal year (`FY2025`) or a half (`H1 2026`); the measure is the
//! cell's label in a labelled row, else the content words just before the amount.

use std::collections::BTreeSet;

use deepr_evidence::amounts::amount_at;
use deepr_evidence::stem::snowball;
use deepr_evidence::terms::{is_stop_word, words};

/// One amount a claim states.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Amount {
    /// What it measures: stemmed content words.
    pub(crate) measure: BTreeSet<String>,
    /// The period it is for (`q3-2026`, `fy2025`, `h1-2026`), when the claim names one.
    pub(crate) period: Option<String>,
    /// Its value in units (1.2M → 1,200,000).
    pub(crate) value: f64,
    /// As written (`$1.2M`).
    pub(crate) written: String,
    /// Whether `measure` is a table cell's label (else the words before the amount).
    pub(crate) labelled: bool,
    /// The stemmed content words of the whole claim.
    pub(crate) context: BTreeSet<String>,
}

/// Words of a measure that say nothing of what is measured.
const VAGUE: &[&str] = &[
    "about",
    "around",
    "roughly",
    "approximately",
    "nearly",
    "almost",
    "some",
    "total",
    "us",
    "all",
    "once",
    "was",
    "were",
    "is",
    "came",
    "comes",
];

/// The amounts `text` states. A claim that joins table rows ("Quarter: Q1 2026 · …;
/// Quarter: Q2 2026 · …") is read row by row, each row with its own period.
pub(crate) fn amounts(text: &str) -> Vec<Amount> {
    let context = stems(text);
    if text.contains(" · ") && text.contains("; ") {
        return text
            .split("; ")
            .flat_map(|row| amounts_of(row, period(row), &context))
            .collect();
    }
    amounts_of(text, period(text), &context)
}

/// The amounts of one sentence or row, in `period`.
fn amounts_of(text: &str, period: Option<String>, context: &BTreeSet<String>) -> Vec<Amount> {
    let mut out = Vec::new();
    for cell in text.split(" · ") {
        let (label, value_text) = match cell.split_once(": ") {
            Some((label, value)) if text.contains(" · ") => (Some(label), value),
            _ => (None, cell),
        };
        let tokens: Vec<&str> = value_text.split_whitespace().collect();
        for (i, token) in tokens.iter().enumerate() {
            let next = tokens.get(i + 1).copied().unwrap_or("");
            let Some((value, written)) = amount_at(token, next) else {
                continue;
            };
            let measure = match label {
                Some(label) => stems(label),
                None => last_stems(&tokens[..i].join(" "), 3),
            };
            if measure.is_empty() {
                continue;
            }
            out.push(Amount {
                measure,
                period: period.clone(),
                value,
                written,
                labelled: label.is_some(),
                context: context.clone(),
            });
        }
    }
    out
}

/// Content words of `text` as stems, without numbers, periods and vague words.
fn stems(text: &str) -> BTreeSet<String> {
    words(text)
        .into_iter()
        .filter(|w| !is_stop_word(w) && w.chars().all(char::is_alphabetic))
        .filter(|w| !VAGUE.contains(&w.as_str()) && !is_period_word(w))
        .map(|w| snowball(&w))
        .collect()
}

/// The last `n` content words of `text` as stems: what an amount in prose measures
/// ("… the Q3 2026 breach cost us roughly" → breach, cost).
fn last_stems(text: &str, n: usize) -> BTreeSet<String> {
    let kept: Vec<String> = words(text)
        .into_iter()
        .filter(|w| !is_stop_word(w) && w.chars().all(char::is_alphabetic))
        .filter(|w| !VAGUE.contains(&w.as_str()) && !is_period_word(w))
        .collect();
    kept.iter().rev().take(n).map(|w| snowball(w)).collect()
}

fn is_period_word(word: &str) -> bool {
    matches!(
        word,
        "q1" | "q2" | "q3" | "q4" | "h1" | "h2" | "quarter" | "fy" | "year" | "month"
    )
}

/// The period a text names: `q3-2026`, `h1-2026` or `fy2025` (the first it names).
fn period(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let tokens: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '(' | ')' | '·' | ':' | ';'))
        .filter(|t| !t.is_empty())
        .collect();
    for (i, token) in tokens.iter().enumerate() {
        let token = token.trim_end_matches('.');
        if let Some(year) = token.strip_prefix("fy").filter(|y| is_year(y)) {
            return Some(format!("fy{}", full_year(year)));
        }
        if matches!(token, "q1" | "q2" | "q3" | "q4" | "h1" | "h2") {
            let year = tokens
                .get(i + 1)
                .map(|y| y.trim_end_matches('.').trim_start_matches("fy"))
                .filter(|y| is_year(y))?;
            return Some(format!("{token}-{}", full_year(year)));
        }
    }
    None
}

fn is_year(text: &str) -> bool {
    (text.len() == 4 || text.len() == 2) && text.bytes().all(|b| b.is_ascii_digit())
}

fn full_year(year: &str) -> String {
    if year.len() == 2 {
        format!("20{year}")
    } else {
        year.to_string()
    }
}

/// Two amounts state one measure for one period with values more than 15 % apart. A
/// cell's label names the measure: the other claim must hold all its words; two
/// prose amounts must share two words of what precedes them.
pub(crate) fn disagree(a: &Amount, b: &Amount) -> bool {
    let same_period = a.period.is_some() && a.period == b.period;
    let labels = |x: &Amount, y: &Amount| {
        x.labelled && !x.measure.is_empty() && x.measure.iter().all(|w| y.context.contains(w))
    };
    let same_measure = match (a.labelled, b.labelled) {
        (true, true) => a.measure == b.measure,
        (true, false) => labels(a, b),
        (false, true) => labels(b, a),
        (false, false) => a.measure.intersection(&b.measure).count() >= 2,
    };
    let apart = (a.value - b.value).abs() > 0.15 * a.value.abs().max(b.value.abs());
    same_period && same_measure && apart
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rows_amount_and_an_emails_for_one_quarter_disagree() {
        let row = amounts("Quarter: Q3 2026 · Breach cost: $1.2M · Incidents: 3");
        assert_eq!(row.len(), 1, "{row:?}");
        assert_eq!(row[0].period.as_deref(), Some("q3-2026"));
        assert!((row[0].value - 1.2e6).abs() < 1.0);
        let email =
            amounts("All in, the Q3 2026 breach cost us roughly ≈$2M once legal fees are counted.");
        assert_eq!(email.len(), 1, "{email:?}");
        assert!(disagree(&row[0], &email[0]), "{row:?} {email:?}");
        // Another quarter, another measure, or a close value: no disagreement.
        let other_quarter = amounts("The Q2 2026 breach cost was $2M.");
        assert!(!disagree(&row[0], &other_quarter[0]));
        let other_measure = amounts("Quarter: Q3 2026 · Marketing spend: $2M");
        assert!(!disagree(&row[0], &other_measure[0]));
        let close = amounts("The Q3 2026 breach cost was $1.25 million.");
        assert!(!disagree(&row[0], &close[0]), "{close:?}");
        assert!(amounts("Version 3.2 shipped in Q3 2026.").is_empty());
    }

    #[test]
    fn a_tracker_row_and_an_email_update_disagree() {
        let row = amounts(
            "Quarter: Q2 2026 · Yard rent: $55500 · Fit-out spend: $181000 · Insurance: $1200",
        );
        let email = amounts("Quick update before the board call: our Q2 2026 fit-out spend at Harbor Street was about $240,000, mostly the dock levellers.");
        assert!(
            row.iter().any(|r| email.iter().any(|e| disagree(r, e))),
            "{row:#?} {email:#?}"
        );
    }

    #[test]
    fn two_measures_of_one_site_in_one_quarter_do_not_disagree() {
        let rent = amounts("In Q2 2026 the Harbor Street rent was $55,500.");
        let spend = amounts("In Q2 2026 the Harbor Street fit-out spend was $181,000.");
        assert!(!disagree(&rent[0], &spend[0]), "{rent:?} {spend:?}");
        let again = amounts("Harbor Street's Q2 2026 fit-out spend came to $240,000.");
        assert!(disagree(&spend[0], &again[0]), "{spend:?} {again:?}");
    }
}
