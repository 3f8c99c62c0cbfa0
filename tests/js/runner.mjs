// The few lines every Node test script here shares (clients/, web/test/, host-node/test/,
// host-edge/test/, host-wasi/test/):
// run named async tests one after another, report each, and end with the count.
let failed = 0;

// The slowest test here takes seconds. One still running after this long is hung (a
// runtime deadlocked, a server that never answers): it fails by name and the script ends
// there, since a hung test cannot be stopped and the tests after it would share its state.
const HUNG_AFTER_MS = 5 * 60 * 1000;

export async function test(name, body) {
  const started = performance.now();
  const hung = setTimeout(() => {
    console.log(`FAIL ${name}\n     still running after ${HUNG_AFTER_MS / 60_000} minutes: hung, so the tests after it were not run`);
    process.exit(1);
  }, HUNG_AFTER_MS);
  try {
    await body();
    console.log(`ok   ${name} (${Math.round(performance.now() - started)} ms)`);
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${name}\n     ${String(error?.stack ?? error).split("\n").join("\n     ")}`);
  } finally {
    clearTimeout(hung);
  }
}

export function assert(condition, message) {
  if (!condition) throw new Error(message);
}

/** Exits with a line for `what` that says whether every test passed. */
export function finish(what) {
  console.log(failed === 0 ? `every ${what} test passed` : `${failed} ${what} test(s) failed`);
  process.exit(failed === 0 ? 0 : 1);
}
