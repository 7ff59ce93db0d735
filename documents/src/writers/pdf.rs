//! A PDF with a real text layer (lopdf, through pdf-extract's re-export): Helvetica,
//! one line per `Tj`, paragraphs wrapped at [`WRAP`] characters, a blank line after
//! each block, list items as `- ` lines, table rows as lines of their cells set apart by
//! spaces (a PDF keeps no table structure), and an Info dictionary with the title and dates.
//!
//! [`write_pdf_typeset`] sets pages as a word processor does instead ([`Typeset`]: a
//! column wrapped by glyph widths, a line spacing such as 1.5 lines, hyphenation at
//! soft hyphens, bullets), for the readers' tests of what such files' text layers
//! look like.

use pdf_extract::content::{Content, Operation};
use pdf_extract::{dictionary, Dictionary, Document as Pdf, Object, Stream, StringFormat};

use super::{Block, Meta, WriteError};

/// Characters per line before a paragraph wraps.
const WRAP: usize = 92;

/// Lines of one page: each block's lines, then a blank line.
fn page_lines(blocks: &[Block]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_list = false;
    for block in blocks {
        // A list ends with a blank line, as typeset lists are spaced from what follows.
        if in_list && !matches!(block, Block::Item(_)) {
            lines.push(String::new());
        }
        in_list = matches!(block, Block::Item(_));
        match block {
            Block::Heading(_, text) => lines.push(text.clone()),
            Block::Paragraph(text) => lines.extend(wrap(text, "")),
            Block::Item(text) => {
                lines.extend(wrap(&format!("- {text}"), "  "));
                continue;
            }
            Block::Table(rows) => lines.extend(rows.iter().map(|row| row.join("    "))),
            Block::Notes(_) => continue,
        }
        lines.push(String::new());
    }
    lines
}

/// `text` wrapped at word boundaries; continuation lines start with `indent`.
fn wrap(text: &str, indent: &str) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let Some(line) = lines.last_mut() else { break };
        if !line.is_empty() && line.len() + word.len() + 1 > WRAP {
            lines.push(format!("{indent}{word}"));
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

/// Latin-1 bytes of a line (WinAnsi covers them; anything else becomes `?`).
fn latin1(line: &str) -> Vec<u8> {
    line.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

/// `2026-04-14T09:30:00Z` → `D:20260414093000Z`.
fn pdf_date(rfc3339: &str) -> String {
    let digits: String = rfc3339
        .chars()
        .filter(char::is_ascii_digit)
        .take(14)
        .collect();
    format!("D:{digits}Z")
}

/// A PDF of `pages`, each a list of blocks.
pub fn write_pdf(meta: &Meta, pages: &[Vec<Block>]) -> Result<Vec<u8>, WriteError> {
    let contents = pages.iter().map(|page| page_operations(page)).collect();
    document(meta, &[("F1", "Helvetica")], contents)
}

/// A page as one text object: Helvetica 10 on a 13-point leading, one `Tj` per line.
fn page_operations(blocks: &[Block]) -> Vec<Operation> {
    let mut operations = vec![
        Operation::new("BT", vec![]),
        Operation::new("Tf", vec!["F1".into(), 10.into()]),
        Operation::new("TL", vec![13.into()]),
        Operation::new("Td", vec![40.into(), 800.into()]),
    ];
    for line in page_lines(blocks) {
        operations.push(Operation::new(
            "Tj",
            vec![Object::String(latin1(&line), StringFormat::Literal)],
        ));
        operations.push(Operation::new("T*", vec![]));
    }
    operations.push(Operation::new("ET", vec![]));
    operations
}

/// The file: `fonts` (resource name, base font) shared by every page, one page per
/// content, and an Info dictionary from `meta`.
fn document(
    meta: &Meta,
    fonts: &[(&str, &str)],
    contents: Vec<Vec<Operation>>,
) -> Result<Vec<u8>, WriteError> {
    let mut doc = Pdf::with_version("1.5");
    let pages_id = doc.new_object_id();
    let mut font_dict = Dictionary::new();
    for (name, base) in fonts {
        let font_id = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => *base,
            "Encoding" => "WinAnsiEncoding",
        });
        font_dict.set(*name, font_id);
    }
    let resources_id = doc.add_object(dictionary! { "Font" => font_dict });
    let mut kids: Vec<Object> = Vec::new();
    for operations in contents {
        let content = Content { operations }
            .encode()
            .map_err(|e| WriteError::Encoding("pdf", e.to_string()))?;
        let content_id = doc.add_object(Stream::new(dictionary! {}, content));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 842.into()],
        });
        kids.push(page_id.into());
    }
    let count = i64::try_from(kids.len()).unwrap_or(i64::MAX);
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids, "Count" => count, "Resources" => resources_id,
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    let info_id = doc.add_object(dictionary! {
        "Title" => Object::String(latin1(&meta.title), StringFormat::Literal),
        "Author" => Object::String(latin1(&meta.author), StringFormat::Literal),
        "CreationDate" => Object::string_literal(pdf_date(&meta.created)),
        "ModDate" => Object::string_literal(pdf_date(&meta.modified)),
    });
    doc.trailer.set("Info", info_id);
    let mut out = Vec::new();
    doc.save_to(&mut out)
        .map_err(|e| WriteError::Encoding("pdf", e.to_string()))?;
    Ok(out)
}

/// How [`write_pdf_typeset`] sets its pages, as a word processor does: every line
/// placed on its own (`BT`, `Tm`, a `TJ` array, `ET`), paragraphs wrapped by the glyphs'
/// widths in a column, baselines a multiple of the font's line height apart, bold
/// headings (the first level larger), bullets hung before their text, and words broken
/// with a hyphen at the source's soft hyphens (U+00AD, the breaks a hyphenation
/// dictionary offers) when that fills a line better.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Typeset {
    /// Body text size, points.
    pub size: f64,
    /// Baseline to baseline in lines of 1.15 × the size (Helvetica's line height): 1.5 for a memo at
    /// one-and-a-half spacing, 1.0 for single spacing.
    pub spacing: f64,
    /// Column width, points.
    pub column: f64,
    /// Extra space after each block, points (0: none, word processors' default: 8).
    pub space_after: f64,
    /// Words set apart by `TJ` offsets instead of space glyphs, as TeX and some
    /// browsers write them (the text layer then has no spaces of its own; table rows
    /// keep theirs).
    pub word_gaps: bool,
}

impl Default for Typeset {
    /// A memo in a narrow column (about 45 characters a line) at 1.5 lines, nothing
    /// between paragraphs but the line spacing.
    fn default() -> Self {
        Self {
            size: 10.0,
            spacing: 1.5,
            column: 220.0,
            space_after: 0.0,
            word_gaps: false,
        }
    }
}

/// A font's line height in multiples of its size, as word processors count "1 line".
const LINE_HEIGHT: f64 = 1.15;
/// Where a typeset page's first baseline and every line's left edge sit, points.
const TOP: f64 = 800.0;
const LEFT: f64 = 72.0;
/// How far a list item's text hangs after its bullet, points.
const HANG: f64 = 18.0;

/// A PDF of `pages`, each a list of blocks, set as `set` says (see [`Typeset`]).
pub fn write_pdf_typeset(
    meta: &Meta,
    pages: &[Vec<Block>],
    set: &Typeset,
) -> Result<Vec<u8>, WriteError> {
    let contents = pages.iter().map(|page| typeset_page(page, set)).collect();
    document(
        meta,
        &[("F1", "Helvetica"), ("F2", "Helvetica-Bold")],
        contents,
    )
}

/// One typeset line: its font, size, left edge and `TJ` array.
struct SetLine {
    font: &'static str,
    size: f64,
    x: f64,
    parts: Vec<Object>,
}

/// A typeset page's operations: each block's lines down the column, `space_after`
/// below each block.
fn typeset_page(blocks: &[Block], set: &Typeset) -> Vec<Operation> {
    let mut operations = Vec::new();
    let mut y: Option<f64> = None;
    for block in blocks {
        for line in set_block(block, set) {
            let baseline = y.map_or(TOP, |y| y - line.size * LINE_HEIGHT * set.spacing);
            y = Some(baseline);
            operations.extend([
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec![line.font.into(), real(line.size)]),
                Operation::new(
                    "Tm",
                    vec![
                        1.into(),
                        0.into(),
                        0.into(),
                        1.into(),
                        real(line.x),
                        real(baseline),
                    ],
                ),
                Operation::new("TJ", vec![Object::Array(line.parts)]),
                Operation::new("ET", vec![]),
            ]);
        }
        y = y.map(|y| y - set.space_after);
    }
    operations
}

/// A block's typeset lines (speaker notes have none).
fn set_block(block: &Block, set: &Typeset) -> Vec<SetLine> {
    let line = |font, size, x, text: &str| SetLine {
        font,
        size,
        x,
        parts: line_parts(text, size, set),
    };
    match block {
        Block::Heading(level, text) => {
            let size = if *level == 1 {
                set.size * 1.4
            } else {
                set.size
            };
            let lines = wrap_to_width(text, set.column, size);
            lines.iter().map(|l| line("F2", size, LEFT, l)).collect()
        }
        Block::Paragraph(text) => wrap_to_width(text, set.column, set.size)
            .iter()
            .map(|l| line("F1", set.size, LEFT, l))
            .collect(),
        Block::Item(text) => set_item(text, set),
        Block::Table(rows) => rows
            .iter()
            .map(|row| line("F1", set.size, LEFT, &row.join("    ")))
            .collect(),
        Block::Notes(_) => Vec::new(),
    }
}

/// A list item: a bullet, then its text hung [`HANG`] points in, continuation lines
/// under the text (a kerning offset in the `TJ` array moves past the bullet).
fn set_item(text: &str, set: &Typeset) -> Vec<SetLine> {
    let lines = wrap_to_width(text, set.column - HANG, set.size);
    let after_bullet = (HANG - text_width("\u{2022}", set.size)) * 1000.0 / set.size;
    lines
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let mut parts = line_parts(text, set.size, set);
            if i == 0 {
                let bullet = Object::String(winansi("\u{2022}"), StringFormat::Literal);
                parts.splice(0..0, [bullet, real(-after_bullet)]);
            }
            SetLine {
                font: "F1",
                size: set.size,
                x: if i == 0 { LEFT } else { LEFT + HANG },
                parts,
            }
        })
        .collect()
}

/// A line's `TJ` array: its text as one string, or with [`Typeset::word_gaps`] one
/// string a word, each gap a space's width (a table row stays one string: its cells
/// are set apart by runs of spaces, which a gap cannot say).
fn line_parts(text: &str, size: f64, set: &Typeset) -> Vec<Object> {
    let string = |text: &str| Object::String(winansi(text), StringFormat::Literal);
    if !set.word_gaps || text.contains("  ") {
        return vec![string(text)];
    }
    let gap = -text_width(" ", size) * 1000.0 / size;
    let mut parts = Vec::new();
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            parts.push(real(gap));
        }
        parts.push(string(word));
    }
    parts
}

/// `text` wrapped into lines no wider than `width` points at `size`: whole words while
/// they fit, then as much of the next word as fits before one of its soft hyphens
/// (written as `-`), the rest on the next line; soft hyphens are otherwise dropped.
fn wrap_to_width(text: &str, width: f64, size: f64) -> Vec<String> {
    let space = text_width(" ", size);
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let mut word = word.to_string();
        while let Some(line) = lines.last_mut() {
            let room = width - text_width(line, size) - if line.is_empty() { 0.0 } else { space };
            let visible = word.replace('\u{AD}', "");
            if line.is_empty() || text_width(&visible, size) <= room {
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(&visible);
                break;
            }
            if let Some((head, tail)) = hyphen_break(&word, room, size) {
                line.push(' ');
                line.push_str(&head);
                word = tail;
            }
            lines.push(String::new());
        }
    }
    lines
}

/// The longest start of `word` ending at a soft hyphen that fits in `room` points with
/// a hyphen after it (`("opera-", "tions")`), and the rest of the word.
fn hyphen_break(word: &str, room: f64, size: f64) -> Option<(String, String)> {
    word.match_indices('\u{AD}')
        .rev()
        .map(|(at, hyphen)| {
            let head = format!("{}-", word[..at].replace('\u{AD}', ""));
            (head, word[at + hyphen.len()..].to_string())
        })
        .find(|(head, _)| text_width(head, size) <= room)
}

/// Helvetica's advance widths for ASCII 32..=126, thousandths of the size (its AFM).
const HELVETICA: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278,
    278, // ' '..'/'
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584,
    556, // '0'..'?'
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722,
    778, // '@'..'O'
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469,
    556, // 'P'..'_'
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556,
    556, // '`'..'o'
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584, // 'p'..'~'
];

/// How wide `text` is set in Helvetica at `size`, points (a bullet is 350, any other
/// character outside ASCII 556, a digit's width).
fn text_width(text: &str, size: f64) -> f64 {
    let units: u32 = text
        .chars()
        .map(|c| match c {
            ' '..='~' => u32::from(HELVETICA[c as usize - 32]),
            '\u{2022}' => 350,
            _ => 556,
        })
        .sum();
    f64::from(units) * size / 1000.0
}

/// WinAnsi bytes of a line: Latin-1, plus the bullet, dashes and curly quotes a word
/// processor sets; anything else becomes `?`.
fn winansi(line: &str) -> Vec<u8> {
    line.chars()
        .map(|c| match c {
            '\u{2022}' => 0x95,
            '\u{2013}' => 0x96,
            '\u{2014}' => 0x97,
            '\u{2018}' => 0x91,
            '\u{2019}' => 0x92,
            '\u{201C}' => 0x93,
            '\u{201D}' => 0x94,
            c => u8::try_from(u32::from(c)).unwrap_or(b'?'),
        })
        .collect()
}

/// A PDF number for a measure in points.
fn real(value: f64) -> Object {
    // Two decimals, as word processors write positions.
    Object::Real(((value * 100.0).round() / 100.0) as f32)
}
