//! `deepr refresh`: an earlier run's research again over its sources as they are now.
//! On a share of 25 files written here (a ferry operator's reports, a policy and brand
//! rules that share their words, the office's own business): with nothing changed, `--if-changed` exits 0 and writes
//! nothing; after one figure changed in one file and one file was added, the refresh
//! shows the figure old → new with both quotes and the new file's fact under "Added",
//! verifies, and costs a fraction of its parent (unchanged steps answered from the
//! response cache); a refresh killed with SIGKILL resumes to the same report.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)] // test code

mod common;

use std::path::{Path, PathBuf};

use common::{above_run_details, deepr, spawn, stderr};

const QUESTION: &str = "Write a brief on Larkspur Ferries covering (1) how reliable its fleet is, (2) how it is funded and (3) how many passengers it carries.";

const SHARE: &[(&str, &str)] = &[
    ("ops/q3-operations-report.md", "# Q3 operations report\n\n## Fleet\n\nFleet availability was 96.4% in the third quarter, against a target of 95%.\n\nThe MV Heron was out of service for 11 days in August for a gearbox repair.\n\n## Passengers\n\nThe fleet carried 412,000 passengers in the third quarter.\n"),
    ("ops/crossings.md", "# Crossings\n\nLarkspur Ferries runs 38 crossings a day between Arden and the three island ports.\n\nThe longest crossing, to Skerry Point, takes 95 minutes.\n"),
    ("finance/budget-2026.md", "# Budget 2026\n\nFare revenue covers 71% of operating costs.\n\nThe council subsidy for 2026 is £8.2 million.\n"),
    ("finance/fleet-renewal.md", "# Fleet renewal\n\nTwo hybrid ferries are on order for delivery in 2028, at £23 million each.\n"),
    ("hr/remote-work-policy.md", "# Remote work policy\n\nLarkspur Ferries office staff may work from home two days a week.\n\nThe fleet's crews are not covered by this policy.\n"),
    ("marketing/brand.md", "# Brand rules\n\nThe Larkspur Ferries logo is navy on white; never stretch the fleet illustration.\n"),
];

struct Share {
    _dir: tempfile::TempDir,
    home: PathBuf,
}

impl Share {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_path_buf();
        let mut files: Vec<(String, String)> = SHARE
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        // The rest of a share of 25 files: the office's own business, which a question
        // on the fleet does not read.
        let rooms = [
            "Arden", "Skerry", "Holm", "Voe", "Sound", "Quay", "Pier", "Dock", "Harbour", "Slip",
        ];
        for (i, room) in rooms.iter().enumerate() {
            files.push((
                format!("facilities/room-{}.md", i + 1),
                format!("# {room} meeting room\n\nThe {room} room on floor {} seats {} people and is booked through the intranet calendar.\n", i % 3 + 1, 6 + i),
            ));
        }
        for (i, course) in [
            "first aid",
            "fire warden",
            "manual handling",
            "data protection",
            "induction",
            "customer care",
            "radio licence",
            "forklift",
            "accessibility",
        ]
        .iter()
        .enumerate()
        {
            files.push((
                format!("training/course-{}.md", i + 1),
                format!("# {course} course\n\nThe {course} course runs every {} weeks in the training suite; book it with the learning team.\n", i + 2),
            ));
        }
        for (path, text) in files {
            let file = home.join("share").join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        Self { _dir: dir, home }
    }
    fn path(&self, rest: &str) -> PathBuf {
        self.home.join(rest)
    }
    fn deepr(&self, args: &[&str]) -> std::process::Output {
        let state = self.path("state").display().to_string();
        let mut all = vec!["--quiet", "--state-dir", &state];
        all.extend(args);
        deepr(&self.home, &all)
    }
    fn run_parent(&self, extra: &[&str]) {
        let output = self.start_parent(extra);
        assert!(output.status.success(), "{}", stderr(&output));
    }
    /// `deepr run` of the question as run `parent`, whatever its exit.
    fn start_parent(&self, extra: &[&str]) -> std::process::Output {
        let (corpus, out) = (self.path("share"), self.path("reports/parent.md"));
        let mut args = vec![
            "run",
            QUESTION,
            "--corpus",
            corpus.to_str().unwrap(),
            "--run-id",
            "parent",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        self.deepr(&args)
    }
    /// `deepr refresh parent` as run `refreshed`, its report at `reports/refreshed.md`
    /// (returned with the output), `extra` flags before the run id.
    fn refresh(&self, extra: &[&str]) -> (std::process::Output, PathBuf) {
        let out = self.path("reports/refreshed.md");
        let mut args = vec!["refresh", "parent"];
        args.extend(extra);
        args.extend(["--run-id", "refreshed", "--out", out.to_str().unwrap()]);
        (self.deepr(&args), out)
    }
    /// One figure changed in one file, one file added.
    fn change(&self) {
        let report = self.path("share/ops/q3-operations-report.md");
        let text = std::fs::read_to_string(&report)
            .unwrap()
            .replace("96.4%", "93.8%");
        std::fs::write(report, text).unwrap();
        std::fs::write(
            self.path("share/finance/grant-note.md"),
            "# Grant note\n\nLarkspur Ferries received a £4.5 million grant from the regional transport fund in October to fund the fleet renewal.\n",
        )
        .unwrap();
    }
}

fn tokens(report_md: &Path) -> u64 {
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report_md.with_extension("json")).unwrap()).unwrap();
    report["usage"]["prompt_tokens"].as_u64().unwrap()
        + report["usage"]["completion_tokens"].as_u64().unwrap()
}

#[test]
fn a_refresh_says_what_changed_and_pays_for_the_change() {
    let share = Share::new();
    share.run_parent(&[]);
    let parent = share.path("reports/parent.md");
    let parent_text = std::fs::read_to_string(&parent).unwrap();
    assert!(
        parent_text.contains("96.4%"),
        "the parent states the figure"
    );
    // The brand rules share the brief's words (the company, its fleet) but not its
    // subject: never stated, listed as read and judged off-topic.
    let (body, references) = parent_text.split_once("## References").unwrap();
    assert!(!body.contains("logo is navy"), "{body}");
    assert!(references.contains("marketing/brand.md"), "{references}");

    // Nothing changed: no run, no report.
    let output = share.deepr(&["refresh", "parent", "--if-changed", "--run-id", "idle"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        !share.path("state/runs/idle").exists(),
        "no run was created"
    );
    let reports: Vec<_> = std::fs::read_dir(share.path("reports")).unwrap().collect();
    assert_eq!(reports.len(), 2, "only the parent's report and its sidecar");

    share.change();
    let (output, out) = share.refresh(&["--if-changed"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let markdown = std::fs::read_to_string(&out).unwrap();
    let changed = markdown
        .split("## What changed since ")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .unwrap_or_else(|| panic!("no What changed section:\n{markdown}"));
    assert!(
        changed.contains("1 new documents, 1 changed, 0 removed"),
        "{changed}"
    );
    assert!(
        changed.contains("96.4 → 93.8"),
        "the figure, old → new:\n{changed}"
    );
    assert!(
        changed.contains("“Fleet availability was 96.4% in the third quarter"),
        "the old quote:\n{changed}"
    );
    let values_line = changed.lines().find(|l| l.contains("96.4 → 93.8")).unwrap();
    assert!(
        values_line.contains("[^"),
        "the new figure cites its quote: {values_line}"
    );
    assert!(
        changed.contains("**Added**") && changed.contains("£4.5 million grant"),
        "the new file's fact:\n{changed}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.with_extension("json")).unwrap()).unwrap();
    assert_eq!(report["changes"]["values"][0]["new_values"][0], "93.8");
    let verified = share.deepr(&["verify", out.to_str().unwrap()]);
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
    let (refreshed, fresh) = (tokens(&out), tokens(&parent));
    println!("figures: refresh {refreshed} tokens, its parent {fresh}");
    println!(
        "figures: the refresh by stage {}",
        report["usage"]["by_stage"]
    );
    // Every step whose inputs did not change is answered from the response cache; on
    // a share this small the change reaches most steps (figures in the benches' README).
    assert!(
        refreshed < fresh,
        "the refresh spent {refreshed} tokens, its parent {fresh}"
    );
}

#[test]
fn a_refresh_killed_mid_run_resumes_to_the_same_report() {
    // The reference: an uninterrupted refresh.
    let whole = Share::new();
    whole.run_parent(&["--offline-latency", "200ms"]);
    whole.change();
    let (output, out) = whole.refresh(&[]);
    assert!(output.status.success(), "{}", stderr(&output));

    let killed = Share::new();
    killed.run_parent(&["--offline-latency", "200ms"]);
    killed.change();
    let killed_out = killed.path("reports/refreshed.md");
    let state = killed.path("state").display().to_string();
    let mut child = spawn(
        &killed.home,
        &[
            "--quiet",
            "--state-dir",
            &state,
            "refresh",
            "parent",
            "--run-id",
            "refreshed",
            "--out",
            killed_out.to_str().unwrap(),
        ],
    );
    let state_path = killed.path("state");
    common::kill_when(&mut child, "the refresh's second model call", || {
        common::journaled_calls(&state_path, "refreshed") >= 2
    });
    let resumed = killed.deepr(&["resume", "refreshed"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let strip_paths = |path: &Path| {
        above_run_details(path)
            .replace(&killed.home.display().to_string(), "")
            .replace(&whole.home.display().to_string(), "")
    };
    assert_eq!(strip_paths(&killed_out), strip_paths(&out));
}

#[test]
fn a_run_stopped_before_its_report_was_complete_is_resumed_before_it_is_refreshed() {
    let share = Share::new();
    let out = share.path("reports/parent.md");
    let output = share.start_parent(&["--max-tokens", "3000"]);
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.with_extension("json")).unwrap()).unwrap();
    assert_eq!(report["complete"], false, "the budget stopped it");
    share.change();
    let output = share.deepr(&["refresh", "parent", "--run-id", "refreshed"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains("stopped before its report was complete")
            && said.contains("deepr resume parent"),
        "{said}"
    );
    assert!(
        !share.path("state/runs/refreshed").exists(),
        "no run was created"
    );
}

#[test]
fn a_refresh_after_a_new_file_reads_only_it_and_keeps_the_summary() {
    // A new file shifts every ranking's word weights; the parent's claims on unchanged
    // documents stand, only the new file's candidates are read (one extract call, where
    // reading every changed pool again took two), and the summary, whose claims all
    // stand, is kept (no call).
    let share = Share::new();
    share.run_parent(&[]);
    std::fs::write(
        share.path("share/ops/drill-note.md"),
        "# Drill note\n\nThe fleet's crews completed their annual evacuation drill in September.\n",
    )
    .unwrap();
    let (output, out) = share.refresh(&[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.with_extension("json")).unwrap()).unwrap();
    let by_stage = &report["usage"]["by_stage"];
    let calls = |stage: &str| by_stage[stage]["calls"].as_u64().unwrap_or(0);
    let (refreshed, fresh) = (tokens(&out), tokens(&share.path("reports/parent.md")));
    println!("figures: a new file: refresh {refreshed} tokens, its parent {fresh}; {by_stage}");
    assert_eq!(calls("extract"), 1, "{by_stage}");
    assert_eq!(calls("synthesize"), 0, "{by_stage}");
    assert!(refreshed * 2 < fresh, "{refreshed} of {fresh}");
    let markdown = std::fs::read_to_string(&out).unwrap();
    assert!(
        markdown.contains("1 new documents, 0 changed, 0 removed"),
        "{markdown}"
    );
}
