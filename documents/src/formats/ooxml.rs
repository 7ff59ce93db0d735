//! DOCX and PPTX (Office Open XML): parts read through [`Container`], parsed with
//! [`parse_xml`], elements matched by namespace URI and local name.
//!
//! DOCX: `word/document.xml`'s body in order. A paragraph is its runs' text (tabs and
//! breaks as spaces, deleted and moved-away text left out, a text box's text joined);
//! style `Title` makes a level-1 heading, `Heading N` (the style id, or its built-in
//! name in `word/styles.xml`, so localized ids work) heading N, one deeper after a
//! title; numbered paragraphs are list items. A table's row marked `w:tblHeader`, else
//! its first, labels the others; a nested table joins its cell's text. Headers,
//! footers, footnotes and comments are left out.
//!
//! PPTX: slides in presentation order (`p:sldIdLst` through the relationships, else
//! `slideN.xml` by N), each on `slide=N`: the title placeholder as a level-2 heading,
//! the other paragraphs and table rows in shape order (slide number, date and footer
//! placeholders left out), then the speaker notes. Charts and SmartArt are left out.
//!
//! Both take the title and the date (modified, else created) from `docProps/core.xml`.

use std::collections::BTreeMap;

use roxmltree::Node;

use super::epub::resolve_part;
use super::odf::emit_table;
use super::zipped::{parse_xml, Container};
use crate::dates::metadata_date;
use crate::model::fold;
use crate::{Builder, DocStatus, Document, Format, Limits, Place, ReadError};

const W: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
const P: &str = "http://schemas.openxmlformats.org/presentationml/2006/main";
const A: &str = "http://schemas.openxmlformats.org/drawingml/2006/main";
const R: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const RELS: &str = "http://schemas.openxmlformats.org/package/2006/relationships";
const MC: &str = "http://schemas.openxmlformats.org/markup-compatibility/2006";
const DC: &str = "http://purl.org/dc/elements/1.1/";
const DCTERMS: &str = "http://purl.org/dc/terms/";

/// Placeholders whose text repeats on every slide (or notes page), not its content.
const SKIPPED_PLACEHOLDERS: &[&str] = &["sldNum", "hdr", "ftr", "dt", "sldImg"];

/// Most columns one cell may span (a hostile `gridSpan` cannot blow up a row).
const MAX_SPAN: usize = 64;

fn is(node: Node<'_, '_>, ns: &str, name: &str) -> bool {
    node.is_element() && node.tag_name().name() == name && node.tag_name().namespace() == Some(ns)
}

fn child<'a, 'i>(node: Node<'a, 'i>, ns: &str, name: &str) -> Option<Node<'a, 'i>> {
    node.children().find(|c| is(*c, ns, name))
}

/// A cell's text, then an empty cell for each further column it spans.
fn push_cell(cells: &mut Vec<String>, text: &str, span: Option<&str>) {
    cells.push(fold(text));
    let span = span
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
        .clamp(1, MAX_SPAN);
    cells.resize(cells.len() + span - 1, String::new());
}

/// A builder holding the title of `docProps/core.xml`, and its date (modified, else
/// created).
pub(super) fn core_properties(
    c: &mut Container<'_>,
    format: Format,
    limits: &Limits,
) -> Result<(Builder, Option<String>), ReadError> {
    let mut builder = Builder::new(*limits);
    let Some(xml) = c.read_text("docProps/core.xml")? else {
        return Ok((builder, None));
    };
    let doc = parse_xml(&xml, format, "docProps/core.xml", limits)?;
    let text = |ns, name| child(doc.root_element(), ns, name).and_then(|n| n.text());
    builder.title(text(DC, "title").unwrap_or(""));
    let date = |name| text(DCTERMS, name).and_then(metadata_date);
    Ok((builder, date("modified").or_else(|| date("created"))))
}

pub(super) fn read_docx(bytes: &[u8], limits: &Limits) -> Result<Document, ReadError> {
    let mut container = Container::open(bytes, Format::Docx, limits)?;
    let xml = container
        .read_text("word/document.xml")?
        .ok_or_else(|| ReadError::malformed(Format::Docx, "no word/document.xml"))?;
    let doc = parse_xml(&xml, Format::Docx, "word/document.xml", limits)?;
    let body = child(doc.root_element(), W, "body")
        .ok_or_else(|| ReadError::malformed(Format::Docx, "word/document.xml has no w:body"))?;
    let (builder, date) = core_properties(&mut container, Format::Docx, limits)?;
    let styles = heading_styles(&mut container, limits)?;
    let mut docx = Docx {
        builder,
        styles,
        seen_title: false,
    };
    docx.blocks(body)?;
    docx.builder.finish(date, DocStatus::Current)
}

/// The heading level a style id or name stands for: 0 for `Title`, N for `Heading N`.
fn style_level(style: &str) -> Option<u8> {
    let style = style.replace(' ', "").to_ascii_lowercase();
    if style == "title" {
        return Some(0);
    }
    let level = style.strip_prefix("heading")?.parse().ok()?;
    (1..=9).contains(&level).then_some(level)
}

/// Heading levels by style id, from the styles' built-in names in `word/styles.xml`
/// (`heading 1` whatever the id, which Word localizes: `berschrift1`).
fn heading_styles(
    c: &mut Container<'_>,
    limits: &Limits,
) -> Result<BTreeMap<String, u8>, ReadError> {
    let Some(xml) = c.read_text("word/styles.xml")? else {
        return Ok(BTreeMap::new());
    };
    let doc = parse_xml(&xml, Format::Docx, "word/styles.xml", limits)?;
    let level = |s: Node<'_, '_>| {
        let name = child(s, W, "name")?.attribute((W, "val"))?;
        Some((s.attribute((W, "styleId"))?.to_string(), style_level(name)?))
    };
    Ok(doc.root_element().children().filter_map(level).collect())
}

/// Text under `node`: `w:t`, tabs and breaks as spaces, a space after each paragraph
/// (of a text box or a nested table).
fn docx_text(node: Node<'_, '_>, out: &mut String) {
    for c in node.children().filter(Node::is_element) {
        let name = c.tag_name().name();
        match c.tag_name().namespace() {
            Some(W) if name == "t" => out.push_str(c.text().unwrap_or("")),
            Some(W) if matches!(name, "tab" | "br" | "cr") => out.push(' '),
            Some(W) if name == "noBreakHyphen" => out.push('-'),
            Some(W) if matches!(name, "del" | "moveFrom" | "pPr" | "rPr") => {}
            Some(MC) if name == "Fallback" => {}
            _ => {
                docx_text(c, out);
                out.push_str(if is(c, W, "p") { " " } else { "" });
            }
        }
    }
}

/// Walks a DOCX body into blocks.
struct Docx {
    builder: Builder,
    styles: BTreeMap<String, u8>,
    seen_title: bool,
}

impl Docx {
    /// The paragraphs and tables under `parent`, through content controls and other
    /// wrappers, but not deleted or moved-away ones.
    fn blocks(&mut self, parent: Node<'_, '_>) -> Result<(), ReadError> {
        for node in parent.children().filter(Node::is_element) {
            if is(node, W, "p") {
                self.paragraph(node)?;
            } else if is(node, W, "tbl") {
                self.table(node)?;
            } else if !is(node, W, "del") && !is(node, W, "moveFrom") && !is(node, MC, "Fallback") {
                self.blocks(node)?;
            }
        }
        Ok(())
    }

    fn paragraph(&mut self, p: Node<'_, '_>) -> Result<(), ReadError> {
        let mut text = String::new();
        docx_text(p, &mut text);
        let properties = child(p, W, "pPr");
        let style = properties.and_then(|pr| child(pr, W, "pStyle")?.attribute((W, "val")));
        let level = style.and_then(|s| self.styles.get(s).copied().or_else(|| style_level(s)));
        match level {
            Some(0) => {
                self.seen_title |= !fold(&text).is_empty();
                self.builder.heading(1, &text)
            }
            Some(level) => self
                .builder
                .heading(level + u8::from(self.seen_title), &text),
            None if properties.and_then(|pr| child(pr, W, "numPr")).is_some() => {
                self.builder.list_item("", &text)
            }
            None => self.builder.paragraph(&text),
        }
    }

    fn table(&mut self, table: Node<'_, '_>) -> Result<(), ReadError> {
        let mut rows = Vec::new();
        let mut header_at = None;
        for tr in wrapped(table, "tr") {
            let mark = child(tr, W, "trPr").and_then(|pr| child(pr, W, "tblHeader"));
            if mark.is_some_and(|h| !matches!(h.attribute((W, "val")), Some("0" | "false"))) {
                header_at = header_at.or(Some(rows.len()));
            }
            let mut cells = Vec::new();
            for tc in wrapped(tr, "tc") {
                let mut text = String::new();
                docx_text(tc, &mut text);
                let span = child(tc, W, "tcPr").and_then(|pr| child(pr, W, "gridSpan"));
                push_cell(
                    &mut cells,
                    &text,
                    span.and_then(|g| g.attribute((W, "val"))),
                );
            }
            rows.push(cells);
        }
        emit_table(&mut self.builder, rows, header_at.unwrap_or(0))
    }
}

/// The `w:name` children of `parent`, also those inside content controls.
fn wrapped<'a, 'i>(parent: Node<'a, 'i>, name: &str) -> Vec<Node<'a, 'i>> {
    let mut found = Vec::new();
    for c in parent.children().filter(Node::is_element) {
        if is(c, W, name) {
            found.push(c);
        } else if is(c, W, "sdt") || is(c, W, "sdtContent") || is(c, W, "customXml") {
            found.extend(wrapped(c, name));
        }
    }
    found
}

pub(super) fn read_pptx(bytes: &[u8], limits: &Limits) -> Result<Document, ReadError> {
    let mut container = Container::open(bytes, Format::Pptx, limits)?;
    let mut slides = presentation_order(&mut container, limits)?;
    if slides.is_empty() {
        slides = numbered_slides(&container);
    }
    let presentation = container
        .names()
        .contains(&"ppt/presentation.xml".to_string());
    if slides.is_empty() && !presentation {
        return Err(ReadError::malformed(
            Format::Pptx,
            "no ppt/presentation.xml",
        ));
    }
    let (mut builder, date) = core_properties(&mut container, Format::Pptx, limits)?;
    for (n, part) in (1u32..).zip(&slides) {
        builder.reset_headings();
        builder.place(Place::Slide(n));
        read_slide(&mut container, part, &mut builder)?;
    }
    builder.finish(date, DocStatus::Current)
}

/// Part `name` parsed and handed to `then`, or `None` where it is missing or malformed:
/// what it would have told (the slide order, speaker notes) is lost, the rest is not.
fn optional_part<T>(
    c: &mut Container<'_>,
    name: &str,
    limits: &Limits,
    then: impl FnOnce(Node<'_, '_>) -> T,
) -> Result<Option<T>, ReadError> {
    let xml = match c.read_text(name) {
        Ok(Some(xml)) => xml,
        Ok(None) | Err(ReadError::Malformed { .. }) => return Ok(None),
        Err(other) => return Err(other),
    };
    match parse_xml(&xml, Format::Pptx, name, limits) {
        Ok(doc) => Ok(Some(then(doc.root_element()))),
        Err(ReadError::Malformed { .. }) => Ok(None),
        Err(other) => Err(other),
    }
}

/// (type, resolved target) of each internal relationship of `part`, by id.
fn relationships(
    c: &mut Container<'_>,
    part: &str,
    limits: &Limits,
) -> Result<BTreeMap<String, (String, String)>, ReadError> {
    let (dir, file) = part.rsplit_once('/').unwrap_or(("", part));
    let rels = optional_part(c, &format!("{dir}/_rels/{file}.rels"), limits, |root| {
        let mut rels = BTreeMap::new();
        for rel in root.children().filter(|n| is(*n, RELS, "Relationship")) {
            if let (Some(id), Some(target)) = (rel.attribute("Id"), rel.attribute("Target")) {
                if rel.attribute("TargetMode") != Some("External") {
                    let kind = rel.attribute("Type").unwrap_or("").to_string();
                    rels.insert(id.to_string(), (kind, resolve_part(dir, target)));
                }
            }
        }
        rels
    })?;
    Ok(rels.unwrap_or_default())
}

/// The slide parts in the order `ppt/presentation.xml` lists them (none where it
/// cannot tell).
fn presentation_order(c: &mut Container<'_>, limits: &Limits) -> Result<Vec<String>, ReadError> {
    let rels = relationships(c, "ppt/presentation.xml", limits)?;
    let order = optional_part(c, "ppt/presentation.xml", limits, |root| {
        let ids = child(root, P, "sldIdLst")
            .into_iter()
            .flat_map(|l| l.children());
        let ids = ids.filter_map(|n| n.attribute((R, "id")));
        ids.filter_map(|id| Some(rels.get(id)?.1.clone())).collect()
    })?;
    Ok(order.unwrap_or_default())
}

/// `ppt/slides/slideN.xml` sorted by N.
fn numbered_slides(c: &Container<'_>) -> Vec<String> {
    let mut slides: Vec<(u64, String)> = Vec::new();
    for name in c.names() {
        let number = name
            .strip_prefix("ppt/slides/slide")
            .and_then(|n| n.strip_suffix(".xml"));
        if let Some(n) = number.and_then(|n| n.parse().ok()) {
            slides.push((n, name));
        }
    }
    slides.sort();
    slides.into_iter().map(|(_, name)| name).collect()
}

fn placeholder<'a>(shape: Node<'a, '_>) -> Option<&'a str> {
    let ph = child(child(child(shape, P, "nvSpPr")?, P, "nvPr")?, P, "ph")?;
    Some(ph.attribute("type").unwrap_or("body"))
}

/// One slide: its title, its other shapes' text, then its speaker notes.
fn read_slide(c: &mut Container<'_>, part: &str, builder: &mut Builder) -> Result<(), ReadError> {
    let missing = || ReadError::malformed(Format::Pptx, format!("no slide part {part}"));
    let xml = c.read_text(part)?.ok_or_else(missing)?;
    let limits = builder.limits();
    let doc = parse_xml(&xml, Format::Pptx, part, &limits)?;
    let is_title =
        |n: &Node<'_, '_>| is(*n, P, "sp") && matches!(placeholder(*n), Some("title" | "ctrTitle"));
    let title = doc.root_element().descendants().find(is_title);
    if let Some(title) = title {
        builder.heading(2, &a_text(title))?;
    }
    slide_shapes(builder, doc.root_element(), title.map(|t| t.id()))?;
    let rels = relationships(c, part, &limits)?;
    let Some((_, notes)) = rels
        .values()
        .find(|(kind, _)| kind.ends_with("/notesSlide"))
    else {
        return Ok(());
    };
    let notes = optional_part(c, notes, &limits, |root| slide_shapes(builder, root, None))?;
    notes.unwrap_or(Ok(()))
}

/// The paragraphs and tables under `parent` in shape order, but the title shape and
/// the placeholders that repeat on every slide.
fn slide_shapes(
    b: &mut Builder,
    parent: Node<'_, '_>,
    title: Option<roxmltree::NodeId>,
) -> Result<(), ReadError> {
    for node in parent.children().filter(Node::is_element) {
        let repeated = is(node, P, "sp")
            && placeholder(node).is_some_and(|t| SKIPPED_PLACEHOLDERS.contains(&t));
        if Some(node.id()) == title || repeated || is(node, MC, "Fallback") {
            continue;
        }
        if is(node, A, "p") {
            b.paragraph(&a_text(node))?;
        } else if is(node, A, "tbl") {
            let mut rows = Vec::new();
            for tr in node.children().filter(|n| is(*n, A, "tr")) {
                let mut cells = Vec::new();
                for tc in tr.children().filter(|n| is(*n, A, "tc")) {
                    push_cell(&mut cells, &a_text(tc), tc.attribute("gridSpan"));
                }
                rows.push(cells);
            }
            emit_table(b, rows, 0)?;
        } else {
            slide_shapes(b, node, title)?;
        }
    }
    Ok(())
}

/// The DrawingML text under `node`: runs and fields, breaks and paragraphs as spaces.
fn a_text(node: Node<'_, '_>) -> String {
    let mut text = String::new();
    for n in node.descendants() {
        if is(n, A, "t") {
            text.push_str(n.text().unwrap_or(""));
        } else if is(n, A, "br") || is(n, A, "p") {
            text.push(' ');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::super::epub::tests::zip;
    use super::*;

    // Minimal parts as Office writes them (one line each).
    const DOCUMENT: &str = r#"<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>Q1 2026 Operations Report</w:t></w:r></w:p><w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Finance</w:t></w:r></w:p><w:p><w:pPr><w:pStyle w:val="berschrift2"/></w:pPr><w:r><w:t>Revenue</w:t></w:r></w:p><w:p><w:r><w:t xml:space="preserve">Revenue grew </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>strongly</w:t><w:tab/><w:t>this quarter.</w:t></w:r><w:del><w:r><w:delText>Dropped.</w:delText></w:r></w:del></w:p><w:p><w:pPr><w:numPr><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>Quarterly revenue: $14.2M</w:t></w:r><w:r><w:t xml:space="preserve"> (prior year: $10.3M, +38% YoY)</w:t></w:r></w:p><w:tbl><w:tr><w:trPr><w:tblHeader/></w:trPr><w:tc><w:p><w:r><w:t>Round</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Date</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Amount</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Lead</w:t></w:r></w:p></w:tc></w:tr><w:tr><w:tc><w:p><w:r><w:t>Series C</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Oct 2025</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>$48M</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Northgate Capital</w:t></w:r></w:p></w:tc></w:tr><w:tr><w:tc><w:tcPr><w:gridSpan w:val="2"/></w:tcPr><w:p><w:r><w:t>Series B</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>$20M</w:t></w:r></w:p><w:tbl><w:tr><w:tc><w:p><w:r><w:t>(two closes)</w:t></w:r></w:p></w:tc></w:tr></w:tbl></w:tc></w:tr></w:tbl><w:sectPr/></w:body></w:document>"#;
    const STYLES: &str = r#"<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:style w:styleId="berschrift2"><w:name w:val="heading 2"/></w:style></w:styles>"#;
    const CORE: &str = r#"<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/"><dc:title>Ops report</dc:title><dcterms:created>2026-04-01T08:00:00Z</dcterms:created><dcterms:modified>2026-04-14T09:30:00Z</dcterms:modified></cp:coreProperties>"#;
    const SLIDE_A: &str = r#"<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><p:cSld><p:spTree><p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:nvPr><p:ph type="body"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>Ship v2 in May.</a:t></a:r></a:p><a:p><a:r><a:t>Hire two engineers.</a:t></a:r></a:p></p:txBody></p:sp><p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>Roadmap</a:t></a:r></a:p></p:txBody></p:sp><p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:nvPr><p:ph type="sldNum"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>1</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>"#;
    const SLIDE_B: &str = r#"<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><p:cSld><p:spTree><p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:nvPr><p:ph type="ctrTitle"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>Results</a:t></a:r></a:p></p:txBody></p:sp><p:graphicFrame><a:graphic><a:graphicData><a:tbl><a:tr><a:tc><a:txBody><a:p><a:r><a:t>Region</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>Units</a:t></a:r></a:p></a:txBody></a:tc></a:tr><a:tr><a:tc><a:txBody><a:p><a:r><a:t>EMEA</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>1,240</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame></p:spTree></p:cSld></p:sld>"#;
    const NOTES: &str = r#"<p:notes xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><p:cSld><p:spTree><p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:nvPr><p:ph type="sldImg"/></p:nvPr></p:nvSpPr><p:txBody></p:txBody></p:sp><p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:nvPr><p:ph type="body"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>Mention the hiring freeze.</a:t></a:r></a:p></p:txBody></p:sp><p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:nvPr><p:ph type="sldNum"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>1</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:notes>"#;
    const PRESENTATION: &str = r#"<p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><p:sldIdLst><p:sldId id="256" r:id="rId7"/><p:sldId id="257" r:id="rId2"/></p:sldIdLst></p:presentation>"#;
    const PRESENTATION_RELS: &str = r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide1.xml"/><Relationship Id="rId7" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="/ppt/slides/slide2.xml"/></Relationships>"#;
    const SLIDE_RELS: &str = r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/notesSlide" Target="../notesSlides/notesSlide1.xml"/></Relationships>"#;
    const TEN: &str = r#"<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><p:cSld><p:spTree><p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>Ten</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>"#;
    const TWO: &str = r#"<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><p:cSld><p:spTree><p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>Two</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>"#;

    fn docx() -> Vec<u8> {
        zip(&[
            ("word/document.xml", DOCUMENT),
            ("word/styles.xml", STYLES),
            ("docProps/core.xml", CORE),
        ])
    }

    #[test]
    fn docx_headings_lists_and_tables() {
        let doc = read_docx(&docx(), &Limits::default()).unwrap();
        let expected = "Q1 2026 Operations Report\n\nFinance\n\nRevenue\n\nRevenue grew strongly this quarter.\n\nQuarterly revenue: $14.2M (prior year: $10.3M, +38% YoY)\n\nRound: Series C · Date: Oct 2025 · Amount: $48M · Lead: Northgate Capital\n\nRound: Series B · Amount: $20M (two closes)";
        assert_eq!(doc.text, expected);
        let at = doc.text.find("Round: Series C").unwrap();
        let path = ["Q1 2026 Operations Report", "Finance", "Revenue"];
        assert_eq!(doc.heading_path(at), path);
        assert_eq!(doc.date.as_deref(), Some("2026-04-14"));
        assert_eq!(doc.title, "Ops report");
    }

    #[test]
    fn a_docx_signed_this_year_is_not_dated_by_its_template() {
        use crate::writers::{write_docx, Block, Meta};
        // python-docx's default template carries 2013-12-23 into every file it makes.
        let template = Meta {
            created: "2013-12-23T23:15:00Z".into(),
            modified: "2013-12-23T23:15:00Z".into(),
            ..Meta::default()
        };
        let brief = |closing: &str| {
            let blocks = [
                Block::Heading(1, "Tracker product brief".into()),
                Block::Paragraph("Product team, March 2026".into()),
                Block::Paragraph("Founded in 2013, we now ship the tracker to 40 fleets.".into()),
                Block::Paragraph(closing.into()),
            ];
            let bytes = write_docx(&template, &blocks).unwrap();
            super::super::read(&bytes, Format::Docx, &Limits::default()).unwrap()
        };
        let doc = brief("Prepared by Dana Ruiz, 2 March 2026");
        assert_eq!(doc.date.as_deref(), Some("2026-03-02"));
        assert_eq!(
            doc.date_basis.as_deref(),
            Some("dated 2026-03-02 by its text (\"Prepared by Dana Ruiz, 2 March 2026\"); the file's metadata says 2013-12-23")
        );
        let doc = brief("Questions go to the product team.");
        assert_eq!(doc.date.as_deref(), Some("2026-03"));
        let agreeing = Meta {
            modified: "2026-02-27T10:00:00Z".into(),
            ..template
        };
        let bytes = write_docx(
            &agreeing,
            &[Block::Paragraph("Product team, March 2026".into())],
        );
        let doc = super::super::read(&bytes.unwrap(), Format::Docx, &Limits::default()).unwrap();
        assert_eq!(doc.date.as_deref(), Some("2026-02-27"));
        assert_eq!(doc.date_basis, None);
    }

    #[test]
    fn docx_failures_are_typed() {
        let (whole, limits) = (docx(), Limits::default());
        let cut = read_docx(&whole[..whole.len() / 2], &limits);
        assert!(matches!(cut, Err(ReadError::Malformed { .. })), "{cut:?}");
        let small = Limits {
            max_part_bytes: 1000,
            ..limits
        };
        assert!(matches!(
            read_docx(&whole, &small),
            Err(ReadError::TooLarge(_))
        ));
        let ole = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0, 0];
        assert_eq!(read_docx(&ole, &limits), Err(ReadError::Encrypted));
    }

    #[test]
    fn pptx_slides_in_presentation_order_with_notes() {
        let bytes = zip(&[
            ("ppt/slides/slide1.xml", SLIDE_B),
            ("ppt/slides/slide2.xml", SLIDE_A),
            ("ppt/slides/_rels/slide2.xml.rels", SLIDE_RELS),
            ("ppt/notesSlides/notesSlide1.xml", NOTES),
            ("ppt/presentation.xml", PRESENTATION),
            ("ppt/_rels/presentation.xml.rels", PRESENTATION_RELS),
        ]);
        let doc = read_pptx(&bytes, &Limits::default()).unwrap();
        let expected = "Roadmap\n\nShip v2 in May.\n\nHire two engineers.\n\nMention the hiring freeze.\n\nResults\n\nRegion: EMEA · Units: 1,240";
        assert_eq!(doc.text, expected);
        assert_eq!(doc.fragment_at(0).as_deref(), Some("slide=1"));
        let notes = doc.text.find("Mention").unwrap();
        assert_eq!(doc.fragment_at(notes).as_deref(), Some("slide=1"));
        assert_eq!(doc.heading_path(notes), ["Roadmap"]);
        let row = doc.text.find("Region").unwrap();
        assert_eq!(doc.fragment_at(row).as_deref(), Some("slide=2"));
        assert_eq!(doc.heading_path(row), ["Results"]);
    }

    #[test]
    fn pptx_without_a_slide_list_goes_by_slide_number() {
        let parts = [
            ("ppt/slides/slide10.xml", TEN),
            ("ppt/slides/slide2.xml", TWO),
            ("ppt/presentation.xml", "<p"),
        ];
        let doc = read_pptx(&zip(&parts), &Limits::default()).unwrap();
        assert_eq!(doc.text, "Two\n\nTen");
        assert_eq!(doc.fragment_at(5).as_deref(), Some("slide=2"));
    }

    #[test]
    fn garbage_never_panics() {
        let junk = zip(&[
            ("word/document.xml", "<w:document"),
            ("ppt/presentation.xml", "\u{0}"),
        ]);
        let inputs: [&[u8]; 5] = [b"", b"PK\x03\x04garbage", &[0xff; 64], &zip(&[]), &junk];
        for input in inputs {
            assert!(read_docx(input, &Limits::default()).is_err());
            assert!(read_pptx(input, &Limits::default()).is_err());
        }
    }
}
