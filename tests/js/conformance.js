// The conformance vectors (tests/vectors/*.json) for every JavaScript host (the
// browser package, the Node package): the same files, the same operations and the same
// matching rules as the Rust runner (tests/src/lib.rs). A host passes its `Mneme`
// class (both packages have one API), how to open and destroy a fresh store, and how
// to read a vector file. Where a store's engine can be reached (the browser, Node; not
// the edge, whose store is across RPC), every result of a vector's operations is also
// held to its WIT type's shape.

import { FUNCTIONS, TYPES } from "../../js/wit.js";
import { DERIVED } from "./derived.js";

export const VECTOR_FILES = ["sessions.json", "compaction.json", "turns.json", "memory.json", "index.json", "interchange.json", "retention.json"];
const utf8 = (text) => new TextEncoder().encode(text);

export function matches(expected, actual, path = "") {
  if (expected && typeof expected === "object" && typeof expected.$approx === "number") {
    if (typeof actual === "number" && Math.abs(actual - expected.$approx) <= 1e-12 * Math.max(1, Math.abs(expected.$approx))) return null;
    return `${path} (expected about ${expected.$approx}, got ${JSON.stringify(actual)})`;
  }
  if (expected && typeof expected === "object" && !Array.isArray(expected) && typeof expected.$contains === "string") {
    // Any other value is read as its JSON, keys sorted and without spaces.
    const text = typeof actual === "string" ? actual : canonical(actual);
    if (actual != null && text.includes(expected.$contains)) return null;
    return `${path} (expected something containing ${JSON.stringify(expected.$contains)}, got ${JSON.stringify(actual)})`;
  }
  if (Array.isArray(expected) && Array.isArray(actual)) {
    if (expected.length !== actual.length) return `${path} (expected ${expected.length} items, got ${actual.length})`;
    for (let i = 0; i < expected.length; i++) {
      const difference = matches(expected[i], actual[i], `${path}[${i}]`);
      if (difference) return difference;
    }
    return null;
  }
  if (expected && typeof expected === "object" && !Array.isArray(expected) && actual && typeof actual === "object" && !Array.isArray(actual)) {
    for (const [key, value] of Object.entries(expected)) {
      const difference = matches(value, actual[key] ?? null, `${path}.${key}`);
      if (difference) return difference;
    }
    return null;
  }
  return JSON.stringify(expected) === JSON.stringify(actual ?? null) ? null : `${path} (expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)})`;
}

async function outcome(promise) {
  try {
    return { ok: (await promise) ?? null };
  } catch (error) {
    if (error?.kind) return { err: error.kind };
    throw error;
  }
}

async function step(Mneme, store, op, args, state) {
  switch (op) {
    case "append": return outcome(store.append(args.id, { role: args.role, text: args.text, cwd: args.cwd, uuid: args.uuid, now: args.now_ms }));
    case "append_turn": return outcome(store.appendTurn(args.id, args.messages, { provider: args.provider ?? "anthropic", cwd: args.cwd, uuid: args.uuid, now: args.now_ms, parent: args.parent ?? null, agent: args.agent ?? null }));
    case "provider_context": return outcome(store.providerContext(args.id, { provider: args.provider ?? "anthropic", model: args.model ?? null, injections: args.injections ?? [] }));
    case "set_redaction": return outcome(store.setRedaction(args.kinds));
    case "import_session":
      return outcome(store.importSession(args.text, { from: args.source ?? null, id: args.id ?? null, cwd: args.cwd ?? null, origin: args.origin, uuid: args.uuid, now: args.now_ms }));
    case "export_session": {
      // The bytes as `text`, as the Rust runner gives them.
      const result = await outcome(store.exportSession(args.id, args.to, args.uuid));
      if (!result.ok) return result;
      const { data, ...rest } = result.ok;
      if (!(data instanceof Uint8Array)) throw new Error(`exportSession gave ${typeof data} data, not a Uint8Array`);
      return { ok: { ...rest, text: new TextDecoder().decode(data) } };
    }
    case "context": return outcome(store.context(args.id));
    case "project_of": return outcome(Mneme.projectOf(args.cwd));
    case "session_id_of": return outcome(store.sessionIdOf(args.name));
    case "check_bytes": {
      // A call of no store, apart from the engine: its shape is checked here.
      const result = await outcome(Mneme.checkBytes(utf8(args.text)));
      const difference = result.ok && shapeDifference("sessions.check-report", result.ok);
      if (difference) state.shapes.add(`sessions.check-bytes: ${difference}`);
      return result;
    }
    case "stored_keys": return { ok: (await store.storage.list(args.prefix)).map((info) => info.key) };
    case "append_items": return outcome(store.appendItems(args.id, args.items, { cwd: args.cwd, uuid: args.uuid, now: args.now_ms }));
    case "plan_compaction": {
      const result = await outcome(store.planCompaction(args.id, args.settings ?? {}, args.mode));
      state.plan = result.ok;
      return result;
    }
    case "compact": {
      const summary = args.summary ?? (await store.summarizeOffline(args.id, state.plan));
      return outcome(store.applyCompaction(args.id, state.plan, summary, { boundary: args.boundary, summaryUuid: args.summary_uuid, now: args.now_ms }));
    }
    case "memory_add": return outcome(store.memoryAdd(args.project ?? null, args.memory, args.now_ms));
    case "memory_add_many": return outcome(store.memoryAddMany(args.project ?? null, args.memories, args.now_ms));
    case "memory_supersede": return outcome(store.memorySupersede(args.project ?? null, args.file, args.memory, args.now_ms));
    case "memory_list": return outcome(store.memoryList(args.project ?? null, args.filter ?? {}));
    case "memory_recall":
      return outcome(store.memoryRecall(args.project ?? null, args.query, { limit: args.limit, all: args.all ?? false, since: args.since_ms ?? null, until: args.until_ms ?? null, near: args.near ?? null }));
    case "plan_embedding": {
      const result = await outcome(store.planEmbedding(args.project ?? null, args.model, args.limit));
      state.embedding = result.ok;
      return result;
    }
    case "apply_embedding": return outcome(store.applyEmbedding(args.project ?? null, state.embedding, args.vectors));
    case "set_embeddings": return outcome(store.setEmbeddings(args.table ?? null));
    case "plan_extraction": {
      const result = await outcome(store.planExtraction(args.project ?? null, args.id));
      state.extraction = result.ok;
      return result;
    }
    case "apply_extraction": return outcome(store.applyExtraction(args.project ?? null, state.extraction, args.answer, args.now_ms));
    case "plan_consolidation": {
      const result = await outcome(store.planConsolidation(args.project ?? null, args.now_ms));
      state.consolidation = result.ok;
      return result;
    }
    case "apply_consolidation":
      return outcome(store.applyConsolidation(args.project ?? null, state.consolidation, args.answer, { dryRun: args.dry_run === true, now: args.now_ms }));
    case "instructions": {
      const { external_imports: externalImports = false, ...request } = args;
      return outcome(store.instructions({ ...request, externalImports }));
    }
    case "resolve": return outcome(store.resolve(args.inbound, args.policy ?? {}, { now: args.now_ms, newSessionId: args.new_session_id }));
    case "rollover": return outcome(store.rollover(args.key, args.summary, { newSessionId: args.new_session_id, boundary: args.boundary, summaryUuid: args.summary_uuid, now: args.now_ms }));
    case "import_openclaw_keys": return outcome(store.importOpenclawKeys(args.text));
    case "key_of": return outcome(store.keyOf(args.inbound, args.policy ?? {}));
    case "parse_key": return outcome(store.parseKey(args.key));
    default: {
      // An operation whose method is derived from the WIT is called by the rule it was derived by.
      const derived = DERIVED[op];
      if (derived === undefined) throw new Error(`unknown operation ${op}`);
      const result = await outcome(store[camel(op)](...derivedArguments(op, derived.arguments, args)));
      if (!derived.bytes || result.ok === undefined) return result;
      if (!(result.ok instanceof Uint8Array)) throw new Error(`${op} gave ${typeof result.ok}, not a Uint8Array`);
      // Bytes as text, as the Rust runner gives them.
      return { ok: new TextDecoder().decode(result.ok) };
    }
  }
}

/**
 * A step's arguments for a derived method, in its order, its options as an object: what a step must give (`given`,
 * `now`) and a name the method does not take are the vector's mistakes, not an outcome.
 */
function derivedArguments(op, taken, args) {
  const unknown = Object.keys(args).find((name) => !taken.some(([given]) => given === name));
  if (unknown !== undefined) throw new Error(`${op} takes no \`${unknown}\``);
  const positional = [];
  const options = {};
  for (const [name, how, option] of taken) {
    let value;
    if (how === "given" || how === "now") {
      if (!(name in args)) throw new Error(`${op} needs \`${name}\``);
      value = args[name];
    } else if (how === "default") {
      // Left out, the method's own default.
      value = args[name] ?? undefined;
    } else {
      // Null is left out, as in the other runners.
      value = args[name] ?? (how === "overlay" ? {} : null);
    }
    if (option === null) positional.push(value);
    else if (value !== undefined) options[camel(option)] = value;
  }
  return taken.some(([, , option]) => option !== null) ? [...positional, options] : positional;
}

const camel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

/**
 * Runs every vector on a fresh store; returns outcomes and mismatches.
 * `open(name, {partBytes, totalBytes})` opens a fresh store named `name`, `destroy(name)`
 * removes it, `read(file)` resolves with a vector file's parsed JSON.
 */
export async function runVectors({ Mneme, open, destroy, read }) {
  const results = [];
  const failures = [];
  const shapes = new Set();
  for (const file of VECTOR_FILES) {
    const vectors = await read(file);
    for (const [index, vector] of vectors.entries()) {
      const namespace = `conformance-${index}-${crypto.randomUUID()}`;
      const store = await open(namespace, { partBytes: vector.limits?.part_bytes ?? 0, totalBytes: vector.limits?.total_bytes ?? 0 });
      checkShapes(store, shapes);
      for (const [key, text] of Object.entries(vector.files ?? {})) await store.storage.replace(key, utf8(text));
      const outcomes = [];
      const state = { shapes };
      for (const [i, s] of vector.steps.entries()) {
        const op = Object.keys(s).find((k) => k !== "expect");
        const actual = await step(Mneme, store, op, s[op], state);
        const difference = matches(s.expect, actual);
        if (difference) failures.push(`${file}: ${vector.name}: step ${i} (${op}) differs at ${difference}`);
        outcomes.push(actual);
      }
      results.push([vector.name, outcomes]);
      await store.close();
      await destroy(namespace);
    }
  }
  failures.push(...shapes);
  return { results, failures };
}

const snake = (name) => name.replace(/-/g, "_");
const INTEGERS = { u8: [0, 2 ** 8 - 1], u16: [0, 2 ** 16 - 1], u32: [0, 2 ** 32 - 1], u64: [0, Number.MAX_SAFE_INTEGER], s8: [-(2 ** 7), 2 ** 7 - 1], s16: [-(2 ** 15), 2 ** 15 - 1], s32: [-(2 ** 31), 2 ** 31 - 1], s64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] };

/**
 * Where `value` is not of WIT type `type` as mneme-core's JSON gives it (a record with
 * exactly its fields, an enum's case, `"case"` or `{case: payload}`, null for none),
 * or null. The browser's results come from the core's serde, not from the WIT: this
 * holds the two to one shape.
 */
export function shapeDifference(type, value, path = "") {
  const kind = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
  const wrong = (expected) => `${path || "the result"} is ${kind}, not ${expected}`;
  if (type === null) return value === null || value === undefined ? null : wrong("nothing");
  if (typeof type === "string") {
    if (type === "json") return null;
    if (type === "data") return value instanceof Uint8Array ? null : wrong("a Uint8Array");
    if (type === "string" || type === "char") return typeof value === "string" ? null : wrong("a string");
    if (type === "bool") return typeof value === "boolean" ? null : wrong("a boolean");
    if (type in INTEGERS) {
      const [low, high] = INTEGERS[type];
      return Number.isSafeInteger(value) && value >= low && value <= high ? null : `${path || "the result"} is ${JSON.stringify(value)}, not a ${type}`;
    }
    if (type === "f32" || type === "f64") return typeof value === "number" ? null : wrong("a number");
    const definition = TYPES[type];
    if (definition === undefined) return `${path || "the result"}: no rule for WIT type ${type}`;
    if (definition.record) {
      if (kind !== "object") return wrong(`a ${type} record`);
      const fields = definition.record.map(([field]) => snake(field));
      const extra = Object.keys(value).find((key) => !fields.includes(key));
      if (extra !== undefined) return `${path || "the result"} has \`${extra}\`, which ${type} has not`;
      for (const [field, item] of definition.record) {
        if (!(snake(field) in value)) return `${path || "the result"} lacks ${type}'s \`${snake(field)}\``;
        const difference = shapeDifference(item, value[snake(field)], `${path}.${snake(field)}`);
        if (difference) return difference;
      }
      return null;
    }
    if (definition.enum) return definition.enum.map(snake).includes(value) ? null : `${path || "the result"} is ${JSON.stringify(value)}, not a case of ${type}`;
    if (definition.variant) {
      const [tag, payload] = typeof value === "string" ? [value, undefined] : kind === "object" && Object.keys(value).length === 1 ? Object.entries(value)[0] : [];
      const found = definition.variant.find(([name]) => snake(name) === tag);
      if (!found) return `${path || "the result"} is ${JSON.stringify(value)}, not a case of ${type}`;
      if (found[1] === null) return typeof value === "string" ? null : wrong(`"${tag}"`);
      return typeof value === "string" ? wrong(`{${tag}: …}`) : shapeDifference(found[1], payload, `${path}.${tag}`);
    }
    return `${path || "the result"}: no rule for ${type}'s kind`;
  }
  if ("option" in type) return value === null ? null : shapeDifference(type.option, value, path);
  if ("list" in type) {
    if (type.list === "u8") return value instanceof Uint8Array ? null : wrong("a Uint8Array");
    if (!Array.isArray(value)) return wrong("an array");
    for (const [i, item] of value.entries()) {
      const difference = shapeDifference(type.list, item, `${path}[${i}]`);
      if (difference) return difference;
    }
    return null;
  }
  return `${path || "the result"}: no rule for ${JSON.stringify(type)}`;
}

/** Holds every result of `store`'s engine to its WIT function's result type, into `found`. */
function checkShapes(store, found) {
  const engine = store.engine;
  if (typeof engine?.invoke !== "function") return;
  const invoke = engine.invoke.bind(engine);
  engine.invoke = async (key, args) => {
    const value = await invoke(key, args);
    const { result } = FUNCTIONS[key];
    const ok = result !== null && typeof result === "object" && "result" in result ? result.result[0] : result;
    const difference = shapeDifference(ok, value ?? null);
    if (difference) found.add(`${key}: ${difference}`);
    return value;
  };
}

/** JSON with object keys sorted, so outcomes compare by value, not key order. */
export function canonical(value) {
  return JSON.stringify(value, (_, v) => (v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v));
}

/**
 * Where a host's outcomes differ from the native host's (`native`: the JSON the Rust
 * conformance test writes to target/tmp/conformance-native.json), one line each.
 */
export function differences(results, native, host) {
  if (results.length !== native.length) return [`${results.length} vectors ran on ${host}, the native host ran ${native.length}`];
  const found = [];
  for (const [i, [name, outcomes]] of results.entries()) {
    const [got, expected] = [canonical(outcomes), canonical(native[i][1])];
    if (native[i][0] !== name) found.push(`vector ${i} is ${name} on ${host} and ${native[i][0]} natively`);
    else if (got !== expected) found.push(`${name}: the outcomes on ${host} differ from the native host's\n${host}: ${got.slice(0, 1500)}\nnative: ${expected.slice(0, 1500)}`);
  }
  return found;
}
