// Mneme in the browser: durable agent sessions with no server.
//
//   import { Mneme } from "./mneme.js";
//   const store = await Mneme.open({ backend: "opfs", namespace: "my-app" });
//   await store.append("chat-1", { role: "user", text: "hello", cwd: "/my-app" });
//   const { messages } = await store.context("chat-1");
//
// Every method returns a promise; failures reject with MnemeError, whose `kind` is
// the core's error kind (`session-not-found`, `storage/quota-exceeded`, …).

import init, * as wasm from "../pkg/mneme_web.js";
import { IndexedDbBackend, MemoryBackend, OpfsBackend, withLocks } from "./backends.js";
import { checkOptions, guardOptions } from "../pkg/options.js";

const OPEN_OPTIONS = ["backend", "namespace", "storage", "partBytes", "totalBytes", "lockTimeoutMs"];

export class MnemeError extends Error {
  constructor(kind, message, details = {}) {
    super(message);
    this.name = "MnemeError";
    this.kind = kind;
    this.details = details;
  }
}

const BACKENDS = { memory: MemoryBackend, indexeddb: IndexedDbBackend, opfs: OpfsBackend };
let ready;

/** Loads the WebAssembly module once per page. */
function load() {
  ready ??= init();
  return ready;
}

/** A bad argument is a MnemeError, never a trap inside the WebAssembly instance. */
function need(type, name, value) {
  const ok = type === "string" ? typeof value === "string" : Number.isSafeInteger(value);
  if (!ok) throw new MnemeError("invalid-argument", `${name} must be a ${type === "string" ? "string" : "whole number"}, not ${value === null ? "null" : typeof value}`);
  return value;
}
const text = (name, value) => need("string", name, value);
/** A time: a whole number (1.5 was cut to 1 on its way in). */
const num = (name, value) => need("number", name, value);
/** A size or count, unsigned, within its type (a limit of -1 was read as 2^32 - 1). */
const unsigned = (name, value, max = Number.MAX_SAFE_INTEGER) => {
  need("number", name, value);
  if (value < 0 || value > max) throw new MnemeError("invalid-argument", `${name} is ${value}: give a whole number from 0 to ${max}`);
  return value;
};
const u32 = (name, value) => unsigned(name, value, 2 ** 32 - 1);
/** One end of a time window: milliseconds since the epoch, or null for open. */
const time = (name, value) => {
  if (value === null || value === undefined) return undefined;
  if (!Number.isSafeInteger(value)) throw new MnemeError("invalid-argument", `${name} is ${value}: give milliseconds since the epoch (Date.now()'s kind of number), or null`);
  return value;
};
const flag = (name, value) => {
  if (typeof value !== "boolean") throw new MnemeError("invalid-argument", `${name} must be true or false, not ${value === null ? "null" : typeof value}`);
  return value;
};
/** Bytes from a string (as UTF-8), a Uint8Array or an ArrayBuffer. */
function bytes(name, value) {
  if (typeof value === "string") return new TextEncoder().encode(value);
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  throw new MnemeError("invalid-argument", `${name} must be a string, a Uint8Array or an ArrayBuffer, not ${value === null ? "null" : typeof value}`);
}
const maybe = (name, value) => (value == null ? undefined : text(name, value));
const strings = (name, value) => {
  if (!Array.isArray(value)) throw new MnemeError("invalid-argument", `${name} must be an array of strings, not ${value === null ? "null" : typeof value}`);
  return value.map((item, i) => text(`${name}[${i}]`, item));
};
/** mneme-core's spelling of a setting: `contextWindow` and `context_window` alike. */
const snake = (key) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
function snakeKeys(value) {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [snake(key), snakeKeys(item)]));
}
/**
 * Settings, a policy or a filter as mneme-core's JSON, its keys in either spelling; the
 * core refuses a key it does not know (a misspelt one would leave its default in force).
 */
function settings(name, value) {
  return value === undefined ? "{}" : objectJson(name, snakeKeys(value));
}
/** An array argument as JSON. */
function arrayJson(name, value) {
  if (!Array.isArray(value)) throw new MnemeError("invalid-argument", `${name} must be an array, not ${value === null ? "null" : typeof value}`);
  return JSON.stringify(value);
}
/** An object argument (a plan, settings) as JSON. */
function objectJson(name, value) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new MnemeError("invalid-argument", `${name} must be an object, not ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`);
  }
  return JSON.stringify(value);
}
/** A memory scope: a project's folder name, or null for the global memory. */
const project = (value) => (value == null ? undefined : text("project", value));

/** The error of every call on a store that was closed. */
const closed = () => new MnemeError("invalid-argument", "this store is closed: open it again");

async function call(promise) {
  try {
    const value = await (typeof promise === "function" ? promise() : promise);
    // Results are JSON text, except those that carry bytes (exportSession).
    return typeof value === "string" ? JSON.parse(value) : value;
  } catch (error) {
    if (error instanceof MnemeError) throw error;
    if (error && typeof error.kind === "string") throw new MnemeError(error.kind, error.message, JSON.parse(error.details ?? "{}"));
    throw error;
  }
}

export class Mneme {
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
    if (!Backend && !own) throw new MnemeError("invalid-argument", `unknown backend "${backend}": use "opfs", "indexeddb" or "memory"`);
    if (!globalThis.navigator?.locks) {
      throw new MnemeError("unsupported", "this page has no Web Locks (navigator.locks), which keep two tabs from writing one session at once: serve it over https or from localhost");
    }
    await load();
    // `storage`: a backend of your own implementing the contract of backends.js.
    const storage = withLocks(own ?? (await Backend.open(namespace)), `${backend}:${namespace}`, lockTimeoutMs);
    return new Mneme(new wasm.Engine(storage, unsigned("partBytes", partBytes), unsigned("totalBytes", totalBytes)), storage, backend, namespace);
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

  /** Gives back the sessions it holds, then closes the store's handles (the OPFS worker, the IndexedDB connection). */
  async close() {
    if (this.closed) return;
    this.closed = true;
    try {
      await call(() => this.engine.releaseAll());
    } finally {
      this.storage.close?.();
      // Every later call fails saying so, as in the Node package, rather than writing
      // through handles the store no longer holds.
      this.engine = new Proxy({}, { get: () => () => { throw closed(); } });
    }
  }

  /** Appends a message. `cwd`, the agent's working directory, files a new session under its project (a new session needs one); left out, a line names the session's own. */
  append(id, { role, text: text_, cwd = "", uuid = crypto.randomUUID(), now = Date.now() } = {}) {
    return call(() => this.engine.append(text("id", id), text("uuid", uuid), num("now", now), text("role", role), text("text", text_), text("cwd", cwd)));
  }
  /**
   * Appends a turn in one write (all of it or nothing): one message or an array, in
   * Anthropic's shape (content blocks, `tool_use` / `tool_result`) or OpenAI's
   * (`tool_calls`, `tool` role) with `provider: "openai"`. `parent` rewinds: the turn
   * continues from that entry instead of the newest one. `agent: {id, parent_call}` writes
   * into that sub-agent's transcript instead (Claude Code sessions). `cwd` as for `append`.
   */
  appendTurn(id, messages, { provider = "anthropic", cwd = "", uuid = crypto.randomUUID(), now = Date.now(), parent = null, agent = null } = {}) {
    return call(() => {
      const turn = { uuid: text("uuid", uuid), now_ms: num("now", now), cwd: text("cwd", cwd), provider: text("provider", provider), messages: JSON.stringify(messages), parent, agent };
      return this.engine.appendTurn(text("id", id), JSON.stringify(turn));
    });
  }
  /**
   * What to send a model next: `{provider, body, message_count, compacted, tokens, interrupted}`; `body` is the request, an object ready to extend with the model and tools.
   * `model`, the model the request goes to, sends another model's thinking as the session's client does.
   */
  providerContext(id, { provider = "anthropic", model = null, injections = [] } = {}) {
    return call(() =>
      this.engine.providerContext(text("id", id), text("provider", provider), model === null ? undefined : text("model", model), JSON.stringify(injections)),
    );
  }
  /** Every branch of a session (each leaf message), the current one first. */
  branches(id) { return call(() => this.engine.branches(text("id", id))); }
  /** The token ledger: usage in all and per branch; priced with `{input, output, cache_read, cache_creation}` per million tokens. */
  usage(id, prices = null) { return call(() => this.engine.usage(text("id", id), prices ? JSON.stringify(prices) : "")); }
  /** Copies the conversation up to `from` (default: the newest message) into a new session `to`. */
  fork(id, { from = null, to = crypto.randomUUID(), now = Date.now() } = {}) {
    return call(() => this.engine.fork(text("id", id), from === null ? undefined : text("from", from), text("to", to), num("now", now)));
  }
  /**
   * Imports another agent's transcript (`data`: its bytes or text) as a new session:
   * `from` is `claude`, `pi`, `codex`, `gemini` or `openai` (null: told from the content);
   * `id` and `cwd` default to the transcript's own; `origin` (a path or file name) is
   * recorded in the new session. Resolves with `{id, project, source, format, message_count,
   * skipped, migrated_from, provenance}`; an id already taken rejects with `session-exists`.
   */
  importSession(data, { from = null, id = null, cwd = null, origin = "", uuid = crypto.randomUUID(), now = Date.now() } = {}) {
    return call(() => this.engine.importSession(bytes("data", data), maybe("from", from), maybe("id", id), maybe("cwd", cwd), text("origin", origin), text("uuid", uuid), num("now", now)));
  }
  /**
   * A session in `to`: `claude`, `pi`, `openai` or `markdown`. Resolves with `{format,
   * message_count, verbatim, data}`, `data` a Uint8Array: the stored bytes when `to` is the
   * session's own dialect (`verbatim`), else the conversation it resumes to.
   */
  exportSession(id, { to, uuid = crypto.randomUUID() } = {}) {
    return call(() => this.engine.exportSession(text("id", id), text("to", to), text("uuid", uuid)));
  }
  /**
   * One cleanup pass: archives sessions past their time to live, deletes only what
   * `policy` asks (`{ttl_ms, classes: [{class, ttl_ms}], keep_archived_ms, delete_archived,
   * max_disk_bytes, dry_run}`, each defaulted). Resolves with `{dry_run, archived, removed, kept_bytes}`.
   */
  gc(policy = {}, now = Date.now()) { return call(() => this.engine.gc(settings("policy", policy), num("now", now))); }
  /** Moves a session into the archive now: `{id, project, archived_ms, files, bytes}`. */
  archive(id, now = Date.now()) { return call(() => this.engine.archive(text("id", id), num("now", now))); }
  /** Every archived session, oldest first. */
  archived() { return call(() => this.engine.archived()); }
  /** Puts an archived session back; rejects with `session-exists` if a session has the id again. */
  restore(id) { return call(() => this.engine.restore(text("id", id))); }
  tombstone(id, uuid, now = Date.now()) { return call(() => this.engine.tombstone(text("id", id), text("uuid", uuid), num("now", now))); }
  load(id) { return call(() => this.engine.load(text("id", id))); }
  context(id) { return call(() => this.engine.context(text("id", id))); }
  list() { return call(() => this.engine.list()); }
  /** The messages across every session that best match `query`, best first: `[{id, project, uuid, role, timestamp, text, score, matched}]` (`matched` false: found through its conversation). */
  search(query, { limit = 10, project = null, since = null, until = null } = {}) {
    return call(() => this.engine.search(text("query", query), u32("limit", limit), project === null ? undefined : text("project", project), time("since", since), time("until", until)));
  }
  check(id) { return call(() => this.engine.check(text("id", id))); }
  subagents(id) { return call(() => this.engine.subagents(text("id", id))); }
  remove(id) { return call(() => this.engine.remove(text("id", id))); }
  repair(id, now = Date.now()) { return call(() => this.engine.repair(text("id", id), num("now", now))); }
  reopen(id) { this.engine.reopen(text("id", id)); }
  /**
   * The kinds of secret taken out of every line and memory file before it is written
   * (every kind by default; `[]` writes text as given). Each write's entries and
   * memories say in `redacted` what was taken.
   */
  setRedaction(kinds) { return call(() => this.engine.setRedaction(strings("kinds", kinds))); }
  /** Keeps a session open for writing: its lock is held until `release` (or `close`), so each write is one append. Other tabs wait, then fail with `storage/locked`. */
  hold(id) { return call(() => this.engine.hold(text("id", id))); }
  release(id) { return call(() => this.engine.release(text("id", id))); }

  planCompaction(id, given = {}, mode = "auto") { return call(() => this.engine.planCompaction(text("id", id), settings("settings", given), text("mode", mode))); }
  summarizeOffline(id, plan) { return call(() => this.engine.summarizeOffline(text("id", id), objectJson("plan", plan))); }
  applyCompaction(id, plan, summary, { boundary = crypto.randomUUID(), summaryUuid = crypto.randomUUID(), now = Date.now() } = {}) {
    return call(() => this.engine.applyCompaction(text("id", id), objectJson("plan", plan), text("summary", summary), text("boundary", boundary), text("summaryUuid", summaryUuid), num("now", now)));
  }
  /**
   * One compaction through the core's driver: plan, summarise (`summarize(prompt, maxTokens)`
   * resolving with text, or the offline summary), apply, or record the failure.
   */
  compact(id, { settings: given = {}, mode = "auto", summarize, boundary = crypto.randomUUID(), summaryUuid = crypto.randomUUID(), now = Date.now() } = {}) {
    if (summarize != null && typeof summarize !== "function") return Promise.reject(new MnemeError("invalid-argument", "summarize must be a function"));
    return call(() => this.engine.compact(text("id", id), settings("settings", given), text("mode", mode), summarize ?? undefined, text("boundary", boundary), text("summaryUuid", summaryUuid), num("now", now)));
  }
  recordCompactionFailure(id, reason, now = Date.now()) { return call(() => this.engine.recordCompactionFailure(text("id", id), text("reason", reason), num("now", now))); }
  memoryFlushGate(id, given = {}) { return call(() => this.engine.memoryFlushGate(text("id", id), settings("settings", given))); }
  recordMemoryFlush(id, now = Date.now()) { return call(() => this.engine.recordMemoryFlush(text("id", id), num("now", now))); }
  extractionGate(id, given = {}) { return call(() => this.engine.extractionGate(text("id", id), settings("settings", given))); }
  recordExtraction(id, now = Date.now()) { return call(() => this.engine.recordExtraction(text("id", id), num("now", now))); }
  resetGate(id, policy = {}, now = Date.now()) { return call(() => this.engine.resetGate(text("id", id), num("now", now), settings("policy", policy))); }
  dreamGate(given = {}, now = Date.now()) { return call(() => this.engine.dreamGate(num("now", now), settings("settings", given))); }
  dreamAcquire(holder, given = {}, now = Date.now()) { return call(() => this.engine.dreamAcquire(num("now", now), text("holder", holder), settings("settings", given))); }
  dreamRelease(holder, completed, now = Date.now()) { return call(() => this.engine.dreamRelease(num("now", now), text("holder", holder), completed === true)); }

  // Long-term memory, in Claude Code's memdir layout. `project` is a project's folder
  // name (as Claude Code names it, e.g. "-home-me-app"), or null for the global memory.

  /** Writes a new memory `{name, type, description, body, topics?, links?, confidence?, session?, entry?, valid_from_ms?}`. */
  memoryAdd(scope, memory, now = Date.now()) { return call(() => this.engine.memoryAdd(project(scope), objectJson("memory", memory), num("now", now))); }
  /** Writes many memories with one index write (bulk import). */
  memoryAddMany(scope, memories, now = Date.now()) { return call(() => this.engine.memoryAddMany(project(scope), arrayJson("memories", memories), num("now", now))); }
  /** Changes fields in place: `{name?, type?, description?, body?, topics?, confidence?}`. */
  memoryUpdate(scope, file, change, now = Date.now()) { return call(() => this.engine.memoryUpdate(project(scope), text("file", file), objectJson("change", change), num("now", now))); }
  /** Replaces memory `file` with a new one; the old one is kept, marked invalid and superseded, out of MEMORY.md and recall. */
  memorySupersede(scope, file, memory, now = Date.now()) { return call(() => this.engine.memorySupersede(project(scope), text("file", file), objectJson("memory", memory), num("now", now))); }
  /** Archives a memory: kept, listed with `{all: true}`, out of MEMORY.md and recall. */
  memoryForget(scope, file, now = Date.now()) { return call(() => this.engine.memoryForget(project(scope), text("file", file), num("now", now))); }
  /** Records that `from` relates to `to`: `kind` is relates_to, contradicts, extends or derived_from. */
  memoryLink(scope, from, kind, to, now = Date.now()) { return call(() => this.engine.memoryLink(project(scope), text("from", from), text("kind", kind), text("to", to), num("now", now))); }
  /** Memories without their bodies, newest first; `filter`: `{type?, topic?, session?, all?}`. */
  memoryList(scope, filter = {}) { return call(() => this.engine.memoryList(project(scope), settings("filter", filter))); }
  /** One memory with its body and the chain of memories it superseded or that superseded it. */
  memoryShow(scope, file) { return call(() => this.engine.memoryShow(project(scope), text("file", file))); }
  /** The best memories for `query`, best first: `{hits: [{file, name, description, type, score, current, matched}], report}` (`matched` false: found through the memories around it). */
  memoryRecall(scope, query, { limit = 10, all = false, since = null, until = null } = {}) {
    return call(() => this.engine.memoryRecall(project(scope), text("query", query), u32("limit", limit), Boolean(all), time("since", since), time("until", until)));
  }
  /** MEMORY.md as a model should load it, within Claude Code's caps (`{lines: 200, units: 25000}`), saying what was left out. */
  memoryLoad(scope, caps = {}) { return call(() => this.engine.memoryLoad(project(scope), settings("caps", caps))); }
  /** Reads the memory folder again and rewrites the recall index. */
  memoryReindex(scope) { return call(() => this.engine.memoryReindex(project(scope))); }
  /** Records that memories were useful now (put in a model's context, cited), so `memoryLoad` keeps them first under the caps; returns them as written. */
  memoryUsed(scope, files, now = Date.now()) { return call(() => this.engine.memoryUsed(project(scope), strings("files", files), num("now", now))); }
  /**
   * Makes recall and search hybrid with a static embedding table in its text form (a word per line, then its values, as GloVe,
   * word2vec and fastText publish them): a string, Uint8Array or ArrayBuffer; `null` goes back to words alone. Kept in memory,
   * never written. Resolves to `{words, terms, dimensions, skipped}` (null when cleared).
   */
  setEmbeddings(table) { return call(() => this.engine.setEmbeddings(table === null || table === undefined ? undefined : bytes("table", table))); }
  /** The request for a model to extract memories from session `id` (when the extraction gate fires): `{id, prompt, max_tokens, message_count, entry, known, failures}`. */
  planExtraction(scope, id) { return call(() => this.engine.planExtraction(project(scope), text("id", id))); }
  /** Writes what the model's `answer` (one JSON object per line) says; an answer that does not read is `invalid-answer` and writes nothing. */
  applyExtraction(scope, plan, answer, now = Date.now()) { return call(() => this.engine.applyExtraction(project(scope), objectJson("plan", plan), text("answer", answer), num("now", now))); }
  recordExtractionFailure(id, reason, now = Date.now()) { return call(() => this.engine.recordExtractionFailure(text("id", id), text("reason", reason), num("now", now))); }
  /** The request for a model to consolidate the memory (take `dreamAcquire` first): `{id, prompt, max_tokens, known, sessions, since_ms}`. */
  planConsolidation(scope, now = Date.now()) { return call(() => this.engine.planConsolidation(project(scope), num("now", now))); }
  /** Checks the model's `answer` whole and stages it; unless `{dryRun: true}`, records it and writes it. */
  applyConsolidation(scope, plan, answer, { dryRun = false, now = Date.now() } = {}) {
    return call(() => this.engine.applyConsolidation(project(scope), objectJson("plan", plan), text("answer", answer), num("now", now), flag("dryRun", dryRun)));
  }
  /** Undoes a consolidation (changed memories back, added ones archived); refuses when a memory changed since. */
  rollbackConsolidation(scope, id, now = Date.now()) { return call(() => this.engine.rollbackConsolidation(project(scope), text("id", id), num("now", now))); }
  /** The consolidations recorded, oldest first. */
  consolidations(scope) { return call(() => this.engine.consolidations(project(scope))); }
  /** The CLAUDE.md files, rules and imports a session in `cwd` starts with, from the files kept in the store: `{text, files}`. */
  instructions({ cwd, home, managed = null, paths = [], externalImports = false }) {
    return call(() => this.engine.instructions(JSON.stringify({ cwd, home, managed, paths, external_imports: flag("externalImports", externalImports) })));
  }
  /** Keeps an instruction file (CLAUDE.md, a rule, an imported file) at absolute `path`. */
  writeFile(path, contents) { return call(() => this.engine.writeFile(text("path", path), text("text", contents))); }
  readFile(path) { return call(() => this.engine.readFile(text("path", path))); }
  removeFile(path) { return call(() => this.engine.removeFile(text("path", path))); }

  /** Routes a message: `{key, session_id, action, reason, previous_session_id, text}`, and records it. `policy` fields left out keep the core's defaults. */
  resolve(inbound, policy = {}, { now = Date.now(), newSessionId = crypto.randomUUID() } = {}) {
    return call(() => this.engine.resolve(objectJson("inbound", inbound), settings("policy", policy), num("now", now), text("newSessionId", newSessionId)));
  }
  /** Gives `key` a new session; the old one stays in its `previous_session_ids`. */
  resetKey(key, newSessionId = crypto.randomUUID(), now = Date.now()) { return call(() => this.engine.resetKey(text("key", key), text("newSessionId", newSessionId), num("now", now))); }
  /** Sets a key's `title`, `model`, `origin`, `toggles`, `metadata` (an empty value removes). */
  updateKey(key, patch) { return call(() => this.engine.updateKey(text("key", key), objectJson("patch", patch))); }
  removeKey(key) { return call(() => this.engine.removeKey(text("key", key))); }
  /** Adds the keys of an OpenClaw `sessions.json` (its bytes or text): `{imported, existing, refused}`. */
  importOpenclawKeys(data) { return call(() => this.engine.importOpenclawKeys(bytes("data", data))); }
  /** Every key as an OpenClaw `sessions.json`, a Uint8Array. */
  exportOpenclawKeys() { return call(() => this.engine.exportOpenclawKeys()); }
  /** The newest crab session of `agent` with `sender` (crab's find_latest_session), or null. `project` defaults to `crab`. */
  crabLatest(agent, sender, { project = null } = {}) { return call(() => this.engine.crabLatest(maybe("project", project), text("agent", agent), text("sender", sender))); }
  /** Starts the next crab session `{agent}_{sender}_{seq}` with its meta line. */
  crabStart(agent, sender, { project = null, createdBy = "user", now = Date.now() } = {}) {
    return call(() => this.engine.crabStart(maybe("project", project), text("agent", agent), text("sender", sender), text("createdBy", createdBy), num("now", now)));
  }
  crabSession(id) { return call(() => this.engine.crabSession(text("id", id))); }
  /** Renames the session's file with the title's slug and appends a meta line; resolves with it under its new id. */
  crabSetTitle(id, title) { return call(() => this.engine.crabSetTitle(text("id", id), text("title", title))); }
  /** Adds `secs` to the session's `uptime_secs` with an appended meta line. */
  crabAddUptime(id, secs) { return call(() => this.engine.crabAddUptime(text("id", id), unsigned("secs", secs))); }
  /** Rebuilds the index from the transcripts (key bindings kept): `{before, session_count, added, changed, dropped, key_count, skipped}`. */
  rebuildIndex() { return call(() => this.engine.rebuildIndex()); }
  /** Whether `key`'s session should roll over: `{fire, reason}` (its context holds `maxContextTokens` or more). */
  rolloverGate(key, maxContextTokens) { return call(() => this.engine.rolloverGate(text("key", key), unsigned("maxContextTokens", maxContextTokens))); }
  /** Moves `key` to a new session that starts from `summary` of its current one, linked to it. */
  rollover(key, summary, { newSessionId = crypto.randomUUID(), boundary = crypto.randomUUID(), summaryUuid = crypto.randomUUID(), now = Date.now() } = {}) {
    return call(() => this.engine.rollover(text("key", key), text("summary", summary), text("boundary", boundary), text("summaryUuid", summaryUuid), text("newSessionId", newSessionId), num("now", now)));
  }
  /** A key with its current session's listing and counters: `{entry, session, counters}`. */
  key(key) { return call(() => this.engine.key(text("key", key))); }
  /** Keys whose metadata has every `{name, value}` of `filter`, most recently active first. */
  keys(filter = []) { return call(() => this.engine.keys(JSON.stringify(filter))); }
  indexReport() { return call(() => this.engine.indexReport()); }
  /** The session key of a message (nothing is read or written). */
  keyOf(inbound, policy = {}) { return call(() => this.engine.keyOf(objectJson("inbound", inbound), settings("policy", policy))); }
  parseKey(key) { return call(() => this.engine.parseKey(text("key", key))); }

  /** Checks transcript bytes that are not in a store (a file the user picked). */
  static async checkBytes(bytes) {
    await load();
    if (!(bytes instanceof Uint8Array)) throw new MnemeError("invalid-argument", "checkBytes takes a Uint8Array");
    return call(() => wasm.checkBytes(bytes));
  }
  /**
   * Runs the storage contract every backend keeps on two handles of one fresh, empty
   * store; resolves with what broke it (empty when nothing did).
   */
  static async storageContract(a, b) {
    await load();
    return call(() => wasm.storageContract(a, b));
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
guardOptions(Mneme, MnemeError);
