// Mneme in the browser: durable agent sessions with no server.
//
//   import { Mneme } from "./mneme.js";
//   const store = await Mneme.open({ backend: "opfs", namespace: "my-app" });
//   await store.append("chat-1", { role: "user", text: "hello", cwd: "/my-app" });
//   const { messages } = await store.context("chat-1");
//
// Every method returns a promise; failures reject with MnemeError, whose `kind` is
// the core's error kind (`session-not-found`, `storage/quota-exceeded`, …). The
// methods are the JavaScript API every package shares (js/api.js, copied into pkg/ by
// `cargo xtask web`); this file gives it its engine, the wasm-bindgen binding of the
// core (src/lib.rs), and the browser's backends.

import init, * as wasm from "../pkg/mneme_web.js";
import { Mneme as Api, MnemeError, camel, lift, lower, setFreeEngine, snake } from "../pkg/api.js";
import { checkOptions } from "../pkg/options.js";
import { FUNCTIONS, TYPES } from "../pkg/wit.js";
import { IndexedDbBackend, MemoryBackend, OpfsBackend, StorageFailure, failure as failureOf, pageLocks, withLocks } from "./backends.js";

export { MnemeError };

const OPEN_OPTIONS = ["backend", "namespace", "storage", "partBytes", "totalBytes", "lockTimeoutMs"];
// No prototype: `backend: "toString"` names no backend.
const BACKENDS = Object.assign(Object.create(null), { memory: MemoryBackend, indexeddb: IndexedDbBackend, opfs: OpfsBackend });
/** What a backend of one's own (`open({storage})`) implements besides the locks. */
const STORAGE_METHODS = ["list", "read", "append", "replace", "truncate", "remove", "rename"];

/**
 * A namespace is a non-empty name without NUL (an empty one is more likely a setting
 * left unset than a choice). In OPFS it names a folder, so it has no "/" or "\" and is
 * not "." or ".."; an IndexedDB database takes those, so a store an earlier version
 * opened under such a name opens still.
 */
function checkNamespace(namespace, backend) {
  const shown = JSON.stringify(namespace) ?? String(namespace);
  if (typeof namespace !== "string" || namespace === "" || namespace.includes("\0")) {
    throw new MnemeError("invalid-argument", `namespace must be a non-empty name without NUL, not ${shown}`);
  }
  if (backend === "opfs" && (namespace === "." || namespace === ".." || /[/\\]/.test(namespace))) {
    throw new MnemeError("invalid-argument", `an OPFS namespace names a folder: give a name without "/" or "\\", not "." or "..", not ${shown}`);
  }
}

/** A backend's failure to open or destroy as the engine's errors say it: `storage/<kind>`. */
function storageError(error) {
  if (error instanceof MnemeError) return error;
  const known = error instanceof StorageFailure ? error : failureOf(error, "");
  return new MnemeError(`storage/${known.kind}`, known.message, { key: known.key ?? "" });
}
let ready;

/** Loads the WebAssembly module once per page. */
function load() {
  // A bundled page opened from a file fails to fetch the module with a bare "Failed to
  // fetch": say why (a setup that can load from a file, with the module inlined, loads).
  ready ??= init().catch((error) => {
    ready = undefined;
    if (globalThis.location?.protocol === "file:") {
      throw new MnemeError("unsupported", `Mneme could not load its WebAssembly into a page opened from a file (file://): serve the page over http(s) (${error.message ?? error})`);
    }
    throw new MnemeError("storage/io", `Mneme could not load its WebAssembly (pkg/mneme_web_bg.wasm, beside the bundle when bundled): ${error.message ?? error}`, { key: "" });
  });
  return ready;
}

/** A rejection of the binding (`{kind, message, details}`) as a MnemeError. */
function failure(error) {
  if (error instanceof MnemeError || !error || typeof error.kind !== "string") return error;
  return new MnemeError(error.kind, error.message, JSON.parse(error.details ?? "{}"));
}

/**
 * mneme-core's JSON of WIT type `type` as the binding takes it: each `list<u8>` or
 * `data` value (a Uint8Array) moved into `bytes` and given by its index there, so
 * megabytes of an import travel as bytes, not as a JSON array of numbers.
 */
function detach(type, value, bytes) {
  // The core takes WIT's `json` as the text (`null` too, as jco gives it).
  if (type === "json") return JSON.stringify(value);
  if (value == null) return value;
  if (type === "data") {
    bytes.push(value);
    return bytes.length - 1;
  }
  if (typeof type === "string") {
    const definition = TYPES[type];
    if (definition?.record) return Object.fromEntries(definition.record.map(([field, item]) => [snake(field), detach(item, value[snake(field)], bytes)]));
    if (definition?.variant && typeof value === "object") {
      const [[tag, payload]] = Object.entries(value);
      const [, item] = definition.variant.find(([name]) => snake(name) === tag);
      return { [tag]: item === null ? payload : detach(item, payload, bytes) };
    }
    return value;
  }
  if ("option" in type) return detach(type.option, value, bytes);
  if ("list" in type) {
    if (type.list !== "u8") return value.map((item) => detach(type.list, item, bytes));
    bytes.push(value);
    return bytes.length - 1;
  }
  return value;
}

/** A backend for an engine that reads no store: any call of it is a failure. */
const NO_BACKEND = new Proxy({}, { get: (_, method) => (key) => Promise.reject(new StorageFailure("io", String(key), `no storage behind ${String(method)}`)) });
let storeless;
// The operations of no store (`Mneme.projectOf`, …) run on an engine over no storage,
// made once.
setFreeEngine(async () => {
  await load();
  storeless ??= new WasmEngine(new wasm.Engine(NO_BACKEND, 0, 0), null);
  return storeless;
});

/** The API's engine in the browser: the binding's store over a backend. */
class WasmEngine {
  constructor(engine, storage) {
    this.engine = engine;
    this.storage = storage;
  }

  /** Checks each argument by its WIT type (as jco's engine does) and sends it in mneme-core's own spelling. */
  async invoke(key, args) {
    const bytes = [];
    const values = [];
    let next = 0;
    for (const [name, type] of FUNCTIONS[key].params) {
      if (typeof type === "object" && "borrow" in type) continue;
      values.push(detach(type, lift(type, lower(type, args[next++], camel(name))), bytes));
    }
    let result;
    try {
      result = await this.engine.call(key, JSON.stringify(values), bytes);
    } catch (error) {
      throw failure(error);
    }
    // JSON text, or bytes (an export) as they are.
    if (typeof result !== "string") return result;
    const value = JSON.parse(result);
    // A result of WIT's `json` is its text in the core's JSON: the value it holds.
    const type = FUNCTIONS[key].result;
    const ok = type !== null && typeof type === "object" && "result" in type ? type.result[0] : type;
    return (ok === "json" || ok?.option === "json") && typeof value === "string" ? JSON.parse(value) : value;
  }

  run(plan) {
    const run = new wasm.CompactionRun(JSON.stringify(plan));
    const answer = (given) => ("ok" in given ? [given.ok, undefined] : [undefined, given.err]);
    return {
      next: () => JSON.parse(run.next()),
      answer: (given) => run.answer(...answer(given)),
      answerAll: (given) => run.answerAll(...answer(given)),
      finish: () => run.finish(),
      failure: () => run.failure() ?? null,
      dispose: () => run.free(),
    };
  }

  /** Gives back the sessions the store holds, then closes the backend's handles (the OPFS worker, the IndexedDB connection). */
  async close() {
    try {
      await this.engine.releaseAll();
    } catch (error) {
      throw failure(error);
    } finally {
      this.storage.close?.();
    }
  }
}

export class Mneme extends Api {
  /**
   * Opens a store. `backend`: "opfs" (files in the origin-private file system),
   * "indexeddb" (chunk records), or "memory" (gone with the page). Stores with
   * different `namespace`s are separate. `storage` supplies a backend of your own.
   */
  static async open(options = {}) {
    // A misspelt option (`namspace`) would open another store than the one meant.
    checkOptions("open", options, OPEN_OPTIONS, MnemeError);
    const { backend = "indexeddb", namespace = "default", storage: own, partBytes = 0, totalBytes = 0, lockTimeoutMs = 10_000 } = options;
    const Backend = BACKENDS[backend];
    if (!Backend && !own) throw new MnemeError("invalid-argument", `unknown backend ${JSON.stringify(backend)}: use "opfs", "indexeddb" or "memory"`);
    checkNamespace(namespace, own === undefined ? backend : undefined);
    if (own !== undefined && STORAGE_METHODS.some((method) => typeof own?.[method] !== "function")) {
      throw new MnemeError("invalid-argument", `storage must be a backend object with the methods ${STORAGE_METHODS.join(", ")} (see backends.js); to pick a built-in one, give backend: "opfs", "indexeddb" or "memory"`);
    }
    // A browser fires a longer timer at once: the wait would be none.
    if (typeof lockTimeoutMs !== "number" || !(lockTimeoutMs >= 0) || lockTimeoutMs > 2 ** 31 - 1) {
      throw new MnemeError("invalid-argument", `lockTimeoutMs must be a number of milliseconds from 0 to 2147483647, not ${JSON.stringify(lockTimeoutMs) ?? String(lockTimeoutMs)}`);
    }
    // A memory store is this page's alone: locks within the page keep its writes apart.
    const locks = globalThis.navigator?.locks ?? (backend === "memory" && own === undefined ? pageLocks : undefined);
    if (!locks) {
      throw new MnemeError("unsupported", "this page has no Web Locks (navigator.locks), which keep two tabs from writing one session at once: serve it over https or from localhost (the memory backend works without them)");
    }
    const limits = [lower("u64", partBytes, "partBytes"), lower("u64", totalBytes, "totalBytes")];
    await load();
    // `storage`: a backend of your own implementing the contract of backends.js.
    const opened = own ?? (await Backend.open(namespace).catch((error) => Promise.reject(storageError(error))));
    const storage = withLocks(opened, `${backend}:${namespace}`, lockTimeoutMs, locks);
    return new Mneme(new WasmEngine(new wasm.Engine(storage, ...limits), storage), backend, namespace);
  }

  /** Deletes every session of a namespace. */
  static async destroy(options) {
    checkOptions("destroy", options ?? {}, ["backend", "namespace"], MnemeError);
    const { backend, namespace = "default" } = options ?? {};
    if (!BACKENDS[backend]) throw new MnemeError("invalid-argument", `destroy: unknown backend ${JSON.stringify(backend)}: use "opfs", "indexeddb" or "memory"`);
    checkNamespace(namespace, backend);
    await BACKENDS[backend].destroy?.(namespace).catch((error) => Promise.reject(storageError(error)));
  }

  constructor(engine, backend, namespace) {
    super(engine);
    this.backend = backend;
    this.namespace = namespace;
  }

  /**
   * Runs the storage contract every backend keeps on two handles of one fresh, empty
   * store; resolves with what broke it (empty when nothing did).
   */
  static async storageContract(a, b) {
    await load();
    try {
      return JSON.parse(await wasm.storageContract(a, b));
    } catch (error) {
      throw failure(error);
    }
  }
}
