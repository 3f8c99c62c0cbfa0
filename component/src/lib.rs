//! The Mneme core as a WebAssembly component. Each export converts its arguments,
//! calls `mneme-core`, and converts the result back; storage calls go out through
//! the imported `storage` interface. No logic lives here, and no conversion either:
//! `mneme_core::mirror_wit!` supplies every one. The exports are written by `cargo
//! xtask codegen` (operations.rs): each operation calls the store's view of its
//! interface; what is here is the storage, the compaction driver's resource and the
//! exports that are no operation (`own`).
#![no_std]

extern crate alloc;

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::RefCell;
use core::sync::atomic::{AtomicU8, Ordering};

use mneme_core::keys::check_key;
use mneme_core::{self as core_, Mirror};

wit_bindgen::generate!({ path: "../wit", world: "engine" });

use exports::mneme::engine::{compaction, gates, index, memory, sessions};
use mneme::engine::{storage, types};

core_::mirror_wit!(types, sessions, compaction, gates, memory, index; sends_text = wants_text());

mod operations;

#[cfg(all(target_arch = "wasm32", not(test)))]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

#[cfg(all(target_arch = "wasm32", not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}

/// The host's storage, reached through the component's imports. Keys are checked by
/// the core's rules before they leave, so no host has to restate them (each adds only
/// its own: reserved folders, platform names).
struct ImportedStorage;

impl core_::Storage for ImportedStorage {
    async fn list(&self, prefix: &str) -> Result<Vec<core_::KeyInfo>, core_::StorageError> {
        storage::list(prefix).mirror()
    }
    async fn read(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, core_::StorageError> {
        check_key(key)?;
        storage::read(key, offset, len).mirror()
    }
    async fn append(&self, key: &str, data: &[u8]) -> Result<u64, core_::StorageError> {
        check_key(key)?;
        // An owned copy: wit-bindgen's borrowing bindings would rename every imported type.
        storage::append(key, &data.to_vec().mirror()).mirror()
    }
    async fn replace(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), core_::StorageError> {
        check_key(key)?;
        storage::replace(key, &data.to_vec().mirror(), expected_size).mirror()
    }
    async fn truncate(&self, key: &str, len: u64, expected_size: u64) -> Result<(), core_::StorageError> {
        check_key(key)?;
        storage::truncate(key, len, expected_size).mirror()
    }
    async fn remove(&self, key: &str) -> Result<(), core_::StorageError> {
        check_key(key)?;
        storage::remove(key).mirror()
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), core_::StorageError> {
        check_key(from)?;
        check_key(to)?;
        storage::rename(from, to).mirror()
    }
    async fn lock(&self, name: &str) -> Result<(), core_::StorageError> {
        check_key(name)?;
        storage::lock(name).mirror()
    }
    async fn unlock(&self, name: &str) -> Result<(), core_::StorageError> {
        storage::unlock(name).mirror()
    }
}

/// The host's answer to `wants-text`, asked once: 0 not yet, 1 no, 2 yes.
static WANTS_TEXT: AtomicU8 = AtomicU8::new(0);

fn wants_text() -> bool {
    match WANTS_TEXT.load(Ordering::Relaxed) {
        0 => {
            let wants = storage::wants_text();
            WANTS_TEXT.store(if wants { 2 } else { 1 }, Ordering::Relaxed);
            wants
        }
        answer => answer == 2,
    }
}

struct Component;

struct Store(core_::Store<ImportedStorage>);

/// Drives a core future over the synchronous imports and mirrors its outcome.
fn run<T: Mirror<W>, W>(future: impl core::future::Future<Output = Result<T, core_::Error>>) -> Result<W, types::Error> {
    core_::block_on(future).mirror()
}

/// A store dropped by its host gives back the session locks it holds.
impl Drop for Store {
    fn drop(&mut self) {
        let _ = core_::block_on(self.0.release_all());
    }
}

/// The core's compaction driver; the WIT resource's methods take `&self`.
struct Run(RefCell<core_::Run>);

impl compaction::GuestRun for Run {
    fn new(plan: compaction::Plan) -> Self {
        Run(RefCell::new(core_::Run::new(plan.mirror())))
    }
    fn next(&self) -> compaction::Step {
        self.0.borrow().next().mirror()
    }
    fn answer(&self, answer: Result<String, String>) {
        self.0.borrow_mut().handle(answer)
    }
    fn answer_all(&self, answer: Result<String, String>) {
        self.0.borrow_mut().handle_whole(answer)
    }
    fn finish(&self) {
        self.0.borrow_mut().finish()
    }
    fn failure(&self) -> Option<String> {
        self.0.borrow().failure().map(ToString::to_string)
    }
}

/// The exports that are no operation of the engine, which the generated exports
/// (operations.rs) call by name: constants, the storage contract, explanations.
mod own {
    use alloc::string::{String, ToString};
    use alloc::vec::Vec;

    use mneme_core::{self as core_, Mirror};

    use super::{ImportedStorage, Store, compaction, gates, index, memory, sessions, types};

    pub fn new_store(limits: Option<sessions::Limits>) -> Store {
        Store(core_::Store::with_limits(ImportedStorage, limits.map_or_else(core_::Limits::default, Mirror::mirror)))
    }

    pub fn storage_contract() -> Vec<String> {
        core_::block_on(async {
            match core_::Storage::list(&ImportedStorage, "").await {
                Ok(keys) if keys.is_empty() => core_::storage::contract::run(&ImportedStorage, &ImportedStorage).await,
                Ok(_) => alloc::vec!["the store is not empty: run the contract on a fresh, empty store".into()],
                Err(error) => alloc::vec![alloc::format!("listing the store failed: {error}")],
            }
        })
    }

    pub fn default_limits() -> sessions::Limits {
        core_::Limits::default().mirror()
    }

    pub fn default_retention() -> sessions::Retention {
        core_::retention::Retention::default().mirror()
    }

    pub fn explain(error: types::Error) -> sessions::Explanation {
        let error: core_::Error = error.mirror();
        sessions::Explanation { kind: error.kind(), message: error.to_string(), details: error.details() }
    }

    pub fn default_settings() -> compaction::Settings {
        core_::Settings::default().mirror()
    }

    pub fn default_flush_settings() -> gates::FlushSettings {
        core_::gates::FlushSettings::default().mirror()
    }

    pub fn default_extraction_settings() -> gates::ExtractionSettings {
        core_::gates::ExtractionSettings::default().mirror()
    }

    pub fn default_dream_settings() -> gates::DreamSettings {
        core_::gates::DreamSettings::default().mirror()
    }

    pub fn default_caps() -> memory::Caps {
        core_::memory::memory_md::Caps::default().mirror()
    }

    pub fn default_route_policy() -> index::RoutePolicy {
        core_::index::RoutePolicy::default().mirror()
    }

    pub fn default_reset_policy() -> gates::ResetPolicy {
        core_::gates::ResetPolicy::default().mirror()
    }

    pub fn default_key_patch() -> index::KeyPatch {
        core_::index::KeyPatch::default().mirror()
    }
}

export!(Component);
