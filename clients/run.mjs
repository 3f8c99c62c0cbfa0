// Sessions Mneme writes and compacts, resumed by the real clients: Claude Code 2.1.330
// and pi 0.73.1 (pinned in package.json), each against a mock model API on 127.0.0.1.
// A client must send the model exactly the conversation Mneme's `resume` gives, and
// Mneme must resume what the client appended. Run by `cargo xtask test` after the Rust
// tests have built target/release/mneme.
import { execFile, execFileSync, spawn, spawnSync } from "node:child_process";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { finish, test } from "../tests/js/runner.mjs";
import { REPLY, startMockApi } from "./mock-api.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const MNEME = process.env.MNEME ?? join(HERE, "../target/release/mneme");
const CLAUDE = join(HERE, "node_modules/.bin/claude");
const PI = join(HERE, "node_modules/.bin/pi");
for (const [what, path] of [["mneme", MNEME], ["claude", CLAUDE], ["pi", PI]]) {
  if (!existsSync(path)) {
    console.error(`error: no ${what} at ${path} (cargo xtask test builds mneme and installs the clients with npm ci --prefix clients)`);
    process.exit(1);
  }
}

function assertEqual(actual, expected, what) {
  const [a, e] = [JSON.stringify(actual), JSON.stringify(expected)];
  if (a !== e) throw new Error(`${what}\n     expected: ${e}\n     actual:   ${a}`);
}

/**
 * Runs a client without blocking this process, which also serves the mock API it
 * talks to; resolves with its stdout.
 */
async function client(program, args, options) {
  const child = promisify(execFile)(program, args, { ...options, encoding: "utf8", timeout: 120_000 });
  child.child.stdin?.end();
  return (await child).stdout;
}

/** This shell's environment without Mneme's own settings (MNEME_REDACT, a summariser), which would change what `mneme` writes. */
const MNEME_ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("MNEME_")));
const mneme = (...args) => execFileSync(MNEME, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 28, env: MNEME_ENV });

/** Mneme's resume of a session: [role, text] for each message, from its content blocks as a model gets them. */
function resumed(root, id) {
  const { messages } = JSON.parse(mneme("--root", root, "resume", id, "--json"));
  return messages.map((m) => [m.role, m.content.filter((b) => b.type === "text").map((b) => b.text.trimEnd()).join("\n")]);
}

/**
 * The conversation a client sent the model, as [role, text] turns: the text blocks
 * the client injects itself (system reminders, environment) and system-role entries
 * left out, consecutive turns of one role merged as the API reads them.
 */
function sent(request) {
  const turns = [];
  for (const message of request.messages) {
    if (message.role === "system") continue;
    const blocks = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    // Trailing whitespace aside: Claude Code sends a compaction summary with one more
    // newline at its end than the transcript holds.
    const texts = blocks.filter((b) => b.type === "text" && !b.text.startsWith("<system-reminder>")).map((b) => b.text.trimEnd());
    const last = turns[turns.length - 1];
    if (last && last[0] === message.role) last[1].push(...texts);
    else turns.push([message.role, texts]);
  }
  return turns.map(([role, texts]) => [role, texts.join("\n")]);
}

/** Mneme's resumed messages as the API reads them: consecutive turns of one role merged. */
function merged(messages) {
  const turns = [];
  for (const [role, text] of messages) {
    const last = turns[turns.length - 1];
    if (last && last[0] === role) last[1] += `\n${text}`;
    else turns.push([role, text]);
  }
  return turns;
}

/** JSON with object keys sorted, for comparing what two programs wrote. */
function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical(value[k])]));
  return value;
}

/**
 * Messages as the API reads them, blocks in full: string contents as one text block,
 * a result's text content as a string, the client's own injections (system
 * reminders) and cache markers left out, consecutive messages of one role merged.
 */
function normalized(messages) {
  const out = [];
  for (const message of messages) {
    if (message.role === "system") continue;
    const blocks = (typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content)
      .filter((b) => !(b.type === "text" && b.text.startsWith("<system-reminder>")))
      .map(({ cache_control, ...b }) => {
        if (b.type === "text") return { ...b, text: b.text.trimEnd() };
        // pi spells out `is_error: false`; the API reads its absence the same.
        if (b.type === "tool_result" && b.is_error === false) delete b.is_error;
        if (b.type === "tool_result" && Array.isArray(b.content) && b.content.every((c) => c.type === "text")) {
          return { ...b, content: b.content.map((c) => c.text).join("\n") };
        }
        return b;
      });
    const last = out[out.length - 1];
    if (last && last.role === message.role) last.content.push(...blocks);
    else out.push({ role: message.role, content: blocks });
  }
  return canonical(out);
}

/** Normalized messages as their blocks' kinds, call ids, result ids and texts, in order. */
function calls(messages) {
  return messages.map(({ role, content }) => [role, content.map((b) => [b.type, b.id ?? b.tool_use_id ?? b.text ?? ""])]);
}

/**
 * `messages` without what Claude Code adds of its own when it sends a session: the
 * "Tool loaded." text after a tool search's result (a `tool_reference` list), as its
 * system reminders; and the "No response requested." reply before the new prompt,
 * which Claude Code puts or not after a conversation ending on the user's side (results,
 * a local command's output) by rules of its own resume state (how the last turn ended,
 * the session's age). Mneme puts it after the synthetic results of an interrupted call
 * (as Claude Code does resuming the agent turns Mneme wrote: that test checks it
 * exactly); here it is taken out of both sides.
 */
/** A user prompt, as the clients send one. */
const prompt = (text) => ({ role: "user", content: [{ type: "text", text }] });

/** Claude Code sent `context` then the prompt `text`, apart from what it adds of its own. */
function assertClaudeCodeSent(request, context, text, what = "what Claude Code sent is Mneme's provider context plus the new prompt") {
  assertEqual(normalized(withoutClaudeCodesOwn(request.messages)), normalized(withoutClaudeCodesOwn([...context, prompt(text)])), what);
}

function withoutClaudeCodesOwn(messages) {
  const references = (b) => b?.type === "tool_result" && Array.isArray(b.content) && b.content.some((c) => c.type === "tool_reference");
  const noResponse = (m) => m.role === "assistant" && m.content.length === 1 && m.content[0].type === "text" && m.content[0].text === "No response requested.";
  return messages
    .filter((message, i) => !(i === messages.length - 2 && noResponse(message)))
    .map((message) => {
      if (!Array.isArray(message.content)) return message;
      const content = message.content.filter((b, i) => !(b.type === "text" && b.text === "Tool loaded." && message.content.slice(0, i).some(references)));
      return { ...message, content };
    });
}

/**
 * `messages` with the calls of Claude Code's own tools as Claude Code 2.1.330 sends
 * them on resume: it renamed `Task` to `Agent`. Its tools are its own; an agent on
 * Mneme sends the calls its tools were given.
 */
function withClaudeCodesToolsRenamed(messages) {
  const renamed = (block) => {
    if (block.type !== "tool_use") return block;
    if (block.name === "Task") return { ...block, name: "Agent" };
    return block;
  };
  return messages.map((message) => (Array.isArray(message.content) ? { ...message, content: message.content.map(renamed) } : message));
}

/**
 * The model every test resumes with unless it says another. A client's own default
 * changes with its releases and with the date (Claude Code 2.1.330 asks for
 * claude-opus-5-5, skips models whose retirement date has passed, and leaves out
 * another model's thinking): a test that left the model to the client would pass or
 * fail by the day it ran. A model named with --model is sent as named, retired or not.
 * Only one test leaves it to Claude Code, on purpose.
 */
const MODEL = "claude-sonnet-4-5";

/** Mneme's provider-ready context of a session for `model`, the model it goes to (always named: see MODEL). */
const providerContext = (root, id, model) => {
  if (typeof model !== "string") throw new Error("providerContext needs the model the context goes to");
  return JSON.parse(mneme("--root", root, "context", id, "--format", "anthropic", "--model", model)).messages;
};

/**
 * Whether two model names are one model, as Claude Code reads them (written here apart
 * from Mneme's rule, to check it): a context tag (`[1m]`), a date (`-20250929`), a
 * version's dot (`4.5`) or the case does not make another.
 */
const sameFamily = (a, b) => {
  const family = (name) => name.replace(/\[[^\]]*\]$/, "").replace(/[-@]\d{8}$/, "").replaceAll(".", "-").toLowerCase();
  return family(a) === family(b);
};

/** Whether messages hold a thinking block. */
const thinks = (messages) => messages.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === "thinking" || b.type === "redacted_thinking"));

/** An agent turn with every block a tool-using reply has: thinking, text, two calls, their results (one failed). */
const TOOL_TURN = [
  { role: "user", content: "what is in this folder?" },
  {
    role: "assistant", id: "msg_turn_1", model: MODEL, stop_reason: "tool_use",
    usage: { input_tokens: 120, output_tokens: 40, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 },
    content: [
      { type: "thinking", thinking: "I should list the files.", signature: "c2lnbmF0dXJl" },
      { type: "text", text: "Let me look." },
      { type: "tool_use", id: "toolu_01", name: "Bash", input: { command: "ls" } },
      { type: "tool_use", id: "toolu_02", name: "Bash", input: { command: "cat missing.txt" } },
    ],
  },
  {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "toolu_01", content: "notes.md" },
      { type: "tool_result", tool_use_id: "toolu_02", content: "cat: missing.txt: No such file or directory", is_error: true },
    ],
  },
  { role: "assistant", id: "msg_turn_2", model: MODEL, stop_reason: "end_turn", content: [{ type: "text", text: "There is notes.md." }] },
];

/**
 * A client's environment, made from nothing but what it needs to run: a variable of
 * the shell running the tests (ANTHROPIC_MODEL, CLAUDE_CONFIG_DIR, a cloud provider's
 * switch, PI_CODING_AGENT_DIR) would change the model, the store or the endpoint. The
 * time zone and the locale are fixed: Claude Code reads its dates in local time.
 */
const clientEnv = (home) => ({ PATH: process.env.PATH, HOME: home, TZ: "UTC", LANG: "C.UTF-8", LC_ALL: "C.UTF-8" });

/** Passed as `resume`'s model: the client's own default, on purpose. */
const CLIENT_DEFAULT = Symbol("the client's default model");

const scratch = mkdtempSync(join(tmpdir(), "mneme-clients-"));
const api = await startMockApi();

/**
 * Claude Code with a scratch home (its store is `root`) and working folder;
 * `resume(id, prompt, model)` runs `claude -p <prompt> --resume <id> --model <model>`
 * and returns the request that carried the prompt. `model` is CLIENT_DEFAULT only
 * where a test means Claude Code's default, whatever it is that day.
 */
function claudeCode(name, extraEnv = {}) {
  const home = join(scratch, `${name}-home`);
  const work = join(scratch, `${name}-work`);
  mkdirSync(work, { recursive: true });
  const env = {
    ...clientEnv(home), ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: "dummy", DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1", ...extraEnv,
  };
  const resume = async (id, prompt, model) => {
    if (model !== CLIENT_DEFAULT && typeof model !== "string") throw new Error("resume needs the model to resume with (or CLIENT_DEFAULT)");
    const options = model === CLIENT_DEFAULT ? [] : ["--model", model];
    api.requests.length = 0;
    const out = JSON.parse(await client(CLAUDE, ["-p", prompt, "--resume", id, "--output-format", "json", ...options], { cwd: work, env }));
    assertEqual([out.is_error, out.result], [false, REPLY], "Claude Code answered from the mock API");
    const request = api.requests.find((r) => JSON.stringify(r.messages).includes(prompt));
    if (!request) throw new Error(`Claude Code sent no request with the prompt (${api.requests.length} requests)`);
    return request;
  };
  /** Claude Code itself, run with `args` (`-p`, its session options), answering as JSON. */
  const run = async (...args) => JSON.parse(await client(CLAUDE, [...args, "--output-format", "json"], { cwd: work, env }));
  return { root: join(home, ".claude"), work, env, resume, run };
}

/**
 * pi with a scratch home and a session it started (one question) in the project folder
 * of a Mneme store `root`; `resume(file, prompt)` continues a session file of that
 * folder with a prompt and returns pi's one request.
 */
async function piSession(name) {
  const home = join(scratch, `${name}-home`);
  const work = join(scratch, `${name}-work`);
  const root = join(scratch, `${name}-store`);
  const sessions = join(root, "projects", "p");
  mkdirSync(join(home, ".pi/agent"), { recursive: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(join(home, ".pi/agent/models.json"), JSON.stringify({ providers: { anthropic: { baseUrl: api.url } } }));
  const env = { ...clientEnv(home), ANTHROPIC_API_KEY: "dummy", PI_OFFLINE: "1" };
  const pi = (...args) => client(PI, ["--provider", "anthropic", "--model", MODEL, "--no-tools", "-nc", ...args], { cwd: work, env });
  await pi("--session-dir", sessions, "-p", "first question");
  const [file] = readdirSync(sessions);
  const resume = async (file, prompt) => {
    api.requests.length = 0;
    await pi("--session", join(sessions, file), "-p", prompt);
    assertEqual(api.requests.length, 1, "pi made one request");
    return api.requests[0];
  };
  return { root, work, env, file, id: file.replace(/\.jsonl$/, ""), resume };
}
/** `mneme <args> --http 0`: the URL it serves at, the headers it says a request needs, and `stop()`, which sends SIGINT and gives its exit status. */
async function mcpOverHttp(args) {
  const server = spawn(MNEME, [...args, "--http", "0"], { env: MNEME_ENV, stdio: ["ignore", "ignore", "pipe"] });
  const exited = new Promise((resolve) => server.on("exit", (code) => resolve(code)));
  const { url, headers } = await new Promise((resolve, reject) => {
    let said = "";
    server.stderr.on("data", (chunk) => {
      said += chunk;
      const url = said.match(/http:\/\/127\.0\.0\.1:\d+\/mcp/);
      const token = said.match(/`Authorization: (Bearer \S+)`/);
      if (url && token) resolve({ url: url[0], headers: { Authorization: token[1] } });
    });
    exited.then((code) => reject(new Error(`mneme mcp --http exited (${code}) before serving: ${said}`)));
  });
  return { url, headers, stop: () => (server.kill("SIGINT"), exited) };
}

try {
  // Claude Code loads `mneme mcp` from an --mcp-config file; the mock model calls its
  // tools as a model would (writes a memory with the memory tool, recalls it, searches
  // the sessions), and Claude Code must send the model Mneme's answers in its next
  // requests.
  for (const transport of ["stdio", "http"]) await test(`Claude Code calls mneme mcp's tools over ${transport}: the memory written, the memory recalled and the session found reach the model in Claude Code's next requests`, async () => {
    // Tool search (on by default) sends MCP tools only after the model asks for them.
    const { run } = claudeCode(`claude-mcp-${transport}`, { ENABLE_TOOL_SEARCH: "false" });
    const store = join(scratch, `mcp-store-${transport}`);
    mneme("--root", store, "memory", "--project", "-p", "add", "--name", "db choice", "--type", "project", "--description", "Billing runs on PostgreSQL", "--body", "We chose PostgreSQL for the billing ledger.");
    const old = "5a7e0c2d-9b14-4f6a-8c3e-2d1f0b9a8e7c";
    mneme("--root", store, "append", old, "--role", "user", "--cwd", "/old", "--text", "the ledger needs transactions");
    const config = join(scratch, `mcp-${transport}.json`);
    const args = ["--root", store, "mcp", "--project", "-p"];
    const server = transport === "http" ? await mcpOverHttp(args) : null;
    const entry = server ? { type: "http", url: server.url, headers: server.headers } : { command: MNEME, args, env: MNEME_ENV };
    writeFileSync(config, JSON.stringify({ mcpServers: { mneme: entry } }));
    const calls = [
      { type: "tool_use", id: "toolu_mcp_memory", name: "mcp__mneme__memory", input: { command: "create", path: "/memories/deploy_day.md", file_text: "Deploys to billing happen on Tuesdays.\n" } },
      { type: "tool_use", id: "toolu_mcp_recall", name: "mcp__mneme__recall", input: { query: "which database for billing" } },
      { type: "tool_use", id: "toolu_mcp_search", name: "mcp__mneme__search_sessions", input: { query: "ledger transactions" } },
    ];
    const resultOf = (request, id) => request.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).find((b) => b.type === "tool_result" && b.tool_use_id === id);
    // Mneme's answer is the result's first block (Claude Code may add reminders after it).
    const text = (result) => (typeof result.content === "string" ? result.content : result.content[0].text);
    api.script = (request) => {
      if (!request.tools?.some((tool) => tool.name === "mcp__mneme__recall")) return null;
      const next = calls.find((call) => !resultOf(request, call.id));
      return next ? { content: [next], stop_reason: "tool_use" } : null;
    };
    try {
      api.requests.length = 0;
      const out = await run("-p", "what database do we use?", "--mcp-config", config, "--strict-mcp-config", "--model", MODEL, "--allowedTools", "mcp__mneme__memory,mcp__mneme__recall,mcp__mneme__search_sessions");
      assertEqual([out.is_error, out.result], [false, REPLY], "Claude Code finished with the mock's answer");
      const last = api.requests.findLast((r) => calls.every((call) => resultOf(r, call.id)));
      if (!last) {
        const offered = api.requests.map((r) => r.tools?.map((t) => t.name).filter((name) => name.startsWith("mcp__")));
        throw new Error(`Claude Code sent no request with every tool's result (${api.requests.length} requests; MCP tools offered in each: ${JSON.stringify(offered)})`);
      }
      assertEqual(text(resultOf(last, "toolu_mcp_memory")).trimEnd(), "File created successfully at: /memories/deploy_day.md", "the model got the memory tool's answer");
      const written = JSON.parse(mneme("--root", store, "memory", "--project", "-p", "list", "--json"));
      assertEqual(written.map((m) => [m.file, m.description]).sort(), [["db_choice", "Billing runs on PostgreSQL"], ["deploy_day", "Deploys to billing happen on Tuesdays."]], "the memory the model wrote is one mneme memory list shows");
      const recalled = JSON.parse(text(resultOf(last, "toolu_mcp_recall")));
      assertEqual([recalled[0].file, recalled[0].body.trim()], ["db_choice", "We chose PostgreSQL for the billing ledger."], "the model got the memory Mneme recalled");
      assertEqual(recalled.some((hit) => hit.file === "deploy_day"), true, "recall finds the memory the model wrote too");
      const found = JSON.parse(text(resultOf(last, "toolu_mcp_search")));
      assertEqual([found[0].id, found[0].text], [old, "the ledger needs transactions"], "the model got the message Mneme found");
      assertEqual(found[0].resume, `cd /old && CLAUDE_CONFIG_DIR=${store} claude --resume ${old}`, "and the command that resumes its session");
    } finally {
      api.script = null;
      if (server) assertEqual(await server.stop(), 0, "the HTTP server stopped by SIGINT exits with status 0");
    }
  });

  // `mneme search` gives each hit the command that goes back to its session; run as
  // printed (from elsewhere, the clients found on PATH), it continues that session.
  await test("a search hit's resume command continues its session in Claude Code and in pi", async () => {
    const onPath = (env, program) => ({ ...env, PATH: `${dirname(program)}:${env.PATH}` });
    const claude = claudeCode("claude-found");
    const id = "3d0b8c1e-7a2f-4c55-8e9d-61f0a2b4c7d3";
    mneme("--root", claude.root, "append", id, "--role", "user", "--text", "the ledger needs transactions", "--cwd", claude.work);
    mneme("--root", claude.root, "append", id, "--role", "assistant", "--text", "Use one transaction per posting.", "--cwd", claude.work);
    const [hit] = JSON.parse(mneme("--root", claude.root, "search", "ledger transactions", "--json"));
    assertEqual([hit.id, hit.format, hit.cwd], [id, "claude", claude.work], "the hit names its session's dialect and folder");
    const before = resumed(claude.root, id);
    api.requests.length = 0;
    const out = JSON.parse(await client("sh", ["-c", `${hit.resume} -p 'and the refunds?' --output-format json --model ${MODEL}`], { cwd: scratch, env: onPath(claude.env, CLAUDE) }));
    assertEqual([out.is_error, out.result], [false, REPLY], `Claude Code answered, run as \`${hit.resume}\``);
    const request = api.requests.find((r) => JSON.stringify(r.messages).includes("and the refunds?"));
    assertEqual(sent(request), merged([...before, ["user", "and the refunds?"]]), "Claude Code sent the session found, then the new prompt");

    const pi = await piSession("pi-found");
    const [piHit] = JSON.parse(mneme("--root", pi.root, "search", "first question", "--json"));
    assertEqual([piHit.id, piHit.format, piHit.cwd], [pi.id, "pi", pi.work], "the hit names its session's dialect and folder");
    api.requests.length = 0;
    await client("sh", ["-c", `${piHit.resume} --provider anthropic --model ${MODEL} --no-tools -nc -p 'second question'`], { cwd: scratch, env: onPath(pi.env, PI) });
    assertEqual(api.requests.length, 1, `pi made one request, run as \`${piHit.resume}\``);
    assertEqual(JSON.stringify(api.requests[0].messages).includes("first question"), true, "pi sent the session found");

    // Claude Code opens only UUID ids: a session with another id gets no command.
    mneme("--root", claude.root, "append", "not-a-uuid", "--role", "user", "--text", "the ledger of another session", "--cwd", claude.work);
    const other = JSON.parse(mneme("--root", claude.root, "search", "ledger of another session", "--json")).find((h) => h.id === "not-a-uuid");
    assertEqual([other?.format, "resume" in (other ?? {})], ["claude", false], "found, and no command for a session Claude Code cannot resume");
  });

  await test("Claude Code resumes a session Mneme wrote and compacted with exactly Mneme's context", async () => {
    const { root, work, resume } = claudeCode("claude");
    // Claude Code resumes only sessions whose id is a UUID.
    const id = "6f1c2a9e-4b7d-4e21-9c3a-0d5e8f7a1b2c";
    for (let i = 1; i <= 10; i++) {
      mneme("--root", root, "append", id, "--role", i % 2 ? "user" : "assistant", "--text", `message ${i} about topic ${i}`, "--cwd", work);
    }
    mneme("--root", root, "compact", id, "--keep-messages", "4");
    const before = resumed(root, id);
    assertEqual(before.length, 5, "Mneme resumes with the summary and the 4 kept messages");
    const request = await resume(id, "next question", MODEL);
    assertEqual(sent(request), merged([...before, ["user", "next question"]]), "what Claude Code sent is Mneme's context plus the new prompt");
    // Claude Code chained its prompt to the last kept message: Mneme still resumes from the compaction.
    assertEqual(resumed(root, id), [...before, ["user", "next question"], ["assistant", REPLY]], "Mneme resumes what Claude Code appended");
  });

  await test("pi continues a session Mneme appended to and compacted in pi's dialect with exactly Mneme's context", async () => {
    const { root, file, id, resume } = await piSession("pi");
    for (let i = 1; i <= 8; i++) {
      mneme("--root", root, "append", id, "--role", i % 2 ? "user" : "assistant", "--text", `mneme message ${i}`);
    }
    mneme("--root", root, "compact", id, "--keep-messages", "4");
    const before = resumed(root, id);
    assertEqual(before.length, 5, "Mneme resumes with the summary and the 4 kept messages");
    const request = await resume(file, "next question");
    assertEqual(sent(request), merged([...before, ["user", "next question"]]), "what pi sent is Mneme's context plus the new prompt");
    assertEqual(resumed(root, id), [...before, ["user", "next question"], ["assistant", REPLY]], "Mneme resumes what pi appended");
  });

  const reply = { role: "assistant", content: [{ type: "text", text: REPLY }] };

  await test("Claude Code resumes a session of agent turns Mneme wrote (tool calls, results, a sub-agent, an interrupted call) with exactly Mneme's provider context", async () => {
    const { root, work, resume } = claudeCode("claude-tools");
    const id = "0b7e4c1d-2a3f-4e5d-8c9b-1a2b3c4d5e6f";
    mneme("--root", root, "append", id, "--message", JSON.stringify(TOOL_TURN), "--cwd", work);
    // A turn cut short: the call was recorded, its result never was.
    mneme("--root", root, "append", id, "--cwd", work, "--message", JSON.stringify({
      role: "assistant", id: "msg_turn_3", content: [{ type: "text", text: "Reading it." }, { type: "tool_use", id: "toolu_03", name: "Read", input: { path: "notes.md" } }],
    }));
    // The call started a sub-agent, which Mneme keeps as Claude Code does: its own
    // transcript, linked from the call by a progress entry.
    mneme("--root", root, "append", id, "--cwd", work, "--agent", "a5b6c7d8", "--parent-call", "toolu_03", "--message",
      JSON.stringify([{ role: "user", content: "read notes.md" }, { role: "assistant", content: "It says hello." }]));
    const before = providerContext(root, id, MODEL);
    assertEqual(before.at(-2).content[0].tool_use_id, "toolu_03", "the interrupted call gets a synthetic result");
    assertEqual(thinks(before), true, "the context for the session's own model has its thinking");
    const request = await resume(id, "next question", MODEL);
    assertEqual(request.model, MODEL, "Claude Code sent the model it was told");
    assertEqual(normalized(request.messages), normalized([...before, prompt("next question")]), "what Claude Code sent is Mneme's provider context plus the new prompt");
    assertEqual(normalized(providerContext(root, id, MODEL)), normalized([...before, prompt("next question"), reply]), "Mneme resumes what Claude Code appended");
  });

  // The one test that leaves the model to Claude Code: whatever its default is today, it
  // must send Mneme's provider context for the model it chose, which keeps the session's
  // thinking when that is the model that wrote it and leaves it out for any other.
  await test("Claude Code resumes with its own default model, whatever it is, exactly Mneme's provider context for that model (thinking kept for the same model, left out for another)", async () => {
    const { root, work, resume } = claudeCode("claude-default-model");
    const id = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f";
    mneme("--root", root, "append", id, "--message", JSON.stringify(TOOL_TURN), "--cwd", work);
    const request = await resume(id, "next question", CLIENT_DEFAULT);
    assertEqual(typeof request.model, "string", "Claude Code named the model it sent to");
    // The model is known once Claude Code has sent, and appended its reply: Mneme's
    // context for that model now ends with the prompt and the reply.
    const context = providerContext(root, id, request.model);
    const sameModel = sameFamily(request.model, MODEL);
    assertEqual(thinks(context), sameModel, `Mneme's context for ${request.model} has the thinking of ${MODEL}`);
    assertEqual(thinks(request.messages), sameModel, `what Claude Code sent ${request.model} has the thinking of ${MODEL}`);
    assertEqual(normalized([...request.messages, reply]), normalized(context), `what Claude Code sent ${request.model} is Mneme's provider context for it`);
  });

  // Claude Code's own `/compact` keeps the last reply as a segment relinked after the
  // summary, and writes its command's lines chained to the summary itself: the kept
  // reply stands beside the chain. Claude Code sends it between the summary and the
  // rest; so must Mneme's context.
  await test("Claude Code resumes a session it compacted with its own /compact (a kept segment beside the summary's chain), with exactly Mneme's provider context", async () => {
    const { root, resume, run } = claudeCode("claude-own-compact");
    const id = "2e3f4a5b-6c7d-4e8f-9a0b-1c2d3e4f5a6b";
    await run("-p", "first question", "--session-id", id, "--model", MODEL);
    for (const question of ["second question", "third question"]) await run("-p", question, "--resume", id, "--model", MODEL);
    await run("-p", "/compact", "--resume", id, "--model", MODEL);
    const [project] = readdirSync(join(root, "projects"));
    const lines = readFileSync(join(root, "projects", project, `${id}.jsonl`), "utf8").trim().split("\n").map((line) => JSON.parse(line));
    const boundary = lines.find((line) => line.subtype === "compact_boundary");
    assertEqual(typeof boundary?.compactMetadata?.preservedSegment?.anchorUuid, "string", "Claude Code's /compact kept a segment after its summary");
    const context = providerContext(root, id, MODEL);
    assertEqual(context.some((m) => m.role === "assistant"), true, "Mneme's context holds the reply the compaction kept");
    const request = await resume(id, "next question", MODEL);
    assertClaudeCodeSent(request, context, "next question");
  });

  await test("Claude Code resumes a session Mneme rewound to a compaction's summary: the kept messages follow the summary, with exactly Mneme's provider context", async () => {
    const { root, work, resume } = claudeCode("claude-rewind-summary");
    const id = "4a5b6c7d-8e9f-4a0b-9c1d-2e3f4a5b6c7d";
    for (let i = 1; i <= 6; i++) {
      mneme("--root", root, "append", id, "--role", i % 2 ? "user" : "assistant", "--text", `message ${i} about topic ${i}`, "--cwd", work);
    }
    mneme("--root", root, "compact", id, "--keep-messages", "2");
    const [summary] = JSON.parse(mneme("--root", root, "resume", id, "--json")).messages;
    mneme("--root", root, "append", id, "--parent", summary.uuid, "--role", "user", "--text", "after the summary", "--cwd", work);
    const context = providerContext(root, id, MODEL);
    assertEqual(JSON.stringify(context).includes("message 6 about topic 6"), true, "Mneme's context holds the kept messages");
    const request = await resume(id, "next question", MODEL);
    assertClaudeCodeSent(request, context, "next question");
  });

  await test("pi continues a session where Mneme wrote agent turns in pi's dialect with exactly Mneme's provider context", async () => {
    const { root, file, id, resume } = await piSession("pi-tools");
    mneme("--root", root, "append", id, "--message", JSON.stringify(TOOL_TURN));
    const before = providerContext(root, id, MODEL);
    const request = await resume(file, "next question");
    assertEqual(normalized(request.messages), normalized([...before, prompt("next question")]), "what pi sent is Mneme's provider context plus the new prompt");
    assertEqual(normalized(providerContext(root, id, MODEL)), normalized([...before, prompt("next question"), reply]), "Mneme resumes what pi appended");
  });

  await test("pi continues a session with commands, extension messages and a branch summary, with exactly Mneme's provider context", async () => {
    const { root, file, id, resume } = await piSession("pi-extras");
    // Entries pi's own features write (`!` and `!!` commands, an extension's messages,
    // a return from a branch), chained after the session's last entry.
    const path = join(root, "projects", "p", file);
    const lines = readFileSync(path, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    let parent = lines.at(-1).id;
    const extras = [
      { type: "message", message: { role: "bashExecution", command: "ls", output: "notes.md", exitCode: 1, cancelled: false, truncated: true, fullOutputPath: "/tmp/ls.txt", timestamp: 1 } },
      { type: "message", message: { role: "bashExecution", command: "env", output: "SECRET=1", exitCode: 0, cancelled: false, truncated: false, excludeFromContext: true, timestamp: 2 } },
      { type: "custom_message", customType: "reminder", content: "an extension's note", display: true },
      { type: "message", message: { role: "custom", customType: "reminder", content: [{ type: "text", text: "a custom message" }], display: false, timestamp: 3 } },
      { type: "branch_summary", fromId: "deadbeef", summary: "We tried a rewrite; it broke the build." },
    ].map((entry, i) => {
      const id = `e${String(i).padStart(7, "0")}`;
      const line = { ...entry, id, parentId: parent, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() };
      parent = id;
      return JSON.stringify(line);
    });
    appendFileSync(path, extras.join("\n") + "\n");
    const before = providerContext(root, id, MODEL);
    assertEqual(JSON.stringify(before).includes("SECRET"), false, "a `!!` command stays out of the context");
    const request = await resume(file, "next question");
    assertEqual(normalized(request.messages), normalized([...before, prompt("next question")]), "what pi sent is Mneme's provider context plus the new prompt");
  });

  await test("Claude Code resumes a fork Mneme made from the middle of a session, with exactly Mneme's provider context", async () => {
    const { root, work, resume } = claudeCode("claude-fork");
    const id = "5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f";
    const forkId = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d";
    mneme("--root", root, "append", id, "--message", JSON.stringify(TOOL_TURN), "--cwd", work);
    mneme("--root", root, "append", id, "--role", "user", "--text", "a later question", "--cwd", work);
    const { entries } = JSON.parse(mneme("--root", root, "sessions", "show", id, "--json"));
    const from = entries.find((e) => e.text === "There is notes.md.").uuid;
    mneme("--root", root, "fork", id, "--from", from, "--to", forkId);
    const before = providerContext(root, forkId, MODEL);
    assertEqual(JSON.stringify(before).includes("a later question"), false, "the fork ends at the message it was made from");
    const request = await resume(forkId, "forked question", MODEL);
    assertEqual(normalized(request.messages), normalized([...before, prompt("forked question")]), "what Claude Code sent is the fork's provider context plus the new prompt");
  });

  await test("pi continues a fork Mneme made of a pi session, with exactly Mneme's provider context", async () => {
    const { root, id, resume } = await piSession("pi-fork");
    mneme("--root", root, "append", id, "--message", JSON.stringify(TOOL_TURN));
    mneme("--root", root, "fork", id, "--to", "forked");
    const before = providerContext(root, "forked", MODEL);
    assertEqual(normalized(before), normalized(providerContext(root, id, MODEL)), "the fork resumes as its origin does");
    const request = await resume("forked.jsonl", "forked question");
    assertEqual(normalized(request.messages), normalized([...before, prompt("forked question")]), "what pi sent is the fork's provider context plus the new prompt");
  });

  await test("Claude Code resumes a Codex CLI rollout Mneme imported, with exactly Mneme's provider context", async () => {
    const { root, work, resume } = claudeCode("claude-import");
    const rollout = join(HERE, "../tests/corpus/codex/vibecodingtracker-codex-0.39.jsonl");
    const [{ imported }] = JSON.parse(mneme("--root", root, "import", rollout, "--cwd", work, "--json"));
    const before = providerContext(root, imported.id, MODEL);
    assertEqual(before.flatMap((m) => m.content).filter((b) => b.type === "tool_use").length, 18, "every call of the rollout is in the context");
    const request = await resume(imported.id, "next question", MODEL);
    assertEqual(normalized(request.messages), normalized([...before, prompt("next question")]), "what Claude Code sent is Mneme's provider context plus the new prompt");
  });

  // Sessions the real Claude Code wrote (the corpus, 1.0.24 to 2.1.114), resumed by
  // Claude Code 2.1.330: it must send what Mneme's provider context holds. Each with
  // the model its replies came from, as a user resuming it would, and Mneme's context
  // asked for it (the test after these changes the model). In 03 Claude Code also moves the calls of
  // its team tools (2.1.114's) to the tools it has now (`SendMessage`'s input fields,
  // `tool_reference` names): there the messages are compared as calls, results and
  // texts, in order.
  const CLAUDE_CORPUS = [
    "01-v2.1.39-autocompact/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "03-v2.1.114-attachments/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    "04-v2.1.42-progress/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl",
    "05-v2.1.17-subagents-dir/-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl",
    "07-v2.0.55-flat-agents/-src-deep-manifest/a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl",
    "08-v2.0.42-thinking/-Users-dain-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",
    "09-v2.0.37-coderabbit/-Users-dain-workspace-coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl",
    "12-v1.0.43-image/-Users-dain-workspace-claude-code-log-sample/0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl",
    "13-v1.0.24-summaries/-Users-dain-workspace-claude-code-log-sample/fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl",
  ];
  /**
   * Corpus session `path` in a scratch Claude Code home (`name` names its folders),
   * and `model`, the model its last reply came from.
   */
  const claudeCorpusSession = (path, name) => {
    const { root, work, resume } = claudeCode(name);
    const file = path.split("/").at(-1);
    const project = join(root, "projects", work.replace(/[^a-zA-Z0-9]/g, "-"));
    mkdirSync(project, { recursive: true });
    const text = readFileSync(join(HERE, "../tests/corpus/claude", path), "utf8");
    writeFileSync(join(project, file), text);
    const model = [...text.matchAll(/"model":"(claude-[^"]+)"/g)].at(-1)[1];
    return { root, work, resume, id: file.replace(/\.jsonl$/, ""), model };
  };
  for (const path of CLAUDE_CORPUS) {
    await test(`Claude Code resumes the session it wrote (corpus ${path.split("/")[0]}), with a turn Mneme appended, a fork Mneme made of it, and compacted by Mneme, with exactly Mneme's provider context`, async () => {
      const { root, work, resume, id, model } = claudeCorpusSession(path, `claude-corpus-${path.slice(0, 2)}`);
      const compared = path.startsWith("03") ? (messages) => calls(normalized(messages)) : normalized;
      // Claude Code resumes `session` with `text`: it must send Mneme's context of it.
      const resumesAsMneme = async (session, text, what) => {
        const context = providerContext(root, session, model);
        const request = await resume(session, text, model);
        assertEqual(
          compared(withoutClaudeCodesOwn(request.messages)),
          compared(withoutClaudeCodesOwn([...withClaudeCodesToolsRenamed(context), prompt(text)])),
          `what Claude Code sent ${what} is Mneme's provider context plus the new prompt`,
        );
      };
      await resumesAsMneme(id, "next question", "for the session");
      // A turn Mneme appends to it (a call and its result), resumed too.
      const turn = [
        { role: "assistant", id: "msg_mneme_1", model, content: [{ type: "text", text: "Let me look." }, { type: "tool_use", id: "toolu_mneme_1", name: "Bash", input: { command: "ls" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_mneme_1", content: "notes.md" }] },
        { role: "assistant", id: "msg_mneme_2", model, content: [{ type: "text", text: "There is notes.md." }] },
      ];
      mneme("--root", root, "append", id, "--message", JSON.stringify(turn), "--cwd", work);
      await resumesAsMneme(id, "and then?", "after Mneme's turn");
      // A fork from a reply in the middle of what resume reads, resumed too.
      const replies = JSON.parse(mneme("--root", root, "resume", id, "--json")).messages.filter((m) => m.role === "assistant");
      const from = replies[Math.floor(replies.length / 2)].uuid;
      const [{ session_id: fork }] = JSON.parse(mneme("--root", root, "fork", id, "--from", from, "--json"));
      await resumesAsMneme(fork, "forked question", "for the fork");
      // Compacted by Mneme, keeping its last messages, resumed again.
      mneme("--root", root, "compact", id, "--keep-messages", "6");
      await resumesAsMneme(id, "after the compaction", "after Mneme's compaction");
    });
  }

  // Claude Code cuts a string inside an emoji (a cancelled command, a long tool error)
  // and writes the lone surrogate escape. Older versions sent it back on resume and
  // the API refused every request (anthropics/claude-code#56064); 2.1.330 sends U+FFFD
  // in its place, as Mneme's context does. Strict JSON readers still refuse the line:
  // check finds it, and repair writes it as the `\ufffd` it is read as.
  await test("Claude Code resumes a session holding a lone surrogate escape with exactly Mneme's provider context (U+FFFD in its place), before and after `mneme repair` writes it as \\ufffd", async () => {
    const path = CLAUDE_CORPUS.find((p) => p.startsWith("08"));
    const { root, resume, id, model } = claudeCorpusSession(path, "claude-surrogate");
    const [file] = readdirSync(join(root, "projects")).map((project) => join(root, "projects", project, `${id}.jsonl`));
    const lines = readFileSync(file, "utf8").split("\n");
    const at = lines.findLastIndex((line) => line.includes('"type":"tool_result"'));
    const entry = JSON.parse(lines[at]);
    const result = entry.message.content.find((b) => b.type === "tool_result");
    // JSON.stringify writes the lone half of a cut emoji as its escape, as Claude Code does.
    result.content = [{ type: "text", text: `Cancelled: Bash(ls ${"\u{1F525}".slice(0, 1)}…) errored` }];
    lines[at] = JSON.stringify(entry);
    writeFileSync(file, lines.join("\n"));
    assertEqual(lines[at].includes("\\ud83d…"), true, "the transcript holds a lone surrogate escape");
    const resumesAsMneme = async (text, what) => {
      const context = providerContext(root, id, model);
      assertEqual(JSON.stringify(context).includes("Cancelled: Bash(ls \ufffd…) errored"), true, "Mneme's context has U+FFFD in its place");
      const request = await resume(id, text, model);
      assertEqual(normalized(request.messages), normalized([...context, prompt(text)]), `what Claude Code sent ${what} is Mneme's provider context plus the new prompt`);
    };
    await resumesAsMneme("next question", "with the lone escape in the file");
    const checked = spawnSync(MNEME, ["--root", root, "check", id], { encoding: "utf8", env: MNEME_ENV });
    assertEqual([checked.status, /lone surrogate escape[^:]*: 1\n/.test(checked.stdout)], [3, true], `check finds it: ${checked.stdout}`);
    const repaired = JSON.parse(mneme("--root", root, "repair", id, "--json"));
    assertEqual([repaired.fixed_surrogates, repaired.backups.length], [1, 1], "repair writes it as \\ufffd, after a backup");
    assertEqual(readFileSync(file, "utf8").includes("Cancelled: Bash(ls \\ufffd…) errored"), true, "the file holds the escape of U+FFFD");
    await resumesAsMneme("after the repair", "after the repair");
  });

  // A thinking block's signature is the model's that wrote it, and the API refuses it
  // in a request to another: Claude Code leaves such thinking out (a name with a date,
  // a context tag or a version's dot is the same model), as Mneme's context told the
  // model does.
  await test("Claude Code resumes the sessions with thinking (corpus 01, 08) with another model and with their own under another name: it sends Mneme's provider context for that model", async () => {
    for (const [path, other, renamed] of [
      [CLAUDE_CORPUS[0], "claude-sonnet-4-5", (own) => `${own}[1m]`],
      [CLAUDE_CORPUS[5], "claude-opus-4-5", (own) => own.replace(/-\d{8}$/, "").replace(/(\d)-(\d)$/, "$1.$2")],
    ]) {
      const { root, resume, id, model } = claudeCorpusSession(path, `claude-models-${path.slice(0, 2)}`);
      for (const [sentTo, replayed] of [[other, false], [renamed(model), true]]) {
        const context = providerContext(root, id, sentTo);
        assertEqual(thinks(context), replayed, `${path.slice(0, 2)}: Mneme's context for ${sentTo} has the thinking of ${model}`);
        const prompted = `a question for ${sentTo}`;
        const request = await resume(id, prompted, sentTo);
        assertClaudeCodeSent(request, withClaudeCodesToolsRenamed(context), prompted, `what Claude Code sent ${sentTo} is Mneme's provider context for it plus the new prompt`);
      }
    }
  });

  await test("pi continues the session it wrote (corpus pi/v1: tools, bash runs, model changes, compactions), with a turn Mneme appended, a fork Mneme made of it, and compacted by Mneme, with exactly Mneme's provider context", async () => {
    const home = join(scratch, "pi-corpus-home");
    const work = join(scratch, "pi-corpus-work");
    const root = join(scratch, "pi-corpus-store");
    mkdirSync(join(home, ".pi/agent"), { recursive: true });
    mkdirSync(work, { recursive: true });
    mkdirSync(join(root, "projects/p"), { recursive: true });
    writeFileSync(join(home, ".pi/agent/models.json"), JSON.stringify({ providers: { anthropic: { baseUrl: api.url } } }));
    // pi opens a session only in the folder it was started in: the header names this
    // one. The rest of the file is pi's own (pi migrates it to v3 when it opens it).
    const [header, ...rest] = readFileSync(join(HERE, "../tests/corpus/pi/v1/before-compaction.jsonl"), "utf8").split("\n");
    const file = join(root, "projects/p/before-compaction.jsonl");
    writeFileSync(file, [JSON.stringify({ ...JSON.parse(header), cwd: work }), ...rest].join("\n"));
    const env = { ...clientEnv(home), ANTHROPIC_API_KEY: "dummy", PI_OFFLINE: "1" };
    // pi continues `session` with `text`, with the session's own model unless told
    // another: it must send Mneme's context of it for that model.
    const continuesAsMneme = async (session, text, what, model = "claude-opus-4-5") => {
      const context = providerContext(root, session, model);
      api.requests.length = 0;
      const sessionFile = join(root, "projects/p", `${session}.jsonl`);
      await client(PI, ["--provider", "anthropic", "--model", model, "--no-tools", "-nc", "--session", sessionFile, "-p", text], { cwd: work, env });
      assertEqual(api.requests.length, 1, "pi made one request");
      assertEqual(normalized(api.requests[0].messages), normalized([...context, prompt(text)]), `what pi sent ${what} is Mneme's provider context plus the new prompt`);
      return context;
    };
    const before = await continuesAsMneme("before-compaction", "next question", "for the session");
    assertEqual(before.length, 425, "Mneme's context is the session's from its last compaction on");
    assertEqual(thinks(before), true, "the session's replies have their thinking");
    // With another model, pi sends the thinking of claude-opus-4-5's replies as text.
    const other = await continuesAsMneme("before-compaction", "a question for another model", "to another model", "claude-sonnet-4-5");
    assertEqual(thinks(other), false, "Mneme's context for another model has no thinking block");
    // A turn Mneme appends in pi's dialect (a call and its result), continued too.
    const turn = [
      { role: "assistant", model: "claude-opus-4-5", content: [{ type: "text", text: "Let me look." }, { type: "tool_use", id: "toolu_mneme_1", name: "bash", input: { command: "ls" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_mneme_1", content: "notes.md" }] },
      { role: "assistant", model: "claude-opus-4-5", content: [{ type: "text", text: "There is notes.md." }] },
    ];
    mneme("--root", root, "append", "before-compaction", "--message", JSON.stringify(turn), "--cwd", work);
    await continuesAsMneme("before-compaction", "and then?", "after Mneme's turn");
    // pi migrated the file to v3 (ids on every entry): a fork Mneme makes from a reply
    // in the middle, then the session compacted by Mneme, each continued by pi.
    const replies = JSON.parse(mneme("--root", root, "resume", "before-compaction", "--json")).messages.filter((m) => m.role === "assistant");
    const from = replies[Math.floor(replies.length / 2)].uuid;
    mneme("--root", root, "fork", "before-compaction", "--from", from, "--to", "forked");
    await continuesAsMneme("forked", "forked question", "for the fork");
    mneme("--root", root, "compact", "before-compaction", "--keep-messages", "6");
    await continuesAsMneme("before-compaction", "after the compaction", "after Mneme's compaction");
  });

  await test("pi continues Claude Code's session corpus 03 exported by Mneme to pi (ToolSearch's tool references as markers), with exactly Mneme's provider context", async () => {
    const { root, resume } = await piSession("pi-export");
    const store = join(scratch, "pi-export-claude-store");
    const [{ imported }] = JSON.parse(mneme("--root", store, "import", join(HERE, "../tests/corpus/claude/03-v2.1.114-attachments"), "--json"));
    const exported = join(root, "projects", "p", "exported.jsonl");
    execFileSync(MNEME, ["--root", store, "export", imported.id, "--to", "pi", "--out", exported], { stdio: "ignore", env: MNEME_ENV });
    // pi refuses a session whose working directory is gone; the corpus's is relative.
    mkdirSync(join(scratch, "pi-export-work", "-experiments/worktrees"), { recursive: true });
    const before = providerContext(root, "exported", MODEL);
    assertEqual(JSON.stringify(before).includes('"text":"[tool_reference]"'), true, "a tool reference is its marker");
    const request = await resume("exported.jsonl", "next question");
    assertEqual(normalized(request.messages), normalized([...before, prompt("next question")]), "what pi sent is Mneme's provider context plus the new prompt");
  });

  await test("pi loads a pi v1 session Mneme imported (migrated to v3) to the context pi loads from the original", async () => {
    const { SessionManager } = await import("@mariozechner/pi-coding-agent");
    const root = join(scratch, "pi-import-store");
    const original = join(HERE, "../tests/corpus/pi/v1/before-compaction.jsonl");
    // pi migrates a v1 file it opens by rewriting it: it gets a copy.
    const copy = join(scratch, "pi-v1-copy.jsonl");
    copyFileSync(original, copy);
    const [{ imported }] = JSON.parse(mneme("--root", root, "import", original, "--json"));
    assertEqual([imported.source, imported.format, imported.migrated_from], ["pi", "pi", 1], "the session was migrated in pi's dialect");
    const file = join(root, "projects", imported.project, `${imported.id}.jsonl`);
    const expected = SessionManager.open(copy).buildSessionContext().messages;
    const actual = SessionManager.open(file).buildSessionContext().messages;
    assertEqual(actual.length, expected.length, "as many messages");
    // The migration writes each entry's keys in serde's order; values are pi's own.
    assertEqual(canonical(actual), canonical(expected), "pi loads the imported session as it loads the original");
  });
} finally {
  api.close();
  rmSync(scratch, { recursive: true, force: true });
}

finish("real-client");
