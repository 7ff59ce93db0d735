//! Tests of the brief parser (a child module, so they reach its private functions).

use super::*;

const BRIEF: &str = "You are preparing a due-diligence brief on Kestrelmoor Robotics, Inc., a Dayton-based robotics company we are evaluating. Write a brief covering: (1) the company's funding history and current financial trajectory, (2) its product line and roadmap including pricing, (3) operational performance and key risks, and (4) how it is positioned against Swiftlane Robotics, MediRover and Corvid Logistics. Be specific about numbers, dates and names, and cite your sources.";

#[test]
fn numbered_parts_instructions_and_the_subject() {
    let brief = parse_brief(BRIEF);
    assert_eq!(
        brief.parts,
        [
            "the company's funding history and current financial trajectory",
            "its product line and roadmap including pricing",
            "operational performance and key risks",
            "how it is positioned against Swiftlane Robotics, MediRover and Corvid Logistics",
        ]
    );
    assert_eq!(brief.instructions.len(), 2, "{:?}", brief.instructions);
    assert!(brief.instructions[1].starts_with("Be specific"));
    assert!(brief.asks_for_specifics());
    assert!(!parse_brief("How does WAL work?").asks_for_specifics());
    assert_eq!(
        brief.entities.first().map(String::as_str),
        Some("Kestrelmoor Robotics"),
        "{:?}",
        brief.entities
    );
    assert!(
        brief
            .context
            .starts_with("Kestrelmoor Robotics, Inc., a Dayton-based"),
        "{}",
        brief.context
    );
}

proptest::proptest! {
    /// Any text is a brief: parsing never panics, and there is always a part.
    #[test]
    fn any_text_parses(text in "\\PC{0,300}") {
        let brief = parse_brief(&text);
        proptest::prop_assert!(!brief.parts.is_empty());
        let _ = subject_text(&text);
    }
}

#[test]
fn other_shapes_of_brief() {
    let one = parse_brief("How does SQLite guarantee atomic commits?");
    assert_eq!(one.parts, ["How does SQLite guarantee atomic commits?"]);
    assert!(one.instructions.is_empty());
    let bullets = parse_brief("Research the Acme Corp supply chain.\n- suppliers and lead times\n- pricing risks\nKeep it under 800 words.");
    assert_eq!(bullets.parts, ["suppliers and lead times", "pricing risks"]);
    assert_eq!(bullets.instructions, ["Keep it under 800 words."]);
    let listed = parse_brief(
        "Write a report on Postgres covering: vacuum, replication lag and index bloat.",
    );
    assert_eq!(listed.parts, ["vacuum", "replication lag", "index bloat"]);
    let discovering = parse_brief("We are discovering new markets, partners and risks.");
    assert_eq!(discovering.parts.len(), 1, "{:?}", discovering.parts);
    let years = parse_brief("Revenue (2024) and (2025) figures.");
    assert_eq!(years.parts.len(), 1, "{:?}", years.parts);
    let lettered = parse_brief("Compare a) the rollback journal and b) WAL mode for SQLite.");
    assert_eq!(
        lettered.parts,
        ["the rollback journal", "WAL mode for SQLite"]
    );
}

#[test]
fn a_long_brief_gets_a_short_title_and_a_question_keeps_its_own() {
    let question = "How does the rollback journal protect a transaction, and what is the default journal page size? What do lighthouse keepers eat?";
    assert_eq!(parse_brief(question).title(question), question);
    let brief = "You are preparing a due-diligence brief on Harrowgate Foods, a Leeds-based maker of frozen ready meals. Write a brief covering: (1) its funding history, (2) the product range and (3) supply risks. Cite your sources.";
    assert_eq!(
        parse_brief(brief).title(brief),
        "Research brief: Harrowgate Foods"
    );
    let details = parse_brief(brief).details();
    assert_eq!(details[0].0, "Brief parts");
    assert!(
        details[0].1.starts_with("(1) its funding history; (2)"),
        "{details:?}"
    );
}

#[test]
fn a_parts_subjects_are_its_pair_and_its_list_never_a_fragment_of_a_clause() {
    let brief = parse_brief(
        "We lend to Orbel Foods and need a note covering: how its sales and margins have \
         moved; how the business did in 2025 and how this year has started: sales, profit \
         and borrowing; its finances, including the budget, reserves and debt; the two \
         factories: how much each handled and any recalls. Quote figures.",
    );
    let subjects: Vec<(String, Vec<String>)> = part_subjects(&brief)
        .into_iter()
        .map(|p| (p.whole.clone(), p.beyond_whole()))
        .collect();
    assert_eq!(
        subjects,
        [
            // A clause is one subject, however many "and"s it holds.
            ("How its sales and margins have moved".to_string(), vec![]),
            // What follows the colon is what the part asks; the two clauses before it
            // only frame it (asked as halves, they had lost "profit" and "borrowing").
            (
                "How the business did in 2025 and how this year has started: sales, profit and borrowing"
                    .to_string(),
                vec![
                    "Sales".to_string(),
                    "Profit".to_string(),
                    "Borrowing".to_string(),
                ]
            ),
            // "including" lists beside its head, which the whole names.
            (
                "Finances, including the budget, reserves and debt".to_string(),
                vec!["Budget".to_string(), "Reserves".to_string(), "Debt".to_string()]
            ),
            // A clause listed after a noun phrase is asked with it: "how much each
            // handled" alone does not say what handled it.
            (
                "Two factories: how much each handled and any recalls".to_string(),
                vec![
                    "Two factories: how much each handled".to_string(),
                    "Any recalls".to_string()
                ]
            ),
        ]
    );
}

#[test]
fn an_enumerations_lead_keeps_its_names_and_an_including_list_is_no_pair() {
    // The introducer goes, a name before it stays.
    let brief =
        parse_brief("We need you to research Acme Corp, covering: pricing, staff and debt.");
    assert_eq!(brief.parts, ["pricing", "staff", "debt"]);
    assert!(
        brief.entities.iter().any(|e| e == "Acme Corp"),
        "{:?}",
        brief.entities
    );
    let brief =
        parse_brief("We lend to Orbel Foods and need a note that answers the following: sales, profit and debt.");
    assert!(
        brief.entities.iter().any(|e| e == "Orbel Foods"),
        "{:?}",
        brief.entities
    );
    assert!(!brief.context.contains("answers"), "{}", brief.context);
    // "X including Y and Z" lists beside X; it is no pair of "X including Y" and "Z".
    assert_eq!(split_pair("Roadmap including pricing and discounts"), None);
    assert_eq!(
        split_pair("Product line and roadmap including pricing"),
        Some(("Product line".to_string(), "Roadmap".to_string()))
    );
    // Two clauses each say something; "what and how" says nothing.
    assert_eq!(split_pair("what and how"), None);
    // A clause of its question word and one word shares the other's subject.
    assert_eq!(
        split_pair("how loyal and how concentrated its customers are"),
        Some((
            "How loyal its customers are".to_string(),
            "How concentrated its customers are".to_string()
        ))
    );
}

#[test]
fn a_questions_context_line_is_context_never_a_part_or_its_title() {
    let topic = "How has Brightwater Analytics' API compatibility changed since the 3.0 release? Context: the report is for Mara Lindqvist, CTO at Brightwater Analytics (Gothenburg, Sweden).";
    let brief = parse_brief(topic);
    assert_eq!(
        brief.title(topic),
        "How has Brightwater Analytics' API compatibility changed since the 3.0 release?"
    );
    assert!(brief.parts.iter().all(|p| !p.contains("Gothenburg")));
    let persona =
        "I am the finance director of Lumen Dairy Co-operative. What drove the milk price in 2025?";
    let brief = parse_brief(persona);
    assert_eq!(brief.parts, ["What drove the milk price in 2025?"]);
    assert!(
        brief.entities.iter().any(|e| e.contains("Lumen Dairy")),
        "the persona's organisation stays the subject: {:?}",
        brief.entities
    );
    assert_eq!(brief.title(persona), "What drove the milk price in 2025?");
}

#[test]
fn a_lines_first_word_is_no_name() {
    // The bullet before it ends without a stop; "Please" opens a line, not a name.
    let brief = parse_brief(
        "I lend to Harrowgate Dairy Co-operative. Could you cover:\n- sales and profit\n- \
         the milk supply right now\nPlease stick to what the documents say.",
    );
    assert!(
        brief
            .entities
            .iter()
            .any(|e| e == "Harrowgate Dairy Co-operative"),
        "{:?}",
        brief.entities
    );
    assert!(
        !brief.entities.iter().any(|e| e == "Please"),
        "{:?}",
        brief.entities
    );
    // A one-word name after a colon stays a name.
    let listed =
        parse_brief("We buy from two suppliers: Orbel and Harrowell. How reliable are they?");
    assert!(
        listed.entities.iter().any(|e| e == "Orbel"),
        "{:?}",
        listed.entities
    );
}

#[test]
fn a_range_from_one_subject_to_another_lists_both_ends() {
    assert_eq!(
        list_items(
            "the people side, from headcount, hiring and attrition to leadership changes and \
             any dependence on particular individuals"
        ),
        [
            "the people side",
            "headcount",
            "hiring and attrition",
            "leadership changes",
            "any dependence on particular individuals"
        ]
    );
    // Without a "from", "to" is no range: "changes to pricing" stays one item.
    assert_eq!(
        list_items("churn, changes to pricing and renewals"),
        ["churn", "changes to pricing", "renewals"]
    );
}
