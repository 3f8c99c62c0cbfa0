// The options objects of the JavaScript packages' methods (browser, Node, edge), in one
// table: the browser package imports it, the Node package's build copies it beside the
// transpiled component. Those of the methods js/api.js derives from the WIT are written
// by `cargo xtask codegen` between the markers. A destructured option that is misspelt (`{ providr: "openai" }`)
// or passed by position (`providerContext(id, "openai")`) leaves its default in force
// without a word; TypeScript refuses both, plain JavaScript did not.

/** Each method's options: the argument's position, the names it takes, and whether it must be given. */
export const OPTIONS = {
  append: [1, ["role", "text", "cwd", "uuid", "now"]],
  appendTurn: [2, ["provider", "cwd", "uuid", "now", "parent", "agent"]],
  importSession: [1, ["from", "id", "cwd", "origin", "uuid", "now"]],
  applyCompaction: [3, ["boundary", "summaryUuid", "now"]],
  compact: [1, ["settings", "mode", "summarize", "boundary", "summaryUuid", "now"]],
  memoryRecall: [2, ["limit", "all", "since", "until", "near", "embed", "model"]],
  resolve: [2, ["now", "newSessionId"]],
  rollover: [2, ["newSessionId", "boundary", "summaryUuid", "now"]],
  instructions: [0, ["cwd", "home", "managed", "paths", "externalImports"], true],
  // <operations: written by `cargo xtask codegen` from wit/, the options of the methods js/api.js derives; do not edit>
  crabStart: [2, ["project", "createdBy", "now"]],
  applyConsolidation: [3, ["dryRun", "now"]],
  providerContext: [1, ["provider", "model", "injections"]],
  fork: [1, ["from", "to", "now"]],
  search: [1, ["limit", "project", "since", "until"]],
  // </operations>
};

/** `given` as `method`'s options: nothing (unless `required`), or an object of the names it takes. */
export function checkOptions(method, given, names, MnemeError, required = false) {
  if (given === undefined && !required) return;
  if (given === null || typeof given !== "object" || Array.isArray(given)) {
    const what = given == null ? String(given) : Array.isArray(given) ? "an array" : `${typeof given} ${JSON.stringify(given)}`;
    throw new MnemeError("invalid-argument", `${method} takes its options as an object ({ ${names.join(", ")} }), not ${what}`);
  }
  const unknown = Object.keys(given).find((name) => !names.includes(name));
  if (unknown !== undefined) throw new MnemeError("invalid-argument", `${method}: unknown option \`${unknown}\`; it takes ${names.join(", ")}`);
}

/** Makes every method of `Class` in the table refuse options it does not take, as a rejected promise like its other errors. */
export function guardOptions(Class, MnemeError) {
  for (const [method, [at, names, required]] of Object.entries(OPTIONS)) {
    const run = Class.prototype[method];
    if (typeof run !== "function") throw new Error(`${Class.name} has no method ${method} for its options`);
    Class.prototype[method] = function (...args) {
      try {
        checkOptions(method, args[at], names, MnemeError, required);
      } catch (error) {
        return Promise.reject(error);
      }
      return run.apply(this, args);
    };
  }
}
