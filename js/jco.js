// The engine of the JavaScript API (./api.js) for hosts that run jco's transpiled
// component: Node (host-node/js/mneme.js) and the edge (host-edge/). It turns
// mneme-core's JSON into the component's values and back by the WIT's types (./wit.js):
// camelCase fields, bigint for 64-bit integers, `{tag, val}` variants, undefined for
// none.
import { MnemeError, camel, lift, lower } from "./api.js";
import { FUNCTIONS } from "./wit.js";

/**
 * One instance of the transpiled component (`instantiate` from jco's output, its core
 * modules from `coreModule(path)`) whose storage imports call `storage`'s synchronous
 * methods, which throw a `{tag, val}` storage error to fail.
 */
export function instance(instantiate, coreModule, storage) {
  // An object's bytes cross as the WIT's `data`: jco copies a byte list in one piece,
  // so this host wants no text, and its reads go back as bytes.
  const imports = {
    wantsText: () => false,
    list: (prefix) => storage.list(prefix),
    read: (key, offset, len) => ({ tag: "bytes", val: storage.read(key, offset, len) }),
    append: (key, data) => storage.append(key, lift("data", data)),
    replace: (key, data, expectedSize) => storage.replace(key, lift("data", data), expectedSize),
    truncate: (key, len, expectedSize) => storage.truncate(key, len, expectedSize),
    remove: (key) => storage.remove(key),
    rename: (from, to) => storage.rename(from, to),
    lock: (name) => storage.lock(name),
    unlock: (name) => storage.unlock(name),
  };
  // jco's instantiation mode looks the interfaces up with and without their version.
  return instantiate(coreModule, {
    "mneme:engine/storage": imports,
    "mneme:engine/storage@0.1.0": imports,
    "mneme:engine/types": {},
    "mneme:engine/types@0.1.0": {},
  });
}

/** A storage that refuses everything: for an instance that needs no store (checkBytes). */
export const NO_STORAGE = new Proxy({}, { get: (_, op) => (key) => { throw { tag: "io", val: { key: String(key), message: `no storage behind ${String(op)}` } }; } });

/**
 * Calls WIT function `key` of instance `root` with `args`, mneme-core's JSON, one per
 * parameter; `store` goes where the function borrows one. Its result as mneme-core's
 * JSON; its `err` thrown as a MnemeError worded by the core.
 */
export function invoke(root, store, key, args) {
  const { method, params, result } = FUNCTIONS[key];
  const path = key.split(".");
  const values = [];
  let next = 0;
  for (const [name, type] of params) values.push(typeof type === "object" && "borrow" in type ? store : lower(type, args[next++], camel(name)));
  if (next !== args.length) throw new Error(`${key} takes ${next} arguments, not ${args.length}`);
  const target = method ? store : root[camel(path[0])];
  let raw;
  try {
    raw = target[camel(path[path.length - 1])](...values);
  } catch (error) {
    const payload = error?.payload ?? error;
    if (payload && typeof payload.tag === "string" && !(payload instanceof Error)) {
      const { kind, message, details } = root.sessions.explain(payload);
      throw new MnemeError(kind, message, JSON.parse(details));
    }
    throw error;
  }
  // A result's `err` is thrown by jco; what comes back is the `ok`. What the WIT
  // carries as JSON text (a request body, a message's blocks) is lifted as its value.
  return lift(result !== null && typeof result === "object" && "result" in result ? result.result[0] : result, raw);
}

/** The API's engine on one instance (`root`, from `instance`) and its store. */
export class JcoEngine {
  /** A store on `root` whose storage is `storage`; 0 for a limit is the core's default. */
  constructor(root, storage, { partBytes = 0, totalBytes = 0 } = {}) {
    const defaults = root.sessions.defaultLimits();
    const limit = (name, value, otherwise) => lower("u64", value, name) || otherwise;
    this.root = root;
    this.storage = storage;
    this.store = new root.sessions.Store({ partBytes: limit("partBytes", partBytes, defaults.partBytes), totalBytes: limit("totalBytes", totalBytes, defaults.totalBytes) });
  }

  invoke(key, args) {
    return invoke(this.root, this.store, key, args);
  }

  /** The core's compaction driver over `plan`, its steps as mneme-core's JSON. */
  run(plan) {
    const run = new this.root.compaction.Run(lower("compaction.plan", plan, "plan"));
    return {
      next: () => lift("compaction.step", run.next()),
      answer: (answer) => run.answer(lower({ result: ["string", "string"] }, answer, "answer")),
      answerAll: (answer) => run.answerAll(lower({ result: ["string", "string"] }, answer, "answer")),
      finish: () => run.finish(),
      failure: () => run.failure() ?? null,
      dispose: () => run[Symbol.dispose]?.(),
    };
  }

  /** Gives back the sessions the store holds (and the object's resources), then the storage's locks. */
  close() {
    try {
      this.store[Symbol.dispose]?.();
    } finally {
      this.storage.close?.();
    }
  }
}

/** The engine of instance `root` for the operations that read no store (what a host gives the API's `setFreeEngine`). */
export function freeEngine(root) {
  return { invoke: (key, args) => invoke(root, undefined, key, args) };
}
