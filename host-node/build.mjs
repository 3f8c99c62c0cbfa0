// Transpiles the Mneme component (target/mneme.component.wasm, which `cargo build
// -p mneme-host` leaves there) into JavaScript with jco, into host-node/gen/.
// Instantiation is explicit and synchronous: every store gets its own instance with
// its own storage imports, and Node 20 has no JSPI, so imports stay synchronous.
//
// jco is pinned at 1.11.2: on this component its output opens in 7 ms and appends
// 2–3× faster than jco 1.35's (whose async task bookkeeping costs every call; the
// README's Node table has both).
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const TARGET = process.env.CARGO_TARGET_DIR ?? join(HERE, "..", "target");
const COMPONENT = process.env.MNEME_COMPONENT ?? join(TARGET, "mneme.component.wasm");
const JCO = join(HERE, "node_modules", ".bin", "jco");
const OUT = join(HERE, "gen");

if (!existsSync(COMPONENT)) {
  console.error(`error: no component at ${COMPONENT}: build it first with \`cargo build --release -p mneme-host\``);
  process.exit(1);
}
if (!existsSync(JCO)) {
  console.error(`error: jco is not installed: run \`npm ci --prefix host-node\` (cargo xtask setup does)`);
  process.exit(1);
}
rmSync(OUT, { recursive: true, force: true });
const transpiled = spawnSync(JCO, ["transpile", COMPONENT, "--name", "mneme", "--instantiation", "sync", "--quiet", "-o", OUT], { stdio: "inherit" });
if (transpiled.status !== 0) {
  console.error(`error: jco transpile failed (exit ${transpiled.status ?? transpiled.signal})`);
  process.exit(1);
}
// The JavaScript API every JavaScript package shares (js/), with the engine for jco's
// output, and the browser package's value types: the same API, written once.
for (const file of ["api.js", "jco.js", "wit.js", "options.js", "openai-agents.js"]) copyFileSync(join(HERE, "..", "js", file), join(OUT, file));
copyFileSync(join(HERE, "..", "web", "js", "mneme.d.ts"), join(OUT, "web.d.ts"));
console.log(`transpiled ${COMPONENT} into ${OUT}`);
