// `@mneme/node/openai-agents` against the real OpenAI Agents SDK for JavaScript
// (@openai/agents): each contract of its `Session` interface, tested here in our own
// words; MnemeSession type-checked against the SDK's own `Session`; and end to end —
// the SDK's run() twice with one MnemeSession against a local mock Responses API, the
// second request carrying the first run's items, its tool call and output included.
//
// Run by `cargo xtask test` after host-node/build.mjs.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createServer } from "node:http";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import { assert, finish, test } from "../../tests/js/runner.mjs";
import { MnemeSession } from "../js/openai-agents.js";
import { Mneme } from "../js/mneme.js";
import { PgStorage } from "../js/postgres.js";
import { PostgresCluster } from "../../tests/js/postgres.mjs";
import { OPTIONS, problems } from "./typescript.mjs";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "mneme-openai-agents-"));
let made = 0;
const fresh = async () => Mneme.open({ root: join(scratch, `store-${made++}`), durability: "buffered" });
const cluster = new PostgresCluster();
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** OpenAI's Responses API on 127.0.0.1: each request gets the next scripted output (a list of output items); every request body is kept. */
async function startMockResponses() {
  const requests = [];
  const outputs = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      if (!request.url.endsWith("/responses")) {
        response.writeHead(404).end();
        return;
      }
      const parsed = JSON.parse(body);
      requests.push(parsed);
      const output = outputs.shift() ?? [textOutput("fallback")];
      const usage = { input_tokens: 12, output_tokens: 3, total_tokens: 15, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
      const payload = JSON.stringify({
        id: `resp_${requests.length}`, object: "response", created_at: 1771200000, status: "completed", model: parsed.model, output,
        parallel_tool_calls: true, tool_choice: "auto", tools: [], usage,
      });
      response.writeHead(200, { "content-type": "application/json" }).end(payload);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/v1`, requests, outputs, close: () => server.close() };
}

const textOutput = (text, n = 1) => ({ type: "message", id: `msg_${n}`, status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] });
const callOutput = (name, args, callId) => ({ type: "function_call", id: `fc_${callId}`, call_id: callId, name, arguments: JSON.stringify(args), status: "completed" });

try {
  await test("items come back deep-equal, in order; the newest `limit` of them when asked", async () => {
    const session = new MnemeSession("s", await fresh(), { cwd: "/work/app" });
    assert(same(await session.getItems(), []), "a new session has no items");
    const items = [
      { role: "user", content: "hi ünïcödé" },
      { type: "function_call", callId: "c1", name: "f", arguments: "{\"a\":1}", status: "completed", providerData: { id: "fc_1" } },
      { type: "function_call_result", callId: "c1", name: "f", status: "completed", output: { type: "text", text: "done" } },
      { role: "assistant", status: "completed", content: [{ type: "output_text", text: "Done." }] },
    ];
    await session.addItems(items.slice(0, 2));
    await session.addItems(items.slice(2));
    await session.addItems([]);
    assert(same(await session.getItems(), items), "what was added, in order");
    assert(same(await session.getItems(2), items.slice(2)), "the newest two");
    assert((await session.getSessionId()) === "s");
  });

  await test("popItem takes the newest item (undefined when none); sessions are isolated; clearSession empties one", async () => {
    const store = await fresh();
    const a = new MnemeSession("a", store);
    const b = new MnemeSession("b", store);
    assert((await a.popItem()) === undefined, "nothing to pop");
    await a.addItems([{ role: "user", content: "1" }, { role: "user", content: "2" }]);
    await b.addItems([{ role: "user", content: "b" }]);
    assert(same(await a.popItem(), { role: "user", content: "2" }), "the newest");
    assert(same(await a.getItems(), [{ role: "user", content: "1" }]));
    await a.clearSession();
    await a.clearSession();
    assert(same(await a.getItems(), []), "cleared");
    assert(same(await b.getItems(), [{ role: "user", content: "b" }]), "the other session is untouched");
  });

  await test("any string the SDK names a session by keeps one session: user:42 and user/42 two, each under its Mneme id", async () => {
    const store = await fresh();
    const colon = new MnemeSession("user:42", store, { cwd: "/work/app" });
    const slash = new MnemeSession("user/42", store, { cwd: "/work/app" });
    const [colonId, slashId] = [await colon.mnemeId(), await slash.mnemeId()];
    assert(colonId.startsWith("user-42_") && colonId !== slashId, `${colonId} ${slashId}`);
    assert((await colon.getSessionId()) === "user:42", "the SDK's id stays the SDK's");
    assert((await new MnemeSession("chat-1", store).mnemeId()) === "chat-1", "an id of Mneme's is its own");
    await colon.addItems([{ role: "user", content: "colon" }]);
    await slash.addItems([{ role: "user", content: "slash" }]);
    const again = new MnemeSession("user:42", store, { cwd: "/elsewhere" });
    assert(same(await again.getItems(), [{ role: "user", content: "colon" }]));
    assert((await store.context(colonId)).messages[0].content[0].text === "colon");
    assert(same(await again.popItem(), { role: "user", content: "colon" }));
    await slash.clearSession();
    assert(same(await slash.getItems(), []) && same(await colon.getItems(), []));
    assert(same((await store.list()).sessions.map((s) => s.id), [colonId]));
  });

  await test("what is not a batch of items, or not an option, is refused, never dropped", async () => {
    const store = await fresh();
    const refusedWith = async (run, words) => {
      const error = await Promise.resolve().then(run).then(() => undefined, (error) => error);
      assert(error?.kind === "invalid-argument" && error.message.includes(words), `expected a refusal saying "${words}", got ${error}`);
    };
    const session = new MnemeSession("s", store, { cwd: "/w" });
    await refusedWith(() => session.addItems({ role: "user", content: "hi" }), "items must be an array of item objects, not object");
    await refusedWith(() => session.addItems(), "items must be an array of item objects, not undefined");
    assert(same(await session.getItems(), []), "nothing was written");
    await refusedWith(() => new MnemeSession("s", store, { cwdd: "/x" }), "MnemeSession: unknown option `cwdd`; it takes cwd");
  });

  await test("the session is one Mneme reads: context, search, every call answered", async () => {
    const store = await fresh();
    const session = new MnemeSession("read", store, { cwd: "/work/app" });
    await session.addItems([
      { role: "user", content: "Weather in Oslo?" },
      { type: "function_call", callId: "c", name: "weather", arguments: "{\"city\":\"Oslo\"}" },
      { type: "function_call_result", callId: "c", name: "weather", output: { type: "text", text: "snowing in Oslo" } },
    ]);
    const context = await store.context("read");
    assert(same(context.messages.map((m) => m.role), ["user", "assistant", "user"]), JSON.stringify(context.messages));
    assert((await store.search("snowing Oslo"))[0]?.id === "read", "search finds the tool's output");
    assert(same((await store.providerContext("read")).interrupted, []), "the call has its output");
  });

  await test("MnemeSession is the SDK's Session (a strict type check against @openai/agents)", () => {
    const found = problems([join(HERE, "openai-agents.check.ts")], { ...OPTIONS, skipLibCheck: true });
    assert(found.length === 0, found.join("\n"));
  });

  // On a folder, then on PostgreSQL: each run on a store of its own over the same
  // place, as two hosts of a deployment, so only the place holds the history.
  const places = [
    ["folder", () => Mneme.open({ root: join(scratch, "e2e") })],
    ["PostgreSQL", () => Mneme.open({ storage: new PgStorage(cluster.url, { schema: "e2e" }) })],
  ];
  // One mock API for both: the SDK keeps the model it made for a name, and its client.
  const api = await startMockResponses();
  setDefaultOpenAIClient(new OpenAI({ baseURL: api.url, apiKey: "x" }));
  setOpenAIAPI("responses");
  setTracingDisabled(true);
  for (const [where, open] of places) {
    await test(`end to end: run() twice with one MnemeSession; the second request carries the first run's items [${where}]`, async () => {
      const weather = tool({ name: "weather", description: "The weather in a city.", parameters: z.object({ city: z.string() }), execute: async ({ city }) => `sunny in ${city}` });
      const agent = new Agent({ name: "Assistant", instructions: "Be brief.", model: "gpt-mock", tools: [weather] });
      api.outputs.push([callOutput("weather", { city: "Paris" }, "call_1")], [textOutput("It is sunny in Paris.")]);
      const store = await open();
      const first = await run(agent, "Weather in Paris?", { session: new MnemeSession("chat-1", store, { cwd: "/work/app" }) });
      assert(first.finalOutput === "It is sunny in Paris.", String(first.finalOutput));
      await store.close();
      api.outputs.push([textOutput("You asked about Paris.", 2)]);
      const again = await open();
      const second = await run(agent, "What did I ask?", { session: new MnemeSession("chat-1", again, { cwd: "/work/app" }) });
      assert(second.finalOutput === "You asked about Paris.", String(second.finalOutput));
      const sent = api.requests.at(-1).input;
      const text = JSON.stringify(sent);
      assert(text.includes("Weather in Paris?") && text.includes("call_1") && text.includes("sunny in Paris") && text.includes("It is sunny in Paris."), text);
      assert(JSON.stringify(sent.at(-1)).includes("What did I ask?"), "the new prompt comes last");
      assert(same((await again.providerContext("chat-1")).interrupted, []), "Mneme sees the call answered");
      await again.close();
    });
  }
  api.close();

  await test("the README's example runs as written", async () => {
    const api = await startMockResponses();
    try {
      api.outputs.push([textOutput("Hello!")]);
      const folder = join(scratch, "readme");
      mkdirSync(join(folder, "node_modules/@mneme"), { recursive: true });
      symlinkSync(join(HERE, ".."), join(folder, "node_modules/@mneme/node"));
      for (const name of ["@openai", "openai", "zod"]) symlinkSync(join(HERE, "../node_modules", name), join(folder, "node_modules", name));
      const section = readFileSync(join(HERE, "../README.md"), "utf8").split(/^## OpenAI Agents SDK$/m)[1].split(/^## /m)[0];
      const block = section.split("\n```js\n")[1].split("\n```\n")[0].replace("MOCK_URL", api.url);
      writeFileSync(join(folder, "readme.mjs"), block);
      // Run beside this process, whose event loop serves the mock.
      const { stdout } = await promisify(execFile)(process.execPath, ["readme.mjs"], { cwd: folder, timeout: 60_000 });
      assert(stdout.startsWith("Hello!\n") && stdout.includes("Ship it on Friday?"), stdout);
    } finally {
      api.close();
    }
  });
} finally {
  cluster.close();
  finish("OpenAI Agents Session");
}
