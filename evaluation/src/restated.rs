//! Every fact once, measured: which of a facts file's key values a report states in
//! more than one body section. The summary may state a key figure beside the section
//! that is its home; two sections stating it is the repetition the writers are told to
//! avoid. Only values holding a digit count ("$48M", "September 15, 2026"): a name
//! ("Fenwick Ridge Capital") may be referred to wherever its subject comes up.

use deepr_evidence::report::Report;

use crate::values::{folded, states};

/// Each body section's prose (its paragraphs' sentences), folded as values are
/// compared; the summary is not a section.
pub fn section_prose(report: &Report) -> Vec<String> {
    report
        .article
        .sections
        .iter()
        .map(|section| {
            let text: Vec<&str> = section
                .paragraphs
                .iter()
                .flat_map(|p| p.sentences.iter().map(|s| s.text.as_str()))
                .collect();
            folded(&text.join("\n"))
        })
        .collect()
}

/// The `values` (a checkpoint's) holding a digit that two or more of `sections` (from
/// [`section_prose`]) state, in their order.
pub fn restated(values: &[String], sections: &[String]) -> Vec<String> {
    values
        .iter()
        .filter(|value| value.chars().any(|c| c.is_ascii_digit()))
        .filter(|value| {
            let value = folded(value);
            sections.iter().filter(|s| states(s, &value)).count() >= 2
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkpoint(values: &[&str]) -> Vec<String> {
        values.iter().map(|v| v.to_string()).collect()
    }

    #[test]
    fn a_value_in_two_sections_is_restated_and_a_name_or_one_section_is_not() {
        let sections = [
            "The S5 ships on September 15, 2026 with a 250 kg payload.",
            "Pricing is $1,890 a month from September 15, 2026; Fenwick Ridge Capital led.",
            "Fenwick Ridge Capital led the Series C. The 1250 kg lift is separate.",
        ]
        .map(folded);
        let restated_values = restated(
            &checkpoint(&[
                "September 15, 2026",
                "250 kg",
                "$1,890",
                "Fenwick Ridge Capital",
            ]),
            &sections,
        );
        assert_eq!(restated_values, ["September 15, 2026"]);
        assert!(restated(&checkpoint(&["$1,890"]), &sections[..1]).is_empty());
    }
}
