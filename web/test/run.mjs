// Mneme's browser tests, in Debian's headless Chromium driven by playwright-core:
// the conformance vectors on every backend (compared with the native host's
// outcomes), durability across reloads, two tabs writing one session, injected
// QuotaExceededError at every write, and a click through the playground.
//
// Run by `cargo xtask test` after the wasm build; a missing browser fails the run.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { handleModelRequest, requests as modelRequests } from "./mock-model.mjs";
import { differences } from "../../tests/js/conformance.js";
import { quickstart } from "../../tests/js/quickstart.mjs";
import { assert, finish, test } from "../../tests/js/runner.mjs";
import { pathToFileURL } from "node:url";
import { ROOT, serve } from "./serve.mjs";

const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const NATIVE = process.env.MNEME_NATIVE_OUTCOMES ?? join(ROOT, "target/tmp/conformance-native.json");
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const BACKENDS = ["memory", "indexeddb", "opfs"];

if (!existsSync(CHROMIUM)) {
  console.error(`error: no Chromium at ${CHROMIUM}; install it (apt-get install -y chromium chromium-driver) or set CHROMIUM`);
  process.exit(1);
}

const { server, url } = await serve(0, { mockModel: handleModelRequest });
const profile = mkdtempSync(join(tmpdir(), "mneme-chromium-"));
const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS });

async function harness() {
  const page = await context.newPage();
  page.on("pageerror", (error) => console.log(`     page error: ${error}`));
  await page.goto(`${url}/web/test/harness.html`);
  await page.waitForFunction(() => window.harnessReady === true);
  return page;
}

try {
  await test("the README's quickstart runs as written, in a page at the repository's root", async () => {
    // The page is made here (a module script holding the block) and served at the root,
    // with an import map that names the package in the repository (the README's names
    // the installed one; tests/packages.mjs runs that).
    const page = await context.newPage();
    const errors = [];
    const logged = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    page.on("console", (message) => logged.push(message.text()));
    const script = `${quickstart(join(ROOT, "web/README.md"), "js")}\nwindow.quickstartDone = true;\n`;
    await page.route(`${url}/quickstart.html`, (route) => route.fulfill({ contentType: "text/html", body: `<!doctype html><script type="importmap">{"imports": {"@mneme/web": "./web/js/mneme.js"}}</script><script type="module">${script}</script>` }));
    await page.goto(`${url}/quickstart.html`);
    await page.waitForFunction(() => window.quickstartDone === true, null, { timeout: 20000 }).catch(() => {});
    const done = await page.evaluate(() => window.quickstartDone === true);
    await page.close();
    assert(done && errors.length === 0, `the quickstart did not finish: ${errors.join("; ") || "no error, no end"}`);
    assert(logged.some((line) => line.includes("hello")), `it printed ${JSON.stringify(logged)}`);
  });

  const native = existsSync(NATIVE) ? JSON.parse(readFileSync(NATIVE, "utf8")) : null;
  for (const backend of BACKENDS) {
    await test(`conformance vectors on ${backend}`, async () => {
      const page = await harness();
      const { results, failures } = await page.evaluate((b) => window.runVectors(b), backend);
      await page.close();
      assert(failures.length === 0, failures.join("\n"));
      assert(native, `no native outcomes at ${NATIVE}: run the Rust tests first (cargo xtask test does)`);
      const differ = differences(results, native, `the browser (${backend})`);
      assert(differ.length === 0, differ.join("\n"));
    });
  }

  for (const backend of BACKENDS) {
    await test(`storage contract on ${backend}`, async () => {
      const page = await harness();
      const failures = await page.evaluate(async (backend) => {
        const [a, b] = await window.contractHandles(backend, `contract-${crypto.randomUUID()}`);
        try {
          return await Mneme.storageContract(a, b);
        } finally {
          a.close?.();
          b.close?.();
        }
      }, backend);
      await page.close();
      assert(failures.length === 0, `${backend} breaks the storage contract:\n${failures.join("\n")}`);
    });
  }

  for (const backend of ["indexeddb", "opfs"]) {
    await test(`${backend}: overlapping appends from one page queue and all succeed`, async () => {
      const page = await harness();
      const outcome = await page.evaluate(async (backend) => {
        const store = await Mneme.open({ backend, namespace: `overlap-${crypto.randomUUID()}` });
        const errors = [];
        for (let pair = 0; pair < 24; pair++) {
          const results = await Promise.allSettled([
            store.append("s", { cwd: "/w", role: "user", text: `question ${pair}` }),
            new Promise((r) => setTimeout(r, pair % 16)).then(() => store.append("s", { cwd: "/w", role: "assistant", text: `answer ${pair}` })),
          ]);
          for (const r of results) if (r.status === "rejected") errors.push(`${r.reason?.kind}: ${r.reason?.message}`);
        }
        const { messages } = await store.context("s");
        await store.close();
        return { errors, messages: messages.length };
      }, backend);
      await page.close();
      assert(outcome.errors.length === 0, outcome.errors.join("\n"));
      assert(outcome.messages === 48, `${outcome.messages} messages, 48 appended`);
    });
  }

  await test("opfs: a closed store's calls fail at once, saying so, instead of waiting for a worker that is gone", async () => {
    const page = await harness();
    const outcome = await page.evaluate(async () => {
      const store = await Mneme.open({ backend: "opfs", namespace: `closed-${crypto.randomUUID()}` });
      await store.append("s", { cwd: "/w", role: "user", text: "before the close" });
      await store.close();
      const late = new Promise((resolve) => setTimeout(() => resolve("still waiting after 3 s"), 3000));
      return Promise.race([store.context("s").then(() => "answered", (error) => `${error.kind}: ${error.message}`), late]);
    });
    await page.close();
    assert(outcome === "invalid-argument: this store is closed: open it again", outcome);
  });

  await test("indexeddb: destroying a namespace a store still has open finishes, and the store's later calls fail", async () => {
    const page = await harness();
    const outcome = await page.evaluate(async () => {
      const namespace = `destroyed-${crypto.randomUUID()}`;
      const store = await Mneme.open({ backend: "indexeddb", namespace });
      await store.append("s", { cwd: "/w", role: "user", text: "before the destroy" });
      const late = new Promise((resolve) => setTimeout(() => resolve("still blocked after 3 s"), 3000));
      const destroyed = await Promise.race([Mneme.destroy({ backend: "indexeddb", namespace }).then(() => "destroyed"), late]);
      const after = await store.context("s").then(() => "answered", (error) => error.kind);
      return { destroyed, after };
    });
    await page.close();
    assert(outcome.destroyed === "destroyed", outcome.destroyed);
    assert(outcome.after !== "answered", "a store whose database was destroyed still answered");
  });

  await test("the operations of no store are static: they answer as a store's engine does, with no store open", async () => {
    const page = await harness();
    const outcome = await page.evaluate(async () => {
      const store = await Mneme.open({ backend: "memory", namespace: "statics" });
      const instance = await store.sessionIdOf("user:42");
      await store.close();
      return {
        id: await Mneme.sessionIdOf("user:42"),
        instance,
        own: await Mneme.sessionIdOf("chat-1"),
        project: await Mneme.projectOf("/home/me/app"),
        detached: (await Promise.all(["/a", "/b"].map(Mneme.projectOf))).join(),
        window: await Mneme.contextWindow("claude-sonnet-4-5"),
        unknown: await Mneme.contextWindow("no-such-model"),
        reply: await Mneme.silentReply("Here it is"),
        entries: (await Mneme.checkBytes(new TextEncoder().encode('{"type":"user"}\n'))).load.entry_count,
        refused: await Mneme.sessionIdOf(42).then(() => "answered", (error) => error.kind),
      };
    });
    await page.close();
    assert(outcome.id.startsWith("user-42_") && outcome.id === outcome.instance && outcome.own === "chat-1", JSON.stringify(outcome));
    assert(outcome.project === "-home-me-app" && outcome.detached === "-a,-b" && outcome.window > 0 && outcome.unknown === null, JSON.stringify(outcome));
    assert(outcome.reply === "deliver" && outcome.entries === 1 && outcome.refused === "invalid-argument", JSON.stringify(outcome));
  });

  await test("a page without Web Locks (plain http from another host) keeps memory stores apart by its own locks, and is told why it cannot open a shared one", async () => {
    const page = await context.newPage();
    await page.addInitScript(() => Object.defineProperty(Navigator.prototype, "locks", { get: () => undefined }));
    await page.goto(`${url}/web/test/harness.html`);
    await page.waitForFunction(() => window.harnessReady === true);
    const outcome = await page.evaluate(async () => {
      const shared = await Mneme.open({ backend: "indexeddb" }).then(() => "opened", (error) => `${error.kind}: ${error.message}`);
      const first = await Mneme.open({ backend: "memory", namespace: "lan" });
      const second = await Mneme.open({ backend: "memory", namespace: "lan", lockTimeoutMs: 0 });
      await first.append("q", { cwd: "/w", role: "user", text: "one" });
      const afterFirst = await second.append("q", { cwd: "/w", role: "user", text: "two" }).then(() => "written", (error) => error.kind);
      await first.hold("q");
      const whileHeld = await second.append("q", { cwd: "/w", role: "user", text: "three" }).then(() => "written", (error) => error.kind);
      // A wait that ends: the held lock's waiter is let go, and the lock stays usable.
      const waiting = await Mneme.open({ backend: "memory", namespace: "lan", lockTimeoutMs: 50 });
      const waited = await waiting.append("q", { cwd: "/w", role: "user", text: "four" }).then(() => "written", (error) => error.kind);
      await first.release("q");
      const released = await waiting.append("q", { cwd: "/w", role: "user", text: "five" }).then(() => "written", (error) => error.kind);
      const messages = (await first.context("q")).messages.length;
      for (const store of [first, second, waiting]) await store.close();
      return { shared, afterFirst, whileHeld, waited, released, messages };
    });
    await page.close();
    assert(outcome.shared.startsWith("unsupported: ") && outcome.shared.includes("https or from localhost"), outcome.shared);
    assert(outcome.afterFirst === "written" && outcome.released === "written", JSON.stringify(outcome));
    assert(outcome.whileHeld === "storage/locked" && outcome.waited === "storage/locked", JSON.stringify(outcome));
    assert(outcome.messages === 1, JSON.stringify(outcome));
  });

  await test("compact steps through the core's driver: rolling requests, failures recorded, offline summary", async () => {
    const page = await harness();
    const outcome = await page.evaluate(async () => {
      const store = await Mneme.open({ backend: "memory" });
      for (let i = 0; i < 40; i++) {
        await store.append("s", { cwd: "/w", role: i % 2 ? "assistant" : "user", text: `turn ${i} `.repeat(200), now: 1_800_000_000_000 + i });
      }
      const settings = { keep: { recent_messages: 4 }, summarizer_window: 3000 };
      // Every write at a time of its own, after the messages': never the clock's.
      const prompts = [];
      const empty = await store.compact("s", { settings, mode: "manual", summarize: async () => "  ", now: 1_800_000_000_100 });
      const failed = await store.compact("s", { settings, mode: "manual", summarize: async () => { throw new Error("model down"); }, now: 1_800_000_000_101 });
      const rolled = await store.compact("s", { settings, mode: "manual", summarize: async (prompt) => { prompts.push(prompt); return `summary ${prompts.length}`; }, now: 1_800_000_000_102 });
      const afterRolled = (await store.context("s")).messages;
      const offline = await store.compact("s", { settings: { keep: { recent_messages: 2 } }, mode: "manual", now: 1_800_000_000_103 });
      return {
        empty: [empty.applied, empty.failure], failed: [failed.applied, failed.failure],
        steps: rolled.plan.steps.length, prompts: prompts.length, carried: prompts.slice(1).every((p, i) => p.includes(`summary ${i + 1}`)),
        applied: rolled.applied?.action, first: afterRolled[0].text, offline: offline.applied?.action,
      };
    });
    await page.close();
    assert(outcome.empty[0] === null && /nothing/.test(outcome.empty[1]), `an empty answer is a recorded failure: ${JSON.stringify(outcome.empty)}`);
    assert(outcome.failed[0] === null && outcome.failed[1] === "model down", `a rejection is a recorded failure: ${JSON.stringify(outcome.failed)}`);
    assert(outcome.steps > 1 && outcome.prompts === outcome.steps, `one request per piece: ${JSON.stringify(outcome)}`);
    assert(outcome.carried, "each rolling request carries the summary so far");
    assert(outcome.applied === "summarize" && outcome.first.includes(`summary ${outcome.prompts}`), JSON.stringify(outcome));
    assert(outcome.offline === "summarize", `without a summariser the offline summary is applied: ${JSON.stringify(outcome)}`);
  });

  await test("bad arguments are MnemeErrors and the page stays usable", async () => {
    const page = await harness();
    const outcome = await page.evaluate(async () => {
      const store = await Mneme.open({ backend: "memory" });
      const kinds = [];
      for (const call of [
        () => store.append("s", { role: "user", text: 42 }),
        () => store.append("s", { role: "user", text: { a: 1 } }),
        () => store.append(7, { role: "user", text: "x" }),
        () => store.append("s", { role: null, text: "x" }),
        () => store.append("s", { role: "user" }),
        () => store.append("s", { role: "system", text: "x" }),
        () => store.load(null),
        () => Mneme.checkBytes("not bytes"),
        () => store.append("s", { role: "user", text: "x", now: 1.5 }),
        () => store.search("x", { limit: -1 }),
        () => store.search("x", { limit: 2 ** 32 + 1 }),
        // Each of these trapped inside the WebAssembly instance or threw a TypeError.
        () => store.planCompaction(123),
        () => store.dreamRelease(123, true),
        () => store.crabLatest("a", "b", 5),
        () => store.memoryFlushGate(undefined),
        () => store.applyCompaction("s", {}, undefined),
        () => store.gc(null),
        // A misspelt setting was ignored, its default silently in force.
        () => store.gc({ ttl_days: 1 }),
        () => store.planCompaction("s", { contextWindw: 500 }),
        () => store.memoryAdd(null, undefined),
        () => store.memoryAddMany(null, {}),
        () => store.updateKey("k", "title"),
        () => store.keyOf(undefined),
        // An option passed by position or misspelt left its default in force.
        () => store.providerContext("s", "openai"),
        () => store.appendTurn("s", { role: "user", content: "x" }, { providr: "openai" }),
        () => store.memoryRecall(null, "q", { top: 1 }),
        () => store.search("q", null),
        () => store.instructions(),
        () => Mneme.open({ backend: "memory", namspace: "x" }),
        // A wait of no number failed the first write with "locked" (or waited forever);
        // a namespace of a path, a backend by name in `storage`, a destroy of nothing,
        // each failed as a TypeError or a StorageFailure, or did nothing.
        () => Mneme.open({ backend: "memory", lockTimeoutMs: "5s" }),
        () => Mneme.open({ backend: "memory", lockTimeoutMs: -1 }),
        () => Mneme.open({ backend: "opfs", namespace: "a/b" }),
        () => Mneme.open({ backend: "indexeddb", namespace: "" }),
        () => Mneme.open({ storage: "opfs" }),
        () => Mneme.destroy(),
        () => Mneme.destroy({ backend: "opfz" }),
        () => Mneme.open({ backend: "toString" }),
      ]) {
        try {
          await call();
          kinds.push("no error");
        } catch (error) {
          kinds.push(error instanceof MnemeError ? error.kind : `${error?.name}: ${error?.message}`);
        }
      }
      // No wait: a free lock is taken at once, a held one refused at once.
      const first = await Mneme.open({ backend: "memory", namespace: "no-wait", lockTimeoutMs: 0 });
      const second = await Mneme.open({ backend: "memory", namespace: "no-wait", lockTimeoutMs: 0 });
      await first.append("q", { cwd: "/w", role: "user", text: "a free lock" });
      // The lock the first store just gave back is free for another store of the page,
      // however soon after the browser lets it go.
      const afterAnother = await second.append("q", { cwd: "/w", role: "user", text: "right after" }).then(() => "written", (error) => error.kind);
      await first.hold("q");
      const noWait = await second.append("q", { cwd: "/w", role: "user", text: "x" }).then(() => "written", (error) => error.kind);
      await first.close();
      await second.close();
      const blank = await Mneme.checkBytes(new Uint8Array(8 << 20).fill(10));
      await store.append("s", { cwd: "/w", role: "user", text: "still usable" });
      // The error's fields, not only its words: which message of those sent was refused.
      const refused = await store
        .appendTurn("s", [{ role: "user", content: "fine" }, { role: "user", content: [{ type: "tool_result", tool_use_id: "nope", content: "x" }] }], { cwd: "/w" })
        .catch((error) => ({ kind: error.kind, details: error.details }));
      // Settings in either spelling: a dry run stays dry, a window is the one given.
      const dry = await store.gc({ dryRun: true, ttlMs: 0 }, Date.now() + 1e9);
      const listedAfterDryRun = (await store.list()).sessions.length;
      const plan = await store.planCompaction("s", { contextWindow: 500 }, "manual");
      const messages = (await store.context("s")).messages.length;
      await store.close();
      await store.close();
      const afterClose = await store.append("s", { role: "user", text: "x" }).catch((error) => `${error.kind}: ${error.message}`);
      return { kinds, noWait, afterAnother, refused, blank: blank.load.entry_count, messages, dry: dry.dry_run, archived: dry.archived.length, listedAfterDryRun, window: plan.context_window, afterClose };
    });
    await page.close();
    assert(outcome.kinds.every((k) => k === "invalid-argument"), outcome.kinds.join(", "));
    assert(outcome.noWait === "storage/locked", `a held lock with lockTimeoutMs 0: ${outcome.noWait}`);
    assert(outcome.afterAnother === "written", `a lock another store gave back, with lockTimeoutMs 0: ${outcome.afterAnother}`);
    assert(outcome.blank === 0 && outcome.messages === 1, JSON.stringify(outcome));
    assert(outcome.dry === true && outcome.archived === 1 && outcome.listedAfterDryRun === 1, `a dry run archives nothing: ${JSON.stringify(outcome)}`);
    assert(outcome.window === 500, `contextWindow is context_window: ${JSON.stringify(outcome)}`);
    assert(outcome.afterClose === "invalid-argument: this store is closed: open it again", outcome.afterClose);
    const { kind, details } = outcome.refused;
    assert(kind === "invalid-message" && details?.message === 1 && details.reason.includes("nope"), JSON.stringify(outcome.refused));
  });

  for (const backend of ["indexeddb", "opfs"]) {
    await test(`${backend}: what was written survives a reload`, async () => {
      const page = await harness();
      // An IndexedDB database may have any name: one with a slash, which earlier
      // versions opened, opens still.
      const namespace = backend === "indexeddb" ? "team/durable" : `durable-${backend}`;
      const written = await page.evaluate(async ([backend, namespace]) => {
        const store = await Mneme.open({ backend, namespace });
        const uuids = [];
        for (let i = 0; i < 5; i++) uuids.push((await store.append("kept", { cwd: "/w", role: i % 2 ? "assistant" : "user", text: `message ${i}` })).uuid);
        await store.tombstone("kept", uuids[1]);
        return uuids;
      }, [backend, namespace]);
      await page.reload();
      await page.waitForFunction(() => window.harnessReady === true);
      const loaded = await page.evaluate(async ([backend, namespace]) => {
        const store = await Mneme.open({ backend, namespace });
        return store.load("kept");
      }, [backend, namespace]);
      await page.close();
      const uuids = loaded.entries.map((e) => e.uuid);
      assert(JSON.stringify(uuids) === JSON.stringify(written.filter((_, i) => i !== 1)), `after reload: ${uuids} (written ${written})`);
      assert(loaded.report.tombstoned === 1 && loaded.report.skipped.length === 0 && !loaded.report.torn_tail, JSON.stringify(loaded.report));
    });

    await test(`${backend}: two tabs appending to one session never interleave or lose entries`, async () => {
      const [first, second] = [await harness(), await harness()];
      const namespace = `tabs-${backend}`;
      const write = (page, tab) => page.evaluate(async ([backend, namespace, tab]) => {
        const store = await Mneme.open({ backend, namespace });
        for (let i = 0; i < 60; i++) await store.append("shared", { cwd: "/w", role: "user", text: `${tab} ${i}` });
      }, [backend, namespace, tab]);
      await Promise.all([write(first, "left"), write(second, "right")]);
      const loaded = await first.evaluate(async ([backend, namespace]) => (await Mneme.open({ backend, namespace })).load("shared"), [backend, namespace]);
      await Promise.all([first.close(), second.close()]);
      const entries = loaded.entries;
      assert(entries.length === 120 && loaded.report.skipped.length === 0, `${entries.length} entries, report ${JSON.stringify(loaded.report)}`);
      entries.forEach((entry, i) => assert(entry.parent_uuid === (i === 0 ? null : entries[i - 1].uuid), `entry ${i} does not chain to the one before it`));
      const texts = new Set(entries.map((e) => e.text));
      for (const tab of ["left", "right"]) for (let i = 0; i < 60; i++) assert(texts.has(`${tab} ${i}`), `${tab} ${i} is missing`);
      const interleaved = entries.some((e) => !/^(left|right) \d+$/.test(e.text));
      assert(!interleaved, "an entry's text is not one of the written messages");
    });

    // A read takes a snapshot of the file, then its bytes; a writer in another tab
    // between the two made OPFS refuse the bytes (NotReadableError, 28 of 374 loads).
    await test(`${backend}: a tab loading a session while another tab appends to it always reads one whole state`, async () => {
      const [reader, writer] = [await harness(), await harness()];
      const namespace = `read-while-written-${backend}`;
      await writer.evaluate(async ([backend, namespace]) => {
        await (await Mneme.open({ backend, namespace })).append("busy", { cwd: "/w", role: "user", text: "first" });
      }, [backend, namespace]);
      const writing = writer.evaluate(async ([backend, namespace]) => {
        const store = await Mneme.open({ backend, namespace });
        for (let i = 0; i < 150; i++) await store.append("busy", { cwd: "/w", role: i % 2 ? "assistant" : "user", text: `message ${i} `.repeat(20) });
      }, [backend, namespace]);
      const { failures, seen } = await reader.evaluate(async ([backend, namespace]) => {
        const failures = [];
        const seen = new Set();
        for (let i = 0; i < 150; i++) {
          const store = await Mneme.open({ backend, namespace });
          try {
            const loaded = await store.load("busy");
            seen.add(loaded.entries.length);
            if (loaded.report.skipped.length > 0) failures.push(`load ${i}: skipped ${JSON.stringify(loaded.report.skipped)}`);
          } catch (error) {
            failures.push(`load ${i}: ${error.kind}: ${error.message}`);
          }
        }
        return { failures, seen: seen.size };
      }, [backend, namespace]);
      await writing;
      await Promise.all([reader.close(), writer.close()]);
      assert(failures.length === 0, `${failures.length} of 150 loads failed: ${failures.slice(0, 3).join("; ")}`);
      // The loads ran while the session grew: they read it at different lengths.
      assert(seen > 2, `the loads saw only ${seen} lengths of the session: they did not overlap the appends`);
    });
  }

  await test("opfs: a memory written while another worker holds MEMORY.md's handle waits for it instead of failing", async () => {
    const page = await harness();
    const outcome = await page.evaluate(async () => {
      const store = await Mneme.open({ backend: "opfs", namespace: "held-handle" });
      await store.memoryAdd("-held", { name: "first", type: "user", description: "the first fact", body: "First." });
      // Another tab's worker, holding MEMORY.md's sync access handle for 300 ms.
      const holder = new Worker(URL.createObjectURL(new Blob([`
        async function find(dir, name) {
          for await (const [entry, handle] of dir.entries()) {
            if (handle.kind === "file" && entry === name) return handle;
            if (handle.kind === "directory") { const found = await find(handle, name); if (found) return found; }
          }
        }
        onmessage = async () => {
          const root = await (await navigator.storage.getDirectory()).getDirectoryHandle("mneme");
          const access = await (await find(await root.getDirectoryHandle("held-handle"), "MEMORY.md")).createSyncAccessHandle();
          postMessage("held");
          setTimeout(() => { access.close(); postMessage("released"); }, 300);
        };`], { type: "text/javascript" })));
      await new Promise((resolve) => {
        holder.onmessage = ({ data }) => data === "held" && resolve();
        holder.postMessage("hold");
      });
      try {
        await store.memoryAdd("-held", { name: "second", type: "user", description: "the second fact", body: "Second." });
        return (await store.memoryLoad("-held")).text;
      } catch (error) {
        return `${error.kind}: ${error.message}`;
      } finally {
        holder.terminate();
      }
    });
    await page.close();
    assert(outcome.includes("second fact"), `the second memory: ${outcome}`);
  });

  await test("opfs: two tabs remembering in one store at once: all 50 memories land", async () => {
    const [first, second] = [await harness(), await harness()];
    const remember = (page, tab) => page.evaluate(async (tab) => {
      const store = await Mneme.open({ backend: "opfs", namespace: "tabs-memory" });
      const failures = [];
      for (let i = 0; i < 25; i++) {
        try {
          await store.memoryAdd("-tabs", { name: `${tab} ${i}`, type: "user", description: `${tab} fact ${i}`, body: `The ${tab} tab's fact number ${i}.` });
        } catch (error) {
          failures.push(`${tab} ${i}: ${error.kind}: ${error.message}`);
        }
      }
      return failures;
    }, tab);
    const failures = (await Promise.all([remember(first, "left"), remember(second, "right")])).flat();
    const names = await first.evaluate(async () => (await (await Mneme.open({ backend: "opfs", namespace: "tabs-memory" })).memoryList("-tabs")).map((m) => m.name));
    await Promise.all([first.close(), second.close()]);
    assert(failures.length === 0, `${failures.length} memories failed:\n${failures.slice(0, 5).join("\n")}`);
    assert(names.length === 50, `${names.length} memories listed, 50 remembered`);
  });

  for (const backend of BACKENDS) {
    await test(`${backend}: QuotaExceededError at every write leaves a readable store with every acknowledged entry`, async () => {
      const page = await harness();
      const report = await page.evaluate(async (backend) => {
        const problems = [];
        let positions = 0;
        for (let at = 1; ; at++) {
          const namespace = `quota-${at}-${crypto.randomUUID()}`;
          const first = await Mneme.open({ backend, namespace });
          const storage = first.storage;
          await storage.faults.arm(at);
          const acknowledged = [];
          let refusals = 0;
          for (let i = 0; i < 6; i++) {
            try {
              acknowledged.push((await first.append("q", { cwd: "/w", role: i % 2 ? "assistant" : "user", text: `entry ${i} `.repeat(10) })).uuid);
            } catch (error) {
              if (error.kind !== "storage/quota-exceeded") problems.push(`write ${at}: ${error.kind}: ${error.message}`);
              refusals += 1;
            }
          }
          await storage.faults.arm(0);
          // Reopen: a fresh engine over the same data.
          const reopened = backend === "memory" ? await Mneme.open({ storage }) : await Mneme.open({ backend, namespace });
          let loaded = null;
          try {
            loaded = await reopened.load("q");
          } catch (error) {
            if (!(error.kind === "session-not-found" && acknowledged.length === 0)) problems.push(`write ${at}: reopening failed: ${error.kind}`);
          }
          const present = new Set((loaded?.entries ?? []).map((e) => e.uuid));
          for (const uuid of acknowledged) if (!present.has(uuid)) problems.push(`write ${at}: acknowledged ${uuid} is lost`);
          if (loaded && (loaded.report.skipped.length || loaded.report.torn_tail)) problems.push(`write ${at}: the store is damaged: ${JSON.stringify(loaded.report)}`);
          await reopened.append("q", { cwd: "/w", role: "user", text: "after" }).catch((e) => problems.push(`write ${at}: no longer writable: ${e.kind}`));
          await first.close();
          await reopened.close();
          await Mneme.destroy({ backend, namespace });
          if (refusals === 0) break;
          positions += 1;
        }
        return { problems, positions };
      }, backend);
      await page.close();
      assert(report.problems.length === 0, report.problems.join("\n"));
      assert(report.positions >= 6, `only ${report.positions} write positions were failed`);
    });
  }

  await test("opfs: a replace that fails leaves the file as it was and no temporary copy; a copy a crash left is never listed", async () => {
    const page = await harness();
    const problems = await page.evaluate(async () => {
      const problems = [];
      const namespace = `replace-${crypto.randomUUID()}`;
      const store = await Mneme.open({ backend: "opfs", namespace });
      const storage = store.storage;
      const key = "memory/p/MEMORY.md";
      await storage.replace(key, new TextEncoder().encode("the memory\n"), null);
      await storage.faults.arm(1);
      try {
        await storage.replace(key, new TextEncoder().encode("changed\n"), null);
        problems.push("the injected failure did not fail the replace");
      } catch (error) {
        if (error.kind !== "quota-exceeded") problems.push(`the replace failed as ${error.kind}: ${error.message}`);
      }
      await storage.faults.arm(0);
      const folder = await (await (await (await (await navigator.storage.getDirectory()).getDirectoryHandle("mneme")).getDirectoryHandle(namespace)).getDirectoryHandle("memory")).getDirectoryHandle("p");
      const names = async () => { const found = []; for await (const [name] of folder.entries()) found.push(name); return found.sort(); };
      const after = await names();
      if (after.join() !== "MEMORY.md") problems.push(`after the failed replace the folder holds ${after.join(", ")}`);
      const kept = new TextDecoder().decode(await storage.read(key, 0, null));
      if (kept !== "the memory\n") problems.push(`the file changed: ${JSON.stringify(kept)}`);
      // What a crash between writing the copy and moving it leaves behind.
      await folder.getFileHandle(".mneme-tmp-MEMORY.md", { create: true });
      const listed = (await storage.list("memory/")).map((info) => info.key);
      if (listed.join() !== key) problems.push(`listed: ${listed.join(", ")}`);
      await store.close();
      await Mneme.destroy({ backend: "opfs", namespace });
      return problems;
    });
    await page.close();
    assert(problems.length === 0, problems.join("\n"));
  });

  await test("the playground opened from a file says it must be served over http(s), instead of waiting", async () => {
    const page = await context.newPage();
    await page.goto(pathToFileURL(join(ROOT, "web/playground.html")).href);
    const status = await page.textContent("#status");
    await page.close();
    assert(status.includes("must be served over http(s)") && status.includes("cargo xtask playground"), `status: ${status}`);
  });

  await test("the agent playground: tool calls, compaction, rewind, fork, export, import, reload (screenshots in target/playground*.png)", async () => {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    await page.goto(`${url}/web/playground.html`);
    const first = await page.inputValue("#session");
    assert(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(first), `a first visit's session id is a UUID, which Claude Code resumes: ${first}`);
    await page.selectOption("#backend", "indexeddb");
    await page.fill("#session", "tools-chat");
    await page.fill("#window", "500");
    await page.click("#open");
    const ask = async (prompt, answer) => {
      await page.fill("#prompt", prompt);
      await page.click("#send");
      await page.waitForSelector(`text=${answer}`);
      await page.waitForFunction(() => !document.getElementById("send").disabled);
    };
    // The meter is the provider context's tokens against the window the page was given.
    const meter = async () => {
      const status = await page.textContent("#status");
      const [, tokens, window, share] = status.match(/~(\d+) tokens of a (\d+)-token window \((\d+)%\)/) ?? [];
      const width = await page.$eval("#meter-bar", (bar) => bar.style.width);
      assert(window === "500" && Number(tokens) > 0 && Number(share) === Math.min(100, Math.round((100 * tokens) / window)) && width === `${share}%`, `the meter shows the context against the window: ${status} (bar ${width})`);
      return Number(tokens);
    };
    await ask("what is 12 * (3 + 4)?", "The tool says: 84");
    const early = await meter();
    assert(await page.isVisible(".tool-call:has-text('calculate')"), "the tool call is shown");
    assert(await page.isVisible(".tool-result:has-text('84')"), "its result is shown");
    await ask("which sessions do I have?", "tools-chat (");
    for (let i = 1; i <= 6; i++) await ask(`tell me about topic ${i} ${"in detail ".repeat(12)}`, `topic ${i}`);
    await page.waitForSelector("li.compaction");
    const status = await page.textContent("#status");
    assert(status.includes("from a compaction summary"), `the context starts from the summary: ${status}`);
    assert((await meter()) > early, "the meter grew with the conversation");
    mkdirSync(join(ROOT, "target"), { recursive: true });
    await page.screenshot({ path: join(ROOT, "target/playground.png"), fullPage: true });

    // Rewind to the first prompt's answer and continue: a second branch.
    await page.click("li:has-text('The tool says: 84') button.rewind");
    await page.waitForSelector("text=The next prompt continues from");
    await ask("and 2 + 2?", "The tool says: 4");
    await page.waitForFunction(() => document.querySelectorAll("#branches li").length === 2);
    const transcript = await page.textContent("#transcript");
    assert(!transcript.includes("topic 3"), "the current branch no longer shows the later messages");
    await page.screenshot({ path: join(ROOT, "target/playground-branches.png"), fullPage: true });

    // Fork the other branch into a session of its own.
    await page.click("#branches li:not(.current) button.fork");
    await page.waitForFunction(() => document.getElementById("session").value !== "tools-chat");
    await page.waitForSelector("#transcript >> text=topic 6");
    const forkId = await page.inputValue("#session");

    // Export it as Claude Code JSONL (its own dialect: as stored).
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export")]);
    const exported = readFileSync(await download.path(), "utf8").trim().split("\n").map((line) => JSON.parse(line));
    assert(exported.every((e) => e.sessionId === forkId || e.type === "tombstone"), "the export is the fork's JSONL");
    assert(exported.some((e) => e.forkedFrom?.sessionId === "tools-chat"), "the fork names its origin");
    assert(exported.some((e) => JSON.stringify(e.message?.content ?? "").includes("tool_use")), "with its tool calls");

    // And as Markdown: the conversation it resumes to.
    await page.selectOption("#export-format", "markdown");
    const [markdown] = await Promise.all([page.waitForEvent("download"), page.click("#export")]);
    assert(markdown.suggestedFilename() === `${forkId}.markdown.md`, `the Markdown export's name: ${markdown.suggestedFilename()}`);
    assert(readFileSync(await markdown.path(), "utf8").includes("topic 6"), "the Markdown export has the conversation");

    // A session whose id is no UUID exports too, with a word on Claude Code's resume.
    await page.selectOption("#export-format", "claude");
    await page.fill("#session", "tools-chat");
    await page.click("#open");
    await page.waitForSelector("#status >> text=tools-chat");
    const [named] = await Promise.all([page.waitForEvent("download"), page.click("#export")]);
    assert(named.suggestedFilename() === "tools-chat.jsonl", `the export's name: ${named.suggestedFilename()}`);
    await page.waitForSelector("#error >> text=Claude Code resumes only sessions whose id is a UUID");

    // Import transcripts by dropping them: Claude Code's under its own session id, a
    // Codex CLI rollout converted to a Claude Code session.
    // `files`: corpus paths, or [name, text] for a file made here; dropped at once.
    const drop = (...files) =>
      page.evaluate(
        (files) => {
          const transfer = new DataTransfer();
          for (const [name, text] of files) transfer.items.add(new File([text], name));
          document.getElementById("drop").dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
        },
        files.map((file) => (Array.isArray(file) ? file : [file.split("/").pop(), readFileSync(join(ROOT, "tests/corpus", file), "utf8")])),
      );
    for (const [path, id] of [
      ["claude/11-v1.0.95-resumed/claude_code.jsonl", JSON.parse(readFileSync(join(ROOT, "tests/corpus/claude/11-v1.0.95-resumed/claude_code.jsonl"), "utf8").split("\n")[0]).sessionId],
      ["codex/agent-history-codex-0.135.jsonl", "019e9625-802f-7e91-840a-cfe88d14117a"],
    ]) {
      await drop(path);
      await page.waitForFunction((id) => document.getElementById("session").value === id, id);
      await page.waitForSelector(`#status >> text=${id}`);
      assert((await page.$$("#transcript li")).length > 0, `the conversation imported from ${path} is shown`);
    }
    // The same file again is a copy under a new id, and says so.
    await drop("codex/agent-history-codex-0.135.jsonl");
    await page.waitForSelector("#error >> text=imported as a new session");
    assert((await page.inputValue("#session")) !== "019e9625-802f-7e91-840a-cfe88d14117a", "the copy has an id of its own");
    // Several files at once, among them two that name no session id or no folder (each
    // was refused): OpenAI messages and a Gemini CLI chat. The last is the one shown.
    const openaiMessages = JSON.stringify([{ role: "user", content: "ping from an OpenAI export" }, { role: "assistant", content: "pong" }]);
    await drop(["chat.json", openaiMessages], "gemini/vibecodingtracker-gemini-legacy.json");
    await page.waitForSelector("#error >> text=chat.json: imported as a new session");
    await page.waitForSelector("#error >> text=vibecodingtracker-gemini-legacy.json");
    const listed = await page.textContent("#sessions");
    assert(listed.includes("ping from an OpenAI export"), `the OpenAI messages became a session: ${listed}`);
    // A pi session: its calls shown with their names, its compactions where they happened.
    await drop("pi/v1/before-compaction.jsonl");
    await page.waitForSelector("li.compaction");
    const calls = await page.$$eval(".tool-call", (nodes) => nodes.map((n) => n.textContent));
    assert(calls.length > 0 && calls.every((c) => c.startsWith("→ ") && !c.includes("[toolCall]")), `pi's calls: ${calls.slice(0, 3)}`);
    await page.screenshot({ path: join(ROOT, "target/playground-pi-import.png"), fullPage: false });

    // Everything survives a reload.
    await page.fill("#session", "tools-chat");
    await page.click("#open");
    await page.reload();
    await page.waitForSelector("text=The tool says: 4");
    assert((await page.inputValue("#backend")) === "indexeddb", "the backend choice survives the reload");
    await page.click("li:has-text('and 2 + 2?') button.delete");
    await page.waitForSelector("#status >> text=1 deleted");
    assert(errors.length === 0, errors.join("\n"));
    await page.close();
  });
  await test("the playground writes to the backend chosen last, whichever of two opens finishes first; a click while a store opens waits for it", async () => {
    const page = await context.newPage();
    // The page's wasm module and OPFS's worker arrive a second late (routing also turns
    // the HTTP cache off), so the page's first open, and every OPFS open, is still going
    // when the next step comes.
    const late = [];
    const arriveLate = (route) => late.push(new Promise((resolve) => setTimeout(resolve, 1000)).then(() => route.continue()));
    await page.route("**/mneme_web_bg.wasm", arriveLate);
    await page.route("**/opfs-worker.js", arriveLate);
    await page.addInitScript(() => localStorage.setItem("mneme-playground", JSON.stringify({ backend: "indexeddb", session: "chosen-last", window: "1500" })));
    await page.goto(`${url}/web/playground.html`);
    await page.fill("#memory-name", "Storage");
    await page.fill("#memory-body", "The user keeps the playground in IndexedDB.");
    await page.click("#remember");
    await page.waitForSelector("#memories >> text=Storage");
    assert((await page.textContent("#error")) === "", `Remember during the open: ${await page.textContent("#error")}`);
    // Memory, OPFS, then at once IndexedDB, which opens before OPFS: the prompt goes to IndexedDB.
    await page.selectOption("#backend", "memory");
    await page.selectOption("#backend", "opfs");
    await page.selectOption("#backend", "indexeddb");
    await page.fill("#session", "chosen-last");
    await page.fill("#prompt", "where am I stored?");
    await page.click("#send");
    await page.waitForSelector("#status >> text=chosen-last:");
    const status = await page.textContent("#status");
    assert(status.startsWith("indexeddb · chosen-last"), `the prompt went to a backend chosen before: ${status}`);
    // Once the late OPFS open is over (its worker served, then its first message
    // answered: the half second can only make this check weaker, never fail it), the
    // page still works on IndexedDB.
    await Promise.all(late);
    await page.waitForTimeout(500);
    await page.click("#open");
    await page.waitForFunction(() => !document.getElementById("open").disabled);
    const after = await page.textContent("#status");
    assert(after.startsWith("indexeddb · chosen-last"), `after the OPFS open ended, the page is on another backend: ${after}`);
    const stored = await page.evaluate(() => new Promise((resolve, reject) => {
      const open = indexedDB.open("mneme-playground", 1);
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const keys = open.result.transaction(["files"], "readonly").objectStore("files").getAllKeys();
        keys.onsuccess = () => resolve(keys.result.filter((key) => key.includes("chosen-last")));
      };
    }));
    assert(stored.length > 0, "IndexedDB has no file of the session");
    assert((await page.textContent("#error")) === "", `an error was shown: ${await page.textContent("#error")}`);
    await page.close();
  });

  await test("an OPFS worker that is not served fails the open with what to do; the failure of an open a later choice superseded is not shown", async () => {
    const page = await context.newPage();
    const served = [];
    let requested;
    const firstRequest = new Promise((resolve) => { requested = resolve; });
    await page.route("**/opfs-worker.js", (route) => {
      served.push(new Promise((resolve) => setTimeout(resolve, 1000)).then(() => route.fulfill({ status: 404, body: "" })));
      requested();
    });
    await page.addInitScript(() => localStorage.setItem("mneme-playground", JSON.stringify({ backend: "memory", session: "no-worker", window: "1500" })));
    await page.goto(`${url}/web/playground.html`);
    await page.waitForFunction(() => !document.getElementById("open").disabled);
    // OPFS, then at once IndexedDB: OPFS's open fails a second later, after IndexedDB's succeeded.
    await page.selectOption("#backend", "opfs");
    await page.selectOption("#backend", "indexeddb");
    await page.waitForFunction(() => !document.getElementById("open").disabled);
    // The OPFS open asked for its worker, was refused it, and had half a second to show that.
    await firstRequest;
    await Promise.all(served);
    await page.waitForTimeout(500);
    assert((await page.textContent("#error")) === "", `a superseded open's failure is shown: ${await page.textContent("#error")}`);
    assert((await page.textContent("#status")).endsWith("(indexeddb)."), `not on IndexedDB: ${await page.textContent("#status")}`);
    // OPFS alone: its open fails, says so, and the page takes a choice again.
    await page.selectOption("#backend", "opfs");
    await page.waitForSelector("#error >> text=the OPFS worker stopped");
    const error = await page.textContent("#error");
    assert(error.includes(`storage/io: the OPFS worker stopped (its script did not load from ${url}/web/js/opfs-worker.js: serve js/opfs-worker.js there`), error);
    assert(!(await page.isDisabled("#open")), "Open stays disabled after a failed open");
    await page.close();
  });

  await test("the agent playground with a model endpoint: OpenAI-compatible and Anthropic, each sent Mneme's provider context", async () => {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    await page.goto(`${url}/web/playground.html`);
    await page.selectOption("#backend", "memory");
    for (const [kind, id] of [["openai", "endpoint-openai"], ["anthropic", "endpoint-anthropic"]]) {
      modelRequests.length = 0;
      await page.fill("#session", id);
      await page.click("#open");
      await page.selectOption("#model-kind", kind);
      await page.fill("#base-url", `${url}/mock-model`);
      await page.fill("#model-name", `${kind}-mock`);
      await page.fill("#api-key", "test-key");
      await page.fill("#prompt", "what is 6 * 7?");
      await page.click("#send");
      await page.waitForSelector("#transcript >> text=The mock model read: 42");
      await page.waitForFunction(() => !document.getElementById("send").disabled);
      assert(modelRequests.length === 2, `${kind}: ${modelRequests.length} requests`);
      const [first, second] = modelRequests.map((r) => r.body);
      assert(first.model === `${kind}-mock` && Array.isArray(first.tools) && first.tools.length === 2, `${kind}: the model and the tools are sent`);
      if (kind === "openai") {
        assert(modelRequests[0].headers.authorization === "Bearer test-key", "the key is sent as a bearer token");
        assert(first.messages[0].role === "system" && first.messages.at(-1).content === "what is 6 * 7?", `openai first: ${JSON.stringify(first.messages)}`);
        const roles = second.messages.map((m) => m.role).join(",");
        assert(roles === "system,user,assistant,tool", `openai second: ${roles}`);
        assert(second.messages[2].tool_calls[0].function.name === "calculate" && second.messages[3].content === "42", JSON.stringify(second.messages));
      } else {
        assert(modelRequests[0].headers["x-api-key"] === "test-key", "the key is sent as x-api-key");
        assert(typeof first.system === "string" && first.system.includes("Mneme playground"), "the system prompt is injected, not stored");
        const last = second.messages.at(-1);
        assert(second.messages.length === 3 && last.role === "user" && last.content[0].type === "tool_result" && last.content[0].content === "42", JSON.stringify(second.messages));
      }
      const status = await page.textContent("#status");
      assert(status.includes(id), status);
    }
    await page.screenshot({ path: join(ROOT, "target/playground-endpoint.png"), fullPage: true });
    // An endpoint that answers with an error page, not JSON: its status is what the page shows.
    // It answers a second late: meanwhile the backend cannot be changed under the turn.
    await page.route("**/no-model-here/**", (route) => setTimeout(() => route.continue(), 1000));
    await page.fill("#base-url", `${url}/no-model-here`);
    await page.fill("#prompt", "anyone there?");
    await page.click("#send");
    assert(await page.isDisabled("#backend"), "the backend can be changed while a turn is sent");
    await page.waitForSelector("#error >> text=the endpoint said 404");
    const refused = await page.textContent("#error");
    assert(refused.includes("not found: /no-model-here"), refused);
    await page.waitForFunction(() => !document.getElementById("send").disabled && !document.getElementById("backend").disabled);
    // The prompt the model never answered is taken back out of the session and given
    // back to the box: sending it again leaves no prompt without a reply.
    assert((await page.inputValue("#prompt")) === "anyone there?", "the unanswered prompt is back in the box");
    assert(!(await page.textContent("#transcript")).includes("anyone there?"), "the unanswered prompt is still in the conversation");
    // An endpoint that never answers fails the turn after the timeout, the same way.
    await page.route("**/silent-model/**", (route) => setTimeout(() => route.continue().catch(() => {}), 4000));
    await page.fill("#base-url", `${url}/silent-model`);
    await page.fill("#timeout", "1");
    await page.click("#send");
    await page.waitForSelector("#error >> text=did not answer within 1 s");
    await page.waitForFunction(() => !document.getElementById("send").disabled);
    assert((await page.inputValue("#prompt")) === "anyone there?", "the prompt the silent endpoint never answered is back in the box");
    assert(!(await page.textContent("#transcript")).includes("anyone there?"), "the prompt the silent endpoint never answered is still in the conversation");
    await page.fill("#timeout", "120");
    // Arguments that are not JSON get an error result; the model reads it and answers.
    await page.selectOption("#model-kind", "openai");
    await page.fill("#base-url", `${url}/mock-model`);
    await page.fill("#prompt", "call it with broken arguments: 6 * 7");
    await page.click("#send");
    await page.waitForSelector("#transcript >> text=The mock model read: the arguments are not JSON");
    await page.waitForFunction(() => !document.getElementById("send").disabled);
    // A base URL typed with `/v1` is not doubled.
    modelRequests.length = 0;
    await page.selectOption("#model-kind", "anthropic");
    await page.fill("#base-url", `${url}/mock-model/v1/`);
    await page.fill("#prompt", "what is 1 + 1?");
    await page.click("#send");
    await page.waitForSelector('#transcript >> text="The mock model read: 2"');
    await page.waitForFunction(() => !document.getElementById("send").disabled);
    assert(modelRequests.length === 2 && modelRequests.every((r) => r.path === "/mock-model/v1/messages"), modelRequests.map((r) => r.path).join(" "));
    // A context over the window is compacted before the request, summarised by the
    // endpoint (which has answered with this URL and key): first a request without
    // tools, then the turn's, which carries the summary.
    modelRequests.length = 0;
    await page.fill("#window", "200");
    await page.fill("#prompt", `what is 2 + 2? ${"please ".repeat(200)}`);
    await page.click("#send");
    await page.waitForSelector('#transcript >> text="The mock model read: 4"');
    await page.waitForFunction(() => !document.getElementById("send").disabled);
    assert((await page.textContent("#error")).trim() === "", await page.textContent("#error"));
    const [summarising, turn] = modelRequests;
    assert(!summarising.body.tools && summarising.body.messages[0].content.startsWith("You are summarizing"), JSON.stringify(summarising.body).slice(0, 300));
    assert(turn.body.tools && JSON.stringify(turn.body.messages[0]).includes("This session is being continued"), JSON.stringify(turn.body.messages[0]).slice(0, 300));
    await page.waitForSelector("#transcript >> text=compacted (auto)");
    assert(errors.length === 0, errors.join("\n"));
    await page.close();
  });
  await test("opfs: two playground tabs sending to one session take turns: neither turn is interleaved with the other's", async () => {
    const tab = async (delay) => {
      const page = await context.newPage();
      page.on("pageerror", (error) => console.log(`     page error: ${error}`));
      if (delay) await page.route("**/mock-model/**", (route) => setTimeout(() => route.continue().catch(() => {}), delay));
      await page.goto(`${url}/web/playground.html`);
      await page.selectOption("#backend", "opfs");
      await page.fill("#session", "two-tabs");
      await page.click("#open");
      await page.selectOption("#model-kind", "anthropic");
      await page.fill("#base-url", `${url}/mock-model`);
      await page.fill("#api-key", "test-key");
      return page;
    };
    // The first tab's model answers slowly, so the second sends while its turn runs.
    const [slow, quick] = [await tab(700), await tab(0)];
    await slow.fill("#prompt", "what is 1 + 1?");
    await slow.click("#send");
    await slow.waitForSelector("#transcript >> text=what is 1 + 1?");
    await quick.fill("#prompt", "what is 2 + 2?");
    await quick.click("#send");
    await quick.waitForSelector("#status >> text=Waiting for another tab's turn");
    await quick.waitForSelector('#transcript >> text="The mock model read: 4"');
    await quick.waitForFunction(() => !document.getElementById("send").disabled);
    await slow.waitForFunction(() => !document.getElementById("send").disabled);
    const said = await quick.$$eval("#transcript li .body", (bodies) => bodies.map((b) => b.textContent));
    const expected = ["what is 1 + 1?", "← 2", "The mock model read: 2", "what is 2 + 2?", "← 4", "The mock model read: 4"];
    const order = expected.map((text) => said.findIndex((s) => s === text));
    assert(order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1])), `the conversation: ${JSON.stringify(said)}`);
    assert(expected.every((text) => said.filter((s) => s === text).length === 1), `each turn's messages once: ${JSON.stringify(said)}`);
    await Promise.all([slow.close(), quick.close()]);
  });
  await test("the playground's memory panel: remember, recall, correct (supersede), forget, MEMORY.md; recalled memories reach the model unstored; search across sessions", async () => {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    await page.goto(`${url}/web/playground.html`);
    await page.selectOption("#backend", "memory");
    await page.fill("#session", "memory-chat");
    await page.click("#open");
    const remember = async (name, kind, body) => {
      await page.fill("#memory-name", name);
      await page.selectOption("#memory-kind", kind);
      await page.fill("#memory-body", body);
      await page.click("#remember");
      await page.waitForSelector(`#memories >> text=${name}`);
    };
    await remember("Answer style", "feedback", "Answer 6 * 7 style arithmetic in words, not digits.");
    await remember("Editor", "user", "The user edits in Helix.");
    await remember("Deploy day", "project", "Releases go out on Fridays.");
    assert((await page.$$("#memories li")).length === 3, "three memories listed");
    await page.fill("#recall-query", "which editor");
    await page.click("#recall");
    await page.waitForFunction(() => document.querySelector("#memories li")?.textContent.includes("Editor"));
    assert((await page.textContent("#memories li")).includes("score"), "recall hits show their score");
    await page.fill("#recall-query", "");
    await page.click("#recall");
    await page.waitForFunction(() => document.querySelectorAll("#memories li").length === 3);
    await page.click("#memories li:has-text('Deploy day') button.correct");
    await page.waitForSelector("#correcting >> text=correcting deploy_day");
    await page.fill("#memory-body", "Releases go out on Tuesdays now.");
    await page.click("#remember");
    await page.waitForFunction(() => document.querySelector("#memories")?.textContent.includes("Tuesdays"));
    await page.click("#memories li:has-text('Editor') button.forget");
    await page.waitForFunction(() => !document.querySelector("#memories")?.textContent.includes("Helix"));
    const memoryMd = await page.textContent("#memory-md");
    assert(memoryMd.includes("(deploy_day_2.md)") && !memoryMd.includes("(deploy_day.md)") && !memoryMd.includes("(editor.md)"), memoryMd);

    // A prompt carries the memories that match it to the model, as system context.
    modelRequests.length = 0;
    await page.selectOption("#model-kind", "openai");
    await page.fill("#base-url", `${url}/mock-model`);
    await page.fill("#model-name", "openai-mock");
    await page.fill("#api-key", "test-key");
    await page.fill("#prompt", "what is 6 * 7?");
    await page.click("#send");
    await page.waitForSelector("#transcript >> text=The mock model read: 42");
    await page.waitForFunction(() => !document.getElementById("send").disabled);
    const system = modelRequests[0].body.messages.filter((m) => m.role === "system").map((m) => m.content).join("\n");
    assert(system.includes("Answer style") && !system.includes("Deploy day"), `the matching memory, and only it, is sent: ${system}`);
    assert(!(await page.textContent("#transcript")).includes("What you remember"), "recalled memories are not stored in the session");

    // Search finds the reply across sessions and opens its session.
    await page.fill("#session", "another-chat");
    await page.click("#open");
    await page.fill("#search-query", "mock model read");
    await page.click("#search");
    await page.waitForSelector("#search-hits >> text=memory-chat");
    await page.click("#search-hits li:has-text('memory-chat')");
    await page.waitForFunction(() => document.getElementById("session").value === "memory-chat");
    await page.screenshot({ path: join(ROOT, "target/playground-memory.png"), fullPage: true });
    assert(errors.length === 0, errors.join("\n"));
    await page.close();
  });

  await test("the playground's consolidation: a dry run merges two memories of one name, Apply writes it (or, stopped part-way, offers Roll back), Roll back restores both (screenshot in target/playground-consolidation.png)", async () => {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    await page.goto(`${url}/web/playground.html`);
    await page.selectOption("#backend", "memory");
    await page.fill("#session", "dream-chat");
    await page.click("#open");
    for (const [name, body] of [["Editor", "The user edits in vim."], ["editor", "The user edits in Helix now."], ["Deploy day", "Releases go out on Fridays."]]) {
      await page.fill("#memory-name", name);
      await page.selectOption("#memory-kind", "user");
      await page.fill("#memory-body", body);
      await page.click("#remember");
      await page.waitForFunction((body) => document.querySelector("#memories")?.textContent.includes(body.split(" ").pop().replace(".", "")), body);
    }
    await page.click("#consolidate");
    await page.waitForSelector("#consolidation >> text=Would change");
    const dry = await page.textContent("#consolidation");
    assert(/added editor_3 from (editor \+ editor_2|editor_2 \+ editor)/.test(dry) && dry.includes("superseded editor_2") && dry.includes("superseded editor "), dry);
    assert((await page.$$("#memories li")).length === 3, "a dry run writes nothing");

    // Applying stops after the consolidation is recorded (the quota is full at the first
    // memory it writes): applying again would be refused, so Roll back is offered.
    await page.evaluate(() => globalThis.mneme.storage.faults.arm(2));
    await page.click("#apply-consolidation");
    await page.waitForSelector("#consolidation >> text=stopped part-way");
    assert((await page.textContent("#error")).includes("quota"), await page.textContent("#error"));
    assert(await page.isDisabled("#apply-consolidation") && !(await page.isDisabled("#rollback-consolidation")), "Roll back, not Apply, is offered");
    await page.evaluate(() => globalThis.mneme.storage.faults.arm(0));
    await page.click("#rollback-consolidation");
    await page.waitForSelector("#consolidation >> text=Rolled back");
    await page.waitForFunction(() => document.querySelectorAll("#memories li").length === 3);
    await page.click("#consolidate");
    await page.waitForSelector("#consolidation >> text=Would change");

    await page.click("#apply-consolidation");
    await page.waitForSelector("#consolidation >> text=Applied");
    await page.waitForFunction(() => document.querySelectorAll("#memories li").length === 2);
    const merged = await page.textContent("#memory-md");
    assert(merged.includes("(editor_3.md)") && !merged.includes("(editor.md)") && !merged.includes("(editor_2.md)"), merged);
    await page.screenshot({ path: join(ROOT, "target/playground-consolidation.png"), fullPage: true });
    await page.click("#rollback-consolidation");
    await page.waitForSelector("#consolidation >> text=Rolled back");
    await page.waitForFunction(() => document.querySelectorAll("#memories li").length === 3);
    const restored = await page.textContent("#memory-md");
    assert(restored.includes("(editor.md)") && restored.includes("(editor_2.md)") && !restored.includes("(editor_3.md)"), restored);
    assert(errors.length === 0, errors.join("\n"));
    await page.close();
  });
} finally {
  await context.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}

finish("browser");
