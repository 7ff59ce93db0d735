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
    text.split_whitespace()
        .filter_map(|word| {
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
