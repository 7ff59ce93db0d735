//! The contract of every model call, one file per task.
//!
//! A task owns four things that must agree: its **input** (the typed data a stage
//! builds, from which the prompt is rendered and which a heuristic model answers
//! from), its **answer** (what the model must return, parsed strictly), its
//! **validation** (schema shape beyond serde, and meaning: every ID in an answer is one
//! the model was shown — read off the input itself) and its **prompt** (by id, in
//! `deepr-prompts`). Stages build an input and call the task; providers see the
//! rendered prompt plus the input serialised, and a provider that answers from the
//! input (the heuristic model) reads it back into the same type, so a renamed field
//! is a loud error at both ends instead of a silently empty answer.
//!
//! To add a task: a file here with its `Input`, `Answer` and `impl ModelTask`; its
//! template and schema in `deepr-prompts`; its heuristic in `deepr-heuristic`; the
//! stage that builds the input in `deepr-stages`.

use deepr_prompts::{Prompt, PromptSet};
use serde::de::DeserializeOwned;
use serde::Serialize;

pub mod brief;
pub mod conflict;
pub mod decompose;
pub mod deepen;
pub mod extract;
pub mod extract_free;
pub mod judge;
pub mod judge_vote;
pub mod subquery;
pub mod synthesize;
pub mod triage;
pub mod write_section;

/// One kind of model call.
pub trait ModelTask {
    /// The prompt id (`deepr-prompts`), also the id a provider sees in a request.
    const ID: &'static str;
    /// What the stage gives the model: rendered into the prompt, and sent alongside it.
    type Input: Serialize + DeserializeOwned + Send + Sync;
    /// What the model must answer.
    type Answer: Serialize + DeserializeOwned + Default + Send;

    /// This task's prompt in a prompt set (built-in or the user's override).
    fn prompt(prompts: &PromptSet) -> &Prompt;

    /// The values of the prompt's placeholders, rendered from the input. Untrusted
    /// text goes through [`quoted`].
    fn values(input: &Self::Input) -> Vec<(&'static str, String)>;

    /// Meaning checks beyond the schema: counts, non-empty text, and every ID in the
    /// answer one the input showed.
    fn validate(input: &Self::Input, answer: &Self::Answer) -> Result<(), String>;
}

/// One line with whitespace runs folded: how page and model text is shown.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Read a model's answer text as task `T`'s answer and validate it against the input
/// the model was shown. The text is untrusted: JSON is found inside prose or code
/// fences, parsed strictly into the answer type, then checked by [`ModelTask::validate`].
pub fn parse_answer<T: ModelTask>(input: &T::Input, text: &str) -> Result<T::Answer, String> {
    let value = parse_json_object(text)?;
    let answer = serde_json::from_value::<T::Answer>(value)
        .map_err(|e| format!("answer does not match the schema: {e}"))?;
    T::validate(input, &answer)?;
    Ok(answer)
}

/// Extract the first JSON object from a model answer (models wrap JSON in prose or
/// code fences).
pub fn parse_json_object(text: &str) -> Result<serde_json::Value, String> {
    let trimmed = text.trim();
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(trimmed) {
        return Ok(value);
    }
    let start = trimmed.find('{').ok_or("answer contains no JSON object")?;
    let end = trimmed
        .rfind('}')
        .ok_or("answer contains no complete JSON object")?;
    if end <= start {
        return Err("answer contains no complete JSON object".into());
    }
    serde_json::from_str(&trimmed[start..=end])
        .map_err(|e| format!("answer is not valid JSON: {e}"))
}

/// Every built-in task's id, for tests that walk all of them.
pub const IDS: [&str; 11] = [
    decompose::Decompose::ID,
    subquery::Subquery::ID,
    triage::Triage::ID,
    extract::Extract::ID,
    extract_free::ExtractFree::ID,
    judge::Judge::ID,
    judge_vote::JudgeVote::ID,
    conflict::ConflictDetect::ID,
    deepen::Deepen::ID,
    write_section::WriteSection::ID,
    synthesize::Synthesize::ID,
];

/// The verdict words a judge or voter may answer, lower-cased and trimmed.
pub fn is_verdict_word(text: &str) -> bool {
    ["supported", "partial", "unsupported"].contains(&text.trim().to_ascii_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use deepr_prompts::PromptSet;
    use serde_json::Value;

    use super::*;

    /// The answer fields a schema requires, and the fields of the answer type (seen
    /// through its default value), at every level of objects and arrays of objects.
    fn schema_fields(schema: &Value, path: &str, out: &mut Vec<String>) {
        if let Some(properties) = schema["properties"].as_object() {
            for (name, inner) in properties {
                out.push(format!("{path}.{name}"));
                schema_fields(inner, &format!("{path}.{name}"), out);
                schema_fields(&inner["items"], &format!("{path}.{name}[]"), out);
            }
        }
    }

    fn check<T: ModelTask>(example: T::Answer) {
        let prompts = PromptSet::default();
        let prompt = T::prompt(&prompts);
        assert_eq!(prompt.id, T::ID, "the task names its own prompt");
        let mut from_schema = Vec::new();
        schema_fields(&prompt.schema(), "", &mut from_schema);
        from_schema.sort();
        let mut from_type = Vec::new();
        collect_value_fields(
            &serde_json::to_value(example).expect("answer serialises"),
            "",
            &mut from_type,
        );
        from_type.sort();
        assert_eq!(
            from_schema,
            from_type,
            "{}: schema and answer type agree",
            T::ID
        );
    }

    fn collect_value_fields(value: &Value, path: &str, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (name, inner) in map {
                    out.push(format!("{path}.{name}"));
                    collect_value_fields(inner, &format!("{path}.{name}"), out);
                }
            }
            Value::Array(items) => {
                if let Some(first) = items.first() {
                    collect_value_fields(first, &format!("{path}[]"), out);
                }
            }
            _ => {}
        }
    }

    /// A renamed field in an answer type or a schema fails here, not as empty answers.
    #[test]
    fn every_answer_type_matches_its_prompt_schema() {
        check::<decompose::Decompose>(decompose::Answer::default());
        check::<subquery::Subquery>(subquery::Answer::default());
        check::<extract::Extract>(extract::Answer {
            claims: vec![extract::AnswerClaim::default()],
        });
        check::<extract_free::ExtractFree>(extract_free::Answer {
            claims: vec![extract_free::AnswerClaim::default()],
        });
        check::<judge::Judge>(judge::Answer {
            verdicts: vec![judge::AnswerVerdict::default()],
        });
        check::<judge_vote::JudgeVote>(judge_vote::Answer::default());
        check::<conflict::ConflictDetect>(conflict::Answer {
            conflicts: vec![conflict::AnswerConflict::default()],
        });
        check::<deepen::Deepen>(deepen::Answer {
            followups: vec![deepen::AnswerFollowup::default()],
        });
        check::<write_section::WriteSection>(write_section::Answer {
            heading: String::new(),
            paragraphs: vec![write_section::AnswerParagraph {
                sentences: vec![write_section::AnswerSentence::default()],
            }],
        });
        check::<synthesize::Synthesize>(synthesize::Answer {
            summary: vec![synthesize::AnswerPoint::default()],
        });
        check::<triage::Triage>(triage::Answer {
            verdicts: vec![triage::Verdict::default()],
        });
    }

    #[test]
    fn every_prompt_has_exactly_one_task() {
        let mut prompts: Vec<&str> = deepr_prompts::ALL.iter().map(|p| p.id).collect();
        let mut tasks = IDS.to_vec();
        tasks.sort();
        prompts.sort();
        assert_eq!(tasks, prompts);
    }
}
