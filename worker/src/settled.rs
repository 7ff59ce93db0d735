//! What a run a worker finished leaves: its reports read back (extension → text), a
//! verifiable export bundle (texts from this worker's archive or the fleet's), its
//! research memory, and a copy at the run's own `--out` when that is safe here.

use std::path::Path;
use std::sync::Arc;

use deepr_checkpoints::{ArchiveMirror, FileArchive};

use deepr_session::record::FleetJob;
use deepr_session::Failure;

/// How a claim ends: the run settled (with what it leaves), or given back to the queue.
pub enum Settle {
    Done {
        state: &'static str,
        note: Option<String>,
        reports: serde_json::Value,
        /// The run's research memory, when it finished.
        memory: Option<serde_json::Value>,
    },
    Release {
        delay: i32,
        note: String,
        /// A worker stopping (Ctrl-C): not a failure, so not counted towards parking.
        graceful: bool,
    },
}

/// A settled run: its reports read back (extension → text) with an export bundle, and
/// copied to the run's own `--out` when its folder exists on this machine.
pub fn done(
    state: &'static str,
    mut note: Option<String>,
    state_dir: &Path,
    mirror: &Arc<dyn ArchiveMirror>,
    job: &FleetJob,
    local_out: &Path,
) -> Settle {
    let mut reports = serde_json::Map::new();
    let stem = local_out
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("report")
        .to_string();
    if let Some(folder) = local_out.parent() {
        if let Ok(entries) = std::fs::read_dir(folder) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let Some(extension) = name.strip_prefix(&format!("{stem}.")) else {
                    continue;
                };
                if let Ok(text) = std::fs::read_to_string(entry.path()) {
                    reports.insert(extension.to_string(), text.into());
                }
            }
        }
    }
    // The export bundle, with the texts this worker has or the fleet's archive holds.
    let bundled = FileArchive::open(state_dir)
        .map_err(|e| e.to_string())
        .and_then(|archive| {
            let archive = archive.with_mirror(Arc::clone(mirror));
            deepr_session::reports::bundle(&archive, local_out, &job.record.run_id).map_err(|e| {
                match e {
                    Failure::Usage(why) => why,
                    Failure::Run(why) => format!("{why:#}"),
                }
            })
        })
        .and_then(|(bytes, _)| String::from_utf8(bytes).map_err(|e| e.to_string()));
    match bundled {
        Ok(text) => {
            reports.insert("bundle".into(), text.into());
        }
        Err(why) => {
            let missing = format!("no export bundle: {why}");
            note = Some(match note {
                Some(note) => format!("{note}; {missing}"),
                None => missing,
            });
        }
    }
    let reports = serde_json::Value::Object(reports);
    if may_write_out(&job.record.out, &job.record.run_id) {
        let _ = deepr_session::reports::write_stored_reports(&reports, &job.record.out);
    }
    let memory = (state == "finished")
        .then(|| std::fs::read(local_out.with_extension("json")).ok())
        .flatten()
        .and_then(|bytes| serde_json::from_slice::<deepr_evidence::report::Report>(&bytes).ok())
        .map(|report| {
            let date = deepr_session::util::utc_rfc3339(deepr_session::record::now_secs());
            deepr_session::memory::summarise(&report, &job.record.out, date)
        })
        .and_then(|memory| serde_json::to_value(memory).ok());
    Settle::Done {
        state,
        note,
        reports,
        memory,
    }
}

/// Whether this worker may write a run's reports to its `--out`: an absolute path whose
/// folder exists here, where no file stands yet or the one there is this run's own
/// report (its sidecar names the run) — a submitter cannot make a worker overwrite
/// anything else.
fn may_write_out(out: &Path, run_id: &str) -> bool {
    if !out.is_absolute() || !out.parent().is_some_and(Path::is_dir) {
        return false;
    }
    if !out.exists() {
        return true;
    }
    std::fs::read(out.with_extension("json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<deepr_evidence::report::Report>(&bytes).ok())
        .is_some_and(|report| report.run_id == run_id)
}
