//! Prose grounding: may a written sentence stand on the quotes it cites?
//!
//! A writer (a model, or the offline writer) turns claims into sentences, each citing
//! claim IDs. A sentence stands only if every claim it cites is known and not judged
//! unsupported, every number (canonical: "1,000" = "1000"), date part and version in it
//! occurs in those claims' quotes, every term it puts in quotation marks as prose, and
//! every code span or identifier it names, occurs in them ([`crate::quoted`]), and it shares a floor of content words with them (the judge's floor, made a
//! little stricter: two words, or every one when it has fewer). The same check runs
//! when the report is written (a failing sentence is dropped and listed) and in
//! `deepr verify` (a failing sentence fails the gate, named).

use std::collections::BTreeSet;
use std::fmt;

use crate::normalise::normalise;
use crate::report::Verdict;
use crate::terms::{content_terms, numbers};

/// The version of these rules (and of the number and word helpers they use): it enters
/// the keys of the nodes that ground prose, so a changed rule never restores stale text.
/// 2: straight quotes inside code literals (`r"\""`) are not quotation; code spans and
/// identifiers (`Py_Initialize`, `getattr()`) must occur in the quotes.
/// 3: a whole number's leading zeros do not count: a sentence's "1 March 2014" stands on
/// a quote's "2014-03-01".
/// 4: the numbers of the cited documents' titles and dates count as held (a sentence
/// may name its source).
/// 5: a quote's snake_case label (`rail_otp_pct`) holds its words for the shared-word
/// floor.
/// 6: a term in quotation marks may be a cited document's title ("According to the
/// “Q1 2026 Operations Review”").
/// 7: a heading may name the section's documents as a sentence may (their titles' and
/// dates' numbers, their titles in quotation marks).
/// 8: a quote's snake_case labels hold their numbers ("complaints_per_100k") and what
/// their abbreviations stand for ("otp": on time performance); an amount written with
/// its magnitude stands on the amount written out ("100k" = "100,000").
/// 9: a percentage stands on the fraction a spreadsheet keeps ("42%" on "Gross margin
/// plan: 0.42"; a relayed writer lost two sentences there).
/// 10: a month written short holds its name ("Dec 31 2025" holds "December": a relayed
/// writer's headcount sentence was dropped for it); a quote whose column is in
/// thousands ("£000: 586") holds the amount written out ("£586,000").
pub const VERSION: u32 = 10;

/// Content words a sentence must share with its quotes (or all it has, if fewer).
pub const SHARED_WORDS_FLOOR: usize = 2;

/// What a cited claim brings to the check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CitedClaim {
    pub verdict: Verdict,
    /// The verbatim quotes of the claim's citations.
    pub quotes: Vec<String>,
    /// The titles and dates of the documents it cites, as the report lists them: a
    /// sentence may name its source ("the Material Contracts Register - as at 30
    /// September 2026"), so their numbers count as held; their words do not.
    pub sources: Vec<String>,
}

/// A cited document as a sentence may name it ([`CitedClaim::sources`]): its title and
/// its date. One form for the gate and for `deepr verify`, so that both hold the same
/// numbers.
pub fn source_name(title: &str, date: Option<&str>) -> String {
    match date {
        Some(date) => format!("{title} {date}"),
        None => title.to_string(),
    }
}

/// Why a sentence does not stand on its quotes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ungrounded {
    Empty,
    NoCitation,
    UnknownClaim(String),
    UnsupportedClaim(String),
    /// A cited claim has no quote to stand on.
    NoQuote(String),
    Number(String),
    QuotedTerm(String),
    /// Code the sentence names (a code span or an identifier) that no quote holds.
    CodeTerm(String),
    FewSharedWords {
        shared: usize,
        needed: usize,
    },
}

impl fmt::Display for Ungrounded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "the sentence is empty"),
            Self::NoCitation => write!(f, "cites no claim"),
            Self::UnknownClaim(id) => write!(
                f,
                "cites {id:?}, which is not a claim of this part of the report"
            ),
            Self::UnsupportedClaim(id) => {
                write!(f, "cites {id}, which the judge found unsupported")
            }
            Self::NoQuote(id) => write!(f, "cites {id}, which has no quote"),
            Self::Number(n) => write!(f, "the number {n} is in none of the cited quotes"),
            Self::QuotedTerm(t) => {
                write!(f, "the quoted term {t:?} is in none of the cited quotes")
            }
            Self::CodeTerm(t) => write!(f, "the code term `{t}` is in none of the cited quotes"),
            Self::FewSharedWords { shared, needed } => write!(
                f,
                "shares {shared} content word(s) with its quotes; at least {needed} needed"
            ),
        }
    }
}

pub use crate::quoted::{code_terms, quoted_terms};

/// Does a heading state only numbers and quoted terms that the section's quotes hold,
/// or its documents' names (`sources`: title and date, as a sentence may name them)?
/// (A heading cites nothing, so only what it could invent is checked.)
pub fn check_heading(
    heading: &str,
    quotes: &[String],
    sources: &[String],
) -> Result<(), Ungrounded> {
    let evidence = quotes.join("\n");
    let evidence_numbers: BTreeSet<String> = numbers(&evidence)
        .into_iter()
        .chain(numbers(&sources.join("\n")))
        .collect();
    if let Some(n) = numbers(heading)
        .into_iter()
        .find(|n| !evidence_numbers.contains(n))
    {
        return Err(Ungrounded::Number(n));
    }
    verbatim_terms_held(heading, &evidence, sources)
}

/// Are the terms `text` quotes and the code it names all in the evidence? A quoted
/// term may also be the name of a cited document (`sources`): "According to the
/// “Q1 2026 Operations Review”, …" names its source.
fn verbatim_terms_held(text: &str, evidence: &str, sources: &[String]) -> Result<(), Ungrounded> {
    let evidence_folded = normalise(evidence).to_lowercase();
    let held = |t: &String| evidence_folded.contains(&normalise(t).to_lowercase());
    let names: Vec<String> = sources
        .iter()
        .map(|s| normalise(s).to_lowercase())
        .collect();
    let names_it = |t: &String| {
        let term = normalise(t).to_lowercase();
        !term.trim().is_empty() && names.iter().any(|n| n.contains(&term))
    };
    if let Some(term) = quoted_terms(text)
        .into_iter()
        .find(|t| !held(t) && !names_it(t))
    {
        return Err(Ungrounded::QuotedTerm(term));
    }
    if let Some(term) = code_terms(text).into_iter().find(|t| !held(t)) {
        return Err(Ungrounded::CodeTerm(term));
    }
    Ok(())
}

/// Check one sentence against the claims it cites; `lookup` finds a claim by ID.
pub fn check_sentence(
    text: &str,
    claim_ids: &[String],
    lookup: impl Fn(&str) -> Option<CitedClaim>,
) -> Result<(), Ungrounded> {
    if text.trim().is_empty() {
        return Err(Ungrounded::Empty);
    }
    if claim_ids.is_empty() {
        return Err(Ungrounded::NoCitation);
    }
    let mut quotes: Vec<String> = Vec::new();
    let mut sources: Vec<String> = Vec::new();
    for id in claim_ids {
        let claim = lookup(id).ok_or_else(|| Ungrounded::UnknownClaim(id.clone()))?;
        if claim.verdict == Verdict::Unsupported {
            return Err(Ungrounded::UnsupportedClaim(id.clone()));
        }
        if claim.quotes.is_empty() {
            return Err(Ungrounded::NoQuote(id.clone()));
        }
        quotes.extend(claim.quotes);
        sources.extend(claim.sources);
    }
    let evidence = quotes.join("\n");
    // A column named `complaints_per_100k` (a table row's label) holds its words and
    // numbers as well as the identifier.
    let labels = evidence.replace('_', " ");
    let scaled = scaled_numbers(&labels);
    // "$4.62M" is "$4.62 million": a quote's magnitudes hold their words.
    let magnitude_words = if scaled.is_empty() {
        ""
    } else {
        "thousand million billion"
    };
    let evidence_numbers: BTreeSet<String> = numbers(&evidence)
        .into_iter()
        .chain(numbers(&labels))
        .chain(numbers(&sources.join("\n")))
        .chain(scaled.into_iter().map(|(_, value)| value))
        .collect();
    let evidence_numbers = with_thousands_written_out(evidence_numbers, &evidence);
    // A number written with its magnitude ("$4.6 million", "100k") stands on the
    // same amount written out ("4,600,000", "100,000"), and the other way round.
    let held_scaled: BTreeSet<String> = scaled_numbers(text)
        .into_iter()
        .filter(|(_, value)| evidence_numbers.contains(value))
        .map(|(mantissa, _)| mantissa)
        .collect();
    // A spreadsheet keeps a percentage as its fraction ("Gross margin plan: 0.42"):
    // "42%" stands on it.
    let fractions = fractions_as_percents(&evidence);
    let held_percents: BTreeSet<String> = percents(text)
        .into_iter()
        .filter(|n| fractions.contains(n))
        .collect();
    if let Some(n) = numbers(text).into_iter().find(|n| {
        !evidence_numbers.contains(n) && !held_scaled.contains(n) && !held_percents.contains(n)
    }) {
        return Err(Ungrounded::Number(n));
    }
    verbatim_terms_held(text, &evidence, &sources)?;
    let own: BTreeSet<String> = content_terms(text)
        .into_iter()
        .chain(content_terms(&months_spelt_out(text)))
        .collect();
    // A column named `rail_otp_pct` holds the words rail, otp and pct, and what its
    // abbreviations stand for (on-time performance, percent).
    let theirs: BTreeSet<String> = content_terms(&evidence)
        .into_iter()
        .chain(content_terms(&labels))
        .chain(content_terms(&label_abbreviations_spelt_out(&evidence)))
        .chain(content_terms(magnitude_words))
        .chain(content_terms(&months_spelt_out(&evidence)))
        .collect();
    let shared = own.intersection(&theirs).count();
    let needed = own.len().clamp(1, SHARED_WORDS_FLOOR);
    if shared < needed {
        return Err(Ungrounded::FewSharedWords { shared, needed });
    }
    Ok(())
}

/// The numbers `text` writes as percentages ("42%", "42.5 %"), as [`numbers`] reads them.
fn percents(text: &str) -> Vec<String> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let token = token.trim_end_matches(|c: char| ",.;:)".contains(c));
        let next = tokens.get(i + 1).copied().unwrap_or("");
        if token.ends_with('%') || next.starts_with('%') || next.starts_with("percent") {
            out.extend(numbers(token));
        }
    }
    out
}

/// A quote's decimal fractions (0 < x < 1, at most four places, no currency sign) as
/// the percentages they are: "0.42" → "42", "0.0385" → "3.85".
fn fractions_as_percents(evidence: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for token in evidence.split_whitespace() {
        let token = token.trim_end_matches(|c: char| ",.;:)".contains(c));
        let Some(places) = token.strip_prefix("0.") else {
            continue;
        };
        if places.is_empty() || places.len() > 4 || !places.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let Ok(fraction) = token.parse::<f64>() else {
            continue;
        };
        if fraction > 0.0 {
            let percent = format!("{:.2}", fraction * 100.0);
            let percent = percent.trim_end_matches('0').trim_end_matches('.');
            out.extend(numbers(percent));
        }
    }
    out
}

/// Each amount `text` writes with a magnitude ("100k", "$4.62M", "48.6 million"): its
/// number as [`numbers`] reads it and its value written out ("100000", "4620000").
fn scaled_numbers(text: &str) -> Vec<(String, String)> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        // A label's "100k:" is "100k".
        let token = token.trim_end_matches(':');
        let next = tokens.get(i + 1).copied().unwrap_or("");
        let Some((value, _)) = crate::amounts::amount_at(token, next) else {
            continue;
        };
        let Some(mantissa) = numbers(token).into_iter().next() else {
            continue;
        };
        let written = written_out(value);
        if written != mantissa {
            out.push((mantissa, written));
        }
    }
    out
}

/// An amount in units as [`numbers`] writes a number: whole without a point ("4620000"),
/// else as it is ("0.5").
fn written_out(value: f64) -> String {
    let whole = value.round();
    if (value - whole).abs() < 1e-6 * value.abs().max(1.0) {
        format!("{whole:.0}")
    } else {
        value.to_string()
    }
}

/// `numbers` with each written out in units when `evidence` says its figures are in
/// thousands (a column headed "£000" or "$'000", "in thousands"): a table's "£000: 586"
/// holds "£586,000".
fn with_thousands_written_out(numbers: BTreeSet<String>, evidence: &str) -> BTreeSet<String> {
    const MARKERS: [&str; 10] = [
        "£000", "$000", "€000", "£'000", "$'000", "€'000", "£000s", "$000s", "€000s", "000s",
    ];
    let lower = evidence.to_lowercase();
    let in_thousands = lower.contains("in thousands")
        || evidence
            .split(|c: char| c.is_whitespace() || matches!(c, '·' | ':' | '(' | ')' | '|'))
            .any(|token| MARKERS.contains(&token));
    if !in_thousands {
        return numbers;
    }
    let thousands: Vec<String> = numbers
        .iter()
        .filter_map(|n| n.parse::<f64>().ok())
        .map(|n| written_out(n * 1000.0))
        .collect();
    numbers.into_iter().chain(thousands).collect()
}

/// The months a text writes short ("Dec 31 2025", "Sept."), by name: a sentence's
/// "December" shares its word with a quote's "Dec", and a sentence's "Dec" with a
/// quote's "December".
fn months_spelt_out(text: &str) -> String {
    text.split(|c: char| !c.is_alphabetic())
        .filter_map(crate::stated_values::month_name)
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the abbreviations in a quote's snake_case labels stand for, as words: the
/// column `rail_otp_pct` holds "on time performance" and "percent", so a sentence
/// that spells them out shares those words with it. Only labels are read: an
/// abbreviation in prose is left as written.
fn label_abbreviations_spelt_out(evidence: &str) -> String {
    const SPELT_OUT: [(&str, &str); 16] = [
        ("pct", "percent percentage"),
        ("otp", "on time performance"),
        ("avg", "average"),
        ("qty", "quantity"),
        ("amt", "amount"),
        ("num", "number"),
        ("cnt", "count"),
        ("rev", "revenue"),
        ("yoy", "year over year"),
        ("ytd", "year to date"),
        ("mtd", "month to date"),
        ("ttm", "trailing twelve months"),
        ("hc", "headcount"),
        ("fte", "full time equivalent"),
        ("mdbf", "mean distance between failures"),
        ("sev", "severity"),
    ];
    evidence
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| word.contains('_'))
        .flat_map(|label| label.split('_'))
        .filter_map(|part| {
            let part = part.to_ascii_lowercase();
            SPELT_OUT
                .iter()
                .find(|(short, _)| *short == part)
                .map(|(_, long)| *long)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn claims() -> BTreeMap<&'static str, CitedClaim> {
        BTreeMap::from([
            (
                "c1",
                CitedClaim {
                    verdict: Verdict::Supported,
                    quotes: vec!["The default page size is 4096 bytes; at most 1,000 pages are cached by the \"page cache\".".into()],
                    sources: vec!["Pager Notes 2024-05-01".into()],
                },
            ),
            (
                "c2",
                CitedClaim {
                    verdict: Verdict::Unsupported,
                    quotes: vec!["The page size is 1024 bytes.".into()],
                    sources: Vec::new(),
                },
            ),
            (
                "c3",
                CitedClaim {
                    verdict: Verdict::Partial,
                    quotes: vec![],
                    sources: Vec::new(),
                },
            ),
        ])
    }

    fn check(text: &str, ids: &[&str]) -> Result<(), Ungrounded> {
        let claims = claims();
        let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        check_sentence(text, &ids, |id| claims.get(id).cloned())
    }

    /// A supported claim quoting one table row.
    fn row(quote: &str) -> CitedClaim {
        CitedClaim {
            verdict: Verdict::Supported,
            quotes: vec![quote.into()],
            sources: Vec::new(),
        }
    }

    #[test]
    fn a_table_rows_labels_hold_their_numbers_and_abbreviations() {
        let row_claim = row(
            "quarter: Q3 FY26 · rail_otp_pct: 93.1 · complaints_per_100k: 17.4 · arr_usd: $4.62M",
        );
        let ids = vec!["c1".to_string()];
        let check = |text: &str| check_sentence(text, &ids, |_| Some(row_claim.clone()));
        // Spelt out, the label's abbreviation and number still stand on it.
        assert_eq!(
            check("Light-rail on-time performance reached 93.1%."),
            Ok(())
        );
        assert_eq!(
            check("Complaints ran at 17.4 per 100,000 boardings."),
            Ok(())
        );
        assert_eq!(check("Its ARR was $4,620,000."), Ok(()));
        assert_eq!(check("Its ARR was $4.62 million."), Ok(()));
        // What the row does not hold still fails.
        assert_eq!(
            check("Complaints ran at 17.4 per 10,000 boardings."),
            Err(Ungrounded::Number("10000".into()))
        );
        assert_eq!(
            check("Its ARR was $4,700,000."),
            Err(Ungrounded::Number("4700000".into()))
        );
        assert!(matches!(
            check("Light rail performance reached 93.1%."),
            Ok(())
        ));
        assert!(matches!(
            check("Punctuality reached 93.1%."),
            Err(Ungrounded::FewSharedWords { .. })
        ));
        // An abbreviation in prose is not spelt out.
        let prose = row("The otp was 93.1 in Q3.");
        assert!(matches!(
            check_sentence(
                "Punctual performance reached 93.1 on time.",
                &ids,
                |_| Some(prose.clone())
            ),
            Err(Ungrounded::FewSharedWords { .. })
        ));
    }

    #[test]
    fn a_percentage_stands_on_the_fraction_a_sheet_keeps() {
        let sheet = row(
            "Quarter: Q2 2026 · Revenue plan ($M): 15.8 · Gross margin plan: 0.43 · Churn: 0.0385",
        );
        let lookup = |_: &str| Some(sheet.clone());
        let ids = ["c1".to_string()];
        let held = "In Q2 2026 the plan puts gross margin at 43% and churn at 3.85 %.";
        assert_eq!(check_sentence(held, &ids, lookup), Ok(()));
        // Only as a percentage, and only the fraction's own value.
        for wrong in [
            "In Q2 2026 the plan puts gross margin at 43 points.",
            "In Q2 2026 the plan puts gross margin at 44%.",
            "In Q2 2026 the plan puts gross margin at 4.3%.",
        ] {
            assert!(check_sentence(wrong, &ids, lookup).is_err(), "{wrong}");
        }
    }

    #[test]
    fn a_cited_documents_title_may_be_quoted() {
        let claims = claims();
        let ids = vec!["c1".to_string()];
        let lookup = |id: &str| claims.get(id).cloned();
        assert_eq!(
            check_sentence(
                "According to the \"Pager Notes\", the default page size is 4096 bytes.",
                &ids,
                lookup
            ),
            Ok(())
        );
        assert_eq!(
            check_sentence(
                "According to the \"Pager Handbook\", the default page size is 4096 bytes.",
                &ids,
                lookup
            ),
            Err(Ungrounded::QuotedTerm("Pager Handbook".into()))
        );
    }

    #[test]
    fn a_rows_snake_case_labels_hold_their_words() {
        let row_claim = row("quarter: Q3 FY26 · bus_otp_pct: 84.7 · rail_otp_pct: 93.1");
        let ids = vec!["r1".to_string()];
        let lookup = |_: &str| Some(row_claim.clone());
        // "otp" stands for on-time performance (prose version 8).
        assert_eq!(
            check_sentence("Rail on-time performance slipped to 93.1%.", &ids, lookup),
            Ok(())
        );
        assert_eq!(
            check_sentence("Rail punctuality slipped to 93.1%.", &ids, lookup),
            Err(Ungrounded::FewSharedWords {
                shared: 1,
                needed: 2
            }),
            "punctuality is not in the row"
        );
        assert_eq!(
            check_sentence("Rail OTP was 93.1% in the quarter.", &ids, lookup),
            Ok(())
        );
    }

    #[test]
    fn a_grounded_sentence_stands_and_numbers_compare_canonically() {
        assert_eq!(
            check(
                "Pages default to 4096 bytes, and up to 1000 pages are cached.",
                &["c1"]
            ),
            Ok(())
        );
        assert_eq!(
            check("The \"Page Cache\" holds at most 1,000 pages.", &["c1"]),
            Ok(())
        );
    }

    #[test]
    fn a_heading_may_name_its_documents_as_a_sentence_may() {
        let quotes = vec!["The depot opened on 9 February.".to_string()];
        let sources = vec!["Q1 2026 Operations Review (2026-04-08)".to_string()];
        assert_eq!(
            check_heading("The Columbus Depot in 2026", &quotes, &sources),
            Ok(())
        );
        assert_eq!(
            check_heading(
                "What the “Q1 2026 Operations Review” Says",
                &quotes,
                &sources
            ),
            Ok(())
        );
        assert_eq!(
            check_heading("The Columbus Depot in 2027", &quotes, &sources),
            Err(Ungrounded::Number("2027".into()))
        );
        assert_eq!(
            check_heading("The Columbus Depot in 2026", &quotes, &[]),
            Err(Ungrounded::Number("2026".into()))
        );
    }

    #[test]
    fn a_figure_or_date_may_be_written_as_prose_writes_it() {
        // What the write and synthesize prompts promise: "52000" may be written
        // "52,000", "2025-12-10" "December 10, 2025", "Mar 31 2026" "March 31, 2026".
        let quoted = |quote: &str| CitedClaim {
            verdict: Verdict::Supported,
            quotes: vec![quote.into()],
            sources: Vec::new(),
        };
        let ids = vec!["c1".to_string()];
        let holds =
            |text: &str, quote: &str| check_sentence(text, &ids, |_| Some(quoted(quote))).is_ok();
        assert!(holds(
            "The list price is $52,000.",
            "Item: S5 · List price (USD): 52000"
        ));
        let meeting = "Meeting date: 2025-12-10 · Venue: Dayton";
        assert!(holds(
            "The meeting in Dayton was on December 10, 2025.",
            meeting
        ));
        assert!(holds(
            "The headcount plan is 365 at the quarter end of March 31, 2026.",
            "Quarter end: Mar 31 2026 · Headcount plan: 365"
        ));
        // A month written short holds its name for the shared words (a relayed
        // writer's sentence on a headcount row).
        let headcount = "Department: Total · Dec 31 2025 actual: 299 · Mar 31 2026 actual: 318 · Dec 31 2026 plan: 365";
        assert!(holds(
            "Headcount grew from 299 at December 31, 2025 to 318 at March 31, 2026, against a year-end plan of 365.",
            headcount
        ));
        assert!(!holds(
            "Revenue grew from 299 in 2025 to 318 in 2026, against a budget of 365.",
            headcount
        ));
        // A column in thousands holds its amounts written out, and only then.
        let recall = "Item: Retailer recall charges and lost margin · £000: 586";
        assert!(holds(
            "Retailer recall charges and lost margin cost £586,000.",
            recall
        ));
        assert!(!holds(
            "Retailer recall charges and lost margin cost £586,000.",
            "Item: Retailer recall charges and lost margin · Cost: 586"
        ));
        // Another day is another figure.
        assert!(!holds(
            "The meeting in Dayton was on December 11, 2025.",
            meeting
        ));
    }

    #[test]
    fn a_sentence_may_name_its_source_with_the_numbers_of_its_title_and_date() {
        // c1 cites "Pager Notes 2024-05-01": its date's numbers count, its words do not.
        assert_eq!(
            check(
                "The Pager Notes of 1 May 2024 set pages to 4096 bytes by default.",
                &["c1"]
            ),
            Ok(())
        );
        // A year neither its quotes nor its sources hold is still invented.
        assert_eq!(
            check("Pages default to 4096 bytes since 2023.", &["c1"]),
            Err(Ungrounded::Number("2023".into()))
        );
    }

    #[test]
    fn each_failure_is_named() {
        assert_eq!(
            check("Pages default to 8192 bytes.", &["c1"]),
            Err(Ungrounded::Number("8192".into()))
        );
        assert_eq!(
            check("Pages are 4096 bytes.", &["c9"]),
            Err(Ungrounded::UnknownClaim("c9".into()))
        );
        assert_eq!(
            check("Pages are 1024 bytes.", &["c2"]),
            Err(Ungrounded::UnsupportedClaim("c2".into()))
        );
        assert_eq!(
            check("Pages are 4096 bytes.", &["c3"]),
            Err(Ungrounded::NoQuote("c3".into()))
        );
        assert_eq!(
            check("Pages are 4096 bytes.", &[]),
            Err(Ungrounded::NoCitation)
        );
        assert_eq!(check("  ", &["c1"]), Err(Ungrounded::Empty));
        assert_eq!(
            check("The \"buffer pool\" holds pages.", &["c1"]),
            Err(Ungrounded::QuotedTerm("buffer pool".into()))
        );
        assert_eq!(
            check("Bananas are yellow and sweet.", &["c1"]),
            Err(Ungrounded::FewSharedWords {
                shared: 0,
                needed: 2
            })
        );
    }

    fn cited(quote: &str) -> impl Fn(&str) -> Option<CitedClaim> + '_ {
        move |_| {
            Some(CitedClaim {
                verdict: Verdict::Supported,
                quotes: vec![quote.to_string()],
                sources: Vec::new(),
            })
        }
    }

    #[test]
    fn code_literals_in_prose_are_not_quotations() {
        // The sentence a capable model wrote and the old rule dropped: the quotes of two
        // string literals were paired as one quotation.
        let quote = r#"Even in a raw literal, quotes can be escaped with a backslash, but the backslash remains in the result; for example, r"\"" is a valid string literal consisting of two characters: a backslash and a double quote; r"\" is not a valid string literal (even a raw string cannot end in an odd number of backslashes)."#;
        let sentence = r#"No: a raw string literal cannot end in an odd number of backslashes, because a backslash still escapes the closing quote while staying in the string, which is why r"\"" is a valid two-character string but r"\" is invalid."#;
        assert_eq!(
            check_sentence(sentence, &["c1".into()], cited(quote)),
            Ok(())
        );
    }

    #[test]
    fn an_invented_identifier_is_dropped_like_a_number() {
        let quote = "The Py_Initialize() function initializes the interpreter; call it before using any other Python/C API function.";
        let ids = ["c1".to_string()];
        assert_eq!(
            check_sentence(
                "Call `Py_Initialize` before any other Python/C API function.",
                &ids,
                cited(quote)
            ),
            Ok(())
        );
        assert_eq!(
            check_sentence(
                "Call Py_Initialize() before any other API function.",
                &ids,
                cited(quote)
            ),
            Ok(())
        );
        assert_eq!(
            check_sentence(
                "Call `Py_InitializeEx` before any other Python/C API function.",
                &ids,
                cited(quote)
            ),
            Err(Ungrounded::CodeTerm("Py_InitializeEx".into()))
        );
        assert_eq!(
            check_sentence(
                "Call Py_PreInitialize() to initialize the interpreter first.",
                &ids,
                cited(quote)
            ),
            Err(Ungrounded::CodeTerm("Py_PreInitialize".into()))
        );
        // Numbers in code-heavy prose follow the same rule: a version the quote lacks fails.
        assert_eq!(
            check_sentence(
                "Since v3.12, Py_Initialize() initializes the interpreter.",
                &ids,
                cited(quote)
            ),
            Err(Ungrounded::Number("3.12".into()))
        );
    }
}
