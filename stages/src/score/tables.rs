//! A table is read as an analyst reads it: its row with the largest amount (the
//! biggest deal of a pipeline, the top customer of an accounts list) comes first among
//! its rows, whatever words its cells share with the question ("Distribution centre"
//! in one row's cell says nothing about which deal matters).

use std::collections::BTreeMap;

use crate::units::is_summary_row;

/// A table row: its unit's index among the candidates, its text, and its cells
/// (label, value).
type Row<'t> = (usize, &'t str, Vec<(&'t str, &'t str)>);

/// Fewest rows a table must have for its largest one to be told apart.
const MIN_ROWS: usize = 3;

/// Lifts, in each table of one document, the row holding its first amount column's
/// largest value to its fellow rows' best weight (a hair above it, so that it ranks
/// first among them; a total row stays above).
/// `units[i]` is a candidate with `runs[i]` its run and text when it is a list item or
/// table row. A total row is no candidate for largest (it sums the others).
pub(super) fn largest_amount_first(
    units: &mut [(f64, String, u32, Option<u32>)],
    runs: &[Option<(usize, &str)>],
) {
    let mut tables: BTreeMap<usize, Vec<Row<'_>>> = BTreeMap::new();
    for (i, run) in runs.iter().enumerate() {
        if let Some((run, body)) = run {
            if let Some(cells) = cells(body) {
                tables.entry(*run).or_default().push((i, body, cells));
            }
        }
    }
    for rows in tables.values() {
        if rows.len() < MIN_ROWS {
            continue;
        }
        let Some(largest) = largest_row(rows) else {
            continue;
        };
        // The best of its fellow rows (a total row weighs more as the table's sum).
        let best = rows
            .iter()
            .filter(|(_, body, _)| !is_summary_row(body))
            .filter_map(|(i, _, _)| units.get(*i).map(|u| u.0))
            .fold(0.0_f64, f64::max);
        if let Some(unit) = units.get_mut(largest) {
            unit.0 = unit.0.max(crate::rerank::round4(best + LIFT));
        }
    }
}

/// What the largest row weighs above its table's best.
const LIFT: f64 = 0.0001;

/// A table row's cells as (label, value): "Account: Lakeshore · ARR ($M): 4.62";
/// `None` for a list item or a row without labelled cells.
fn cells(body: &str) -> Option<Vec<(&str, &str)>> {
    if !body.contains(" · ") {
        return None;
    }
    let cells: Vec<(&str, &str)> = body
        .split(" · ")
        .filter_map(|cell| cell.split_once(": "))
        .map(|(label, value)| (label.trim(), value.trim()))
        .collect();
    (cells.len() >= 2).then_some(cells)
}

/// The unit index of the row with the largest value in the table's first amount
/// column: a column whose label or values name a currency, every row's value a
/// number. `None` when no column is one, or two rows tie for largest.
fn largest_row(rows: &[Row<'_>]) -> Option<usize> {
    let (_, _, first) = rows.first()?;
    // A total row (its first cell "Total", labelled or bare) sums the others.
    let rows: Vec<&Row<'_>> = rows
        .iter()
        .filter(|(_, body, _)| !is_summary_row(body))
        .collect();
    for (label, _) in first {
        let values: Vec<(usize, f64)> = rows
            .iter()
            .filter_map(|(i, _, cells)| {
                let value = cells.iter().find(|(l, _)| l == label)?.1;
                Some((*i, amount(value)?))
            })
            .collect();
        let currency = names_currency(label)
            || rows
                .iter()
                .any(|(_, _, cells)| cells.iter().any(|(l, v)| l == label && names_currency(v)));
        if !currency || values.len() < rows.len() || values.len() < MIN_ROWS {
            continue;
        }
        let max = values.iter().map(|(_, v)| *v).fold(f64::MIN, f64::max);
        let mut at_max = values.iter().filter(|(_, v)| *v == max);
        let largest = at_max.next()?.0;
        return at_max.next().is_none().then_some(largest);
    }
    None
}

/// Whether a label or value names a currency: a sign (`$`, `£`, `€`, `¥`) or a code
/// as a word of its own ("arr_gbp", "Value (USD)").
fn names_currency(text: &str) -> bool {
    text.contains(['$', '£', '€', '¥'])
        || text.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| {
            matches!(
                w.to_ascii_lowercase().as_str(),
                "usd" | "gbp" | "eur" | "chf" | "jpy"
            )
        })
}

/// A cell's amount in units: as documents write amounts
/// ([`deepr_evidence::amounts::amount_at`]: "$4.62M" → 4,620,000, "$950k" → 950,000),
/// or a bare number in a column whose label names the currency ("3,290,000", "4.62"
/// under "ARR ($M)"); `None` for anything else ("S5", "2026-06-26", "25%").
fn amount(value: &str) -> Option<f64> {
    if let Some((units, _)) = deepr_evidence::amounts::amount_at(value, "") {
        return Some(units);
    }
    let number = value.replace(',', "");
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    number.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(n: usize) -> Vec<(f64, String, u32, Option<u32>)> {
        (0..n)
            .map(|i| (0.5 - 0.01 * i as f64, "d".into(), i as u32, None))
            .collect()
    }

    #[test]
    fn the_row_with_the_largest_amount_ranks_first_in_its_table() {
        let rows = [
            "Account: Brennan · Segment: Distribution centre · ARR ($M): 2.52",
            "Account: Northgate · Segment: Distribution centre · ARR ($M): 2.45",
            "Account: Lakeshore · Segment: Hospital network · ARR ($M): 4.62",
            "Account: Total · Segment: All · ARR ($M): 9.59",
            // A total whose first cell has no header is a total all the same.
            "Total · Segment: All · ARR ($M): 9.59",
        ];
        let mut out = units(rows.len());
        let runs: Vec<Option<(usize, &str)>> = rows.iter().map(|r| Some((0, *r))).collect();
        largest_amount_first(&mut out, &runs);
        let top = out
            .iter()
            .enumerate()
            .max_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
            .map(|(i, _)| i);
        assert_eq!(top, Some(2), "{out:?}");
        assert!(out[2].0 > 0.5);
    }

    #[test]
    fn a_table_without_an_amount_column_or_with_a_tie_keeps_its_order() {
        for rows in [
            // No currency: counts of robots, not amounts.
            [
                "Site: A · Robots: 120",
                "Site: B · Robots: 400",
                "Site: C · Robots: 90",
            ],
            // Two rows tie for largest.
            [
                "Customer: A · arr_gbp: 3,290,000",
                "Customer: B · arr_gbp: 3,290,000",
                "Customer: C · arr_gbp: 1,000",
            ],
        ] {
            let mut out = units(rows.len());
            let before = out.clone();
            let runs: Vec<Option<(usize, &str)>> = rows.iter().map(|r| Some((0, *r))).collect();
            largest_amount_first(&mut out, &runs);
            assert_eq!(out, before);
        }
    }

    #[test]
    fn amounts_are_read_with_their_currency_and_magnitude() {
        assert_eq!(amount("$4.62M"), Some(4_620_000.0));
        assert_eq!(amount("3,290,000"), Some(3_290_000.0));
        assert!(amount("£265.4m").is_some_and(|a| (a - 265_400_000.0).abs() < 1.0));
        // A column mixing magnitudes compares what they mean: $1.2M is more than $950k.
        assert!(amount("$1.2M") > amount("$950k"));
        assert!(amount("$1.1bn") > amount("$900M"));
        assert_eq!(amount("2026-06-26"), None);
        assert_eq!(amount("22.4%"), None);
        assert!(names_currency("arr_gbp") && names_currency("ARR ($M)"));
        assert!(!names_currency("Segment") && !names_currency("gbps"));
    }
}
