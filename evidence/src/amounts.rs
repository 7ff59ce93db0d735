//! Amounts as documents write them: a number with a currency sign or code (`$`, `€`,
//! `£`, `USD`…) or a magnitude (`k`, `M`, `bn`, `million`…), and its value in units —
//! read by the offline conflict finder (the same measure with two values) and by
//! score's tables (which row holds the largest amount).

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
