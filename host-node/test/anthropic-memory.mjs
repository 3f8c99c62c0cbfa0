// `@mneme/node/anthropic` against the real Anthropic SDK for JavaScript
// (@anthropic-ai/sdk): MnemeMemoryTool type-checked against the SDK's own
// `MemoryToolHandlers`; the README's tool-runner block run as written against a mock of
// the Messages API (the model writes a memory, then names a path the tool refuses; the
// SDK's next requests carry Mneme's answers, the refusal marked is_error); the README's
// own-loop function.
//
// Run by `cargo xtask test` after host-node/build.mjs.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startMockApi } from "../../clients/mock-api.mjs";
import { assert, finish, test } from "../../tests/js/runner.mjs";
import { Mneme } from "../js/mneme.js";
import { MnemeMemoryTool } from "../js/anthropic.js";
import { OPTIONS, problems } from "./typescript.mjs";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "mneme-anthropic-"));
const PROJECT = await Mneme.projectOf("/home/me/app");
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** The README's ```js blocks under "## Claude's memory tool", as written. */
function readmeBlock(number) {
  const section = readFileSync(join(HERE, "../README.md"), "utf8").split(/^## Claude's memory tool$/m)[1].split(/^## /m)[0];
  return section.split("\n```js\n")[number + 1].split("\n```\n")[0];
}

/** The tool_result block for `id` in a request the SDK sent. */
const resultOf = (request, id) =>
  request.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).find((b) => b.type === "tool_result" && b.tool_use_id === id);
const textOf = (result) => (typeof result.content === "string" ? result.content : result.content.map((b) => b.text).join(""));

try {
  await test("MnemeMemoryTool is the SDK's MemoryToolHandlers (a strict type check against @anthropic-ai/sdk)", () => {
    const found = problems([join(HERE, "anthropic.check.ts")], { ...OPTIONS, skipLibCheck: true });
    assert(found.length === 0, found.join("\n"));
  });

  await test("the README's tool runner writes the model's memory into the store; a refusal goes back marked is_error", async () => {
    const api = await startMockApi();
    const calls = [
      { type: "tool_use", id: "toolu_1", name: "memory", input: { command: "create", path: "/memories/deploys.md", file_text: "Deploys happen on Tuesdays.\n" } },
      { type: "tool_use", id: "toolu_2", name: "memory", input: { command: "view", path: "/etc/passwd" } },
    ];
    // Request n gets call n, then an answer in words.
    api.script = () => {
      const next = calls[api.requests.length - 1];
      return next ? { content: [next], stop_reason: "tool_use" } : null;
    };
    try {
      const folder = join(scratch, "readme");
      mkdirSync(join(folder, "node_modules/@mneme"), { recursive: true });
      symlinkSync(join(HERE, ".."), join(folder, "node_modules/@mneme/node"));
      symlinkSync(join(HERE, "../node_modules/@anthropic-ai"), join(folder, "node_modules/@anthropic-ai"));
      writeFileSync(join(folder, "readme.mjs"), readmeBlock(0));
      const env = { ...process.env, ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: "dummy" };
      // Run beside this process, whose event loop serves the mock.
      const { stdout } = await promisify(execFile)(process.execPath, ["readme.mjs"], { cwd: folder, env, timeout: 60_000 }).catch((e) => {
        throw new Error(`the README's block failed (${e.code ?? e.signal}): ${e.stderr}${e.stdout}`);
      });
      assert(stdout.includes("mock reply"), stdout);
      assert(api.requests.length === 3, `${api.requests.length} requests`);
      assert(same(api.requests[0].tools, [{ type: "memory_20250818", name: "memory" }]), JSON.stringify(api.requests[0].tools));
      const created = resultOf(api.requests[1], "toolu_1");
      assert(textOf(created) === "File created successfully at: /memories/deploys.md" && !created.is_error, JSON.stringify(created));
      const refused = resultOf(api.requests[2], "toolu_2");
      assert(refused.is_error === true && textOf(refused) === "Path must start with /memories, got: /etc/passwd", JSON.stringify(refused));
      const store = await Mneme.open({ root: join(folder, "data") });
      const memories = await store.memoryList(PROJECT);
      assert(same(memories.map((m) => [m.file, m.description]), [["deploys", "Deploys happen on Tuesdays."]]), JSON.stringify(memories));
      assert((await store.memoryRecall(PROJECT, "when do we deploy")).hits[0]?.file === "deploys", "recall finds what the model wrote");
      await store.close();
    } finally {
      api.close();
    }
  });

  await test("the README's own-loop function gives a tool_result block, is_error on a refusal", async () => {
    const memoryToolResult = new Function(`${readmeBlock(1)}; return memoryToolResult;`)();
    const store = await Mneme.open({ root: join(scratch, "own-loop") });
    const block = { type: "tool_use", id: "toolu_9", name: "memory", input: { command: "create", path: "/memories/a.md", file_text: "A.\n" } };
    const first = await memoryToolResult(store, PROJECT, block);
    assert(same(first, { type: "tool_result", tool_use_id: "toolu_9", content: "File created successfully at: /memories/a.md", is_error: false }), JSON.stringify(first));
    const again = await memoryToolResult(store, PROJECT, block);
    assert(again.is_error === true && again.content === "File /memories/a.md already exists", JSON.stringify(again));
    await store.close();
  });

  await test("a project that is no name is the caller's error, not a refusal for the model", async () => {
    const store = await Mneme.open({ root: join(scratch, "caller") });
    const tool = new MnemeMemoryTool(store, "../elsewhere");
    const error = await tool.view({ command: "view", path: "/memories" }).then(() => null, (e) => e);
    assert(error?.kind === "invalid-project", String(error));
    await store.close();
  });
} finally {
  finish("Anthropic SDK memory tool");
}
