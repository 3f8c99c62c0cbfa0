//! The embedded component under wasmtime. Everything here converts between WIT and
//! core types or does I/O; behaviour lives in the component.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;

use mneme_core::{Limits, Mirror, block_on};
use wasmtime::component::{Component, HasSelf, Linker, ResourceAny};
use wasmtime::{Config, Engine as WasmEngine, Store};

use crate::{Error, HostStorage};

wasmtime::component::bindgen!({ path: "../wit", world: "engine" });

mod engine;

use exports::mneme::engine::{compaction, gates, index, memory, sessions};
use mneme::engine::{storage, types};

mneme_core::mirror_wit!(types, sessions, compaction, gates, memory, index; sends_text = false);

/// The Mneme component, built by this crate's build script.
pub const COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mneme.component.wasm"));

/// Host state: the storage the component's imports are served from.
struct HostState {
    storage: HostStorage,
}

impl types::Host for HostState {}

impl storage::Host for HostState {
    fn wants_text(&mut self) -> bool {
        // wasmtime copies a byte list in one piece: no decoding.
        false
    }
    fn list(&mut self, prefix: String) -> Result<Vec<types::KeyInfo>, types::StorageError> {
        block_on(mneme_core::Storage::list(&self.storage, &prefix)).mirror()
    }
    fn read(&mut self, key: String, offset: u64, len: Option<u64>) -> Result<storage::Data, types::StorageError> {
        block_on(mneme_core::Storage::read(&self.storage, &key, offset, len)).mirror()
    }
    fn append(&mut self, key: String, data: storage::Data) -> Result<u64, types::StorageError> {
        block_on(mneme_core::Storage::append(&self.storage, &key, data.as_bytes())).mirror()
    }
    fn replace(&mut self, key: String, data: storage::Data, expected_size: Option<u64>) -> Result<(), types::StorageError> {
        block_on(mneme_core::Storage::replace(&self.storage, &key, data.as_bytes(), expected_size)).mirror()
    }
    fn truncate(&mut self, key: String, len: u64, expected_size: u64) -> Result<(), types::StorageError> {
        block_on(mneme_core::Storage::truncate(&self.storage, &key, len, expected_size)).mirror()
    }
    fn remove(&mut self, key: String) -> Result<(), types::StorageError> {
        block_on(mneme_core::Storage::remove(&self.storage, &key)).mirror()
    }
    fn rename(&mut self, from: String, to: String) -> Result<(), types::StorageError> {
        block_on(mneme_core::Storage::rename(&self.storage, &from, &to)).mirror()
    }
    fn lock(&mut self, name: String) -> Result<(), types::StorageError> {
        block_on(mneme_core::Storage::lock(&self.storage, &name)).mirror()
    }
    fn unlock(&mut self, name: String) -> Result<(), types::StorageError> {
        block_on(mneme_core::Storage::unlock(&self.storage, &name)).mirror()
    }
}

/// A wasmtime engine with the component compiled and linked, ready to instantiate.
/// Compiling costs ~100 ms, so the compiled form is cached on disk (see [`Runtime::new`]).
pub struct Runtime {
    engine: WasmEngine,
    pre: EnginePre<HostState>,
}

impl Runtime {
    /// Loads the embedded component, from the compiled cache when it is valid.
    ///
    /// The cache lives in `$MNEME_CACHE_DIR` or the user's cache folder
    /// (`~/.cache/mneme` on Linux), keyed by the component's bytes and wasmtime's
    /// compatibility hash, so a new Mneme or wasmtime never loads a stale artifact.
    /// Any cache problem falls back to compiling.
    pub fn new() -> Result<Self, Error> {
        let engine = WasmEngine::new(&Config::new()).map_err(component_error)?;
        let component = load_cached(&engine)?;
        let mut linker = Linker::<HostState>::new(&engine);
        Engine::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |state| state).map_err(component_error)?;
        let pre = EnginePre::new(linker.instantiate_pre(&component).map_err(component_error)?).map_err(component_error)?;
        Ok(Self { engine, pre })
    }

    /// A fresh instance of the component whose storage is `storage`.
    pub fn instantiate(&self, storage: impl Into<HostStorage>, limits: Limits) -> Result<ComponentEngine, Error> {
        let mut store = Store::new(&self.engine, HostState { storage: storage.into() });
        // wasmtime caps what one call may hand the host at 128 MiB, a guard against a
        // hostile guest. This guest is Mneme's own, and a session's context or load is
        // as large as the session: any session the core accepts must come back.
        store.set_hostcall_fuel(usize::MAX);
        let bindings = self.pre.instantiate(&mut store).map_err(component_error)?;
        let limits: sessions::Limits = limits.mirror();
        let handle = bindings.mneme_engine_sessions().store().call_constructor(&mut store, Some(limits)).map_err(component_error)?;
        Ok(ComponentEngine { store, bindings, handle })
    }

    /// The names of everything the component imports.
    pub fn imports(&self) -> Vec<String> {
        let component = self.pre.instance_pre().component();
        component.component_type().imports(&self.engine).map(|(name, _)| name.to_owned()).collect()
    }
}

fn cache_path(engine: &WasmEngine) -> Option<PathBuf> {
    let dir = std::env::var_os("MNEME_CACHE_DIR").map(PathBuf::from).or_else(|| dirs::cache_dir().map(|d| d.join("mneme")))?;
    let mut hasher = DefaultHasher::new();
    COMPONENT.hash(&mut hasher);
    engine.precompile_compatibility_hash().hash(&mut hasher);
    Some(dir.join(format!("component-{:016x}.cwasm", hasher.finish())))
}

fn load_cached(engine: &WasmEngine) -> Result<Component, Error> {
    let path = cache_path(engine);
    if let Some(path) = &path
        && path.is_file()
    {
        // SAFETY: the file is one this function wrote with `precompile_component` into
        // the user's own cache folder, under a name bound to these exact component
        // bytes and this wasmtime's compatibility hash; wasmtime also checks its header.
        if let Ok(component) = unsafe { Component::deserialize_file(engine, path) } {
            // Marked used: pruning keeps the newest, and the one in use is among them.
            let _ = std::fs::File::options().append(true).open(path).and_then(|file| file.set_modified(std::time::SystemTime::now()));
            return Ok(component);
        }
    }
    let compiled = engine.precompile_component(COMPONENT).map_err(component_error)?;
    if let Some(path) = &path {
        // A cache that cannot be written only costs the next start a compile.
        if write_atomically(path, &compiled).is_ok() {
            prune_cache(path);
        }
    }
    // SAFETY: `compiled` was produced just above by this engine.
    unsafe { Component::deserialize(engine, &compiled) }.map_err(component_error)
}

/// How many compiled components the cache keeps: each build and each upgrade of
/// `mneme` leaves one (~8 MB), and nothing else removes them.
const CACHE_KEEPS: usize = 3;

/// Removes all but the [`CACHE_KEEPS`] newest compiled components beside `written`.
fn prune_cache(written: &std::path::Path) {
    let Some(dir) = written.parent() else { return };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut compiled: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|entry| entry.file_name().to_str().is_some_and(|name| name.starts_with("component-") && name.ends_with(".cwasm")))
        .filter_map(|entry| Some((entry.metadata().ok()?.modified().ok()?, entry.path())))
        .collect();
    compiled.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    for (_, stale) in compiled.into_iter().skip(CACHE_KEEPS).filter(|(_, path)| path != written) {
        let _ = std::fs::remove_file(stale);
    }
}

fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().ok_or_else(|| std::io::Error::other("cache path has no folder"))?;
    std::fs::create_dir_all(dir)?;
    let temp = dir.join(format!(".{}.tmp", std::process::id()));
    std::fs::write(&temp, bytes)?;
    std::fs::rename(&temp, path)
}

/// One instance of the component and its `store` resource.
pub struct ComponentEngine {
    store: Store<HostState>,
    bindings: Engine,
    handle: ResourceAny,
}

impl ComponentEngine {
    /// Calls an export with the wasmtime store and the `store` resource's handle.
    /// Traps become [`Error::Component`]; the core's errors are mirrored back.
    fn call<T: Mirror<C>, C>(
        &mut self,
        call: impl FnOnce(&Engine, &mut Store<HostState>, ResourceAny) -> wasmtime::Result<Result<T, types::Error>>,
    ) -> Result<C, Error> {
        let outcome: Result<C, mneme_core::Error> = call(&self.bindings, &mut self.store, self.handle).map_err(component_error)?.mirror();
        Ok(outcome?)
    }

    /// Calls an export that cannot fail but by trapping.
    fn call_total<T: Mirror<C>, C>(
        &mut self,
        call: impl FnOnce(&Engine, &mut Store<HostState>, ResourceAny) -> wasmtime::Result<T>,
    ) -> Result<C, Error> {
        Ok(call(&self.bindings, &mut self.store, self.handle).map_err(component_error)?.mirror())
    }
}

fn component_error(e: wasmtime::Error) -> Error {
    Error::Component(format!("{e:#}"))
}
