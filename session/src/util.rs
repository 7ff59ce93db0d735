//! Small general helpers at the bottom of the binary: imported by every module,
//! importing none of them (`stages/tests/layout.rs` refuses import cycles).

use std::path::Path;

use anyhow::Context;

/// `YYYYMMDD-HHMMSS` for a Unix time (UTC).
pub fn utc_compact(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}")
}

/// RFC 3339 UTC for a Unix time.
pub fn utc_rfc3339(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

fn civil(secs: u64) -> (i64, u32, u32, u64, u64, u64) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, rem / 3600, (rem % 3600) / 60, rem % 60)
}

/// Write `bytes` to `path` atomically (`deepr_checkpoints::write_atomically`), with the
/// path in the error.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    deepr_checkpoints::write_atomically(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}
