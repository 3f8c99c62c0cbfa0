//! What every area of a store works through: the storage, the size limits, the
//! redaction, the locks a store holds between calls and the embedding table. Each
//! area's view borrows it; no area reaches another's state through it.

use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use crate::error::Error;
use crate::recall::embed::Embeddings;
use crate::redact::Redaction;
use crate::storage::{Storage, StorageError};
use crate::support::hash::FastMap;

/// Size limits of a session's transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// A part is never grown past this; the next entry starts a new part instead
    /// (an entry larger than the limit gets a part of its own).
    pub part_bytes: u64,
    /// What a session resumes with (its bytes since its last compaction) never passes
    /// this: the append is refused with [`Error::SessionFull`] (a sub-agent's
    /// transcript, with [`Error::SubagentFull`]).
    pub total_bytes: u64,
}

impl Default for Limits {
    /// 50 MiB per part, 200 MiB in all (Cersei's defaults).
    fn default() -> Self {
        Self { part_bytes: 50 << 20, total_bytes: 200 << 20 }
    }
}

/// A size as people write one: bytes (`123`), or a number with `K`, `M` or `G`, each
/// binary and with an optional `B` or `iB` (`64KiB`, `50MB`, `2G`), in any case. Every
/// host's options read sizes by this one rule.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 =
        number.parse().map_err(|_| alloc::format!("`{text}` is not a size: write a number of bytes, optionally with KiB, MiB or GiB"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        unit => return Err(alloc::format!("`{text}`: unknown size unit `{unit}`; use KiB, MiB or GiB")),
    };
    number.checked_mul(1 << shift).ok_or_else(|| alloc::format!("`{text}` is too large a size"))
}

/// A size limit ([`Limits`]' fields) as people write one: [`parse_size`], above zero.
pub fn parse_limit(text: &str) -> Result<u64, String> {
    Some(parse_size(text)?).filter(|&n| n > 0).ok_or_else(|| alloc::format!("`{text}`: a limit must be above zero"))
}

/// The storage and the settings every area shares.
#[derive(Debug)]
pub(crate) struct Base<S> {
    pub storage: S,
    pub limits: Limits,
    /// The secrets taken out of every line and memory file before it is written.
    redaction: Cell<Redaction>,
    /// Session locks this store holds between calls (see `Sessions::hold`), and whether
    /// an operation of this store is using each right now (a mark beside the name: a
    /// set of names in use allocated a string per operation).
    held: RefCell<FastMap<String, Hold>>,
    /// The word vectors recall ranks with besides words (see `recall::embed`): memory
    /// recall and `search` both use it.
    embeddings: RefCell<Option<Rc<Embeddings>>>,
}

impl<S: Storage> Base<S> {
    pub fn new(storage: S, limits: Limits) -> Self {
        Self { storage, limits, redaction: Cell::default(), held: RefCell::default(), embeddings: RefCell::default() }
    }

    pub fn redaction(&self) -> Redaction {
        self.redaction.get()
    }

    pub fn set_redaction(&self, redaction: Redaction) {
        self.redaction.set(redaction);
    }

    pub fn embedding_table(&self) -> Option<Rc<Embeddings>> {
        self.embeddings.borrow().clone()
    }

    pub fn set_embedding_table(&self, table: Option<Rc<Embeddings>>) {
        *self.embeddings.borrow_mut() = table;
    }

    /// Whether this store holds lock `name` between calls.
    pub fn holds(&self, name: &str) -> bool {
        self.held.borrow().get(name).is_some_and(|hold| hold.is_held())
    }

    /// Takes lock `name` to keep between calls; `false` if this store holds it already.
    pub async fn hold(&self, name: &str) -> Result<bool, Error> {
        let before = self.held.borrow().get(name).copied();
        if before.is_some_and(Hold::is_held) {
            return Ok(false);
        }
        self.storage.lock(name).await?;
        // An operation still running from before a release keeps the session to itself.
        let taken = if before == Some(Hold::Released) { Hold::InUse } else { Hold::Idle };
        self.held.borrow_mut().insert(name.into(), taken);
        Ok(true)
    }

    /// Gives back held lock `name` to the storage.
    pub async fn release(&self, name: &str) -> Result<(), StorageError> {
        self.let_go(name);
        self.storage.unlock(name).await
    }

    /// The held lock whose name `matches`, if any.
    pub fn held_lock(&self, matches: impl Fn(&str) -> bool) -> Option<String> {
        self.held.borrow().iter().find(|(name, hold)| hold.is_held() && matches(name)).map(|(name, _)| name.clone())
    }

    /// Gives back every lock this store holds.
    pub async fn release_all(&self) -> Result<(), Error> {
        let names: Vec<String> = self.held.borrow().iter().filter(|(_, hold)| hold.is_held()).map(|(name, _)| name.clone()).collect();
        for name in &names {
            self.let_go(name);
        }
        let mut outcome = Ok(());
        for name in names {
            if let Err(error) = self.storage.unlock(&name).await {
                outcome = Err(error.into());
            }
        }
        outcome
    }

    /// Runs `work` holding the lock `name`, and releases it whatever `work` returned (a
    /// lock the store holds already stays held).
    pub(crate) async fn locked<T>(&self, name: &str, work: impl core::future::Future<Output = Result<T, Error>>) -> Result<T, Error> {
        // Taken for this operation if idle; what it was before, either way.
        let hold = self.held.borrow_mut().get_mut(name).map(|hold| {
            let before = *hold;
            if before == Hold::Idle {
                *hold = Hold::InUse;
            }
            before
        });
        match hold {
            // Holding stands for the lock between calls, not within them: a second
            // operation of this store while one is in flight (on an asynchronous host)
            // is refused as the lock would refuse it.
            Some(Hold::InUse) => return Err(StorageError::Locked { key: name.into() }.into()),
            Some(Hold::Idle) => {
                let _busy = Busy(&self.held, name);
                return work.await;
            }
            Some(Hold::Released) | None => {}
        }
        self.storage.lock(name).await?;
        let result = work.await;
        // Work that landed is reported as landed, whatever the unlock after it says (a
        // connection lost after its commit, whose lock the server dropped with it): a
        // caller told it failed would write it again.
        let _ = self.storage.unlock(name).await;
        result
    }

    /// Forgets held lock `name` (the caller gives it back to the storage); one that
    /// an operation is using is marked released until that operation ends.
    fn let_go(&self, name: &str) {
        let mut held = self.held.borrow_mut();
        match held.get_mut(name) {
            Some(hold @ Hold::InUse) => *hold = Hold::Released,
            _ => {
                held.remove(name);
            }
        }
    }
}

/// What the store knows of a session lock it took with [`crate::sessions::Sessions::hold`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hold {
    /// Held; no operation is using it.
    Idle,
    /// Held, and an operation of this store is using it.
    InUse,
    /// Given back while an operation was still using it: that operation keeps the
    /// session to itself until it ends, even if the session is held again meanwhile.
    Released,
}

impl Hold {
    fn is_held(self) -> bool {
        self != Hold::Released
    }
}

/// Marks a held lock in use until dropped (also when the operation's future is).
struct Busy<'a>(&'a RefCell<FastMap<String, Hold>>, &'a str);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        let mut held = self.0.borrow_mut();
        match held.get_mut(self.1) {
            Some(hold @ Hold::InUse) => *hold = Hold::Idle,
            Some(Hold::Released) => {
                held.remove(self.1);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_with_binary_units_in_any_spelling() {
        for (text, bytes) in
            [("123", 123), ("0", 0), ("64KiB", 64 << 10), ("50MB", 50 << 20), ("2g", 2 << 30), (" 7 mib ", 7 << 20), ("9b", 9)]
        {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
        for text in ["", "MiB", "-1", "1.5G", "3TiB", "18446744073709551615K"] {
            assert!(parse_size(text).is_err(), "{text}");
        }
    }
}
