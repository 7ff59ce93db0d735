//! A model's answer is untrusted: finding its JSON, reading it as each task's answer
//! and validating it never panics; an accepted extract or judge answer only cites IDs
//! that were shown, and what survives grounding in an accepted summary or section
//! cites only claims that were shown.
#![no_main]

use deepr_evidence::report::Verdict;
use deepr_tasks::{extract, judge, parse_answer, synthesize, write_section};
use libfuzzer_sys::fuzz_target;

const SHOWN: [&str; 3] = ["c1", "c2", "c3"];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let extract_input = extract::Input {
        subquestion: "q".into(),
        max_claims: 3,
        candidates: SHOWN
            .iter()
            .map(|id| extract::Candidate {
                id: id.to_string(),
                text: "t".into(),
                weight: 1.0,
                doc: "d".into(),
                title: String::new(),
                source: Default::default(),
            })
            .collect(),
    };
    if let Ok(answer) = parse_answer::<extract::Extract>(&extract_input, text) {
        for claim in &answer.claims {
            assert!(claim.sentence_ids.iter().all(|id| SHOWN.contains(&id.as_str())));
        }
    }
    let judge_input = judge::Input {
        claims: SHOWN
            .iter()
            .map(|id| judge::Claim {
                id: id.to_string(),
                text: "t".into(),
                quotes: vec![],
                sources: vec![],
            })
            .collect(),
    };
    if let Ok(answer) = parse_answer::<judge::Judge>(&judge_input, text) {
        assert_eq!(answer.verdicts.len().min(3), answer.verdicts.len());
        assert!(answer.verdicts.iter().all(|v| SHOWN.contains(&v.claim_id.as_str())));
    }
    let synthesize_input = synthesize::Input {
        topic: "t".into(),
        subquestions: vec![synthesize::Group {
            id: "q1".into(),
            text: "q".into(),
            claims: SHOWN
                .iter()
                .map(|id| synthesize::Claim {
                    id: id.to_string(),
                    text: "the page size is 4096".into(),
                    verdict: Verdict::Supported,
                    quotes: vec!["The page size is 4096 bytes.".into()],
                    sources: vec!["Pager notes (2024-05-01)".into()],
                })
                .collect(),
        }],
        conflicts: vec![],
        instructions: vec!["Keep it short.".into()],
    };
    if let Ok(answer) = parse_answer::<synthesize::Synthesize>(&synthesize_input, text) {
        // What survives grounding cites only claims that were shown.
        let grounded = synthesize::ground(&synthesize_input, &answer);
        assert!(!grounded.paragraphs.is_empty());
        for sentence in grounded.paragraphs.iter().flatten() {
            assert!(sentence.claim_ids.iter().all(|id| SHOWN.contains(&id.as_str())));
        }
    }
    let section_input = write_section::Input {
        topic: "t".into(),
        subquestions: vec!["q".into()],
        claims: SHOWN
            .iter()
            .map(|id| write_section::Claim {
                id: id.to_string(),
                text: "the page size is 4096".into(),
                verdict: Verdict::Supported,
                quotes: vec![write_section::Quote {
                    document: "d1".into(),
                    sentence: 0,
                    text: "The page size is 4096 bytes.".into(),
                }],
                stated_earlier: Vec::new(),
            })
            .collect(),
        words: 300,
        instructions: vec!["Keep it short.".into()],
        documents: vec![write_section::Document {
            id: "d1".into(),
            title: "Pager notes 2024".into(),
            date: Some("2024-05-01".into()),
        }],
    };
    if let Ok(answer) = parse_answer::<write_section::WriteSection>(&section_input, text) {
        let grounded =
            write_section::ground(&write_section::shown_claims(&section_input.claims, &section_input.documents), &answer.paragraphs);
        assert!(!grounded.paragraphs.is_empty());
        for sentence in grounded.paragraphs.iter().flatten() {
            assert!(sentence.claim_ids.iter().all(|id| SHOWN.contains(&id.as_str())));
        }
    }
});
