// The few lines every Node test script here shares (clients/, web/test/, host-node/test/,
// host-edge/test/, host-wasi/test/):
// run named async tests one after another, report each, and end with the count.
let failed = 0;

// The slowest test here takes seconds (but a build, which says so). One still running
// after this long is hung (a runtime deadlocked, a server that never answers): it fails
// by name and the script ends there, since a hung test cannot be stopped and the tests
// after it would share its state.
const HUNG_AFTER_MINUTES = 5;

export async function test(name, body, { hungAfterMinutes = HUNG_AFTER_MINUTES } = {}) {
  const started = performance.now();
  const hung = setTimeout(() => {
    console.log(`FAIL ${name}\n     still running after ${hungAfterMinutes} minutes: hung, so the tests after it were not run`);
    process.exit(1);
  }, hungAfterMinutes * 60_000);
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
