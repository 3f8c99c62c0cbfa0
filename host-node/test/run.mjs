// The Node host's tests: the conformance vectors through the jco-transpiled component
// (outcomes compared with the native host's), the core's storage contract on FsStorage,
// errors worded by the core, and a Node process and `mneme` CLI processes writing one
// session at once through the same locks.
//
// Run by `cargo xtask test` after `cargo test` (which writes the native outcomes and
// builds target/release/mneme) and the web build (whose module runs the contract).
import { spawn } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { differences, runVectors } from "../../tests/js/conformance.js";
import { quickstart } from "../../tests/js/quickstart.mjs";
import { assert, finish, test } from "../../tests/js/runner.mjs";
import { FsStorage, Mneme, MnemeError } from "../js/mneme.js";
import { StorageFailure } from "../js/storage.js";
import { PgStorage, redact } from "../js/postgres.js";
import { PostgresCluster } from "../../tests/js/postgres.mjs";

/** Resolves when `promise` rejects with a MnemeError of `kind` whose message says `words`. */
async function refused(promise, kind, words) {
  try {
    await promise;
  } catch (error) {
    assert(error instanceof MnemeError, `expected a MnemeError, got ${error}`);
    assert(error.kind === kind, `expected ${kind}, got ${error.kind}: ${error.message}`);
    assert(error.message.includes(words), `the message "${error.message}" does not say "${words}"`);
    return;
  }
  throw new Error(`expected ${kind}, but the call succeeded`);
}

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TARGET = process.env.CARGO_TARGET_DIR ?? join(ROOT, "target");
const NATIVE = process.env.MNEME_NATIVE_OUTCOMES ?? join(TARGET, "tmp/conformance-native.json");
const MNEME = process.env.MNEME_BIN ?? join(TARGET, "release/mneme");
const scratch = mkdtempSync(join(tmpdir(), "mneme-node-"));

/** Runs a process to its end; resolves with its exit code, stdout and stderr. */
function run(program, args, { onOutput, cwd, input } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"], cwd });
    if (input !== undefined) child.stdin.end(input);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
      onOutput?.(stdout);
    });
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

try {
  await test("the README's quickstart runs as written", async () => {
    const folder = join(scratch, "quickstart");
    // The package as `npm install` would place it (tests/packages.mjs installs the real tarball).
    mkdirSync(join(folder, "node_modules/@mneme"), { recursive: true });
    symlinkSync(join(ROOT, "host-node"), join(folder, "node_modules/@mneme/node"));
    const { code, stdout, stderr } = await run(process.execPath, ["--input-type=module"], { cwd: folder, input: quickstart(join(ROOT, "host-node/README.md"), "js") });
    assert(code === 0, `the quickstart failed (${code}): ${stderr}`);
    assert(stdout.includes("user Releases go to staging on Fridays.") && stdout.includes("assistant Noted (1 messages read)."), stdout);
    const [project] = readdirSync(join(folder, "data/projects"));
    assert(readdirSync(join(folder, "data/projects", project)).filter((f) => f.endsWith(".jsonl")).length === 1, "one session in ./data");
  });

  await test("conformance vectors through the jco-transpiled component on node:fs", async () => {
    const { results, failures } = await runVectors({
      Mneme,
      open: (name, limits) => Mneme.open({ root: join(scratch, name), ...limits }),
      destroy: async (name) => rmSync(join(scratch, name), { recursive: true, force: true }),
      read: async (file) => JSON.parse(readFileSync(join(ROOT, "tests/vectors", file), "utf8")),
    });
    assert(failures.length === 0, failures.join("\n"));
    assert(existsSync(NATIVE), `no native outcomes at ${NATIVE}: run the Rust tests first (cargo xtask test does)`);
    const differ = differences(results, JSON.parse(readFileSync(NATIVE, "utf8")), "Node");
    assert(differ.length === 0, differ.join("\n"));
  });

  /** The core's storage contract (mneme_core::storage::contract) on two handles `open` makes, through the browser build's module, which drives any JavaScript storage with promises. */
  async function contractHolds(open) {
    const web = await import("../../web/pkg/mneme_web.js");
    web.initSync({ module: readFileSync(join(ROOT, "web/pkg/mneme_web_bg.wasm")) });
    const handle = () => {
      const storage = open();
      const wrap = (op) => async (...args) => {
        try {
          const result = storage[op](...args);
          if (typeof result === "bigint") return Number(result);
          return Array.isArray(result) ? result.map(({ key, size }) => ({ key, size: Number(size) })) : result;
        } catch (error) {
          if (!(error instanceof StorageFailure)) throw error;
          const detail = typeof error.val === "object" ? error.val : { key: error.val };
          throw { kind: error.tag, key: detail.key, message: detail.reason ?? detail.message ?? error.tag };
        }
      };
      return Object.fromEntries(["list", "read", "append", "replace", "truncate", "remove", "rename", "lock", "unlock"].map((op) => [op, wrap(op)]));
    };
    const failures = JSON.parse(await web.storageContract(handle(), handle()));
    assert(failures.length === 0, `the contract broke:\n${failures.join("\n")}`);
  }

  await test("FsStorage keeps the core's storage contract (two handles on one folder)", async () => {
    await contractHolds(() => new FsStorage(join(scratch, "contract"), { lockTimeoutMs: 50 }));
  });

  await test("PgStorage keeps the core's storage contract, a Node process and the `mneme` CLI share its store, a lost server is told (a throwaway PostgreSQL cluster)", async () => {
    const cluster = new PostgresCluster();
    const opened = [];
    try {
      await contractHolds(() => {
        const storage = new PgStorage(cluster.url, { schema: "contract", lockTimeoutMs: 50 });
        opened.push(storage);
        return storage;
      });
      const store = await Mneme.open({ storage: new PgStorage(cluster.url) });
      await store.append("shared", { role: "user", text: "written by Node", cwd: "/work/app" });
      const cli = await run(MNEME, ["--store", cluster.url, "append", "shared", "--role", "assistant", "--text", "written by the CLI"]);
      assert(cli.code === 0, cli.stderr);
      const texts = (await store.context("shared")).messages.map((m) => m.text);
      assert(JSON.stringify(texts) === JSON.stringify(["written by Node", "written by the CLI"]), JSON.stringify(texts));
      await store.close();
      for (const [url, shown] of [
        ["postgresql://me:secret@db/x", "postgresql://me:***@db/x"],
        ["postgresql://me@db/x?sslmode=require&password=secret", "postgresql://me@db/x?sslmode=require&password=***"],
        ["host=/tmp user=me password=secret", "host=/tmp user=me password=***"],
      ]) {
        assert(redact(url) === shown, redact(url));
      }
      let refused;
      try {
        new PgStorage(cluster.url, { schema: "No-Such" });
      } catch (error) {
        refused = error;
      }
      assert(refused instanceof TypeError && refused.message.includes("lowercase"), String(refused));
      refused = undefined;
      try {
        new PgStorage(`host=${cluster.dir}/nowhere user=postgres password=hunter2 dbname=postgres`);
      } catch (error) {
        refused = error;
      }
      assert(refused?.message.startsWith("cannot open the store in host=") && !refused.message.includes("hunter2"), String(refused));
      for (const [url, words] of [
        [`${cluster.url} sslmode=prefer`, "sslmode=prefer is not one this storage takes"],
        [`${cluster.url} target_session_attrs=any`, "`target_session_attrs` is not one this storage takes"],
        [`${cluster.url} SSLMODE=require`, "`SSLMODE` is not one this storage takes"],
        [`${cluster.url} sslmode require`, `cannot be read from its character ${cluster.url.length + 1} on`],
        [`${cluster.url} password='se/cret`, `cannot be read from its character ${cluster.url.length + 1} on`],
        [`${cluster.url} connect_timeout=soon`, "connect_timeout=soon is not a whole number of seconds"],
        [`${cluster.url} sslmode=verify-ca`, "verify-ca requires specifying a CA with sslrootcert"],
        ["postgresql://me:se%2Fcret@nowhere.invalid/x?sslmode=allow", "sslmode=allow is not one this storage takes"],
        ["postgresql://me:se/cret@nowhere.invalid/x", "no valid URL"],
      ]) {
        refused = undefined;
        try {
          new PgStorage(url);
        } catch (error) {
          refused = error;
        }
        assert(refused?.message.includes(words) && !/se(\/|%2F)cret/.test(refused.message), String(refused));
      }
      for (const [url, shown] of [
        ["postgresql://me:p@ss@db/x", "postgresql://me:***@db/x"],
        ["postgresql://me:ab/cd@db/x", "postgresql://me:***@db/x"],
        ["postgresql://me:pw@[::1]:5432/x", "postgresql://me:***@[::1]:5432/x"],
        ["host=db password = hunter2", "host=db password=***"],
        ["password='my secret' host=db", "password=*** host=db"],
        ["password=pa\\ ss host=db", "password=*** host=db"],
      ]) {
        assert(redact(url) === shown, `${url}: ${redact(url)}`);
      }
      // A quoted value with a space and an escaped quote is read as libpq reads it.
      const quoted = new PgStorage(String.raw`host='${cluster.dir}' user=postgres dbname='post\gres' application_name='it\'s mneme'`);
      opened.push(quoted);
      assert(Array.isArray(quoted.list("")), "a quoted connection string opens the store");
      // A lock another connection holds is refused after the lock timeout, and the
      // locks this connection holds stay held.
      const [one, two] = [new PgStorage(cluster.url, { schema: "locks", lockTimeoutMs: 50 }), new PgStorage(cluster.url, { schema: "locks", lockTimeoutMs: 50 })];
      opened.push(one, two);
      one.lock("a");
      two.lock("b");
      const busy = (() => {
        try {
          two.lock("a");
        } catch (error) {
          return error;
        }
      })();
      assert(busy instanceof StorageFailure && busy.tag === "locked", JSON.stringify(busy));
      two.list("");
      two.unlock("b");
      one.lock("b");
      one.unlock("a");
      one.unlock("b");
      // The server goes away under a held lock: calls fail (never hang) and say the
      // lock was lost, until it is given back; then they fail to connect.
      const held = new PgStorage(cluster.url, { schema: "held" });
      opened.push(held);
      held.lock("projects/p/s.jsonl");
      cluster.run("pg_ctl", "-D", cluster.data, "-m", "immediate", "-w", "stop");
      const failed = (call) => {
        try {
          call();
        } catch (error) {
          return error;
        }
        throw new Error("a call on a stopped server succeeded");
      };
      const first = failed(() => held.list(""));
      assert(first instanceof StorageFailure && first.tag === "io", JSON.stringify(first));
      const next = failed(() => held.list(""));
      assert(next.tag === "io" && next.val.message.includes("lost while holding the lock `projects/p/s.jsonl`"), JSON.stringify(next));
      held.unlock("projects/p/s.jsonl");
      const after = failed(() => held.list(""));
      assert(after.tag === "io" && after.val.message.startsWith("PostgreSQL:") && !after.val.message.includes("lost while"), JSON.stringify(after));
    } finally {
      for (const storage of opened) storage.close();
      cluster.close();
    }
  });

  await test("a link is followed only inside the store: one leading out or nowhere is not listed, read or written through", async () => {
    const base = join(scratch, "links");
    const [outside, disk, root] = ["outside", "disk", "store"].map((name) => join(base, name));
    for (const folder of [join(outside, "p/memory"), join(disk, "p/memory"), join(root, "memory")]) mkdirSync(folder, { recursive: true });
    writeFileSync(join(outside, "secret.md"), "key\n");
    writeFileSync(join(outside, "p/memory/x.md"), "elsewhere\n");
    writeFileSync(join(disk, "p/memory/real.md"), "on the other disk\n");
    const storage = new FsStorage(root);
    storage.replace("memory/kept.md", new TextEncoder().encode("kept\n"), undefined);
    for (const [link, target] of [
      ["store/projects", disk],
      ["store/memory/alias.md", "kept.md"],
      ["disk/p/memory/alias.md", "real.md"],
      ["store/memory/out.md", join(outside, "secret.md")],
      ["disk/p/memory/out.md", join(outside, "secret.md")],
      ["store/memory/folder", outside],
      ["disk/q", join(outside, "p")],
      ["store/memory/dangling.md", "nothing.md"],
      ["store/memory/loop.md", "loop.md"],
    ]) {
      symlinkSync(target, join(base, link));
    }
    const keys = (prefix) => JSON.stringify(storage.list(prefix).map(({ key }) => key));
    assert(keys("memory/") === JSON.stringify(["memory/alias.md", "memory/kept.md"]), keys("memory/"));
    assert(keys("projects/") === JSON.stringify(["projects/p/memory/alias.md", "projects/p/memory/real.md"]), keys("projects/"));
    assert(keys("projects/q/memory/") === "[]" && keys("memory/folder/") === "[]", "a folder leading out lists nothing");
    const text = (bytes) => new TextDecoder().decode(bytes);
    assert(text(storage.read("memory/alias.md", 0n)) === "kept\n" && text(storage.read("projects/p/memory/alias.md", 0n)) === "on the other disk\n", "links inside are read");
    const bytes = new TextEncoder().encode("more\n");
    for (const [key, why] of [
      ["memory/out.md", "leads outside the store"],
      ["projects/p/memory/out.md", "leads outside the store"],
      ["memory/folder/secret.md", "leads outside the store"],
      ["projects/q/memory/x.md", "leads outside the store"],
      ["memory/folder/new.md", "leads outside the store"],
      ["memory/dangling.md", "leads nowhere"],
      ["memory/loop.md", "leads nowhere"],
    ]) {
      for (const call of [
        () => storage.read(key, 0n),
        () => storage.append(key, bytes),
        () => storage.truncate(key, 0n, 4n),
        () => storage.replace(key, bytes, undefined),
        () => storage.remove(key),
        () => storage.rename(key, "memory/moved.md"),
        () => storage.rename("memory/kept.md", key),
      ]) {
        try {
          call();
        } catch (error) {
          assert(error instanceof StorageFailure && error.tag === "invalid-key" && error.val.reason.includes(why), `${key}: ${JSON.stringify(error)}`);
          continue;
        }
        throw new Error(`${key} went through its link`);
      }
    }
    assert(readFileSync(join(outside, "secret.md"), "utf8") === "key\n" && readFileSync(join(outside, "p/memory/x.md"), "utf8") === "elsewhere\n", "the files outside are as they were");
    assert(!existsSync(join(outside, "new.md")), "nothing was made outside");
    for (const link of ["memory/out.md", "memory/dangling.md", "memory/loop.md", "memory/folder"]) assert(lstatSync(join(root, link)).isSymbolicLink(), link);

    // Through the memory tool: the model can neither read nor replace what a link out
    // leads to, and a create over a link that leads nowhere leaves it as it was.
    const store = await Mneme.open({ root });
    try {
      const listing = (await store.memoryTool(null, { command: "view", path: "/memories" })).content;
      assert(!listing.includes("out.md") && listing.includes("/memories/kept.md"), listing);
      for (const input of [
        { command: "view", path: "/memories/out.md" },
        { command: "create", path: "/memories/out.md", file_text: "overwritten" },
        { command: "create", path: "/memories/dangling.md", file_text: "made" },
        { command: "str_replace", path: "/memories/out.md", old_str: "key", new_str: "lock" },
      ]) {
        await refused(store.memoryTool(null, input), "storage/invalid-key", "symbolic link");
      }
    } finally {
      await store.close();
    }
    assert(lstatSync(join(root, "memory/out.md")).isSymbolicLink() && lstatSync(join(root, "memory/dangling.md")).isSymbolicLink(), "the links stay");
    assert(readFileSync(join(outside, "secret.md"), "utf8") === "key\n", "the file a link leads to is as it was");
  });

  await test("the operations of no store are static: they answer as a store's engine does, with no store open", async () => {
    const store = await Mneme.open({ root: join(scratch, "statics") });
    const id = await Mneme.sessionIdOf("user:42");
    assert(id.startsWith("user-42_") && id === (await store.sessionIdOf("user:42")), id);
    await store.close();
    assert((await Mneme.sessionIdOf("chat-1")) === "chat-1", "an id of Mneme's is its own");
    assert((await Mneme.projectOf("/home/me/app")) === "-home-me-app");
    // Detached, as a callback: a static does not lean on `this`.
    assert((await Promise.all(["/a", "/b"].map(Mneme.projectOf))).join() === "-a,-b");
    const window = await Mneme.contextWindow("claude-sonnet-4-5");
    assert(typeof window === "number" && window > 0 && (await Mneme.contextWindow("no-such-model")) === null, String(window));
    assert((await Mneme.silentReply("Here it is")) === "deliver");
    assert((await Mneme.checkBytes(new TextEncoder().encode("{\"type\":\"user\"}\n"))).load.entry_count === 1);
    const refused = await Mneme.sessionIdOf(42).then(() => "answered", (error) => error.kind);
    assert(refused === "invalid-argument", refused);
  });

  await test("errors are MnemeErrors with the core's kind and words; bad arguments never trap", async () => {
    const store = await Mneme.open({ root: join(scratch, "errors") });
    await refused(store.load("nope"), "session-not-found", "list the store's sessions");
    await refused(store.append("a/b", { role: "user", text: "x" }), "invalid-session-id", "a/b");
    await refused(store.append("s", { role: "user", text: 5 }), "invalid-argument", "text must be a string");
    await refused(store.append("s", { role: "user", text: "x", now: 1.5 }), "invalid-argument", "now must be a whole number");
    // Out of its WIT type's range: refused, not wrapped (a limit of 2^32 + 1 searched for 1).
    await refused(store.search("x", { limit: 2 ** 32 + 1 }), "invalid-argument", "limit is 4294967297: give a whole number from 0 to 4294967295");
    await refused(store.search("x", { limit: -1 }), "invalid-argument", "limit is -1");
    await refused(store.rolloverGate("k", -5), "invalid-argument", "maxContextTokens is -5");
    await refused(store.gc({ ttl_days: 3, dry_run: true }), "invalid-argument", "policy: unknown field `ttl_days`: use ttl_ms, classes");
    await refused(store.gc({ ttl_ms: -1 }), "invalid-argument", "the time to live of the default is -1 ms");
    // Inside a settings record too: -1 lines was a cap of no limit, "no" was true, 256 o'clock midnight.
    await refused(store.memoryLoad("-w", { lines: -1 }), "invalid-argument", "lines is -1: give a whole number from 0 to 9007199254740991");
    await refused(store.memoryLoad("-w", { units: 1.5 }), "invalid-argument", "caps.units must be a whole number, not 1.5");
    await refused(store.memoryLoad("-w", { lines: "-1" }), "invalid-argument", 'caps.lines must be a whole number, not "-1"');
    await refused(store.resetGate("s", { dailyResetHour: 256 }), "invalid-argument", "daily_reset_hour is 256: give a whole number from 0 to 255");
    await refused(store.gc({ dry_run: "no" }), "invalid-argument", "dry_run must be true or false, not string");
    await refused(store.planCompaction("s", { keep: { recent_messages: 2 ** 32 } }), "invalid-argument", "recent_messages is 4294967296");
    await refused(store.resetGate("s", { daily_reset_hour: 256 }), "invalid-argument", "daily_reset_hour is 256: give a whole number from 0 to 255");
    await refused(store.planCompaction("s", { trigger: { fraction: Infinity } }), "invalid-argument", "fraction is Infinity: give a number");
    await refused(store.memoryAdd("-w", { name: "t", type: "user", body: "b", topics: "abc" }), "invalid-argument", "topics must be an array of strings");
    // jco would store a string as its characters, wrap a time, drop a link's kind.
    await refused(store.memoryAdd("-w", { name: "t", type: "user", links: { relates_to: "tabs" } }), "invalid-argument", "memory.links.relates_to must be an array of strings");
    await refused(store.memoryAdd("-w", { name: "t", type: "user", links: { relates: ["x"] } }), "invalid-argument", "memory.links: unknown field `relates`");
    await refused(store.memoryAdd("-w", { name: "t", type: "user", valid_from_ms: 2 ** 70 }), "invalid-argument", "memory.valid_from_ms must be a whole number");
    await refused(store.memoryAdd("-w", { name: "t", type: "user", valid_from_ms: 1.5 }), "invalid-argument", "memory.valid_from_ms must be a whole number");
    await refused(store.memoryAdd("-w", { name: "t", type: "user", confidence: "high" }), "invalid-argument", "memory.confidence must be a number");
    await refused(store.memoryAdd("-w", { name: "t", type: "user", session: 5 }), "invalid-argument", "memory.session must be a string");
    await refused(store.memoryUpdate("-w", "t", { topics: "abc" }), "invalid-argument", "change.topics must be an array of strings");
    // A partial `links`, as the d.ts allows, is completed.
    await store.memoryAdd("-w", { name: "a", type: "user", body: "alpha" });
    // A field given as undefined is one not given (as JSON drops it): the default holds.
    assert((await store.memoryList("-w", { all: undefined, topic: undefined })).length === 1, "undefined fields keep their defaults");
    assert((await store.gc({ dry_run: true, max_disk_bytes: undefined })).dry_run === true, "gc with an undefined setting");
    assert((await store.keyOf({ provider: "slack", id: "u1", chat_type: undefined })).includes("main"), "a message's chat type defaults to direct");
    // memoryList's window, as memoryRecall's: by when each memory holds from.
    assert((await store.memoryList("-w", { since: 0 })).length === 1 && (await store.memoryList("-w", { until: 1 })).length === 0, "memoryList takes since and until");
    await refused(store.dreamRelease("me", "yes"), "invalid-argument", "completed must be true or false");
    await refused(store.exportSession("s", "xml"), "invalid-argument", 'to is "xml": give one of claude, pi, openai, markdown');
    const linked = await store.memoryAdd("-w", { name: "b", type: "user", body: "beta", links: { relates_to: ["a"] } });
    const closed = await Mneme.open({ root: join(scratch, "closed") });
    await closed.close();
    await refused(closed.list(), "invalid-argument", "this store is closed");
    assert(JSON.stringify(linked).includes('"relates_to":["a"]'), JSON.stringify(linked));
    await refused(store.appendTurn("s", [{ role: "user", content: [{ type: "tool_result", tool_use_id: "nope", content: "x" }] }], { cwd: "/w" }), "invalid-message", "nothing was written");
    // The instance survived every refusal: it still writes.
    // At 08:00 UTC, an hour before the reset point (04:00 at UTC-5): never the clock's time.
    const at = Date.UTC(2026, 1, 16, 8, 0);
    const entry = await store.append("s", { role: "user", text: "still here", cwd: "/w", now: at });
    assert(entry.text === "still here" && entry.parent_uuid === null, JSON.stringify(entry));
    const zoned = await store.resetGate("s", { utcOffsetMinutes: -300, daily_reset_hour: 4 }, at + 1);
    assert(zoned.fire === false, `a negative offset is a time zone: ${JSON.stringify(zoned)}`);
    // The error's fields, not only its words: which message of those sent was refused.
    const second = await store.appendTurn("s", [{ role: "user", content: "fine" }, { role: "user", content: [{ type: "tool_result", tool_use_id: "nope", content: "x" }] }]).catch((e) => e);
    assert(second.kind === "invalid-message" && second.details.message === 1 && second.details.reason.includes("nope"), JSON.stringify({ ...second, message: second.message }));
    // A price is a number, every one given, as in Python: `true` was $1 a million, "3" $3.
    await refused(store.usage("s", { input: 3, output: 15 }), "invalid-argument", "`cache_read` is missing");
    await refused(store.usage("s", { input: true, output: 15, cache_read: 0, cache_creation: 0 }), "invalid-argument", "input must be a number, not boolean");
    await refused(store.usage("s", { input: "3", output: 15, cache_read: 0, cache_creation: 0 }), "invalid-argument", "input must be a number, not string");
    await refused(store.usage("s", { input: 3, output: 15, cache_read: 0, cache_creation: 0, cached: 1 }), "invalid-argument", "unknown field `cached`");
    await refused(store.usage("s", { input: 3, output: -15, cache_read: 0, cache_creation: 0 }), "invalid-argument", "a number from 0 to 1000000000000");
    await refused(Mneme.open({ root: join(ROOT, "README.md") }), "invalid-argument", "is not a folder");
    await refused(Mneme.open({ root: join(scratch, "x"), durability: "x" }), "invalid-argument", 'durability must be "fsync" or "buffered"');
    const closedOnce = await Mneme.open({ root: join(scratch, "closed-reopen") });
    await closedOnce.close();
    const reopened = await closedOnce.reopen("s").catch((error) => error);
    assert(reopened instanceof MnemeError && reopened.message.includes("this store is closed"), `reopen of a closed store: ${reopened}`);
    const readOnly = await Mneme.open({ root: join(scratch, "errors"), readOnly: true });
    await refused(readOnly.append("s", { role: "user", text: "x" }), "storage/read-only", "read-only");
    assert((await readOnly.list()).sessions.length === 1, "a read-only store still reads");
    // A misspelt option would leave its default in force (a store meant read-only
    // written), and a timeout given as text would never come due.
    const errors = join(scratch, "errors");
    await refused(Mneme.open({ root: errors, readonly: true }), "invalid-argument", "open: unknown option `readonly`; it takes root, storage");
    await refused(Mneme.open({ root: errors, lockTimeoutMs: "100" }), "invalid-argument", 'lockTimeoutMs must be a number of milliseconds, 0 or more, not "100"');
    await refused(Mneme.open({ root: errors, lockTimeoutMs: -1 }), "invalid-argument", "lockTimeoutMs must be a number");
    await refused(Mneme.open({ root: errors, readOnly: "yes" }), "invalid-argument", 'readOnly must be true or false, not "yes"');
    // An option passed by position or misspelt left its default in force.
    await refused(store.providerContext("s", "openai"), "invalid-argument", 'providerContext takes its options as an object ({ provider, model, injections }), not string "openai"');
    await refused(store.appendTurn("s", { role: "user", content: "x" }, { providr: "openai" }), "invalid-argument", "appendTurn: unknown option `providr`; it takes provider, cwd");
    await refused(store.memoryRecall("-w", "q", { top: 1 }), "invalid-argument", "memoryRecall: unknown option `top`; it takes limit, all");
    await refused(store.search("q", null), "invalid-argument", "search takes its options as an object ({ limit, project, since, until }), not null");
    // Left out, a line's folder is the session's own; a new session needs one.
    const placed = await Mneme.open({ root: join(scratch, "placed") });
    await refused(placed.append("p", { role: "user", text: "x" }), "invalid-argument", "a new session needs the working directory");
    await placed.append("p", { role: "user", text: "x", cwd: "/work/app" });
    const [later] = await placed.appendTurn("p", { role: "assistant", content: "y" });
    assert(JSON.parse(later.raw).cwd === "/work/app", later.raw);
    // A relative working directory is taken from the process's, as the CLI and Python take it.
    const relative = await placed.append("r", { role: "user", text: "x", cwd: "app/sub" });
    assert(JSON.parse(relative.raw).cwd === join(process.cwd(), "app/sub"), relative.raw);
    assert((await placed.list()).sessions.find((s) => s.id === "r").project === (await Mneme.projectOf(join(process.cwd(), "app/sub"))));
    // Seconds where milliseconds belong wrote 1970's timestamps.
    await refused(placed.append("p", { role: "user", text: "x", now: 1_796_599_694 }), "invalid-argument", "now is 1796599694, which reads as seconds since the epoch");
    await refused(placed.search("x", { since: 1_796_599_694 }), "invalid-argument", "since is 1796599694, which reads as seconds");
    // A root that cannot be made is said by its folder, not as the session's file missing.
    writeFileSync(join(scratch, "a-file"), "");
    const unmade = await Mneme.open({ root: join(scratch, "a-file", "store") });
    await refused(unmade.append("s", { role: "user", text: "x", cwd: "/w" }), "storage/io", `cannot make the folder ${join(scratch, "a-file", "store")}`);
    await unmade.close();
    await placed.close();
    await store.close();
    await readOnly.close();
  });

  await test("compact drives the core's run: rolling summaries from the caller's summariser, a failure recorded", async () => {
    const store = await Mneme.open({ root: join(scratch, "compact") });
    for (const id of ["ok", "failing"]) {
      for (let i = 0; i < 30; i++) await store.append(id, { role: i % 2 ? "assistant" : "user", text: `${"word ".repeat(400)}${i}`, cwd: "/w" });
    }
    const settings = { context_window: 8000, keep: { recent_tokens: 2000 } };
    const prompts = [];
    // A summariser may answer with plain text (here) or a promise of it.
    const done = await store.compact("ok", { settings, mode: "manual", summarize: (prompt, maxTokens) => (prompts.push(prompt), `summary in ${maxTokens} tokens`) });
    assert(done.plan.steps.length > 1 && prompts.length === done.plan.steps.length, `${prompts.length} requests for ${done.plan.steps.length} steps`);
    assert(done.applied?.action === "summarize" && done.failure === null, JSON.stringify(done));
    const context = await store.context("ok");
    assert(context.compacted && context.messages[0].text.includes("summary in"), JSON.stringify(context.messages[0]));
    const failed = await store.compact("failing", { settings, mode: "manual", summarize: () => { throw new Error("the model is down"); } });
    assert(failed.applied === null && failed.failure === "the model is down", JSON.stringify(failed));
    assert(!(await store.context("failing")).compacted, "a failed compaction changed the session");
    await store.close();
  });

  await test("memoryRecall drives a host's embedder: the memories without a vector first, then the query; vectors kept", async () => {
    const store = await Mneme.open({ root: join(scratch, "embedder") });
    await store.memoryAdd("-w", { name: "Ride", type: "user", description: "What the user drives", body: "A red sedan." });
    await store.memoryAdd("-w", { name: "Forecast", type: "project", description: "Launch day", body: "Sunny, no rain." });
    // A toy model: vehicles, weather, anything else. It may answer with typed arrays.
    const axis = (word) => (["car", "automobile", "sedan"].includes(word) ? 0 : ["sunny", "rain"].includes(word) ? 1 : 2);
    const asked = [];
    const embed = async (texts) => {
      asked.push(texts.length);
      return texts.map((text) => {
        const vector = new Float32Array(3);
        for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) vector[axis(word)] += axis(word) === 2 ? 0.1 : 1;
        return vector;
      });
    };
    const found = await store.memoryRecall("-w", "automobile", { embed, model: "toy" });
    assert(found.hits.length === 1 && found.hits[0].file === "ride" && found.hits[0].matched, JSON.stringify(found));
    assert(JSON.stringify(asked) === "[2,1]", `the memories, then the query: ${JSON.stringify(asked)}`);
    await store.memoryRecall("-w", "automobile", { embed, model: "toy" });
    assert(JSON.stringify(asked) === "[2,1,1]", `kept vectors are not embedded again: ${JSON.stringify(asked)}`);
    assert((await store.memoryRecall("-w", "automobile")).hits.length === 0, "without the embedder, words alone");
    await refused(store.memoryRecall("-w", "car", { embed: () => [[1, 0, 0]], model: "other" }), "invalid-argument", "embed gave an array for 2 texts");
    await refused(store.memoryRecall("-w", "car", { embed, model: "" }), "invalid-argument", "name the embedder's model");
    await refused(store.memoryRecall("-w", "car", { embed, model: "toy", near: { model: "toy", vector: [1] } }), "invalid-argument", "give near or embed, not both");
    await store.close();
  });

  await test("a Node process and `mneme` CLI processes append to one session at once: every line, one chain", async () => {
    assert(existsSync(MNEME), `no mneme binary at ${MNEME}: build it with \`cargo build --release -p mneme-host\``);
    const folder = join(scratch, "shared");
    const [nodeWrites, cliWrites] = [200, 200];
    const writer = fileURLToPath(new URL("./writer.mjs", import.meta.url));
    // The first `mneme` run after a build compiles the component (a second or two):
    // done here, so the writers overlap.
    assert((await run(MNEME, ["--root", folder, "sessions", "list"])).code === 0, "mneme sessions list failed");
    let started;
    const ready = new Promise((resolve) => (started = resolve));
    const node = run(process.execPath, [writer, folder, "shared", String(nodeWrites)], { onOutput: (out) => out.includes("ready") && started() });
    // A writer that dies before it is ready must not leave the CLI waiting.
    node.then(started, started);
    const cli = (async () => {
      await ready;
      for (let i = 0; i < cliWrites; i++) {
        const { code, stderr } = await run(MNEME, ["--root", folder, "append", "shared", "--role", "user", "--text", `cli ${i}`, "--cwd", "/w"]);
        if (code !== 0) throw new Error(`mneme append failed (${code}): ${stderr}`);
      }
    })();
    const [{ code, stderr }] = await Promise.all([node, cli]);
    assert(code === 0, `the Node writer failed (${code}): ${stderr}`);
    const store = await Mneme.open({ root: folder });
    const { messages } = await store.context("shared");
    // Had a lock not excluded the other process, two appends would have read the same
    // newest entry and forked the session: the main chain would be shorter.
    assert(messages.length === nodeWrites + cliWrites, `the main chain has ${messages.length} messages, ${nodeWrites + cliWrites} were written`);
    for (const who of ["node", "cli"]) {
      const mine = messages.filter((m) => m.text.startsWith(`${who} `)).map((m) => Number(m.text.split(" ")[1]));
      assert(mine.every((n, i) => n === i), `${who}'s messages are out of order or missing: ${mine.join(",")}`);
    }
    const switches = messages.filter((m, i) => i > 0 && m.text.split(" ")[0] !== messages[i - 1].text.split(" ")[0]).length;
    assert(switches >= 2, `the writers did not overlap (the session switches writer ${switches} times), so this run proved nothing`);
    console.log(`     the session switches between the Node and the CLI writers ${switches} times`);
    const report = await store.check("shared");
    assert(report.load.skipped.length === 0 && report.dangling_parents.length === 0 && !report.load.torn_tail, JSON.stringify(report));
    await store.close();
  });

  await test("a session Node holds makes a `mneme` CLI append wait until Node releases it", async () => {
    const folder = join(scratch, "held");
    const store = await Mneme.open({ root: folder });
    await store.append("held", { role: "user", text: "first", cwd: "/w" });
    await store.hold("held");
    const started = Date.now();
    const cli = run(MNEME, ["--root", folder, "append", "held", "--role", "user", "--text", "from the CLI"]);
    const holdMs = 1500;
    await new Promise((resolve) => setTimeout(resolve, holdMs));
    const before = await store.context("held");
    await store.release("held");
    const { code, stderr } = await cli;
    assert(code === 0, `mneme append failed (${code}): ${stderr}`);
    assert(before.messages.length === 1, `the CLI wrote while Node held the session: ${JSON.stringify(before.messages)}`);
    assert(Date.now() - started >= holdMs, "the CLI finished before Node released the session");
    assert((await store.context("held")).messages.length === 2, "the CLI's append is missing after the release");
    await store.close();
  });
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
finish("Node host");
