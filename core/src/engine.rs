//! The engine's operations as one synchronous trait, [`Engine`] (derived from the WIT
//! and the store's views by `cargo xtask codegen`: see `operations`), and the one
//! compaction driver every Rust host steps.

use alloc::string::{String, ToString};

use crate::compaction::{Plan, Run, Step};
use crate::error::Error;
use crate::sessions::{Applied, CompactionIds};

pub mod operations;
mod store;

pub use operations::Engine;

/// An engine's error: the core's [`Error`], or a host's error that wraps it and adds
/// its own failures (a component that trapped).
pub trait EngineError: From<Error> + core::fmt::Display + core::fmt::Debug {
    /// A stable name, as the WIT variants spell it (see [`Error::kind`]).
    fn kind(&self) -> String;
}

impl EngineError for Error {
    fn kind(&self) -> String {
        Error::kind(self)
    }
}

/// Applies `plan` of session `id` through the compaction driver ([`Run`]), the one
/// every Rust host steps: `answer` answers the summariser's requests `run` makes
/// (stopping at a failure, which `run` then asks to have recorded); then the summary is
/// applied, or the failure recorded (the circuit breaker counts it) and returned as the
/// inner `Err`, nothing else changed. `now_ms` is asked once the summariser is done:
/// a model may take minutes.
pub fn compact_with<E: EngineError>(
    engine: &mut dyn Engine<E>,
    id: &str,
    plan: &Plan,
    ids: &CompactionIds,
    now_ms: impl FnOnce() -> i64,
    answer: impl FnOnce(&mut dyn Engine<E>, &mut Run),
) -> Result<Result<Applied, String>, E> {
    let mut run = Run::new(plan.clone());
    answer(engine, &mut run);
    match run.next() {
        Step::Apply { summary } => engine.apply_compaction(id, run.plan(), &summary, ids, now_ms()).map(Ok),
        Step::RecordFailure { reason } => {
            engine.record_compaction_failure(id, &reason, now_ms())?;
            Ok(Err(reason))
        }
        Step::Summarize { .. } => {
            Err(Error::InvalidArgument("the summariser left a request unanswered: nothing was compacted".into()).into())
        }
        Step::Done => {
            Err(Error::InvalidArgument("the plan has nothing to compact: plan again, and compact only a plan that has work".into()).into())
        }
    }
}

/// [`compact_with`] every summary the offline one: for a host with no model to ask.
pub fn compact_offline<E: EngineError>(
    engine: &mut dyn Engine<E>,
    id: &str,
    plan: &Plan,
    ids: &CompactionIds,
    now_ms: i64,
) -> Result<Result<Applied, String>, E> {
    compact_with(
        engine,
        id,
        plan,
        ids,
        || now_ms,
        |engine, run| {
            while let Step::Summarize { .. } = run.next() {
                let summary = engine.summarize_offline(id, run.plan()).map_err(|e| e.to_string());
                run.handle_whole(summary);
            }
        },
    )
}
