//! Text from pages and models made safe for a markdown report: on one line, and
//! unable to start a heading, a list, a quote or a footnote definition.

/// Whitespace runs folded to single spaces, on one line.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The report's title line, and a long brief in full as a quote under it.
pub fn title_block(brief: &deepr_tasks::brief::Brief, topic: &str) -> String {
    let title = brief.title(topic);
    let mut block = format!("# {}\n\n", md_text(&title));
    if title != one_line(topic) {
        block.push_str(&format!("> **Brief.** {}\n\n", md_text(topic)));
    }
    block
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
