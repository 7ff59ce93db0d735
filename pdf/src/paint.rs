//! Laid-out pages drawn as PDF with krilla: each run of text in its embedded, subset
//! font; link areas as URI annotations; headings as the outline (bookmarks); a page
//! number at the foot of every page.

use krilla::action::LinkAction;
use krilla::annotation::{LinkAnnotation, Target};
use krilla::destination::XyzDestination;
use krilla::geom::{PathBuilder, Point, Rect};
use krilla::metadata::Metadata;
use krilla::outline::{Outline, OutlineNode};
use krilla::page::PageSettings;
use krilla::paint::Stroke;
use krilla::text::{Font, TextDirection};
use krilla::Document;

use crate::layout::{Face, Fonts, Laid, Mark, PAGE_HEIGHT, PAGE_WIDTH};
use crate::PdfError;

/// The PDF's bytes.
pub fn paint(fonts: &Fonts, laid: &Laid, title: &str) -> Result<Vec<u8>, PdfError> {
    let faces: Vec<Font> = fonts
        .data
        .iter()
        .map(|bytes| Font::new((*bytes).into(), 0))
        .collect::<Option<_>>()
        .ok_or_else(|| PdfError::Font("krilla cannot read a bundled font".into()))?;
    let mut document = Document::new();
    let total = laid.pages.len();
    for (index, laid_page) in laid.pages.iter().enumerate() {
        let settings = PageSettings::from_wh(PAGE_WIDTH, PAGE_HEIGHT)
            .ok_or_else(|| PdfError::Font("the page size".into()))?;
        let mut page = document.start_page_with(settings);
        let mut surface = page.surface();
        for run in &laid_page.runs {
            surface.draw_text(
                Point::from_xy(run.x, run.y),
                faces[run.face as usize].clone(),
                run.size,
                &run.text,
                false,
                TextDirection::Auto,
            );
        }
        let footer = format!("{} / {total}", index + 1);
        let size = 8.5;
        let width = fonts.width(Face::Regular, size, &footer);
        surface.draw_text(
            Point::from_xy((PAGE_WIDTH - width) / 2.0, PAGE_HEIGHT - 36.0),
            faces[Face::Regular as usize].clone(),
            size,
            &footer,
            false,
            TextDirection::Auto,
        );
        for &(from, to, y) in &laid_page.rules {
            let mut path = PathBuilder::new();
            path.move_to(from, y);
            path.line_to(to, y);
            if let Some(path) = path.finish() {
                surface.set_stroke(Some(Stroke::default()));
                surface.draw_path(&path);
                surface.set_stroke(None);
            }
        }
        surface.finish();
        for run in &laid_page.runs {
            let (Some(url), Some(rect)) = (
                &run.link,
                Rect::from_xywh(run.x, run.y - run.size * 0.8, run.width, run.size * 1.1),
            ) else {
                continue;
            };
            let target = Target::Action(LinkAction::new(url.clone()).into());
            page.add_annotation(LinkAnnotation::new(rect, target).into());
        }
        page.finish();
    }
    document.set_outline(outline(&laid.marks));
    document.set_metadata(
        Metadata::new()
            .title(title.to_string())
            .creator("deepr".to_string()),
    );
    document
        .finish()
        .map_err(|e| PdfError::Write(format!("{e:?}")))
}

/// The headings as nested bookmarks: each `##` under the title, each `###` under the
/// `##` before it.
fn outline(marks: &[Mark]) -> Outline {
    let mut outline = Outline::new();
    let mut open: Vec<(u8, OutlineNode)> = Vec::new();
    let close_to = |open: &mut Vec<(u8, OutlineNode)>, outline: &mut Outline, level: u8| {
        while open.last().is_some_and(|(l, _)| *l >= level) {
            if let Some((_, node)) = open.pop() {
                match open.last_mut() {
                    Some((_, parent)) => parent.push_child(node),
                    None => outline.push_child(node),
                }
            }
        }
    };
    for mark in marks {
        close_to(&mut open, &mut outline, mark.level);
        let destination =
            XyzDestination::new(mark.page, Point::from_xy(0.0, (mark.y - 20.0).max(0.0)));
        open.push((mark.level, OutlineNode::new(mark.text.clone(), destination)));
    }
    close_to(&mut open, &mut outline, 0);
    outline
}
