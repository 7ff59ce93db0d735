//! Content words: lower-cased word tokens without stop words, used by the offline
//! model's heuristics and by source scoring. Deterministic, language-light: Latin
//! and Cyrillic words are split on non-alphanumerics; each Han character counts as a
//! term of its own. Not a text-comparison function — quotes are compared only with
//! `deepr_evidence::normalise`.

const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "done",
    "down",
    "during",
    "each",
    "either",
    "else",
    "etc",
    "even",
    "ever",
    "every",
    "few",
    "for",
    "from",
    "further",
    "get",
    "gets",
    "given",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "however",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "may",
    "me",
    "might",
    "more",
    "most",
    "much",
    "must",
    "my",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "out",
    "over",
    "own",
    "same",
    "say",
    "says",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "thus",
    "to",
    "too",
    "under",
    "until",
    "up",
    "upon",
    "us",
    "use",
    "used",
    "uses",
    "using",
    "very",
    "via",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "within",
    "without",
    "would",
    "yet",
    "you",
    "your",
    "yours",
    "role",
    "play",
    "plays",
    "documentation",
    "happen",
    "happens",
    "work",
    "works",
    "change",
    "said",
    "и",
    "в",
    "во",
    "не",
    "что",
    "он",
    "на",
    "я",
    "с",
    "со",
    "как",
    "а",
    "то",
    "все",
    "она",
    "так",
    "его",
    "но",
    "да",
    "ты",
    "к",
    "у",
    "же",
    "вы",
    "за",
    "бы",
    "по",
    "только",
    "ее",
    "мне",
    "было",
    "вот",
    "от",
    "меня",
    "еще",
    "нет",
    "о",
    "из",
    "ему",
    "это",
    "的",
    "了",
    "是",
    "在",
    "和",
    "有",
    "也",
    "就",
    "都",
    "而",
    "及",
    "与",
    "或",
];

/// Negation words that flip a statement's meaning.
pub const NEGATIONS: &[&str] = &[
    "not",
    "no",
    "never",
    "cannot",
    "can't",
    "don't",
    "doesn't",
    "isn't",
    "aren't",
    "won't",
    "without",
    "none",
    "neither",
    "nor",
    "не",
    "нет",
    "никогда",
    "不",
    "没有",
];

/// Is `word` (already lower-cased) a stop word?
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

fn is_han(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2A6DF)
}

/// Lower-cased word tokens in order (stop words included), numbers kept as tokens.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let flush = |current: &mut String, out: &mut Vec<String>| {
        if !current.is_empty() {
            let word = current
                .trim_matches(|c| c == '.' || c == '\'' || c == ',')
                .to_string();
            if !word.is_empty() {
                out.push(word);
            }
            current.clear();
        }
    };
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if is_han(c) {
            flush(&mut current, &mut out);
            out.push(c.to_string());
        } else if c.is_alphanumeric() || c == '_' {
            current.extend(c.to_lowercase());
        } else if (c == '.' || c == ',' || c == '\'')
            && !current.is_empty()
            && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric())
        {
            // Keep "3.5", "1,000", "don't" together.
            current.push(c);
        } else {
            flush(&mut current, &mut out);
        }
    }
    flush(&mut current, &mut out);
    out
}

/// A question's exact terms, each as its words in order: a number with the word before
/// it ("offset 18"), an identifier (`SQLITE_BUSY`, `journal_mode`, `PRAGMA`-like
/// capitals with digits or underscores, `sqlite3_open()`), a quoted term ("\"hot
/// journal\"").
pub fn exact_terms(question: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let lowered = |w: &str| w.to_lowercase();
    let tokens: Vec<&str> = question.split_whitespace().collect();
    for (i, token) in tokens.iter().enumerate() {
        let bare = token.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
        let is_number = !bare.is_empty() && bare.chars().all(|c| c.is_ascii_digit());
        if is_number && i > 0 {
            let before = tokens[i - 1].trim_matches(|c: char| !c.is_alphanumeric());
            if before.chars().all(char::is_alphabetic) && before.chars().count() > 2 {
                out.push(vec![lowered(before), bare.to_string()]);
            }
        }
        let identifier = bare.contains('_')
            || token.contains("()")
            || (bare.chars().count() >= 4
                && bare
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                && bare.chars().any(|c| c.is_ascii_digit() || c == '_'));
        if identifier {
            out.push(vec![lowered(bare)]);
        }
    }
    for quoted in question.split(['"', '“', '”', '`']).skip(1).step_by(2) {
        let words: Vec<String> = words(quoted);
        if (1..=5).contains(&words.len()) {
            out.push(words);
        }
    }
    out.dedup();
    out
}

/// Whether `text` holds one of `exact` as consecutive words.
pub fn holds_exact(text: &str, exact: &[Vec<String>]) -> bool {
    if exact.is_empty() {
        return false;
    }
    let words = words(text);
    exact
        .iter()
        .any(|term| !term.is_empty() && words.windows(term.len()).any(|w| w == term.as_slice()))
}

/// A crude, deterministic English suffix stripper so "commits" matches "commit".
pub fn stem(word: &str) -> String {
    if word.chars().count() <= 4 || !word.is_ascii() {
        return word.to_string();
    }
    for suffix in [
        "ations", "ation", "ings", "ing", "edly", "ies", "ied", "es", "ed", "ly", "s",
    ] {
        if let Some(base) = word.strip_suffix(suffix) {
            if base.len() >= 3 && !(suffix == "s" && base.ends_with('s')) {
                return match suffix {
                    "ies" | "ied" => format!("{base}y"),
                    _ => base.to_string(),
                };
            }
        }
    }
    word.to_string()
}

/// Content terms: words without stop words and pure punctuation, stemmed.
pub fn content_terms(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|w| !is_stop_word(w) && w.chars().any(char::is_alphabetic))
        .map(|w| stem(&w))
        .collect()
}

/// Numbers mentioned in the text, in one canonical form so that the same number
/// written two ways compares equal: thousands separators dropped ("1,000" and "1000"
/// are both `1000`), decimals and versions kept ("3.5", "3.7.0"), dates as their parts
/// ("2024-01-05" is `2024`, `1`, `5`), whole numbers without leading zeros.
/// Each text's distinctive content words: those at most one text in `share` uses
/// (never fewer than `floor` texts): among a run's claims, the organisation's name, in
/// all of them, says nothing of what one is about.
pub fn distinctive_terms(
    texts: &[&str],
    share: usize,
    floor: usize,
) -> Vec<std::collections::BTreeSet<String>> {
    let terms: Vec<std::collections::BTreeSet<String>> = texts
        .iter()
        .map(|t| content_terms(t).into_iter().collect())
        .collect();
    let mut used_by: std::collections::BTreeMap<&str, usize> = Default::default();
    for term in terms.iter().flatten() {
        *used_by.entry(term.as_str()).or_default() += 1;
    }
    let most = (texts.len() / share.max(1)).max(floor);
    terms
        .iter()
        .map(|mine| {
            mine.iter()
                .filter(|t| used_by.get(t.as_str()).is_some_and(|n| *n <= most))
                .cloned()
                .collect()
        })
        .collect()
}

pub fn numbers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in words(text) {
        // A word that starts with a number states it, whatever follows: "8kb", "100ms",
        // "2nd" and "v3.7.0" state 8, 100, 2 and 3.7.0. A name that ends in digits
        // ("sqlite3", "utf8") states none.
        let mut chars = word.chars();
        let starts_with_number = match (chars.next(), chars.next()) {
            (Some(c), _) if c.is_ascii_digit() => true,
            (Some('v'), Some(c)) => c.is_ascii_digit(),
            _ => false,
        };
        if !starts_with_number {
            continue;
        }
        let mut run = String::new();
        for c in word.chars().chain(std::iter::once(' ')) {
            if c.is_ascii_digit() || (!run.is_empty() && (c == '.' || c == ',')) {
                run.push(c);
            } else if !run.is_empty() {
                let trimmed = run.trim_end_matches(['.', ',']);
                out.push(canonical_number(trimmed));
                run.clear();
            }
        }
    }
    out
}

/// "1,000" → "1000": commas dropped when every group after the first has 3 digits
/// (a thousands separator); any other comma is kept as written. A whole number loses
/// its leading zeros ("01" of "2014-03-01" is the 1 of "1 March 2014").
fn canonical_number(number: &str) -> String {
    if number.len() > 1 && number.starts_with('0') && number.chars().all(|c| c.is_ascii_digit()) {
        let trimmed = number.trim_start_matches('0');
        return if trimmed.is_empty() {
            "0".into()
        } else {
            trimmed.into()
        };
    }
    let mut groups = number.split(',');
    let first_ok = groups
        .next()
        .is_some_and(|g| !g.is_empty() && g.len() <= 3 && g.chars().all(|c| c.is_ascii_digit()));
    let rest: Vec<&str> = number.split(',').skip(1).collect();
    let separators = first_ok
        && !rest.is_empty()
        && rest.iter().enumerate().all(|(i, g)| {
            let digits = g.split('.').next().unwrap_or("");
            digits.len() == 3
                && digits.chars().all(|c| c.is_ascii_digit())
                && (i + 1 == rest.len() || !g.contains('.'))
        });
    if separators {
        number.replace(',', "")
    } else {
        number.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_and_numbers() {
        assert_eq!(
            content_terms("How does SQLite guarantee atomic commits?"),
            ["sqlite", "guarantee", "atomic", "commit"]
        );
        assert_eq!(
            numbers("Pages are 4096 bytes, 1,000 rows, version 3.5."),
            ["4096", "1000", "3.5"]
        );
        assert_eq!(
            numbers("1,000 and 1000 and 12,345,678.5"),
            ["1000", "1000", "12345678.5"]
        );
        assert_eq!(
            numbers("pairs 1,2 and 3.7.0 on 2024-01-05"),
            ["1,2", "3.7.0", "2024", "1", "5"]
        );
        // An ISO date's parts are the day and month a spelled date states.
        let sorted = |text: &str| {
            let mut n = numbers(text);
            n.sort();
            n
        };
        assert_eq!(
            sorted("joined on 2014-03-01"),
            sorted("joined on 1 March 2014, 3")
        );
        assert_eq!(numbers("00 and 007 and 0.5"), ["0", "7", "0.5"]);
        assert_eq!(
            numbers("8KB pages, 100ms waits, v3.7.0, the 2nd try"),
            ["8", "100", "3.7.0", "2"]
        );
        assert!(numbers("sqlite3_open and utf8 names").is_empty());
        assert_eq!(words("日志 журнал WAL"), ["日", "志", "журнал", "wal"]);
    }
}
