//! What score hands a model to read: a document follow-up's document alone, and a short
//! list whole when two of its items made the pool.

use super::*;

#[tokio::test]
async fn a_document_followup_reads_its_document_alone() {
    let commit = ArchivedText::new(
        "The commit journal is written before the database changes. \
         A commit journal survives a power loss.",
    );
    let vacancies = ArchivedText::new(
        "Vacancy rate by depot in April 2026. Northside depot vacancy rate 10.4%. \
         Eastgate depot vacancy rate 6.1%.",
    );
    let docs = vec![
        (doc_of(&commit, "Commit", None, None), 1.0),
        (
            doc_of(&vacancies, "vacancy extract 2026 04", None, None),
            0.5,
        ),
    ];
    let archive = Archive(BTreeMap::from([
        (commit.content_sha256.clone(), commit.clone()),
        (vacancies.content_sha256.clone(), vacancies.clone()),
    ]));
    let fetched = FetchOut {
        docs,
        failures: vec![],
    };
    let question =
        "What does the documentation say about “vacancy extract 2026 04”? commit journal";
    let asked = asked::fetched_document("vacancy extract 2026 04", &fetched);
    assert_eq!(asked, Some(vacancies.content_sha256.as_str()));
    assert_eq!(
        pool_documents(&fetched, &archive, question, asked).await,
        BTreeSet::from([vacancies.content_sha256.clone()])
    );
    // Not fetched (or no follow-up): every document's units are candidates.
    let both = BTreeSet::from([
        commit.content_sha256.clone(),
        vacancies.content_sha256.clone(),
    ]);
    assert_eq!(
        pool_documents(&fetched, &archive, question, Some("not-fetched")).await,
        both
    );
    assert_eq!(
        pool_documents(&fetched, &archive, question, None).await,
        both
    );
}

/// The documents of a model reader's candidates, reading only `document` when given.
async fn pool_documents(
    fetched: &FetchOut,
    archive: &dyn TextArchive,
    question: &str,
    document: Option<&str>,
) -> BTreeSet<String> {
    let none = BTreeSet::new();
    let scopes = crate::triage::TriageOut::default();
    let earlier = Earlier {
        cited: &none,
        scopes: &scopes,
        document,
    };
    run(
        fetched,
        question,
        question,
        &[],
        earlier,
        archive,
        None,
        30,
        Reader::Model,
    )
    .await
    .candidates
    .into_iter()
    .map(|c| c.content_sha256)
    .collect()
}

#[tokio::test]
async fn a_model_reads_a_short_list_whole_when_two_of_its_items_made_the_pool() {
    let text = ArchivedText::new(
        "The union ballot closed in February.\n\n\
         - A two-year pay agreement was reached with the union on 24 February 2026\n\n\
         - Year one: 4.2% on all basic rates from 1 April 2026\n\n\
         - Year two: CPI plus 0.5%, with a floor of 2.5%\n\n\
         - Shift allowance rises to 17% of basic pay from 1 April 2026\n\n\
         The Ashby site has 547 staff.",
    );
    let (fetched, archive) = one_document(&text, "People Report");
    let question = "What was the latest pay deal?";
    let pool = |reader| rank(&fetched, question, question, &archive, None, 2, reader);
    let sentences = |out: ScoreOut| -> Vec<String> {
        out.candidates
            .iter()
            .map(|c| {
                text.sentences[c.sentence as usize]
                    .text(&text.text)
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    let model = sentences(pool(Reader::Model).await);
    assert_eq!(model.len(), 4, "{model:#?}");
    assert!(model.iter().any(|s| s.contains("4.2%")), "{model:#?}");
    let heuristic = sentences(pool(Reader::Heuristic).await);
    assert_eq!(heuristic.len(), 2, "{heuristic:#?}");
}
