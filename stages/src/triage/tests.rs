//! Tests of triage: documents judged once each, verdicts kept by content hash across
//! rounds, an unusable answer judged by the offline rule instead.

use std::collections::BTreeMap;
use std::sync::Mutex;

use deepr_orchestrator::clock::TokioClock;
use deepr_orchestrator::{ArchivedText, DocMeta, Outline, TextArchive};

use super::*;
use crate::model_call::tests::Scripted;
use deepr_tasks::triage::Scope;

struct Archive(BTreeMap<String, ArchivedText>);

impl TextArchive for Archive {
    fn get(&self, content_sha256: &str) -> Option<ArchivedText> {
        self.0.get(content_sha256).cloned()
    }
}

fn doc(title: &str, body: &str) -> (DocMeta, ArchivedText) {
    let text = ArchivedText::new(&format!("{title}\n\n{body}"));
    let meta = DocMeta {
        doc_key: title.into(),
        locator: title.into(),
        title: title.into(),
        content_sha256: text.content_sha256.clone(),
        date: None,
        authority: 0.5,
        outline: Outline {
            headings: vec![(0, 1)],
            ..Outline::default()
        },
    };
    (meta, text)
}

const TOPIC: &str = "You are preparing a brief on Kestrelmoor Robotics. Write a brief covering: (1) funding history, (2) operational performance and risks.";

struct Share {
    docs: Vec<(DocMeta, ArchivedText)>,
    archive: Archive,
}

fn share() -> Share {
    let docs = vec![
        doc("Q1 2026 Board Update", "The Series C closed in October."),
        doc(
            "Hybrid Work Policy 2026",
            "Staff work from the office on anchor days.",
        ),
        doc(
            "2026 Headcount Plan",
            "Engineering grows from 88 to 112 people.",
        ),
        doc(
            "Fleet Incident Log",
            "Firmware 4.2.1 regressed lidar calibration.",
        ),
    ];
    let archive = Archive(
        docs.iter()
            .map(|(_, t)| (t.content_sha256.clone(), t.clone()))
            .collect(),
    );
    Share { docs, archive }
}

fn fetched(docs: &[&(DocMeta, ArchivedText)]) -> FetchOut {
    FetchOut {
        docs: docs.iter().map(|(d, _)| (d.clone(), 1.0)).collect(),
        failures: vec![],
    }
}

async fn triage(
    share: &Share,
    answers: Vec<&'static str>,
    fetches: &[FetchOut],
    earlier: TriageOut,
) -> (TriageOut, Vec<LedgerEntry>, usize) {
    let model = Scripted(Mutex::new(answers));
    let fallback = deepr_heuristic::HeuristicModel::default();
    let clock = TokioClock::new();
    let call = TriageCall {
        node_id: "r0/triage",
        prompt: &deepr_prompts::PromptSet::default().triage,
        topic: TOPIC,
        archive: &share.archive,
        models: Models {
            llm: &model,
            fallback: &fallback,
            clock: &clock,
        },
        io_concurrency: 2,
    };
    let (out, calls) = run(call, fetches, earlier).await;
    let left = model.0.lock().map(|v| v.len()).unwrap_or(0);
    (out, calls, left)
}

#[tokio::test]
async fn each_document_is_judged_once_and_verdicts_carry_over_rounds() {
    let share = share();
    let d = &share.docs;
    // Two subquestions fetched overlapping documents: each is shown once (d1–d3).
    let round0 = [fetched(&[&d[0], &d[1]]), fetched(&[&d[1], &d[2]])];
    let (out, calls, left) = triage(
        &share,
        vec![
            r#"{"verdicts": [
            {"id": "d1", "scope": "in_scope", "reason": "board figures"},
            {"id": "d2", "scope": "off_topic", "reason": "a workplace policy"},
            {"id": "d3", "scope": "background", "reason": "staffing context"}]}"#,
        ],
        &round0,
        TriageOut::default(),
    )
    .await;
    assert_eq!((calls.len(), left), (1, 0), "one call for three documents");
    assert!(out.degraded.is_none());
    assert_eq!(out.verdicts.len(), 3);
    let brief = deepr_tasks::brief::parse_brief(TOPIC);
    assert_eq!(
        out.off_topic(&d[1].0, &[], &brief).as_deref(),
        Some("a workplace policy")
    );
    assert_eq!(out.off_topic(&d[0].0, &[], &brief), None);
    // Background is read like in scope.
    assert_eq!(out.off_topic(&d[2].0, &[], &brief), None);
    // Round 1 found the incident log and the policy again: only the log is shown.
    let round1 = [fetched(&[&d[1], &d[3]])];
    let (out, calls, left) = triage(
        &share,
        vec![r#"{"verdicts": [{"id": "d1", "scope": "in_scope", "reason": "incidents"}]}"#],
        &round1,
        out,
    )
    .await;
    assert_eq!((calls.len(), left), (1, 0));
    assert_eq!(out.verdicts.len(), 4);
    assert_eq!(out.verdicts[&d[3].0.content_sha256].scope, Scope::InScope);
    assert_eq!(out.verdicts[&d[1].0.content_sha256].scope, Scope::OffTopic);
    // Nothing new: no call at all.
    let (_, calls, _) = triage(&share, vec![], &round1, out).await;
    assert!(calls.is_empty());
}

#[tokio::test]
async fn an_unusable_answer_is_judged_by_the_offline_rule_and_said() {
    let share = share();
    let d = &share.docs;
    let fetches = [fetched(&[&d[0], &d[1], &d[2]])];
    // An ID never shown, then a verdict missing: both refused, the fallback answers.
    let (out, _, _) = triage(
        &share,
        vec![
            r#"{"verdicts": [{"id": "d9", "scope": "off_topic", "reason": "x"}]}"#,
            r#"{"verdicts": [{"id": "d1", "scope": "in_scope", "reason": "x"}]}"#,
        ],
        &fetches,
        TriageOut::default(),
    )
    .await;
    assert!(out.degraded.is_some(), "{out:?}");
    let brief = deepr_tasks::brief::parse_brief(TOPIC);
    assert!(out.off_topic(&d[1].0, &[], &brief).is_some(), "{out:?}");
    assert_eq!(out.off_topic(&d[0].0, &[], &brief), None);
    // Worded unlike the brief, but no paperwork: in scope.
    assert_eq!(out.off_topic(&d[2].0, &[], &brief), None);
}

#[test]
fn a_document_never_judged_gets_the_title_rule() {
    let share = share();
    let brief = deepr_tasks::brief::parse_brief(TOPIC);
    let none = TriageOut::default();
    assert!(none.off_topic(&share.docs[1].0, &[], &brief).is_some());
    assert!(none.off_topic(&share.docs[0].0, &[], &brief).is_none());
}
