//! What the report says of its sources beyond their scores: dates and document statuses beside
//! the sources of a disagreement (the newer marked), and the corpus files read and not
//! read, each with its reason.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use deepr_evidence::report::{Claim, Report, Verdict};

use deepr_orchestrator::TextArchive;

use crate::research::ResearchResult;
use crate::types::Rerank;

use crate::escape::md_text;

/// The newest date among the sources a conflict's claims cite, when they differ (an
/// old-versus-new disagreement).
pub(crate) fn newest_date(
    report: &Report,
    conflict: &deepr_evidence::report::Conflict,
    claims: &BTreeMap<&str, &Claim>,
) -> Option<String> {
    let dates: BTreeSet<&str> = conflict
        .claims
        .iter()
        .filter_map(|id| claims.get(id.as_str()))
        .flat_map(|claim| &claim.citations)
        .filter_map(|c| report.sources.iter().find(|s| s.id == c.source))
        .filter_map(|s| s.date.as_deref())
        .collect();
    (dates.len() > 1)
        .then(|| dates.last().map(|d| d.to_string()))
        .flatten()
}

/// `S2 (2026-04-14, newer)`: a source id with its date and document status, the newest of a
/// disagreement marked.
pub(crate) fn dated_source(report: &Report, id: &str, newest: Option<&str>) -> String {
    let Some(source) = report.sources.iter().find(|s| s.id == id) else {
        return id.to_string();
    };
    let mut notes: Vec<String> = source
        .date
        .iter()
        .chain(&source.doc_status)
        .map(|n| md_text(n))
        .collect();
    if newest.is_some() && source.date.as_deref() == newest {
        notes.push("newer".into());
    }
    if notes.is_empty() {
        id.to_string()
    } else {
        format!("{id} ({})", notes.join(", "))
    }
}

/// The corpus files line of References, and every file not read with its reason.
pub(crate) fn corpus_files(out: &mut String, files: Option<&deepr_evidence::report::CorpusFiles>) {
    let Some(files) = files else { return };
    let documents = if files.documents > files.read {
        format!(" ({} documents)", files.documents)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "\nCorpus: {} files read{documents}, {} not read.",
        files.read,
        files.skipped.len()
    );
    for file in &files.skipped {
        let _ = writeln!(
            out,
            "- not read: `{}` — {}",
            file.path.replace('`', "'"),
            md_text(&file.reason)
        );
    }
    for file in &files.partial {
        let _ = writeln!(
            out,
            "- read in part: `{}` — {}",
            file.path.replace('`', "'"),
            md_text(&file.reason)
        );
    }
}

/// How candidate sentences were ranked, for the reader: by words alone (no embedding
/// model), or re-ranked by meaning, and where re-ranking failed.
pub fn ranking_line(reranks: &[Option<Rerank>]) -> Option<String> {
    if reranks.is_empty() {
        return None;
    }
    let used: Vec<&Rerank> = reranks.iter().flatten().collect();
    let Some(first) = used.first() else {
        return Some(
            "Ranking: candidate sentences by their words only (BM25 retrieval, rarer question terms weigh more); no sentence-embedding model was found, so none was re-ranked by meaning."
                .to_string(),
        );
    };
    let pool = used.iter().map(|r| r.sentences).max().unwrap_or(0);
    let mut line = format!(
        "Ranking: candidate sentences by their words, then up to {pool} per subquestion re-ranked by meaning with {} (run locally, no tokens).",
        first.model.clone()
    );
    let failed: Vec<&Rerank> = used
        .iter()
        .copied()
        .filter(|r| r.failure.is_some())
        .collect();
    if let Some(failure) = failed.first().and_then(|r| r.failure.as_deref()) {
        let _ = write!(
            line,
            " Re-ranking failed for {} of {} subquestions, which kept their word order: {}",
            failed.len(),
            reranks.len(),
            failure
        );
    }
    Some(line)
}

/// Where the quote starting at `sentence` of a source stands in its file (`page=3`),
/// from the outline its reader kept.
pub(crate) fn place_of(
    result: &ResearchResult,
    archive: &dyn TextArchive,
    content_sha256: &str,
    sentence: u32,
) -> Option<String> {
    let outline = &result.sources.get(content_sha256)?.doc.outline;
    if outline.places.is_empty() {
        return None;
    }
    let start = archive
        .get(content_sha256)?
        .sentences
        .get(sentence as usize)?
        .start;
    outline.fragment_at(start).map(str::to_string)
}
/// `## References`: the research line, ranking, sources, corpus files, search coverage,
/// unreadable sources and degraded nodes.
pub fn references_section(out: &mut String, report: &Report, result: &ResearchResult) {
    let article = &report.article;
    let supported = report
        .claims
        .iter()
        .filter(|c| c.verdict == Verdict::Supported)
        .count();
    let _ = writeln!(out, "## References\n");
    let _ = writeln!(
        out,
        "Research: {} subquestions over {} round(s); {} claims, {} supported; {} sources; {} words in the text above.\n",
        report.subquestions.len(),
        result.rounds,
        report.claims.len(),
        supported,
        report.sources.len(),
        crate::article::body_words(article),
    );
    if let Some(line) = ranking_line(&result.reranks) {
        let _ = writeln!(out, "{}\n", md_text(&line));
    }
    let (off_topic, sources): (Vec<_>, Vec<_>) =
        report.sources.iter().partition(|s| s.off_topic.is_some());
    for source in sources {
        let author = source.author.as_ref().map(|a| format!("from {a}"));
        let dated: String = [&author, &source.date, &source.doc_status]
            .into_iter()
            .flatten()
            .map(|part| format!("{}, ", md_text(part)))
            .collect();
        let _ = writeln!(
            out,
            "- **{}** {} — `{}` ({}score {:.2}, {})",
            source.id,
            md_text(&source.title),
            source.locator.replace('`', "'"),
            dated,
            source.score,
            source.status
        );
    }
    if !off_topic.is_empty() {
        let _ = writeln!(out, "\nRead and judged off-topic (left out of the text):");
        for source in off_topic {
            let _ = writeln!(
                out,
                "- **{}** {} — `{}`: {}",
                source.id,
                md_text(&source.title),
                source.locator.replace('`', "'"),
                md_text(source.off_topic.as_deref().unwrap_or(""))
            );
        }
    }
    corpus_files(out, report.corpus_files.as_ref());
    let _ = writeln!(
        out,
        "\n### Search coverage\n\n| provider | query | status | hits |\n|---|---|---|---|"
    );
    for c in &report.coverage {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            c.provider,
            md_text(&c.query).replace('|', "\\|"),
            c.status.as_str(),
            c.hits
        );
    }
    if !result.fetch_failures.is_empty() {
        let _ = writeln!(out, "\nSources that could not be read:");
        let mut failures: Vec<_> = result
            .fetch_failures
            .iter()
            .map(|f| (f.locator.clone(), f.status.clone()))
            .collect();
        failures.sort();
        failures.dedup();
        for (locator, status) in failures {
            let _ = writeln!(out, "- `{locator}`: {status}");
        }
    }
    if !result.degraded.is_empty() {
        let _ = writeln!(
            out,
            "\nNodes where the model's answer was unusable and the offline heuristic answered:"
        );
        for (node, why) in &result.degraded {
            let _ = writeln!(out, "- {node}: {}", md_text(why));
        }
    }
}
