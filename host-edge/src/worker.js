// Mneme at the edge: a Worker whose Durable Objects each hold one store, running the
// Mneme component (jco's transpiled output, host-node/gen/) over the object's SQLite.
//
// One Durable Object per store, not per session key: a store is what `list`, memory
// and compaction's view of a session need in one place, and one SQLite database holds
// it transactionally. A store is as busy as one object allows (one event at a time);
// apps that need more spread their users over stores (`/stores/<name>/…`).
//
// HTTP API (JSON in and out; errors as {"error": kind, "message"}):
//   GET  /stores/:store/sessions                      every session (mneme sessions list)
//   POST /stores/:store/sessions/:id/messages         {role, text, cwd?, uuid?, now?}: one message
//   POST /stores/:store/sessions/:id/turns            {messages, provider?, cwd?, uuid?, now?, parent?, agent?}:
//                                                     a turn, one write (a failed turn is given again with its uuid)
//   GET  /stores/:store/sessions/:id                  the transcript
//   GET  /stores/:store/sessions/:id/context?provider=anthropic|openai[&model=MODEL]
//   POST /stores/:store/sessions/:id/context          {provider?, model?, injections?}
//                                                     what to send the model next
//   GET  /stores/:store/sessions/:id/branches         each leaf, its text, time and tokens
//   GET  /stores/:store/sessions/:id/usage            the token ledger; POST {prices} to price it
//   POST /stores/:store/sessions/:id/fork             {from?, to?}: a new session, the chain up to `from`
//   POST /stores/:store/sessions/:id/reopen           read the session again (after a failed write)
//   POST /stores/:store/sessions/:id/compact          {settings?, mode?}: summarised by the
//        SUMMARIZER service binding or SUMMARIZER_URL (Anthropic's Messages API), else offline;
//        a summariser that failed is a 502 with the plan and the failure
// Long-term memory (`?project=<folder name>` for a project's, none for the global one):
//   GET  /stores/:store/memory?q=QUERY&limit=10&all=1&since=MS&until=MS recall, best first: {hits, report}
//   GET  /stores/:store/memory?type=&topic=&session=&all=1&since=MS&until=MS
//                                                     the memories, newest first
//   GET  /stores/:store/memory/MEMORY.md?lines=&units= MEMORY.md as a model loads it
//   GET  /stores/:store/memory/:file                  one memory and its history
//   POST /stores/:store/memory                        {name, type, description, body, …}: add
//   POST /stores/:store/memory/:file/supersede        {name, type, …}: the replacement
//   POST /stores/:store/memory/:file/forget           archive (kept, out of recall)
// Workers in the same account call the object over RPC instead (`call`, below).
import { DurableObject } from "cloudflare:workers";
import { instantiate } from "../../host-node/gen/mneme.js";
import core from "../../host-node/gen/mneme.core.wasm";
import core2 from "../../host-node/gen/mneme.core2.wasm";
import core3 from "../../host-node/gen/mneme.core3.wasm";
import { Mneme, MnemeError, setFreeEngine } from "../../host-node/gen/api.js";
import { JcoEngine, freeEngine, instance } from "../../host-node/gen/jco.js";
import { SqlStorage } from "./sql-storage.js";

const CORE_MODULES = { "mneme.core.wasm": core, "mneme.core2.wasm": core2, "mneme.core3.wasm": core3 };

import { METHODS, STATIC_METHODS } from "./methods.js";
const STORAGE_METHODS = new Set(["list", "read", "append", "replace", "truncate", "remove", "rename"]);

/** The HTTP status for an error kind. */
function status(kind) {
  if (kind.endsWith("not-found")) return 404;
  if (kind.startsWith("invalid-") || kind === "storage/invalid-key" || kind === "unsupported") return 400;
  if (["storage/locked", "storage/changed", "storage/already-exists", "stale-plan", "ambiguous-session", "session-exists", "session-archived", "session-poisoned"].includes(kind)) return 409;
  if (kind === "storage/read-only") return 403;
  if (kind === "session-full" || kind === "subagent-full" || kind === "storage/quota-exceeded") return 413;
  if (kind === "nothing-to-compact" || kind === "empty-summary") return 422;
  return 500;
}

/** The path's segments, decoded; null when one has a malformed %-escape. */
function decodePath(pathname) {
  try {
    return pathname.split("/").map(decodeURIComponent);
  } catch {
    return null;
  }
}

/** The fields a route's body may have; a misspelt one is refused, not ignored. */
const FIELDS = {
  messages: ["role", "text", "cwd", "uuid", "now"],
  turns: ["messages", "provider", "cwd", "uuid", "now", "parent", "agent"],
  context: ["provider", "model", "injections"],
  usage: ["prices"],
  fork: ["from", "to"],
  compact: ["settings", "mode"],
  reopen: [],
};

/** A 400 naming the first field of `body` that route `action` does not take, or null. */
function unknownField(action, body) {
  const known = Object.hasOwn(FIELDS, action) ? FIELDS[action] : undefined;
  const unknown = known && Object.keys(body).find((field) => !known.includes(field));
  if (unknown === undefined) return null;
  const takes = known.length > 0 ? `it takes ${known.join(", ")}` : "it takes none";
  return json({ error: "invalid-argument", message: `the ${action} route has no field \`${unknown}\`: ${takes}` }, 400);
}

const json = (value, code = 200) => new Response(JSON.stringify(value), { status: code, headers: { "content-type": "application/json" } });

/** Asks the summariser for `prompt` in Anthropic's Messages shape; resolves with its text. */
async function summarizeWith(env, prompt, maxTokens) {
  const request = {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...(env.SUMMARIZER_KEY ? { "x-api-key": env.SUMMARIZER_KEY } : {}) },
    body: JSON.stringify({ model: env.SUMMARIZER_MODEL ?? "claude-haiku-4-5", max_tokens: maxTokens, messages: [{ role: "user", content: prompt }] }),
  };
  const response = env.SUMMARIZER ? await env.SUMMARIZER.fetch("https://summarizer/v1/messages", request) : await fetch(env.SUMMARIZER_URL, request);
  if (!response.ok) throw new Error(`the summariser answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
  const reply = await response.json();
  return (reply.content ?? []).filter((block) => block.type === "text").map((block) => block.text).join("");
}

/** A call's outcome as RPC carries it: `{ok}`, or `{err: {kind, message, details}}` (an error keeps its kind and fields across RPC). */
async function rpc(work) {
  try {
    return { ok: await work() };
  } catch (error) {
    if (error instanceof MnemeError) return { err: { kind: error.kind, message: error.message, details: error.details } };
    throw error;
  }
}

/** An RPC call's arguments that are no array: a string would be spread into its characters. */
const notAnArray = (args) => ({ err: { kind: "invalid-argument", message: `give the arguments as an array, not ${args === null ? "null" : typeof args}`, details: {} } });

export class MnemeStore extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.storage = new SqlStorage(ctx.storage, { chunkBytes: Number(env.CHUNK_BYTES) || undefined });
    this.setLimits({ partBytes: Number(env.PART_BYTES) || 0, totalBytes: Number(env.TOTAL_BYTES) || 0 });
  }

  /** RPC: the size limits of the store's sessions (0: the core's default), until the object restarts. */
  setLimits({ partBytes = 0, totalBytes = 0 } = {}) {
    // The store it replaces gives back the sessions it holds first.
    this.store?.engine.store[Symbol.dispose]?.();
    this.store = new Mneme(new JcoEngine(instance(instantiate, (path) => CORE_MODULES[path], this.storage), this.storage, { partBytes, totalBytes }));
    // The operations of no store (`Mneme.projectOf`, …) run on the newest object's
    // instance: any instance answers them, and an isolate keeps no second one for it.
    const root = this.store.engine.root;
    setFreeEngine(() => freeEngine(root));
  }

  /** RPC: one operation of no store (`projectOf`, `checkBytes`, `sessionIdOf`, `contextWindow`, `silentReply`), as `call` answers. */
  async callStatic(method, args = []) {
    if (!STATIC_METHODS.includes(method)) return { err: { kind: "invalid-argument", message: `no static method ${method}: use one of ${STATIC_METHODS.join(", ")}`, details: {} } };
    if (!Array.isArray(args)) return notAnArray(args);
    return rpc(() => Mneme[method](...args));
  }

  /** RPC: one store method; `{ok}` or `{err: {kind, message, details}}` (errors keep their kind and fields across RPC). */
  async call(method, args = []) {
    if (!METHODS.includes(method)) return { err: { kind: "invalid-argument", message: `no method ${method}`, details: {} } };
    if (!Array.isArray(args)) return notAnArray(args);
    return rpc(() => this.store[method](...args));
  }

  /** RPC: a storage call, as the component makes them (for tools and the conformance suite). */
  storageCall(method, args = []) {
    if (!STORAGE_METHODS.has(method)) throw new Error(`no storage method ${method}`);
    return this.storage[method](...args);
  }

  /** RPC: the core's storage contract on this object's storage (run on an empty store). */
  async storageContract() {
    try {
      return { ok: [...this.store.engine.root.sessions.storageContract()] };
    } catch (error) {
      return { err: { kind: "component", message: String(error?.stack ?? JSON.stringify(error)) } };
    }
  }

  /** RPC: rows and their sizes. */
  stats() {
    return this.storage.stats();
  }

  async compact(id, { settings = {}, mode = "auto" } = {}) {
    const summarize = this.env.SUMMARIZER || this.env.SUMMARIZER_URL ? (prompt, maxTokens) => summarizeWith(this.env, prompt, maxTokens) : undefined;
    return this.store.compact(id, { settings, mode, summarize });
  }

  /** The memory routes (see the top of this file). */
  async memory(method, file, action, query, body) {
    const project = query.get("project");
    // An empty value (`?until=`) is one not given, not 0.
    const number = (name) => (query.get(name) ? Number(query.get(name)) : undefined);
    const window = { since: number("since") ?? null, until: number("until") ?? null };
    if (method === "GET" && file === undefined && query.has("q")) {
      return json(await this.store.memoryRecall(project, query.get("q"), { limit: number("limit") ?? 10, all: query.get("all") === "1", ...window }));
    }
    if (method === "GET" && file === undefined) {
      const filter = Object.fromEntries(["type", "topic", "session"].filter((name) => query.has(name)).map((name) => [name, query.get(name)]));
      return json(await this.store.memoryList(project, { ...filter, all: query.get("all") === "1", window: { since_ms: window.since, until_ms: window.until } }));
    }
    if (method === "GET" && file === "MEMORY.md") {
      const caps = Object.fromEntries(["lines", "units"].filter((name) => query.has(name)).map((name) => [name, number(name)]));
      return json(await this.store.memoryLoad(project, caps));
    }
    if (method === "GET" && action === undefined) return json(await this.store.memoryShow(project, file));
    if (method === "POST" && file === undefined) return json(await this.store.memoryAdd(project, body), 201);
    if (method === "POST" && action === "supersede") return json(await this.store.memorySupersede(project, file, body), 201);
    if (method === "POST" && action === "forget") return json(await this.store.memoryForget(project, file));
    return json({ error: "not-found", message: `no memory route ${method} ${file ?? ""}/${action ?? ""}` }, 404);
  }

  async fetch(request) {
    const url = new URL(request.url);
    const parts = decodePath(url.pathname);
    if (parts === null) return json({ error: "invalid-argument", message: `the path ${url.pathname} has a malformed %-escape` }, 400);
    const [, , , collection, id, action] = parts;
    const body = request.method === "POST" ? await request.json().catch(() => null) : null;
    if (request.method === "POST" && (body === null || typeof body !== "object")) return json({ error: "invalid-argument", message: "the body must be a JSON object" }, 400);
    try {
      if (collection === "memory") return await this.memory(request.method, id, action, url.searchParams, body);
      if (collection !== "sessions") return json({ error: "not-found", message: `no route ${url.pathname}` }, 404);
      if (id === undefined && request.method === "GET") return json(await this.store.list());
      if (id !== undefined && action === undefined && request.method === "GET") return json(await this.store.load(id));
      if (request.method === "GET" && action === "context") return json(await this.store.providerContext(id, { provider: url.searchParams.get("provider") ?? "anthropic", model: url.searchParams.get("model") }));
      if (request.method === "GET" && action === "branches") return json(await this.store.branches(id));
      if (request.method === "GET" && action === "usage") return json(await this.store.usage(id));
      const refused = request.method === "POST" ? unknownField(action, body) : null;
      if (refused) return refused;
      if (request.method === "POST") {
        if (action === "messages") return json(await this.store.append(id, body), 201);
        if (action === "turns") {
          const { messages, ...options } = body;
          if (messages === undefined) return json({ error: "invalid-argument", message: "the turns route needs `messages`: the turn's messages, one or an array" }, 400);
          return json(await this.store.appendTurn(id, messages, options), 201);
        }
        if (action === "context") return json(await this.store.providerContext(id, body));
        if (action === "usage") return json(await this.store.usage(id, body.prices ?? null));
        if (action === "fork") return json(await this.store.fork(id, body), 201);
        if (action === "reopen") {
          await this.store.reopen(id);
          return json({});
        }
        if (action === "compact") {
          const compacted = await this.compact(id, body);
          return json(compacted, compacted.failure ? 502 : 200);
        }
      }
      return json({ error: "not-found", message: `no route ${request.method} ${url.pathname}` }, 404);
    } catch (error) {
      if (error instanceof MnemeError) return json({ error: error.kind, message: error.message, details: error.details }, status(error.kind));
      throw error;
    }
  }
}

export default {
  /** Routes `/stores/<store>/…` to that store's Durable Object. */
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    const parts = decodePath(pathname);
    if (parts === null) return json({ error: "invalid-argument", message: `the path ${pathname} has a malformed %-escape` }, 400);
    const [, root, store] = parts;
    if (root !== "stores" || !store) return json({ error: "not-found", message: "use /stores/<store>/sessions…" }, 404);
    return env.STORES.get(env.STORES.idFromName(store)).fetch(request);
  },
};
