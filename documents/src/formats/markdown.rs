//! Markdown (CommonMark with tables, via pulldown-cmark) rendered to blocks without
//! markup: `**Quarterly revenue: $14.2M**` is archived as `Quarterly revenue: $14.2M`,
//! a list item is a block of its own, a pipe-table row is its header-labelled cells.
//! A document past the text or block limit is read up to the block that would pass it,
//! and a gap says how far that was.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::{human_bytes, Builder, DocStatus, Document, Limits, ReadError};

pub(super) fn read(markdown: &str, limits: &Limits) -> Result<Document, ReadError> {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    let mut reader = Reader::new(Builder::new(*limits));
    let text = strip_front_matter(markdown);
    let front = markdown.len() - text.len();
    let mut stopped = None;
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        if let Err(err) = reader.event(event) {
            stopped = Some((front + range.start, err));
            break;
        }
    }
    if stopped.is_none() {
        stopped = reader.flush().err().map(|err| (markdown.len(), err));
    }
    if let Some((at, err)) = stopped {
        if !reader.builder.refused(&err) {
            return Err(err);
        }
        let full = reader.builder.full().unwrap_or_default().to_string();
        let (at, all) = (human_bytes(at as u64), human_bytes(markdown.len() as u64));
        reader.builder.gap(format!("first {at} of {all}: {full}"));
    }
    reader.builder.finish(None, DocStatus::Current)
}

/// YAML front matter (`---` … `---` at the very top) is metadata, not text; its
/// `date:` line still counts (the dates module reads the whole text).
fn strip_front_matter(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("---\n") else {
        return text;
    };
    match rest.find("\n---\n") {
        Some(end) if end < 4096 => &rest[end + 5..],
        _ => text,
    }
}

/// What the text being gathered will become.
#[derive(Clone, Debug, PartialEq)]
enum Pending {
    Paragraph,
    Heading(u8),
    Item(String),
    Code,
}

/// One open list: ordered lists count their items.
struct List {
    next_number: Option<u64>,
}

struct Reader {
    builder: Builder,
    text: String,
    pending: Pending,
    lists: Vec<List>,
    /// Inside a table: its header, the row being read, the rows so far.
    table: Option<Table>,
    /// Depth of images: their alt text is not prose.
    in_image: usize,
}

#[derive(Default)]
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    row: Vec<String>,
    cell: String,
}

impl Reader {
    fn new(builder: Builder) -> Self {
        Self {
            builder,
            text: String::new(),
            pending: Pending::Paragraph,
            lists: Vec::new(),
            table: None,
            in_image: 0,
        }
    }

    fn push_text(&mut self, text: &str) {
        if self.in_image > 0 {
            return;
        }
        match &mut self.table {
            Some(table) => table.cell.push_str(text),
            None => self.text.push_str(text),
        }
    }

    /// The gathered text becomes its block.
    fn flush(&mut self) -> Result<(), ReadError> {
        let text = std::mem::take(&mut self.text);
        let pending = std::mem::replace(&mut self.pending, Pending::Paragraph);
        if text.trim().is_empty() {
            return Ok(());
        }
        match pending {
            Pending::Paragraph => self.builder.paragraph(&text),
            Pending::Heading(level) => self.builder.heading(level, &text),
            Pending::Item(marker) => self.builder.list_item(&marker, &text),
            Pending::Code => self.builder.code(&text),
        }
    }

    fn event(&mut self, event: Event<'_>) -> Result<(), ReadError> {
        match event {
            Event::Start(tag) => self.start(tag)?,
            Event::End(tag) => self.end(tag)?,
            Event::Text(text) | Event::Code(text) => self.push_text(&text),
            Event::InlineMath(text) | Event::DisplayMath(text) => self.push_text(&text),
            Event::SoftBreak | Event::HardBreak => {
                self.push_text(if self.pending == Pending::Code {
                    "\n"
                } else {
                    " "
                })
            }
            Event::Html(_) | Event::InlineHtml(_) => {}
            Event::FootnoteReference(_) | Event::TaskListMarker(_) | Event::Rule => {}
        }
        Ok(())
    }

    fn start(&mut self, tag: Tag<'_>) -> Result<(), ReadError> {
        match tag {
            Tag::Heading { level, .. } => {
                self.flush()?;
                self.pending = Pending::Heading(heading_level(level));
            }
            // A loose list item's paragraphs belong to the item.
            Tag::Paragraph if matches!(self.pending, Pending::Item(_)) => {}
            Tag::Paragraph => self.flush()?,
            Tag::CodeBlock(_) => {
                self.flush()?;
                self.pending = Pending::Code;
            }
            Tag::List(first) => {
                self.flush()?;
                self.lists.push(List { next_number: first });
            }
            Tag::Item => {
                self.flush()?;
                let marker = match self.lists.last_mut().and_then(|l| l.next_number.as_mut()) {
                    Some(number) => {
                        let marker = format!("{number}.");
                        *number = number.saturating_add(1);
                        marker
                    }
                    None => String::new(),
                };
                self.pending = Pending::Item(marker);
            }
            Tag::Table(_) => {
                self.flush()?;
                self.table = Some(Table::default());
            }
            Tag::Image { .. } => self.in_image += 1,
            _ => {}
        }
        Ok(())
    }

    fn end(&mut self, tag: TagEnd) -> Result<(), ReadError> {
        match tag {
            TagEnd::Heading(_) | TagEnd::CodeBlock | TagEnd::Item => self.flush()?,
            TagEnd::Paragraph => {
                if !matches!(self.pending, Pending::Item(_)) {
                    self.flush()?;
                } else {
                    self.text.push(' ');
                }
            }
            TagEnd::List(_) => {
                self.flush()?;
                self.lists.pop();
            }
            TagEnd::BlockQuote(_) => self.flush()?,
            TagEnd::Image => self.in_image = self.in_image.saturating_sub(1),
            TagEnd::TableCell => {
                if let Some(table) = &mut self.table {
                    let cell = std::mem::take(&mut table.cell);
                    table.row.push(cell);
                }
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.header = std::mem::take(&mut table.row);
                }
            }
            TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    let header = (!table.header.is_empty()).then_some(table.header.as_slice());
                    self.builder.table(header, &table.rows)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(markdown: &str) -> String {
        read(markdown, &Limits::default()).expect("markdown").text
    }

    #[test]
    fn markup_is_rendered_away_and_structure_kept() {
        let md = "# Q1 2026 Operations Report\n\nPrepared by Ops, 2026-04-14.\n\n## Revenue\n\nKey figures:\n\n- **Quarterly revenue: $14.2M** (prior year: $10.3M, +38% YoY)\n- Gross margin: 61%\n\n| Round | Date | Amount |\n|---|---|---|\n| Series C | Oct 2025 | $48M |\n\n1. first step\n2. second *step*\n";
        let doc = read(md, &Limits::default()).expect("markdown");
        assert_eq!(
            doc.text,
            "Q1 2026 Operations Report\n\nPrepared by Ops, 2026-04-14.\n\nRevenue\n\nKey figures:\n\nQuarterly revenue: $14.2M (prior year: $10.3M, +38% YoY)\n\nGross margin: 61%\n\nRound: Series C · Date: Oct 2025 · Amount: $48M\n\n1. first step\n\n2. second step"
        );
        let at = doc.text.find("Gross").expect("item");
        assert_eq!(
            doc.heading_path(at),
            ["Q1 2026 Operations Report", "Revenue"]
        );
        assert_eq!(doc.title, "Q1 2026 Operations Report");
    }

    #[test]
    fn loose_and_nested_lists_and_code() {
        assert_eq!(
            text_of("- one\n\n  more of one\n- two\n  - inner\n\n```\nfn main() {}\n```\n"),
            "one more of one\n\ntwo\n\ninner\n\nfn main() {}"
        );
        assert_eq!(
            text_of("---\ntitle: x\n---\nBody text here."),
            "Body text here."
        );
    }

    #[test]
    fn empty_documents_are_typed_errors() {
        assert_eq!(
            read("![only an image](x.png)\n", &Limits::default()),
            Err(ReadError::NoText)
        );
    }

    #[test]
    fn a_document_past_the_limits_keeps_its_first_blocks_and_says_how_far() {
        let md: String = (1..=500)
            .map(|n| {
                format!("## Bay {n}\n\nBay {n} of the Harbor Street yard takes one trailer.\n\n")
            })
            .collect();
        let limits = Limits {
            max_blocks: 100,
            ..Limits::default()
        };
        let doc = read(&md, &limits).unwrap();
        assert_eq!(doc.marks.len(), 100);
        assert!(
            doc.text
                .ends_with("Bay 50 of the Harbor Street yard takes one trailer."),
            "{}",
            doc.text
        );
        let at = md.find("## Bay 51\n").unwrap() as u64;
        assert_eq!(
            doc.gaps,
            [format!(
                "first {} of {}: it reached 100 blocks, the most one document may hold",
                human_bytes(at),
                human_bytes(md.len() as u64)
            )]
        );
    }
}
