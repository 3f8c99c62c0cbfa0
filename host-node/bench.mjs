// The Node host's numbers: per-call cost through the jco-transpiled component, next to
// the `mneme` CLI's FsStorage through wasmtime in-process (the `mneme-bench` rows) for
// comparison in the README. Prints a table; asserts nothing.
//   node host-node/bench.mjs [appends]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Mneme } from "./js/mneme.js";

const appends = Number(process.argv[2] ?? 2000);
const scratch = mkdtempSync(join(tmpdir(), "mneme-node-bench-"));
const rows = [];
const time = async (what, count, body) => {
  const started = performance.now();
  await body();
  const ms = performance.now() - started;
  rows.push([what, count, `${((ms * 1000) / count).toFixed(1)} µs`, `${ms.toFixed(0)} ms`]);
};
try {
  const opened = performance.now();
  const store = await Mneme.open({ root: join(scratch, "fsync") });
  rows.push(["open (compile + instantiate)", 1, "", `${(performance.now() - opened).toFixed(1)} ms`]);
  const text = "x".repeat(200);
  await time("append, fsync", appends, async () => { for (let i = 0; i < appends; i++) await store.append("s", { role: "user", text, cwd: "/w" }); });
  const buffered = await Mneme.open({ root: join(scratch, "buffered"), durability: "buffered" });
  await time("append, buffered", appends, async () => { for (let i = 0; i < appends; i++) await buffered.append("s", { role: "user", text, cwd: "/w" }); });
  // One untimed pass first, on another session: the rows above ran before the JIT had
  // settled on this loop.
  await buffered.append("warm-up", { role: "user", text, cwd: "/w" });
  await buffered.hold("warm-up");
  for (let i = 0; i < appends; i++) await buffered.append("warm-up", { role: "user", text, cwd: "/w" });
  await buffered.release("warm-up");
  await buffered.hold("s");
  await time("append, buffered, session held", appends, async () => { for (let i = 0; i < appends; i++) await buffered.append("s", { role: "user", text, cwd: "/w" }); });
  await buffered.release("s");
  const turn = [
    { role: "assistant", id: "msg", content: [{ type: "text", text: "calling" }, { type: "tool_use", id: "t1", name: "calc", input: { x: 1 } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "2" }] },
  ];
  await time("append a turn (2 entries), buffered", appends / 4, async () => {
    for (let i = 0; i < appends / 4; i++) await buffered.appendTurn("turns", turn, { cwd: "/w" });
  });
  await time(`load (${2 * appends} entries)`, 10, async () => { for (let i = 0; i < 10; i++) await buffered.load("s"); });
  await time(`context (${2 * appends} entries)`, 10, async () => { for (let i = 0; i < 10; i++) await buffered.context("s"); });
  await time("list (3 sessions)", 100, async () => { for (let i = 0; i < 100; i++) await buffered.list(); });
  await store.close();
  await buffered.close();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`| operation | calls | per call | total |\n|---|---|---|---|`);
for (const row of rows) console.log(`| ${row.join(" | ")} |`);
