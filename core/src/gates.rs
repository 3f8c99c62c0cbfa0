//! Gates: pure decisions on when to run background work, each with its reason.
//! The store derives their inputs from transcripts and storage; hosts with their own
//! state can call these directly.

use alloc::format;
use alloc::string::String;

use crate::support::time;

/// A gate's answer.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Decision {
    pub fire: bool,
    /// Why, in a sentence a person can act on.
    pub reason: String,
}

impl Decision {
    fn yes(reason: String) -> Self {
        Self { fire: true, reason }
    }
    fn no(reason: String) -> Self {
        Self { fire: false, reason }
    }
}

/// Pre-compaction memory flush (OpenClaw): a silent turn that writes durable notes
/// before compaction can erase them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlushSettings {
    pub context_window: u64,
    /// Headroom the runtime keeps before compaction (OpenClaw: 20000).
    pub reserve_floor: u64,
    /// How far before that point the flush runs (OpenClaw: 4000).
    pub soft_threshold: u64,
}

impl Default for FlushSettings {
    fn default() -> Self {
        Self { context_window: crate::transcript::tokens::DEFAULT_CONTEXT_WINDOW, reserve_floor: 20_000, soft_threshold: 4_000 }
    }
}

impl FlushSettings {
    /// Refuses a window with no room before the flush point (0, or a 16k model's with
    /// the defaults' 24k held back): the point would be 0, and the gate would fire on
    /// every call.
    pub fn check(&self) -> Result<(), crate::Error> {
        let held_back = self.reserve_floor.saturating_add(self.soft_threshold);
        if self.context_window <= held_back {
            return Err(crate::Error::InvalidArgument(format!(
                "a context window of {} tokens leaves no room before the memory flush, which holds back {held_back} (reserve_floor {} + soft_threshold {}): give the model's window, or smaller reserves",
                self.context_window, self.reserve_floor, self.soft_threshold
            )));
        }
        Ok(())
    }
}

/// Fires when `tokens ≥ window − reserve_floor − soft_threshold`, at most once per
/// compaction cycle: `flushed_this_cycle` says a flush already ran since the last
/// compaction.
pub fn memory_flush(tokens: u64, settings: &FlushSettings, flushed_this_cycle: bool) -> Decision {
    let at = settings.context_window.saturating_sub(settings.reserve_floor).saturating_sub(settings.soft_threshold);
    if tokens < at {
        return Decision::no(format!("{tokens} tokens are below the flush point at {at}"));
    }
    if flushed_this_cycle {
        return Decision::no(format!(
            "{tokens} tokens reach the flush point at {at}, but memory was already flushed since the last compaction"
        ));
    }
    Decision::yes(format!(
        "{tokens} tokens reach the flush point at {at} (window {} − floor {} − soft threshold {})",
        settings.context_window, settings.reserve_floor, settings.soft_threshold
    ))
}

/// How a streamed reply of a silent turn is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// Show it.
    Deliver,
    /// Not yet known: what arrived so far could still become `NO_REPLY`.
    Hold,
    /// The reply starts with `NO_REPLY`: show nothing.
    Suppress,
}

/// The marker a silent turn's reply starts with.
pub const NO_REPLY: &str = "NO_REPLY";

/// Whether to show a reply whose text so far is `text`: a reply starting with
/// `NO_REPLY` is suppressed, and a streamed prefix of it (`"NO_R"`) is held back so
/// nothing leaks before the marker is complete.
pub fn silent_reply(text: &str) -> Reply {
    let text = text.trim_start();
    if text.starts_with(NO_REPLY) {
        Reply::Suppress
    } else if NO_REPLY.starts_with(text) {
        Reply::Hold
    } else {
        Reply::Deliver
    }
}

/// Memory extraction (Cersei): enough new conversation, with tool work in it, and no
/// tool call waiting for its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExtractionSettings {
    pub min_messages: u32,
    pub min_tool_calls: u32,
}

impl Default for ExtractionSettings {
    fn default() -> Self {
        Self { min_messages: 20, min_tool_calls: 3 }
    }
}

/// Fires with at least `min_messages` messages and `min_tool_calls` tool calls since
/// the last extraction and no pending tool call.
pub fn extraction(messages_since: u32, tool_calls_since: u32, pending_tool_call: bool, settings: &ExtractionSettings) -> Decision {
    if pending_tool_call {
        return Decision::no("a tool call is still waiting for its result".into());
    }
    if messages_since < settings.min_messages {
        return Decision::no(format!("{messages_since} messages since the last extraction; {} needed", settings.min_messages));
    }
    if tool_calls_since < settings.min_tool_calls {
        return Decision::no(format!("{tool_calls_since} tool calls since the last extraction; {} needed", settings.min_tool_calls));
    }
    Decision::yes(format!("{messages_since} messages and {tool_calls_since} tool calls since the last extraction"))
}

/// Auto-dream consolidation (Cersei): long enough since the last, enough new
/// sessions, and no other consolidation running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DreamSettings {
    pub min_interval_ms: i64,
    pub min_new_sessions: u32,
    /// A lock older than this is a crashed consolidation's and may be taken over.
    pub stale_lock_ms: i64,
}

impl Default for DreamSettings {
    fn default() -> Self {
        Self { min_interval_ms: 24 * 3_600_000, min_new_sessions: 5, stale_lock_ms: 3_600_000 }
    }
}

/// Evaluated cheapest first: time, then sessions, then the lock.
pub fn dream(now_ms: i64, last_ms: Option<i64>, new_sessions: u32, lock_since_ms: Option<i64>, settings: &DreamSettings) -> Decision {
    if let Some(last) = last_ms {
        let elapsed = now_ms.saturating_sub(last);
        if elapsed < settings.min_interval_ms {
            return Decision::no(format!(
                "the last consolidation was {} ago; {} needed",
                duration(elapsed),
                duration(settings.min_interval_ms)
            ));
        }
    }
    if new_sessions < settings.min_new_sessions {
        return Decision::no(format!("{new_sessions} sessions since the last consolidation; {} needed", settings.min_new_sessions));
    }
    if let Some(since) = lock_since_ms
        && now_ms.saturating_sub(since) < settings.stale_lock_ms
    {
        return Decision::no(format!("another consolidation holds the lock (taken {} ago)", duration(now_ms.saturating_sub(since))));
    }
    Decision::yes(format!(
        "{new_sessions} new sessions since the last consolidation{}",
        last_ms.map_or(String::new(), |last| format!(", {} ago", duration(now_ms.saturating_sub(last))))
    ))
}

fn duration(ms: i64) -> String {
    let minutes = ms.max(0) / 60_000;
    if minutes < 120 { format!("{minutes} min") } else { format!("{} h", minutes / 60) }
}

/// When a session should be left for a new one (OpenClaw's resets, Cersei's TTL).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ResetPolicy {
    /// Start anew after this long without activity.
    pub idle_minutes: Option<u32>,
    /// Start anew once a day at this hour (OpenClaw: 4), in the gateway's local time.
    pub daily_reset_hour: Option<u8>,
    /// The local time's offset from UTC, for `daily_reset_hour`.
    pub utc_offset_minutes: i32,
    /// Start anew when the session is older than this, however active.
    pub ttl_ms: Option<i64>,
}

impl ResetPolicy {
    /// Refuses what would reset nonsensically: an hour past 23 (it was read as 23), an
    /// offset beyond the world's time zones, and an idle limit or a time to live of no
    /// time (every message would start a new session).
    pub fn check(&self) -> Result<(), crate::Error> {
        let refuse = |what: String| Err(crate::Error::InvalidArgument(what));
        if let Some(hour) = self.daily_reset_hour.filter(|&hour| hour > 23) {
            return refuse(format!("the daily reset hour is {hour}: give one from 0 to 23 (OpenClaw resets at 4)"));
        }
        if !(-720..=840).contains(&self.utc_offset_minutes) {
            return refuse(format!(
                "the UTC offset is {} minutes: give one from -720 to 840 (UTC-12:00 to UTC+14:00)",
                self.utc_offset_minutes
            ));
        }
        if self.idle_minutes == Some(0) || self.ttl_ms.is_some_and(|ttl| ttl <= 0) {
            return refuse(
                "an idle limit or a time to live of no time would start a new session at every message: give one above 0, or none".into(),
            );
        }
        Ok(())
    }
}

/// Which reset fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResetCause {
    /// The session is older than the policy's TTL.
    Expired,
    /// The daily reset hour passed since the last activity.
    Daily,
    /// The last activity is longer ago than the idle limit.
    Idle,
}

/// Whether the next message should go to a new session id. Never deletes anything:
/// the old session stays as it is.
pub fn reset(now_ms: i64, created_ms: i64, last_activity_ms: i64, policy: &ResetPolicy) -> Decision {
    match reset_cause(now_ms, created_ms, last_activity_ms, policy) {
        Some((_, reason)) => Decision::yes(reason),
        None => Decision::no("the session is current".into()),
    }
}

/// [`reset`], saying which limit fired: the TTL first, then the daily reset, then
/// the idle limit; a session past several limits is reset once, for the first.
pub fn reset_cause(now_ms: i64, created_ms: i64, last_activity_ms: i64, policy: &ResetPolicy) -> Option<(ResetCause, String)> {
    if let Some(ttl) = policy.ttl_ms
        && now_ms.saturating_sub(created_ms) >= ttl
    {
        return Some((
            ResetCause::Expired,
            format!("the session is {} old; sessions live {}", duration(now_ms.saturating_sub(created_ms)), duration(ttl)),
        ));
    }
    if let Some(hour) = policy.daily_reset_hour {
        let offset = i64::from(policy.utc_offset_minutes) * 60_000;
        let day = 86_400_000;
        let local_now = now_ms.saturating_add(offset);
        let mut reset_at = local_now.div_euclid(day).saturating_mul(day).saturating_add(i64::from(hour.min(23)) * 3_600_000);
        if reset_at > local_now {
            reset_at = reset_at.saturating_sub(day);
        }
        let reset_at = reset_at.saturating_sub(offset);
        if last_activity_ms < reset_at {
            return Some((
                ResetCause::Daily,
                format!("the daily reset at {hour:02}:00 ({}) came after the last activity", time::format_millis(reset_at)),
            ));
        }
    }
    if let Some(idle) = policy.idle_minutes {
        let idle_ms = i64::from(idle) * 60_000;
        if now_ms.saturating_sub(last_activity_ms) >= idle_ms {
            return Some((
                ResetCause::Idle,
                format!("idle for {}; the limit is {idle} min", duration(now_ms.saturating_sub(last_activity_ms))),
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_flush_fires_at_the_boundary_once_per_cycle() {
        let settings = FlushSettings { context_window: 200_000, reserve_floor: 20_000, soft_threshold: 4_000 };
        assert!(!memory_flush(175_999, &settings, false).fire);
        assert!(memory_flush(176_000, &settings, false).fire);
        assert!(!memory_flush(176_000, &settings, true).fire);
        assert!(memory_flush(176_000, &settings, false).reason.contains("176000"));
    }

    #[test]
    fn no_reply_is_suppressed_even_while_streaming() {
        assert_eq!(silent_reply(""), Reply::Hold);
        assert_eq!(silent_reply("NO_R"), Reply::Hold);
        assert_eq!(silent_reply("  NO_REPL"), Reply::Hold);
        assert_eq!(silent_reply("NO_REPLY"), Reply::Suppress);
        assert_eq!(silent_reply("NO_REPLY — saved notes"), Reply::Suppress);
        assert_eq!(silent_reply("NO"), Reply::Hold);
        assert_eq!(silent_reply("NOPE"), Reply::Deliver);
        assert_eq!(silent_reply("Here is"), Reply::Deliver);
    }

    #[test]
    fn extraction_needs_messages_tools_and_no_pending_call() {
        let s = ExtractionSettings::default();
        assert!(extraction(20, 3, false, &s).fire);
        assert!(!extraction(19, 3, false, &s).fire);
        assert!(!extraction(20, 2, false, &s).fire);
        assert!(!extraction(50, 9, true, &s).reason.is_empty());
        assert!(!extraction(50, 9, true, &s).fire);
    }

    #[test]
    fn dream_checks_time_sessions_and_lock() {
        let s = DreamSettings::default();
        let day = 86_400_000;
        assert!(dream(10 * day, None, 5, None, &s).fire, "never consolidated");
        assert!(!dream(10 * day, Some(10 * day - day + 1), 9, None, &s).fire, "a millisecond short of 24 h");
        assert!(dream(10 * day, Some(9 * day), 5, None, &s).fire, "exactly 24 h");
        assert!(!dream(10 * day, Some(9 * day), 4, None, &s).fire);
        assert!(!dream(10 * day, None, 5, Some(10 * day - 3_599_999), &s).fire, "a lock younger than 1 h");
        assert!(dream(10 * day, None, 5, Some(10 * day - 3_600_000), &s).fire, "a stale lock");
    }

    #[test]
    fn resets_decide_a_new_session_at_their_boundaries() {
        let hour = 3_600_000;
        let day = 24 * hour;
        let monday = 20 * day;
        let daily = ResetPolicy { daily_reset_hour: Some(4), ..ResetPolicy::default() };
        assert!(reset(monday + 5 * hour, monday, monday + 3 * hour, &daily).fire, "active before 04:00, asked after");
        assert!(!reset(monday + 5 * hour, monday, monday + 4 * hour, &daily).fire, "active at 04:00 exactly");
        assert!(!reset(monday + 3 * hour, monday, monday + 2 * hour, &daily).fire, "before today's reset, after yesterday's");
        let cet = ResetPolicy { daily_reset_hour: Some(4), utc_offset_minutes: 60, ..ResetPolicy::default() };
        assert!(reset(monday + 4 * hour, monday, monday + 2 * hour + 59 * 60_000, &cet).fire, "04:00 local is 03:00 UTC");
        let idle = ResetPolicy { idle_minutes: Some(30), ..ResetPolicy::default() };
        assert!(!reset(monday + 29 * 60_000, monday, monday, &idle).fire);
        assert!(reset(monday + 30 * 60_000, monday, monday, &idle).fire);
        let ttl = ResetPolicy { ttl_ms: Some(7 * day), ..ResetPolicy::default() };
        assert!(!reset(monday + 7 * day - 1, monday, monday + 7 * day - 2, &ttl).fire);
        assert!(reset(monday + 7 * day, monday, monday + 7 * day - 2, &ttl).fire);
    }
}
