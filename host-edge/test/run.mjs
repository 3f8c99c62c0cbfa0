// The edge host's tests, in workerd: the conformance vectors through a Durable Object
// per vector over RPC (outcomes compared with the native host's), the core's storage
// contract on the object's SQLite, rows cut below the production cap, the HTTP API
// (a turn, the provider context, the list, a compaction summarised by a service the
// Worker calls; long-term memory), the OpenAI Agents SDK's session on an object's
// store, data surviving a restart of miniflare, and plain `workerd serve` killed with
// SIGKILL and started again.
//
// Run by `cargo xtask test` after the Node package is built (host-node/gen).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { Mneme as NodeMneme } from "../../host-node/js/mneme.js";
import { STATIC_METHODS } from "../src/methods.js";
import { MnemeSession, objectStore as rpcStore } from "../src/openai-agents.js";
import { differences, runVectors } from "../../tests/js/conformance.js";
import { quickstart } from "../../tests/js/quickstart.mjs";
import { assert, finish, test } from "../../tests/js/runner.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TARGET = process.env.CARGO_TARGET_DIR ?? join(ROOT, "target");
const NATIVE = process.env.MNEME_NATIVE_OUTCOMES ?? join(TARGET, "tmp/conformance-native.json");
const WORKER = join(ROOT, "host-edge/src/worker.js");
const WORKERD = join(ROOT, "host-edge/node_modules/.bin/workerd");
const scratch = mkdtempSync(join(tmpdir(), "mneme-edge-"));
// workerd 2026-07-30 on a two-core machine runs V8 with one worker thread, and 2 of 29
// runs of this script livelocked there: a background Sparkplug batch compile on that
// thread waits for a garbage collection, while the main thread pumps cppgc's incremental
// sweep tasks, which keep re-posting themselves, and never collects (seen with gdb: 100%
// CPU for minutes in `PumpMessageLoop` → `SweepInForegroundTaskImpl`, the worker parked
// in `AwaitCollectionBackground`). V8 with no background threads cannot starve that way.
// Miniflare passes this variable to workerd; plain `workerd serve` gets it in its config.
const V8_FLAGS = ["--single-threaded"];
process.env.MINIFLARE_WORKERD_V8_FLAGS = V8_FLAGS.join(" ");

if (!existsSync(join(ROOT, "host-node/gen/mneme.js"))) {
  console.error("error: host-node/gen is missing: build the Node package first (cargo xtask node)");
  process.exit(1);
}

const summarised = [];
/** Set to make the summariser answer with an error, as a model API that is down does. */
const summariser = { down: false };
/** Miniflare running the Worker; `persist`: a folder that keeps the objects' data. */
function miniflare({ persist, chunkBytes } = {}) {
  return new Miniflare({
    modules: true,
    modulesRoot: ROOT,
    scriptPath: WORKER,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2025-09-01",
    durableObjects: { STORES: { className: "MnemeStore", useSQLite: true } },
    durableObjectsPersist: persist ?? false,
    bindings: chunkBytes ? { CHUNK_BYTES: String(chunkBytes) } : {},
    // The summariser the Worker calls: a model API answering in Anthropic's shape.
    serviceBindings: {
      SUMMARIZER: async (request) => {
        const asked = await request.json();
        if (summariser.down) return new Response("overloaded", { status: 529 });
        summarised.push(asked);
        const text = `summary of ${asked.messages[0].content.length} characters`;
        return new Response(JSON.stringify({ type: "message", role: "assistant", content: [{ type: "text", text }] }), { headers: { "content-type": "application/json" } });
      },
    },
  });
}


/** The store in the Durable Object `name`, with the Mneme API, over RPC. */
async function objectStore(mf, name, limits) {
  const namespace = await mf.getDurableObjectNamespace("STORES");
  const stub = namespace.get(namespace.idFromName(name));
  if (limits) await stub.setLimits(limits);
  const store = {
    stub,
    storage: { replace: (key, data) => stub.storageCall("replace", [key, data]), list: async (prefix) => stub.storageCall("list", [prefix]) },
    close: async () => {},
  };
  return Object.assign(store, rpcStore(stub));
}

const unwrap = (result) => {
  if (result.err) throw Object.assign(new Error(result.err.message), { kind: result.err.kind });
  return result.ok;
};

const post = (mf, path, body) => mf.dispatchFetch(`http://edge${path}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });

try {
  await test("the README's quickstart runs as written, in host-edge/", async () => {
    const { code, stdout, stderr } = await runWith(process.execPath, ["--input-type=module"], join(ROOT, "host-edge"), quickstart(join(ROOT, "host-edge/README.md"), "js"));
    assert(code === 0, `the quickstart failed (${code}): ${stderr}`);
    const { messages } = JSON.parse(stdout);
    assert(messages.length === 1 && messages[0].role === "user" && messages[0].content[0]?.text === "hello", stdout);
  });

  await test("conformance vectors in Durable Objects (SQLite storage, over RPC)", async () => {
    const mf = miniflare();
    try {
      const checker = await objectStore(mf, "check-bytes");
      const { results, failures } = await runVectors({
        Mneme: {
          checkBytes: async (bytes) => unwrap(await checker.stub.callStatic("checkBytes", [bytes])),
          projectOf: async (cwd) => unwrap(await checker.stub.callStatic("projectOf", [cwd])),
        },
        open: (name, limits) => objectStore(mf, name, limits),
        destroy: async () => {},
        read: async (file) => JSON.parse(readFileSync(join(ROOT, "tests/vectors", file), "utf8")),
      });
      assert(failures.length === 0, failures.join("\n"));
      assert(existsSync(NATIVE), `no native outcomes at ${NATIVE}: run the Rust tests first (cargo xtask test does)`);
      const differ = differences(results, JSON.parse(readFileSync(NATIVE, "utf8")), "workerd");
      assert(differ.length === 0, differ.join("\n"));
    } finally {
      await mf.dispose();
    }
  });

  await test("every operation of no store over RPC answers as the Node package's; a method it lacks is refused in words", async () => {
    const mf = miniflare();
    try {
      const { stub } = await objectStore(mf, "statics");
      const calls = [
        ["projectOf", ["/home/me/app"]],
        ["sessionIdOf", ["user:42"]],
        ["contextWindow", ["claude-opus-4-5"]],
        ["contextWindow", ["no-such-model"]],
        ["silentReply", ["NO_RE"]],
        ["silentReply", ["Hello"]],
        ["checkBytes", [new TextEncoder().encode('{"type":"user","uuid":"a","parentUuid":null,"message":{"role":"user","content":"hi"}}\n{"torn')]],
      ];
      // The API's own statics (the Node class's base, js/api.js), which the Worker serves.
      const api = Object.getPrototypeOf(NodeMneme);
      const statics = Object.getOwnPropertyNames(api).filter((name) => typeof api[name] === "function" && name !== "absolutePath").sort();
      const called = [...new Set(calls.map(([method]) => method))].sort();
      assert(JSON.stringify(statics) === JSON.stringify(called), `the API's static methods ${statics}, the test calls ${called}`);
      assert(JSON.stringify([...STATIC_METHODS].sort()) === JSON.stringify(statics), `the Worker serves ${STATIC_METHODS}`);
      for (const [method, args] of calls) {
        const remote = await stub.callStatic(method, args);
        assert(!remote.err, `${method}: ${JSON.stringify(remote.err)}`);
        const local = await NodeMneme[method](...args);
        assert(JSON.stringify(remote.ok) === JSON.stringify(local), `${method}(${JSON.stringify(args)}): ${JSON.stringify(remote.ok)} over RPC, ${JSON.stringify(local)} in Node`);
      }
      const refused = await stub.callStatic("absolutePath", ["app"]);
      assert(refused.err?.kind === "invalid-argument" && refused.err.message.includes("projectOf"), JSON.stringify(refused));
      const badArgument = await stub.callStatic("projectOf", [42]);
      assert(badArgument.err?.kind === "invalid-argument", JSON.stringify(badArgument));
      const spread = await stub.callStatic("projectOf", "/a");
      assert(spread.err?.kind === "invalid-argument" && spread.err.message.includes("array"), JSON.stringify(spread));
    } finally {
      await mf.dispose();
    }
  });

  await test("the OpenAI Agents SDK's session on a Durable Object's store: items as added, popped, cleared", async () => {
    const mf = miniflare();
    try {
      const store = await objectStore(mf, "agents");
      const session = new MnemeSession("chat-1", store, { cwd: "/acme" });
      const items = [
        { role: "user", content: "Weather in Oslo?" },
        { type: "function_call", callId: "c1", name: "weather", arguments: "{\"city\":\"Oslo\"}", status: "completed" },
        { type: "function_call_result", callId: "c1", name: "weather", status: "completed", output: { type: "text", text: "snow" } },
        { role: "assistant", status: "completed", content: [{ type: "output_text", text: "Snow in Oslo." }] },
      ];
      await session.addItems(items.slice(0, 3));
      await session.addItems(items.slice(3));
      assert(JSON.stringify(await session.getItems()) === JSON.stringify(items), "the items as added");
      assert(JSON.stringify(await session.getItems(1)) === JSON.stringify(items.slice(3)), "the newest");
      assert(JSON.stringify(await session.popItem()) === JSON.stringify(items[3]), "popped");
      const context = await store.providerContext("chat-1");
      assert(context.interrupted.length === 0 && JSON.stringify(context.body).includes("snow"), "Mneme reads the session, the call answered");
      await session.clearSession();
      assert((await session.getItems()).length === 0 && (await session.popItem()) === undefined, "cleared");
      await session.clearSession();
    } finally {
      await mf.dispose();
    }
  });

  await test("the core's storage contract holds on a Durable Object's SQLite", async () => {
    const mf = miniflare();
    try {
      const { stub } = await objectStore(mf, "contract");
      const broke = unwrap(await stub.storageContract());
      assert(broke.length === 0, `the contract broke:\n${broke.join("\n")}`);
    } finally {
      await mf.dispose();
    }
  });

  await test("appends are cut into rows below the row cap and read back whole", async () => {
    const mf = miniflare({ chunkBytes: 1000 });
    try {
      const store = await objectStore(mf, "chunks");
      const text = "0123456789".repeat(1000);
      await store.append("big", { role: "user", text, cwd: "/w" });
      await store.append("big", { role: "assistant", text: "short", cwd: "/w" });
      const stats = await store.stub.stats();
      assert(stats.chunks >= 11 && stats.largest_chunk_bytes <= 1000, JSON.stringify(stats));
      const { entries } = await store.load("big");
      assert(entries.length === 2 && entries[0].text === text && entries[1].text === "short", "the session did not read back whole");
      const check = await store.check("big");
      assert(check.load.skipped.length === 0 && !check.load.torn_tail, JSON.stringify(check.load));
    } finally {
      await mf.dispose();
    }
  });

  await test("the HTTP API: a turn, the provider context, the list, a compaction the Worker has summarised", async () => {
    const mf = miniflare();
    try {
      const reply = { role: "assistant", id: "msg_1", content: [{ type: "text", text: "checking" }, { type: "tool_use", id: "t1", name: "ls", input: {} }] };
      const results = { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "a.txt" }] };
      let response = await post(mf, "/stores/acme/sessions/chat/turns", { messages: [{ role: "user", content: "what is here?" }, reply, results], cwd: "/w" });
      const written = await response.json();
      assert(response.status === 201 && written.length === 4, `${response.status}: ${JSON.stringify(written)} (a turn of three messages is four lines: a reply's blocks are split)`);
      response = await post(mf, "/stores/acme/sessions/chat/turns", { messages: { role: "user", content: [{ type: "tool_result", tool_use_id: "nope", content: "x" }] } });
      const refused = await response.json();
      assert(response.status === 400 && refused.error === "invalid-message" && refused.message.includes("nothing was written"), JSON.stringify(refused));
      assert(refused.details.message === 0 && refused.details.reason.includes("no pending call"), `the error's fields travel: ${JSON.stringify(refused)}`);
      const context = await (await mf.dispatchFetch("http://edge/stores/acme/sessions/chat/context?provider=openai")).json();
      const { body } = context;
      assert(body.messages.some((m) => m.tool_calls?.[0]?.id === "t1") && body.messages.some((m) => m.role === "tool"), JSON.stringify(body));
      for (let i = 0; i < 30; i++) await post(mf, "/stores/acme/sessions/chat/messages", { role: i % 2 ? "assistant" : "user", text: `${"word ".repeat(400)}${i}`, cwd: "/w" });
      const listed = await (await mf.dispatchFetch("http://edge/stores/acme/sessions")).json();
      assert(listed.sessions.length === 1 && listed.sessions[0].id === "chat", JSON.stringify(listed));
      const other = await (await mf.dispatchFetch("http://edge/stores/other/sessions")).json();
      assert(other.sessions.length === 0, "stores are apart: another store sees nothing");
      summarised.length = 0;
      response = await post(mf, "/stores/acme/sessions/chat/compact", { settings: { context_window: 8000, keep: { recent_tokens: 2000 } }, mode: "manual" });
      const compacted = await response.json();
      assert(response.status === 200 && compacted.applied?.action === "summarize", JSON.stringify(compacted).slice(0, 500));
      assert(summarised.length === compacted.plan.steps.length, `${summarised.length} summariser calls for ${compacted.plan.steps.length} steps`);
      const resumed = await (await mf.dispatchFetch("http://edge/stores/acme/sessions/chat/context")).json();
      assert(resumed.compacted && JSON.stringify(resumed.body.messages[0]).includes("summary of"), JSON.stringify(resumed.body).slice(0, 300));
      const missing = await mf.dispatchFetch("http://edge/stores/acme/sessions/nope");
      assert(missing.status === 404 && (await missing.json()).error === "session-not-found", "a missing session is a 404");
      const malformed = await mf.dispatchFetch("http://edge/stores/acme/sessions/%E0%A4%A");
      assert(malformed.status === 400 && (await malformed.json()).error === "invalid-argument", "a malformed %-escape is a 400, not a crash");
    } finally {
      await mf.dispose();
    }
  });

  await test("the HTTP API: branches, usage, fork, a context with injections, misspelt fields refused, statuses by kind", async () => {
    const mf = miniflare();
    try {
      const reply = { role: "assistant", content: "hi", usage: { input_tokens: 1000, output_tokens: 10 } };
      let response = await post(mf, "/stores/acme/sessions/chat/turns", { messages: [{ role: "user", content: "hello" }, reply], cwd: "/w" });
      const [prompt] = await response.json();
      assert(response.status === 201, `${response.status}`);
      response = await post(mf, "/stores/acme/sessions/chat/turns", { messages: [{ role: "user", content: "again" }], Parent: prompt.uuid });
      let refused = await response.json();
      assert(response.status === 400 && refused.message.includes("no field `Parent`") && refused.message.includes("parent"), JSON.stringify(refused));
      response = await post(mf, "/stores/acme/sessions/chat/messages", { role: "user", text: "x", colour: "red" });
      assert(response.status === 400 && (await response.json()).message.includes("`colour`"), "an unknown field of a message is refused");
      response = await post(mf, "/stores/acme/sessions/chat/turns", { cwd: "/w" });
      refused = await response.json();
      assert(response.status === 400 && refused.message.includes("needs `messages`"), JSON.stringify(refused));
      response = await post(mf, "/stores/acme/sessions/chat/turns", { messages: [{ role: "user", content: "take two" }], parent: prompt.uuid });
      assert(response.status === 201, "a rewind to the first prompt");
      const branches = await (await mf.dispatchFetch("http://edge/stores/acme/sessions/chat/branches")).json();
      assert(branches.length === 2 && branches.find((b) => b.current)?.text === "take two", JSON.stringify(branches));
      const usage = await (await mf.dispatchFetch("http://edge/stores/acme/sessions/chat/usage")).json();
      assert(usage.total.input === 1000 && usage.cost === null, JSON.stringify(usage));
      response = await post(mf, "/stores/acme/sessions/chat/usage", { prices: { input: 3, output: 15, cache_read: 0.3, cache_creation: 3.75 } });
      const priced = await response.json();
      assert(response.status === 200 && Math.abs(priced.cost - (1000 * 3 + 10 * 15) / 1e6) < 1e-12, JSON.stringify(priced));
      response = await post(mf, "/stores/acme/sessions/chat/context", { provider: "openai", injections: [{ role: "system", place: "start", text: "be brief" }] });
      const context = await response.json();
      assert(response.status === 200 && context.body.messages[0].content === "be brief", JSON.stringify(context.body));
      response = await post(mf, "/stores/acme/sessions/chat/fork", { to: "copy" });
      assert(response.status === 201 && (await response.json()).length === 2, "a fork: the copy's entries");
      response = await post(mf, "/stores/acme/sessions/chat/fork", { to: "copy" });
      assert(response.status === 409 && (await response.json()).error === "session-exists", "a fork onto a session there already is a conflict");
      response = await post(mf, "/stores/acme/sessions/chat/reopen", {});
      assert(response.status === 200, "reopen");
      // A session archived (RPC; a gc would do the same) takes no new session under its id: a conflict.
      const rpc = await objectStore(mf, "acme");
      await rpc.archive("copy", Date.now());
      response = await post(mf, "/stores/acme/sessions/copy/messages", { role: "user", text: "again", cwd: "/w" });
      assert(response.status === 409 && (await response.json()).error === "session-archived", `an append under an archived id: ${response.status}`);
      await rpc.restore("copy");
      const resumed = (await (await mf.dispatchFetch("http://edge/stores/acme/sessions/copy/context")).json()).body;
      assert(resumed.messages.length === 1 && resumed.messages[0].content.map((b) => b.text).join() === "hello,take two", `the copy holds the current branch: ${JSON.stringify(resumed)}`);
      for (let i = 0; i < 8; i++) await post(mf, "/stores/acme/sessions/long/messages", { role: i % 2 ? "assistant" : "user", text: `${"word ".repeat(400)}${i}`, cwd: "/w" });
      summariser.down = true;
      response = await post(mf, "/stores/acme/sessions/long/compact", { settings: { context_window: 2000, keep: { recent_tokens: 500 } }, mode: "manual" });
      const failed = await response.json();
      assert(response.status === 502 && failed.applied === null && failed.failure, JSON.stringify(failed).slice(0, 300));
    } finally {
      summariser.down = false;
      await mf.dispose();
    }
  });

  await test("the HTTP API's memory: add, recall, supersede (kept, out of recall), MEMORY.md, forget", async () => {
    const mf = miniflare();
    const get = async (path) => {
      const response = await mf.dispatchFetch(`http://edge/stores/acme${path}`);
      return { status: response.status, body: await response.json() };
    };
    try {
      let response = await post(mf, "/stores/acme/memory?project=-w-app", { name: "Deploy day", type: "project", description: "When releases go out", body: "Releases go out on Fridays." });
      const added = await response.json();
      assert(response.status === 201 && added.file === "deploy_day", JSON.stringify(added));
      await post(mf, "/stores/acme/memory?project=-w-app", { name: "Pager", type: "reference", description: "Who is on call", body: "The pager rota lives in the wiki." });
      let recalled = await get("/memory?project=-w-app&q=when%20do%20releases%20go%20out&limit=5");
      assert(recalled.status === 200 && recalled.body.hits[0]?.file === "deploy_day", JSON.stringify(recalled));
      response = await post(mf, "/stores/acme/memory/deploy_day/supersede?project=-w-app", { name: "Deploy day", type: "project", description: "When releases go out now", body: "Releases go out on Tuesdays." });
      assert(response.status === 201 && (await response.json()).file === "deploy_day_2", "the replacement is a new memory");
      recalled = await get("/memory?project=-w-app&q=releases&limit=5");
      assert(recalled.body.hits.map((h) => h.file).join() === "deploy_day_2", `the superseded memory is out of recall: ${JSON.stringify(recalled.body)}`);
      const shown = await get("/memory/deploy_day?project=-w-app");
      assert(shown.body.memory.superseded_by === "deploy_day_2" && shown.body.history.length === 2, JSON.stringify(shown.body));
      const loaded = await get("/memory/MEMORY.md?project=-w-app");
      assert(loaded.body.text.includes("(deploy_day_2.md)") && !loaded.body.text.includes("(deploy_day.md)"), loaded.body.text);
      response = await post(mf, "/stores/acme/memory/pager/forget?project=-w-app", {});
      assert(response.status === 200 && (await response.json()).archived_ms !== null, "forget archives");
      const listed = await get("/memory?project=-w-app");
      const everything = await get("/memory?project=-w-app&all=1");
      assert(listed.body.length === 1 && everything.body.length === 3, `${listed.body.length} current of ${everything.body.length}: nothing deleted`);
      // A window of the list, by when each memory holds from (whatever the Worker's clock said).
      const [before, since] = [await get("/memory?project=-w-app&all=1&until=1"), await get("/memory?project=-w-app&all=1&since=1")];
      assert(before.body.length === 0 && since.body.length === 3, `${before.body.length} before 1 ms, ${since.body.length} since`);
      const global = await get("/memory?q=releases");
      assert(global.body.hits.length === 0, "the global memory is apart from the project's");
      const missing = await get("/memory/nope?project=-w-app");
      assert(missing.status === 404 && missing.body.error === "memory-not-found", JSON.stringify(missing));
      const bad = await post(mf, "/stores/acme/memory", { name: "x", type: "user", body: "b", colour: "red" });
      assert(bad.status === 400 && (await bad.json()).error === "invalid-argument", "unknown fields are refused");
    } finally {
      await mf.dispose();
    }
  });

  await test("what a Durable Object stored survives miniflare's restart", async () => {
    const persist = join(scratch, "persist");
    let mf = miniflare({ persist });
    await post(mf, "/stores/kept/sessions/s/messages", { role: "user", text: "still here", cwd: "/w" });
    await mf.dispose();
    mf = miniflare({ persist });
    try {
      const { messages } = await (await objectStore(mf, "kept")).context("s");
      assert(messages.length === 1 && messages[0].text === "still here", JSON.stringify(messages));
    } finally {
      await mf.dispose();
    }
  });

  await test("plain `workerd serve`: data written before a SIGKILL is there after a restart", async () => {
    const port = await freePort();
    const config = join(scratch, "workerd.capnp");
    mkdirSync(join(scratch, "do"));
    writeFileSync(config, capnp(port, join(scratch, "do")));
    const start = () => spawn(WORKERD, ["serve", config, "--experimental"], { stdio: ["ignore", "pipe", "pipe"] });
    let server = start();
    try {
      await waitFor(port, server);
      for (let i = 0; i < 5; i++) {
        const response = await fetch(`http://127.0.0.1:${port}/stores/edge/sessions/s/messages`, { method: "POST", body: JSON.stringify({ role: "user", text: `line ${i}`, cwd: "/w" }) });
        const said = await response.text();
        assert(response.status === 201, `${response.status}: ${said}`);
      }
      server.kill("SIGKILL");
      await new Promise((resolve) => server.once("close", resolve));
      server = start();
      await waitFor(port, server);
      const { body } = await (await fetch(`http://127.0.0.1:${port}/stores/edge/sessions/s/context`)).json();
      assert(body.messages.length === 1 && body.messages[0].content.length === 5, `expected the five acknowledged lines, got ${JSON.stringify(body.messages)}`);
    } finally {
      server.kill("SIGKILL");
    }
  });
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
finish("edge host");

/** Runs `program` in `cwd` with `input` on its stdin; resolves with its exit code and output. */
function runWith(program, args, cwd, input) {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

/** Resolves once `port` answers HTTP; rejects if the server exits first. */
async function waitFor(port, server) {
  let exited = false;
  let output = "";
  server.stderr.on("data", (d) => (output += d));
  server.once("close", () => (exited = true));
  for (let i = 0; i < 200; i++) {
    if (exited) throw new Error(`workerd exited: ${output}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`workerd did not answer on port ${port}: ${output}`);
}

/** A workerd config serving the Worker on 127.0.0.1:`port`, its objects stored under `storage`. */
function capnp(port, storage) {
  const modules = [
    ["host-edge/src/worker.js", "esModule"],
    ["host-edge/src/sql-storage.js", "esModule"],
    ["host-edge/src/methods.js", "esModule"],
    ["host-node/gen/api.js", "esModule"],
    ["host-node/gen/jco.js", "esModule"],
    ["host-node/gen/wit.js", "esModule"],
    ["host-node/gen/mneme.js", "esModule"],
    ["host-node/gen/options.js", "esModule"],
    ["host-node/gen/mneme.core.wasm", "wasm"],
    ["host-node/gen/mneme.core2.wasm", "wasm"],
    ["host-node/gen/mneme.core3.wasm", "wasm"],
  ].map(([name, kind]) => `(name = "${name}", ${kind} = embed "${relative(scratch, join(ROOT, name))}")`);
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "disk", disk = (path = "${storage}", writable = true)),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
  v8Flags = [${V8_FLAGS.map((flag) => `"${flag}"`).join(", ")}],
);
const worker :Workerd.Worker = (
  modules = [${modules.join(", ")}],
  compatibilityDate = "2025-09-01",
  bindings = [(name = "STORES", durableObjectNamespace = "MnemeStore")],
  durableObjectNamespaces = [(className = "MnemeStore", uniqueKey = "mneme-edge-test", enableSql = true)],
  durableObjectStorage = (localDisk = "disk"),
);
`;
}
