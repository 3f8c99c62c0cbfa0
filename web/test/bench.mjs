// `cargo xtask web-bench`: the browser build's numbers, in headless Chromium — the
// wasm's size (after wasm-opt, raw and gzip), the time to open a store (module
// compile included), loading a 10 MB transcript from each backend, and 100,000
// memories in one project on each backend: written, recalled, and recalled by a store
// opened afresh (which reads the saved recall index, not the 100,000 files).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { ROOT, serve } from "./serve.mjs";

const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const wasm = readFileSync(join(ROOT, "web/pkg/mneme_web_bg.wasm"));
const glue = readFileSync(join(ROOT, "web/pkg/mneme_web.js"));
const { server, url } = await serve();
const profile = mkdtempSync(join(tmpdir(), "mneme-bench-"));
const context = await chromium.launchPersistentContext(profile, { executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", headless: true, args: ARGS });
const rows = [];
const memoryRows = [];
try {
  for (const backend of process.env.MNEME_BENCH_MEMORIES_ONLY ? [] : ["memory", "indexeddb", "opfs"]) {
    const page = await context.newPage();
    await page.goto(`${url}/web/test/harness.html`);
    await page.waitForFunction(() => window.harnessReady === true);
    const result = await page.evaluate(async (backend) => {
      const namespace = `bench-${crypto.randomUUID()}`;
      const opened = performance.now();
      const store = await Mneme.open({ backend, namespace });
      const openMs = performance.now() - opened;
      const lines = [];
      let size = 0;
      let parent = null;
      for (let i = 0; size < 10_000_000; i++) {
        const uuid = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
        const text = `Turn ${i}: ${"the build failed at step ".repeat(8 + (i % 9))}`;
        const message = i % 2 ? { role: "assistant", content: [{ type: "text", text }] } : { role: "user", content: text };
        const line = JSON.stringify({ parentUuid: parent, isSidechain: false, userType: "external", cwd: "/w", sessionId: "big", type: message.role, message, uuid, timestamp: "2026-01-01T00:00:00.000Z" });
        lines.push(line);
        size += line.length + 1;
        parent = uuid;
      }
      const bytes = new TextEncoder().encode(lines.join("\n") + "\n");
      await store.storage.replace("projects/-w/big.jsonl", bytes);
      const time = async (work) => {
        let best = Infinity;
        for (let run = 0; run < 3; run++) {
          const started = performance.now();
          await work();
          best = Math.min(best, performance.now() - started);
        }
        return best;
      };
      // The first list reads the transcript; later ones answer from the session index it saved.
      const listed = performance.now();
      await store.list();
      const listMs = performance.now() - listed;
      const loadMs = await time(() => store.load("big"));
      const entries = (await store.load("big")).entries.length;
      await store.close();
      await Mneme.destroy({ backend, namespace });
      return { openMs, loadMs, listMs, bytes: bytes.length, entries };
    }, backend);
    rows.push({ backend, ...result });
    await page.close();
  }
  for (const backend of (process.env.MNEME_BENCH_BACKENDS ?? "memory,indexeddb,opfs").split(",")) {
    const page = await context.newPage();
    page.on("crash", () => console.error(`the ${backend} page crashed`));
    page.on("console", (message) => console.error(`${backend}: ${message.text()}`));
    await page.goto(`${url}/web/test/harness.html`);
    await page.waitForFunction(() => window.harnessReady === true);
    const result = await page.evaluate(async ({ backend, count }) => {
      const namespace = `bench-memory-${crypto.randomUUID()}`;
      const words = ["deploy", "staging", "garden", "violin", "invoice", "harbor", "sprint", "recipe", "lantern", "quartz", "meadow", "ticket", "signal", "canvas", "orbit", "pepper", "ledger", "summit", "falcon", "mosaic"];
      const memory = (i) => {
        const pick = (k) => words[(i * 7 + k * 13 + Math.floor(i / 97)) % words.length];
        return { name: `Fact ${i}`, type: "project", description: `${pick(1)} and ${pick(2)} notes`, body: `On day ${i % 365} the team talked about the ${pick(3)}, the ${pick(4)} and the ${pick(5)}.`, topics: [pick(6)] };
      };
      let store = await Mneme.open({ backend, namespace });
      const batch = 10_000;
      const written = performance.now();
      for (let start = 0; start < count; start += batch) {
        const memories = [];
        for (let i = start; i < Math.min(count, start + batch); i++) memories.push(memory(i));
        if (start === 0) memories[0] = { name: "Vault code", type: "reference", description: "where the code is", body: "The vault code is xylophonic-quasar-7." };
        await store.memoryAddMany("-bench", memories, 1_779_400_000_000 + start);
        console.log(`${start + memories.length} memories written, ${((performance.now() - written) / 1000).toFixed(1)} s`);
      }
      const writeMs = performance.now() - written;
      const queries = Array.from({ length: 50 }, (_, i) => `what did the team say about the ${words[i % words.length]} and the ${words[(i * 3 + 1) % words.length]}`);
      const times = [];
      for (const query of queries) {
        const asked = performance.now();
        await store.memoryRecall("-bench", query, { limit: 10 });
        times.push(performance.now() - asked);
      }
      times.sort((a, b) => a - b);
      const planted = (await store.memoryRecall("-bench", "xylophonic", { limit: 10 })).hits.findIndex((h) => h.name === "Vault code");
      await store.close();
      const reopened = performance.now();
      store = await Mneme.open({ backend, namespace });
      const first = await store.memoryRecall("-bench", queries[0], { limit: 10 });
      const firstMs = performance.now() - reopened;
      const listed = (await store.memoryList("-bench")).length;
      await store.close();
      await Mneme.destroy({ backend, namespace });
      return { writeMs, median: times[times.length >> 1], p90: times[Math.floor(times.length * 0.9)], planted, firstMs, rebuilt: first.report !== null, listed };
    }, { backend, count: Number(process.env.MNEME_BENCH_MEMORIES ?? 100_000) });
    memoryRows.push({ backend, ...result });
    await page.close();
  }
} finally {
  await context.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
const mb = (n) => (n / 1e6).toFixed(1);
console.log(`mneme_web_bg.wasm after wasm-opt: ${(wasm.length / 1024).toFixed(0)} KiB raw, ${(gzipSync(wasm, { level: 9 }).length / 1024).toFixed(0)} KiB gzip; JS glue ${(glue.length / 1024).toFixed(0)} KiB\n`);
console.log("| backend | open (first, compile included) | load 10 MB | throughput | list (scan, no index yet) | entries |");
console.log("|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(`| ${r.backend} | ${r.openMs.toFixed(1)} ms | ${r.loadMs.toFixed(0)} ms | ${(r.bytes / 1e6 / (r.loadMs / 1000)).toFixed(0)} MB/s | ${r.listMs.toFixed(0)} ms (${(r.bytes / 1e6 / (r.listMs / 1000)).toFixed(0)} MB/s) | ${r.entries} (${mb(r.bytes)} MB) |`);
}
const count = Number(process.env.MNEME_BENCH_MEMORIES ?? 100_000);
console.log(`\n| backend | write ${count.toLocaleString("en")} memories (batches of 10,000) | recall top-10, median / p90 of 50 | a planted rare token | reopen + first recall (saved index read) | memories listed |`);
console.log("|---|---|---|---|---|---|");
for (const r of memoryRows) {
  const planted = r.planted < 0 ? "not found" : `found, rank ${r.planted + 1}`;
  console.log(`| ${r.backend} | ${(r.writeMs / 1000).toFixed(1)} s (${(count / (r.writeMs / 1000)).toFixed(0)}/s) | ${r.median.toFixed(1)} / ${r.p90.toFixed(1)} ms | ${planted} | ${r.backend === "memory" ? "– (nothing persists)" : `${r.firstMs.toFixed(0)} ms${r.rebuilt ? " (rebuilt)" : ""}`} | ${r.listed} |`);
}
