//! The research stages.
//!
//! One file per stage. Each stage is a pure function of its inputs plus calls through
//! the provider traits of `deepr-orchestrator` — no file, socket or clock access of its
//! own. A stage that asks a model builds its task's typed input (`deepr-tasks`) and
//! calls it through [`model_call::call_task`]; which model answers, and which answers for it
//! when its answer is unusable, is passed in ([`model_call::Models`]): this crate names no
//! model implementation. [`pipeline`] wires the stages into the DAG phases the
//! executor runs; [`render`] turns the finished nodes into `report.json` and the
//! markdown report.

pub mod article;
pub mod changes;
mod cited;
pub mod collect;
pub mod concurrent;
pub mod conflict;
pub mod decompose;
pub mod deepen;
pub mod escape;
pub mod estimate;
pub mod extract;
pub mod fetch;
pub mod formats;
pub mod gaps;
pub mod judge;
pub mod model_call;
pub mod node;
pub mod parent_reading;
pub mod pipeline;
mod references;
pub mod render;
mod rerank;
pub mod research;
pub mod retrieve;
pub mod score;
pub mod subquery;
pub mod synthesize;
pub mod triage;
pub mod types;
mod units;
pub mod write;

pub use pipeline::{plan_research, run_research};
pub use research::{
    Depth, DepthLimits, ResearchConfig, ResearchError, ResearchProviders, ResearchResult, Strategy,
};
