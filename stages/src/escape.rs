//! Text from pages and models made safe for a markdown report: on one line, and
//! unable to start a heading, a list, a quote or a footnote definition.

/// Whitespace runs folded to single spaces, on one line.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Escape text that came from models or pages so it cannot inject markdown structure
/// (headings, footnote definitions, HTML).
pub fn md_text(text: &str) -> String {
    let line = one_line(text);
    // Brackets escaped: no footnote reference or definition, link, image or link
    // reference can be formed.
    let line = line
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('[', "\\[")
        .replace(']', "\\]");
    match line.chars().next() {
        // A heading, quote, table, list item, or code fence (``` or ~~~).
        Some('#' | '>' | '|' | '-' | '+' | '*' | '`' | '~') => format!("\\{line}"),
        _ => {
            // "12. text" or "12) text" would start an ordered list.
            let digits = line.chars().take_while(char::is_ascii_digit).count();
            match line[digits..].chars().next() {
                Some(mark @ ('.' | ')')) if digits > 0 && line[digits + 1..].starts_with(' ') => {
                    format!("{}\\{mark}{}", &line[..digits], &line[digits + 1..])
                }
                _ => line,
            }
        }
    }
}
