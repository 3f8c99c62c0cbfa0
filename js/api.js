// The JavaScript API of Mneme, one for every JavaScript host: the browser
// (web/js/mneme.js), Node (host-node/js/mneme.js) and the edge (host-edge/). They
// differ only in the engine that reaches the core: jco's transpiled component
// (./jco.js) or the browser's wasm-bindgen binding (web/js/mneme.js). Values are
// mneme-core's JSON (snake_case, numbers, `{case: value}` or `"case"`, null); errors
// are MnemeError with the core's `kind` and words. No I/O here. The methods between
// the `<operations>` markers at the end of the class are written from wit/ by
// `cargo xtask codegen` (xtask/src/wrappers.rs), one for each operation no method
// above them calls; those above add options, fresh ids or defaults of their own.
import { guardOptions } from "./options.js";
import { FUNCTIONS, TYPES } from "./wit.js";

export class MnemeError extends Error {
  constructor(kind, message, details = {}) {
    super(message);
    this.name = "MnemeError";
    this.kind = kind;
    this.details = details;
  }
}

// The component speaks WIT's JavaScript shapes (camelCase fields, bigint for 64-bit
// integers, `{tag, val}` variants, undefined for none); callers speak mneme-core's
// JSON (snake_case, numbers, `{case: value}` or `"case"`, null). `lower` and `lift`
// are the whole translation, both led by the function's WIT types (./wit.js, which
// `cargo xtask codegen` writes from wit/): every record's fields, every enum's cases
// and every integer's range come from the WIT, never from a list kept here.
/** A name (a caller's camelCase, the WIT's kebab-case) in mneme-core's snake_case. */
export const snake = (name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).replace(/-/g, "_");
const UTF8 = new TextEncoder();
// The WIT's own names come back in every result: each is spelled once. (Only the
// WIT's: a cache of what callers pass would grow with every new string.)
const witNames = new Map();
const witSnake = (name) => {
  let spelled = witNames.get(name);
  if (spelled === undefined) {
    spelled = snake(name);
    witNames.set(name, spelled);
  }
  return spelled;
};
/** A WIT name (kebab-case) or mneme-core's (snake_case) as jco spells it. */
export const camel = (name) => name.replace(/[-_]([a-z0-9])/g, (_, c) => c.toUpperCase());
const kebab = (name) => snake(name).replace(/_/g, "-");

/** Each integer type's range: jco lowers a number outside it wrapped (-1 as a u64 is 2^64 - 1: a cap of no limit; 256 as a u8 is 0), 64-bit ones up to the safe integers. */
const INTEGERS = {
  u8: [0, 2 ** 8 - 1], u16: [0, 2 ** 16 - 1], u32: [0, 2 ** 32 - 1], u64: [0, Number.MAX_SAFE_INTEGER],
  s8: [-(2 ** 7), 2 ** 7 - 1], s16: [-(2 ** 15), 2 ** 15 - 1], s32: [-(2 ** 31), 2 ** 31 - 1], s64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};
/** The typed array jco takes each list of numbers as. */
const NUMBER_LISTS = {
  u16: Uint16Array, u32: Uint32Array, u64: BigUint64Array, s8: Int8Array, s16: Int16Array, s32: Int32Array, s64: BigInt64Array,
  f32: Float32Array, f64: Float64Array,
};
const BIG_LISTS = new Set(["u64", "s64"]);
const refuse = (message) => {
  throw new MnemeError("invalid-argument", message);
};
/** What a value is, for a message: its type, or the number or string itself. */
const shown = (value) => (typeof value === "string" ? JSON.stringify(value) : typeof value === "number" ? String(value) : value === null ? "null" : Array.isArray(value) ? "an array" : typeof value);
const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

/** A record's fields as `[mneme-core's name, jco's name, type]`, spelled once per record type: results carry thousands. */
const recordFields = new Map();
const fieldsOf = (type, fields) => {
  let spelled = recordFields.get(type);
  if (spelled === undefined) {
    spelled = fields.map(([field, item]) => [witSnake(field), camel(field), item]);
    recordFields.set(type, spelled);
  }
  return spelled;
};

/**
 * mneme-core's JSON as the component's value of WIT type `type` (see ./wit.js); `name`
 * says where it sits, for the error that refuses it. jco would lower much without a
 * word: a string given for a list as its characters (topics "abc" stored as a, b, c), a
 * number out of range wrapped, any value as a bool by its truthiness ("no" is true).
 */
export function lower(type, value, name) {
  if (typeof type === "string") {
    const range = INTEGERS[type];
    if (range) {
      if (!Number.isSafeInteger(value)) refuse(`${name} must be a whole number, not ${shown(value)}`);
      if (value < range[0] || value > range[1]) refuse(`${name} is ${value}: give a whole number from ${range[0]} to ${range[1]}`);
      return value;
    }
    switch (type) {
      case "string":
        if (typeof value !== "string") refuse(`${name} must be a string, not ${value === null ? "null" : typeof value}`);
        return value;
      case "json":
        return JSON.stringify(value);
      case "data":
        return { tag: "bytes", val: bytes(name, value) };
      case "bool":
        if (typeof value !== "boolean") refuse(`${name} must be true or false, not ${value === null ? "null" : typeof value}`);
        return value;
      case "f32":
      case "f64":
        if (typeof value !== "number") refuse(`${name} must be a number, not ${value === null ? "null" : typeof value}`);
        if (!Number.isFinite(value)) refuse(`${name} is ${value}: give a number`);
        return value;
    }
    const definition = TYPES[type];
    if (definition?.record) return lowerRecord(fieldsOf(type, definition.record), value, name);
    if (definition?.variant) return lowerCase(definition.variant, value, name);
    if (definition?.enum) {
      const cases = definition.enum;
      const given = typeof value === "string" ? kebab(value) : undefined;
      if (!cases.includes(given)) refuse(`${name} is ${shown(value)}: give one of ${cases.map(snake).join(", ")}`);
      return given;
    }
    return value;
  }
  if ("option" in type) return value == null ? undefined : lower(type.option, value, name);
  if ("list" in type) {
    if (type.list === "u8") return bytes(name, value);
    // A list of numbers may come as a typed array (a Float32Array from a model).
    const given = NUMBER_LISTS[type.list] !== undefined && ArrayBuffer.isView(value) && !(value instanceof DataView) ? Array.from(value, Number) : value;
    if (!Array.isArray(given)) refuse(`${name} must be an array${type.list === "string" ? " of strings" : ""}, not ${shown(value)}`);
    const items = given.map((item, i) => lower(type.list, item, `${name}[${i}]`));
    // jco copies a list of numbers from a typed array's buffer: an array has none, and
    // would go in as zeros.
    const Typed = NUMBER_LISTS[type.list];
    if (Typed === undefined) return items;
    return BIG_LISTS.has(type.list) ? Typed.from(items, BigInt) : Typed.from(items);
  }
  if ("result" in type) return lowerCase([["ok", type.result[0]], ["err", type.result[1]]], value, name);
  if ("tuple" in type) {
    if (!Array.isArray(value) || value.length !== type.tuple.length) refuse(`${name} must be an array of ${type.tuple.length}`);
    return type.tuple.map((item, i) => lower(item, value[i], `${name}[${i}]`));
  }
  return value;
}

/** A record: its fields by either spelling, none it lacks (a misspelt one would leave its default in force, as the core's JSON refuses it). */
function lowerRecord(fields, value, name) {
  const names = fields.map(([field]) => field);
  if (!isObject(value)) refuse(`${name} must be an object with ${names.join(", ")}, not ${shown(value)}`);
  const given = new Map();
  for (const [key, item] of Object.entries(value)) {
    // A key given as undefined is one not given, as JSON drops it.
    if (item === undefined) continue;
    const field = snake(key);
    if (!names.includes(field)) refuse(`${name}: unknown field \`${key}\`, expected one of ${names.join(", ")}`);
    given.set(field, item);
  }
  const lowered = {};
  for (const [field, to, type] of fields) {
    const item = given.get(field);
    if (item == null && !(typeof type === "object" && "option" in type)) refuse(`${name}: \`${field}\` is missing`);
    lowered[to] = lower(type, item, `${name}.${field}`);
  }
  return lowered;
}

/** A variant's case: `{case: value}`, or `"case"` for one that carries nothing. */
function lowerCase(cases, value, name) {
  const choices = cases.map(([tag]) => snake(tag)).join(", ");
  const [given, payload] = typeof value === "string" ? [value, undefined] : isObject(value) && Object.keys(value).length === 1 ? Object.entries(value)[0] : [];
  if (given === undefined) refuse(`${name} must be one of ${choices}, as {case: value}, not ${shown(value)}`);
  const found = cases.find(([tag]) => tag === kebab(given));
  if (!found) refuse(`${name}: \`${given}\` is not one of ${choices}`);
  const [tag, type] = found;
  return type === null ? { tag } : { tag, val: lower(type, payload, `${name}.${snake(tag)}`) };
}

/** A value of WIT type `type` from the component as mneme-core's JSON. */
export function lift(type, value) {
  if (type === null) return null;
  if (typeof type === "string") {
    if (typeof value === "bigint") return Number(value);
    if (type === "json") return typeof value === "string" ? JSON.parse(value) : value;
    // Bytes, as a Uint8Array however they crossed.
    if (type === "data") return value.tag === "text" ? UTF8.encode(value.val) : value.val;
    const definition = TYPES[type];
    if (definition === undefined) return value;
    if (definition.record) {
      const lifted = {};
      for (const [name, from, item] of fieldsOf(type, definition.record)) lifted[name] = lift(item, value[from]);
      return lifted;
    }
    if (definition.variant) {
      const [tag, item] = definition.variant.find(([tag]) => tag === value.tag);
      return item === null ? witSnake(tag) : { [witSnake(tag)]: lift(item, value.val) };
    }
    if (definition.enum) return witSnake(value);
    return value;
  }
  if ("option" in type) return value == null ? null : lift(type.option, value);
  if ("list" in type) return type.list === "u8" ? value : Array.from(value, (item) => lift(type.list, item));
  if ("result" in type) return value.tag === "ok" ? { ok: lift(type.result[0], value.val) } : { err: lift(type.result[1], value.val) };
  if ("tuple" in type) return type.tuple.map((item, i) => lift(item, value[i]));
  return value;
}

/** A bad argument is a MnemeError, never a trap inside the WebAssembly instance. */
const text = (name, value) => lower("string", value, name);
/** Text that must reach the engine as written: jco turns a lone surrogate into U+FFFD, so two names would be one. */
function wellFormed(name, value) {
  if (typeof value === "string" && !value.isWellFormed()) refuse(`${name} holds a lone UTF-16 surrogate: give well-formed text`);
  return value;
}
/** A time (an s64: every safe integer is one), as the caller named it. */
const int = (name, value) => lower("s64", value, name);
/**
 * A time in milliseconds since the epoch. From 10^9 to 10^11 milliseconds is 1970-01-12
 * to 1973-03-03, a time no agent writes; in seconds it is 2001 to 5138: a
 * `Math.floor(Date.now() / 1000)` passed as is, refused as the Python package refuses it.
 */
function time(name, value) {
  const number = typeof value === "bigint" ? Number(value) : value;
  if (typeof number === "number" && number >= 1e9 && number < 1e11) {
    refuse(`${name} is ${value}, which reads as seconds since the epoch: give milliseconds (Date.now())`);
  }
  return int(name, value);
}
/** An absolute path, in POSIX's or Windows' spelling. */
const isAbsolute = (path) => /^(\/|\\\\|[A-Za-z]:[\\/])/.test(path);
/** A time window from its ends: milliseconds since the epoch, or null for open. */
const window = (since, until) => ({ since_ms: since == null ? null : time("since", since), until_ms: until == null ? null : time("until", until) });
/** Bytes from a string (as UTF-8), a Uint8Array or an ArrayBuffer. */
function bytes(name, value) {
  if (typeof value === "string") return UTF8.encode(value);
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  throw new MnemeError("invalid-argument", `${name} must be a string, a Uint8Array or an ArrayBuffer, not ${value === null ? "null" : typeof value}`);
}
const object = (name, value) => {
  if (!isObject(value)) refuse(`${name} must be an object`);
  return value;
};

/** Runs a call; a value jco refuses before it enters the instance is a bad argument too. */
async function call(run) {
  try {
    return await run();
  } catch (error) {
    if (error instanceof TypeError) throw new MnemeError("invalid-argument", error.message);
    throw error;
  }
}

/** How this host reaches the core without a store; see `setFreeEngine`. */
let storeless = () => {
  throw new MnemeError("unsupported", "this host has set no engine without a store (setFreeEngine)");
};

/**
 * Sets how this host reaches the core for the operations that read no store:
 * `engine()` gives (or promises) an engine whose `invoke(key, args)` is the store's
 * engine's. Each host sets it once, beside its `Mneme`.
 */
export function setFreeEngine(engine) {
  storeless = engine;
}

/** Runs operation `key`, which reads no store, on the host's engine of none. */
function free(key, args) {
  return call(async () => (await storeless()).invoke(key, args()));
}

/** A memory scope as WIT's variant: a project's folder name, or null for the global memory. */
const scope = (project) => (project == null ? "global" : { project: text("project", project) });

const NO_LINKS = { relates_to: [], contradicts: [], extends: [], derived_from: [] };
/** A memory to write, with the defaults of what it may leave out; a partial `links` (the d.ts's Partial<Links>) is completed. */
const newMemory = (name, memory) => {
  const given = snakeKeys(object(name, memory));
  const links = given.links == null ? NO_LINKS : { ...NO_LINKS, ...snakeKeys(object(`${name}.links`, given.links)) };
  return { description: "", body: "", topics: [], ...given, links };
};

/** Top-level keys in mneme-core's spelling (`contextWindow` and `context_window` alike), those given as undefined left out, as JSON leaves them. */
const snakeKeys = (value) => Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined).map(([key, item]) => [snake(key), item]));

/**
 * A store. `engine` reaches the core: `invoke(key, args)` calls WIT function `key`
 * (`interface.name`, `interface.resource.method`; see ./wit.js) with `args`,
 * mneme-core's JSON, one per parameter but the store, and gives its result (or a
 * promise of it) as mneme-core's JSON, throwing a MnemeError for its `err`;
 * `run(plan)` is the core's compaction driver (`next`, `answer`, `answerAll`,
 * `finish`, `failure`, `dispose`); `close()` gives back what the store holds; `storage`
 * is what it stores in.
 */
export class Mneme {
  constructor(engine) {
    this.engine = engine;
    /** The storage under the store, as the host made it (its files, for tools and tests). */
    this.storage = engine.storage;
  }

  #closed = false;
  #defaults = new Map();

  /** Calls WIT function `key` with the arguments `args()` gives (or a promise of them); refused once the store is closed. */
  #invoke(key, args) {
    return call(async () => {
      if (this.#closed) throw new MnemeError("invalid-argument", "this store is closed: open it again");
      return this.engine.invoke(key, await args());
    });
  }

  /** The core's defaults (from WIT function `key`) overlaid with what the caller set in argument `name`, as mneme-core's JSON. */
  async #overlay(key, given, name) {
    object(name, given);
    if (!this.#defaults.has(key)) this.#defaults.set(key, await this.engine.invoke(key, []));
    const defaults = this.#defaults.get(key);
    // A misspelt field (`ttl_days` for `ttl_ms`) would leave its default silently in force.
    const unknown = Object.keys(given).find((field) => !(snake(field) in defaults));
    if (unknown !== undefined) refuse(`${name}: unknown field \`${snake(unknown)}\`: use ${Object.keys(defaults).join(", ")}`);
    return { ...defaults, ...snakeKeys(given) };
  }

  /**
   * A working directory as the core takes it: absolute, since a session's project is
   * named after it as Claude Code names it. A host with a working directory of its own
   * (Node) overrides `absolutePath` to take a relative one from there, as the Python
   * package and the CLI do; elsewhere (a browser, the edge) a relative one is refused.
   */
  #cwd(cwd) {
    return typeof cwd === "string" && cwd !== "" && !isAbsolute(cwd) ? this.constructor.absolutePath(cwd) : cwd;
  }

  /** Checks transcript bytes that are not in a store (a file the user picked). */
  static checkBytes(bytes) {
    return free("sessions.check-bytes", () => {
      if (!(bytes instanceof Uint8Array)) refuse(`checkBytes takes a Uint8Array, not ${shown(bytes)}`);
      return [bytes];
    });
  }
  /** The project of a working directory, as Claude Code names its folder (`/home/me/app` → `-home-me-app`): what the memory methods' `project` takes. */
  static projectOf(cwd) { return free("sessions.project-of", () => [cwd]); }
  /** The session id Mneme keeps a session an agent SDK names `name` under (see the instance method); no store is read. */
  static sessionIdOf(name) { return free("sessions.session-id-of", () => [wellFormed("name", name)]); }
  /** The context window of a model Mneme knows, in tokens; null for one it does not. */
  static contextWindow(model) { return free("compaction.context-window", () => [model]); }
  /** What to do with a streamed reply of a silent turn so far: `deliver`, `hold` (it may still become the silent token) or `suppress`. */
  static silentReply(text) { return free("gates.silent-reply", () => [text]); }

  /** `cwd`, a relative path, as an absolute one; refused where there is no working directory to take it from. */
  static absolutePath(cwd) {
    refuse(`cwd is ${JSON.stringify(cwd)}, a relative path: give the agent's working directory as an absolute path (a session's project is named after it)`);
  }

  /** Gives back the sessions it holds, then closes the storage's handles and locks (the OPFS worker, the IndexedDB connection, lock files); every later call is refused. */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    await this.engine.close();
  }

  /** Appends a message. `cwd`, the agent's working directory, files a new session under its project (a new session needs one); left out, a line names the session's own. */
  append(id, { role, text: body, cwd = "", uuid = crypto.randomUUID(), now = Date.now() } = {}) {
    return this.#invoke("sessions.store.append", () => [id, { uuid, now_ms: time("now", now), role, text: body, cwd: this.#cwd(cwd) }]);
  }
  /**
   * Appends a turn in one write (all of it or nothing): one message or an array, in
   * Anthropic's shape (content blocks, `tool_use` / `tool_result`) or OpenAI's
   * (`tool_calls`, `tool` role) with `provider: "openai"`. `parent` rewinds: the turn
   * continues from that entry instead of the newest one. `agent: {id, parent_call}` writes
   * into that sub-agent's transcript instead (Claude Code sessions). `cwd` as for `append`.
   */
  appendTurn(id, messages, { provider = "anthropic", cwd = "", uuid = crypto.randomUUID(), now = Date.now(), parent = null, agent = null } = {}) {
    return this.#invoke("sessions.store.append-turn", () => [id, { uuid, now_ms: time("now", now), cwd: this.#cwd(cwd), provider, messages: JSON.stringify(messages), parent, agent }]);
  }
  /**
   * Imports another agent's transcript (`data`: its bytes or text) as a new session:
   * `from` is `claude`, `pi`, `codex`, `gemini` or `openai` (null: told from the content);
   * `id` and `cwd` default to the transcript's own; `origin` (a path or file name) is
   * recorded in the new session. Resolves with `{id, project, source, format, message_count,
   * skipped, migrated_from, provenance}`; an id already taken rejects with `session-exists`.
   */
  importSession(data, { from = null, id = null, cwd = null, origin = "", uuid = crypto.randomUUID(), now = Date.now() } = {}) {
    return this.#invoke("sessions.store.import-session", () => [{ data: bytes("data", data), source: from === null ? null : lower("sessions.source", from, "from"), id, cwd: this.#cwd(cwd), origin, uuid, now_ms: time("now", now) }]);
  }
  /**
   * Appends OpenAI Responses API items (what the OpenAI Agents SDK keeps in a session) to
   * session `id` in one write, a line each in Claude Code's format with the item kept as
   * given; a new session is filed under the project of `cwd`. Resolves with how many were
   * written.
   */
  appendItems(id, items, { cwd = "", uuid = crypto.randomUUID(), now = Date.now() } = {}) {
    return this.#invoke("sessions.store.append-items", () => {
      if (!Array.isArray(items)) refuse(`items must be an array of item objects, not ${shown(items)}`);
      return [id, items, this.#cwd(cwd), uuid, time("now", now)];
    });
  }

  applyCompaction(id, plan, summary, { boundary = crypto.randomUUID(), summaryUuid = crypto.randomUUID(), now = Date.now() } = {}) {
    return this.#invoke("compaction.apply-compaction", () => [id, plan, summary, { boundary, summary: text("summaryUuid", summaryUuid) }, time("now", now)]);
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
    const plan = await this.planCompaction(id, settings, mode);
    const run = this.engine.run(plan);
    let applied = null;
    try {
      for (;;) {
        const step = run.next();
        if (step.summarize) {
          const { prompt, max_tokens: maxTokens } = step.summarize;
          if (summarize) {
            // Plain text or a promise; a summariser that throws is a failure like a rejection.
            run.answer(await Promise.resolve().then(() => summarize(prompt, maxTokens)).then(
              (answer) => (typeof answer === "string" ? { ok: answer } : { err: "the summariser answered with something other than text" }),
              (error) => ({ err: String(error?.message ?? error) }),
            ));
          } else {
            const offline = await this.summarizeOffline(id, plan).then((summary) => ({ ok: summary }), (error) => ({ err: error.message }));
            run.answerAll(offline);
          }
        } else if (step.apply !== undefined) {
          applied = await this.applyCompaction(id, plan, step.apply, { boundary, summaryUuid, now });
          run.finish();
        } else if (step.record_failure !== undefined) {
          await this.recordCompactionFailure(id, step.record_failure, now);
          run.finish();
        } else {
          break;
        }
      }
      return { plan, applied, failure: run.failure() };
    } finally {
      run.dispose();
    }
  }

  // Long-term memory: `project` is a project's folder name, or null for the global memory.
  /** Writes a new memory `{name, type, description, body, topics?, links?, confidence?, session?, entry?, valid_from_ms?}`. */
  memoryAdd(project, memory, now = Date.now()) { return this.#invoke("memory.memory-add", () => [scope(project), newMemory("memory", memory), time("now", now)]); }
  /** Writes many memories with one index write (bulk import). */
  memoryAddMany(project, memories, now = Date.now()) {
    return this.#invoke("memory.memory-add-many", () => {
      if (!Array.isArray(memories)) refuse("memories must be an array");
      return [scope(project), memories.map((memory, i) => newMemory(`memories[${i}]`, memory)), time("now", now)];
    });
  }
  /** Replaces memory `file` with a new one; the old one is kept, marked invalid and superseded, out of MEMORY.md and recall. */
  memorySupersede(project, file, memory, now = Date.now()) {
    return this.#invoke("memory.memory-supersede", () => [scope(project), file, newMemory("memory", memory), time("now", now)]);
  }
  /** Memories without their bodies, newest first; `filter`: `{type?, topic?, session?, all?, since?, until?}` (`since`/`until`: those holding from a time in that window, as `memoryRecall`'s). */
  memoryList(project, options = {}) {
    return this.#invoke("memory.memory-list", () => {
      const { since = null, until = null, ...filter } = snakeKeys(object("options", options));
      return [scope(project), { all: false, ...filter, ...(since === null && until === null ? {} : { window: window(since, until) }) }];
    });
  }
  /**
   * The best memories for `query`, best first: `{hits: [{file, name, description, type, score, current, matched}], report}` (`matched` false: found through the memories around it).
   * With the host's embedder, `embed(texts)` (vectors, or a promise of them, one per text) of `model`: the scope's memories without a vector of `model` are embedded first
   * (the vectors kept beside the recall index), then the query, and memories rank by meaning too. `near: {model, vector}` gives the query's vector itself.
   */
  async memoryRecall(project, query, { limit = 10, all = false, since = null, until = null, near = null, embed = null, model = null } = {}) {
    if (embed !== null) {
      if (near !== null) refuse("give near or embed, not both: embed makes the query's vector");
      near = await this.#embedAll(project, query, embed, model);
    }
    return this.#invoke("memory.memory-recall", () => [scope(project), query, limit, lower("bool", all, "all"), window(since, until), near]);
  }
  /** Has `embed` embed every memory of the scope with no vector of `model`, then `query`: the query's `near`. */
  async #embedAll(project, query, embed, model) {
    if (typeof embed !== "function") refuse("embed must be a function from texts to their vectors");
    if (typeof model !== "string" || model.trim() === "") refuse("name the embedder's model (model: \"…\"): vectors are kept by it");
    const vectorsOf = async (texts) => {
      const vectors = await embed(texts);
      if (!Array.isArray(vectors) || vectors.length !== texts.length) refuse(`embed gave ${shown(vectors)} for ${texts.length} texts: give one vector per text, in order`);
      return vectors;
    };
    // A memory planned again after its vector was given (written again meanwhile) is
    // left for the next recall: this one goes on rather than plan forever.
    const given = new Set();
    for (;;) {
      const plan = await this.planEmbedding(project, model);
      if (plan.files.length === 0 || plan.files.some((file) => given.has(file))) break;
      if ((await this.applyEmbedding(project, plan, await vectorsOf(plan.texts))) === 0) break;
      for (const file of plan.files) given.add(file);
    }
    const [vector] = await vectorsOf([query]);
    return { model, vector };
  }
  /** The CLAUDE.md files, rules and imports a session in `cwd` starts with, from the files kept in the store: `{text, files}`. Imports outside `cwd` that a managed, project or local file makes load only with `externalImports: true` (the user's approval); each is listed with `external: true`. */
  instructions({ cwd, home, managed = null, paths = [], externalImports = false }) {
    return this.#invoke("memory.instructions", () => [{ cwd, home, managed, paths, external_imports: lower("bool", externalImports, "externalImports") }]);
  }

  /** A route policy from the core's defaults: each field given replaces the default's; a `reset` given is whole (what it omits is off). */
  async #routePolicy(policy) {
    if (!this.#defaults.has("index.default-route-policy")) this.#defaults.set("index.default-route-policy", await this.engine.invoke("index.default-route-policy", []));
    const defaults = this.#defaults.get("index.default-route-policy");
    const given = snakeKeys(object("policy", policy));
    const resetPolicy = (value) => ({ utc_offset_minutes: 0, ...snakeKeys(object("reset policy", value ?? {})) });
    return {
      ...defaults,
      ...given,
      reset: given.reset === undefined ? defaults.reset : resetPolicy(given.reset),
      overrides: (given.overrides ?? []).map((override) => ({ ...override, policy: resetPolicy(override.policy) })),
    };
  }
  #inbound(inbound) {
    return { chat_type: "direct", text: "", metadata: [], ...snakeKeys(object("inbound", inbound)), origin: inbound.origin ?? {} };
  }
  /** Routes a message: `{key, session_id, action, reason, previous_session_id, text}`, and records it. `policy` fields left out keep the core's defaults. */
  resolve(inbound, policy = {}, { now = Date.now(), newSessionId = crypto.randomUUID() } = {}) {
    return this.#invoke("index.resolve", async () => [this.#inbound(inbound), await this.#routePolicy(policy), time("now", now), text("newSessionId", newSessionId)]);
  }
  /** Moves `key` to a new session that starts from `summary` of its current one, linked to it. */
  rollover(key, summary, { newSessionId = crypto.randomUUID(), boundary = crypto.randomUUID(), summaryUuid = crypto.randomUUID(), now = Date.now() } = {}) {
    return this.#invoke("index.rollover", () => [key, summary, { boundary, summary: text("summaryUuid", summaryUuid) }, text("newSessionId", newSessionId), time("now", now)]);
  }
  /** The session key of a message (nothing is read or written). */
  keyOf(inbound, policy = {}) { return this.#invoke("index.key-of", async () => [this.#inbound(inbound), await this.#routePolicy(policy)]); }
  parseKey(key) { return this.#invoke("index.parse-key", () => [key]); }
  /** The session id Mneme keeps a session an agent SDK names `name` under: `name` itself if it is an id, else a mapping of it (`user:42` is `user-42_` and a hash). */
  sessionIdOf(name) { return this.#invoke("sessions.session-id-of", () => [wellFormed("name", name)]); }

  // <operations: written by `cargo xtask codegen` from wit/, each one no method above calls; do not edit>
  /**
   * Plans a compaction of session `id`: when (trigger, circuit breaker, loop
   * guard) and what (API rounds, never splitting a tool call from its result,
   * keeping at least the recent budget). Writes nothing. `mode` defaults to `auto`.
   */
  planCompaction(id, settings = {}, mode = "auto") { return this.#invoke("compaction.plan-compaction", async () => [id, await this.#overlay("compaction.default-settings", settings, "settings"), mode]); }
  /** A summary of what `plan` summarises, written without a model. */
  summarizeOffline(id, plan) { return this.#invoke("compaction.summarize-offline", () => [id, plan]); }
  /** Records a failed compaction; `max_failures` in a row block auto plans. */
  recordCompactionFailure(id, reason, now = Date.now()) { return this.#invoke("compaction.record-compaction-failure", () => [id, reason, time("now", now)]); }
  /** Whether to run the pre-compaction memory flush now (once per compaction cycle). */
  memoryFlushGate(id, settings = {}) { return this.#invoke("gates.memory-flush-gate", async () => [id, await this.#overlay("gates.default-flush-settings", settings, "settings")]); }
  /** Records that the memory flush ran now, closing this compaction cycle's gate. */
  recordMemoryFlush(id, now = Date.now()) { return this.#invoke("gates.record-memory-flush", () => [id, time("now", now)]); }
  /** Whether to extract memories now (messages and tool calls since the last). */
  extractionGate(id, settings = {}) { return this.#invoke("gates.extraction-gate", async () => [id, await this.#overlay("gates.default-extraction-settings", settings, "settings")]); }
  /** Records that memories were extracted now: the gate counts from here. */
  recordExtraction(id, now = Date.now()) { return this.#invoke("gates.record-extraction", () => [id, time("now", now)]); }
  /**
   * Whether the next message should start a new session (never deletes): after
   * `idle_minutes` without activity, at `daily_reset_hour` (local to
   * `utc_offset_minutes`), or past `ttl_ms`; a policy that sets none of them never.
   */
  resetGate(id, policy = {}, now = Date.now()) { return this.#invoke("gates.reset-gate", async () => [id, time("now", now), await this.#overlay("gates.default-reset-policy", policy, "policy")]); }
  /** Whether a memory consolidation is due, without taking it. */
  dreamGate(settings = {}, now = Date.now()) { return this.#invoke("gates.dream-gate", async () => [time("now", now), await this.#overlay("gates.default-dream-settings", settings, "settings")]); }
  /**
   * Takes the consolidation for `holder` if due; exactly one of several
   * concurrent callers gets it.
   */
  dreamAcquire(holder, settings = {}, now = Date.now()) { return this.#invoke("gates.dream-acquire", async () => [time("now", now), holder, await this.#overlay("gates.default-dream-settings", settings, "settings")]); }
  /** Releases it; `completed` records the run as the last consolidation. */
  dreamRelease(holder, completed, now = Date.now()) { return this.#invoke("gates.dream-release", () => [time("now", now), holder, completed]); }
  /**
   * Gives `key` a new session (what `/new` does); the old one is kept in its
   * `previous_session_ids`. `newSessionId` left out is a new random UUID.
   */
  resetKey(key, newSessionId = crypto.randomUUID(), now = Date.now()) { return this.#invoke("index.reset-key", () => [key, newSessionId, time("now", now)]); }
  /**
   * Sets a key's labels: `title`, `model` and `origin` as `patch` gives them (an
   * empty title or model removes it), each of its `toggles` and `metadata` by name
   * (an empty value removes it); what it leaves out stays.
   */
  updateKey(key, patch = {}) { return this.#invoke("index.update-key", async () => [key, await this.#overlay("index.default-key-patch", patch, "patch")]); }
  /** Forgets a key; its sessions stay. Returns the entry it had. */
  removeKey(key) { return this.#invoke("index.remove-key", () => [key]); }
  /** A key with its current session's listing and counters. */
  key(key) { return this.#invoke("index.key", () => [key]); }
  /**
   * Keys whose metadata has every `{name, value}` of `filter`, most recently active first.
   * `filter` defaults to `[]`: every key.
   */
  keys(filter = []) { return this.#invoke("index.keys", () => [filter]); }
  /** The index's generation, sizes and anything damaged that was skipped. */
  indexReport() { return this.#invoke("index.index-report", () => []); }
  /**
   * Rebuilds the index from the transcripts: every session read again, its rows and
   * the keys as they are saved as a new generation, so damaged or torn log lines and
   * an unreadable snapshot are left behind. Key bindings are kept as they are.
   */
  rebuildIndex() { return this.#invoke("index.rebuild-index", () => []); }
  /**
   * Adds the keys of an OpenClaw `sessions.json` in one write (keys the index has
   * are left as they are). Fields the index has no place for are kept in the toggle
   * `openclaw` and written back by `exportOpenclawKeys`. Transcripts are not touched.
   */
  importOpenclawKeys(data) { return this.#invoke("index.import-openclaw-keys", () => [data]); }
  /** Every key as an OpenClaw `sessions.json`, counters from the transcripts the store has. */
  exportOpenclawKeys() { return this.#invoke("index.export-openclaw-keys", () => []); }
  /**
   * The newest crab session of `agent` with `sender` (crab's `find-latest-session`:
   * the highest seq) in `project` (default `crab`); none when there is none.
   */
  crabLatest(agent, sender, project = null) { return this.#invoke("index.crab-latest", () => [project, agent, sender]); }
  /**
   * Starts the next crab session of `agent` with `sender`, `{agent}_{sender}_{seq}`
   * with seq one past the latest, its meta line written. `createdBy` defaults to `user`.
   */
  crabStart(agent, sender, { project = null, createdBy = "user", now = Date.now() } = {}) { return this.#invoke("index.crab-start", () => [project, agent, sender, createdBy, time("now", now)]); }
  /** A crab session as its name and newest meta line say. */
  crabShow(id) { return this.#invoke("index.crab-show", () => [id]); }
  /**
   * Titles a crab session: its file renamed `{agent}_{sender}_{seq}_{title slug}`
   * and a meta line appended (never a rewrite). Returns it under its new id.
   */
  crabSetTitle(id, title) { return this.#invoke("index.crab-set-title", () => [id, title]); }
  /** Adds `secs` to a crab session's `uptime_secs`, as an appended meta line. */
  crabAddUptime(id, secs) { return this.#invoke("index.crab-add-uptime", () => [id, secs]); }
  /**
   * Whether `key`'s session should roll over: its context (from its last
   * compaction on) holds `maxContextTokens` or more.
   */
  rolloverGate(key, maxContextTokens) { return this.#invoke("index.rollover-gate", () => [key, maxContextTokens]); }
  /** Changes fields in place (supersede when the fact itself changed). */
  memoryUpdate(project, file, change, now = Date.now()) { return this.#invoke("memory.memory-update", () => [scope(project), file, change, time("now", now)]); }
  /** Archives a memory: kept (listed with `all`), out of MEMORY.md and default recall. */
  memoryForget(project, file, now = Date.now()) { return this.#invoke("memory.memory-forget", () => [scope(project), file, time("now", now)]); }
  /**
   * Runs one call of Claude's memory tool (`memory_20250818`) over the scope's
   * memory files, as `/memories/<file>.md`: `input` is the tool_use block's input
   * (an object; anything else is `invalid-argument`), the result the tool_result's
   * `content` and `is_error`. A
   * path, command or edit the tool refuses is a result marked as an error, in words
   * the model can act on; an error of the call is the caller's or the store's.
   */
  memoryTool(project, input, now = Date.now()) { return this.#invoke("memory.memory-tool", () => [scope(project), input, time("now", now)]); }
  /** Records that `from` relates to `to`. */
  memoryLink(project, from, kind, to, now = Date.now()) { return this.#invoke("memory.memory-link", () => [scope(project), from, kind, to, time("now", now)]); }
  /** One memory with its body and its supersession history. */
  memoryShow(project, file) { return this.#invoke("memory.memory-show", () => [scope(project), file]); }
  /**
   * At most `limit` memories of `project` with no vector of `model` for what they say
   * now, each with its text: the host embeds `texts` and gives the vectors to
   * `applyEmbedding`, until a plan comes back empty. `limit` defaults to `64`.
   */
  planEmbedding(project, model, limit = 64) { return this.#invoke("memory.plan-embedding", () => [scope(project), model, limit]); }
  /**
   * Keeps the vectors the host's embedder made of `plan`'s texts, one per text in its
   * order, beside the recall index (`.mneme/vectors.jsonl`; in memory only on a
   * read-only store), where `memoryRecall` with `near` finds them. Returns how many
   * were kept: none of a memory that says something else since the plan. A vector
   * of another length than the model's others is `invalid-argument`.
   */
  applyEmbedding(project, plan, vectors) { return this.#invoke("memory.apply-embedding", () => [scope(project), plan, vectors]); }
  /**
   * MEMORY.md as a model should load it within `caps` (by default Claude Code's: 200
   * lines, 25,000 UTF-16 units), never cut in silence: the
   * least recently useful lines go first; a line of a memory archived or superseded
   * (a write cut short leaves one; the next write of the scope takes it out) never loads.
   */
  memoryLoad(project, caps = {}) { return this.#invoke("memory.memory-load", async () => [scope(project), await this.#overlay("memory.default-caps", caps, "caps")]); }
  /** Reads the memory folder again and rewrites the recall index. */
  memoryReindex(project) { return this.#invoke("memory.memory-reindex", () => [scope(project)]); }
  /**
   * Records that memories were useful now (put in a model's context, cited by it), so
   * `memoryLoad` keeps them over memories nobody used. Recall records nothing by itself.
   * One write; `updated_ms` stays. Returns the memories as written, bodies included.
   */
  memoryUsed(project, files, now = Date.now()) { return this.#invoke("memory.memory-used", () => [scope(project), files, time("now", now)]); }
  /**
   * Makes `memoryRecall` and `search` hybrid: `table` is a static embedding table
   * in the text form GloVe, word2vec and fastText publish (a word per line, then its
   * values; most frequent words first), and a memory close in meaning to the query
   * is found without a word in common. None goes back to words alone. Kept by this
   * store handle in memory, never written: set it after each open. A table that
   * does not read is `invalid-argument` and the previous table stays.
   */
  setEmbeddings(table = null) { return this.#invoke("memory.set-embeddings", () => [table]); }
  /**
   * Plans an extraction from session `id` into `project` (run it when the extraction
   * gate fires): the host has a model answer `prompt`, then calls `applyExtraction`.
   */
  planExtraction(project, id) { return this.#invoke("memory.plan-extraction", () => [scope(project), id]); }
  /**
   * Checks every line of the model's answer (one JSON object per line: add, update,
   * supersede, noop), then writes the memories and records the extraction. An answer
   * that does not read is `invalid-answer` and writes nothing.
   */
  applyExtraction(project, plan, answer, now = Date.now()) { return this.#invoke("memory.apply-extraction", () => [scope(project), plan, answer, time("now", now)]); }
  /** Records a failed extraction (the model failed, or its answer did not read). */
  recordExtractionFailure(id, reason, now = Date.now()) { return this.#invoke("memory.record-extraction-failure", () => [id, reason, time("now", now)]); }
  /**
   * Plans a consolidation of `project`'s memory (take the gates' dream lock first):
   * the host has a model answer `prompt`, then calls `applyConsolidation`.
   */
  planConsolidation(project, now = Date.now()) { return this.#invoke("memory.plan-consolidation", () => [scope(project), time("now", now)]); }
  /**
   * Checks every line of the model's answer (merge, supersede, update, add, archive,
   * link, noop) and stages the changes; unless `dryRun`, records them in the scope's
   * consolidation log and writes them (`rollbackConsolidation` undoes it by the
   * returned `id`). Nothing is deleted. An answer that does not
   * read is `invalid-answer` and stages nothing. `dryRun` defaults to `false`.
   */
  applyConsolidation(project, plan, answer, { dryRun = false, now = Date.now() } = {}) { return this.#invoke("memory.apply-consolidation", () => [scope(project), plan, answer, time("now", now), dryRun]); }
  /**
   * Undoes a consolidation: changed memories get their text back, added ones are
   * archived. Refuses, writing nothing, when a memory changed after it.
   */
  rollbackConsolidation(project, id, now = Date.now()) { return this.#invoke("memory.rollback-consolidation", () => [scope(project), id, time("now", now)]); }
  /** The consolidations recorded in `project`, oldest first. */
  consolidations(project) { return this.#invoke("memory.consolidations", () => [scope(project)]); }
  /** Keeps an instruction file at absolute `path` (key `files/<path>`). */
  writeFile(path, text) { return this.#invoke("memory.write-file", () => [path, text]); }
  /** The instruction file kept at absolute `path`, or none. */
  readFile(path) { return this.#invoke("memory.read-file", () => [path]); }
  /** Removing a file that is not there is fine. */
  removeFile(path) { return this.#invoke("memory.remove-file", () => [path]); }
  /**
   * Soft-deletes entry `uuid` by appending a tombstone
   * (`{"type":"tombstone","deleted_uuid":…}`); it applies across all parts.
   */
  tombstone(id, uuid, now = Date.now()) { return this.#invoke("sessions.store.tombstone", () => [id, uuid, time("now", now)]); }
  /** Every live entry of session `id`, its main chain and the load report. */
  load(id) { return this.#invoke("sessions.store.load", () => [id]); }
  /**
   * The context a model resumes with: the main chain's messages after its
   * last compaction boundary.
   */
  context(id) { return this.#invoke("sessions.store.context", () => [id]); }
  /**
   * What to send a model next, in `provider`'s shape: the context with roles
   * alternating, split replies merged, every call answered, a result whose
   * call is gone (deleted, summarised away) left out, `injections` placed (and
   * never written; system ones join the system prompt, whatever their place).
   * `model`, the model the request goes to: the thinking of replies another
   * model wrote is then sent as the session's client sends it (Claude Code
   * leaves it out, pi sends it as text), since the API refuses its signature
   * in a request to another model; without it, thinking is sent as recorded.
   * `provider` defaults to `anthropic` and `injections` defaults to `[]`.
   */
  providerContext(id, { provider = "anthropic", model = null, injections = [] } = {}) { return this.#invoke("sessions.store.provider-context", () => [id, provider, model, injections]); }
  /** Every branch (each leaf message), the current one first. */
  branches(id) { return this.#invoke("sessions.store.branches", () => [id]); }
  /**
   * The token ledger: usage in all and per branch, priced when `prices` (dollars
   * per million tokens of each kind) are given.
   */
  usage(id, prices = null) { return this.#invoke("sessions.store.usage", () => [id, prices]); }
  /**
   * A new session `to` in the same project holding the conversation from its
   * root to entry `from` (where resume is when none), written as the
   * session's client writes a fork (Claude Code: `forkedFrom` on each line; pi:
   * `parentSession` in the header). The original is untouched. Returns the lines
   * written (their `session_id` is `to`). `to` left out is a new random UUID.
   */
  fork(id, { from = null, to = crypto.randomUUID(), now = Date.now() } = {}) { return this.#invoke("sessions.store.fork", () => [id, from, to, time("now", now)]); }
  /**
   * Session `id` in `to`: in its own dialect as stored (`verbatim`); in
   * another, as the conversation it resumes to (new line ids derive from `uuid`).
   * `data` is the bytes; `message_count` the messages they hold. `uuid` left out is a new random UUID.
   */
  exportSession(id, to, uuid = crypto.randomUUID()) { return this.#invoke("sessions.store.export-session", () => [id, to, uuid]); }
  /**
   * One cleanup pass: archives sessions past their time to live, deletes what
   * `policy` asks, reports all of it (and only reports, in a dry run).
   */
  gc(policy = {}, now = Date.now()) { return this.#invoke("sessions.store.gc", async () => [await this.#overlay("sessions.default-retention", policy, "policy"), time("now", now)]); }
  /** Moves session `id` into the archive now, every file of it. */
  archive(id, now = Date.now()) { return this.#invoke("sessions.store.archive", () => [id, time("now", now)]); }
  /** Every archived session, oldest first. */
  archived() { return this.#invoke("sessions.store.archived", () => []); }
  /**
   * Puts archived session `id` back; `session-exists` if a session has the id again,
   * `invalid-argument` if the session is live (not archived).
   */
  restore(id) { return this.#invoke("sessions.store.restore", () => [id]); }
  /** The load report plus dangling parents and orphaned tool calls. */
  check(id) { return this.#invoke("sessions.store.check", () => [id]); }
  /**
   * The session's sub-agent transcripts (`<id>/subagents/agent-*.jsonl`, and
   * flat `agent-*.jsonl` files whose entries name the session).
   */
  subagents(id) { return this.#invoke("sessions.store.subagents", () => [id]); }
  /**
   * Keeps session `id` open for writing: takes its lock and keeps it until
   * `release` (or until the store is closed), so every write after this skips
   * locking and listing and costs one append. Other writers wait for the lock
   * and then fail with `storage/locked`. The session must exist. Programs that take no
   * lock (Claude Code) must not write it meanwhile.
   */
  hold(id) { return this.#invoke("sessions.store.hold", () => [id]); }
  /** Gives back the lock `hold` took; a session not held is left alone. */
  release(id) { return this.#invoke("sessions.store.release", () => [id]); }
  /**
   * Removes every part, sub-agent file and sidecar of the session; returns the
   * keys removed, the first part last.
   */
  remove(id) { return this.#invoke("sessions.store.remove", () => [id]); }
  /**
   * Rewrites broken parts (unreadable lines, glued objects, invalid UTF-8,
   * torn tail) after saving each original as `<part>.bak-<now-ms>`; a line whose
   * parent was an unreadable line is chained past it (`relinked`). A part
   * another program wrote to meanwhile is left alone (`storage/changed`).
   */
  repair(id, now = Date.now()) { return this.#invoke("sessions.store.repair", () => [id, time("now", now)]); }
  /**
   * Every session in the store, most recently updated first, and the files
   * that could not be listed as sessions.
   */
  list() { return this.#invoke("sessions.store.list", () => []); }
  /**
   * The `limit` messages across every session that best match `query` (the
   * recall index memories use: the user's own words counting twice, each session
   * read as one text too), best first:
   * only `project`'s sessions when it is named (`invalid-project` for a name no
   * folder can have), only messages in `window` (one without a timestamp counts
   * as 1970). A hit's `matched` is false when it was found through its session
   * alone. `limit` defaults to `10`. `since` (included) and `until` (left out) bound `window`, in milliseconds since the epoch (null: open).
   */
  search(query, { limit = 10, project = null, since = null, until = null } = {}) { return this.#invoke("sessions.store.search", () => [query, limit, project, window(since, until)]); }
  /** Forgets what the store knows of session `id`: the next call reads it again. */
  reopen(id) { return this.#invoke("sessions.store.reopen", () => [id]); }
  /**
   * The kinds of secret taken out of every line and memory file before it is
   * written (names as in `redacted`); every kind by default, an empty list
   * writes text exactly as given. An unknown name is `invalid-argument` and
   * changes nothing.
   */
  setRedaction(kinds) { return this.#invoke("sessions.store.set-redaction", () => [kinds]); }
  /**
   * Appends `lines` (each the JSON text of one object, as the session's
   * client wrote it) to the transcript at `key` in one storage append. A line
   * whose `uuid` the transcript holds already is left out, so a batch retried
   * after a failure that had in fact landed, or a transcript imported again, is
   * written once; lines without one are always written. A line cut short by a
   * crash is moved aside first. Secrets are taken out as from every line; the
   * store's size limits do not apply (these are another program's files).
   * Returns how many lines were written; given none, writes nothing (no empty
   * file).
   */
  appendLines(key, lines, now = Date.now()) { return this.#invoke("sessions.store.append-lines", () => [key, lines, time("now", now)]); }
  /**
   * The lines of the transcript at `key` as they were appended, oldest first
   * (a line cut short by a crash is left out); none if nothing was ever
   * written there.
   */
  readLines(key) { return this.#invoke("sessions.store.read-lines", () => [key]); }
  /**
   * The sessions of `project` that have a transcript of their own (one with
   * sub-agent transcripts only is not listed).
   */
  writtenSessions(project) { return this.#invoke("sessions.store.written-sessions", () => [project]); }
  /**
   * The subpaths of session `id`'s other transcripts in `project` (its
   * sub-agents': `subagents/agent-<id>`), sorted.
   */
  subpaths(project, id) { return this.#invoke("sessions.store.subpaths", () => [project, id]); }
  /**
   * Removes the transcript at `key`; the session's own takes every file of the
   * session with it (its parts, its sub-agents'). Removing what is not there is
   * fine.
   */
  removeTranscript(key) { return this.#invoke("sessions.store.remove-transcript", () => [key]); }
  /**
   * The items of session `id`'s resume context, oldest first, as added, as a JSON
   * array (only the newest `limit` when given). After a compaction the first is
   * `{"role":"user","content":<summary>}`; messages not added as items are not
   * among them. A session that does not exist has none.
   */
  items(id, limit = null) { return this.#invoke("sessions.store.items", () => [id, limit]); }
  /**
   * Soft-deletes session `id`'s newest item (a tombstone; the line stays in
   * the file) and returns it; none when there is none. The
   * session's lock is held from the read to the tombstone, so another pop
   * waits (`storage/locked` past the storage's wait); a writer that takes no
   * lock is caught by writing only if the session is still as read, and
   * `stale-plan` when such writers raced it eight times (try again).
   */
  popItem(id, now = Date.now()) { return this.#invoke("sessions.store.pop-item", () => [id, time("now", now)]); }
  // </operations>
}
guardOptions(Mneme, MnemeError);
