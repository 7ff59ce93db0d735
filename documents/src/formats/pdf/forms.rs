//! The forms a page draws, checked before pdf-extract draws them. pdf-extract draws a
//! form (`/Fm1 Do`) by calling itself on the form's content, with no limit, so a form
//! that draws itself, or a chain of forms nested deeper than the thread's stack holds,
//! overflows the stack — and a stack overflow aborts the whole process, which no
//! reader can contain. A page on which that could happen is not read.
//!
//! The check is cautious: a form whose content holds a `Do` may draw any form of the
//! resources it draws with (its own `Resources`, else those it was drawn with).

use std::collections::HashMap;

use pdf_extract::{Dictionary, Document as Pdf, Object, ObjectId, Stream};

/// Deepest chain of forms drawing forms a page may hold.
pub(super) const MAX_FORM_DEPTH: usize = 16;

/// A form as drawn with some resources: the form and where its resources sit in memory
/// (the same dictionary object, or the inline dictionary of one owner).
type Node = (ObjectId, usize);

/// Why page `page`'s forms cannot be drawn, if they cannot.
pub(super) fn unsafe_forms(pdf: &Pdf, page: ObjectId) -> Option<String> {
    let page_dict = pdf.get_dictionary(page).ok()?;
    let draws = pdf
        .get_page_contents(page)
        .iter()
        .any(|id| stream(pdf, &Object::Reference(*id)).is_some_and(|(_, s)| draws_forms(s)));
    if !draws {
        return None;
    }
    let resources = resolve(pdf, page_dict.get(b"Resources").ok()?)
        .as_dict()
        .ok()?;
    let mut check = Check {
        pdf,
        path: Vec::new(),
        heights: HashMap::new(),
    };
    match check.below(resources) {
        Ok(_) => None,
        Err(Problem::Loop) => Some("a form on it draws itself".to_string()),
        Err(Problem::Deep) => Some(format!(
            "its forms draw forms more than {MAX_FORM_DEPTH} deep"
        )),
    }
}

#[derive(Debug)]
enum Problem {
    Loop,
    Deep,
}

struct Check<'a> {
    pdf: &'a Pdf,
    /// The forms being drawn, outermost first.
    path: Vec<Node>,
    /// How deep the forms below a form drawn with some resources go.
    heights: HashMap<Node, usize>,
}

impl<'a> Check<'a> {
    /// How deep the forms drawn with `resources` go (0: none).
    fn below(&mut self, resources: &'a Dictionary) -> Result<usize, Problem> {
        let Some(xobjects) = resources
            .get(b"XObject")
            .ok()
            .and_then(|x| resolve(self.pdf, x).as_dict().ok())
        else {
            return Ok(0);
        };
        let mut deepest = 0;
        for (_, entry) in xobjects.iter() {
            let Some((id, form)) = stream(self.pdf, entry) else {
                continue;
            };
            if !matches!(
                form.dict.get(b"Subtype").and_then(Object::as_name),
                Ok(b"Form")
            ) {
                continue;
            }
            deepest = deepest.max(self.form(id, form, resources)?);
        }
        Ok(deepest)
    }

    /// How deep form `id`, drawn with `inherited` resources, goes (1: it draws none).
    fn form(
        &mut self,
        id: ObjectId,
        form: &'a Stream,
        inherited: &'a Dictionary,
    ) -> Result<usize, Problem> {
        let own = form
            .dict
            .get(b"Resources")
            .ok()
            .and_then(|r| resolve(self.pdf, r).as_dict().ok());
        let resources = own.unwrap_or(inherited);
        let node = (id, std::ptr::from_ref(resources).addr());
        if self.path.contains(&node) {
            return Err(Problem::Loop);
        }
        if self.path.len() >= MAX_FORM_DEPTH {
            return Err(Problem::Deep);
        }
        let height = match self.heights.get(&node) {
            Some(height) => *height,
            None if draws_forms(form) => {
                self.path.push(node);
                let below = self.below(resources);
                self.path.pop();
                below? + 1
            }
            None => 1,
        };
        if self.path.len() + height > MAX_FORM_DEPTH {
            return Err(Problem::Deep);
        }
        self.heights.insert(node, height);
        Ok(height)
    }
}

/// Whether a content stream may draw a form: it holds `Do` as a word.
fn draws_forms(stream: &Stream) -> bool {
    let content = &stream.content;
    content.windows(2).enumerate().any(|(at, w)| {
        w == b"Do"
            && (at == 0 || !is_regular(content[at - 1]))
            && content.get(at + 2).is_none_or(|b| !is_regular(*b))
    })
}

/// A byte that continues a PDF token (not white space or a delimiter).
fn is_regular(byte: u8) -> bool {
    !byte.is_ascii_whitespace() && !b"/[]<>(){}%".contains(&byte)
}

/// `object` through any references.
fn resolve<'a>(pdf: &'a Pdf, object: &'a Object) -> &'a Object {
    pdf.dereference(object).map_or(object, |(_, o)| o)
}

/// The stream `object` refers to, with its id.
fn stream<'a>(pdf: &'a Pdf, object: &'a Object) -> Option<(ObjectId, &'a Stream)> {
    let id = object.as_reference().ok()?;
    match pdf.get_object(id).ok()? {
        Object::Stream(stream) => Some((id, stream)),
        _ => None,
    }
}
