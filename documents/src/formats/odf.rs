//! ODT and ODP (OpenDocument text and presentations): `content.xml` read through
//! [`Container`], parsed with [`parse_xml`], elements matched by namespace URI and
//! local name.
//!
//! The body in order: `text:h` is a heading of its `text:outline-level`, `text:p` a
//! paragraph, each `text:list-item` a list item (its paragraphs' text; nested lists
//! follow it), a `table:table` a table whose header rows (`table:table-header-rows`,
//! else the first row) label the others, with repeated columns and rows expanded up to
//! [`MAX_REPEAT`] and empty rows dropped. Inline: spans and links are text, `text:s`,
//! `text:tab` and `text:line-break` spaces; footnotes, comments, tracked deletions and
//! generated indexes (a table of contents) are left out; a frame's text (a text box,
//! a caption) follows its paragraph. In an ODP each `draw:page` is `slide=N`, headed by
//! its title frame (else its own name, unless that is a default `pageN`), speaker notes
//! after its shapes; page numbers, dates, footers and empty placeholders are left out.
//!
//! `meta.xml` gives the title and the date (`dc:date`, else `meta:creation-date`); a
//! package whose manifest lists encrypted parts is [`ReadError::Encrypted`].

use roxmltree::Node;

use super::zipped::{parse_xml, Container};
use crate::dates::metadata_date;
use crate::model::fold;
use crate::{Builder, DocStatus, Document, Format, Limits, Place, ReadError};

const OFFICE: &str = "urn:oasis:names:tc:opendocument:xmlns:office:1.0";
const TEXT: &str = "urn:oasis:names:tc:opendocument:xmlns:text:1.0";
const TABLE: &str = "urn:oasis:names:tc:opendocument:xmlns:table:1.0";
const DRAW: &str = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0";
const PRESENTATION: &str = "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0";
const META: &str = "urn:oasis:names:tc:opendocument:xmlns:meta:1.0";
const DC: &str = "http://purl.org/dc/elements/1.1/";

/// Most times one repeated cell or non-empty row is expanded.
const MAX_REPEAT: usize = 64;

/// Presentation frames that repeat on every slide, not its content.
const SKIPPED_CLASSES: &[&str] = &["page-number", "footer", "date-time", "header"];

fn is(node: Node<'_, '_>, ns: &str, name: &str) -> bool {
    node.is_element() && node.tag_name().name() == name && node.tag_name().namespace() == Some(ns)
}

/// A table: the row at `header_at` labels the others; empty rows are dropped, and a
/// table of one row is that row unlabelled.
pub(super) fn emit_table(
    b: &mut Builder,
    mut rows: Vec<Vec<String>>,
    header_at: usize,
) -> Result<(), ReadError> {
    if header_at >= rows.len() {
        return Ok(());
    }
    let header = rows.remove(header_at);
    rows.retain(|row| row.iter().any(|cell| !fold(cell).is_empty()));
    if rows.is_empty() {
        return b.row(None, &header);
    }
    b.table(Some(&header), &rows)
}

pub(super) fn read(bytes: &[u8], format: Format, limits: &Limits) -> Result<Document, ReadError> {
    let mut container = Container::open(bytes, format, limits)?;
    let manifest = container.read("META-INF/manifest.xml")?.unwrap_or_default();
    if manifest.windows(15).any(|w| w == b"encryption-data") {
        return Err(ReadError::Encrypted);
    }
    let xml = container
        .read_text("content.xml")?
        .ok_or_else(|| ReadError::malformed(format, "no content.xml"))?;
    let doc = parse_xml(&xml, format, "content.xml", limits)?;
    let body = doc
        .root_element()
        .children()
        .find(|n| is(*n, OFFICE, "body"));
    let body =
        body.ok_or_else(|| ReadError::malformed(format, "content.xml has no office:body"))?;
    let (mut builder, date) = metadata(&mut container, format, limits)?;
    let slides = body.children().find(|n| is(*n, OFFICE, "presentation"));
    match slides {
        Some(slides) if format == Format::Odp => presentation(&mut builder, slides)?,
        _ => blocks(&mut builder, body)?,
    }
    builder.finish(date, DocStatus::Current)
}

/// A builder holding the title of `meta.xml`, and its date.
pub(super) fn metadata(
    c: &mut Container<'_>,
    format: Format,
    limits: &Limits,
) -> Result<(Builder, Option<String>), ReadError> {
    let mut builder = Builder::new(*limits);
    let Some(xml) = c.read_text("meta.xml")? else {
        return Ok((builder, None));
    };
    let doc = parse_xml(&xml, format, "meta.xml", limits)?;
    let meta = doc
        .root_element()
        .children()
        .find(|n| is(*n, OFFICE, "meta"));
    let text = |ns, name| meta?.children().find(|n| is(*n, ns, name))?.text();
    builder.title(text(DC, "title").unwrap_or(""));
    let date = text(DC, "date").and_then(metadata_date);
    Ok((
        builder,
        date.or_else(|| text(META, "creation-date").and_then(metadata_date)),
    ))
}

/// Whether `node` holds no content of its own: comments, footnotes, tracked deletions,
/// generated indexes, declarations, repeated presentation frames, empty placeholders.
fn skipped(node: Node<'_, '_>) -> bool {
    let name = node.tag_name().name();
    let class = node.attribute((PRESENTATION, "class")).unwrap_or("");
    match node.tag_name().namespace() {
        Some(TEXT) => {
            matches!(
                name,
                "note" | "tracked-changes" | "table-of-content" | "bibliography"
            ) || name.ends_with("-index")
                || name.ends_with("-decls")
        }
        Some(OFFICE) => matches!(name, "annotation" | "forms"),
        _ => {
            SKIPPED_CLASSES.contains(&class)
                || node.attribute((PRESENTATION, "placeholder")) == Some("true")
        }
    }
}

/// The blocks under `parent`, in order.
fn blocks(b: &mut Builder, parent: Node<'_, '_>) -> Result<(), ReadError> {
    let mut nodes = parent.children().filter(|n| n.is_element() && !skipped(*n));
    nodes.try_for_each(|node| block(b, node))
}

/// One block; an element this reader does not know is looked into (sections, frames,
/// text boxes, shapes, groups, notes).
fn block(b: &mut Builder, node: Node<'_, '_>) -> Result<(), ReadError> {
    if is(node, TEXT, "h") || is(node, TEXT, "p") {
        let mut text = String::new();
        let mut frames = Vec::new();
        inline(node, &mut text, Some(&mut frames));
        if is(node, TEXT, "h") {
            let level = node
                .attribute((TEXT, "outline-level"))
                .and_then(|l| l.parse().ok());
            b.heading(level.unwrap_or(1), &text)?;
        } else {
            b.paragraph(&text)?;
        }
        frames.into_iter().try_for_each(|frame| block(b, frame))
    } else if is(node, TEXT, "list") {
        list(b, node)
    } else if is(node, TABLE, "table") {
        table(b, node)
    } else {
        blocks(b, node)
    }
}

/// The text of a paragraph or heading; frames in it go to `frames` when given (to
/// follow as blocks), else their text joins.
fn inline<'a, 'i>(
    node: Node<'a, 'i>,
    out: &mut String,
    mut frames: Option<&mut Vec<Node<'a, 'i>>>,
) {
    for c in node.children() {
        if c.is_text() {
            out.push_str(c.text().unwrap_or(""));
        }
        if !c.is_element() || skipped(c) {
            continue;
        }
        if is(c, TEXT, "s") || is(c, TEXT, "tab") || is(c, TEXT, "line-break") {
            out.push(' ');
        } else if let (Some(DRAW), Some(frames)) = (c.tag_name().namespace(), frames.as_deref_mut())
        {
            frames.push(c);
        } else {
            inline(c, out, frames.as_deref_mut());
            out.push_str(if is(c, TEXT, "p") || is(c, TEXT, "h") {
                " "
            } else {
                ""
            });
        }
    }
}

/// All the text under `node`, paragraphs and nested tables included, space-separated.
fn all_text(node: Node<'_, '_>) -> String {
    let mut text = String::new();
    inline(node, &mut text, None);
    fold(&text)
}

fn list(b: &mut Builder, list: Node<'_, '_>) -> Result<(), ReadError> {
    let items = list
        .children()
        .filter(|n| is(*n, TEXT, "list-item") || is(*n, TEXT, "list-header"));
    for item in items {
        let (own, nested): (Vec<Node<'_, '_>>, Vec<Node<'_, '_>>) = item
            .children()
            .filter(|n| n.is_element() && !skipped(*n))
            .partition(|n| is(*n, TEXT, "p") || is(*n, TEXT, "h"));
        let text: Vec<String> = own.into_iter().map(all_text).collect();
        b.list_item("", &text.join(" "))?;
        nested.into_iter().try_for_each(|node| block(b, node))?;
    }
    Ok(())
}

/// A repetition count attribute, at least 1, at most [`MAX_REPEAT`].
fn repeated(node: Node<'_, '_>, attribute: &str) -> usize {
    let count = node
        .attribute((TABLE, attribute))
        .and_then(|n| n.parse().ok());
    count.unwrap_or(1).clamp(1, MAX_REPEAT)
}

fn table(b: &mut Builder, table: Node<'_, '_>) -> Result<(), ReadError> {
    let mut rows = Vec::new();
    let mut header_at = None;
    let mut budget = b.limits().max_text_bytes;
    table_rows(table, false, &mut rows, &mut header_at, &mut budget)?;
    emit_table(b, rows, header_at.unwrap_or(0))
}

/// The non-empty rows under `parent` (through row groups), and where the first header
/// row is. Repeated cells and rows count against `budget` (bytes of text) as they are
/// expanded, so a repeated large cell cannot multiply past the text limit.
fn table_rows(
    parent: Node<'_, '_>,
    header: bool,
    rows: &mut Vec<Vec<String>>,
    header_at: &mut Option<usize>,
    budget: &mut usize,
) -> Result<(), ReadError> {
    for node in parent.children().filter(Node::is_element) {
        let name = node.tag_name().name();
        if node.tag_name().namespace() != Some(TABLE) {
            continue;
        }
        if name == "table-row" {
            let mut cells = Vec::new();
            for cell in node
                .children()
                .filter(|c| is(*c, TABLE, "table-cell") || is(*c, TABLE, "covered-table-cell"))
            {
                let text = all_text(cell);
                let times = repeated(cell, "number-columns-repeated");
                spend(budget, text.len().saturating_mul(times))?;
                cells.extend(std::iter::repeat_n(text, times));
            }
            while cells.last().is_some_and(String::is_empty) {
                cells.pop();
            }
            if cells.is_empty() {
                continue;
            }
            if header && header_at.is_none() {
                *header_at = Some(rows.len());
            }
            let times = repeated(node, "number-rows-repeated");
            let row_bytes: usize = cells.iter().map(String::len).sum();
            spend(budget, row_bytes.saturating_mul(times.saturating_sub(1)))?;
            rows.extend(std::iter::repeat_n(cells, times));
        } else if matches!(name, "table-header-rows" | "table-rows" | "table-row-group") {
            table_rows(
                node,
                header || name == "table-header-rows",
                rows,
                header_at,
                budget,
            )?;
        }
    }
    Ok(())
}

/// Take `bytes` from the text budget, or say the table is too large.
fn spend(budget: &mut usize, bytes: usize) -> Result<(), ReadError> {
    *budget = budget.checked_sub(bytes).ok_or_else(|| {
        ReadError::TooLarge("a table's repeated cells exceed the text limit".into())
    })?;
    Ok(())
}

/// An ODP's slides: each page's title, its shapes' text, then its notes.
fn presentation(b: &mut Builder, slides: Node<'_, '_>) -> Result<(), ReadError> {
    for (n, page) in (1u32..).zip(slides.children().filter(|p| is(*p, DRAW, "page"))) {
        b.reset_headings();
        b.place(Place::Slide(n));
        let title = page
            .children()
            .find(|f| f.attribute((PRESENTATION, "class")) == Some("title"));
        let name = page.attribute((DRAW, "name")).unwrap_or("");
        let lower = name.to_ascii_lowercase();
        let number = lower.trim_start_matches("page").trim_start_matches("slide");
        let default_name = number.trim().parse::<u32>().is_ok();
        match title {
            Some(title) => b.heading(2, &all_text(title))?,
            None if !default_name => b.heading(2, name)?,
            None => {}
        }
        let shapes = page.children().filter(|n| n.is_element() && !skipped(*n));
        for node in shapes.filter(|n| Some(*n) != title) {
            block(b, node)?;
        }
    }
    Ok(())
}
