//! A loaded PDF's streams decoded within the limits, page by page, before pdf-extract
//! reads the page (it decodes whatever still names a filter, with no cap; after this,
//! nothing it reads does).
//!
//! * Object streams first (`raw` kept lopdf from inflating them): each inflated up to
//!   `max_part_bytes` and its objects added, as lopdf would add them.
//! * Then, for each page in turn, every stream its content and resources reach: its
//!   content streams and the forms it draws up to `max_page_content_bytes` each (the
//!   page's content streams together too: past it, the page reads a joined stream cut
//!   there); fonts, CMaps and the rest up to `max_part_bytes`; images not at all
//!   (emptied: no text is in them, and pdf-extract would parse one as content).
//! * Everything inflated counts against `max_unpacked_bytes`: a stream it cuts is the
//!   last one decoded, and the pages after that page are not read.
//!
//! A page's content streams are emptied once no later page draws them, so memory holds
//! one page's content at a time, not the document's.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use pdf_extract::xref::XrefEntry;
use pdf_extract::{Dictionary, Document as Pdf, Object, ObjectId, ObjectStream, Stream};

use super::decode::{chain, decode, Chain};
use super::page_tree::settle_inherited;
use super::raw::RENAMED_OBJECT_STREAM;
use crate::{grouped, human_bytes, Limits, ReadError};

/// What a stream is to the reader, which sets its cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A page's content stream or a form: parsed as content, up to the page limit.
    Content,
    /// A font, a CMap, an ICC profile, a function: up to the part limit.
    Part,
    /// An image: no text, never decoded.
    Image,
}

/// How a stream's decoding ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cut {
    None,
    /// At its own cap (the page or part limit).
    Own,
    /// At what the document's limit left.
    Document,
}

/// The streams decoded so far, and what the limits cut.
#[derive(Debug)]
pub(super) struct Streams {
    limits: Limits,
    /// Bytes inflated so far, against `max_unpacked_bytes`.
    inflated: u64,
    /// The document's limit was reached: no page after the current one is read.
    spent: bool,
    /// Objects already walked (their streams decoded).
    walked: BTreeSet<ObjectId>,
    /// Each page content stream's last page, to empty it after that page.
    last_use: HashMap<ObjectId, u32>,
    /// Pages whose content (or a form they draw) was cut at the page limit.
    cut_content: Vec<u32>,
    /// Pages with a font or other stream cut at the part limit.
    cut_parts: Vec<u32>,
    /// What else was cut (object streams).
    notes: Vec<String>,
}

/// Whether a page is read.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Page {
    Read,
    /// The document's limit was spent before it: neither it nor any later page is read.
    Stop,
}

impl Streams {
    /// Object streams expanded (`prepared`: the bytes lopdf loaded). Refused when the
    /// object streams alone spend the document's limit.
    pub(super) fn load(pdf: &mut Pdf, prepared: &[u8], limits: &Limits) -> Result<Self, ReadError> {
        let mut streams = Self {
            limits: *limits,
            inflated: 0,
            spent: false,
            walked: BTreeSet::new(),
            last_use: HashMap::new(),
            cut_content: Vec::new(),
            cut_parts: Vec::new(),
            notes: Vec::new(),
        };
        streams.expand_object_streams(pdf);
        if streams.spent {
            return Err(ReadError::TooLarge(format!(
                "its object streams inflate past {}, the most one PDF may",
                human_bytes(limits.max_unpacked_bytes)
            )));
        }
        reread_lengths(pdf, prepared);
        Ok(streams)
    }

    /// Every page's inherited entries set on the page, and the last page that draws
    /// each content stream noted.
    pub(super) fn settle(&mut self, pdf: &mut Pdf, pages: &BTreeMap<u32, ObjectId>) {
        for (&number, &page) in pages {
            settle_inherited(pdf, page);
            for id in pdf.get_page_contents(page) {
                self.last_use.insert(id, number);
            }
        }
    }

    /// Whether the document's limit was spent.
    pub(super) fn spent(&self) -> bool {
        self.spent
    }

    /// The cap for a stream of `own` bytes at most, within what the document's limit
    /// leaves.
    fn cap(&self, own: u64) -> (usize, bool) {
        let left = self.limits.max_unpacked_bytes.saturating_sub(self.inflated);
        let cap = own.min(left);
        (usize::try_from(cap).unwrap_or(usize::MAX), left < own)
    }

    /// Stream `id` decoded within `own` bytes (and the document's limit), counted.
    fn decode_counted(&mut self, pdf: &mut Pdf, id: ObjectId, own: u64) -> Cut {
        let (cap, document_caps) = self.cap(own);
        let Some(Object::Stream(stream)) = pdf.objects.get_mut(&id) else {
            return Cut::None;
        };
        let (inflated, cut) = decode_stream(stream, cap);
        self.inflated = self.inflated.saturating_add(inflated);
        match (cut, document_caps) {
            (false, _) => Cut::None,
            (true, false) => Cut::Own,
            (true, true) => {
                self.spent = true;
                Cut::Document
            }
        }
    }

    /// Every object stream (renamed by `raw`) inflated within the part limit and its
    /// objects added as lopdf adds them: those the cross-reference table places in it,
    /// and those it does not place anywhere (never over an object read already).
    fn expand_object_streams(&mut self, pdf: &mut Pdf) {
        let ids: Vec<ObjectId> = pdf
            .objects
            .iter()
            .filter(|(_, object)| is_renamed_object_stream(object))
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            if let Some(Object::Stream(stream)) = pdf.objects.get_mut(&id) {
                stream.dict.set("Type", Object::Name(b"ObjStm".to_vec()));
            }
            if self.decode_counted(pdf, id, self.limits.max_part_bytes) != Cut::None {
                self.notes.push(format!(
                    "object stream {} inflates past {}: the objects past there were not read",
                    id.0,
                    human_bytes(
                        self.limits
                            .max_part_bytes
                            .min(self.limits.max_unpacked_bytes)
                    )
                ));
            }
            let Some(Object::Stream(stream)) = pdf.objects.get_mut(&id) else {
                continue;
            };
            let objects = ObjectStream::new(stream)
                .map(|o| o.objects)
                .unwrap_or_default();
            stream.set_plain_content(Vec::new());
            add_objects(pdf, id.0, objects);
            if self.spent {
                return;
            }
        }
    }

    /// Page `number` (object `page`) made ready for pdf-extract: every stream it
    /// reaches decoded within the limits, its content within the page limit.
    pub(super) fn open_page(&mut self, pdf: &mut Pdf, number: u32, page: ObjectId) -> Page {
        if self.spent || self.inflated >= self.limits.max_unpacked_bytes {
            self.spent = true;
            return Page::Stop;
        }
        let contents = pdf.get_page_contents(page);
        let mut found: Vec<(ObjectId, Kind)> = contents
            .iter()
            .filter(|id| self.walked.insert(**id))
            .map(|id| (*id, Kind::Content))
            .collect();
        let resources = pdf
            .get_dictionary(page)
            .ok()
            .and_then(|dict| dict.get(b"Resources").ok())
            .cloned();
        if let Some(resources) = resources {
            found.extend(reachable(pdf, &resources, &mut self.walked));
        }
        for (id, kind) in found {
            self.decode_found(pdf, number, id, kind);
        }
        self.fit_content(pdf, number, page, &contents);
        Page::Read
    }

    /// One stream a page reaches, decoded (or emptied, for an image) and recorded.
    fn decode_found(&mut self, pdf: &mut Pdf, number: u32, id: ObjectId, kind: Kind) {
        let own = match kind {
            Kind::Image => {
                if let Some(Object::Stream(stream)) = pdf.objects.get_mut(&id) {
                    stream.set_plain_content(Vec::new());
                }
                return;
            }
            Kind::Content => self.limits.max_page_content_bytes,
            Kind::Part => self.limits.max_part_bytes,
        };
        let cut = self.decode_counted(pdf, id, own);
        if let (Some(Object::Stream(stream)), Kind::Content) = (pdf.objects.get_mut(&id), kind) {
            // Content that was never compressed is held to the page limit too.
            let cap = usize::try_from(own).unwrap_or(usize::MAX);
            if stream.content.len() > cap {
                stream.content.truncate(cap);
                self.cut_content.push(number);
            }
        }
        match (cut, kind) {
            (Cut::Own, Kind::Content) => self.cut_content.push(number),
            (Cut::Own, _) => self.cut_parts.push(number),
            _ => {}
        }
    }

    /// A page whose content streams together pass the page limit reads one stream of
    /// them joined (as pdf-extract joins them, a newline after each) and cut there.
    fn fit_content(&mut self, pdf: &mut Pdf, number: u32, page: ObjectId, contents: &[ObjectId]) {
        let cap = usize::try_from(self.limits.max_page_content_bytes).unwrap_or(usize::MAX);
        let length = |id: &ObjectId| match pdf.objects.get(id) {
            Some(Object::Stream(stream)) => stream.content.len() + 1,
            _ => 0,
        };
        if contents.iter().map(length).sum::<usize>() <= cap {
            return;
        }
        let mut joined = Vec::with_capacity(cap);
        for id in contents {
            if let Some(Object::Stream(stream)) = pdf.objects.get(id) {
                let room = cap - joined.len();
                joined.extend_from_slice(&stream.content[..stream.content.len().min(room)]);
                if joined.len() < cap {
                    joined.push(b'\n');
                }
            }
        }
        let id = pdf.add_object(Object::Stream(Stream::new(Dictionary::new(), joined)));
        if let Ok(Object::Dictionary(dict)) = pdf.get_object_mut(page) {
            dict.set("Contents", Object::Reference(id));
        }
        self.last_use.insert(id, number);
        self.cut_content.push(number);
    }

    /// After page `number`: its content streams that no later page draws emptied.
    pub(super) fn close_page(&mut self, pdf: &mut Pdf, number: u32) {
        let done: Vec<ObjectId> = self
            .last_use
            .iter()
            .filter(|(_, last)| **last == number)
            .map(|(id, _)| *id)
            .collect();
        for id in done {
            self.last_use.remove(&id);
            if let Some(Object::Stream(stream)) = pdf.objects.get_mut(&id) {
                stream.set_plain_content(Vec::new());
            }
        }
    }

    /// What the limits cut, for the document's gaps: `read` pages of `pages`.
    pub(super) fn gaps(&self, read: u32, pages: usize) -> Vec<String> {
        let mut gaps = self.notes.clone();
        if !self.cut_content.is_empty() {
            gaps.push(format!(
                "{}: content read up to {} a page (the most one page may hand the PDF parser)",
                page_list(&self.cut_content),
                human_bytes(self.limits.max_page_content_bytes)
            ));
        }
        if !self.cut_parts.is_empty() {
            gaps.push(format!(
                "{}: a font or other stream cut at {}",
                page_list(&self.cut_parts),
                human_bytes(self.limits.max_part_bytes)
            ));
        }
        if self.spent && (read as usize) < pages {
            gaps.push(format!(
                "pages 1–{} of {}: the rest would inflate past {}, the most one PDF may",
                read,
                grouped(pages as u64),
                human_bytes(self.limits.max_unpacked_bytes)
            ));
        } else if self.spent {
            gaps.push(format!(
                "page {read}: its streams inflate past {}, the most one PDF may; read up to there",
                human_bytes(self.limits.max_unpacked_bytes)
            ));
        }
        gaps
    }
}

/// `page 3`, `pages 3, 5, 9`, or the first ten and how many more.
fn page_list(pages: &[u32]) -> String {
    let mut pages = pages.to_vec();
    pages.sort_unstable();
    pages.dedup();
    let shown: Vec<String> = pages.iter().take(10).map(u32::to_string).collect();
    let more = pages.len().saturating_sub(10);
    let list = shown.join(", ");
    match (pages.len(), more) {
        (1, _) => format!("page {list}"),
        (_, 0) => format!("pages {list}"),
        _ => format!("pages {list} and {more} more"),
    }
}

/// Whether `object` is a stream `raw` renamed from `/Type /ObjStm`.
fn is_renamed_object_stream(object: &Object) -> bool {
    matches!(object, Object::Stream(s) if s.dict.has_type(RENAMED_OBJECT_STREAM))
}

/// The objects of object stream `container` added as lopdf adds them: over what an
/// encrypted file's load made of the renamed stream where the cross-reference table
/// places the object here, else only where nothing is.
fn add_objects(pdf: &mut Pdf, container: u32, objects: BTreeMap<ObjectId, Object>) {
    for (id, object) in objects {
        match pdf.reference_table.get(id.0) {
            Some(XrefEntry::Compressed { container: c, .. }) if *c == container => {
                pdf.objects.insert(id, object);
            }
            None => {
                pdf.objects.entry(id).or_insert(object);
            }
            Some(_) => {}
        }
    }
}

/// `stream` decoded within `cap` bytes in place (its filters gone), or — where lopdf
/// would fail to decode it — its raw bytes without its filters, as pdf-extract then
/// reads it. The bytes inflated, and whether the cap cut them.
fn decode_stream(stream: &mut Stream, cap: usize) -> (u64, bool) {
    let filters = match chain(&stream.dict) {
        Chain::Plain => return (0, false),
        Chain::Unknown => {
            let raw = std::mem::take(&mut stream.content);
            stream.set_plain_content(raw);
            return (0, false);
        }
        Chain::Known(filters) => filters,
    };
    let params = stream
        .dict
        .get(b"DecodeParms")
        .and_then(Object::as_dict)
        .ok();
    match decode(&stream.content, &filters, params, cap) {
        Some(decoded) => {
            let inflated = decoded.bytes.len() as u64;
            stream.set_plain_content(decoded.bytes);
            (inflated, decoded.cut)
        }
        None => {
            let raw = std::mem::take(&mut stream.content);
            stream.set_plain_content(raw);
            (0, false)
        }
    }
}

/// Streams whose `/Length` is an object in an object stream: lopdf could not resolve it
/// while loading (the object streams were not expanded yet) and left them empty; their
/// bytes are taken now, as lopdf takes them. Not in an encrypted file, whose streams
/// lopdf places differently.
fn reread_lengths(pdf: &mut Pdf, prepared: &[u8]) {
    if pdf.encryption_state.is_some() {
        return;
    }
    let start = prepared.windows(5).position(|w| w == b"%PDF-").unwrap_or(0);
    let buffer = &prepared[start..];
    let mut found: Vec<(ObjectId, usize, usize)> = Vec::new();
    for (id, object) in &pdf.objects {
        let Object::Stream(stream) = object else {
            continue;
        };
        let (true, Some(at)) = (stream.content.is_empty(), stream.start_position) else {
            continue;
        };
        let length = stream
            .dict
            .get(b"Length")
            .and_then(|length| pdf.dereference(length))
            .and_then(|(_, length)| length.as_i64());
        if let Some(length) = length.ok().and_then(|l| usize::try_from(l).ok()) {
            found.push((*id, at, length));
        }
    }
    for (id, at, length) in found {
        let bytes = at.checked_add(length).and_then(|end| buffer.get(at..end));
        if let (Some(bytes), Some(Object::Stream(stream))) = (bytes, pdf.objects.get_mut(&id)) {
            stream.set_content(bytes.to_vec());
        }
    }
}

/// The streams reachable from `root` not walked before, each with its kind: through
/// dictionaries, arrays and references, never up the page tree (a `Parent`, or a page,
/// page-tree node or catalog reached some other way).
fn reachable(pdf: &Pdf, root: &Object, walked: &mut BTreeSet<ObjectId>) -> Vec<(ObjectId, Kind)> {
    let mut found = Vec::new();
    let mut stack: Vec<&Object> = vec![root];
    while let Some(object) = stack.pop() {
        match object {
            Object::Reference(id) => {
                if !walked.insert(*id) {
                    continue;
                }
                match pdf.objects.get(id) {
                    Some(Object::Stream(stream)) => {
                        found.push((*id, kind_of(&stream.dict)));
                        stack.extend(children(&stream.dict));
                    }
                    Some(other) => stack.push(other),
                    None => {}
                }
            }
            Object::Dictionary(dict) => stack.extend(children(dict)),
            Object::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    found
}

/// A dictionary's values to walk: none for a page, page-tree node or catalog, and never
/// its `Parent`.
fn children(dict: &Dictionary) -> impl Iterator<Item = &Object> {
    let tree = [&b"Page"[..], b"Pages", b"Catalog"]
        .iter()
        .any(|t| dict.has_type(t));
    dict.iter()
        .filter(move |(key, _)| !tree && key.as_slice() != b"Parent")
        .map(|(_, value)| value)
}

/// What a stream is, by its dictionary.
fn kind_of(dict: &Dictionary) -> Kind {
    match dict.get(b"Subtype").and_then(Object::as_name) {
        Ok(b"Image") => Kind::Image,
        Ok(b"Form") => Kind::Content,
        _ => Kind::Part,
    }
}
