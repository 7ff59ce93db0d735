//! A PDF page's lines joined into paragraphs before sentences are cut: a line that
//! ends without a sentence end and a next line that continues it (lower case, or a gap
//! no wider than the page's usual line spacing) run on; a hyphen at a line end that
//! splits a word is a line-break hyphen and goes. The text stays an exact rendering of
//! what was read: quotes are slices of it.

use super::{list_marker, Line};

/// How a line follows the line above it in a page's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Break {
    /// Run on: it continues the line above's paragraph (see [`join`]).
    Wrap,
    /// A newline: the lines stay one block (`blocks_of_lines` joins a paragraph's lines
    /// and keeps list items and table rows apart).
    Newline,
    /// A blank line: a new block.
    Blank,
}

/// A page's text for `blocks_of_lines`: pdf-extract's plain text, but with every line
/// that continues a paragraph run on after the line above ([`break_after`]), so
/// that a memo at 1.5 line spacing, whose plain text has a blank line after every
/// line, still reads as paragraphs.
pub(super) fn page_text(lines: &[Line]) -> String {
    let usual = usual_gap(lines);
    let margins = run_margins(lines, usual);
    let mut text = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i == 0 {
            text.push_str(&"\n".repeat(line.breaks));
            text.push_str(&line.text);
            continue;
        }
        let separator = match break_after(lines, i, usual, &margins) {
            Break::Wrap => {
                join(&mut text, &line.text);
                continue;
            }
            Break::Newline => "\n",
            Break::Blank => "\n\n",
        };
        text.push_str(separator);
        text.push_str(&line.text);
    }
    text
}

/// The page's usual line spacing: its most common gap between one baseline and the
/// next one down (to the half point; the smaller of two as common), if any lines
/// follow each other.
fn usual_gap(lines: &[Line]) -> Option<f64> {
    let mut counts = std::collections::BTreeMap::<i64, usize>::new();
    for pair in lines.windows(2) {
        let gap = pair[1].y - pair[0].y;
        if gap >= pair[0].size * 0.5 && gap <= pair[0].size * 3.0 {
            *counts.entry((gap * 2.0).round() as i64).or_default() += 1;
        }
    }
    let usual = counts.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)));
    usual.map(|(half_points, _)| *half_points as f64 / 2.0)
}

/// Whether `below` is the next line down from `above` at the usual spacing (a point
/// or a tenth of it more at most).
fn in_step(above: &Line, below: &Line, usual: Option<f64>) -> bool {
    let gap = below.y - above.y;
    gap >= above.size * 0.5 && usual.is_some_and(|u| gap <= u + (u * 0.1).max(1.0))
}

/// Each line's right margin: where the longest line of its run (lines in step with
/// each other) ends.
fn run_margins(lines: &[Line], usual: Option<f64>) -> Vec<f64> {
    let mut margins = Vec::with_capacity(lines.len());
    let mut start = 0;
    for i in 1..=lines.len() {
        if i == lines.len() || !in_step(&lines[i - 1], &lines[i], usual) {
            let margin = lines[start..i].iter().map(|l| l.right).fold(0.0, f64::max);
            margins.extend(std::iter::repeat_n(margin, i - start));
            start = i;
        }
    }
    margins
}

/// How line `i` follows the line above it (`margins`: each line's run's right margin).
/// pdf-extract's break stands, except: below a wider gap than the page's usual
/// spacing is a new block; a word broken at the line end runs on; at the usual
/// spacing, a line that continues the sentence above runs on though the plain text
/// put a blank line between them ([`continues`]), table rows stay together, and a
/// heading ([`heading_at`]) is a block of its own though the plain text ran it into
/// the lines around it.
fn break_after(lines: &[Line], i: usize, usual: Option<f64>, margins: &[f64]) -> Break {
    let (above, below, margin) = (&lines[i - 1], &lines[i], margins[i - 1]);
    let plain = if below.breaks >= 2 {
        Break::Blank
    } else {
        Break::Newline
    };
    // Beside or above it (another column, text set out of order), or measured in no
    // size (rotated text).
    let elsewhere = !above.size.is_normal() || below.y - above.y < above.size * 0.5;
    if elsewhere || usual.is_none() {
        return plain;
    }
    if !in_step(above, below, usual) {
        return Break::Blank;
    }
    let (a, b) = (above.text.trim(), below.text.trim());
    if word_broken(a, b) || (plain == Break::Blank && continues(above, below, margin)) {
        return Break::Wrap;
    }
    if table_like(a) && table_like(b) {
        return Break::Newline;
    }
    let heading_below =
        heading_at(lines, i, margins) && (ends_sentence(a) || !fills_line(above, below, margin));
    if heading_at(lines, i - 1, margins) || heading_below {
        return Break::Blank;
    }
    plain
}

/// Whether `b` goes on `a`'s sentence: neither is a list item or a table row, they
/// are set in one size, `a` ends no sentence (`.`, `!`, `?`, `:`, `;`, closing quotes
/// aside), and `b` starts in lower case or with punctuation that cannot start a
/// sentence, or `a` fills its line (`b`'s first word would not have fitted after it)
/// and is not a title-case heading. A sentence that ends a line ends the block: at
/// the same spacing nothing tells a paragraph's end from a sentence that happens to
/// end a line, and a block break between two sentences costs no sentence.
fn continues(above: &Line, below: &Line, margin: f64) -> bool {
    let (a, b) = (above.text.trim(), below.text.trim());
    if a.is_empty() || b.is_empty() || !mergeable(a, b) || !same_size(above, below) {
        return false;
    }
    if ends_sentence(a) {
        return false;
    }
    starts_mid_sentence(b) || (fills_line(above, below, margin) && !title_case(a))
}

/// Whether a line ending `a` and one starting `b` may be one paragraph's: `b` starts
/// no list item and neither reads as a table row.
fn mergeable(a: &str, b: &str) -> bool {
    list_marker(b).is_none() && !table_like(a) && !table_like(b)
}

/// Whether line `i` is a heading: a title-case line that ends no sentence, starts no
/// list item and reads as no table row, short of its margin (the next line's first
/// word would have fitted after it) unless it is the page's last, with no next line
/// going on with its sentence.
fn heading_at(lines: &[Line], i: usize, margins: &[f64]) -> bool {
    let (line, text) = (&lines[i], lines[i].text.trim());
    if !title_case(text) || ends_sentence(text) || list_marker(text).is_some() || table_like(text) {
        return false;
    }
    lines.get(i + 1).is_none_or(|next| {
        !starts_mid_sentence(next.text.trim()) && !fills_line(line, next, margins[i])
    })
}

fn same_size(a: &Line, b: &Line) -> bool {
    (a.size - b.size).abs() <= a.size * 0.1
}

/// Whether `above` reaches so near `margin` that `below`'s first word (and a space)
/// would not have fitted after it: a wrapped line, not one that ended on purpose.
fn fills_line(above: &Line, below: &Line, margin: f64) -> bool {
    let Some(left) = below.left else {
        return false;
    };
    let word = below.first_word.unwrap_or(below.right) - left;
    margin - above.right < word + below.size * 0.28
}

/// Whether a line ends a sentence or a clause: `.`, `!`, `?`, `:` or `;` last, closing
/// quotes and brackets aside.
fn ends_sentence(line: &str) -> bool {
    line.trim_end_matches(['"', '\'', '\u{201D}', '\u{2019}', ')', ']'])
        .ends_with(['.', '!', '?', ':', ';'])
}

/// Whether a line starts inside a sentence: a lower-case letter, or punctuation no
/// sentence starts with.
fn starts_mid_sentence(line: &str) -> bool {
    line.starts_with(|c: char| c.is_lowercase() || ",;:)]}%".contains(c))
}

/// Whether a line reads as a title-case heading: one to twelve words, no comma, a
/// capital first and on every word of four letters or more.
fn title_case(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    (1..=12).contains(&words.len())
        && !line.contains(',')
        && line.starts_with(char::is_uppercase)
        && words
            .iter()
            .all(|w| w.chars().count() < 4 || !w.starts_with(char::is_lowercase))
}

/// Whether a line reads as a table row: cells set apart by a tab or two spaces or
/// more, the first not ending a sentence (`One.  Two.` is prose typed with two spaces).
fn table_like(line: &str) -> bool {
    let mut cells = line
        .split('\t')
        .flat_map(|part| part.split("  "))
        .map(str::trim)
        .filter(|c| !c.is_empty());
    let first = cells.next();
    cells.next().is_some() && first.is_some_and(|c| !c.ends_with(['.', '!', '?', ';', ',']))
}

/// Whether line `a` ends in a word that `b` finishes: a letter and a hyphen last, a
/// letter or digit first, and `b` no list item or table row.
fn word_broken(a: &str, b: &str) -> bool {
    line_break_hyphen(a, b).is_some() && mergeable(a, b)
}

/// For a line `text` ending in a letter and a hyphen before `next` starting with a
/// letter or digit: whether the hyphen only broke the word (dropped: `opera-` `tions`
/// → `operations`, between lower-case letters, as typesetting breaks words, and a soft
/// hyphen always) or is part of it (kept: `Jean-` `Luc`, `COVID-` `19`, and a
/// compound already hyphenated, `state-of-the-` `art`).
fn line_break_hyphen(text: &str, next: &str) -> Option<bool> {
    let mut end = text.chars().rev();
    let hyphen = end
        .next()
        .filter(|c| matches!(c, '-' | '\u{AD}' | '\u{2010}'))?;
    let before = end.next().filter(|c| c.is_alphabetic())?;
    let after = next.chars().next().filter(|c| c.is_alphanumeric())?;
    let word = text.rsplit(char::is_whitespace).next().unwrap_or(text);
    let compound = word[..word.len() - hyphen.len_utf8()].contains(['-', '\u{2010}']);
    Some(hyphen == '\u{AD}' || (before.is_lowercase() && after.is_lowercase() && !compound))
}

/// `next` run on after the paragraph `text` ends with: after a space, or straight
/// after a hyphen that breaks a word, which goes when it only broke the word (see
/// [`line_break_hyphen`]).
pub(super) fn join(text: &mut String, next: &str) {
    let next = next.trim_start();
    text.truncate(text.trim_end().len());
    match line_break_hyphen(text, next) {
        Some(true) => {
            text.pop();
        }
        Some(false) => {}
        None => text.push(' '),
    }
    text.push_str(next);
}
