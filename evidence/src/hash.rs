//! Hashes that appear in reports. Report hashes are SHA-256 (hex), so anyone can
//! recompute them with standard tools; internal keys elsewhere may use blake3.

use sha2::{Digest, Sha256};

use crate::normalise::normalise;

/// Hex SHA-256 of arbitrary bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// `content_sha256`: hex SHA-256 of the UTF-8 bytes of an archived text.
pub fn content_sha256(archived_text: &str) -> String {
    sha256_hex(archived_text.as_bytes())
}

/// `quote_sha256`: hex SHA-256 of the UTF-8 bytes of `normalise(quote)`.
pub fn quote_sha256(quote: &str) -> String {
    sha256_hex(normalise(quote).as_bytes())
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_vectors() {
        assert_eq!(
            super::content_sha256("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        // Whitespace and entities are normalised before hashing a quote.
        assert_eq!(super::quote_sha256(" abc\n"), super::content_sha256("abc"));
        assert_eq!(
            super::quote_sha256("a&#x27;b"),
            super::content_sha256("a'b")
        );
    }
}
