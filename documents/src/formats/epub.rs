//! EPUB: the OPF package (found through `META-INF/container.xml`) gives the title, the
//! date and the spine; each spine chapter's XHTML body is walked into blocks like any
//! HTML page (all of it: a chapter has no navigation to strip). Also home of
//! [`resolve_part`], how every zip format resolves a relative part name.

use std::collections::HashMap;

use super::html::walk_into;
use super::zipped::{parse_xml, Container};
use crate::dates::metadata_date;
use crate::{Builder, DocStatus, Document, Format, Limits, ReadError};

const OPF: &str = "http://www.idpf.org/2007/opf";
const DC: &str = "http://purl.org/dc/elements/1.1/";
const CONTAINER: &str = "urn:oasis:names:tc:opendocument:xmlns:container";

/// `target` relative to folder `dir` of a zip container, normalised (`..` and `.`
/// resolved, never above the root; a leading `/` means the container's root).
pub(crate) fn resolve_part(dir: &str, target: &str) -> String {
    let target = target.split('#').next().unwrap_or("");
    let mut parts: Vec<&str> = Vec::new();
    let base = if target.starts_with('/') { "" } else { dir };
    for piece in base.split('/').chain(target.split('/')) {
        match piece {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

pub(super) fn read(bytes: &[u8], limits: &Limits) -> Result<Document, ReadError> {
    let mut container = Container::open(bytes, Format::Epub, limits)?;
    if container.read("META-INF/encryption.xml")?.is_some() {
        return Err(ReadError::Encrypted);
    }
    let opf_path = package_path(&mut container, limits)?;
    let opf_text = container
        .read_text(&opf_path)?
        .ok_or_else(|| ReadError::malformed(Format::Epub, format!("no package part {opf_path}")))?;
    let opf = parse_xml(&opf_text, Format::Epub, &opf_path, limits)?;
    let root = opf.root_element();
    let mut builder = Builder::new(*limits);
    let metadata = element(root, OPF, "metadata");
    let dc = |name| {
        metadata
            .and_then(|m| element(m, DC, name))
            .and_then(|n| n.text())
    };
    builder.title(dc("title").unwrap_or(""));
    let date = dc("date").and_then(metadata_date);
    let dir = opf_path.rsplit_once('/').map_or("", |(dir, _)| dir);
    let manifest: HashMap<&str, &str> = element(root, OPF, "manifest")
        .map(|m| {
            m.children()
                .filter(|n| n.tag_name().name() == "item")
                .filter_map(|n| Some((n.attribute("id")?, n.attribute("href")?)))
                .collect()
        })
        .unwrap_or_default();
    let spine = element(root, OPF, "spine")
        .ok_or_else(|| ReadError::malformed(Format::Epub, "the package has no spine"))?;
    let chapters: Vec<String> = spine
        .children()
        .filter(|n| n.tag_name().name() == "itemref")
        .filter_map(|n| manifest.get(n.attribute("idref")?))
        .map(|href| resolve_part(dir, href))
        .collect();
    for chapter in chapters {
        let Some(html) = container.read_text(&chapter)? else {
            builder.gap(format!("chapter {chapter} is missing from the package"));
            continue;
        };
        builder.reset_headings();
        walk_into(&mut builder, &html)?;
    }
    builder.finish(date, DocStatus::Current)
}

/// The first child element of `parent` named `name` in namespace `ns`.
fn element<'a, 'i>(
    parent: roxmltree::Node<'a, 'i>,
    ns: &str,
    name: &str,
) -> Option<roxmltree::Node<'a, 'i>> {
    parent.children().find(|n| {
        n.is_element() && n.tag_name().name() == name && n.tag_name().namespace() == Some(ns)
    })
}

/// The OPF package's path from `META-INF/container.xml`.
fn package_path(container: &mut Container<'_>, limits: &Limits) -> Result<String, ReadError> {
    let xml = container
        .read_text("META-INF/container.xml")?
        .ok_or_else(|| ReadError::malformed(Format::Epub, "no META-INF/container.xml"))?;
    let doc = parse_xml(&xml, Format::Epub, "META-INF/container.xml", limits)?;
    doc.descendants()
        .find(|n| n.tag_name().name() == "rootfile" && n.tag_name().namespace() == Some(CONTAINER))
        .and_then(|n| n.attribute("full-path"))
        .map(|p| resolve_part("", p))
        .ok_or_else(|| ReadError::malformed(Format::Epub, "container.xml names no rootfile"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A zip of `(name, text)` parts, deflated.
    pub(crate) fn zip(parts: &[(&str, &str)]) -> Vec<u8> {
        let owned: Vec<(String, String)> = parts
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect();
        crate::writers::zip(&owned).unwrap()
    }

    #[test]
    fn a_missing_chapter_is_a_gap_not_a_silence() {
        let bytes = zip(&[
            (
                "META-INF/container.xml",
                r#"<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="book.opf"/></rootfiles></container>"#,
            ),
            (
                "book.opf",
                r#"<package xmlns="http://www.idpf.org/2007/opf"><manifest><item id="a" href="one.xhtml"/><item id="b" href="gone.xhtml"/></manifest><spine><itemref idref="a"/><itemref idref="b"/></spine></package>"#,
            ),
            (
                "one.xhtml",
                "<html><body><p>The only chapter left.</p></body></html>",
            ),
        ]);
        let doc = read(&bytes, &Limits::default()).unwrap();
        assert_eq!(doc.gaps, ["chapter gone.xhtml is missing from the package"]);
    }

    #[test]
    fn parts_resolve_relative_to_their_folder() {
        assert_eq!(
            resolve_part("ppt/slides", "../notesSlides/n1.xml"),
            "ppt/notesSlides/n1.xml"
        );
        assert_eq!(
            resolve_part("ppt", "/ppt/slides/s2.xml"),
            "ppt/slides/s2.xml"
        );
        assert_eq!(resolve_part("OEBPS", "ch1.xhtml#top"), "OEBPS/ch1.xhtml");
        assert_eq!(resolve_part("", "../../x"), "x");
    }

    #[test]
    fn chapters_in_spine_order_with_metadata() {
        let bytes = zip(&[
            ("mimetype", "application/epub+zip"),
            ("META-INF/container.xml", r#"<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/book.opf"/></rootfiles></container>"#),
            ("OEBPS/book.opf", r#"<package xmlns="http://www.idpf.org/2007/opf"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Field Guide</dc:title><dc:date>2025-11-02</dc:date></metadata><manifest><item id="a" href="one.xhtml"/><item id="b" href="text/two.xhtml"/></manifest><spine><itemref idref="b"/><itemref idref="a"/></spine></package>"#),
            ("OEBPS/one.xhtml", "<html><body><h1>Later</h1><p>Second chapter text.</p></body></html>"),
            ("OEBPS/text/two.xhtml", "<html><body><h1>First</h1><ul><li>An item without a period</li></ul></body></html>"),
        ]);
        let doc = read(&bytes, &Limits::default()).unwrap();
        assert_eq!(
            doc.text,
            "First\n\nAn item without a period\n\nLater\n\nSecond chapter text."
        );
        assert!(doc.gaps.is_empty());
        assert_eq!(doc.title, "Field Guide");
        assert_eq!(doc.date.as_deref(), Some("2025-11-02"));
        let at = doc.text.find("Second").unwrap();
        assert_eq!(doc.heading_path(at), ["Later"]);
    }
}
