//! HTML: the main text (dom_smoothie's readability extraction, as HTML) walked into
//! blocks, so headings, list items and table rows (labelled by their header row) keep
//! their structure.
//!
//! Readability's cost grows with nesting depth (25,000 nested `<div>`s took minutes),
//! so a page nesting elements deeper than `Limits::max_nesting` is refused before it is
//! parsed: a cheap scan of the tags, counting only elements whose end tag is required.

use dom_query::NodeRef;

use crate::dates::{content_date, find_iso_date};
use crate::model::fold;
use crate::{Builder, DocStatus, Document, Format, Limits, ReadError};

/// Elements that start a block of their own; anything else is inline.
const BLOCK_ELEMENTS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "dd",
    "details",
    "dialog",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "html",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "ul",
];

/// Elements whose text is never part of the page's prose.
const SKIPPED_ELEMENTS: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "button",
    "select", "textarea", "head",
];

/// Elements whose end tag may be left out (they close implicitly) or that have none:
/// they do not deepen the nesting count.
const NON_NESTING: &[&str] = &[
    "area", "base", "br", "col", "colgroup", "dd", "dt", "embed", "hr", "img", "input", "li",
    "link", "meta", "option", "p", "param", "source", "tbody", "td", "tfoot", "th", "thead", "tr",
    "track", "wbr", "optgroup", "rp", "rt",
];

pub(super) fn read(html: &str, limits: &Limits) -> Result<Document, ReadError> {
    read_html_str(html, limits)
}

/// One HTML page (or EPUB chapter) as a document.
pub(crate) fn read_html_str(html: &str, limits: &Limits) -> Result<Document, ReadError> {
    let depth = nesting_depth(html, limits.max_nesting);
    if depth > limits.max_nesting {
        return Err(ReadError::TooComplex(format!(
            "elements nest deeper than {} levels",
            limits.max_nesting
        )));
    }
    let config = dom_smoothie::Config {
        char_threshold: 200,
        max_elements_to_parse: 200_000,
        ..Default::default()
    };
    let mut readability = dom_smoothie::Readability::new(html, None, Some(config))
        .map_err(|e| ReadError::malformed(Format::Html, e))?;
    let article = readability.parse().map_err(|_| ReadError::NoText)?;
    let content = dom_query::Document::from(article.content.to_string());
    let mut builder = Builder::new(*limits);
    let title = fold(&article.title);
    if !title.is_empty() {
        builder.title(&title);
    }
    let mut walker = Walker {
        builder: &mut builder,
        inline: String::new(),
    };
    walker.children(&content.root(), 0)?;
    walker.flush()?;
    let date = article
        .published_time
        .as_deref()
        .or(article.modified_time.as_deref())
        .and_then(find_iso_date)
        .or_else(|| content_date(html));
    builder.finish(date, DocStatus::Current)
}

/// A whole HTML document's body walked into `builder` without main-text extraction
/// (an EPUB chapter is all content), within the nesting limit.
pub(crate) fn walk_into(builder: &mut Builder, html: &str) -> Result<(), ReadError> {
    let max_nesting = builder.limits().max_nesting;
    if nesting_depth(html, max_nesting) > max_nesting {
        return Err(ReadError::TooComplex(format!(
            "elements nest deeper than {max_nesting} levels"
        )));
    }
    let page = dom_query::Document::from(html);
    let mut walker = Walker {
        builder,
        inline: String::new(),
    };
    walker.children(&page.root(), 0)?;
    walker.flush()
}

/// The deepest nesting of elements that need an end tag, stopping early once past
/// `cap`. Open elements are kept on a stack and an end tag closes the nearest open
/// element of its name (one that matches nothing closes nothing, so `<div></b>` cannot
/// hide depth). A tag's end is looked for only up to the next `<`, so the scan is linear.
/// Comments are skipped; the count only has to bound the work, not to be exact.
fn nesting_depth(html: &str, cap: usize) -> usize {
    let bytes = html.as_bytes();
    let mut open: Vec<Vec<u8>> = Vec::new();
    let mut deepest = 0;
    let mut i = 0;
    while let Some(offset) = memchr_lt(&bytes[i..]) {
        i += offset + 1;
        let rest = &bytes[i..];
        if rest.starts_with(b"!--") {
            match find(rest, b"-->") {
                Some(end) => i += end + 3,
                None => break,
            }
            continue;
        }
        let closing = rest.first() == Some(&b'/');
        let name: Vec<u8> = rest[usize::from(closing)..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .take(32)
            .map(u8::to_ascii_lowercase)
            .collect();
        if name.is_empty() || NON_NESTING.contains(&String::from_utf8_lossy(&name).as_ref()) {
            continue;
        }
        let tag = &rest[..rest.iter().position(|b| *b == b'<').unwrap_or(rest.len())];
        let self_closing = tag
            .iter()
            .position(|b| *b == b'>')
            .is_some_and(|end| end > 0 && tag.get(end - 1) == Some(&b'/'));
        if closing {
            if let Some(at) = open.iter().rposition(|n| *n == name) {
                open.truncate(at);
            }
        } else if !self_closing {
            open.push(name);
            deepest = deepest.max(open.len());
            if deepest > cap {
                return deepest;
            }
        }
    }
    deepest
}

fn memchr_lt(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|b| *b == b'<')
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Walks the article's DOM into blocks; inline text gathers until a block boundary.
struct Walker<'b> {
    builder: &'b mut Builder,
    inline: String,
}

fn name_of(node: &NodeRef<'_>) -> String {
    node.node_name()
        .map(|n| n.to_ascii_lowercase())
        .unwrap_or_default()
}

impl Walker<'_> {
    fn flush(&mut self) -> Result<(), ReadError> {
        let text = std::mem::take(&mut self.inline);
        self.builder.paragraph(&text)
    }

    fn children(&mut self, node: &NodeRef<'_>, depth: usize) -> Result<(), ReadError> {
        for child in node.children() {
            self.node(&child, depth + 1)?;
        }
        Ok(())
    }

    fn node(&mut self, node: &NodeRef<'_>, depth: usize) -> Result<(), ReadError> {
        if node.is_text() {
            self.inline.push_str(&node.text());
            return Ok(());
        }
        if !node.is_element() {
            return Ok(());
        }
        let name = name_of(node);
        if SKIPPED_ELEMENTS.contains(&name.as_str()) {
            return Ok(());
        }
        if name == "br" {
            self.inline.push(' ');
            return Ok(());
        }
        if depth > self.builder.limits().max_nesting
            || (!BLOCK_ELEMENTS.contains(&name.as_str()) && !holds_blocks(node))
        {
            self.inline.push_str(&inline_text(node));
            return Ok(());
        }
        self.flush()?;
        match name.as_str() {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                let level = name[1..].parse::<u8>().unwrap_or(2);
                self.builder.heading(level, &inline_text(node))?;
            }
            "pre" => self.builder.code(&node.text())?,
            "caption" | "figcaption" => self.builder.caption(&inline_text(node))?,
            "table" => self.table(node)?,
            "ol" | "ul" => self.list(node, name == "ol", depth)?,
            "hr" => {}
            _ => {
                self.children(node, depth)?;
                self.flush()?;
            }
        }
        Ok(())
    }

    fn list(&mut self, list: &NodeRef<'_>, ordered: bool, depth: usize) -> Result<(), ReadError> {
        let mut number: u32 = list
            .attr("start")
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(1);
        for item in list.children() {
            if !item.is_element() {
                continue;
            }
            if name_of(&item) != "li" {
                self.node(&item, depth + 1)?;
                continue;
            }
            let (own, nested) = split_item(&item);
            let marker = if ordered {
                format!("{number}.")
            } else {
                String::new()
            };
            self.builder.list_item(&marker, &own)?;
            number = number.saturating_add(1);
            for sub in nested {
                self.node(&sub, depth + 2)?;
            }
        }
        Ok(())
    }

    fn table(&mut self, table: &NodeRef<'_>) -> Result<(), ReadError> {
        let rows = table_rows(table);
        let mut header: Option<Vec<String>> = None;
        let mut body = Vec::new();
        for (cells, all_headers) in rows {
            if header.is_none() && body.is_empty() && all_headers {
                header = Some(cells);
            } else {
                body.push(cells);
            }
        }
        if let Some(caption) = table
            .children()
            .into_iter()
            .find(|c| name_of(c) == "caption")
        {
            self.builder.caption(&inline_text(&caption))?;
        }
        if body.is_empty() {
            if let Some(header) = header {
                return self.builder.row(None, &header);
            }
            return Ok(());
        }
        self.builder.table(header.as_deref(), &body)
    }
}

/// A list item's own text, and the nested lists under it.
fn split_item<'a>(item: &NodeRef<'a>) -> (String, Vec<NodeRef<'a>>) {
    let mut own = String::new();
    let mut nested = Vec::new();
    for child in item.children() {
        let name = name_of(&child);
        if name == "ul" || name == "ol" {
            nested.push(child);
        } else if child.is_text() {
            own.push_str(&child.text());
        } else if child.is_element() && !SKIPPED_ELEMENTS.contains(&name.as_str()) {
            own.push(' ');
            own.push_str(&inline_text(&child));
            own.push(' ');
        }
    }
    (own, nested)
}

/// A table's rows (through thead, tbody and tfoot, not into nested tables): each row's
/// cell texts and whether every cell is a `th`.
fn table_rows(table: &NodeRef<'_>) -> Vec<(Vec<String>, bool)> {
    let mut rows = Vec::new();
    let mut sections = vec![*table];
    while let Some(section) = sections.pop() {
        for child in section.children().into_iter().rev() {
            match name_of(&child).as_str() {
                "thead" | "tbody" | "tfoot" => sections.push(child),
                "tr" => rows.push(row_cells(&child)),
                _ => {}
            }
        }
    }
    rows.reverse();
    rows
}

fn row_cells(row: &NodeRef<'_>) -> (Vec<String>, bool) {
    let mut cells = Vec::new();
    let mut all_headers = true;
    for cell in row.children() {
        let name = name_of(&cell);
        if name != "td" && name != "th" {
            continue;
        }
        all_headers &= name == "th";
        let span: usize = cell
            .attr("colspan")
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(1)
            .clamp(1, 64);
        cells.push(fold(&inline_text(&cell)));
        cells.extend(std::iter::repeat_n(String::new(), span - 1));
    }
    let header_row = all_headers && !cells.is_empty();
    (cells, header_row)
}

/// Whether an inline element (`<font>`, `<a>`, `<span>`) wraps block content — a
/// table, a list, paragraphs — whose structure must not be flattened.
fn holds_blocks(node: &NodeRef<'_>) -> bool {
    let mut stack: Vec<NodeRef<'_>> = node.children();
    while let Some(current) = stack.pop() {
        if !current.is_element() {
            continue;
        }
        let name = name_of(&current);
        if BLOCK_ELEMENTS.contains(&name.as_str()) && name != "br" {
            return true;
        }
        if !SKIPPED_ELEMENTS.contains(&name.as_str()) {
            stack.extend(current.children());
        }
    }
    false
}

/// The text of a node without scripts and styles, with `<br>` as a space.
fn inline_text(node: &NodeRef<'_>) -> String {
    let mut out = String::new();
    let mut stack = vec![*node];
    while let Some(current) = stack.pop() {
        if current.is_text() {
            out.push_str(&current.text());
            continue;
        }
        if !current.is_element() && !current.is_document() {
            continue;
        }
        let name = name_of(&current);
        if SKIPPED_ELEMENTS.contains(&name.as_str()) {
            continue;
        }
        if name == "br" || BLOCK_ELEMENTS.contains(&name.as_str()) {
            out.push(' ');
        }
        for child in current.children().into_iter().rev() {
            stack.push(child);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_page(html: &str) -> Document {
        read_html_str(html, &Limits::default()).expect("page")
    }

    const PROSE: &str = "An important feature of transactional databases like SQLite is atomic commit. Atomic commit means that either all database changes within a single transaction occur or none of them occur.";

    #[test]
    fn tables_keep_their_header_and_lists_their_items() {
        let html = format!(
            "<html><head><title>Database File Format</title></head><body><nav>Home | About</nav>
            <h1>Database File Format</h1><p>{PROSE}</p>
            <h2>The Database Header</h2>
            <table><tr><th>Offset<th>Size<th>Description
            <tr><td>18<td>1<td>File format write version. 1 for legacy; 2 for WAL.
            <tr><td>19<td>1<td>File format read version. 1 for legacy; 2 for WAL.</table>
            <p>Key figures for the <b>quarter</b>:</p>
            <center><i>Funding rounds</i><br><table><tr><th>Round<th>Amount<tr><td>Series C<td>$48M</table></center>
            <font size=2><ul><li>Wrapped in a font tag</ul></font>
            <ul><li><strong>Quarterly revenue: $14.2M</strong> (prior year: $10.3M, +38% YoY)<li>Fleet: 1,240 units
            <ol><li>nested one</ol></ul></body></html>"
        );
        let doc = read_page(&html);
        assert!(
            doc.text.contains("\n\nOffset: 18 · Size: 1 · Description: File format write version. 1 for legacy; 2 for WAL.\n\n"),
            "{}",
            doc.text
        );
        assert!(doc.text.contains("\n\nQuarterly revenue: $14.2M (prior year: $10.3M, +38% YoY)\n\nFleet: 1,240 units\n\n1. nested one"), "{}", doc.text);
        assert!(
            doc.text.contains("Key figures for the quarter:"),
            "{}",
            doc.text
        );
        assert!(!doc.text.contains('<') && !doc.text.contains("**"));
        let at = doc.text.find("Offset: 19").expect("row");
        assert_eq!(
            doc.heading_path(at).last().map(String::as_str),
            Some("The Database Header")
        );
        assert_eq!(doc.title, "Database File Format");
    }

    #[test]
    fn deep_nesting_is_refused_quickly() {
        let deep = format!(
            "{}<p>{PROSE}</p>{}",
            "<div>".repeat(50_000),
            "</div>".repeat(50_000)
        );
        assert!(matches!(
            read_html_str(&deep, &Limits::default()),
            Err(ReadError::TooComplex(_))
        ));
        // Unclosed paragraphs and list items do not count as nesting.
        let sloppy = format!(
            "<html><body>{}</body></html>",
            format!("<p>{PROSE}").repeat(700)
        );
        assert!(read_html_str(&sloppy, &Limits::default()).is_ok());
    }

    #[test]
    fn garbage_never_panics() {
        for input in ["", "<", "<<<>>>", "<table><tr><td>", "<!--", "\u{0}\u{1}"] {
            let _ = read_html_str(input, &Limits::default());
        }
    }
}
