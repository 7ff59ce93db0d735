//! Amounts as documents write them: a number with a currency sign or code (`$`, `€`,
//! `£`, `USD`…) or a magnitude (`k`, `M`, `bn`, `million`…), and its value in units —
//! read by the offline conflict finder (the same measure with two values) and by
//! score's tables (which row holds the largest amount); and the figures a text states
//! that identify a fact, which writers state once ([`marked_figures`]).

/// An amount starting at `token` (`$1.2M`, `≈$2M`, `€18,500`, `2.5bn`, `$2` + `million`):
/// its value in units and how it was written.
pub fn amount_at(token: &str, next: &str) -> Option<(f64, String)> {
    let trimmed = token.trim_matches(|c: char| matches!(c, '(' | ')' | ',' | ';' | '.' | '"'));
    let bare = trimmed.trim_start_matches(['≈', '~', '+']);
    let (currency, rest) = ["$", "€", "£", "USD", "EUR", "GBP"]
        .iter()
        .find_map(|c| bare.strip_prefix(c).map(|r| (true, r)))
        .unwrap_or((false, bare));
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
        .collect();
    if digits.is_empty() || !digits.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let number: f64 = digits
        .trim_end_matches(['.', ','])
        .replace(',', "")
        .parse()
        .ok()?;
    let suffix = rest[digits.len()..].to_ascii_lowercase();
    let word = next
        .trim_matches(|c: char| !c.is_alphabetic())
        .to_ascii_lowercase();
    let magnitude =
        magnitude(&suffix).or_else(|| suffix.is_empty().then(|| magnitude(&word)).flatten());
    if !currency && magnitude.is_none() {
        return None;
    }
    Some((number * magnitude.unwrap_or(1.0), trimmed.to_string()))
}

/// The factor a magnitude word or suffix stands for (`k`, `M`, `bn`, `million`…).
pub fn magnitude(word: &str) -> Option<f64> {
    match word {
        "k" | "thousand" => Some(1e3),
        "m" | "mn" | "million" | "millions" => Some(1e6),
        "b" | "bn" | "billion" | "billions" => Some(1e9),
        _ => None,
    }
}

/// The figures a text states that identify a fact (what "every fact once" compares):
/// an amount with a currency sign, a percentage, a number with a decimal point or a
/// thousands separator — each as written and as a key of its number and marks
/// ("$1,590" → "$1590", "15%" → "15%", "1,590 units" → "1590": not the same fact).
/// Years ("2026") and plain counts are none.
pub fn marked_figures(text: &str) -> Vec<(String, String)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .iter()
        .enumerate()
        .filter_map(|(i, word)| {
            // "step 3.12", "version 3.7.0", "section 2.1": a number that names a thing is
            // no figure.
            let named = i
                .checked_sub(1)
                .and_then(|before| words.get(before))
                .is_some_and(|before| names_by_number(before));
            if named {
                return None;
            }
            let written = word.trim_matches(|c: char| {
                !(c.is_alphanumeric() || matches!(c, '$' | '£' | '€' | '%'))
            });
            let currency: String = written
                .chars()
                .filter(|c| matches!(c, '$' | '£' | '€'))
                .collect();
            let percent = if written.contains('%') { "%" } else { "" };
            let separated = written.contains([',', '.']);
            let number: String = written
                .chars()
                .filter(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let number = number.trim_matches('.');
            let has_digits = number.chars().any(|c| c.is_ascii_digit());
            let marked = !currency.is_empty() || !percent.is_empty() || separated;
            (has_digits && marked)
                .then(|| (written.to_string(), format!("{currency}{number}{percent}")))
        })
        .collect()
}

/// Whether a word is one a number names a thing after ("step 3.12", "version 3.7.0").
fn names_by_number(word: &str) -> bool {
    const NAMING: [&str; 14] = [
        "step", "steps", "version", "versions", "release", "section", "sections", "chapter",
        "clause", "figure", "table", "page", "item", "rule",
    ];
    let word = word
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    NAMING.contains(&word.as_str()) || word == "v"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_marked_amounts_and_not_the_numbers_that_name_things() {
        let figures: Vec<String> = marked_figures(
            "Step 3.12 of version 3.7.0 cost $1,590 for 3,412 robots at 99.2% in 2026 (15 sites).",
        )
        .into_iter()
        .map(|(_, key)| key)
        .collect();
        assert_eq!(figures, ["$1590", "3412", "99.2%"]);
    }
}
