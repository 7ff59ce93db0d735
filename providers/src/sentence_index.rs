//! A BM25 index over single sentences, in memory: the plain-retrieval baseline that
//! `deepr bench --qa` compares deepr's quotes against (the same tokenizer as the corpus
//! index, so the comparison is about the pipeline, not about tokenization).

use std::collections::BTreeSet;

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, STORED, STRING,
};
use tantivy::{doc, Index, TantivyDocument, Term};

use crate::analyzer::{MultiScriptTokenizer, TOKENIZER_NAME};

pub struct SentenceIndex {
    index: Index,
    key: tantivy::schema::Field,
    body: tantivy::schema::Field,
    analyzer: MultiScriptTokenizer,
}

impl SentenceIndex {
    /// Index `(document key, sentence index, sentence text)` triples.
    pub fn build<'a>(
        sentences: impl IntoIterator<Item = (&'a str, u32, &'a str)>,
    ) -> Result<Self, String> {
        let mut builder = Schema::builder();
        let key = builder.add_text_field("key", STRING | STORED);
        let indexing = TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER_NAME)
            .set_index_option(IndexRecordOption::WithFreqs);
        let body = builder.add_text_field(
            "body",
            TextOptions::default().set_indexing_options(indexing),
        );
        let index = Index::create_in_ram(builder.build());
        let analyzer = MultiScriptTokenizer::default();
        index.tokenizers().register(
            TOKENIZER_NAME,
            tantivy::tokenizer::TextAnalyzer::from(analyzer.clone()),
        );
        let mut writer: tantivy::IndexWriter = index
            .writer_with_num_threads(1, 50_000_000)
            .map_err(|e| e.to_string())?;
        for (doc_key, sentence, text) in sentences {
            writer
                .add_document(doc!(key => format!("{doc_key}\u{1f}{sentence}"), body => text))
                .map_err(|e| e.to_string())?;
        }
        writer.commit().map_err(|e| e.to_string())?;
        Ok(Self {
            index,
            key,
            body,
            analyzer,
        })
    }

    /// The best `k` sentences for `query`: (document key, sentence index), ties by key.
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<(String, u32)>, String> {
        let mut analyzer = self.analyzer.clone();
        let mut seen = BTreeSet::new();
        let clauses: Vec<(Occur, Box<dyn Query>)> = analyzer
            .terms(query)
            .into_iter()
            .filter(|t| seen.insert(t.clone()))
            .map(|t| {
                (
                    Occur::Should,
                    Box::new(TermQuery::new(
                        Term::from_field_text(self.body, &t),
                        IndexRecordOption::WithFreqs,
                    )) as Box<dyn Query>,
                )
            })
            .collect();
        if clauses.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let reader = self.index.reader().map_err(|e| e.to_string())?;
        let searcher = reader.searcher();
        let top = searcher
            .search(
                &BooleanQuery::new(clauses),
                &TopDocs::with_limit(k * 2 + 10).order_by_score(),
            )
            .map_err(|e| e.to_string())?;
        let mut hits: Vec<(f32, String)> = Vec::new();
        for (score, address) in top {
            let stored: TantivyDocument = searcher.doc(address).map_err(|e| e.to_string())?;
            if let Some(key) = stored.get_first(self.key).and_then(|v| v.as_str()) {
                hits.push((score, key.to_string()));
            }
        }
        hits.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        Ok(hits
            .into_iter()
            .take(k)
            .filter_map(|(_, key)| {
                let (doc, sentence) = key.rsplit_once('\u{1f}')?;
                Some((doc.to_string(), sentence.parse().ok()?))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_the_matching_sentence() {
        let index = super::SentenceIndex::build([
            ("a", 0, "The journal is deleted at commit."),
            ("a", 1, "Cats sleep a lot."),
            ("b", 0, "WAL appends frames to a log."),
        ])
        .expect("index");
        assert_eq!(
            index
                .search("when is the journal deleted", 1)
                .expect("search"),
            [("a".to_string(), 0)]
        );
        assert!(index.search("the of and", 3).expect("search").is_empty());
    }
}
