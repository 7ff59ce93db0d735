//! The words a unit and a question are matched by: content words (`content_terms`,
//! whose suffix stripper already makes "commits" meet "commit"), reduced again by the
//! Snowball rule the corpus index uses (`deepr_evidence::stem`), so forms the stripper
//! leaves apart meet: "operational" and "operations", "журнала" and "журнал".
//!
//! Snowball over the raw words merges more ("guaranteed" with "guarantee"): tried, it
//! put sentences that only share such a verb over the README question's answers.

use deepr_evidence::terms::content_terms;

/// One content word's stem (`deepr_evidence::stem::snowball`), the word itself when the
/// stem would be empty.
pub(crate) fn stem(term: &str) -> String {
    let stemmed = deepr_evidence::stem::snowball(term);
    if stemmed.is_empty() {
        term.to_string()
    } else {
        stemmed
    }
}

/// The stems of `text`'s content words, in order, repeats kept. The parts of a
/// lower-case snake_case name are words of their own ("active_member_farms": active,
/// member, farms — a CSV header's column names are often written so); a constant's
/// (`SQLITE_IOERR_COMMIT_ATOMIC`) are not: it names one thing, not its words.
pub(crate) fn score_terms(text: &str) -> Vec<String> {
    let spaced: String = text
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '|' | ';'))
        .map(|w| {
            if w.contains('_') && !w.chars().any(char::is_uppercase) {
                w.replace('_', " ")
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    content_terms(&spaced).iter().map(|w| stem(w)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflections_of_one_word_share_a_stem_and_other_words_do_not() {
        assert_eq!(score_terms("risks"), score_terms("risk"));
        assert_eq!(score_terms("operational"), score_terms("operations"));
        assert_eq!(stem("журнала"), stem("журнал"));
        // Han characters and numbers stay as they are.
        assert_eq!(stem("日"), "日");
        assert_eq!(stem("2026"), "2026");
        assert_eq!(score_terms("commits"), score_terms("commit"));
        assert_eq!(score_terms("The operating risks of 2026").len(), 2);
        assert_eq!(
            score_terms("active_member_farms: 587"),
            score_terms("active member farms")
        );
        assert_eq!(score_terms("SQLITE_IOERR_COMMIT_ATOMIC").len(), 1);
        // A tab-separated row's column name too.
        assert_eq!(score_terms("Region\tactive_member_farms").len(), 4);
    }
}
