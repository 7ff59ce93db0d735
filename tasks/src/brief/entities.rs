//! The names a brief's context mentions: runs of capitalised words.

/// Words that open an instruction, never a name, when a colon's list ends and the
/// writing instructions begin on the same line.
const INSTRUCTION_OPENERS: [&str; 10] = [
    "please", "note", "also", "thanks", "cover", "include", "write", "give", "use", "be",
];

/// Runs of capitalised words (joined by "of", "&" or a comma before "Inc"), not at a
/// sentence's or a line's start, nor an instruction's opening word after a colon
/// ("…cover: Please stick to…"), unless followed by another capitalised word; longest
/// first seen.
pub(super) fn entities(context: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let mut run: Vec<&str> = Vec::new();
    let words: Vec<&str> = context.split_whitespace().collect();
    // A line's first word opens a sentence too ("…right now\nPlease stick to…").
    let line_starts: std::collections::BTreeSet<usize> = context
        .lines()
        .scan(0usize, |seen, line| {
            let first = *seen;
            *seen += line.split_whitespace().count();
            Some(first)
        })
        .collect();
    let mut flush = |run: &mut Vec<&str>, out: &mut Vec<String>| {
        let joined = run.join(" ");
        let name = joined.trim_end_matches([',', '.', ';', ':']);
        // "SQLite's durability" names SQLite.
        let name = name
            .strip_suffix("'s")
            .or_else(|| name.strip_suffix("’s"))
            .or_else(|| name.strip_suffix('\''))
            .or_else(|| name.strip_suffix('’'))
            .unwrap_or(name)
            .to_string();
        let long_enough = run.len() >= 2 || (run.len() == 1 && name.chars().count() > 3);
        if long_enough && !name.is_empty() && seen.insert(name.clone()) {
            out.push(name);
        }
        run.clear();
    };
    for (i, word) in words.iter().enumerate() {
        let bare = word.trim_matches(|c: char| !c.is_alphanumeric());
        let capital = bare.chars().next().is_some_and(char::is_uppercase);
        // After a colon a name may follow ("two suppliers: Orbel and Harrow"); an
        // instruction's opening word may too ("…cover: Please stick to…").
        let after_colon = words[i.saturating_sub(1)].ends_with(':')
            && INSTRUCTION_OPENERS.contains(&bare.to_lowercase().as_str());
        let sentence_start = i == 0
            || line_starts.contains(&i)
            || after_colon
            || words[i - 1].ends_with(['.', '?', '!']);
        if capital && !(sentence_start && run.is_empty() && !next_is_capital(&words, i)) {
            run.push(word);
            // A possessive ends its name: "Keldermans Logistics' Waalhaven terminal".
            let possessive = ["'s", "’s", "'", "’"].iter().any(|p| word.ends_with(p));
            if word.ends_with([',', '.', ';', ':']) || possessive {
                flush(&mut run, &mut out);
            }
        } else {
            flush(&mut run, &mut out);
        }
    }
    flush(&mut run, &mut out);
    out
}

fn next_is_capital(words: &[&str], i: usize) -> bool {
    words
        .get(i + 1)
        .and_then(|w| w.chars().next())
        .is_some_and(char::is_uppercase)
}
