//! Benchmarks for deepr (criterion, under `benches/benches/`) and their data
//! (`benches/data/`). This library is empty; it exists so the benches have a crate.
