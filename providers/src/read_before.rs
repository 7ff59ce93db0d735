//! What an earlier run read, searched and served again without a fetch: the documents
//! behind a follow-up question (`deepr ask`). [`ReadBefore`] is a search provider
//! (`earlier`: BM25 over the documents' archived sentences, a document ranked by its
//! best sentence) and [`ArchivedFirst`] a fetcher that serves every document the
//! earlier run read from the archive — a web page among them is never fetched again —
//! and hands anything else to the fetcher it wraps.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use deepr_evidence::report::CallStatus;
use deepr_orchestrator::{
    DocMeta, FetchOutcome, Fetcher, SearchHit, SearchOutcome, SearchProvider, TextArchive,
};

use crate::SentenceIndex;

/// The name the earlier run's documents go by in `--sources`-like lists and coverage.
pub const EARLIER: &str = "earlier";

/// The documents an earlier run read, indexed by sentence.
pub struct ReadBefore {
    /// By content hash; the first of several locators with the same text wins.
    docs: BTreeMap<String, DocMeta>,
    index: SentenceIndex,
    snippets: BTreeMap<(String, u32), String>,
}

impl ReadBefore {
    /// Indexes `docs` from their archived texts; a document whose text the archive no
    /// longer holds is left out and counted in the second value.
    pub fn new(docs: &[DocMeta], archive: &dyn TextArchive) -> Result<(Self, usize), String> {
        let mut kept: BTreeMap<String, DocMeta> = BTreeMap::new();
        let mut texts = Vec::new();
        let mut missing = 0;
        for doc in docs {
            if kept.contains_key(&doc.content_sha256) {
                continue;
            }
            match archive.get(&doc.content_sha256) {
                Some(text) => {
                    kept.insert(doc.content_sha256.clone(), doc.clone());
                    texts.push(text);
                }
                None => missing += 1,
            }
        }
        let mut snippets = BTreeMap::new();
        let mut sentences: Vec<(String, u32, String)> = Vec::new();
        for text in &texts {
            for i in 0..text.sentences.len() {
                let index = u32::try_from(i).unwrap_or(u32::MAX);
                if let Some(sentence) = text.sentence(index) {
                    sentences.push((text.content_sha256.clone(), index, sentence.to_string()));
                }
            }
        }
        let index = SentenceIndex::build(
            sentences
                .iter()
                .map(|(key, i, text)| (key.as_str(), *i, text.as_str())),
        )?;
        for (key, i, text) in sentences {
            snippets.insert((key, i), text.chars().take(300).collect());
        }
        Ok((
            Self {
                docs: kept,
                index,
                snippets,
            },
            missing,
        ))
    }

    /// How many documents it searches.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The documents for `query`, best first: each by its best sentence.
    pub fn ranked(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        let sentences = self.index.search(query, limit * 20).unwrap_or_default();
        let mut hits: Vec<SearchHit> = Vec::new();
        for (key, sentence) in sentences {
            if hits.len() >= limit {
                break;
            }
            let Some(doc) = self.docs.get(&key) else {
                continue;
            };
            if hits.iter().any(|h| h.locator == doc.locator) {
                continue;
            }
            hits.push(SearchHit {
                doc_key: doc.doc_key.clone(),
                locator: doc.locator.clone(),
                title: doc.title.clone(),
                score: 1.0 / (1.0 + hits.len() as f64),
                snippet: self
                    .snippets
                    .get(&(key, sentence))
                    .cloned()
                    .unwrap_or_default(),
            });
        }
        hits
    }

    /// Whether the documents say anything on `question`: one of its best sentences
    /// holds at least half of the question's content words (a stray shared word is
    /// not an answer).
    pub fn speaks_to(&self, question: &str) -> bool {
        let asked: std::collections::BTreeSet<String> =
            deepr_evidence::terms::content_terms(question)
                .into_iter()
                .collect();
        if asked.is_empty() {
            return false;
        }
        let needed = asked.len().div_ceil(2);
        self.index
            .search(question, 20)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|key| self.snippets.get(&key))
            .any(|sentence| {
                let held: std::collections::BTreeSet<String> =
                    deepr_evidence::terms::content_terms(sentence)
                        .into_iter()
                        .collect();
                asked.intersection(&held).count() >= needed
            })
    }

    fn by_locator(&self, locator: &str) -> Option<&DocMeta> {
        self.docs.values().find(|d| d.locator == locator)
    }
}

#[async_trait]
impl SearchProvider for ReadBefore {
    fn name(&self) -> String {
        EARLIER.to_string()
    }

    async fn search(&self, query: &str, limit: usize) -> SearchOutcome {
        let hits = self.ranked(query, limit);
        SearchOutcome {
            status: if hits.is_empty() {
                CallStatus::NoResults
            } else {
                CallStatus::Ok
            },
            hits,
            detail: None,
        }
    }
}

/// Serves the documents an earlier run read from the archive; anything else goes to
/// `inner`.
pub struct ArchivedFirst {
    pub read: Arc<ReadBefore>,
    pub inner: Arc<dyn Fetcher>,
}

#[async_trait]
impl Fetcher for ArchivedFirst {
    async fn fetch(&self, hit: &SearchHit) -> FetchOutcome {
        match self.read.by_locator(&hit.locator) {
            Some(doc) => FetchOutcome {
                status: CallStatus::Ok,
                doc: Some(doc.clone()),
                detail: None,
            },
            None => self.inner.fetch(hit).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deepr_orchestrator::ArchivedText;

    struct Texts(BTreeMap<String, ArchivedText>);
    impl TextArchive for Texts {
        fn get(&self, content_sha256: &str) -> Option<ArchivedText> {
            self.0.get(content_sha256).cloned()
        }
    }

    struct Refuses;
    #[async_trait]
    impl Fetcher for Refuses {
        async fn fetch(&self, _: &SearchHit) -> FetchOutcome {
            FetchOutcome {
                status: CallStatus::Unreachable,
                doc: None,
                detail: Some("the network was asked".into()),
            }
        }
    }

    fn doc(locator: &str, text: &ArchivedText) -> DocMeta {
        DocMeta {
            doc_key: locator.into(),
            locator: locator.into(),
            title: locator.into(),
            content_sha256: text.content_sha256.clone(),
            date: None,
            authority: 0.5,
            outline: Default::default(),
        }
    }

    #[tokio::test]
    async fn an_earlier_runs_pages_are_searched_and_served_without_a_fetch() {
        let wal = ArchivedText::new(
            "WAL appends frames to a separate file. A checkpoint copies them back.",
        );
        let journal = ArchivedText::new("The rollback journal holds the original pages.");
        let archive = Texts(
            [&wal, &journal]
                .iter()
                .map(|t| (t.content_sha256.clone(), (*t).clone()))
                .collect(),
        );
        let lost = DocMeta {
            content_sha256: "0".repeat(64),
            ..doc("https://example.org/gone", &wal)
        };
        let docs = [
            doc("https://example.org/wal", &wal),
            doc("journal.html", &journal),
            lost,
        ];
        let (read, missing) = ReadBefore::new(&docs, &archive).expect("indexed");
        assert_eq!((read.len(), missing), (2, 1));
        let found = read.search("what does a checkpoint copy", 5).await;
        assert_eq!(found.hits[0].locator, "https://example.org/wal");
        assert!(found.hits[0].snippet.contains("checkpoint"));
        assert_eq!(read.search("zebra", 5).await.status, CallStatus::NoResults);
        assert!(read.speaks_to("When does a checkpoint copy frames?"));
        assert!(!read.speaks_to("Which frames do zebras eat at a checkpoint of the savanna?"));

        let fetcher = ArchivedFirst {
            read: Arc::new(read),
            inner: Arc::new(Refuses),
        };
        let served = fetcher.fetch(&found.hits[0]).await;
        assert_eq!(served.status, CallStatus::Ok, "{:?}", served.detail);
        let elsewhere = SearchHit {
            locator: "https://example.org/new".into(),
            ..found.hits[0].clone()
        };
        assert_eq!(
            fetcher.fetch(&elsewhere).await.status,
            CallStatus::Unreachable
        );
    }
}
