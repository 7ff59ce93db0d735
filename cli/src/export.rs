//! `deepr runs export RUN_ID --out FILE`: a report, its sidecar and the archived text
//! of every cited source in one bundle (`deepr verify` checks it with no state dir).

use deepr_session::ExitStatus;
use std::path::Path;

use deepr_checkpoints::FileArchive;

use crate::{usage, Failure};

/// `deepr runs export RUN_ID --out FILE`.
pub fn export(
    state_dir: &Path,
    run_dir: &Path,
    run_id: &str,
    out: &Path,
) -> Result<ExitStatus, Failure> {
    let file = crate::record::read_run_file(run_dir).ok_or_else(|| {
        usage(format!(
            "run {run_id} has no run.json; it was stopped before it started"
        ))
    })?;
    let archive = FileArchive::open(state_dir).map_err(|e| Failure::Run(e.into()))?;
    let (bytes, sources) = deepr_session::reports::bundle(&archive, &file.record.out, run_id)?;
    write_bundle(out, &bytes)?;
    errln!(
        "deepr: exported run {run_id} to {} ({sources} sources, {} bytes)",
        out.display(),
        bytes.len()
    );
    Ok(ExitStatus::Success)
}

/// Write an export bundle, creating its folder.
pub fn write_bundle(out: &Path, bytes: &[u8]) -> Result<(), Failure> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| usage(format!("cannot create {}: {e}", parent.display())))?;
    }
    crate::util::write_atomically(out, bytes)?;
    Ok(())
}
