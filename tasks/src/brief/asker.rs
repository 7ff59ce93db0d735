//! What a brief's context says about its subject, apart from what it says about its
//! reader. "We're a growth-equity fund weighing a minority stake in X ahead of its
//! Series D, and I need a note for our investment committee" tells the writer who reads
//! and why; for ranking, only the names in it count ("X", "Series D"): the reader's
//! words (fund, stake, committee) would lift the same sentences in every subquestion.
//! A clause that speaks of the subject ("X, a Dayton maker of delivery robots for
//! hospitals") is kept up to where it turns to the occasion ("… ahead of its bond
//! sale", "…, from the company's document share").

use super::entities::entities;

/// Words that make the reader a clause's actor: the asker speaking of itself ("I
/// need", "we're weighing") or to the writer ("could you"). A possessive is not one:
/// "our billing service" is the subject.
const ASKER_WORDS: &[&str] = &[
    "i", "i'm", "i've", "i'd", "i'll", "we", "we're", "we've", "we'd", "we'll", "you", "you're",
    "you've", "you'd", "you'll",
];

/// Where a clause about the subject turns to the occasion of the request: its words
/// from here on are left out.
const OCCASION_TURNS: &[&str] = &[
    " ahead of ",
    " in advance of ",
    " in preparation for ",
    ", from the ",
    ", from its ",
    ", from their ",
    ", from our ",
    " from the team's ",
    " from the company's ",
    " from their ",
];

/// The context's words that describe its subject: clauses without the reader, each up
/// to its occasion; of the reader's clauses, only the names.
pub fn subject_words(context: &str) -> String {
    let mut kept: Vec<String> = Vec::new();
    for clause in clauses(context) {
        if speaks_of_asker(clause) {
            kept.extend(entities(clause));
        } else {
            // ASCII lower-casing keeps byte offsets, and the turns are ASCII.
            let lowered = clause.to_ascii_lowercase();
            let cut = OCCASION_TURNS
                .iter()
                .filter_map(|turn| lowered.find(turn))
                .min()
                .unwrap_or(clause.len());
            let about = clause[..cut].trim();
            if !about.is_empty() {
                kept.push(about.to_string());
            }
        }
    }
    kept.join(". ")
}

/// A context's clauses: its sentences, cut at semicolons and at ", and", ", but" and
/// ", so" joins.
fn clauses(context: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let split = deepr_evidence::split_sentences(context);
    for sentence in split.iter().filter_map(|s| s.text(context)) {
        let mut rest = sentence;
        loop {
            let lowered = rest.to_ascii_lowercase();
            let next = [";", ", and ", ", but ", ", so "]
                .iter()
                .filter_map(|join| lowered.find(join).map(|at| (at, join.len())))
                .min();
            match next {
                Some((at, len)) => {
                    out.push(&rest[..at]);
                    rest = &rest[at + len..];
                }
                None => {
                    out.push(rest);
                    break;
                }
            }
        }
    }
    out.into_iter()
        .map(|c| c.trim().trim_end_matches(['.', '?', '!']).trim())
        .filter(|c| !c.is_empty())
        .collect()
}

/// Whether a clause speaks of the asker or to the writer ([`ASKER_WORDS`]). "I" after
/// a capitalised word is a numeral ("Phase I", "Fund I"), not the asker.
fn speaks_of_asker(clause: &str) -> bool {
    let words: Vec<&str> = clause.split_whitespace().collect();
    words.iter().enumerate().any(|(i, word)| {
        let bare = word
            .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’')
            .replace('’', "'")
            .to_lowercase();
        let numeral = bare == "i" && i > 0 && words[i - 1].starts_with(|c: char| c.is_uppercase());
        ASKER_WORDS.contains(&bare.as_str()) && !numeral
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readers_clauses_give_only_their_names() {
        let context = "We're a growth-equity fund weighing a minority stake in Quillfeather Software Ltd ahead of its possible Series D, and I need a diligence note for our investment committee.";
        assert_eq!(
            subject_words(context),
            "Quillfeather Software Ltd. Series D"
        );
    }

    #[test]
    fn a_clause_about_the_subject_stays_up_to_its_occasion() {
        assert_eq!(
            subject_words("Kestrelmoor Robotics, Inc., a Dayton, Ohio maker of autonomous delivery robots for hospitals, from the company's internal document share."),
            "Kestrelmoor Robotics, Inc., a Dayton, Ohio maker of autonomous delivery robots for hospitals"
        );
        assert_eq!(
            subject_words(
                "the Lanthorn Valley Transit Authority (LVTA) ahead of its upcoming bond sale."
            ),
            "the Lanthorn Valley Transit Authority (LVTA)"
        );
    }

    #[test]
    fn a_numeral_i_is_no_asker() {
        assert_eq!(
            subject_words("Corvane Fund I LP, a Phase I trial sponsor"),
            "Corvane Fund I LP, a Phase I trial sponsor"
        );
        assert_eq!(
            subject_words("Since 2024 I have led the Corvane account"),
            "Corvane"
        );
    }

    #[test]
    fn a_possessive_is_no_reader() {
        assert_eq!(
            subject_words(
                "Research the migration of our billing service from MySQL to PostgreSQL."
            ),
            "Research the migration of our billing service from MySQL to PostgreSQL"
        );
    }

    #[test]
    fn a_subject_without_a_reader_is_kept_whole() {
        let context = "The co-op wants to replace its revolving credit facility before it matures this autumn; its members supply milk.";
        assert_eq!(
            subject_words(context),
            "The co-op wants to replace its revolving credit facility before it matures this autumn. its members supply milk"
        );
    }

    #[test]
    fn text_outside_ascii_is_cut_where_it_turns() {
        // İ lower-cases (fully) to two characters: offsets are taken from ASCII case.
        let context = "İİİ Ünïcode GmbH, a maker of Größen, from the team's share; and ÀÉÎ, and we";
        let _ = subject_words(context);
        assert_eq!(
            subject_words("Åsa Fjord AB ahead of its sale"),
            "Åsa Fjord AB"
        );
    }
}
