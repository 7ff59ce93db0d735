//! Token counting with the o200k tokenizer (tiktoken-rs embeds the vocabulary, so
//! this works offline). Loaded once per process.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

fn bpe() -> Option<&'static CoreBPE> {
    static BPE: OnceLock<Option<CoreBPE>> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().ok()).as_ref()
}

/// Load the tokenizer now (a few hundred milliseconds, once per process), so that the
/// first model call does not wait for it; sessions call this on a blocking thread while
/// the corpus opens and the scout searches.
pub fn warm_up() {
    let _ = bpe();
}

/// Number of o200k tokens in `text`. Falls back to a chars/4 estimate only if the
/// embedded vocabulary failed to load (it never does in practice).
pub fn count_tokens(text: &str) -> u64 {
    match bpe() {
        Some(bpe) => bpe.encode_ordinary(text).len() as u64,
        None => (text.chars().count() as u64).div_ceil(4),
    }
}

/// Tokens of a chat request: the messages plus a small per-message overhead, as
/// OpenAI counts them (3 tokens per message, 3 to prime the reply).
pub fn count_chat_tokens(messages: &[(&str, &str)]) -> u64 {
    messages
        .iter()
        .map(|(role, content)| 3 + count_tokens(role) + count_tokens(content))
        .sum::<u64>()
        + 3
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_real_tokens() {
        assert_eq!(super::count_tokens(""), 0);
        let n = super::count_tokens("SQLite guarantees atomic commits with a rollback journal.");
        assert!((8..=16).contains(&n), "{n}");
    }
}
