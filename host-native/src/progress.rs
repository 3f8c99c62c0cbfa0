//! A progress line on standard error while a command reads a store's transcripts. The
//! first `sessions list` or `search` on a big home reads every transcript (a multi-GB
//! `~/.claude` takes seconds; later commands answer from the cached index), and a
//! command that says nothing for that long looks hung.
//!
//! [`HostStorage`](crate::HostStorage) tells the meter what it lists and reads once a
//! program has installed one ([`install`]); the `mneme` CLI does. On a terminal the
//! line shows after a second and is gone before the command prints its answer.
//! `MNEME_PROGRESS=always` reports anywhere (a log, a test): a line per report, with no
//! delay, and a last line with what was read (`read 0 transcripts, 0 bytes` too).

use std::collections::{HashMap, HashSet};
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// How long a command reads before its progress shows on a terminal.
const DELAY: Duration = Duration::from_secs(1);
/// How often the line is written again.
const EVERY: Duration = Duration::from_millis(250);

const TRANSCRIPT: &str = ".jsonl";

static METER: OnceLock<Arc<Meter>> = OnceLock::new();

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// One line, rewritten in place, once the command has read for [`DELAY`].
    Terminal,
    /// A line per report and a last one with what was read.
    Always,
}

struct Meter {
    shown: Shown,
    started: Instant,
    reading: Mutex<Reading>,
    /// Held while a line is decided and written: the end's clearing must come after
    /// any line, never before one. Reads take only `reading`, so a stalled terminal
    /// holds up no read.
    screen: Mutex<()>,
}

#[derive(Default)]
struct Reading {
    /// Each transcript listed, with its size: what there is to read.
    listed: HashMap<String, u64>,
    read_bytes: u64,
    read_files: HashSet<String>,
    /// A line is on the terminal and must be taken away.
    on_screen: bool,
    done: bool,
}

/// Starts reporting for this process when standard error is a terminal, or anywhere
/// with `MNEME_PROGRESS=always` (`never` turns it off). Once: later calls change nothing.
pub fn install() {
    let shown = match std::env::var("MNEME_PROGRESS").as_deref() {
        Ok("always") => Shown::Always,
        Ok("never") => return,
        _ if std::io::stderr().is_terminal() => Shown::Terminal,
        _ => return,
    };
    let meter = Arc::new(Meter { shown, started: Instant::now(), reading: Mutex::default(), screen: Mutex::default() });
    if METER.set(meter.clone()).is_err() {
        return;
    }
    // An answer printed with the line still there would follow it on the same row.
    mneme_cli_stdout::before_first_write(finish);
    std::thread::spawn(move || {
        while meter.report() {
            std::thread::sleep(EVERY);
        }
    });
}

/// Ends the report: takes the line off the terminal, or says what was read.
pub fn finish() {
    let Some(meter) = METER.get() else { return };
    let _screen = meter.screen.lock().unwrap_or_else(PoisonError::into_inner);
    let said = {
        let mut reading = meter.lock();
        if std::mem::replace(&mut reading.done, true) {
            return;
        }
        let files = reading.read_files.len();
        match meter.shown {
            Shown::Terminal if reading.on_screen => "\r\x1b[K".to_owned(),
            Shown::Terminal => return,
            Shown::Always => {
                format!("mneme: read {files} transcript{}, {}\n", if files == 1 { "" } else { "s" }, bytes(reading.read_bytes))
            }
        }
    };
    say(&said);
}

/// Writes to standard error, outside the counts' lock (a stalled terminal must not
/// hold up the reads that report to it); a refused write is no failure of the command.
fn say(text: &str) {
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Notes the transcripts a listing found.
pub(crate) fn listed(keys: &[mneme_core::KeyInfo]) {
    let Some(meter) = METER.get() else { return };
    let mut reading = meter.lock();
    for info in keys.iter().filter(|info| info.key.ends_with(TRANSCRIPT)) {
        reading.listed.insert(info.key.clone(), info.size);
    }
}

/// Notes `count` bytes read of `key`.
pub(crate) fn read(key: &str, count: usize) {
    let Some(meter) = METER.get() else { return };
    if !key.ends_with(TRANSCRIPT) {
        return;
    }
    let mut reading = meter.lock();
    reading.read_bytes += count as u64;
    if !reading.read_files.contains(key) {
        reading.read_files.insert(key.to_owned());
    }
}

impl Meter {
    fn lock(&self) -> MutexGuard<'_, Reading> {
        // A panic elsewhere leaves counts, never a broken invariant.
        self.reading.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes the line if it is due; false once the report has ended.
    fn report(&self) -> bool {
        let _screen = self.screen.lock().unwrap_or_else(PoisonError::into_inner);
        let said = {
            let mut reading = self.lock();
            if reading.done {
                return false;
            }
            if reading.read_bytes == 0 || (self.shown == Shown::Terminal && self.started.elapsed() < DELAY) {
                return true;
            }
            let total: u64 = reading.listed.values().sum();
            let read = reading.read_bytes;
            // A transcript read twice (its listing, then its search) counts twice: past
            // the total, only the amount says anything.
            let line = if read <= total {
                format!("mneme: reading transcripts: {} of {} ({}%)", bytes(read), bytes(total), read * 100 / total.max(1))
            } else {
                format!("mneme: reading transcripts: {} read", bytes(read))
            };
            match self.shown {
                Shown::Terminal => {
                    reading.on_screen = true;
                    format!("\r{line}\x1b[K")
                }
                Shown::Always => format!("{line}\n"),
            }
        };
        say(&said);
        true
    }
}

/// `count` bytes in the largest unit that keeps a digit before the point.
fn bytes(count: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    let mut value = count as f64;
    let mut unit = "bytes";
    for next in UNITS {
        if value < 1000.0 {
            break;
        }
        value /= 1000.0;
        unit = next;
    }
    if unit == "bytes" { format!("{count} bytes") } else { format!("{value:.1} {unit}") }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_as_a_person_says_them() {
        for (count, said) in [(0, "0 bytes"), (999, "999 bytes"), (1000, "1.0 KB"), (1_234_567, "1.2 MB"), (3_400_000_000, "3.4 GB")] {
            assert_eq!(super::bytes(count), said);
        }
    }
}
