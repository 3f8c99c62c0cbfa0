// The OpenAI Agents SDK's Session workload on Mneme in Node: 10,000 items of about
// 0.6 KB added in batches of 10 (`addItems`), then read back whole (`getItems`) by the
// same session and by a new one over the same folder, several runs back to back (these
// machines are noisy). Side by side in the same run: the SDK's own MemorySession (a
// ceiling: no storage at all). The SDK's SQLiteSession is Python's: see
// host-python/bench_openai_session.py. Prints a table; asserts nothing but that every
// item came back as added.
//
//   node host-node/bench-openai-session.mjs [runs]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySession } from "@openai/agents";
import { Mneme } from "./js/mneme.js";
import { MnemeSession } from "./js/openai-agents.js";

const ITEMS = 10_000;
const BATCH = 10;
const runs = Number(process.argv[2] ?? 3);
const words = "lorem ipsum dolor sit amet ".repeat(20);
const given = Array.from({ length: ITEMS }, (_, n) =>
  [
    { role: "user", content: `item ${n}: ${words}` },
    { type: "function_call", id: `fc_${n}`, callId: `call_${n}`, name: "search", arguments: JSON.stringify({ q: words.slice(0, 200) }), status: "completed" },
    { type: "function_call_result", callId: `call_${n - 1}`, name: "search", status: "completed", output: { type: "text", text: words } },
    { role: "assistant", status: "completed", content: [{ type: "output_text", text: words }] },
  ][n % 4],
);
const expected = JSON.stringify(given);

/** Items per second: added, read back by the session that added them, and by a new session over the same storage (`fresh`: null when there is none). */
async function measure(session, fresh) {
  let started = performance.now();
  for (let at = 0; at < given.length; at += BATCH) await session.addItems(given.slice(at, at + BATCH));
  const added = performance.now() - started;
  started = performance.now();
  const got = await session.getItems();
  const read = performance.now() - started;
  if (JSON.stringify(got) !== expected) throw new Error("the items did not come back as added");
  let readCold = null;
  if (fresh) {
    const other = await fresh();
    started = performance.now();
    const cold = await other.session.getItems();
    readCold = performance.now() - started;
    if (JSON.stringify(cold) !== expected) throw new Error("the items did not come back as added");
    await other.close();
  }
  return [ITEMS / (added / 1000), ITEMS / (read / 1000), readCold === null ? null : ITEMS / (readCold / 1000)];
}

const scratch = mkdtempSync(join(tmpdir(), "mneme-openai-bench-"));
const results = new Map();
try {
  for (let run = 0; run < runs; run++) {
    for (const durability of ["fsync", "buffered"]) {
      const root = join(scratch, `${durability}-${run}`);
      const open = async () => {
        const store = await Mneme.open({ root, durability });
        return { session: new MnemeSession("bench", store, { cwd: "/home/me/app" }), close: () => store.close() };
      };
      const first = await open();
      const row = `Mneme MnemeSession, folder, ${durability === "fsync" ? "fsync per batch" : "buffered"}`;
      results.set(row, [...(results.get(row) ?? []), await measure(first.session, open)]);
      await first.close();
    }
    const row = "SDK MemorySession (no storage)";
    results.set(row, [...(results.get(row) ?? []), await measure(new MemorySession(), null)]);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
const cell = (values) => values.map((v) => (v === null ? "—" : Math.round(v).toLocaleString("en-US"))).join(", ");
console.log(`${ITEMS.toLocaleString("en-US")} items of ~${(expected.length / ITEMS / 1000).toFixed(1)} KB, added in batches of ${BATCH}, then read back; ${runs} runs back to back`);
console.log("| session | addItems items/s (each run) | getItems, same session | getItems, new session |");
console.log("|---|---|---|---|");
for (const [name, measured] of results) console.log(`| ${name} | ${[0, 1, 2].map((c) => cell(measured.map((m) => m[c]))).join(" | ")} |`);
