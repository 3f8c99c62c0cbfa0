// `cargo xtask web-bench`: the browser build's numbers, in headless Chromium — the
// wasm's size (after wasm-opt, raw and gzip), the time to open a store (module
// compile included), and loading a 10 MB transcript from each backend.
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
try {
  for (const backend of ["memory", "indexeddb", "opfs"]) {
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
      const loadMs = await time(() => store.load("big"));
      const listMs = await time(() => store.list());
      const entries = (await store.load("big")).entries.length;
      await store.close();
      await Mneme.destroy({ backend, namespace });
      return { openMs, loadMs, listMs, bytes: bytes.length, entries };
    }, backend);
    rows.push({ backend, ...result });
    await page.close();
  }
} finally {
  await context.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
const mb = (n) => (n / 1e6).toFixed(1);
console.log(`mneme_web_bg.wasm after wasm-opt: ${(wasm.length / 1024).toFixed(0)} KiB raw, ${(gzipSync(wasm, { level: 9 }).length / 1024).toFixed(0)} KiB gzip; JS glue ${(glue.length / 1024).toFixed(0)} KiB\n`);
console.log("| backend | open (first, compile included) | load 10 MB | throughput | list (scan) | entries |");
console.log("|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(`| ${r.backend} | ${r.openMs.toFixed(1)} ms | ${r.loadMs.toFixed(0)} ms | ${(r.bytes / 1e6 / (r.loadMs / 1000)).toFixed(0)} MB/s | ${r.listMs.toFixed(0)} ms (${(r.bytes / 1e6 / (r.listMs / 1000)).toFixed(0)} MB/s) | ${r.entries} (${mb(r.bytes)} MB) |`);
}
