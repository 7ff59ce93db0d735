//! A brief's lists: parts between numbered or lettered markers (`(1)`, `a)`, `(iv)`,
//! "1." after a sentence), "covering: X, Y and Z" enumerations, and list items split at
//! their commas and "and"s, each cleaned of its joining words.

/// Leads that introduce an enumeration of parts.
pub(super) const ENUMERATION_LEADS: &[&str] = &[
    "covering:",
    "covering",
    "including:",
    "on the following:",
    "the following:",
    "addressing:",
    "address:",
    "cover:",
    "about:",
];

/// The text before the first marker, and the parts between markers: `(1)`, `(a)`,
/// `(iv)`, or `1)`/`a)` after a space.
pub(super) fn numbered_parts(sentence: &str) -> (String, Vec<String>) {
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let bytes = sentence.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let open = bytes[i] == b'(';
        let start = if open { i + 1 } else { i };
        let label_len = bytes[start..]
            .iter()
            .take(5)
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        let close = start + label_len;
        let label = sentence.get(start..close).unwrap_or("");
        // Two digits at most: "(2024)" is a year, not a part.
        let is_label = (1..=4).contains(&label_len)
            && ((label_len <= 2 && label.bytes().all(|b| b.is_ascii_digit()))
                || (label_len == 1 && label.bytes().all(|b| b.is_ascii_lowercase()))
                || label.bytes().all(|b| b"ivx".contains(&b)));
        let preceded = i == 0 || bytes[i - 1] == b' ';
        if is_label && preceded && bytes.get(close) == Some(&b')') && (open || label_len <= 2) {
            cuts.push((i, close + 1));
            i = close + 1;
            continue;
        }
        i += 1;
    }
    if cuts.len() < 2 {
        cuts = dotted_cuts(sentence);
    }
    if cuts.len() < 2 {
        return (sentence.to_string(), Vec::new());
    }
    let lead = sentence[..cuts[0].0].to_string();
    let mut parts = Vec::new();
    for (k, (_, end)) in cuts.iter().enumerate() {
        let stop = cuts.get(k + 1).map_or(sentence.len(), |(s, _)| *s);
        let part = clean_part(&sentence[*end..stop]);
        if !part.is_empty() {
            parts.push(part);
        }
    }
    (lead, parts)
}

/// Inline `1. … 2. … 3. …` markers: a number of one or two digits, a period and a space,
/// after a space or at the start — taken only when they count 1, 2, 3 … in order, so
/// "version 2. The" or "3.5" is never a part.
fn dotted_cuts(sentence: &str) -> Vec<(usize, usize)> {
    let bytes = sentence.as_bytes();
    let mut cuts = Vec::new();
    let mut expected = 1;
    for (i, _) in sentence.char_indices() {
        let preceded = i == 0 || bytes[i - 1] == b' ';
        let digits = bytes[i..]
            .iter()
            .take(3)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if !preceded || digits == 0 || digits > 2 {
            continue;
        }
        let end = i + digits;
        if bytes.get(end) != Some(&b'.') || bytes.get(end + 1) != Some(&b' ') {
            continue;
        }
        if sentence[i..end].parse::<usize>().ok() == Some(expected) {
            cuts.push((i, end + 1));
            expected += 1;
        }
    }
    cuts
}

/// "… covering: X, Y and Z." → [X, Y, Z].
pub(super) fn enumeration(sentence: &str) -> Option<(&str, Vec<String>)> {
    // ASCII lower-casing keeps byte offsets, so they cut the original text.
    let lowered = sentence.to_ascii_lowercase();
    let at_word = |i: usize| i == 0 || !lowered.as_bytes()[i - 1].is_ascii_alphanumeric();
    let (at, lead) = ENUMERATION_LEADS
        .iter()
        .filter_map(|l| {
            lowered
                .match_indices(l)
                .map(|(i, _)| i)
                .find(|i| at_word(*i))
                .map(|i| (i, *l))
        })
        .min_by_key(|(i, _)| *i)?;
    let pieces = list_items(sentence.get(at + lead.len()..)?);
    let before = sentence.get(..at)?;
    // The words before the lead that only introduce it ("… a note that answers") go —
    // never a name ("… asked you to research Acme Corp, covering:" keeps Acme Corp).
    let before = [" that ", " which "]
        .iter()
        .filter_map(|w| before.rfind(w))
        .max()
        .filter(|cut| {
            before
                .get(*cut..)
                .is_some_and(|tail| !tail.chars().any(char::is_uppercase))
        })
        .and_then(|cut| before.get(..cut))
        .unwrap_or(before);
    (pieces.len() >= 2).then_some((before, pieces))
}

/// The items of a list: "X, Y and Z" → [X, Y, Z]. Only the last piece's "and" joins
/// the list; an earlier "X and Y" is one item ("payload and battery life, pricing, and
/// …"). A list whose items are set apart by semicolons is split at them only: its items
/// may hold commas ("how loyal its customers are, including churn; the people side").
/// Joining words and final punctuation are dropped.
pub fn list_items(list: &str) -> Vec<String> {
    let by_semicolons = list.contains(';');
    let separators: &[char] = if by_semicolons { &[';'] } else { &[',', ';'] };
    list.split(separators)
        .map(str::trim)
        .collect::<Vec<_>>()
        .split_last()
        .map(|(last, firsts)| {
            // Only the last piece holds the list's own "and" ("A, B and C"); an
            // earlier "X and Y" is one part ("payload and battery life, pricing, and …").
            let mut pieces: Vec<&str> = firsts.to_vec();
            // Items set apart by semicolons hold their own "and"s ("the budget, reserves
            // and debt"); the list's joins the last item ("; and the people side").
            match last.rsplit_once(" and ") {
                Some((before, after)) if !last.starts_with("and ") && !by_semicolons => {
                    pieces.extend([before, after])
                }
                _ => pieces.push(last),
            }
            pieces
        })
        .map(from_range)
        .unwrap_or_default()
        .into_iter()
        .map(clean_part)
        .filter(|p| !p.is_empty())
        .collect()
}

/// A range's ends are items of their own: in "from headcount, hiring and attrition to
/// leadership changes", "from headcount" is "headcount" and "attrition to leadership
/// changes" is two items — the first " to " after an item opening with "from ".
fn from_range(pieces: Vec<&str>) -> Vec<&str> {
    let mut out = Vec::with_capacity(pieces.len() + 1);
    let mut in_range = false;
    for piece in pieces {
        let opens = piece
            .get(..5)
            .is_some_and(|head| head.eq_ignore_ascii_case("from "));
        if let Some(rest) = piece.get(5..).filter(|_| opens) {
            // "from Q1 to Q3" holds its own end: no range left open.
            in_range = !rest.contains(" to ");
            out.push(rest);
            continue;
        }
        match piece.split_once(" to ").filter(|_| in_range) {
            Some((end, next)) if !end.trim().is_empty() && !next.trim().is_empty() => {
                in_range = false;
                out.extend([end, next]);
            }
            _ => out.push(piece),
        }
    }
    out
}

/// A part without its joining words and final punctuation.
pub(super) fn clean_part(text: &str) -> String {
    let mut part = text
        .trim()
        .trim_end_matches(['.', ';', ',', ':', ' '])
        .trim()
        .to_string();
    for tail in [", and", " and", ", or", " or"] {
        if let Some(stripped) = part.strip_suffix(tail) {
            part = stripped.trim_end_matches([',', ' ']).to_string();
        }
    }
    for head in ["and ", "or "] {
        if let Some(stripped) = part.strip_prefix(head) {
            part = stripped.to_string();
        }
    }
    part.trim().to_string()
}
