// The JavaScript API of the Mneme component, for every JavaScript host that runs
// jco's transpiled component (Node: host-node/js/mneme.js; the edge: host-edge/). It
// has the browser package's shape (web/js/mneme.js): the same methods, the same JSON
// shapes (mneme-core's), errors as MnemeError with the core's `kind` and words. No I/O
// and nothing host-specific here: a host supplies the instance and its storage.
import { guardOptions } from "../gen/options.js";

export class MnemeError extends Error {
  constructor(kind, message, details = {}) {
    super(message);
    this.name = "MnemeError";
    this.kind = kind;
    this.details = details;
  }
}

/**
 * One instance of the transpiled component (`instantiate` from jco's output, its core
 * modules from `coreModule(path)`) whose storage imports call `storage`'s synchronous
 * methods, which throw a `{tag, val}` storage error to fail.
 */
export function engine(instantiate, coreModule, storage) {
  const imports = {
    list: (prefix) => storage.list(prefix),
    read: (key, offset, len) => storage.read(key, offset, len),
    append: (key, data) => storage.append(key, data),
    replace: (key, data, expectedSize) => storage.replace(key, data, expectedSize),
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

// The component speaks WIT's JavaScript shapes (camelCase fields, bigint for 64-bit
// integers, `{tag, val}` variants, undefined for none); callers speak mneme-core's
// JSON (snake_case, numbers, `{case: value}`, null). These two functions are the whole
// translation, applied the same way to every value.
// A result's field names are few and come back on every call: each is spelled once.
const snakeNames = new Map();
const snake = (name) => {
  let spelled = snakeNames.get(name);
  if (spelled === undefined) {
    spelled = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).replace(/-/g, "_");
    snakeNames.set(name, spelled);
  }
  return spelled;
};
const camel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

/** A value from the component as mneme-core's JSON. */
function plain(value) {
  if (typeof value === "bigint") return Number(value);
  if (value === undefined) return null;
  // list<u8> results are bytes (exports), as in the browser package and Python.
  if (value instanceof Uint8Array) return value;
  if (Array.isArray(value) || ArrayBuffer.isView(value)) return Array.from(value, plain);
  if (value && typeof value === "object") {
    const keys = Object.keys(value);
    if (typeof value.tag === "string" && keys.every((k) => k === "tag" || k === "val")) return { [snake(value.tag)]: plain(value.val) };
    return Object.fromEntries(keys.map((k) => [snake(k), plain(value[k])]));
  }
  return value;
}

/** mneme-core's JSON as the component's value; `variants` names the fields that are WIT variants. */
function wit(value, variants = []) {
  if (value === null) return undefined;
  if (Array.isArray(value)) return value.map((v) => wit(v, variants));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => {
        if (variants.includes(k) && v && typeof v === "object" && !Array.isArray(v)) {
          const [[tag, val]] = Object.entries(v);
          return [camel(k), { tag: tag.replace(/_/g, "-"), val: wit(val, variants) }];
        }
        return [camel(k), wit(v, variants)];
      }),
    );
  }
  return value;
}

/** A bad argument is a MnemeError, never a trap inside the WebAssembly instance. */
function need(type, name, value) {
  const ok = type === "string" ? typeof value === "string" : Number.isSafeInteger(value);
  if (!ok) throw new MnemeError("invalid-argument", `${name} must be a ${type === "string" ? "string" : "whole number"}, not ${value === null ? "null" : typeof value}`);
  return value;
}
const text = (name, value) => need("string", name, value);
/** A time (an s64: every safe integer is one). */
const int = (name, value) => need("integer", name, value);
/** A size or count, unsigned, within its WIT type (u64 up to the safe integers, u32). */
const unsigned = (name, value, max = Number.MAX_SAFE_INTEGER) => {
  need("integer", name, value);
  if (value < 0 || value > max) throw new MnemeError("invalid-argument", `${name} is ${value}: give a whole number from 0 to ${max}`);
  return value;
};
const u32 = (name, value) => unsigned(name, value, 2 ** 32 - 1);
const flag = (name, value) => {
  if (typeof value !== "boolean") throw new MnemeError("invalid-argument", `${name} must be true or false, not ${value === null ? "null" : typeof value}`);
  return value;
};
const maybe = (name, value) => (value == null ? undefined : text(name, value));
/** A time window from its ends: milliseconds since the epoch, or null for open. */
const window = (since, until) => {
  const end = (name, value) => (value == null ? undefined : int(name, value));
  return { sinceMs: end("since", since), untilMs: end("until", until) };
};
const strings = (name, value) => {
  if (!Array.isArray(value)) throw new MnemeError("invalid-argument", `${name} must be an array of strings, not ${value === null ? "null" : typeof value}`);
  return value.map((item, i) => text(`${name}[${i}]`, item));
};
/** Bytes from a string (as UTF-8), a Uint8Array or an ArrayBuffer. */
function bytes(name, value) {
  if (typeof value === "string") return new TextEncoder().encode(value);
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  throw new MnemeError("invalid-argument", `${name} must be a string, a Uint8Array or an ArrayBuffer, not ${value === null ? "null" : typeof value}`);
}
const object = (name, value) => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new MnemeError("invalid-argument", `${name} must be an object`);
  return value;
};

/** Prices per million tokens, each a number (a `true` or a `"3"` is no price). */
const PRICES = ["input", "output", "cache_read", "cache_creation"];
function pricesOf(prices) {
  object("prices", prices);
  for (const name of PRICES) {
    const price = prices[name];
    if (price === undefined) throw new MnemeError("invalid-argument", `prices: \`${name}\` is missing (give 0 for what is free)`);
    if (typeof price !== "number") throw new MnemeError("invalid-argument", `prices: ${name} must be a number, not ${price === null ? "null" : typeof price}`);
  }
  return record("prices", prices, PRICES);
}

/** Runs a component call; its `err` becomes a MnemeError worded by the core. */
async function call(root, run, shape) {
  try {
    const value = plain(run());
    return shape ? shape(value) : value;
  } catch (error) {
    if (error instanceof MnemeError) throw error;
    // jco refuses a value that does not fit the WIT type before it enters the instance.
    if (error instanceof TypeError) throw new MnemeError("invalid-argument", error.message);
    const payload = error?.payload ?? error;
    if (payload && typeof payload.tag === "string" && !(payload instanceof Error)) {
      const { kind, message, details } = root.sessions.explain(payload);
      throw new MnemeError(kind, message, JSON.parse(details));
    }
    throw error;
  }
}

// What the WIT carries as JSON text (a request body, a message's blocks, an import's
// provenance) is given as the value it is, as mneme-core's JSON gives it.
const withBody = (context) => ({ ...context, body: JSON.parse(context.body) });
const withBlocks = (context) => ({ ...context, messages: context.messages.map((m) => ({ ...m, content: JSON.parse(m.content) })) });
const withProvenance = (imported) => ({ ...imported, provenance: JSON.parse(imported.provenance) });

/** A memory scope as WIT's variant: a project's folder name, or null for the global memory. */
const scope = (project) => (project == null ? { tag: "global" } : { tag: "project", val: text("project", project) });

/** `value` as a WIT record of `fields` (mneme-core's JSON), refusing fields it lacks as the core's JSON does. */
function record(name, value, fields, defaults = {}) {
  object(name, value);
  const unknown = Object.keys(value).find((key) => !fields.includes(key));
  if (unknown !== undefined) throw new MnemeError("invalid-argument", `${name}: unknown field \`${unknown}\`, expected one of ${fields.join(", ")}`);
  return wit({ ...defaults, ...value });
}
const NEW_MEMORY = ["name", "type", "description", "body", "topics", "links", "confidence", "session", "entry", "valid_from_ms"];
const NO_LINKS = { relates_to: [], contradicts: [], extends: [], derived_from: [] };
/**
 * Checks what jco would lower without a word: a string given for a list as the list of
 * its characters (topics "abc" stored as a, b, c), a time past the safe integers
 * wrapped (2^70 stored as 0), an unknown kind of link dropped.
 */
function memoryFields(name, memory) {
  for (const field of ["name", "type", "description", "body", "session", "entry"]) {
    if (memory[field] != null) text(`${name}.${field}`, memory[field]);
  }
  if (memory.topics !== undefined) strings(`${name}.topics`, memory.topics);
  if (memory.links != null) {
    object(`${name}.links`, memory.links);
    for (const [kind, targets] of Object.entries(memory.links)) {
      if (!Object.hasOwn(NO_LINKS, kind)) throw new MnemeError("invalid-argument", `${name}.links: unknown kind \`${kind}\`, expected one of ${Object.keys(NO_LINKS).join(", ")}`);
      strings(`${name}.links.${kind}`, targets);
    }
  }
  if (memory.valid_from_ms != null) int(`${name}.valid_from_ms`, memory.valid_from_ms);
  if (memory.confidence != null && typeof memory.confidence !== "number") {
    throw new MnemeError("invalid-argument", `${name}.confidence must be a number from 0 to 1, not ${typeof memory.confidence}`);
  }
  return memory;
}
const newMemory = (memory) => {
  memoryFields("memory", object("memory", memory));
  // A partial `links` (the d.ts's Partial<Links>) is completed, not put in place of the defaults.
  return record("memory", { ...memory, links: { ...NO_LINKS, ...(memory.links ?? {}) } }, NEW_MEMORY, { description: "", body: "", topics: [] });
};
const change = (value) => record("change", memoryFields("change", object("change", value)), ["name", "type", "description", "body", "topics", "confidence"]);
const filter = (value) => record("filter", value, ["type", "topic", "session", "all"], { all: false });

const U64 = [0, Number.MAX_SAFE_INTEGER];
const S64 = [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
const U32 = [0, 2 ** 32 - 1];
/**
 * Every number of the settings records (wit/*.wit: settings, trigger, keep,
 * flush-, extraction- and dream-settings, retention, reset-policy, caps), by field, with
 * its WIT type's range (64-bit ones up to the safe integers). jco lowers a value outside
 * its type wrapped (-1 as a u64 is 2^64 - 1: a cap of no limit; 256 as a u8 is 0), a
 * string or a bool as a number ("-1", true), and any value as a bool by its truthiness
 * ("no" is true), without a word. `fraction` is an f64.
 */
const SETTINGS_NUMBERS = {
  context_window: U64, tool_result_budget_chars: U64, max_failures: U32, summarizer_window: U64,
  reserve_tokens: U64, floor: U64, recent_tokens: U64, recent_messages: U32,
  reserve_floor: U64, soft_threshold: U64, min_messages: U32, min_tool_calls: U32,
  min_interval_ms: S64, min_new_sessions: U32, stale_lock_ms: S64,
  ttl_ms: S64, keep_archived_ms: S64, max_disk_bytes: U64, lines: U64, units: U64,
  idle_minutes: U32, daily_reset_hour: [0, 255], utc_offset_minutes: [-(2 ** 31), 2 ** 31 - 1],
};
/** Checks every number of a settings value (mneme-core's JSON, any key spelling) against its WIT type; returns the value. */
function settingsValues(name, value) {
  const field = snake(name);
  if (field === "fraction") {
    if (typeof value !== "number" || !Number.isFinite(value)) throw new MnemeError("invalid-argument", `fraction is ${String(value)}: give a number`);
  } else if (field in SETTINGS_NUMBERS) {
    const [low, high] = SETTINGS_NUMBERS[field];
    // null is an option's none; the core refuses it where a number is required.
    if (value !== null && value !== undefined && (!Number.isSafeInteger(value) || value < low || value > high)) {
      const shown = typeof value === "string" ? JSON.stringify(value) : String(value);
      throw new MnemeError("invalid-argument", `${field} is ${shown}: give a whole number from ${low} to ${high}`);
    }
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => settingsValues(`${field}[${i}]`, item));
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) settingsValues(key, item);
  }
  return value;
}

/** Defaults from the core, overlaid with what the caller set (mneme-core's JSON, snake_case). */
function overlay(defaults, settings, variants = []) {
  object("settings", settings);
  // A misspelt field (`ttl_days` for `ttl_ms`) would leave its default silently in force.
  const unknown = Object.keys(settings).find((key) => !(camel(key) in defaults));
  if (unknown !== undefined) throw new MnemeError("invalid-argument", `unknown setting \`${snake(unknown)}\`: use ${Object.keys(defaults).map(snake).join(", ")}`);
  for (const [key, value] of Object.entries(settings)) {
    if (typeof defaults[camel(key)] === "boolean") flag(key, value);
    else settingsValues(key, value);
  }
  return { ...defaults, ...wit(settings, variants) };
}

/**
 * A store: the API every JavaScript host of the component shares (the browser
 * package's shape). Hosts make one with `Mneme.over(root, storage, limits)` from an
 * instance made by `engine`.
 */
export class Mneme {
  /** A store on `root` (an instance from `engine`) whose storage is `storage`; 0 for a limit is the core's default. */
  static over(root, storage, { partBytes = 0, totalBytes = 0 } = {}) {
    const defaults = root.sessions.defaultLimits();
    const limits = { partBytes: unsigned("partBytes", partBytes) || defaults.partBytes, totalBytes: unsigned("totalBytes", totalBytes) || defaults.totalBytes };
    return new this(root, new root.sessions.Store(limits), storage);
  }

  constructor(root, store, storage) {
    this.root = root;
    this.store = store;
    this.storage = storage;
  }

  #closed = false;

  #call(run, shape) {
    return call(
      this.root,
      () => {
        if (this.#closed) throw new MnemeError("invalid-argument", "this store is closed: open it again");
        return run();
      },
      shape,
    );
  }

  /** Gives back the sessions it holds and the locks its storage took. */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.store[Symbol.dispose]?.();
    } finally {
      this.storage.close?.();
    }
  }

  /** Appends a message. `cwd`, the agent's working directory, files a new session under its project (a new session needs one); left out, a line names the session's own. */
  append(id, { role, text: body, cwd = "", uuid = crypto.randomUUID(), now = Date.now() } = {}) {
    return this.#call(() => this.store.append(text("id", id), { uuid: text("uuid", uuid), nowMs: int("now", now), role: text("role", role), text: text("text", body), cwd: text("cwd", cwd) }));
  }
  /**
   * Appends a turn in one write (all of it or nothing): one message or an array, in
   * Anthropic's shape or OpenAI's (`provider: "openai"`). `parent` rewinds; `agent:
   * {id, parent_call}` writes into that sub-agent's transcript. `cwd` as for `append`.
   */
  appendTurn(id, messages, { provider = "anthropic", cwd = "", uuid = crypto.randomUUID(), now = Date.now(), parent = null, agent = null } = {}) {
    return this.#call(() =>
      this.store.appendTurn(text("id", id), {
        uuid: text("uuid", uuid),
        nowMs: int("now", now),
        cwd: text("cwd", cwd),
        provider: text("provider", provider),
        messages: JSON.stringify(messages),
        parent: parent === null ? undefined : text("parent", parent),
        agent: wit(agent),
      }),
    );
  }
  /**
   * What to send a model next: `{provider, body, message_count, compacted, tokens, interrupted}`; `body` is the request, an object ready to extend with the model and tools.
   * `model`, the model the request goes to, sends another model's thinking as the session's client does.
   */
  providerContext(id, { provider = "anthropic", model = null, injections = [] } = {}) {
    return this.#call(() => {
      const placed = injections.map((i) => ({ role: text("injection role", i.role), place: text("injection place", i.place).replace(/_/g, "-"), text: text("injection text", i.text) }));
      return this.store.providerContext(text("id", id), text("provider", provider), model === null ? undefined : text("model", model), placed);
    }, withBody);
  }
  branches(id) { return this.#call(() => this.store.branches(text("id", id))); }
  usage(id, prices = null) { return this.#call(() => this.store.usage(text("id", id), prices === null ? undefined : pricesOf(prices))); }
  fork(id, { from = null, to = crypto.randomUUID(), now = Date.now() } = {}) {
    return this.#call(() => this.store.fork(text("id", id), from === null ? undefined : text("from", from), text("to", to), int("now", now)));
  }
  /** Imports another agent's transcript (its bytes or text) as a new session; see the browser package. */
  importSession(data, { from = null, id = null, cwd = null, origin = "", uuid = crypto.randomUUID(), now = Date.now() } = {}) {
    return this.#call(() =>
      this.store.importSession({
        data: bytes("data", data),
        source: maybe("from", from),
        id: maybe("id", id),
        cwd: maybe("cwd", cwd),
        origin: text("origin", origin),
        uuid: text("uuid", uuid),
        nowMs: int("now", now),
      }),
      withProvenance,
    );
  }
  /** A session in `to` (`claude`, `pi`, `openai`, `markdown`): `{format, message_count, verbatim, data}`, `data` a Uint8Array. */
  exportSession(id, { to, uuid = crypto.randomUUID() } = {}) {
    return this.#call(() => this.store.exportSession(text("id", id), text("to", to), text("uuid", uuid)));
  }
  /** One cleanup pass (see the browser package); `policy` overlays the core's defaults. */
  gc(policy = {}, now = Date.now()) { return this.#call(() => this.store.gc(overlay(this.root.sessions.defaultRetention(), policy), int("now", now))); }
  archive(id, now = Date.now()) { return this.#call(() => this.store.archive(text("id", id), int("now", now))); }
  archived() { return this.#call(() => this.store.archived()); }
  restore(id) { return this.#call(() => this.store.restore(text("id", id))); }
  tombstone(id, uuid, now = Date.now()) { return this.#call(() => this.store.tombstone(text("id", id), text("uuid", uuid), int("now", now))); }
  load(id) { return this.#call(() => this.store.load(text("id", id))); }
  context(id) { return this.#call(() => this.store.context(text("id", id)), withBlocks); }
  list() { return this.#call(() => this.store.list()); }
  /** The messages across every session that best match `query`, best first. */
  search(query, { limit = 10, project = null, since = null, until = null } = {}) {
    return this.#call(() => this.store.search(text("query", query), u32("limit", limit), maybe("project", project), window(since, until)));
  }
  check(id) { return this.#call(() => this.store.check(text("id", id))); }
  subagents(id) { return this.#call(() => this.store.subagents(text("id", id))); }
  remove(id) { return this.#call(() => this.store.remove(text("id", id))); }
  repair(id, now = Date.now()) { return this.#call(() => this.store.repair(text("id", id), int("now", now))); }
  reopen(id) {
    if (this.#closed) throw new MnemeError("invalid-argument", "this store is closed: open it again");
    this.store.reopen(text("id", id));
  }
  /** The kinds of secret taken out before anything is written (every kind by default; `[]` for none). */
  setRedaction(kinds) { return this.#call(() => this.store.setRedaction(strings("kinds", kinds))); }
  /** Keeps a session open for writing: its lock is held until `release` (or `close`). Other processes wait, then fail with `storage/locked`. */
  hold(id) { return this.#call(() => this.store.hold(text("id", id))); }
  release(id) { return this.#call(() => this.store.release(text("id", id))); }

  /** Plans a compaction; `settings` overlays the core's defaults (mneme-core's JSON). */
  planCompaction(id, settings = {}, mode = "auto") {
    return this.#call(() => this.root.compaction.planCompaction(this.store, text("id", id), overlay(this.root.compaction.defaultSettings(), settings, ["trigger", "keep"]), text("mode", mode)));
  }
  summarizeOffline(id, plan) { return this.#call(() => this.root.compaction.summarizeOffline(this.store, text("id", id), wit(object("plan", plan)))); }
  applyCompaction(id, plan, summary, { boundary = crypto.randomUUID(), summaryUuid = crypto.randomUUID(), now = Date.now() } = {}) {
    return this.#call(() =>
      this.root.compaction.apply(this.store, text("id", id), wit(object("plan", plan)), text("summary", summary), { boundary: text("boundary", boundary), summary: text("summaryUuid", summaryUuid) }, int("now", now)),
    );
  }
  /**
   * One compaction through the core's driver (the component's `run`): plan; have
   * `summarize(prompt, maxTokens)` (text, or a promise of it) answer each request, or
   * without it the offline summary; apply; or record the failure (a rejection or an
   * empty answer), which counts toward the circuit breaker. Resolves with
   * `{plan, applied, failure}`: both null when nothing was compacted (not due,
   * nothing to summarise, or blocked), and `plan.blocked` or `plan.reason` says why.
   */
  async compact(id, { settings = {}, mode = "auto", summarize, boundary = crypto.randomUUID(), summaryUuid = crypto.randomUUID(), now = Date.now() } = {}) {
    if (summarize != null && typeof summarize !== "function") throw new MnemeError("invalid-argument", "summarize must be a function");
    const { compaction } = this.root;
    const plan = await this.#call(() => compaction.planCompaction(this.store, text("id", id), overlay(compaction.defaultSettings(), settings, ["trigger", "keep"]), text("mode", mode)));
    const run = new compaction.Run(wit(plan));
    let applied = null;
    try {
      for (;;) {
        const step = run.next();
        if (step.tag === "summarize") {
          if (summarize) {
            // Plain text or a promise; a summariser that throws is a failure like a rejection.
            run.answer(await Promise.resolve().then(() => summarize(step.val.prompt, Number(step.val.maxTokens))).then(
              (answer) => (typeof answer === "string" ? { tag: "ok", val: answer } : { tag: "err", val: "the summariser answered with something other than text" }),
              (error) => ({ tag: "err", val: String(error?.message ?? error) }),
            ));
          } else {
            const offline = await this.summarizeOffline(id, plan).then((val) => ({ tag: "ok", val }), (error) => ({ tag: "err", val: error.message }));
            run.answerAll(offline);
          }
        } else if (step.tag === "apply") {
          applied = await this.applyCompaction(id, plan, step.val, { boundary, summaryUuid, now });
          run.finish();
        } else if (step.tag === "record-failure") {
          await this.recordCompactionFailure(id, step.val, now);
          run.finish();
        } else {
          break;
        }
      }
      return { plan, applied, failure: run.failure() ?? null };
    } finally {
      run[Symbol.dispose]?.();
    }
  }
  recordCompactionFailure(id, reason, now = Date.now()) { return this.#call(() => this.root.compaction.recordFailure(this.store, text("id", id), text("reason", reason), int("now", now))); }
  memoryFlushGate(id, settings = {}) { return this.#call(() => this.root.gates.memoryFlush(this.store, text("id", id), overlay(this.root.gates.defaultFlushSettings(), settings))); }
  recordMemoryFlush(id, now = Date.now()) { return this.#call(() => this.root.gates.recordMemoryFlush(this.store, text("id", id), int("now", now))); }
  extractionGate(id, settings = {}) { return this.#call(() => this.root.gates.extraction(this.store, text("id", id), overlay(this.root.gates.defaultExtractionSettings(), settings))); }
  recordExtraction(id, now = Date.now()) { return this.#call(() => this.root.gates.recordExtraction(this.store, text("id", id), int("now", now))); }
  /** Whether the next message should start a new session; no policy field set means never. */
  resetGate(id, policy = {}, now = Date.now()) { return this.#call(() => this.root.gates.reset(this.store, text("id", id), int("now", now), { utcOffsetMinutes: 0, ...wit(settingsValues("policy", object("policy", policy))) })); }
  dreamGate(settings = {}, now = Date.now()) { return this.#call(() => this.root.gates.dream(this.store, int("now", now), overlay(this.root.gates.defaultDreamSettings(), settings))); }
  dreamAcquire(holder, settings = {}, now = Date.now()) { return this.#call(() => this.root.gates.dreamAcquire(this.store, int("now", now), text("holder", holder), overlay(this.root.gates.defaultDreamSettings(), settings))); }
  dreamRelease(holder, completed, now = Date.now()) { return this.#call(() => this.root.gates.dreamRelease(this.store, int("now", now), text("holder", holder), completed === true)); }

  // Long-term memory: `project` is a project's folder name, or null for the global memory.
  memoryAdd(project, memory, now = Date.now()) { return this.#call(() => this.root.memory.add(this.store, scope(project), newMemory(memory), int("now", now))); }
  memoryAddMany(project, memories, now = Date.now()) {
    return this.#call(() => {
      if (!Array.isArray(memories)) throw new MnemeError("invalid-argument", "memories must be an array");
      return this.root.memory.addMany(this.store, scope(project), memories.map(newMemory), int("now", now));
    });
  }
  memoryUpdate(project, file, fields, now = Date.now()) { return this.#call(() => this.root.memory.update(this.store, scope(project), text("file", file), change(fields), int("now", now))); }
  memorySupersede(project, file, memory, now = Date.now()) {
    return this.#call(() => this.root.memory.supersede(this.store, scope(project), text("file", file), newMemory(memory), int("now", now)));
  }
  memoryForget(project, file, now = Date.now()) { return this.#call(() => this.root.memory.forget(this.store, scope(project), text("file", file), int("now", now))); }
  memoryLink(project, from, kind, to, now = Date.now()) {
    return this.#call(() => this.root.memory.link(this.store, scope(project), text("from", from), text("kind", kind).replace(/_/g, "-"), text("to", to), int("now", now)));
  }
  memoryList(project, options = {}) { return this.#call(() => this.root.memory.list(this.store, scope(project), filter(options))); }
  memoryShow(project, file) { return this.#call(() => this.root.memory.show(this.store, scope(project), text("file", file))); }
  memoryRecall(project, query, { limit = 10, all = false, since = null, until = null } = {}) {
    return this.#call(() => this.root.memory.recall(this.store, scope(project), text("query", query), u32("limit", limit), all === true, window(since, until)));
  }
  memoryLoad(project, caps = {}) { return this.#call(() => this.root.memory.load(this.store, scope(project), overlay(this.root.memory.defaultCaps(), caps))); }
  memoryReindex(project) { return this.#call(() => this.root.memory.reindex(this.store, scope(project))); }
  /** Records that memories were useful now, so `memoryLoad` keeps them first under the caps. */
  memoryUsed(project, files, now = Date.now()) { return this.#call(() => this.root.memory.used(this.store, scope(project), strings("files", files), int("now", now))); }
  /** A static embedding table (text form) for hybrid recall and search; null: words alone. `{words, terms, dimensions, skipped}` or null. */
  setEmbeddings(table) {
    return this.#call(() => this.root.memory.setEmbeddings(this.store, table === null || table === undefined ? undefined : bytes("table", table)) ?? null);
  }
  /** The request for a model to extract memories from session `id`: `{id, prompt, max_tokens, message_count, entry, known, failures}`. */
  planExtraction(project, id) { return this.#call(() => this.root.memory.planExtraction(this.store, scope(project), text("id", id))); }
  /** Writes what the model's `answer` (one JSON object per line) says; an answer that does not read is `invalid-answer` and writes nothing. */
  applyExtraction(project, plan, answer, now = Date.now()) {
    return this.#call(() => this.root.memory.applyExtraction(this.store, scope(project), wit(object("plan", plan)), text("answer", answer), int("now", now)));
  }
  recordExtractionFailure(id, reason, now = Date.now()) { return this.#call(() => this.root.memory.recordExtractionFailure(this.store, text("id", id), text("reason", reason), int("now", now))); }
  /** The request for a model to consolidate the memory (take `dreamAcquire` first): `{id, prompt, max_tokens, known, sessions, since_ms}`. */
  planConsolidation(project, now = Date.now()) { return this.#call(() => this.root.memory.planConsolidation(this.store, scope(project), int("now", now))); }
  /** Checks the model's `answer` whole and stages it; unless `{dryRun: true}`, records it and writes it: `{id, at_ms, sessions, steps, applied, rolled_back_ms}`. */
  applyConsolidation(project, plan, answer, { dryRun = false, now = Date.now() } = {}) {
    return this.#call(() => this.root.memory.applyConsolidation(this.store, scope(project), wit(object("plan", plan)), text("answer", answer), int("now", now), flag("dryRun", dryRun)));
  }
  /** Undoes a consolidation (changed memories back, added ones archived); refuses when a memory changed since. */
  rollbackConsolidation(project, id, now = Date.now()) { return this.#call(() => this.root.memory.rollbackConsolidation(this.store, scope(project), text("id", id), int("now", now))); }
  /** The consolidations recorded, oldest first. */
  consolidations(project) { return this.#call(() => this.root.memory.consolidations(this.store, scope(project))); }
  /** The CLAUDE.md files, rules and imports a session in `cwd` starts with, from the files kept in the store: `{text, files}`. Imports outside `cwd` that a managed, project or local file makes load only with `externalImports: true` (the user's approval); each is listed with `external: true`. */
  async instructions({ cwd, home, managed = null, paths = [], externalImports = false }) {
    const request = {
      cwd: text("cwd", cwd),
      home: text("home", home),
      managed: managed === null ? undefined : text("managed", managed),
      paths: paths.map((p) => text("path", p)),
      externalImports: flag("externalImports", externalImports),
    };
    const loaded = await this.#call(() => this.root.memory.instructions(this.store, request));
    // A WIT enum arrives as a kebab-case string, which `plain` cannot tell from any
    // other string; this is the one enum with multi-word cases a call returns.
    for (const file of loaded.files) file.kind = snake(file.kind);
    return loaded;
  }
  /** Keeps an instruction file at absolute `path`. */
  writeFile(path, contents) { return this.#call(() => this.root.memory.writeFile(this.store, text("path", path), text("text", contents))); }
  readFile(path) { return this.#call(() => this.root.memory.readFile(this.store, text("path", path))); }
  removeFile(path) { return this.#call(() => this.root.memory.removeFile(this.store, text("path", path))); }

  /** A route policy from the core's defaults: each field given replaces the default's; a `reset` given is whole (what it omits is off). */
  #routePolicy(policy) {
    const defaults = this.root.index.defaultRoutePolicy();
    const given = wit(settingsValues("policy", object("policy", policy)));
    const resetPolicy = (value) => ({ idleMinutes: undefined, dailyResetHour: undefined, utcOffsetMinutes: 0, ttlMs: undefined, ...value });
    return {
      ...defaults,
      ...given,
      reset: given.reset === undefined ? defaults.reset : resetPolicy(given.reset),
      overrides: (given.overrides ?? []).map((o) => ({ chatType: o.chatType, provider: o.provider, policy: resetPolicy(o.policy) })),
    };
  }
  #inbound(inbound) {
    return { agent: undefined, provider: undefined, id: undefined, thread: undefined, text: "", metadata: [], ...wit(object("inbound", inbound)), origin: { ...wit(inbound.origin ?? {}) } };
  }
  /** Routes a message: `{key, session_id, action, reason, previous_session_id, text}`, and records it. */
  resolve(inbound, policy = {}, { now = Date.now(), newSessionId = crypto.randomUUID() } = {}) {
    return this.#call(() => this.root.index.resolve(this.store, this.#inbound(inbound), this.#routePolicy(policy), int("now", now), text("newSessionId", newSessionId)));
  }
  /** Gives `key` a new session; the old one stays in its `previous_session_ids`. */
  resetKey(key, newSessionId = crypto.randomUUID(), now = Date.now()) {
    return this.#call(() => this.root.index.reset(this.store, text("key", key), text("newSessionId", newSessionId), int("now", now)));
  }
  /** Sets a key's `title`, `model`, `origin`, `toggles`, `metadata` (an empty value removes). */
  updateKey(key, patch) {
    return this.#call(() => this.root.index.update(this.store, text("key", key), { toggles: [], metadata: [], ...record("patch", patch, ["title", "model", "origin", "toggles", "metadata"]) }));
  }
  removeKey(key) { return this.#call(() => this.root.index.remove(this.store, text("key", key))); }
  importOpenclawKeys(data) { return this.#call(() => this.root.index.importOpenclaw(this.store, bytes("data", data))); }
  exportOpenclawKeys() { return this.#call(() => this.root.index.exportOpenclaw(this.store)); }
  /** The newest crab session of `agent` with `sender` (crab's find_latest_session), or null. `project` defaults to `crab`. */
  crabLatest(agent, sender, { project = null } = {}) { return this.#call(() => this.root.index.crabLatest(this.store, maybe("project", project), text("agent", agent), text("sender", sender))); }
  /** Starts the next crab session `{agent}_{sender}_{seq}` with its meta line. */
  crabStart(agent, sender, { project = null, createdBy = "user", now = Date.now() } = {}) {
    return this.#call(() => this.root.index.crabStart(this.store, maybe("project", project), text("agent", agent), text("sender", sender), text("createdBy", createdBy), int("now", now)));
  }
  crabSession(id) { return this.#call(() => this.root.index.crabShow(this.store, text("id", id))); }
  /** Renames the session's file with the title's slug and appends a meta line; resolves with it under its new id. */
  crabSetTitle(id, title) { return this.#call(() => this.root.index.crabSetTitle(this.store, text("id", id), text("title", title))); }
  /** Adds `secs` to the session's `uptime_secs` with an appended meta line. */
  crabAddUptime(id, secs) { return this.#call(() => this.root.index.crabAddUptime(this.store, text("id", id), unsigned("secs", secs))); }
  /** Rebuilds the index from the transcripts (key bindings kept): `{before, session_count, added, changed, dropped, key_count, skipped}`. */
  rebuildIndex() { return this.#call(() => this.root.index.rebuild(this.store)); }
  /** Whether `key`'s session should roll over: `{fire, reason}` (its context holds `maxContextTokens` or more). */
  rolloverGate(key, maxContextTokens) { return this.#call(() => this.root.index.rolloverGate(this.store, text("key", key), unsigned("maxContextTokens", maxContextTokens))); }
  /** Moves `key` to a new session that starts from `summary` of its current one, linked to it. */
  rollover(key, summary, { newSessionId = crypto.randomUUID(), boundary = crypto.randomUUID(), summaryUuid = crypto.randomUUID(), now = Date.now() } = {}) {
    return this.#call(() => this.root.index.rollover(this.store, text("key", key), text("summary", summary), { boundary: text("boundary", boundary), summary: text("summaryUuid", summaryUuid) }, text("newSessionId", newSessionId), int("now", now)));
  }
  /** A key with its current session's listing and counters: `{entry, session, counters}`. */
  key(key) { return this.#call(() => this.root.index.show(this.store, text("key", key))); }
  /** Keys whose metadata has every `{name, value}` of `filter`, most recently active first. */
  keys(filter = []) { return this.#call(() => this.root.index.list(this.store, wit(filter))); }
  indexReport() { return this.#call(() => this.root.index.report(this.store)); }
  /** The session key of a message (nothing is read or written). */
  keyOf(inbound, policy = {}) { return this.#call(() => this.root.index.keyOf(this.#inbound(inbound), this.#routePolicy(policy))); }
  parseKey(key) { return this.#call(() => this.root.index.parseKey(text("key", key))); }
}
guardOptions(Mneme, MnemeError);

/** Checks transcript bytes that are not in a store, on any instance. */
export async function checkBytes(root, bytes) {
  if (!(bytes instanceof Uint8Array)) throw new MnemeError("invalid-argument", "checkBytes takes a Uint8Array");
  return call(root, () => root.sessions.checkBytes(bytes));
}
