// The Claude Agent SDK's SessionStore workload on Mneme in Node: 10,000 entries of
// about 0.6 KB appended in batches of 10, then loaded, several runs back to back (these
// machines are noisy). Side by side in the same run: the SDK's own InMemorySessionStore
// (a ceiling: no storage at all). The SDK's reference Postgres adapter was measured
// outside the project on these machines (issue 53): appends 1,000–12,300 entries/s
// (median about 2,000), loads about 74,000/s; each Mneme row gives its ratio to those
// medians. Mneme runs on a folder and on PostgreSQL (a throwaway local cluster). Prints
// a table; asserts nothing.
//
//   node host-node/bench-session-store.mjs [runs]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemorySessionStore } from "@anthropic-ai/claude-agent-sdk";
import { MnemeSessionStore } from "./js/claude-agent-sdk.js";
import { Mneme } from "./js/mneme.js";
import { PgStorage } from "./js/postgres.js";
import { PostgresCluster } from "../tests/js/postgres.mjs";

const ENTRIES = 10_000;
const BATCH = 10;
const REFERENCE_APPEND = 2_000;
const REFERENCE_LOAD = 74_000;
const runs = Number(process.argv[2] ?? 3);

const session = "00000000-0000-4000-8000-00000000feed";
const uuid = (n) => `00000000-0000-4000-8000-${String(n + 1).padStart(12, "0")}`;
const entries = Array.from({ length: ENTRIES }, (_, n) => {
  const role = n % 2 === 0 ? "user" : "assistant";
  return {
    type: role, uuid: uuid(n), parentUuid: n === 0 ? null : uuid(n - 1), sessionId: session, isSidechain: false, cwd: "/home/me/app",
    timestamp: `2026-12-01T09:${String(Math.floor(n / 600) % 60).padStart(2, "0")}:${String(Math.floor(n / 10) % 60).padStart(2, "0")}.${String(n % 1000).padStart(3, "0")}Z`,
    message: { role, content: [{ type: "text", text: `line ${n}: ` + "lorem ipsum dolor sit amet ".repeat(9) }] },
  };
});
const size = entries.reduce((sum, e) => sum + JSON.stringify(e).length, 0) / ENTRIES;
const key = { projectKey: "-home-me-app", sessionId: session };

async function measure(store) {
  let started = performance.now();
  for (let at = 0; at < ENTRIES; at += BATCH) await store.append(key, entries.slice(at, at + BATCH));
  const appended = (performance.now() - started) / 1000;
  started = performance.now();
  const loaded = await store.load(key);
  const read = (performance.now() - started) / 1000;
  if (loaded.length !== ENTRIES) throw new Error(`loaded ${loaded.length} of ${ENTRIES}`);
  return [ENTRIES / appended, ENTRIES / read];
}

const scratch = mkdtempSync(join(tmpdir(), "mneme-sdk-bench-"));
const results = new Map();
let cluster;
try {
  cluster = new PostgresCluster();
  for (let run = 0; run < runs; run++) {
    for (const [name, make] of [
      ["Mneme, folder, fsync per batch", async () => new MnemeSessionStore(await Mneme.open({ root: join(scratch, `fsync-${run}`) }))],
      ["Mneme, folder, buffered", async () => new MnemeSessionStore(await Mneme.open({ root: join(scratch, `buffered-${run}`), durability: "buffered" }))],
      ["Mneme, PostgreSQL (a local cluster)", async () => new MnemeSessionStore(await Mneme.open({ storage: new PgStorage(cluster.url, { schema: `bench_${run}` }) }))],
      ["SDK InMemorySessionStore (no storage)", async () => new InMemorySessionStore()],
    ]) {
      const store = await make();
      if (!results.has(name)) results.set(name, []);
      results.get(name).push(await measure(store));
      if (store instanceof MnemeSessionStore) await store.store.close();
    }
  }
} finally {
  cluster?.close();
  rmSync(scratch, { recursive: true, force: true });
}
const n = (x) => Math.round(x).toLocaleString("en");
console.log(`${n(ENTRIES)} entries of ~${(size / 1000).toFixed(1)} KB, appended in batches of ${BATCH}, then loaded; ${runs} runs back to back`);
console.log(`| store | append entries/s (each run) | × reference ${n(REFERENCE_APPEND)}/s | load entries/s (each run) | × reference ${n(REFERENCE_LOAD)}/s |`);
console.log("|---|---|---|---|---|");
for (const [name, measured] of results) {
  const appends = measured.map(([a]) => a);
  const loads = measured.map(([, b]) => b);
  console.log(
    `| ${name} | ${appends.map(n).join(", ")} | ${appends.map((a) => (a / REFERENCE_APPEND).toFixed(1)).join(", ")} | ${loads.map(n).join(", ")} | ${loads.map((b) => (b / REFERENCE_LOAD).toFixed(1)).join(", ")} |`,
  );
}
console.log(`| SDK reference Postgres adapter (measured outside the project; issue 53) | 1,000–12,300, median ~${n(REFERENCE_APPEND)} | 1.0 | ~${n(REFERENCE_LOAD)} | 1.0 |`);
