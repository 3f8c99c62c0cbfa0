//! Standard output for Mneme's command lines, the native `mneme` and the WASI build,
//! that never panics. `println!` panics when standard output refuses a write (a full
//! disk under `mneme gc >> log`, a pipe closed by `… | head`): after the work was
//! done, with exit status 101, and in wasm as a trap. These `println!` and `print!`
//! keep the first refusal instead; the binary tells it once, at the end
//! ([`refused`]), with a status that says so.
//!
//! A binary takes them in place of std's with `#[macro_use] extern crate
//! mneme_cli_stdout;` at its root, which every module of it then uses.

use std::io::Write;
use std::sync::{Once, OnceLock};

static REFUSED: OnceLock<String> = OnceLock::new();
static BEFORE_FIRST_WRITE: OnceLock<fn()> = OnceLock::new();
static FIRST_WRITE: Once = Once::new();

/// Has `hook` run once, before the first write: a progress line on a shared terminal
/// must be gone before the answer begins. Only the first hook given is kept.
pub fn before_first_write(hook: fn()) {
    let _ = BEFORE_FIRST_WRITE.set(hook);
}

fn before_write() {
    if let Some(hook) = BEFORE_FIRST_WRITE.get() {
        FIRST_WRITE.call_once(hook);
    }
}

/// Standard output for a writer of its own (pretty JSON, exported bytes), once the
/// first-write hook has run; the caller reports what it refuses.
pub fn lock() -> std::io::StdoutLock<'static> {
    before_write();
    std::io::stdout().lock()
}

/// Writes to standard output unless it refused a write before.
pub fn write(text: std::fmt::Arguments) {
    before_write();
    if REFUSED.get().is_none()
        && let Err(error) = std::io::stdout().write_fmt(text)
    {
        let _ = REFUSED.set(error.to_string());
    }
}

/// Why standard output refused what was printed, after a last flush; `None` if it took it all.
pub fn refused() -> Option<String> {
    if REFUSED.get().is_none()
        && let Err(error) = std::io::stdout().flush()
    {
        let _ = REFUSED.set(error.to_string());
    }
    REFUSED.get().cloned()
}

#[macro_export]
macro_rules! println {
    () => {
        $crate::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::write(format_args!($($arg)*))
    };
}
