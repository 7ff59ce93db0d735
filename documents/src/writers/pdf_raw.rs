//! Hand-assembled PDFs, for the readers' tests of hostile files: any objects in any
//! order (a stream whose filter and data the test chooses, an object stream, a
//! cross-reference stream's dictionary), and zlib data that inflates to gigabytes from
//! megabytes — a deflate bomb written code by code (fixed Huffman codes: one space,
//! then copies of 258 bytes at distance 1, 13 bits each), never by compressing the
//! gigabytes.

/// A PDF of `objects` (object `n` is `objects[n - 1]`: what goes between `n 0 obj` and
/// `endobj`) with a classic cross-reference table, the catalog at object 1.
pub fn assemble_pdf(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::with_capacity(objects.len());
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(object);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    let size = objects.len() + 1;
    out.extend_from_slice(format!("xref\n0 {size}\n0000000000 65535 f \n").as_bytes());
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {size} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").as_bytes(),
    );
    out
}

/// A stream object's body: `<< dict /Length n >>` and `data`.
pub fn stream_object(dict: &str, data: &[u8]) -> Vec<u8> {
    let head = format!("<< {dict} /Length {} >>\nstream\n", data.len());
    [head.as_bytes(), data, b"\nendstream"].concat()
}

/// A one-page PDF (Helvetica as `/F1`) whose content is `content`, a stream with the
/// dictionary entries `dict` (`/Filter /FlateDecode`), and `more` objects after it
/// (objects 6 on, which `resources` may name: `/XObject << /X1 6 0 R >>`).
pub fn one_page_pdf(dict: &str, content: &[u8], resources: &str, more: &[Vec<u8>]) -> Vec<u8> {
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> {resources} >> /Contents 5 0 R >>").into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec(),
        stream_object(dict, content),
    ];
    objects.extend(more.iter().cloned());
    assemble_pdf(&objects)
}

/// Bits written least significant first, as deflate packs them.
struct Bits {
    out: Vec<u8>,
    pending: u64,
    count: u32,
}

impl Bits {
    fn put(&mut self, value: u64, bits: u32) {
        self.pending |= value << self.count;
        self.count += bits;
        while self.count >= 8 {
            self.out.push(self.pending as u8);
            self.pending >>= 8;
            self.count -= 8;
        }
    }

    /// A Huffman code: its bits go most significant first.
    fn code(&mut self, code: u32, bits: u32) {
        let reversed = (0..bits).fold(0u64, |r, i| {
            r | (u64::from((code >> i) & 1) << (bits - 1 - i))
        });
        self.put(reversed, bits);
    }

    /// A literal byte in the fixed Huffman code.
    fn literal(&mut self, byte: u8) {
        if byte < 144 {
            self.code(0x30 + u32::from(byte), 8);
        } else {
            self.code(0x190 + u32::from(byte) - 144, 9);
        }
    }
}

/// zlib data that inflates to `prefix` and then at least `spaces` spaces (rounded up to
/// one more than a multiple of 258), with a true Adler-32, so it inflates without error
/// to the end: about 160 inflated bytes for each byte of it.
pub fn deflate_bomb(prefix: &[u8], spaces: u64) -> Vec<u8> {
    let copies = spaces.saturating_sub(1).div_ceil(258);
    let mut bits = Bits {
        out: vec![0x78, 0x01],
        pending: 0,
        count: 0,
    };
    bits.put(1, 1); // the last block
    bits.put(1, 2); // fixed Huffman codes
    for &byte in prefix {
        bits.literal(byte);
    }
    bits.literal(b' ');
    for _ in 0..copies {
        bits.code(0xC5, 8); // length code 285: 258 bytes
        bits.code(0, 5); // distance code 0: 1 byte back
    }
    bits.code(0, 7); // end of block
    if bits.count > 0 {
        bits.out.push(bits.pending as u8);
    }
    let adler = adler32(prefix, 1 + 258 * copies);
    bits.out.extend_from_slice(&adler.to_be_bytes());
    bits.out
}

/// Adler-32 of `prefix` and then `spaces` spaces, without making them.
fn adler32(prefix: &[u8], spaces: u64) -> u32 {
    const MOD: u128 = 65521;
    let (mut a, mut b) = (1u128, 0u128);
    for &byte in prefix {
        a = (a + u128::from(byte)) % MOD;
        b = (b + a) % MOD;
    }
    let n = u128::from(spaces);
    b = (b + n % MOD * a + 32 * (n * (n + 1) / 2 % MOD)) % MOD;
    a = (a + 32 * n) % MOD;
    ((b << 16) | a) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn the_bomb_inflates_to_its_prefix_and_spaces_with_a_true_checksum() {
        let z = deflate_bomb(b"BT (x) Tj ET\n", 100_000);
        let mut out = Vec::new();
        flate2::read::ZlibDecoder::new(z.as_slice())
            .read_to_end(&mut out)
            .expect("inflates to the end, checksum included");
        assert!(out.starts_with(b"BT (x) Tj ET\n "));
        assert_eq!(out.len(), 13 + 1 + 258 * 388);
        assert!(out[13..].iter().all(|b| *b == b' '));
        assert!(z.len() * 150 < out.len(), "{} → {}", z.len(), out.len());
    }
}
