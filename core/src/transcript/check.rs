//! Structural checks: dangling parents and unpaired tool calls.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::LoadReport;
use super::thread::Loaded;
use crate::scan::{Content, parse_message_content};

/// A problem `check` found in the structure of a transcript.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    pub part: u32,
    pub line: u32,
    /// The id involved: the missing parent uuid, or the tool call id.
    pub id: String,
}

/// The load report plus structural problems.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CheckReport {
    pub load: LoadReport,
    /// Entries whose `parentUuid` names no entry of the session.
    pub dangling_parents: Vec<Finding>,
    /// `tool_use` blocks with no `tool_result` after them.
    pub orphaned_tool_uses: Vec<Finding>,
    /// `tool_result` blocks with no `tool_use` before them.
    pub orphaned_tool_results: Vec<Finding>,
}

impl CheckReport {
    /// Whether anything needs attention: unreadable lines, a torn tail, glued objects,
    /// invalid UTF-8, dangling parents or unpaired tool calls.
    pub fn has_problems(&self) -> bool {
        let load = &self.load;
        !load.skipped.is_empty()
            || load.torn_tail
            || load.recovered_glued > 0
            || load.invalid_utf8 > 0
            || load.lone_surrogates > 0
            || !self.dangling_parents.is_empty()
            || !self.orphaned_tool_uses.is_empty()
            || !self.orphaned_tool_results.is_empty()
    }
}

impl Loaded<'_> {
    /// Dangling parents and tool calls without results (or results without calls).
    pub fn check(&self) -> CheckReport {
        let index = self.index();
        let mut report = CheckReport { load: self.report.clone(), ..CheckReport::default() };
        let mut calls: BTreeMap<String, (u32, u32)> = BTreeMap::new();
        let mut answered: BTreeSet<String> = BTreeSet::new();
        for (at, line) in self.lines.iter().enumerate().filter(|(_, l)| self.is_live(l)) {
            // A line repeating an earlier one's id (a rewrite of it) makes no new call.
            let repeated = line.env.uuid().is_some_and(|uuid| index.get(uuid) != Some(&at));
            if let Some(parent) = line.env.parent_uuid()
                && !index.contains_key(parent)
            {
                report.dangling_parents.push(Finding { part: line.part, line: line.line, id: parent.to_string() });
            }
            let Some((_, Some(Content::Blocks(blocks)))) = line.env.message.and_then(parse_message_content) else { continue };
            for block in &blocks {
                match block.kind.get() {
                    Some("tool_use") if !repeated => {
                        if let Some(id) = block.id.get() {
                            // An id an answered call had (a server that numbers its
                            // calls anew each reply): this call waits for its own result.
                            answered.remove(id);
                            calls.insert(id.to_string(), (line.part, line.line));
                        }
                    }
                    Some("tool_result") => {
                        let Some(id) = block.tool_use_id.get() else { continue };
                        if calls.contains_key(id) {
                            answered.insert(id.to_string());
                        } else {
                            report.orphaned_tool_results.push(Finding { part: line.part, line: line.line, id: id.to_string() });
                        }
                    }
                    _ => {}
                }
            }
        }
        let mut unanswered: Vec<Finding> =
            calls.into_iter().filter(|(id, _)| !answered.contains(id)).map(|(id, (part, line))| Finding { part, line, id }).collect();
        unanswered.sort_by_key(|f| (f.part, f.line));
        report.orphaned_tool_uses = unanswered;
        report
    }
}

#[cfg(test)]
mod tests {
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;

    use crate::sessions::with_loaded;

    fn line(kind: &str, uuid: &str, parent: &str, content: &str) -> String {
        format!(
            "{{\"type\":\"{kind}\",\"uuid\":\"{uuid}\",\"parentUuid\":\"{parent}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"{kind}\",\"content\":[{content}]}}}}\n"
        )
    }
    fn call(id: &str) -> String {
        format!("{{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"ls\",\"input\":{{}}}}")
    }
    fn result(id: &str) -> String {
        format!("{{\"type\":\"tool_result\",\"tool_use_id\":\"{id}\",\"content\":\"ok\"}}")
    }

    /// A server that numbers its calls anew each reply (`call_0`) makes a call of an
    /// id an answered one had: left without a result, it is reported; a rewrite of a
    /// line (its id again) after the result is no new call.
    #[test]
    fn a_call_reusing_an_answered_calls_id_is_reported_until_answered() {
        let unanswered = |text: &str| -> Vec<(u32, String)> {
            with_loaded(&[text.as_bytes()], |loaded| loaded.check().orphaned_tool_uses.into_iter().map(|f| (f.line, f.id)).collect())
        };
        let first = [line("assistant", "a1", "u0", &call("call_0")), line("user", "r1", "a1", &result("call_0"))].concat();
        assert_eq!(unanswered(&first), []);
        let again = [first.as_str(), &line("assistant", "a2", "r1", &call("call_0"))].concat();
        assert_eq!(unanswered(&again), [(3, String::from("call_0"))]);
        let answered = [again.as_str(), &line("user", "r2", "a2", &result("call_0"))].concat();
        assert_eq!(unanswered(&answered), []);
        let rewritten = [first.as_str(), &line("assistant", "a1", "u0", &call("call_0"))].concat();
        assert_eq!(unanswered(&rewritten), [], "a line written again makes no call of its own");
    }
}
