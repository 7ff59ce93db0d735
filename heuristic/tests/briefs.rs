//! Briefs in `test_data/briefs/briefs.toml`: the parser finds each one's parts and
//! writing instructions, and the offline planner covers every part (the same check a
//! model's plan must pass), names no instruction, and plans in the parts' order. The
//! plans are snapshotted.
#![allow(clippy::expect_used)] // test code: a failed expectation is the test failing

use deepr_tasks::brief::parse_brief;
use deepr_tasks::decompose::{Answer, Decompose, Input};
use deepr_tasks::ModelTask;
use serde::Deserialize;

#[derive(Deserialize)]
struct BriefsFile {
    brief: Vec<BriefCase>,
}

#[derive(Deserialize)]
struct BriefCase {
    id: String,
    text: String,
    parts: Vec<String>,
    instructions: Vec<String>,
}

fn cases() -> Result<Vec<BriefCase>, String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../test_data/briefs/briefs.toml"
    );
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let file: BriefsFile = toml::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    if file.brief.len() < 8 {
        return Err(format!(
            "{path}: at least 8 briefs, found {}",
            file.brief.len()
        ));
    }
    Ok(file.brief)
}

#[test]
fn each_brief_parses_into_its_parts_and_instructions() {
    for case in cases().expect("the briefs file") {
        let brief = parse_brief(&case.text);
        assert_eq!(brief.parts, case.parts, "parts of {}", case.id);
        assert_eq!(
            brief.instructions, case.instructions,
            "instructions of {}",
            case.id
        );
    }
}

/// The offline plan of `case` within `min`..=`max` subquestions (aiming at `target`).
fn offline_plan(case: &BriefCase, (min, max, target): (usize, usize, usize)) -> (Input, Answer) {
    let input = Input {
        topic: case.text.clone(),
        min,
        max,
        target,
        headings: Vec::new(),
        titles: Vec::new(),
        parts: parse_brief(&case.text).parts,
    };
    let value = serde_json::to_value(&input).expect("input serialises");
    let answer = deepr_heuristic::answer("decompose", &value).expect("the heuristic plans");
    let plan: Answer = serde_json::from_value(answer).expect("a decompose answer");
    (input, plan)
}

#[test]
fn a_plan_smaller_than_the_brief_still_asks_every_part() {
    // A quick plan (3–5 subquestions) of a brief with seven parts: parts share a
    // subquestion, none is left out — an invalid plan had left the run with none.
    for case in cases().expect("the briefs file") {
        let (input, plan) = offline_plan(&case, (3, 5, 4));
        assert_eq!(
            Decompose::validate(&input, &plan),
            Ok(()),
            "quick plan of {}: {:?}",
            case.id,
            plan.subquestions
        );
    }
}

#[test]
fn the_offline_plan_covers_every_part_in_order() {
    let mut plans = Vec::new();
    for case in cases().expect("the briefs file") {
        let (input, plan) = offline_plan(&case, (5, 10, 6));
        assert_eq!(
            Decompose::validate(&input, &plan),
            Ok(()),
            "plan of {}",
            case.id
        );
        for question in &plan.subquestions {
            assert!(
                !case
                    .instructions
                    .iter()
                    .any(|i| question.contains(i.trim_end_matches('.'))),
                "{}: a subquestion copies an instruction: {question}",
                case.id
            );
        }
        plans.push(format!(
            "{}:\n  {}",
            case.id,
            plan.subquestions.join("\n  ")
        ));
    }
    insta::assert_snapshot!(plans.join("\n"));
}
