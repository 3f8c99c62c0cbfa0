//! MEMORY.md, the index Claude Code loads at startup: one line per memory,
//! `- [Title](file.md) — one-line hook`. Mneme keeps one line per current memory and
//! leaves every other line (headings, prose, lines Claude Code wrote) where it is.
//!
//! Claude Code loads the first 200 lines or 25,000 UTF-16 units, so the newest lines —
//! often the corrections — are the ones cut. [`for_model`] applies the same caps but
//! chooses what goes: superseded and archived memories first, then the least recently
//! useful (used or updated), and says at the end what was left out and how to recall it.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::file::Memory;

/// Claude Code's limits on what of MEMORY.md reaches the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Caps {
    pub lines: usize,
    /// UTF-16 code units, as JavaScript's `length` counts them.
    pub units: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Caps { lines: 200, units: 25_000 }
    }
}

/// The memory file stem a line points at, if it is an index line.
pub fn linked_file(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("- [")?;
    let (_, rest) = rest.split_once("](")?;
    let (target, _) = rest.split_once(')')?;
    let target = target.trim();
    target.strip_suffix(".md").filter(|stem| !stem.is_empty() && !stem.contains('/'))
}

/// The index line of a memory.
pub fn line_for(memory: &Memory) -> String {
    let title = if memory.name.is_empty() { memory.file.as_str() } else { memory.name.as_str() };
    let title: String = title.chars().map(|c| if matches!(c, '[' | ']' | '\n' | '\r') { ' ' } else { c }).collect();
    let hook = hook(&memory.description);
    if hook.is_empty() {
        format!("- [{}]({}.md)", title.trim(), memory.file)
    } else {
        format!("- [{}]({}.md) — {}", title.trim(), memory.file, hook)
    }
}

/// A memory's description as its one-line hook, as MEMORY.md and every listing show
/// it: line breaks as spaces, trimmed (a description may come with several lines).
pub fn hook(description: &str) -> String {
    let line: String = description.chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect();
    String::from(line.trim())
}

/// MEMORY.md after `memories` changed: a current memory's line replaced in place (or
/// added at the end), a memory no longer current taken out. Other lines stay.
pub fn update(text: &str, memories: &[&Memory]) -> String {
    let mut lines: Vec<Option<String>> = text.lines().map(|line| Some(String::from(line))).collect();
    // Each file's index lines, first first: a write changes the first, as a search from
    // the top would, and costs the same whether MEMORY.md has ten lines or 100,000.
    let mut at: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (number, line) in lines.iter().enumerate() {
        if let Some(file) = line.as_deref().and_then(linked_file) {
            at.entry(String::from(file)).or_default().push(number);
        }
    }
    for memory in memories {
        let first = at.get(&memory.file).and_then(|numbers| numbers.first().copied());
        match (first, memory.is_current()) {
            (Some(number), true) => {
                if let Some(line) = lines.get_mut(number) {
                    *line = Some(line_for(memory));
                }
            }
            (None, true) => {
                at.entry(memory.file.clone()).or_default().push(lines.len());
                lines.push(Some(line_for(memory)));
            }
            (Some(number), false) => {
                if let Some(line) = lines.get_mut(number) {
                    *line = None;
                }
                if let Some(numbers) = at.get_mut(&memory.file) {
                    numbers.remove(0);
                }
            }
            (None, false) => {}
        }
    }
    let mut out = String::with_capacity(text.len());
    for line in lines.into_iter().flatten() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// What of MEMORY.md to load for a model, and what was left out.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Loaded {
    pub text: String,
    /// File stems of the lines left out, in the order they were dropped.
    pub left_out: Vec<String>,
}

/// How a line's memory stands, for choosing what to leave out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Standing {
    pub current: bool,
    /// When it was last useful: used, updated or created; older goes first.
    pub useful_ms: i64,
}

/// MEMORY.md within `caps`. A line for a memory no longer current (archived or
/// superseded) is one a write cut short left behind (a write takes it out): it is left
/// out whatever the caps, and the next write of the scope takes it out of the file.
/// Over the caps, index lines are left out the least recently useful first (lines whose
/// file is unknown count as oldest); other lines are kept unless they alone pass the
/// caps. The text then ends with a note naming what
/// was left out. Linear in the lines: the sizes kept are counted down as lines go.
pub fn for_model(text: &str, caps: Caps, standing: impl Fn(&str) -> Option<Standing>) -> Loaded {
    let stale = |line: &str| linked_file(line).and_then(&standing).is_some_and(|s| !s.current);
    let lines: Vec<&str> = text.lines().filter(|line| !stale(line)).collect();
    let units_of = |line: &str| line.encode_utf16().count() + 1;
    let mut kept_lines = lines.len();
    let mut kept_units: usize = lines.iter().map(|line| units_of(line)).sum();
    let fits = |lines: usize, units: usize, note: &str| {
        lines + note.lines().count() <= caps.lines && units + note.encode_utf16().count() <= caps.units
    };
    if fits(kept_lines, kept_units, "") {
        let unchanged = lines.len() == text.lines().count();
        let text = if unchanged { String::from(text) } else { lines.iter().map(|line| format!("{line}\n")).collect() };
        return Loaded { text, left_out: Vec::new() };
    }
    let mut candidates: Vec<(i64, usize)> = lines
        .iter()
        .enumerate()
        .filter_map(|(at, line)| {
            let useful_ms = standing(linked_file(line)?).map_or(i64::MIN, |standing| standing.useful_ms);
            Some((useful_ms, at))
        })
        .collect();
    // Oldest first; among equals the later line goes first, as Claude Code's own cut
    // would.
    candidates.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut dropped: BTreeSet<usize> = BTreeSet::new();
    let mut left_out: Vec<String> = Vec::new();
    for (_, at) in candidates {
        if fits(kept_lines, kept_units, &note_for(&left_out)) {
            break;
        }
        dropped.insert(at);
        if let Some(line) = lines.get(at) {
            kept_lines -= 1;
            kept_units -= units_of(line);
            if let Some(file) = linked_file(line) {
                left_out.push(String::from(file));
            }
        }
    }
    let note = note_for(&left_out);
    let mut kept: Vec<&str> = lines.iter().enumerate().filter(|(at, _)| !dropped.contains(at)).map(|(_, line)| *line).collect();
    // Lines that are not index lines can still pass the caps alone: cut them from the
    // end, as Claude Code does, and say so.
    let mut closing = note.clone();
    let mut cut = 0;
    while let Some(last) = kept.last().copied()
        && !fits(kept_lines, kept_units, &closing)
    {
        kept.pop();
        kept_lines -= 1;
        kept_units -= units_of(last);
        cut += 1;
        closing = format!("{note}> {cut} more lines of MEMORY.md did not fit and were cut.\n");
    }
    let mut out = kept.join("\n");
    out.push('\n');
    out.push_str(&closing);
    Loaded { text: out, left_out }
}

/// The closing note: how many lines were left out, which, and how to get them back.
fn note_for(left_out: &[String]) -> String {
    if left_out.is_empty() {
        return String::new();
    }
    const NAMED: usize = 12;
    let mut names: Vec<&str> = left_out.iter().take(NAMED).map(String::as_str).collect();
    names.sort_unstable();
    let more = left_out.len().saturating_sub(NAMED);
    let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
    format!(
        "> {} memories were left out to stay within Claude Code's MEMORY.md limits (the least recently useful first): {}{}. Recall them by topic with `mneme memory recall`.\n",
        left_out.len(),
        names.join(", "),
        tail
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn memory(file: &str, name: &str, hook: &str) -> Memory {
        let mut memory = Memory::new(file);
        memory.name = name.to_string();
        memory.description = hook.to_string();
        memory
    }

    #[test]
    fn reads_claude_code_lines_and_keeps_other_lines_in_place() {
        assert_eq!(linked_file("- [User role](user_role.md) — data scientist"), Some("user_role"));
        assert_eq!(linked_file("  - [x](a.md)"), Some("a"));
        assert_eq!(linked_file("# Memories"), None);
        assert_eq!(linked_file("- [x](../a.md)"), None);
        let text = "# Memory\n- [A](a.md) — first\nSome prose.\n";
        let mut a = memory("a", "A2", "changed");
        let b = memory("b", "B", "");
        assert_eq!(update(text, &[&a, &b]), "# Memory\n- [A2](a.md) — changed\nSome prose.\n- [B](b.md)\n");
        a.superseded_by = Some("b".into());
        assert_eq!(update(text, &[&a]), "# Memory\nSome prose.\n");
    }

    #[test]
    fn a_file_within_the_caps_loads_as_is() {
        let text = "- [A](a.md) — x\n";
        let loaded = for_model(text, Caps::default(), |_| None);
        assert_eq!(loaded, Loaded { text: text.to_string(), left_out: Vec::new() });
    }

    #[test]
    fn over_the_caps_the_oldest_go_and_the_note_names_them_and_superseded_lines_never_load() {
        let mut text = String::from("# Memory\n");
        for i in 0..10 {
            text.push_str(&format!("- [M{i}](m{i}.md) — hook {i}\n"));
        }
        let caps = Caps { lines: 8, units: 10_000 };
        let loaded = for_model(&text, caps, |file| {
            let i: i64 = file.trim_start_matches('m').parse().ok()?;
            Some(Standing { current: i != 7, useful_ms: 100 - i })
        });
        // m7 is superseded: its line is what a cut-short write left, and never loads.
        // Then the oldest updates are the highest numbers.
        assert_eq!(loaded.left_out, ["m9", "m8", "m6"]);
        assert!(!loaded.text.contains("m7"), "{}", loaded.text);
        assert!(loaded.text.starts_with("# Memory\n- [M0](m0.md)"));
        assert!(loaded.text.contains("3 memories were left out"), "{}", loaded.text);
        assert!(loaded.text.lines().count() <= caps.lines);
        // The newest correction (m0, updated last) stays; Claude Code's cut keeps m0 too
        // but would drop m9 for being last, not for being old.
        assert!(loaded.text.contains("(m0.md)"));
    }

    #[test]
    fn the_unit_cap_counts_utf16_and_prose_alone_over_the_caps_is_cut_and_said() {
        // 600 units, 1,200 bytes: only the units count.
        let text = "- [É](e.md) ".to_string() + &"é".repeat(600) + "\n" + &"- [X](x.md)\n".repeat(3);
        assert!(for_model(&text, Caps { lines: 200, units: 700 }, |_| None).left_out.is_empty());
        let loaded = for_model(&text, Caps { lines: 200, units: 620 }, |file| {
            Some(Standing { current: true, useful_ms: if file == "e" { 1 } else { 5 } })
        });
        assert_eq!(loaded.left_out, ["e"], "{}", loaded.text);
        assert!(loaded.text.encode_utf16().count() <= 620, "{}", loaded.text);
        let prose: String = (0..300).map(|i| format!("line {i}\n")).collect();
        let loaded = for_model(&prose, Caps::default(), |_| None);
        assert!(loaded.text.lines().count() <= 200);
        assert!(loaded.text.contains("did not fit and were cut"));
    }
}
