//! How a fact's value is found in a text: both sides normalised by the one comparison
//! function (`deepr_evidence::normalise`) and case-folded, and the value stated as a
//! whole — never inside a longer number or word ("38%" is not in "138%").

/// A text as values are compared in it.
pub(crate) fn folded(text: &str) -> String {
    deepr_evidence::normalise(text).to_lowercase()
}

/// Whether folded `prose` states folded `value` as a whole: not inside a longer number
/// or word ("38%" is not stated by "138%", "$48M" not by "$148M"). A decimal read off a
/// column in thousands, millions or billions may be written with its magnitude letter:
/// "$4.62m" states "4.62" (the letter is not checked against the column's unit).
pub(crate) fn states(prose: &str, value: &str) -> bool {
    states_as_written(prose, value)
        || with_magnitude_letter(value).is_some_and(|v| states_as_written(prose, &v))
        || as_compound(value).is_some_and(|v| states_as_written(prose, &v))
}

/// A count with its unit written as the compound before a noun: "26 weeks" → "26-week"
/// ("a 26-week lead time" states a lead time of 26 weeks).
fn as_compound(value: &str) -> Option<String> {
    let (number, unit) = value.split_once(' ')?;
    let counted = number.ends_with(|c: char| c.is_ascii_digit())
        && !unit.is_empty()
        && unit.chars().all(char::is_alphabetic);
    if !counted {
        return None;
    }
    let singular = match unit.strip_suffix('s') {
        Some(stem) if stem.chars().count() >= 3 => stem,
        _ => unit,
    };
    Some(format!("{number}-{singular}"))
}

/// A value written with its magnitude as a word, written with its letter: "48.6
/// million" → "48.6m" (a table's "48.6M" states the annual report's "48.6 million").
fn with_magnitude_letter(value: &str) -> Option<String> {
    let (number, word) = value.rsplit_once(' ')?;
    let letter = match word {
        "thousand" => "k",
        "million" => "m",
        "billion" => "bn",
        _ => return None,
    };
    number
        .ends_with(|c: char| c.is_ascii_digit())
        .then(|| format!("{number}{letter}"))
}

/// [`states`], for the value as the facts file writes it.
fn states_as_written(prose: &str, value: &str) -> bool {
    let part_of = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
    prose.match_indices(value).any(|(at, _)| {
        let before = prose[..at].chars().next_back();
        let after = prose[at + value.len()..].chars().next();
        let joins_before = value.starts_with(|c: char| c.is_alphanumeric()) && part_of(before);
        let rest = &prose[at + value.len()..];
        let joins_after = value.ends_with(|c: char| c.is_alphanumeric())
            && part_of(after)
            && !magnitude_after(value, rest);
        let decimal_after = value.ends_with(|c: char| c.is_ascii_digit())
            && after == Some('.')
            && prose[at + value.len() + 1..].starts_with(|c: char| c.is_ascii_digit());
        !joins_before && !joins_after && !decimal_after
    })
}

/// Whether `rest`, after a decimal `value`, is a magnitude letter ending the number:
/// "m", "bn" or "k" ("4.62" in "$4.62m arr").
fn magnitude_after(value: &str, rest: &str) -> bool {
    let decimal = value.contains('.') && value.chars().all(|c| c.is_ascii_digit() || c == '.');
    decimal
        && ["m", "bn", "k"].iter().any(|m| {
            rest.strip_prefix(m)
                .is_some_and(|r| !r.starts_with(|c: char| c.is_alphanumeric()))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_stated_whole_or_with_its_magnitude() {
        let prose = folded("220 S5 robots worth $4.62M ARR, up 138% and 12 more");
        assert!(states(&prose, "4.62"));
        assert!(states(&prose, "138%"));
        assert!(!states(&prose, "38%"));
        assert!(!states(&prose, "4.6"));
        // Only a decimal takes a magnitude: "12" is not "12k".
        assert!(!states(&folded("12k users"), "12"));
        assert!(!states(&folded("4.62mm"), "4.62"));
        // A magnitude word may be written as its letter, and only as its own.
        let table = folded("FY2025 boardings: 48.6M; reserves $1.2bn");
        assert!(states(&table, &folded("48.6 million")));
        assert!(states(&table, &folded("$1.2 billion")));
        assert!(!states(&table, &folded("48.6 billion")));
        assert!(!states(&folded("148.6M"), &folded("48.6 million")));
        // A count and its unit may be the compound before a noun, and only its own.
        let lead = folded("LiDAR from one supplier with a 26-week lead time");
        assert!(states(&lead, "26 weeks"));
        assert!(!states(&lead, "6 weeks"));
        assert!(!states(&lead, "26 days"));
        assert!(states(&folded("a 12-month contract"), "12 months"));
        assert!(states(&folded("the 250 kg payload"), "250 kg"));
    }
}
