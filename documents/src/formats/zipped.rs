//! Zip containers (DOCX, PPTX, XLSX, ODF, EPUB) read within limits: each part may
//! inflate to at most `Limits::max_part_bytes` and the whole container to
//! `Limits::max_unpacked_bytes`, measured while inflating (the sizes a zip declares
//! can lie), so a zip bomb ends as "too large", never as exhausted memory.

use std::io::{Cursor, Read};

use crate::{Format, Limits, ReadError};

/// The first bytes of an OLE compound file: what Office writes for a password-protected
/// DOCX/XLSX/PPTX (and for the legacy .doc/.xls/.ppt formats).
const OLE_SIGNATURE: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];

/// An open zip container and how much of it has been inflated so far.
pub(crate) struct Container<'a> {
    archive: zip::ZipArchive<Cursor<&'a [u8]>>,
    format: Format,
    limits: Limits,
    unpacked: u64,
}

impl<'a> Container<'a> {
    pub(crate) fn open(
        bytes: &'a [u8],
        format: Format,
        limits: &Limits,
    ) -> Result<Self, ReadError> {
        if bytes.starts_with(&OLE_SIGNATURE) {
            return Err(ReadError::Encrypted);
        }
        let archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| {
            ReadError::malformed(format, format!("not a readable zip container ({e})"))
        })?;
        Ok(Self {
            archive,
            format,
            limits: *limits,
            unpacked: 0,
        })
    }

    /// Names of every part, in the container's order.
    pub(crate) fn names(&self) -> Vec<String> {
        self.archive
            .file_names()
            .filter_map(|name| name.ok().map(|n| n.into_owned()))
            .collect()
    }

    /// The bytes of part `name`, or `None` if the container has no such part.
    pub(crate) fn read(&mut self, name: &str) -> Result<Option<Vec<u8>>, ReadError> {
        let format = self.format;
        let mut entry = match self.archive.by_name(name) {
            Ok(entry) => entry,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(zip::result::ZipError::UnsupportedArchive(why)) if why.contains("assword") => {
                return Err(ReadError::Encrypted)
            }
            Err(e) => return Err(ReadError::malformed(format, format!("part {name}: {e}"))),
        };
        if entry.encrypted() {
            return Err(ReadError::Encrypted);
        }
        let part_cap = self.limits.max_part_bytes;
        let total_left = self.limits.max_unpacked_bytes.saturating_sub(self.unpacked);
        let cap = part_cap.min(total_left);
        let mut out = Vec::new();
        (&mut entry)
            .take(cap.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(|e| {
                ReadError::malformed(format, format!("part {name} cannot be inflated ({e})"))
            })?;
        if out.len() as u64 > cap {
            return Err(ReadError::TooLarge(format!(
                "part {name} inflates past {} bytes (a zip bomb?)",
                cap
            )));
        }
        self.unpacked += out.len() as u64;
        Ok(Some(out))
    }

    /// Part `name` as UTF-8 text (a BOM is dropped).
    pub(crate) fn read_text(&mut self, name: &str) -> Result<Option<String>, ReadError> {
        let Some(bytes) = self.read(name)? else {
            return Ok(None);
        };
        let text = String::from_utf8(bytes).map_err(|e| {
            ReadError::malformed(self.format, format!("part {name} is not UTF-8 ({e})"))
        })?;
        Ok(Some(
            text.strip_prefix('\u{FEFF}')
                .map(str::to_string)
                .unwrap_or(text),
        ))
    }

    /// Inflate every part once within the limits (before handing the bytes to a
    /// parser that would inflate them without any).
    pub(crate) fn check_all(&mut self) -> Result<(), ReadError> {
        for name in self.names() {
            if !name.ends_with('/') {
                self.read(&name)?;
            }
        }
        Ok(())
    }
}

/// Parse XML within the nesting limit (roxmltree refuses entity expansion and DTDs,
/// so no billion-laughs either).
pub(crate) fn parse_xml<'t>(
    text: &'t str,
    format: Format,
    part: &str,
    limits: &Limits,
) -> Result<roxmltree::Document<'t>, ReadError> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: false,
        nodes_limit: u32::try_from(limits.max_blocks.saturating_mul(64)).unwrap_or(u32::MAX),
        ..roxmltree::ParsingOptions::default()
    };
    let doc = roxmltree::Document::parse_with_options(text, options).map_err(|e| match e {
        roxmltree::Error::NodesLimitReached => {
            ReadError::TooComplex(format!("part {part} has too many XML nodes"))
        }
        other => ReadError::malformed(format, format!("part {part}: {other}")),
    })?;
    if nesting_depth(doc.root()) > limits.max_nesting {
        return Err(ReadError::TooComplex(format!(
            "part {part} nests elements deeper than {}",
            limits.max_nesting
        )));
    }
    Ok(doc)
}

/// The deepest element nesting under `root`, counted without recursion.
fn nesting_depth(root: roxmltree::Node<'_, '_>) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(root, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        for child in node.children().filter(|c| c.is_element()) {
            stack.push((child, depth + 1));
        }
    }
    deepest
}
