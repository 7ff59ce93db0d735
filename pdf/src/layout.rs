//! Blocks set on A4 pages: words measured with the fonts' own advances (skrifa),
//! broken into lines greedily, lines onto pages. The result is plain data — runs of
//! text at positions, link areas, outline entries — that `paint` draws; nothing here
//! writes PDF.

use skrifa::instance::{LocationRef, Size};
use skrifa::{FontRef, MetadataProvider};

use crate::blocks::{Block, Kind, Span, Style};
use crate::PdfError;

pub const PAGE_WIDTH: f32 = 595.28;
pub const PAGE_HEIGHT: f32 = 841.89;
const MARGIN_X: f32 = 62.0;
const MARGIN_TOP: f32 = 64.0;
const MARGIN_BOTTOM: f32 = 70.0;
const INDENT: f32 = 14.0;
/// Pages a report may fill: a bound, far above any report deepr writes.
pub const MAX_PAGES: usize = 5_000;

/// The four faces text is set in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Face {
    Regular = 0,
    Bold = 1,
    Italic = 2,
    Mono = 3,
}

/// The faces' data and what layout needs of them: each character's advance.
pub struct Fonts {
    pub data: [&'static [u8]; 4],
    refs: Vec<FontRef<'static>>,
    units_per_em: [f32; 4],
}

impl Fonts {
    /// Libertinus Serif (regular, bold, italic) and DejaVu Sans Mono, as Typst ships them.
    pub fn bundled() -> Result<Self, PdfError> {
        let find = |name: &str| -> Result<&'static [u8], PdfError> {
            typst_assets::fonts()
                .find(|data| {
                    FontRef::new(data).is_ok_and(|font| {
                        font.localized_strings(skrifa::string::StringId::POSTSCRIPT_NAME)
                            .english_or_first()
                            .is_some_and(|s| s.chars().eq(name.chars()))
                    })
                })
                .ok_or_else(|| PdfError::Font(format!("the bundled font {name} is missing")))
        };
        let data = [
            find("LibertinusSerif-Regular")?,
            find("LibertinusSerif-Bold")?,
            find("LibertinusSerif-Italic")?,
            find("DejaVuSansMono")?,
        ];
        let mut refs = Vec::new();
        let mut units_per_em = [1000.0; 4];
        for (i, bytes) in data.iter().enumerate() {
            let font = FontRef::new(bytes).map_err(|e| PdfError::Font(e.to_string()))?;
            units_per_em[i] = f32::from(
                font.metrics(Size::unscaled(), LocationRef::default())
                    .units_per_em,
            );
            refs.push(font);
        }
        Ok(Self {
            data,
            refs,
            units_per_em,
        })
    }

    fn has(&self, face: Face, c: char) -> bool {
        c.is_whitespace() || self.refs[face as usize].charmap().map(c).is_some()
    }

    /// The width of `text` in `face` at `size` points (advances, no kerning).
    pub fn width(&self, face: Face, size: f32, text: &str) -> f32 {
        let font = &self.refs[face as usize];
        let charmap = font.charmap();
        let metrics = font.glyph_metrics(Size::unscaled(), LocationRef::default());
        let units: f32 = text
            .chars()
            .map(|c| {
                let glyph = charmap.map(c).unwrap_or_default();
                metrics.advance_width(glyph).unwrap_or(500.0)
            })
            .sum();
        units / self.units_per_em[face as usize] * size
    }

    /// The face a word is set in: its style's, or the mono face when only that one
    /// has every character (Cyrillic and Greek are in both; box drawing only in mono).
    fn face_for(&self, style: Style, word: &str) -> Face {
        let face = match style {
            Style::Regular => Face::Regular,
            Style::Bold => Face::Bold,
            Style::Italic => Face::Italic,
            Style::Mono => Face::Mono,
        };
        let covered = |f: Face| word.chars().all(|c| self.has(f, c));
        if face != Face::Mono && !covered(face) && covered(Face::Mono) {
            Face::Mono
        } else {
            face
        }
    }
}

/// Text set at a point: `y` is its baseline, from the page's top.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub x: f32,
    pub y: f32,
    pub text: String,
    pub face: Face,
    pub size: f32,
    pub width: f32,
    pub link: Option<String>,
}

/// A heading's place, for the PDF's outline (bookmarks).
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    pub level: u8,
    pub text: String,
    pub page: usize,
    pub y: f32,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Page {
    pub runs: Vec<Run>,
    /// Horizontal rules: (x from, x to, y).
    pub rules: Vec<(f32, f32, f32)>,
}

/// Pages and the headings' marks.
#[derive(Debug, Default)]
pub struct Laid {
    pub pages: Vec<Page>,
    pub marks: Vec<Mark>,
}

/// How a kind of block is set: size, indent, space above and below, face override.
struct Setting {
    size: f32,
    indent: f32,
    above: f32,
    below: f32,
    bold: bool,
}

fn setting(kind: &Kind) -> Setting {
    let s = |size, indent, above, below, bold| Setting {
        size,
        indent,
        above,
        below,
        bold,
    };
    match kind {
        Kind::Title => s(19.0, 0.0, 0.0, 10.0, true),
        Kind::Heading(2) => s(14.5, 0.0, 14.0, 5.0, true),
        Kind::Heading(_) => s(12.0, 0.0, 10.0, 4.0, true),
        Kind::Paragraph => s(10.5, 0.0, 0.0, 7.0, false),
        Kind::Item { depth } => s(10.5, INDENT * (*depth as f32), 0.0, 3.0, false),
        Kind::Footnote => s(9.0, 0.0, 0.0, 4.0, false),
        Kind::Row => s(9.0, 0.0, 0.0, 2.0, false),
        Kind::Code => s(8.5, INDENT, 0.0, 1.0, false),
        Kind::Rule => s(10.5, 0.0, 4.0, 8.0, false),
    }
}

/// The page being filled and where its next line goes.
struct Cursor<'f> {
    fonts: &'f Fonts,
    laid: Laid,
    page: Page,
    y: f32,
}

impl<'f> Cursor<'f> {
    fn new(fonts: &'f Fonts) -> Self {
        Self {
            fonts,
            laid: Laid::default(),
            page: Page::default(),
            y: MARGIN_TOP,
        }
    }

    /// Room for a line of `height` below the cursor, on this page or a new one.
    fn room(&mut self, height: f32) -> Result<(), PdfError> {
        if self.y + height > PAGE_HEIGHT - MARGIN_BOTTOM && !self.page.runs.is_empty() {
            self.laid.pages.push(std::mem::take(&mut self.page));
            if self.laid.pages.len() >= MAX_PAGES {
                // The next page would be one over the bound.
                return Err(PdfError::TooLong(MAX_PAGES));
            }
            self.y = MARGIN_TOP;
        }
        Ok(())
    }

    fn finish(mut self) -> Laid {
        if !self.page.runs.is_empty() || self.laid.pages.is_empty() {
            self.laid.pages.push(self.page);
        }
        self.laid
    }
}

/// A word to set: its text, face, size and link; `glued`: no space before it.
struct Word {
    text: String,
    face: Face,
    size: f32,
    link: Option<String>,
    glued: bool,
}

/// The words of a block's spans, each in its face; a word with no space before it (a
/// footnote mark after its sentence, a code span inside a word) is glued to the one
/// before, and a footnote mark is set smaller.
fn words(fonts: &Fonts, spans: &[Span], size: f32, bold: bool) -> Vec<Word> {
    let mut out: Vec<Word> = Vec::new();
    // Whether whitespace came since the last word.
    let mut spaced = true;
    for span in spans {
        let style = if bold && span.style == Style::Regular {
            Style::Bold
        } else {
            span.style
        };
        let size = if span.raised { size * 0.72 } else { size };
        for (i, piece) in span.text.split('\n').enumerate() {
            if i > 0 {
                out.push(Word {
                    text: "\n".into(),
                    face: Face::Regular,
                    size,
                    link: None,
                    glued: false,
                });
                spaced = true;
            }
            spaced |= piece.starts_with(char::is_whitespace);
            for word in piece.split_whitespace() {
                out.push(Word {
                    face: fonts.face_for(style, word),
                    text: word.to_string(),
                    size,
                    link: span.link.clone(),
                    glued: !spaced,
                });
                spaced = true;
            }
            // The piece's last word is followed by whitespace only if the piece ends in it.
            if !piece.trim().is_empty() {
                spaced = piece.ends_with(char::is_whitespace);
            }
        }
    }
    out
}

/// Every block set on pages.
pub fn lay_out(fonts: &Fonts, blocks: &[Block]) -> Result<Laid, PdfError> {
    let mut cursor = Cursor::new(fonts);
    for block in blocks {
        let set = setting(&block.kind);
        cursor.y += set.above;
        if block.kind == Kind::Rule {
            cursor.room(set.size)?;
            cursor
                .page
                .rules
                .push((MARGIN_X, PAGE_WIDTH - MARGIN_X, cursor.y));
            cursor.y += set.below;
            continue;
        }
        let line_height = set.size * 1.32;
        // A heading keeps its first line of text with it.
        let keep = if matches!(block.kind, Kind::Heading(_) | Kind::Title) {
            line_height + 2.0 * 10.5 * 1.32
        } else {
            line_height
        };
        cursor.room(keep)?;
        if let Kind::Title | Kind::Heading(_) = block.kind {
            let level = match block.kind {
                Kind::Heading(level) => level,
                _ => 1,
            };
            cursor.laid.marks.push(Mark {
                level,
                text: block.text(),
                page: cursor.laid.pages.len(),
                y: cursor.y,
            });
        }
        let words = words(fonts, &block.spans, set.size, set.bold);
        set_lines(&mut cursor, &words, set.indent, line_height)?;
        cursor.y += set.below;
    }
    Ok(cursor.finish())
}

/// Words set in lines from `indent`, greedily; a word wider than a line is cut.
fn set_lines(
    cursor: &mut Cursor<'_>,
    words: &[Word],
    indent: f32,
    line_height: f32,
) -> Result<(), PdfError> {
    let left = MARGIN_X + indent;
    let right = PAGE_WIDTH - MARGIN_X;
    let mut x = left;
    let mut line_open = false;
    let new_line = |cursor: &mut Cursor<'_>, x: &mut f32| -> Result<(), PdfError> {
        cursor.y += line_height;
        cursor.room(line_height)?;
        *x = left;
        Ok(())
    };
    cursor.y += line_height * 0.8;
    for word in words {
        if word.text == "\n" {
            new_line(cursor, &mut x)?;
            line_open = false;
            continue;
        }
        for piece in cut_to_width(cursor.fonts, word, right - left) {
            let width = cursor.fonts.width(word.face, word.size, &piece);
            let space = if line_open && !word.glued {
                cursor.fonts.width(word.face, word.size, " ")
            } else {
                0.0
            };
            if line_open && x + space + width > right {
                new_line(cursor, &mut x)?;
                line_open = false;
            }
            let space = if line_open && !word.glued { space } else { 0.0 };
            place(cursor, x, word, &piece, space, width);
            x += space + width;
            line_open = true;
        }
    }
    cursor.y += line_height * 0.2;
    Ok(())
}

/// Adds a word to the page: appended to the run it continues (same line, face, size
/// and link), or as a run of its own.
fn place(cursor: &mut Cursor<'_>, x: f32, word: &Word, text: &str, space: f32, width: f32) {
    let y = cursor.y;
    if let Some(last) = cursor.page.runs.last_mut() {
        let continues = (last.y - y).abs() < 0.01
            && last.face == word.face
            && (last.size - word.size).abs() < 0.01
            && last.link == word.link
            && (last.x + last.width - (x)).abs() < 0.5;
        if continues {
            if space > 0.0 {
                last.text.push(' ');
            }
            last.text.push_str(text);
            last.width += space + width;
            return;
        }
    }
    cursor.page.runs.push(Run {
        x: x + space,
        y,
        text: text.to_string(),
        face: word.face,
        size: word.size,
        width,
        link: word.link.clone(),
    });
}

/// A word as pieces no wider than `max` (most words: itself); each character measured
/// once.
fn cut_to_width(fonts: &Fonts, word: &Word, max: f32) -> Vec<String> {
    if fonts.width(word.face, word.size, &word.text) <= max {
        return vec![word.text.clone()];
    }
    let mut pieces = Vec::new();
    let mut piece = String::new();
    let mut width = 0.0;
    let mut buffer = [0u8; 4];
    for c in word.text.chars() {
        let advance = fonts.width(word.face, word.size, c.encode_utf8(&mut buffer));
        if width + advance > max && !piece.is_empty() {
            pieces.push(std::mem::take(&mut piece));
            width = 0.0;
        }
        piece.push(c);
        width += advance;
    }
    if !piece.is_empty() {
        pieces.push(piece);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::blocks;

    #[test]
    fn lines_stay_inside_the_margins_and_pages_fill_in_order() {
        let fonts = Fonts::bundled().expect("bundled fonts");
        let paragraph =
            "The rollback journal keeps the original content of every page a transaction changes. "
                .repeat(40);
        let long_word = "x".repeat(400);
        let markdown = format!(
            "# Title\n\n## Section\n\n{paragraph}\n\n{long_word}\n\n{paragraph}\n\n{paragraph}\n"
        );
        let laid = lay_out(&fonts, &blocks(&markdown)).expect("laid out");
        assert!(laid.pages.len() >= 2, "{} pages", laid.pages.len());
        for page in &laid.pages {
            for run in &page.runs {
                assert!(run.x >= MARGIN_X - 0.01, "{run:?}");
                assert!(run.x + run.width <= PAGE_WIDTH - MARGIN_X + 0.5, "{run:?}");
                assert!(run.y <= PAGE_HEIGHT - MARGIN_BOTTOM + 0.01, "{run:?}");
            }
        }
        let text: String = laid
            .pages
            .iter()
            .flat_map(|p| p.runs.iter().map(|r| r.text.clone()))
            .collect::<Vec<_>>()
            .join(" ");
        // Every word is set once, in order.
        let words: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(words[0], "Title");
        assert_eq!(words.iter().filter(|w| **w == "rollback").count(), 3 * 40);
        assert_eq!(laid.marks.len(), 2);
        assert_eq!(laid.marks[1].text, "Section");
    }
}
