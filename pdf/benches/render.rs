//! The PDF report's cost: a 3,000-word report (eight sections, a footnote per
//! sentence with its quote, a Run details table) rendered to PDF bytes, fonts subset
//! and embedded. The bound is under 2 s.
// A benchmark harness: a failed setup aborts the benchmark with its reason.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// A report of about `words` words in the shape deepr writes.
fn report(words: usize) -> String {
    let sentence = "The rollback journal keeps the original content of every page a transaction changes until the commit is durable";
    let per_sentence = sentence.split_whitespace().count();
    let sentences = words / per_sentence;
    let mut markdown =
        String::from("# How does SQLite guarantee atomic commits?\n\n## Summary\n\n");
    for i in 1..=sentences {
        if i % (sentences / 8).max(1) == 0 {
            markdown.push_str(&format!(
                "\n\n## {}. Section on commits\n\n",
                i / (sentences / 8).max(1)
            ));
        }
        markdown.push_str(&format!("{sentence} (step {i}).[^{i}] "));
    }
    markdown.push_str("\n\n## Quotes\n\n");
    for i in 1..=sentences {
        markdown.push_str(&format!("[^{i}]: \"{sentence}.\" — atomiccommit.html\n"));
    }
    markdown.push_str(
        "\n## Run details\n\n| stage | calls | tokens |\n|---|---|---|\n| extract | 6 | 6906 |\n",
    );
    markdown
}

fn render(c: &mut Criterion) {
    let markdown = report(3_000);
    let mut group = c.benchmark_group("report_pdf");
    group.throughput(Throughput::Bytes(markdown.len() as u64));
    group.sample_size(10);
    group.bench_function("3000_words", |b| {
        b.iter(|| deepr_pdf::render_pdf(&markdown, "bench").expect("a PDF"))
    });
    group.finish();
}

criterion_group!(benches, render);
criterion_main!(benches);
