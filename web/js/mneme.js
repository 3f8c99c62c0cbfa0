// Mneme in the browser: durable agent sessions with no server.
//
//   import { Mneme } from "./mneme.js";
//   const store = await Mneme.open({ backend: "opfs", namespace: "my-app" });
//   await store.append("chat-1", { role: "user", text: "hello" });
//   const { messages } = await store.context("chat-1");
//
// Every method returns a promise; failures reject with MnemeError, whose `kind` is
// the core's error kind (`session-not-found`, `storage/quota-exceeded`, …).

import init, * as wasm from "../pkg/mneme_web.js";
import { IndexedDbBackend, MemoryBackend, OpfsBackend, withLocks } from "./backends.js";

export class MnemeError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = "MnemeError";
    this.kind = kind;
  }
}

const BACKENDS = { memory: MemoryBackend, indexeddb: IndexedDbBackend, opfs: OpfsBackend };
let ready;

/** Loads the WebAssembly module once per page. */
function load() {
  ready ??= init();
  return ready;
}

async function call(promise) {
  try {
    return JSON.parse(await promise);
  } catch (error) {
    if (error instanceof MnemeError) throw error;
    if (error && typeof error.kind === "string") throw new MnemeError(error.kind, error.message);
    throw error;
  }
}

export class Mneme {
  /**
   * Opens a store. `backend`: "opfs" (files in the origin-private file system),
   * "indexeddb" (chunk records), or "memory" (gone with the page). Stores with
   * different `namespace`s are separate. `storage` supplies a backend of your own.
   */
  static async open({ backend = "indexeddb", namespace = "default", storage, partBytes = 0, totalBytes = 0, lockTimeoutMs = 10_000 } = {}) {
    const Backend = BACKENDS[backend];
    if (!Backend && !storage) throw new MnemeError("invalid-argument", `unknown backend "${backend}": use "opfs", "indexeddb" or "memory"`);
    await load();
    // `storage`: a backend of your own implementing the contract of backends.js.
    storage = withLocks(storage ?? (await Backend.open(namespace)), `${backend}:${namespace}`, lockTimeoutMs);
    return new Mneme(new wasm.Engine(storage, partBytes, totalBytes), storage, backend, namespace);
  }

  /** Deletes every session of a namespace. */
  static async destroy({ backend, namespace = "default" }) {
    await BACKENDS[backend]?.destroy?.(namespace);
  }

  constructor(engine, storage, backend, namespace) {
    this.engine = engine;
    this.storage = storage;
    this.backend = backend;
    this.namespace = namespace;
  }

  /** Closes the store's handles (the OPFS worker, the IndexedDB connection). */
  close() {
    this.storage.close?.();
  }

  /** Appends a message; a new session is filed under the project of `cwd`. */
  append(id, { role, text, cwd = "/", uuid = crypto.randomUUID(), now = Date.now() }) {
    return call(this.engine.append(id, uuid, now, role, text, cwd));
  }
  tombstone(id, uuid, now = Date.now()) { return call(this.engine.tombstone(id, uuid, now)); }
  load(id) { return call(this.engine.load(id)); }
  context(id) { return call(this.engine.context(id)); }
  list() { return call(this.engine.list()); }
  check(id) { return call(this.engine.check(id)); }
  subagents(id) { return call(this.engine.subagents(id)); }
  remove(id) { return call(this.engine.remove(id)); }
  repair(id, now = Date.now()) { return call(this.engine.repair(id, now)); }
  reopen(id) { this.engine.reopen(id); }

  planCompaction(id, settings = {}, mode = "auto") { return call(Promise.resolve().then(() => this.engine.planCompaction(id, JSON.stringify(settings), mode))); }
  summarizeOffline(id, plan) { return call(Promise.resolve().then(() => this.engine.summarizeOffline(id, JSON.stringify(plan)))); }
  applyCompaction(id, plan, summary, { boundary = crypto.randomUUID(), summaryUuid = crypto.randomUUID(), now = Date.now() } = {}) {
    return call(Promise.resolve().then(() => this.engine.applyCompaction(id, JSON.stringify(plan), summary, boundary, summaryUuid, now)));
  }
  recordCompactionFailure(id, reason, now = Date.now()) { return call(this.engine.recordCompactionFailure(id, reason, now)); }
  memoryFlushGate(id, settings = {}) { return call(Promise.resolve().then(() => this.engine.memoryFlushGate(id, JSON.stringify(settings)))); }
  recordMemoryFlush(id, now = Date.now()) { return call(this.engine.recordMemoryFlush(id, now)); }
  extractionGate(id, settings = {}) { return call(Promise.resolve().then(() => this.engine.extractionGate(id, JSON.stringify(settings)))); }
  recordExtraction(id, now = Date.now()) { return call(this.engine.recordExtraction(id, now)); }
  resetGate(id, policy = {}, now = Date.now()) { return call(Promise.resolve().then(() => this.engine.resetGate(id, now, JSON.stringify(policy)))); }
  dreamGate(settings = {}, now = Date.now()) { return call(Promise.resolve().then(() => this.engine.dreamGate(now, JSON.stringify(settings)))); }
  dreamAcquire(holder, settings = {}, now = Date.now()) { return call(Promise.resolve().then(() => this.engine.dreamAcquire(now, holder, JSON.stringify(settings)))); }
  dreamRelease(holder, completed, now = Date.now()) { return call(this.engine.dreamRelease(now, holder, completed)); }

  /** Checks transcript bytes that are not in a store (a file the user picked). */
  static async checkBytes(bytes) {
    await load();
    return call(Promise.resolve().then(() => wasm.checkBytes(bytes)));
  }
  static async contextWindow(model) {
    await load();
    return wasm.contextWindow(model);
  }
  static async silentReply(text) {
    await load();
    return wasm.silentReply(text);
  }
}
