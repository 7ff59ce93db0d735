//! A research plan the user reviews before paying for it: `plan.toml`.
//!
//! `deepr run … --plan-only` writes the plan its planner made (the topic, the depth,
//! each subquestion with the first search queries written for it) as a commented TOML
//! file; the user edits it; `deepr run --plan plan.toml` researches exactly those
//! subquestions. The file is untrusted input: [`parse_plan`] never panics, refuses
//! unknown keys, and says on which line a value is wrong and what to do about it.

use serde::{Deserialize, Serialize};

use crate::Depth;

/// Longest subquestion kept (characters), as the planner's own are cut.
pub const MAX_QUESTION_CHARS: usize = 300;
/// Longest topic (characters), as `deepr run` takes it.
pub const MAX_TOPIC_CHARS: usize = 2000;
/// Longest search query (characters).
pub const MAX_QUERY_CHARS: usize = 200;
/// Queries one subquestion may carry (what the query step writes at most).
pub const MAX_QUERIES: usize = 3;
/// Longest plan file read (bytes): a plan is a page, not a corpus.
pub const MAX_PLAN_BYTES: usize = 256 * 1024;

/// What a run researches: its topic, its depth and its subquestions in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResearchPlan {
    pub topic: String,
    pub depth: Depth,
    pub subquestions: Vec<PlannedQuestion>,
}

/// One subquestion of a plan and the first queries searched for it (none: the query
/// step writes them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedQuestion {
    pub question: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queries: Vec<String>,
}

/// Why a plan file cannot be used, with the line at fault when there is one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct PlanError {
    /// 1-based line of the value at fault.
    pub line: Option<usize>,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    topic: toml::Spanned<String>,
    depth: toml::Spanned<Depth>,
    #[serde(default, rename = "subquestion")]
    subquestions: Vec<toml::Spanned<QuestionEntry>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QuestionEntry {
    question: toml::Spanned<String>,
    queries: Option<toml::Spanned<Vec<String>>>,
}

/// Reads a plan file's text: TOML with `topic`, `depth` and one `[[subquestion]]` table
/// per subquestion (`question`, optional `queries`). Every question and query is one
/// line of plain text; there is at least one subquestion and at most the depth's
/// maximum ([`Depth::plan`]); no question is asked twice.
pub fn parse_plan(text: &str) -> Result<ResearchPlan, PlanError> {
    if text.len() > MAX_PLAN_BYTES {
        return Err(at(
            None,
            format!(
                "the plan is {} bytes; a plan holds at most {MAX_PLAN_BYTES} (write it again with --plan-only)",
                text.len()
            ),
        ));
    }
    let file: PlanFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|span| line_of(text, span.start));
        let message = e.message().trim().replace('\n', " ");
        at(
            line,
            format!("{message} (keys: topic, depth, [[subquestion]] with question and queries)"),
        )
    })?;
    let topic = topic_of(text, &file.topic)?;
    let depth = *file.depth.get_ref();
    let max = depth.limits().max_subquestions;
    if file.subquestions.is_empty() {
        return Err(at(
            Some(line_of(text, file.depth.span().start)),
            "the plan has no [[subquestion]]; add at least one (question = \"…\")".into(),
        ));
    }
    let mut subquestions: Vec<PlannedQuestion> = Vec::new();
    for (i, entry) in file.subquestions.iter().enumerate() {
        let entry_line = line_of(text, entry.span().start);
        if i == max {
            return Err(at(
                Some(entry_line),
                format!(
                    "{} subquestions; depth {} researches at most {max} (remove some, or set depth = \"deep\")",
                    file.subquestions.len(),
                    depth.as_str()
                ),
            ));
        }
        let entry = entry.get_ref();
        let question = one_line(text, &entry.question, "question", MAX_QUESTION_CHARS)?;
        let repeated = subquestions
            .iter()
            .any(|q| q.question.to_lowercase() == question.to_lowercase());
        if repeated {
            return Err(at(
                Some(line_of(text, entry.question.span().start)),
                format!("the question {question:?} is asked twice; remove one"),
            ));
        }
        subquestions.push(PlannedQuestion {
            question,
            queries: match &entry.queries {
                Some(queries) => queries_of(text, queries)?,
                None => Vec::new(),
            },
        });
    }
    Ok(ResearchPlan {
        topic,
        depth,
        subquestions,
    })
}

/// A subquestion's queries: each one line, at most [`MAX_QUERIES`], none repeated.
fn queries_of(text: &str, queries: &toml::Spanned<Vec<String>>) -> Result<Vec<String>, PlanError> {
    let line = line_of(text, queries.span().start);
    let list = queries.get_ref();
    if list.len() > MAX_QUERIES {
        return Err(at(
            Some(line),
            format!(
                "{} queries; a subquestion carries at most {MAX_QUERIES}",
                list.len()
            ),
        ));
    }
    let mut kept: Vec<String> = Vec::new();
    for query in list {
        let query = checked_line(query, "query", MAX_QUERY_CHARS).map_err(|m| at(Some(line), m))?;
        if !kept.contains(&query) {
            kept.push(query);
        }
    }
    Ok(kept)
}

/// The plan's topic as written, lines kept (a brief's bullet lines are its parts):
/// trimmed, not empty, no control characters but line breaks and tabs.
fn topic_of(text: &str, topic: &toml::Spanned<String>) -> Result<String, PlanError> {
    let line = Some(line_of(text, topic.span().start));
    let value = topic.get_ref().trim();
    if value.is_empty() {
        return Err(at(
            line,
            "the topic is empty; write the question or brief".into(),
        ));
    }
    if value
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err(at(
            line,
            "the topic holds control characters; write plain text".into(),
        ));
    }
    let chars = value.chars().count();
    if chars > MAX_TOPIC_CHARS {
        return Err(at(
            line,
            format!("the topic is {chars} characters; keep it under {MAX_TOPIC_CHARS}"),
        ));
    }
    Ok(value.to_string())
}

/// A string value as one trimmed line, or the error on its line.
fn one_line(
    text: &str,
    value: &toml::Spanned<String>,
    what: &str,
    max_chars: usize,
) -> Result<String, PlanError> {
    checked_line(value.get_ref(), what, max_chars)
        .map_err(|message| at(Some(line_of(text, value.span().start)), message))
}

/// Whitespace runs become one space; empty, over-long or control-character text is
/// refused with what to do.
fn checked_line(value: &str, what: &str, max_chars: usize) -> Result<String, String> {
    if value.chars().any(|c| c.is_control() && !c.is_whitespace()) {
        return Err(format!(
            "the {what} holds control characters; write plain text"
        ));
    }
    let line = value.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return Err(format!("the {what} is empty; write it or remove it"));
    }
    let chars = line.chars().count();
    if chars > max_chars {
        return Err(format!(
            "the {what} is {chars} characters; keep it under {max_chars}"
        ));
    }
    Ok(line)
}

fn at(line: Option<usize>, message: String) -> PlanError {
    PlanError { line, message }
}

/// The 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The plan as the file the user edits: a header saying how, `notes` as comments (the
/// estimate), then the values. [`parse_plan`] reads back what this writes.
pub fn render_plan(plan: &ResearchPlan, notes: &[String]) -> String {
    let mut out = String::from(
        "# deepr research plan. Edit the subquestions and their queries (at most 3 each;\n\
         # none: deepr writes them), remove or add [[subquestion]] tables, then run:\n\
         #   deepr run --plan THIS_FILE [--corpus DIR | --sources …] [--out FILE]\n",
    );
    for note in notes {
        for line in note.lines() {
            out.push_str("# ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push('\n');
    out.push_str(&format!("topic = {}\n", toml_string(&plan.topic)));
    out.push_str(&format!(
        "# quick: at most {}, standard: {}, deep: {} subquestions\n",
        Depth::Quick.limits().max_subquestions,
        Depth::Standard.limits().max_subquestions,
        Depth::Deep.limits().max_subquestions
    ));
    out.push_str(&format!("depth = \"{}\"\n", plan.depth.as_str()));
    for question in &plan.subquestions {
        out.push_str("\n[[subquestion]]\n");
        out.push_str(&format!("question = {}\n", toml_string(&question.question)));
        let queries: Vec<String> = question.queries.iter().map(|q| toml_string(q)).collect();
        out.push_str(&format!("queries = [{}]\n", queries.join(", ")));
    }
    out
}

/// A TOML basic string (quoted, escaped).
fn toml_string(value: &str) -> String {
    toml::Value::String(value.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(questions: &[&str]) -> ResearchPlan {
        ResearchPlan {
            topic: "How does \"WAL\" mode work?".into(),
            depth: Depth::Standard,
            subquestions: questions
                .iter()
                .map(|q| PlannedQuestion {
                    question: q.to_string(),
                    queries: vec![format!("{q} query")],
                })
                .collect(),
        }
    }

    #[test]
    fn a_written_plan_reads_back_as_it_was() {
        let plan = plan(&["What is a checkpoint?", "When does the WAL file grow?"]);
        let text = render_plan(&plan, &["estimate: 20–30 LLM calls".into()]);
        assert!(text.contains("# estimate: 20–30 LLM calls"), "{text}");
        assert_eq!(parse_plan(&text), Ok(plan));
    }

    #[test]
    fn a_briefs_lines_survive_the_plan() {
        let mut plan = plan(&["Funding?"]);
        plan.topic = "Write a brief covering:\n- funding\n- risks".into();
        let text = render_plan(&plan, &[]);
        assert_eq!(parse_plan(&text).expect("valid").topic, plan.topic);
    }

    #[test]
    fn an_edited_plan_runs_what_it_says() {
        let text = "topic = \"WAL\"\ndepth = \"quick\"\n\n[[subquestion]]\nquestion = \"  What is   a checkpoint? \"\n\n[[subquestion]]\nquestion = \"Who reads the WAL?\"\nqueries = [\"wal readers\", \"wal readers\"]\n";
        let plan = parse_plan(text).expect("a valid plan");
        assert_eq!(plan.depth, Depth::Quick);
        assert_eq!(plan.subquestions[0].question, "What is a checkpoint?");
        assert!(plan.subquestions[0].queries.is_empty());
        assert_eq!(plan.subquestions[1].queries, ["wal readers"]);
    }

    /// Each malformed plan: its error names the line at fault and what was wrong.
    #[test]
    fn a_malformed_plan_names_its_line() {
        let cases: &[(&str, usize, &str)] = &[
            ("topic = \"x\"\ndepth = \"quick\"\n[[subquestion]]\nquestoin = \"a\"\n", 4, "unknown field"),
            ("topic = \"x\"\ndepth = \"shallow\"\n", 2, "unknown variant"),
            ("topic = \"x\"\ndepth = \"quick\"\n", 2, "no [[subquestion]]"),
            ("topic = \"x\"\ndepth = \"quick\"\n[[subquestion]]\nquestion = \" \"\n", 4, "empty"),
            ("topic = \"x\"\ndepth = \"quick\"\n[[subquestion]]\nquestion = \"a\"\n[[subquestion]]\nquestion = \"A\"\n", 6, "asked twice"),
            ("topic = \"x\"\ndepth = \"quick\"\n[[subquestion]]\nquestion = \"a\"\nqueries = [\"1\", \"2\", \"3\", \"4\"]\n", 5, "at most 3"),
            ("topic = \"x\"\ndepth = \"quick\"\n[[subquestion]]\nquestion = \"a\\u0007\"\n", 4, "control"),
            ("topic = \"x\"\ndepth = \"quick\"\n[[subquestion]\n", 3, ""),
        ];
        for (text, line, says) in cases {
            let error = parse_plan(text).expect_err(text);
            assert_eq!(error.line, Some(*line), "{text}: {error}");
            assert!(error.to_string().contains(says), "{text}: {error}");
            assert!(!error.to_string().contains('\n'), "{error}");
        }
    }

    #[test]
    fn a_plan_over_its_depths_limit_is_refused_at_the_first_extra_subquestion() {
        let questions: Vec<String> = (1..=6).map(|i| format!("Question {i}?")).collect();
        let refs: Vec<&str> = questions.iter().map(String::as_str).collect();
        let mut plan = plan(&refs);
        plan.depth = Depth::Quick;
        let text = render_plan(&plan, &[]);
        let error = parse_plan(&text).expect_err("six at quick");
        let sixth = text
            .lines()
            .position(|l| l.contains("Question 6?"))
            .expect("written");
        // The `[[subquestion]]` line above the sixth question.
        assert_eq!(error.line, Some(sixth), "{error}");
        assert!(error.message.contains("at most 5"), "{error}");
    }
}
