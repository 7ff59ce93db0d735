//! How a fact's value is found in a text: both sides normalised by the one comparison
//! function (`deepr_evidence::normalise`) and case-folded, and the value stated as a
//! whole — never inside a longer number or word ("38%" is not in "138%").

/// A text as values are compared in it.
pub(crate) fn folded(text: &str) -> String {
    deepr_evidence::normalise(text).to_lowercase()
}

/// Whether folded `prose` states folded `value` as a whole: not inside a longer number
/// or word ("38%" is not stated by "138%", "$48M" not by "$148M").
pub(crate) fn states(prose: &str, value: &str) -> bool {
    let part_of = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
    prose.match_indices(value).any(|(at, _)| {
        let before = prose[..at].chars().next_back();
        let after = prose[at + value.len()..].chars().next();
        let joins_before = value.starts_with(|c: char| c.is_alphanumeric()) && part_of(before);
        let joins_after = value.ends_with(|c: char| c.is_alphanumeric()) && part_of(after);
        let decimal_after = value.ends_with(|c: char| c.is_ascii_digit())
            && after == Some('.')
            && prose[at + value.len() + 1..].starts_with(|c: char| c.is_ascii_digit());
        !joins_before && !joins_after && !decimal_after
    })
}
