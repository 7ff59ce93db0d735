//! One word's Snowball stem, the rule the corpus index and candidate scoring share:
//! English for words of Latin letters (ASCII, Latin-1, Latin Extended-A/B) and digits,
//! Russian for words with Cyrillic letters, every other word as it is.

use std::sync::OnceLock;

struct Stemmers {
    english: frostem::Stemmer,
    russian: frostem::Stemmer,
}

fn stemmers() -> &'static Stemmers {
    static STEMMERS: OnceLock<Stemmers> = OnceLock::new();
    STEMMERS.get_or_init(|| Stemmers {
        english: frostem::Stemmer::new(frostem::Algorithm::English),
        russian: frostem::Stemmer::new(frostem::Algorithm::Russian),
    })
}

/// The stem of a lower-cased word (possibly empty: the caller decides what an empty
/// stem means); a word without a letter, or in a script with no stemmer, as it is.
pub fn snowball(lower: &str) -> String {
    let has_letter = lower.chars().any(char::is_alphabetic);
    if has_letter && lower.chars().any(is_cyrillic) {
        stemmers().russian.stem(lower).into_owned()
    } else if has_letter && lower.chars().all(is_latin_or_digit) {
        stemmers().english.stem(lower).into_owned()
    } else {
        lower.to_string()
    }
}

fn is_cyrillic(c: char) -> bool {
    matches!(c as u32, 0x0400..=0x052F | 0x1C80..=0x1C8F | 0x2DE0..=0x2DFF | 0xA640..=0xA69F)
}

/// Latin letters (ASCII, Latin-1 supplement, Latin Extended-A/B) and digits.
fn is_latin_or_digit(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || (matches!(c as u32, 0x00C0..=0x024F) && c != '\u{00D7}' && c != '\u{00F7}')
}

#[cfg(test)]
mod tests {
    use super::snowball;

    #[test]
    fn latin_words_stem_english_cyrillic_russian_others_stay() {
        assert_eq!(snowball("commits"), snowball("commit"));
        assert_eq!(snowball("journals"), "journal");
        assert_eq!(snowball("журнала"), snowball("журнал"));
        assert_eq!(snowball("日志"), "日志");
        assert_eq!(snowball("2026"), "2026");
    }
}
