//! The compaction protocol as a sans-IO driver: the core says what it needs next,
//! the host does it (runs a model, applies, records) and hands the outcome back. Every
//! host steps through this one sequence, so each failure — an error *or* an empty
//! answer — is recorded and counted by the circuit breaker the same way everywhere.

use alloc::string::String;
use alloc::vec::Vec;

use super::{Action, Plan};

/// What the host must do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Have the summariser answer `prompt` in at most `max_tokens` tokens, then call
    /// [`Run::handle`].
    Summarize { prompt: String, max_tokens: u64 },
    /// Apply the plan with `summary` (empty for a prune), then call [`Run::finish`].
    Apply { summary: String },
    /// Record the failure with `reason` (it counts toward the circuit breaker), then
    /// call [`Run::finish`].
    RecordFailure { reason: String },
    /// Nothing (more) to do.
    Done,
}

/// One compaction, from its plan to the applied summary or the recorded failure.
#[derive(Clone, Debug)]
pub struct Run {
    plan: Plan,
    /// The summary so far: one piece of `plan.steps` summarised after another.
    rolling: Option<String>,
    /// Pieces of `plan.steps` summarised.
    step: usize,
    prefix_summary: Option<String>,
    failure: Option<String>,
    finished: bool,
}

impl Run {
    pub fn new(plan: Plan) -> Self {
        Self { plan, rolling: None, step: 0, prefix_summary: None, failure: None, finished: false }
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Summariser requests made or still to make (for progress).
    pub fn total_requests(&self) -> usize {
        if !self.plan.needs_summary() {
            return 0;
        }
        self.pieces() + usize::from(self.plan.turn_prefix_prompt.is_some())
    }

    fn pieces(&self) -> usize {
        if self.plan.summarize.is_empty() { 0 } else { self.plan.steps.len() }
    }

    pub fn next(&self) -> Step {
        if self.finished || !self.plan.has_work() {
            return Step::Done;
        }
        if let Some(reason) = &self.failure {
            return Step::RecordFailure { reason: reason.clone() };
        }
        if self.plan.action == Action::Prune {
            return Step::Apply { summary: String::new() };
        }
        let budget = self.plan.summary_budget_tokens;
        if self.step < self.pieces() {
            let previous = self.rolling.as_deref().or(self.plan.previous_summary.as_deref());
            if let Some(prompt) = self.plan.step_prompt(self.step, previous) {
                return Step::Summarize { prompt, max_tokens: budget };
            }
        }
        if let (Some(prompt), None) = (&self.plan.turn_prefix_prompt, &self.prefix_summary) {
            return Step::Summarize { prompt: prompt.clone(), max_tokens: (budget / 2).max(256) };
        }
        // With nothing before the current turn to summarise, the new summary is the
        // earlier one carried on: it replaces it.
        let before = self.rolling.as_deref().or(self.plan.previous_summary.as_deref());
        let parts: Vec<&str> = before.into_iter().chain(self.prefix_summary.as_deref()).collect();
        Step::Apply { summary: parts.join("\n\n---\n\n") }
    }

    /// The summariser's answer to the last [`Step::Summarize`]: its text, or why it
    /// failed. An empty answer is a failure too.
    pub fn handle(&mut self, answer: Result<String, String>) {
        let text = match answer {
            Ok(text) if !text.trim().is_empty() => text,
            Ok(_) => {
                self.failure = Some("the summariser returned nothing".into());
                return;
            }
            Err(reason) => {
                self.failure = Some(reason);
                return;
            }
        };
        if self.step < self.pieces() {
            self.rolling = Some(text);
            self.step += 1;
        } else {
            self.prefix_summary = Some(text);
        }
    }

    /// Answers every summarising step at once with one summary (the offline
    /// summariser reads the session itself rather than the prompts).
    pub fn handle_whole(&mut self, answer: Result<String, String>) {
        match answer {
            Ok(text) if !text.trim().is_empty() => {
                self.rolling = Some(text);
                self.step = self.pieces();
                self.plan.turn_prefix_prompt = None;
            }
            failed => self.handle(failed),
        }
    }

    /// The host did the last [`Step::Apply`] or [`Step::RecordFailure`].
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// Why the run failed, once it has.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }
}
