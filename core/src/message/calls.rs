//! Tool calls still waiting for their results. ONE rule, folded over a session's lines
//! in order — by a fresh load (from the last barrier on) and by the open-session cache
//! as lines are written — and over a turn's messages before they are written: a
//! result must answer a call of the assistant reply it follows.

use alloc::string::String;
use alloc::vec::Vec;

/// A call made by the assistant reply the conversation ends with, not yet answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Call {
    pub id: String,
    pub name: String,
    /// The entry that holds the call, when it is written already.
    pub line: Option<String>,
}

/// What one message does to the pending calls.
pub(crate) struct Activity {
    pub assistant: bool,
    /// The reply's `message.id`: Claude Code's lines of one reply share it, with the
    /// results of calls it ran while streaming between them.
    pub id: Option<String>,
    /// `(id, name)` of the calls an assistant message makes.
    pub calls: Vec<(String, String)>,
    /// The call ids a user message answers.
    pub answers: Vec<String>,
    /// The message carries more than results (a prompt): the calls before it are over.
    pub other: bool,
}

/// Whether a line doing `activity` (`None`: it carries no message) is inside the run of
/// lines of reply `reply` (its `message.id`): one of the reply's lines, a result Claude
/// Code wrote between or after them, or a line that is no message. A prompt or another
/// reply (or, without an id, any reply) ends the run.
pub(crate) fn within_reply(activity: Option<&Activity>, reply: Option<&str>) -> bool {
    match activity {
        Some(a) if a.assistant => reply.is_some() && a.id.as_deref() == reply,
        Some(a) => !a.other,
        None => true,
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PendingCalls {
    pub calls: Vec<Call>,
    after_assistant: bool,
    /// The `message.id` of the reply the calls belong to.
    reply: Option<String>,
}

impl PendingCalls {
    /// Takes one message into account. Consecutive assistant messages are one reply
    /// (Claude Code writes a reply as one line per block), and so are assistant lines
    /// of one `message.id` with results between them: their calls add up. A user
    /// message answers calls; one that says anything else ends the reply's calls.
    pub fn step(&mut self, activity: Activity, line: Option<&str>) {
        if activity.assistant {
            let same_reply = activity.id.is_some() && activity.id == self.reply;
            if !self.after_assistant && !same_reply {
                self.calls.clear();
            }
            self.reply = activity.id;
            let line = line.map(String::from);
            self.calls.extend(activity.calls.into_iter().map(|(id, name)| Call { id, name, line: line.clone() }));
            self.after_assistant = true;
        } else {
            self.calls.retain(|call| !activity.answers.contains(&call.id));
            if activity.other {
                self.calls.clear();
                self.reply = None;
            }
            self.after_assistant = false;
        }
    }

    /// A compaction: the calls before it are summarised.
    pub fn barrier(&mut self) {
        self.calls.clear();
        self.after_assistant = false;
        self.reply = None;
    }

    pub fn find(&self, id: &str) -> Option<&Call> {
        self.calls.iter().find(|call| call.id == id)
    }
}

/// Checks that every result in `messages` answers a call pending at that point, once:
/// made by the reply it follows, in the turn or (for the first messages) in the
/// session; and that no call reuses the id of a call pending or made in the turn (the
/// API refuses a request whose ids repeat). `rewind`: the turn continues from an
/// earlier entry, whose calls are `pending`.
pub(crate) fn check_turn(messages: &[super::Message], pending: &PendingCalls, rewind: bool) -> Result<(), crate::Error> {
    let mut calls = pending.clone();
    let mut made: Vec<&str> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let mut answered: Vec<&str> = Vec::new();
        for (j, block) in message.blocks.iter().enumerate() {
            let refuse = |reason: String| crate::Error::InvalidMessage { message: message.origin_of(i, j), reason };
            match &block.kind {
                super::BlockKind::ToolResult { tool_use_id } if answered.contains(&tool_use_id.as_str()) => {
                    return Err(refuse(alloc::format!("a second tool_result answers `{tool_use_id}`: a call gets one result; send one")));
                }
                super::BlockKind::ToolResult { tool_use_id } if calls.find(tool_use_id).is_none() => {
                    let follows = if rewind {
                        "the assistant message that made the call (in this turn, or the entry the turn continues from)"
                    } else {
                        "the assistant message that made the call (in this turn, or the session's last reply)"
                    };
                    return Err(refuse(alloc::format!(
                        "its tool_result answers `{tool_use_id}`, which is no pending call: a result must follow {follows}"
                    )));
                }
                super::BlockKind::ToolResult { tool_use_id } => answered.push(tool_use_id),
                super::BlockKind::ToolUse { id, .. } if made.contains(&id.as_str()) || calls.find(id).is_some() => {
                    return Err(refuse(alloc::format!(
                        "its tool_use id `{id}` is the id of another call: each call needs an id of its own"
                    )));
                }
                super::BlockKind::ToolUse { id, .. } => made.push(id),
                _ => {}
            }
        }
        calls.step(message_activity(message), None);
    }
    Ok(())
}

/// `messages` without the results that answer no pending call (by [`check_turn`]'s
/// rule), and without a message left empty by that: what an import keeps of a
/// transcript that recorded results apart from their calls. Returns how many results
/// were left out.
pub(crate) fn without_unanswerable(messages: Vec<super::Message>, pending: &PendingCalls) -> (Vec<super::Message>, u32) {
    let mut calls = pending.clone();
    let mut dropped = 0u32;
    let mut kept = Vec::with_capacity(messages.len());
    for mut message in messages {
        message.blocks.retain(|block| match &block.kind {
            super::BlockKind::ToolResult { tool_use_id } if calls.find(tool_use_id).is_none() => {
                dropped += 1;
                false
            }
            _ => true,
        });
        if message.blocks.is_empty() {
            continue;
        }
        calls.step(message_activity(&message), None);
        kept.push(message);
    }
    (kept, dropped)
}

/// What a message about to be written does to the pending calls.
pub(super) fn message_activity(message: &super::Message) -> Activity {
    let assistant = message.role == crate::Role::Assistant;
    let id = message.meta.id.clone().filter(|_| assistant);
    let mut activity = Activity { assistant, id, calls: Vec::new(), answers: Vec::new(), other: false };
    for block in &message.blocks {
        match &block.kind {
            super::BlockKind::ToolUse { id, name } => activity.calls.push((id.clone(), name.clone())),
            super::BlockKind::ToolResult { tool_use_id } => activity.answers.push(tool_use_id.clone()),
            _ => activity.other = true,
        }
    }
    activity
}
