// How the tests type-check TypeScript against the packages' declarations: strict,
// NodeNext modules, and the problems a program has, each with where it is.
import ts from "typescript";

export const OPTIONS = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  // The Node declarations import the browser package's (copied into gen/) by their .d.ts path.
  allowImportingTsExtensions: true,
  types: [],
  lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
};

/** The type checker's complaints about `files` under `options`, one line each. */
export function problems(files, options = OPTIONS) {
  return ts.getPreEmitDiagnostics(ts.createProgram(files, options)).map((d) => {
    const where = d.file ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ` : "";
    return where + ts.flattenDiagnosticMessageText(d.messageText, "\n");
  });
}
