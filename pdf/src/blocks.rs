//! The markdown report read into blocks a page can hold: headings, paragraphs, list
//! items, footnotes (each with its verbatim quote and source), table rows and code,
//! each a run of styled spans. pulldown-cmark reads the markdown; nothing here knows a
//! page.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// How a span's text is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Regular,
    Bold,
    Italic,
    Mono,
}

/// A run of text in one style; `link`: where it leads; `raised`: a footnote mark.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub text: String,
    pub style: Style,
    pub link: Option<String>,
    pub raised: bool,
}

/// What a block is, which decides its size, indent and spacing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The report's title (`#`).
    Title,
    /// A section heading (`##` = 2 …).
    Heading(u8),
    Paragraph,
    /// A list item, `depth` lists deep, its marker ("•", "3.") first.
    Item {
        depth: usize,
    },
    /// A footnote's definition: its quote and source.
    Footnote,
    /// A table row, cells separated by " | ".
    Row,
    /// A line of a code block.
    Code,
    /// A thematic break.
    Rule,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub kind: Kind,
    pub spans: Vec<Span>,
}

impl Block {
    fn new(kind: Kind) -> Self {
        Self {
            kind,
            spans: Vec::new(),
        }
    }

    /// The block's text, spans joined (for tests and the outline).
    pub fn text(&self) -> String {
        self.spans.iter().map(|s| s.text.as_str()).collect()
    }
}

/// The reader's state while events stream by.
#[derive(Default)]
struct Reader {
    blocks: Vec<Block>,
    current: Option<Block>,
    bold: usize,
    italic: usize,
    links: Vec<String>,
    /// Each open list: the next number of an ordered one.
    lists: Vec<Option<u64>>,
    /// Inside a footnote definition or a list item: a paragraph continues its block.
    container: Option<Kind>,
    /// The current block holds only its container's marker: its first paragraph
    /// continues it.
    fresh: bool,
    code: bool,
}

/// The report's markdown as blocks, in order.
pub fn blocks(markdown: &str) -> Vec<Block> {
    let options =
        Options::ENABLE_FOOTNOTES | Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let mut reader = Reader::default();
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Start(tag) => reader.start(tag),
            Event::End(tag) => reader.end(tag),
            Event::Text(text) if reader.code => reader.code_text(&text),
            Event::Text(text) => reader.push(&text, None, false),
            Event::Code(code) => reader.push(&code, Some(Style::Mono), false),
            Event::FootnoteReference(label) => reader.push(&format!("[{label}]"), None, true),
            Event::SoftBreak => reader.push(" ", None, false),
            Event::HardBreak => reader.push("\n", None, false),
            Event::Rule => {
                reader.flush();
                reader.blocks.push(Block::new(Kind::Rule));
            }
            // Markup, not text: the report writes none of its own, and a quote's text
            // was escaped into text by the renderer.
            Event::Html(_) | Event::InlineHtml(_) => {}
            Event::TaskListMarker(done) => {
                reader.push(if done { "[x] " } else { "[ ] " }, None, false)
            }
            Event::InlineMath(text) | Event::DisplayMath(text) => {
                reader.push(&text, Some(Style::Mono), false)
            }
        }
    }
    reader.flush();
    reader.blocks
}

impl Reader {
    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Heading { level, .. } => {
                self.open(match level {
                    HeadingLevel::H1 => Kind::Title,
                    other => Kind::Heading(other as u8),
                });
            }
            Tag::Paragraph => {
                let continues = std::mem::take(&mut self.fresh);
                if !continues {
                    let kind = self.container.clone().unwrap_or(Kind::Paragraph);
                    self.open(kind);
                }
            }
            Tag::List(start) => self.lists.push(start),
            Tag::Item => {
                let depth = self.lists.len();
                self.open(Kind::Item { depth });
                self.container = Some(Kind::Item { depth });
                let marker = match self.lists.last_mut() {
                    Some(Some(number)) => {
                        *number += 1;
                        format!("{}. ", *number - 1)
                    }
                    _ => "• ".to_string(),
                };
                self.push(&marker, Some(Style::Regular), false);
                self.fresh = true;
            }
            Tag::FootnoteDefinition(label) => {
                self.open(Kind::Footnote);
                self.container = Some(Kind::Footnote);
                self.push(&format!("[{label}] "), Some(Style::Bold), false);
                self.fresh = true;
            }
            Tag::TableHead | Tag::TableRow => self.open(Kind::Row),
            Tag::TableCell if self.current.as_ref().is_some_and(|b| !b.spans.is_empty()) => {
                self.push(" | ", Some(Style::Regular), false);
            }
            Tag::CodeBlock(_) => {
                self.flush();
                self.code = true;
            }
            Tag::Emphasis => self.italic += 1,
            Tag::Strong => self.bold += 1,
            Tag::Link { dest_url, .. } => self.links.push(dest_url.to_string()),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Heading(_) | TagEnd::TableHead | TagEnd::TableRow => self.flush(),
            TagEnd::Paragraph if self.container.is_none() => self.flush(),
            TagEnd::Item => {
                self.flush();
                // Back to the enclosing item's kind, if this list is nested in one.
                self.container = (self.lists.len() > 1).then(|| Kind::Item {
                    depth: self.lists.len() - 1,
                });
            }
            TagEnd::List(_) => {
                self.lists.pop();
            }
            TagEnd::FootnoteDefinition => {
                self.flush();
                self.container = None;
            }
            TagEnd::CodeBlock => self.code = false,
            TagEnd::Emphasis => self.italic = self.italic.saturating_sub(1),
            TagEnd::Strong => self.bold = self.bold.saturating_sub(1),
            TagEnd::Link => {
                self.links.pop();
            }
            _ => {}
        }
    }

    /// Starts a block of `kind`, ending the one before.
    fn open(&mut self, kind: Kind) {
        self.flush();
        self.fresh = false;
        self.current = Some(Block::new(kind));
    }

    /// Ends the current block; an empty one is dropped.
    fn flush(&mut self) {
        if let Some(block) = self.current.take() {
            if !block.spans.is_empty() {
                self.blocks.push(block);
            }
        }
    }

    /// A code block's text: one block per line.
    fn code_text(&mut self, text: &str) {
        for line in text.lines() {
            let mut block = Block::new(Kind::Code);
            block.spans.push(Span {
                text: line.to_string(),
                style: Style::Mono,
                link: None,
                raised: false,
            });
            self.blocks.push(block);
        }
    }

    /// Text in the current style (or `style`), into the current block (a paragraph
    /// when text comes outside any).
    fn push(&mut self, text: &str, style: Option<Style>, raised: bool) {
        let style = style.unwrap_or(match (self.bold > 0, self.italic > 0) {
            (true, _) => Style::Bold,
            (false, true) => Style::Italic,
            _ => Style::Regular,
        });
        let link = self.links.last().cloned();
        let block = self
            .current
            .get_or_insert_with(|| Block::new(Kind::Paragraph));
        match block.spans.last_mut() {
            Some(last) if last.style == style && last.link == link && last.raised == raised => {
                last.text.push_str(text);
            }
            _ => block.spans.push(Span {
                text: text.to_string(),
                style,
                link,
                raised,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_reads_as_blocks_with_marks_links_and_footnotes() {
        let markdown = "# Title\n\n## 1. Section\n\nThe journal is **hot**[^1] and `wal` \
                        [links](https://example.org/a).\n\n- one\n- two\n\n1. first\n2. second\n\n\
                        | a | b |\n|---|---|\n| 1 | 2 |\n\n[^1]: \"The journal is hot.\" — tempfiles.html\n";
        let blocks = blocks(markdown);
        let texts: Vec<(Kind, String)> =
            blocks.iter().map(|b| (b.kind.clone(), b.text())).collect();
        assert_eq!(texts[0], (Kind::Title, "Title".into()));
        assert_eq!(texts[1], (Kind::Heading(2), "1. Section".into()));
        assert_eq!(texts[2].1, "The journal is hot[1] and wal links.");
        assert_eq!(texts[3], (Kind::Item { depth: 1 }, "• one".into()));
        assert_eq!(texts[5], (Kind::Item { depth: 1 }, "1. first".into()));
        assert_eq!(texts[6].1, "2. second");
        assert_eq!(texts[7], (Kind::Row, "a | b".into()));
        assert_eq!(texts[8], (Kind::Row, "1 | 2".into()));
        assert_eq!(
            texts[9],
            (
                Kind::Footnote,
                "[1] \"The journal is hot.\" — tempfiles.html".into()
            )
        );
        let spans = &blocks[2].spans;
        assert!(spans
            .iter()
            .any(|s| s.text == "hot" && s.style == Style::Bold));
        assert!(spans.iter().any(|s| s.text == "[1]" && s.raised));
        assert!(spans
            .iter()
            .any(|s| s.text == "wal" && s.style == Style::Mono));
        assert!(spans
            .iter()
            .any(|s| s.text == "links" && s.link.as_deref() == Some("https://example.org/a")));
    }
}
