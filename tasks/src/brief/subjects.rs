//! The subjects of a brief's parts: a part's subject without its possessive ("its
//! product line" → "Product line"), the two of a pair, the subjects a part lists — what
//! a plan asks about one by one, and what deepening follows up when the plan had no
//! room. Used by the offline planner and the deepen stage alike.

use deepr_evidence::terms::content_terms;

/// The subquestion that asks about one subject of a brief, its entity named.
pub fn subject_question(subject: &str, entity: Option<&str>) -> String {
    match entity {
        Some(entity) => format!("{SUBJECT_QUESTION}{subject}” for {entity}?"),
        None => format!("{SUBJECT_QUESTION}{subject}”?"),
    }
}

/// How [`subject_question`] opens.
const SUBJECT_QUESTION: &str = "What does the documentation say about “";

/// The subject a [`subject_question`] asks about; none for a question worded otherwise
/// (a model's, which may quote a title of its own).
pub fn asked_subject(question: &str) -> Option<&str> {
    let rest = question.strip_prefix(SUBJECT_QUESTION)?;
    rest.strip_suffix("”?")
        .or_else(|| rest.rsplit_once("” for ").map(|(subject, _)| subject))
}

/// The subjects one part of a brief names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartSubjects {
    /// The part's own subject ("Financial position, including the budget, …").
    pub whole: String,
    /// The two subjects it joins ("Ridership" and "Service reliability"), if it joins two.
    pub pair: Option<(String, String)>,
    /// The further subjects it lists ("Budget", "Fare revenue", …), in order: none the
    /// pair names, and not the head of an "including" list (the whole names it).
    pub listed: Vec<String>,
}

impl PartSubjects {
    /// The subjects beyond the whole, in order: the pair's, then the listed ones.
    pub fn beyond_whole(&self) -> Vec<String> {
        let pair = self.pair.iter().flat_map(|(a, b)| [a.clone(), b.clone()]);
        pair.chain(self.listed.iter().cloned()).collect()
    }
}

/// Whether two subjects name the same thing: the same content words ("How it compares
/// with peer agencies", "It compares with peer agencies").
pub fn same_subject(a: &str, b: &str) -> bool {
    let terms = |s: &str| {
        content_terms(s)
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>()
    };
    terms(a) == terms(b)
}

/// The subjects each part of a brief names, in the brief's order — what a plan with
/// room asks about one by one, and what deepening follows up when the plan had none.
pub fn part_subjects(brief: &super::Brief) -> Vec<PartSubjects> {
    brief
        .parts
        .iter()
        .map(|part| subjects_of_part(part))
        .collect()
}

/// The subjects one part of a brief names (see [`part_subjects`]).
pub fn subjects_of_part(part: &str) -> PartSubjects {
    let whole = subject_of(part);
    // "How the business did and how this year has started: sales, profit,
    // borrowing…": the list after the colon is what the part asks; the pair
    // before it only frames it.
    let pair = split_pair(&whole).filter(|_| !lists_after_colon(&whole));
    let head = LIST_LEADS
        .iter()
        .filter_map(|lead| whole.find(lead))
        .min()
        .and_then(|at| whole.get(..at))
        .map(subject_of);
    let mut named: Vec<String> = vec![whole.clone()];
    named.extend(pair.iter().flat_map(|(a, b)| [a.clone(), b.clone()]));
    named.extend(head);
    let mut listed = Vec::new();
    for item in listed_subjects(&whole) {
        let item = with_head(&whole, item);
        if !named.iter().any(|n| same_subject(n, &item)) {
            named.push(item.clone());
            listed.push(item);
        }
    }
    PartSubjects {
        whole,
        pair,
        listed,
    }
}

/// A clause listed after a noun phrase and a colon is asked with that noun phrase:
/// "The two factories: how much each handled…" lists "How much each handled", which
/// alone does not say what handled it → "Two factories: how much each handled…".
fn with_head(whole: &str, item: String) -> String {
    let Some((head, after)) = whole.split_once(": ") else {
        return item;
    };
    let listed_after = after.to_lowercase().contains(&item.to_lowercase());
    if !listed_after || opens_clause(head) || !opens_clause(&item) {
        return item;
    }
    let mut chars = item.chars();
    let lowered: String = chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default();
    format!("{}: {lowered}", subject_of(head))
}

/// Whether a part lists two subjects or more after a colon ("…: sales, profit and
/// borrowing").
fn lists_after_colon(whole: &str) -> bool {
    whole
        .split_once(": ")
        .is_some_and(|(_, after)| super::lists::list_items(after).len() >= 2)
}

/// What sets a part's head apart from the subjects it lists.
const LIST_LEADS: [&str; 3] = [" including ", ": ", " such as "];

/// The subjects a part lists: "Financial position, including the budget, fare revenue,
/// reserves and borrowing" → Financial position, Budget, Fare revenue, Reserves,
/// Borrowing. What follows "with their"/"with its" qualifies them ("with their costs
/// and schedules") and is no subject; a list of names ("against Swiftlane Robotics,
/// MediRover and Corvid Logistics") is one subject, not several. Fewer than two: none.
pub fn listed_subjects(subject: &str) -> Vec<String> {
    // ASCII lower-casing keeps byte offsets, so they cut the original text.
    let lowered = subject.to_ascii_lowercase();
    let head = [", with their ", ", with its ", " with their ", " with its "]
        .iter()
        .filter_map(|q| lowered.find(q))
        .min()
        .and_then(|at| subject.get(..at))
        .unwrap_or(subject);
    // "X including Y" and "X: Y" list Y beside X; a clause ("how far it is from
    // making money") stays whole.
    let lead = LIST_LEADS
        .iter()
        .filter_map(|lead| head.find(lead).map(|at| (at, lead.len())))
        .min();
    let (before, after) =
        match lead.and_then(|(at, len)| Some((head.get(..at)?, head.get(at + len..)?))) {
            Some((before, after)) => (before, Some(after)),
            None => (head, None),
        };
    let mut items = if opens_clause(before) {
        vec![before.trim().to_string()]
    } else {
        super::lists::list_items(before)
    };
    items.extend(after.into_iter().flat_map(super::lists::list_items));
    items.retain(|item| !content_terms(item).is_empty());
    if items.len() < 2 || items.iter().skip(1).any(|i| is_name(i)) {
        return Vec::new();
    }
    items.iter().map(|i| subject_of(i)).collect()
}

/// A part's subject: without the possessive that stands for the brief's subject
/// ("the company's", "its"), capitalised.
pub fn subject_of(part: &str) -> String {
    let mut text = part
        .trim()
        .trim_end_matches([';', ',', '.', ':'])
        .to_string();
    let lowered = text.to_lowercase();
    for prefix in [
        "the company's ",
        "the company’s ",
        "its ",
        "their ",
        "the ",
        "our ",
    ] {
        // The prefix's bytes are ASCII; cut the original only on one of its boundaries.
        if let Some(rest) = text
            .get(prefix.len()..)
            .filter(|_| lowered.starts_with(prefix))
        {
            text = rest.to_string();
            break;
        }
    }
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => text,
    }
}

/// Whether `text` opens with a question word: a clause ("how far it is from making
/// money"), one subject however many "and"s it holds.
fn opens_clause(text: &str) -> bool {
    let opener = text.split_whitespace().next().unwrap_or("").to_lowercase();
    [
        "how", "what", "who", "where", "when", "why", "which", "whether",
    ]
    .contains(&opener.as_str())
}

/// Whether every word of `text` is capitalised: a name ("Corvid Logistics").
pub fn is_name(text: &str) -> bool {
    text.split_whitespace()
        .all(|w| w.starts_with(|c: char| c.is_uppercase()))
}

/// "Funding history and current financial trajectory" → both subjects, when the part
/// joins exactly two (no commas, one "and", words on both sides). What a half lists
/// after "including" is a listed subject of its own ([`listed_subjects`]): "Product
/// line and roadmap including pricing" → Product line, Roadmap.
pub fn split_pair(subject: &str) -> Option<(String, String)> {
    // A clause ("How its sales and margins have moved") is one subject; two clauses
    // ("how it compares … and what its targets are") are two.
    if opens_clause(subject) {
        let at = subject
            .match_indices(" and ")
            .map(|(at, _)| at)
            .find(|at| subject.get(at + 5..).is_some_and(opens_clause))?;
        let (first, second) = (subject.get(..at)?, subject.get(at + 5..)?);
        let second = second.split([',', ':']).next().unwrap_or(second);
        // "how loyal and how concentrated its customers are": the first clause is its
        // question word and one word, and shares the second's subject.
        let shared_tail = |first: &str| -> Option<String> {
            let [ask, word] = first.split_whitespace().collect::<Vec<_>>()[..] else {
                return None;
            };
            let mut rest = second.split_whitespace();
            let same_ask = rest.next()?.eq_ignore_ascii_case(ask);
            let tail: Vec<&str> = rest.skip(1).collect();
            (same_ask && !tail.is_empty()).then(|| format!("{ask} {word} {}", tail.join(" ")))
        };
        let first = shared_tail(first).unwrap_or_else(|| first.to_string());
        let first = first.as_str();
        // Each clause says something beyond its question word ("what and how": none).
        let says = |clause: &str| !content_terms(clause).is_empty();
        return (says(first) && says(second)).then(|| (subject_of(first), subject_of(second)));
    }
    // "X including Y and Z" lists, it joins no pair.
    if subject.find(" including ").is_some_and(|at| {
        subject
            .get(..at)
            .is_some_and(|head| !head.contains(" and "))
    }) {
        return None;
    }
    let joiner = [" and ", " including "]
        .into_iter()
        .find(|j| subject.contains(j))?;
    if subject.contains(',') || subject.matches(joiner).count() != 1 {
        return None;
    }
    let (first, second) = subject.split_once(joiner)?;
    let second = second.split(" including ").next().unwrap_or(second);
    // "competes with Birchwood Kitchens and Nordlys" joins two names, not two subjects.
    if content_terms(first).is_empty() || content_terms(second).is_empty() || is_name(second) {
        return None;
    }
    Some((subject_of(first), subject_of(second)))
}
