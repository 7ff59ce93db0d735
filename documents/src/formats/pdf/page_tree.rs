//! A page and its page tree: what a page inherits (`Resources`, `MediaBox`) set on the
//! page itself, read up a `Parent` chain that may loop.

use std::collections::BTreeSet;

use pdf_extract::{Document as Pdf, Object, ObjectId};

/// The entries a page inherits from the page tree (`Resources`, `MediaBox`) set on the
/// page itself, and its `Parent` dropped: pdf-extract looks them up by calling itself
/// up the `Parent` chain, which a chain that loops would run until the stack overflowed.
pub(super) fn settle_inherited(pdf: &mut Pdf, page: ObjectId) {
    let mut found: Vec<(&[u8], Object)> = Vec::new();
    for key in [&b"Resources"[..], b"MediaBox"] {
        if let Some(value) = inherited(pdf, page, key) {
            found.push((key, value));
        }
    }
    if let Ok(Object::Dictionary(dict)) = pdf.get_object_mut(page) {
        for (key, value) in found {
            dict.set(key, value);
        }
        dict.remove(b"Parent");
    }
}

/// Entry `key` of page `page` or of the nearest node above it that has it.
fn inherited(pdf: &Pdf, page: ObjectId, key: &[u8]) -> Option<Object> {
    let mut seen = BTreeSet::new();
    let mut node = pdf.get_dictionary(page).ok()?;
    loop {
        if let Ok(value) = node.get(key) {
            return Some(value.clone());
        }
        let parent = node.get(b"Parent").and_then(Object::as_reference).ok()?;
        if !seen.insert(parent) {
            return None;
        }
        node = pdf.get_dictionary(parent).ok()?;
    }
}
