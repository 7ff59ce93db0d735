//! What a run paid for its model calls, across its sessions: the call journal's paid
//! calls where they hold more tokens than this session's ledger counts. A step cut off by a
//! stop (a provider outage, a budget, Ctrl-C) had some of its calls answered and paid;
//! on resume they are served from the response cache and the ledger counts them as
//! free, so a resumed run's report would state less than it spent.

use std::path::Path;

use deepr_checkpoints::CallJournal;
use deepr_evidence::report::{Usage, UsageTotals};
use deepr_orchestrator::UsageLedger;

/// The run's usage for its report: the journal's paid calls (`journal`: the run's
/// `calls.jsonl`) when they hold more tokens than the ledger counts, else the ledger's
/// (a journal kept elsewhere — a fleet's database — or one that missed an append).
/// Prompt-cache tokens are the ledger's: the journal does not keep them.
pub fn paid_usage(journal: &Path, ledger: &UsageLedger) -> Usage {
    let counted = ledger.usage();
    let entries = CallJournal::read(journal);
    let paid: Vec<_> = entries.iter().filter(|e| !e.cache_hit).collect();
    let tokens: u64 = paid
        .iter()
        .map(|e| e.prompt_tokens + e.completion_tokens)
        .sum();
    if tokens <= counted.prompt_tokens + counted.completion_tokens {
        return counted;
    }
    let mut usage = Usage::of_calls(paid.into_iter().map(|entry| {
        let call = UsageTotals {
            calls: 1,
            prompt_tokens: entry.prompt_tokens,
            completion_tokens: entry.completion_tokens,
            cached_tokens: 0,
            cost_usd: entry.cost_usd,
        };
        (entry.stage.clone(), call)
    }));
    usage.cached_tokens = counted.cached_tokens;
    for (stage, counted_stage) in &counted.by_stage {
        usage
            .by_stage
            .entry(stage.clone())
            .or_default()
            .cached_tokens = counted_stage.cached_tokens;
    }
    usage
}

#[cfg(test)]
mod tests {
    use super::*;
    use deepr_checkpoints::JournalEntry;
    use deepr_orchestrator::LedgerEntry;

    fn journal_entry(stage: &str, cache_hit: bool) -> JournalEntry {
        JournalEntry {
            request: format!("{stage}-key"),
            stage: stage.into(),
            prompt_id: stage.into(),
            model: "m".into(),
            cache_hit,
            prompt_tokens: if cache_hit { 0 } else { 100 },
            completion_tokens: if cache_hit { 0 } else { 20 },
            cost_usd: 0.0,
        }
    }

    fn ledger_entry(stage: &str, cache_hit: bool) -> LedgerEntry {
        LedgerEntry {
            node: format!("n-{stage}"),
            stage: stage.into(),
            kind: "llm".into(),
            provider: "m".into(),
            prompt_tokens: if cache_hit { 0 } else { 100 },
            completion_tokens: if cache_hit { 0 } else { 20 },
            cached_tokens: 0,
            cost_usd: 0.0,
            latency_ms: 1,
            cache_hit,
            restored: false,
            estimated: false,
            status: "ok".into(),
            unfinished: None,
        }
    }

    #[test]
    fn calls_paid_before_a_stop_count_though_the_resume_read_them_from_the_cache() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("calls.jsonl");
        let journal = CallJournal::open(&path).expect("journal");
        // Session 1 paid two judge batches, then stopped; session 2 read them from the
        // cache and paid the third.
        for entry in [
            journal_entry("judge", false),
            journal_entry("judge", false),
            journal_entry("judge", true),
            journal_entry("judge", true),
            journal_entry("judge", false),
        ] {
            journal.append(&entry).expect("append");
        }
        let ledger = UsageLedger::default();
        for hit in [true, true, false] {
            ledger.record(ledger_entry("judge", hit));
        }
        assert_eq!(ledger.usage().calls, 1);
        let usage = paid_usage(&path, &ledger);
        assert_eq!(usage.calls, 3);
        assert_eq!(usage.prompt_tokens, 300);
        assert_eq!(usage.by_stage["judge"].calls, 3);
        // No journal here (a fleet's is in its database): the ledger's count.
        let elsewhere = paid_usage(&dir.path().join("none.jsonl"), &ledger);
        assert_eq!(elsewhere.calls, 1);
    }
}
