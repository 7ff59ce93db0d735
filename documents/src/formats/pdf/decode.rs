//! A PDF stream's filters decoded within a cap: the filters lopdf itself decodes
//! (`FlateDecode` with its raw-deflate fallback, `LZWDecode`, `ASCII85Decode`, and the
//! PNG predictors their `DecodeParms` name), each step stopping at `cap` bytes, so a
//! stream that would inflate to gigabytes ends as its first `cap` bytes and a mark that
//! it was cut. Where lopdf's own decoding would fail, so does this (`None`): the reader
//! then hands on the stream's raw bytes, as pdf-extract does when lopdf fails.

use std::io::Read;

use pdf_extract::{Dictionary, Object};

/// A filter the reader decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Filter {
    Flate,
    Lzw,
    Ascii85,
}

/// What a stream's `Filter` entry asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Chain {
    /// No filter (or one lopdf does not read as a filter: an indirect or malformed
    /// entry): the bytes are the content.
    Plain,
    /// Filters the reader decodes, in decoding order.
    Known(Vec<Filter>),
    /// A filter neither lopdf nor the reader decodes (`DCTDecode`, `ASCIIHexDecode` …):
    /// lopdf fails, and pdf-extract takes the raw bytes.
    Unknown,
}

/// The filter a name stands for: its PDF name, or the name `raw` gave it so that lopdf
/// would not inflate it while loading.
pub(super) fn filter_named(name: &[u8]) -> Option<Filter> {
    match name {
        b"FlateDecode" | b"FlateDecod_" => Some(Filter::Flate),
        b"LZWDecode" | b"LZWDecod_" => Some(Filter::Lzw),
        b"ASCII85Decode" | b"ASCII85Decod_" => Some(Filter::Ascii85),
        _ => None,
    }
}

/// The chain of filter names, as lopdf reads a stream's `Filter` entry.
pub(super) fn chain_of_names<'a>(names: impl IntoIterator<Item = &'a [u8]>) -> Chain {
    let mut filters = Vec::new();
    for name in names {
        match filter_named(name) {
            Some(filter) => filters.push(filter),
            None => return Chain::Unknown,
        }
    }
    Chain::Known(filters)
}

/// The chain a stream dictionary's `Filter` entry asks for.
pub(super) fn chain(dict: &Dictionary) -> Chain {
    match dict.get(b"Filter") {
        Ok(Object::Name(name)) => chain_of_names([name.as_slice()]),
        Ok(Object::Array(items)) => {
            let names: Option<Vec<&[u8]>> = items.iter().map(|item| item.as_name().ok()).collect();
            names.map_or(Chain::Plain, chain_of_names)
        }
        _ => Chain::Plain,
    }
}

/// What decoding gave: the bytes, and whether a cap cut them.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Decoded {
    pub(super) bytes: Vec<u8>,
    pub(super) cut: bool,
}

/// The PNG predictor parameters that matter for decoding (`Predictor` 10 to 15).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Predictor {
    pub(super) colors: i64,
    pub(super) bits: i64,
    pub(super) columns: i64,
}

impl Predictor {
    /// The predictor a `DecodeParms` dictionary names, as lopdf reads it.
    pub(super) fn of(params: Option<&Dictionary>) -> Option<Self> {
        let params = params?;
        let int =
            |key: &[u8], default: i64| params.get(key).and_then(Object::as_i64).unwrap_or(default);
        (10..=15).contains(&int(b"Predictor", 1)).then(|| Self {
            colors: int(b"Colors", 1),
            bits: int(b"BitsPerComponent", 8),
            columns: int(b"Columns", 1),
        })
    }

    /// Bytes per pixel and per row (without the row's filter byte), as lopdf computes
    /// them; `None` where they overflow.
    pub(super) fn row(self) -> Option<(usize, usize)> {
        let colors = usize::try_from(self.colors.max(1)).ok()?;
        let bits = usize::try_from(self.bits.max(8)).ok()?;
        let columns = usize::try_from(self.columns.max(1)).ok()?;
        let per_pixel = colors.checked_mul(bits)? / 8;
        Some((per_pixel, per_pixel.checked_mul(columns)?))
    }
}

/// `content` through `filters`, each step's output capped at `cap` bytes; `params`
/// is the stream's `DecodeParms` (a dictionary; lopdf ignores an array).
pub(super) fn decode(
    content: &[u8],
    filters: &[Filter],
    params: Option<&Dictionary>,
    cap: usize,
) -> Option<Decoded> {
    let mut data = std::borrow::Cow::Borrowed(content);
    let mut cut = false;
    for filter in filters {
        let (out, over) = match filter {
            Filter::Flate => inflate(&data, cap),
            Filter::Lzw => unlzw(&data, early_change(params), cap),
            Filter::Ascii85 => capped(ascii85(&data)?, cap),
        };
        cut |= over;
        data = std::borrow::Cow::Owned(match filter {
            Filter::Ascii85 => out,
            Filter::Flate | Filter::Lzw => predict(out, Predictor::of(params), over)?,
        });
    }
    let (bytes, over) = capped(data.into_owned(), cap);
    Some(Decoded {
        bytes,
        cut: cut || over,
    })
}

/// `bytes` cut to `cap`, and whether it was longer.
fn capped(mut bytes: Vec<u8>, cap: usize) -> (Vec<u8>, bool) {
    let over = bytes.len() > cap;
    if over {
        bytes.truncate(cap);
        bytes.shrink_to_fit();
    }
    (bytes, over)
}

/// A zlib stream inflated up to `cap` bytes (one more tells it goes on); on a zlib error
/// with nothing inflated, the data after the two header bytes as raw deflate (lopdf's
/// fallback for streams with a broken header or checksum). What inflated before an
/// error is kept, as lopdf keeps it.
fn inflate(input: &[u8], cap: usize) -> (Vec<u8>, bool) {
    if input.is_empty() {
        return (Vec::new(), false);
    }
    let (out, over, failed) = read_capped(flate2::read::ZlibDecoder::new(input), cap);
    if failed && out.is_empty() {
        if let Some(raw) = input.get(2..).filter(|raw| !raw.is_empty()) {
            let (out, over, _) = read_capped(flate2::read::DeflateDecoder::new(raw), cap);
            return (out, over);
        }
    }
    (out, over)
}

/// What `reader` gives up to `cap` bytes, never holding room for more than `cap + 1`
/// (a vector left to grow by doubling would reserve twice the cap); whether it had more,
/// and whether it failed.
fn read_capped(mut reader: impl Read, cap: usize) -> (Vec<u8>, bool, bool) {
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => return (out, false, false),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return (out, false, true),
        };
        let room = cap - out.len();
        if n > room {
            out.extend_from_slice(&chunk[..room]);
            return (out, true, false);
        }
        if out.capacity() - out.len() < n {
            let want = out.len().saturating_mul(2).max(out.len() + n).min(cap);
            out.reserve_exact(want - out.len());
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

/// Whether an LZW stream switches code size one code early (`EarlyChange`, default 1).
fn early_change(params: Option<&Dictionary>) -> bool {
    params
        .and_then(|p| p.get(b"EarlyChange").ok())
        .and_then(|v| v.as_i64().ok())
        .is_none_or(|v| v != 0)
}

/// LZW-decoded bytes up to `cap` (one more tells it goes on), with the decoder lopdf
/// uses; what decoded before an error or the data's end is kept.
fn unlzw(input: &[u8], early_change: bool, cap: usize) -> (Vec<u8>, bool) {
    use weezl::{decode::Decoder, BitOrder, LzwStatus};
    let mut decoder = if early_change {
        Decoder::with_tiff_size_switch(BitOrder::Msb, 8)
    } else {
        Decoder::new(BitOrder::Msb, 8)
    };
    let mut out = Vec::new();
    let mut buffer = vec![0u8; 1 << 16];
    let mut rest = input;
    loop {
        let step = decoder.decode_bytes(rest, &mut buffer);
        rest = rest.get(step.consumed_in..).unwrap_or(&[]);
        out.extend_from_slice(buffer.get(..step.consumed_out).unwrap_or(&[]));
        if out.len() > cap {
            return capped(out, cap);
        }
        let moved = step.consumed_in + step.consumed_out > 0;
        if !matches!(step.status, Ok(LzwStatus::Ok)) || !moved {
            return (out, false);
        }
    }
}

/// ASCII85 through lopdf itself: it never grows the data more than fourfold.
fn ascii85(input: &[u8]) -> Option<Vec<u8>> {
    let mut dict = Dictionary::new();
    dict.set("Filter", Object::Name(b"ASCII85Decode".to_vec()));
    pdf_extract::Stream::new(dict, input.to_vec())
        .decompressed_content()
        .ok()
}

/// The PNG predictor undone, as lopdf does after inflating. A row longer than the data
/// fails, as it does in lopdf — which first allocates the row, however long the
/// parameters make it (a memory bomb of its own, never reached here). Data that a cap
/// cut keeps its whole rows only.
fn predict(mut data: Vec<u8>, predictor: Option<Predictor>, cut: bool) -> Option<Vec<u8>> {
    let Some(predictor) = predictor else {
        return Some(data);
    };
    if data.is_empty() {
        return Some(data);
    }
    let (per_pixel, row) = predictor.row()?;
    let stride = row.checked_add(1)?;
    if cut {
        data.truncate(data.len() / stride * stride);
    }
    if stride > data.len() {
        return None;
    }
    let columns = row / per_pixel.max(1);
    pdf_extract::filters::png::decode_frame(&data, per_pixel, columns).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut encoder =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(data).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn flate_inflates_up_to_the_cap_and_says_it_cut() {
        let data = b"BT (The yard has 24 bays.) Tj ET\n".repeat(1000);
        let whole = decode(&zlib(&data), &[Filter::Flate], None, 1 << 20).unwrap();
        assert_eq!(
            (whole.bytes.as_slice(), whole.cut),
            (data.as_slice(), false)
        );
        let exact = decode(&zlib(&data), &[Filter::Flate], None, data.len()).unwrap();
        assert!(!exact.cut);
        let cut = decode(&zlib(&data), &[Filter::Flate], None, 100).unwrap();
        assert_eq!((cut.bytes.as_slice(), cut.cut), (&data[..100], true));
        // Two layers of flate: each is capped (the inner layer's bytes fit the cap).
        let inner = zlib(&data);
        assert!(inner.len() < 1000);
        let twice = decode(&zlib(&inner), &[Filter::Flate, Filter::Flate], None, 1000).unwrap();
        assert_eq!((twice.bytes.as_slice(), twice.cut), (&data[..1000], true));
    }

    #[test]
    fn lopdfs_fallbacks_and_failures_are_kept() {
        let data = b"q 1 0 0 1 0 0 cm Q\n".repeat(50);
        // A broken zlib header: raw deflate after the two header bytes.
        let mut broken = zlib(&data);
        broken[0] = 0;
        let read = decode(&broken, &[Filter::Flate], None, 1 << 20).unwrap();
        assert_eq!(read.bytes, data);
        // A filter lopdf does not decode, among known ones, is none of the reader's.
        assert_eq!(
            chain_of_names([&b"FlateDecode"[..], b"DCTDecode"]),
            Chain::Unknown
        );
        assert_eq!(
            chain_of_names([&b"FlateDecod_"[..], b"ASCII85Decode"]),
            Chain::Known(vec![Filter::Flate, Filter::Ascii85])
        );
        let a85 = decode(b"87cURD]i,\"Ebo80~>", &[Filter::Ascii85], None, 100).unwrap();
        assert_eq!(a85.bytes, b"Hello World!");
    }

    #[test]
    fn lzw_decodes_up_to_the_cap() {
        let data = b"(Harbor Street) Tj\n".repeat(2000);
        let mut encoder = weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
        let packed = encoder.encode(&data).unwrap();
        let whole = decode(&packed, &[Filter::Lzw], None, 1 << 20).unwrap();
        assert_eq!((whole.bytes.len(), whole.cut), (data.len(), false));
        assert_eq!(whole.bytes, data);
        let cut = decode(&packed, &[Filter::Lzw], None, 1000).unwrap();
        assert_eq!((cut.bytes.as_slice(), cut.cut), (&data[..1000], true));
    }

    #[test]
    fn predictors_are_undone_and_never_allocate_past_the_data() {
        // Rows of 4 bytes, each with filter byte 2 (Up): every row adds to the last.
        let rows: Vec<u8> = [[2u8, 1, 1, 1, 1]; 3].concat();
        let mut params = Dictionary::new();
        params.set("Predictor", 12);
        params.set("Columns", 4);
        let read = decode(&zlib(&rows), &[Filter::Flate], Some(&params), 1 << 20).unwrap();
        assert_eq!(read.bytes, [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
        // Columns that make one row longer than the data fail (lopdf would allocate
        // the row first: a terabyte here).
        params.set("Columns", 1_i64 << 40);
        assert_eq!(
            decode(&zlib(&rows), &[Filter::Flate], Some(&params), 1 << 20),
            None
        );
        params.set("Colors", i64::MAX);
        assert_eq!(
            decode(&zlib(&rows), &[Filter::Flate], Some(&params), 1 << 20),
            None
        );
    }
}
