//! `deepr verify`'s quote checks: each citation row against the archived text it was
//! cut from (an export bundle's, or the state dir's archive), and with `--live` against
//! its URL source as the page is now.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use deepr_checkpoints::FileArchive;
use deepr_evidence::verify::{
    check_against_archive, check_against_live, check_hashes, CitationCheck, RowVerdict,
};
use deepr_orchestrator::TextArchive;

use crate::Failure;

/// Where source texts come from.
pub enum Texts {
    Bundle(BTreeMap<String, String>),
    Archive(Option<FileArchive>),
}

impl Texts {
    fn get(&self, sha: &str) -> Option<String> {
        match self {
            Self::Bundle(texts) => texts.get(sha).cloned(),
            Self::Archive(Some(archive)) => archive.get(sha).map(|t| t.text.to_string()),
            Self::Archive(None) => None,
        }
    }
}

/// `--live`: URL sources fetched again (at most `max` pages), each page once.
pub struct Live {
    http: deepr_providers::HttpClient,
    runtime: tokio::runtime::Runtime,
    max: usize,
    pages: BTreeMap<String, Result<String, String>>,
}

impl Live {
    pub fn new(allow_private: bool, max: usize) -> Result<Self, Failure> {
        let http =
            deepr_providers::HttpClient::new(allow_private, Duration::from_secs(20), 20 << 20)
                .map_err(|e| Failure::Run(anyhow::anyhow!(e)))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Failure::Run(e.into()))?;
        Ok(Self {
            http,
            runtime,
            max,
            pages: BTreeMap::new(),
        })
    }

    /// The page's text now; `None` once the fetch limit is reached.
    fn page(&mut self, locator: &str) -> Option<Result<String, String>> {
        if let Some(page) = self.pages.get(locator) {
            return Some(page.clone());
        }
        if self.pages.len() >= self.max {
            return None;
        }
        let fetched = self
            .runtime
            .block_on(self.http.get(locator))
            .map_err(|e| e.to_string())
            .and_then(|page| {
                let (format, bytes) =
                    deepr_providers::web::page_bytes(&page.content_type, locator, &page.body)
                        .ok_or_else(|| {
                            format!("{} is not a readable document type", page.content_type)
                        })?;
                deepr_providers::reading::read_bounded(bytes, format)
                    .map(|e| e.text)
                    .map_err(|e| format!("page text unreadable: {e}"))
            });
        self.pages.insert(locator.to_string(), fetched.clone());
        Some(fetched)
    }
}

/// Checks citation rows against the texts they were cut from (and, with `--live`, the
/// pages as they are now).
pub struct Checker<'a> {
    pub texts: &'a Texts,
    /// The archived texts the state dir indexed under each locator (read once, when a
    /// footnote without a sidecar needs them).
    pub locators: std::cell::OnceCell<BTreeMap<String, Vec<String>>>,
    pub state_dir: Option<&'a Path>,
    pub live: Option<Live>,
    pub warnings: Vec<String>,
}

impl Checker<'_> {
    /// Every row's verdict, in row order, and the warnings met on the way.
    pub fn check_all(
        mut self,
        rows: &[CitationCheck],
        mut preset: BTreeMap<usize, RowVerdict>,
    ) -> (Vec<RowVerdict>, Vec<String>) {
        let verdicts = rows
            .iter()
            .map(|row| match preset.remove(&row.row) {
                Some(verdict) => verdict,
                None => self.check(row),
            })
            .collect();
        (verdicts, self.warnings)
    }

    fn check(&mut self, row: &CitationCheck) -> RowVerdict {
        if row.locator.is_empty() {
            return RowVerdict::Failed(format!(
                "citation names {}, which is not a listed source",
                row.source
            ));
        }
        if let Some(verdict) = check_hashes(row) {
            return verdict;
        }
        let verdict = self.against_archive(row);
        let is_url = row.locator.starts_with("http://") || row.locator.starts_with("https://");
        if !is_url {
            return verdict;
        }
        self.against_live(row, verdict)
    }

    fn against_archive(&self, row: &CitationCheck) -> RowVerdict {
        let archived = row
            .content_sha256
            .as_deref()
            .and_then(|sha| self.texts.get(sha));
        match (&archived, &row.content_sha256) {
            (Some(text), _) => check_against_archive(row, text),
            (None, None) => {
                // A markdown footnote without a sidecar names only its locator: try the
                // archived texts the state dir indexed under that locator.
                let locators = self.locators.get_or_init(|| {
                    self.state_dir
                        .map(deepr_providers::indexed_locators)
                        .unwrap_or_default()
                });
                let candidates: Vec<String> = locators
                    .get(&row.locator)
                    .into_iter()
                    .flatten()
                    .filter_map(|sha| self.texts.get(sha))
                    .collect();
                if candidates.is_empty() {
                    RowVerdict::Unchecked("no archived text is known for this locator (no sidecar, not in the state dir's corpus indexes)".into())
                } else if let Some(found) = candidates
                    .iter()
                    .map(|t| check_against_archive(row, t))
                    .find(|v| matches!(v, RowVerdict::Found(_)))
                {
                    found
                } else {
                    RowVerdict::Failed(format!(
                        "quote not found in the archived text of {}",
                        row.locator
                    ))
                }
            }
            (None, Some(_)) => RowVerdict::Unchecked("archived text not found (use --state-dir, an export bundle, or --live for URL sources)".into()),
        }
    }

    /// With `--live`, a URL source's page as it is now: it checks a row the archive
    /// could not, and warns when a found quote has left the page since.
    fn against_live(&mut self, row: &CitationCheck, verdict: RowVerdict) -> RowVerdict {
        let Some(live) = self.live.as_mut() else {
            return verdict;
        };
        let max = live.max;
        match (live.page(&row.locator), &verdict) {
            (Some(Ok(page)), RowVerdict::Unchecked(_)) => check_against_live(row, &page),
            (Some(Ok(page)), RowVerdict::Found(_)) => {
                if let RowVerdict::Failed(_) = check_against_live(row, &page) {
                    self.warnings.push(format!("row {}: the live page no longer contains the quote (it changed since it was read)", row.row));
                }
                verdict
            }
            (Some(Err(why)), RowVerdict::Unchecked(_)) => {
                RowVerdict::Unchecked(format!("live fetch could not answer: {why}"))
            }
            (None, RowVerdict::Unchecked(_)) => {
                RowVerdict::Unchecked(format!("live fetch limit (--max-live {max}) reached"))
            }
            _ => verdict,
        }
    }
}
