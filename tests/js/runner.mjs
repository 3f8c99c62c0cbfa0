// The few lines every Node test script here shares (web/test/run.mjs, clients/run.mjs,
// host-node/test/run.mjs):
// run named async tests one after another, report each, and end with the count.
let failed = 0;

export async function test(name, body) {
  const started = performance.now();
  try {
    await body();
    console.log(`ok   ${name} (${Math.round(performance.now() - started)} ms)`);
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${name}\n     ${String(error?.stack ?? error).split("\n").join("\n     ")}`);
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
