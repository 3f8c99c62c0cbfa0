// The TypeScript declarations against the package: typed.ts (an agent loop, `strict`) is
// type-checked with the Node package's and the browser package's mneme.d.ts, and with
// shapes.ts, which holds their value types to the WIT's (js/values.d.ts); then it is
// compiled and run on a folder. Run by `cargo xtask test` after host-node/build.mjs.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import { assert, finish, test } from "../../tests/js/runner.mjs";
import { OPTIONS, problems } from "./typescript.mjs";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const SOURCE = join(HERE, "typed.ts");

await test("the declarations type-check an agent loop written against them (strict)", async () => {
  // shapes.ts (written by `cargo xtask codegen`) holds the declarations' value types to the WIT's.
  const found = problems([SOURCE, join(HERE, "shapes.ts"), join(HERE, "../js/mneme.d.ts"), join(HERE, "../js/postgres.d.ts")]);
  assert(found.length === 0, found.join("\n"));
});

await test("the loop runs on the package and gets what the declarations promise", async () => {
  const { outputText } = ts.transpileModule(ts.sys.readFile(SOURCE), { compilerOptions: { ...OPTIONS, noEmit: false, module: ts.ModuleKind.ESNext } });
  // Beside the package's generated code, so the loop's relative import finds js/mneme.js.
  const compiled = join(HERE, "../gen/typed.mjs");
  mkdirSync(join(HERE, "../gen"), { recursive: true });
  writeFileSync(compiled, outputText);
  const { run } = await import(pathToFileURL(compiled).href);
  const root = mkdtempSync(join(tmpdir(), "mneme-typed-"));
  try {
    const seen = await run(root);
    assert(JSON.stringify(seen) === JSON.stringify(["turn", "context", "openai", "branches", "compaction", "errors"]), JSON.stringify(seen));
  } finally {
    rmSync(root, { recursive: true, force: true });
    // gen/ is packed into the npm tarball: nothing of the tests stays in it.
    rmSync(compiled, { force: true });
  }
});

finish("TypeScript declarations");
