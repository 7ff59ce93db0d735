//! DOCX, PPTX and XLSX as Office writes their essentials: the content types, the
//! package relationships, the main parts and `docProps/core.xml` (title, author,
//! dates), deflated in a zip.

use std::io::Write;

use super::{escape, Block, Meta, WriteError};

const W: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
const P: &str = "http://schemas.openxmlformats.org/presentationml/2006/main";
const A: &str = "http://schemas.openxmlformats.org/drawingml/2006/main";
const R: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const RELS: &str = "http://schemas.openxmlformats.org/package/2006/relationships";
const OFFICE_DOCUMENT: &str =
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument";

/// A zip of `(name, text)` parts, deflated.
pub fn zip(parts: &[(String, String)]) -> Result<Vec<u8>, WriteError> {
    let failed = |e: &dyn std::fmt::Display| WriteError::Encoding("zip", e.to_string());
    let mut out = std::io::Cursor::new(Vec::new());
    let mut writer = zip::ZipWriter::new(&mut out);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, text) in parts {
        writer
            .start_file(name.as_str(), options)
            .map_err(|e| failed(&e))?;
        writer.write_all(text.as_bytes()).map_err(|e| failed(&e))?;
    }
    writer.finish().map_err(|e| failed(&e))?;
    Ok(out.into_inner())
}

fn core_xml(meta: &Meta) -> String {
    format!(
        r#"<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/"><dc:title>{}</dc:title><dc:creator>{}</dc:creator><dcterms:created>{}</dcterms:created><dcterms:modified>{}</dcterms:modified></cp:coreProperties>"#,
        escape(&meta.title),
        escape(&meta.author),
        escape(&meta.created),
        escape(&meta.modified)
    )
}

fn content_types(overrides: &[(String, &str)]) -> String {
    let overrides: String = overrides
        .iter()
        .map(|(part, kind)| format!(r#"<Override PartName="/{part}" ContentType="application/vnd.openxmlformats-officedocument.{kind}+xml"/>"#))
        .collect();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>{overrides}<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/></Types>"#
    )
}

/// Relationships of `(id, type suffix or full type, target)`.
fn relationships(rels: &[(String, String, String)]) -> String {
    let rels: String = rels
        .iter()
        .map(|(id, kind, target)| {
            let kind = if kind.starts_with("http") {
                kind.clone()
            } else {
                format!("{R}/{kind}")
            };
            format!(r#"<Relationship Id="{id}" Type="{kind}" Target="{target}"/>"#)
        })
        .collect();
    format!(r#"<Relationships xmlns="{RELS}">{rels}</Relationships>"#)
}

fn package_rels(main: &str) -> (String, String) {
    (
        "_rels/.rels".into(),
        relationships(&[("rId1".into(), OFFICE_DOCUMENT.into(), main.into())]),
    )
}

fn w_run(text: &str) -> String {
    format!(
        r#"<w:r><w:t xml:space="preserve">{}</w:t></w:r>"#,
        escape(text)
    )
}

fn w_paragraph(text: &str, properties: &str) -> String {
    format!("<w:p>{properties}{}</w:p>", w_run(text))
}

/// A DOCX of `blocks`: headings as `HeadingN` styles, list items numbered, tables with
/// a repeated header row.
pub fn write_docx(meta: &Meta, blocks: &[Block]) -> Result<Vec<u8>, WriteError> {
    let mut body = String::new();
    for block in blocks {
        match block {
            Block::Heading(level, text) => body.push_str(&w_paragraph(
                text,
                &format!(r#"<w:pPr><w:pStyle w:val="Heading{level}"/></w:pPr>"#),
            )),
            Block::Paragraph(text) | Block::Notes(text) => body.push_str(&w_paragraph(text, "")),
            Block::Item(text) => body.push_str(&w_paragraph(
                text,
                r#"<w:pPr><w:pStyle w:val="ListParagraph"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr>"#,
            )),
            Block::Table(rows) => {
                body.push_str("<w:tbl>");
                for (i, row) in rows.iter().enumerate() {
                    body.push_str("<w:tr>");
                    if i == 0 {
                        body.push_str("<w:trPr><w:tblHeader/></w:trPr>");
                    }
                    for cell in row {
                        body.push_str(&format!("<w:tc>{}</w:tc>", w_paragraph(cell, "")));
                    }
                    body.push_str("</w:tr>");
                }
                body.push_str("</w:tbl>");
            }
        }
    }
    let document = format!(
        r#"<w:document xmlns:w="{W}" xmlns:r="{R}"><w:body>{body}<w:sectPr/></w:body></w:document>"#
    );
    zip(&[
        (
            "[Content_Types].xml".into(),
            content_types(&[("word/document.xml".into(), "wordprocessingml.document.main")]),
        ),
        package_rels("word/document.xml"),
        ("word/document.xml".into(), document),
        ("docProps/core.xml".into(), core_xml(meta)),
    ])
}

fn a_paragraph(text: &str) -> String {
    format!("<a:p><a:r><a:t>{}</a:t></a:r></a:p>", escape(text))
}

fn shape(id: usize, placeholder: &str, paragraphs: &str) -> String {
    format!(
        r#"<p:sp><p:nvSpPr><p:cNvPr id="{id}" name="Shape {id}"/><p:cNvSpPr/><p:nvPr><p:ph type="{placeholder}"/></p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/>{paragraphs}</p:txBody></p:sp>"#
    )
}

fn table_frame(id: usize, rows: &[Vec<String>]) -> String {
    let rows: String = rows
        .iter()
        .map(|row| {
            let cells: String = row
                .iter()
                .map(|c| {
                    format!(
                        "<a:tc><a:txBody><a:bodyPr/>{}</a:txBody></a:tc>",
                        a_paragraph(c)
                    )
                })
                .collect();
            format!("<a:tr>{cells}</a:tr>")
        })
        .collect();
    format!(
        r#"<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="{id}" name="Table {id}"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table"><a:tbl>{rows}</a:tbl></a:graphicData></a:graphic></p:graphicFrame>"#
    )
}

/// A slide's shapes (title placeholder, body, tables) and its notes, if any.
fn slide_parts(blocks: &[Block]) -> (String, Option<String>) {
    let mut shapes = String::new();
    let mut body = String::new();
    let mut notes = None;
    let mut id = 2;
    for block in blocks {
        match block {
            Block::Heading(_, text) if shapes.is_empty() && body.is_empty() => {
                shapes.push_str(&shape(id, "title", &a_paragraph(text)));
                id += 1;
            }
            Block::Heading(_, text) | Block::Paragraph(text) | Block::Item(text) => {
                body.push_str(&a_paragraph(text))
            }
            Block::Table(rows) => {
                shapes.push_str(&table_frame(id, rows));
                id += 1;
            }
            Block::Notes(text) => notes = Some(text.clone()),
        }
    }
    if !body.is_empty() {
        shapes.push_str(&shape(id, "body", &body));
    }
    (shapes, notes)
}

/// A PPTX of `slides`: each slide's first heading is its title; other text goes in a
/// body placeholder, tables in table frames, `Notes:` into the notes page.
pub fn write_pptx(meta: &Meta, slides: &[Vec<Block>]) -> Result<Vec<u8>, WriteError> {
    let ns = format!(r#"xmlns:p="{P}" xmlns:a="{A}" xmlns:r="{R}""#);
    let mut parts = Vec::new();
    let mut overrides = vec![(
        "ppt/presentation.xml".to_string(),
        "presentationml.presentation.main",
    )];
    let mut ids = String::new();
    let mut presentation_rels = Vec::new();
    for (i, blocks) in slides.iter().enumerate() {
        let n = i + 1;
        let (shapes, notes) = slide_parts(blocks);
        let slide =
            format!(r#"<p:sld {ns}><p:cSld><p:spTree>{shapes}</p:spTree></p:cSld></p:sld>"#);
        parts.push((format!("ppt/slides/slide{n}.xml"), slide));
        overrides.push((format!("ppt/slides/slide{n}.xml"), "presentationml.slide"));
        if let Some(notes) = notes {
            let page = format!(
                r#"<p:notes {ns}><p:cSld><p:spTree>{}</p:spTree></p:cSld></p:notes>"#,
                shape(2, "body", &a_paragraph(&notes))
            );
            parts.push((format!("ppt/notesSlides/notesSlide{n}.xml"), page));
            overrides.push((
                format!("ppt/notesSlides/notesSlide{n}.xml"),
                "presentationml.notesSlide",
            ));
            let rel = (
                "rId1".to_string(),
                "notesSlide".to_string(),
                format!("../notesSlides/notesSlide{n}.xml"),
            );
            parts.push((
                format!("ppt/slides/_rels/slide{n}.xml.rels"),
                relationships(&[rel]),
            ));
        }
        ids.push_str(&format!(r#"<p:sldId id="{}" r:id="rId{n}"/>"#, 255 + n));
        presentation_rels.push((
            format!("rId{n}"),
            "slide".to_string(),
            format!("slides/slide{n}.xml"),
        ));
    }
    parts.push((
        "ppt/presentation.xml".into(),
        format!(r#"<p:presentation {ns}><p:sldIdLst>{ids}</p:sldIdLst></p:presentation>"#),
    ));
    parts.push((
        "ppt/_rels/presentation.xml.rels".into(),
        relationships(&presentation_rels),
    ));
    parts.push(("[Content_Types].xml".into(), content_types(&overrides)));
    parts.push(package_rels("ppt/presentation.xml"));
    parts.push(("docProps/core.xml".into(), core_xml(meta)));
    zip(&parts)
}

/// The column letters of 0-based column `index` (`A`, …, `Z`, `AA`, …).
fn column(mut index: usize) -> String {
    let mut letters = Vec::new();
    loop {
        letters.push(char::from(b'A' + u8::try_from(index % 26).unwrap_or(0)));
        if index < 26 {
            break;
        }
        index = index / 26 - 1;
    }
    letters.iter().rev().collect()
}

/// An XLSX of `(sheet name, rows)`: numbers as numbers, other cells as inline strings.
pub fn write_xlsx(
    meta: &Meta,
    sheets: &[(String, Vec<Vec<String>>)],
) -> Result<Vec<u8>, WriteError> {
    let mut parts = Vec::new();
    let mut listed = String::new();
    let mut rels = Vec::new();
    let mut overrides = vec![("xl/workbook.xml".to_string(), "spreadsheetml.sheet.main")];
    for (i, (name, rows)) in sheets.iter().enumerate() {
        let n = i + 1;
        listed.push_str(&format!(
            r#"<sheet name="{}" sheetId="{n}" r:id="rId{n}"/>"#,
            escape(name)
        ));
        rels.push((
            format!("rId{n}"),
            "worksheet".to_string(),
            format!("worksheets/sheet{n}.xml"),
        ));
        overrides.push((
            format!("xl/worksheets/sheet{n}.xml"),
            "spreadsheetml.worksheet",
        ));
        let mut data = String::new();
        for (r, row) in rows.iter().enumerate() {
            data.push_str(&format!(r#"<row r="{}">"#, r + 1));
            for (c, value) in row.iter().enumerate().filter(|(_, v)| !v.is_empty()) {
                let at = format!("{}{}", column(c), r + 1);
                if value.parse::<f64>().is_ok() {
                    data.push_str(&format!(r#"<c r="{at}"><v>{value}</v></c>"#));
                } else {
                    data.push_str(&format!(
                        r#"<c r="{at}" t="inlineStr"><is><t>{}</t></is></c>"#,
                        escape(value)
                    ));
                }
            }
            data.push_str("</row>");
        }
        let sheet = format!(
            r#"<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{data}</sheetData></worksheet>"#
        );
        parts.push((format!("xl/worksheets/sheet{n}.xml"), sheet));
    }
    parts.push(("xl/workbook.xml".into(), format!(r#"<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="{R}"><sheets>{listed}</sheets></workbook>"#)));
    parts.push(("xl/_rels/workbook.xml.rels".into(), relationships(&rels)));
    parts.push(("[Content_Types].xml".into(), content_types(&overrides)));
    parts.push(package_rels("xl/workbook.xml"));
    parts.push(("docProps/core.xml".into(), core_xml(meta)));
    zip(&parts)
}
