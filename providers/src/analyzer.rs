//! The corpus text analyzer: one tokenizer for every script deepr expects.
//!
//! * Han characters (Chinese, and the kanji of Japanese) are segmented into words
//!   with jieba (search mode, so a compound also yields its parts).
//! * Every other script is split on non-alphanumeric characters and lowercased.
//! * Latin-script words are stemmed as English, Cyrillic words as Russian
//!   (Snowball, via `frostem`: `deepr_evidence::stem`, shared with candidate scoring), so `commits` matches `commit` and `журнала`
//!   matches `журнал`. Words in other scripts are kept as they are.
//! * A short list of function words (English, Russian, Chinese) is dropped, and so
//!   are tokens longer than [`MAX_TOKEN_CHARS`] characters (hashes, base64 noise).
//!
//! The same analyzer tokenizes documents at index time and queries at search time.
//! Changing what it emits changes the index: bump [`ANALYZER_VERSION`] then, and
//! existing indexes are rebuilt on their next open.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use tantivy_jieba::JiebaTokenizer;

/// Name under which the analyzer is registered in a tantivy index.
pub const TOKENIZER_NAME: &str = "deepr_multi";

/// Version of the analyzer's output; part of the corpus index schema version.
pub const ANALYZER_VERSION: u32 = 1;

/// Tokens longer than this (in characters) are not indexed.
pub const MAX_TOKEN_CHARS: usize = 64;

/// Function words that carry no retrieval signal. Compared before stemming.
#[rustfmt::skip]
const STOPWORDS: &[&str] = &[
    // English (Lucene's classic set, plus the possessive `s` and contraction `t`).
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "s", "such", "t", "that", "the", "their", "then",
    "there", "these", "they", "this", "to", "was", "will", "with",
    // Russian.
    "а", "без", "бы", "в", "во", "да", "для", "до", "же", "за", "и", "из", "или", "к", "как",
    "ли", "на", "не", "ни", "но", "о", "об", "от", "по", "при", "с", "со", "то", "у", "что",
    "это",
    // Chinese particles and conjunctions.
    "的", "了", "和", "与", "及", "之", "或",
];

/// The multi-script tokenizer (see the module docs).
#[derive(Clone)]
pub struct MultiScriptTokenizer {
    jieba: JiebaTokenizer,
}

impl Default for MultiScriptTokenizer {
    fn default() -> Self {
        Self {
            jieba: JiebaTokenizer::new(),
        }
    }
}

/// Token stream over tokens computed up front.
pub struct VecTokenStream {
    tokens: std::vec::IntoIter<Token>,
    current: Token,
}

impl TokenStream for VecTokenStream {
    fn advance(&mut self) -> bool {
        match self.tokens.next() {
            Some(token) => {
                self.current = token;
                true
            }
            None => false,
        }
    }

    fn token(&self) -> &Token {
        &self.current
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.current
    }
}

impl Tokenizer for MultiScriptTokenizer {
    type TokenStream<'a> = VecTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> VecTokenStream {
        VecTokenStream {
            tokens: self.analyze(text).into_iter(),
            current: Token::default(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CharClass {
    Han,
    Word,
    Separator,
}

fn classify(c: char) -> CharClass {
    if is_han(c) {
        CharClass::Han
    } else if c.is_alphanumeric() {
        CharClass::Word
    } else {
        CharClass::Separator
    }
}

/// CJK unified ideographs (all blocks through extension H) and compatibility
/// ideographs, plus the ideographic zero.
fn is_han(c: char) -> bool {
    matches!(
        c as u32,
        0x3400..=0x4DBF
            | 0x4E00..=0x9FFF
            | 0xF900..=0xFAFF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2EBEF
            | 0x2F800..=0x2FA1F
            | 0x30000..=0x323AF
    ) || c == '\u{3007}'
}

impl MultiScriptTokenizer {
    /// The analyzed terms of `text`, in order (duplicates kept).
    pub fn terms(&mut self, text: &str) -> Vec<String> {
        self.analyze(text).into_iter().map(|t| t.text).collect()
    }

    fn analyze(&mut self, text: &str) -> Vec<Token> {
        let mut out = Vec::new();
        let mut run: Option<(usize, CharClass)> = None;
        for (at, c) in text.char_indices() {
            let class = classify(c);
            match run {
                Some((_, current)) if current == class => {}
                Some((start, current)) => {
                    self.flush(text, start, at, current, &mut out);
                    run = Some((at, class));
                }
                None => run = Some((at, class)),
            }
        }
        if let Some((start, class)) = run {
            self.flush(text, start, text.len(), class, &mut out);
        }
        out
    }

    fn flush(
        &mut self,
        text: &str,
        start: usize,
        end: usize,
        class: CharClass,
        out: &mut Vec<Token>,
    ) {
        let Some(run) = text.get(start..end) else {
            return;
        };
        match class {
            CharClass::Separator => {}
            CharClass::Word => {
                if let Some(term) = self.word_term(run) {
                    push(out, start, end, term);
                }
            }
            CharClass::Han => {
                let mut stream = self.jieba.token_stream(run);
                while let Some(token) = stream.next() {
                    let word = token.text.trim();
                    if word.is_empty() || STOPWORDS.contains(&word) {
                        continue;
                    }
                    push(
                        out,
                        start + token.offset_from,
                        start + token.offset_to,
                        word.to_string(),
                    );
                }
            }
        }
    }

    fn word_term(&self, word: &str) -> Option<String> {
        if word.chars().count() > MAX_TOKEN_CHARS {
            return None;
        }
        let lower = word.to_lowercase();
        if STOPWORDS.contains(&lower.as_str()) {
            return None;
        }
        let stemmed = deepr_evidence::stem::snowball(&lower);
        (!stemmed.is_empty()).then_some(stemmed)
    }
}

fn push(out: &mut Vec<Token>, offset_from: usize, offset_to: usize, text: String) {
    let position = out.len();
    out.push(Token {
        offset_from,
        offset_to,
        position,
        text,
        position_length: 1,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        MultiScriptTokenizer::default().terms(text)
    }

    #[test]
    fn latin_words_are_lowercased_and_stemmed_english() {
        assert_eq!(
            terms("Commits, COMMITTED; the journal!"),
            ["commit", "commit", "journal"]
        );
        assert_eq!(terms("write-ahead log"), ["write", "ahead", "log"]);
        assert_eq!(terms("wal2 x86_64 3.40"), ["wal2", "x86", "64", "3", "40"]);
    }

    #[test]
    fn cyrillic_words_are_stemmed_russian() {
        assert_eq!(terms("журнала"), terms("журнал"));
        assert_eq!(
            terms("Транзакции и транзакция"),
            terms("транзакция транзакции")
        );
    }

    #[test]
    fn han_runs_are_segmented_with_jieba() {
        let got = terms("数据库的事务日志");
        assert!(got.contains(&"事务".to_string()), "{got:?}");
        assert!(got.contains(&"日志".to_string()), "{got:?}");
        assert!(!got.contains(&"的".to_string()), "{got:?}");
        let mixed = terms("SQLite数据库");
        assert_eq!(
            mixed.first().map(String::as_str),
            Some("sqlite"),
            "{mixed:?}"
        );
    }

    #[test]
    fn punctuation_and_stopwords_yield_nothing() {
        assert!(terms("\"AND( ) -- ?? the of и 的").is_empty());
        assert!(terms("").is_empty());
    }

    #[test]
    fn offsets_point_into_the_text() {
        let text = "Ёлка 数据库 café";
        let tokens = MultiScriptTokenizer::default().analyze(text);
        for token in &tokens {
            assert!(
                text.get(token.offset_from..token.offset_to).is_some(),
                "{token:?}"
            );
        }
        assert_eq!(tokens.last().map(|t| t.text.as_str()), Some("café"));
    }
}
