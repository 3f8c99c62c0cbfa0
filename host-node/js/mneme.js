// Mneme in Node: the Mneme component, transpiled by jco (host-node/gen/, `cargo xtask
// node`), over node:fs. The API is the browser package's (web/js/mneme.js): the same
// methods, the same JSON shapes (mneme-core's), errors as MnemeError with the core's
// `kind`. The store is a folder laid out like a Claude Code home, shared safely with
// the `mneme` CLI and other Node processes (see storage.js).
//
//   import { Mneme } from "@mneme/node";
//   const store = await Mneme.open({ root: "./data" });
//   await store.append("chat-1", { role: "user", text: "hello", cwd: process.cwd() });
//   const { messages } = await store.context("chat-1");
//
// Each store is its own component instance with its own storage imports. Calls run
// synchronously (Node 20 has no JSPI); methods return promises only to keep the
// browser package's shape.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { instantiate } from "../gen/mneme.js";
import { Mneme as Api, MnemeError, setFreeEngine } from "../gen/api.js";
import { JcoEngine, NO_STORAGE, freeEngine, instance } from "../gen/jco.js";
import { checkOptions } from "../gen/options.js";
import { FsStorage, StorageFailure } from "./storage.js";

export { FsStorage, MnemeError, StorageFailure };

const modules = new Map();
/** The component's core modules, compiled once per process. */
function coreModule(path) {
  if (!modules.has(path)) modules.set(path, new WebAssembly.Module(readFileSync(new URL(`../gen/${path}`, import.meta.url))));
  return modules.get(path);
}

let utility;
/** An instance for the calls that need no store. */
function tools() {
  utility ??= instance(instantiate, coreModule, NO_STORAGE);
  return utility;
}

// The operations of no store (`Mneme.projectOf`, …) run on that instance.
setFreeEngine(() => freeEngine(tools()));

const OPEN_OPTIONS = ["root", "storage", "partBytes", "totalBytes", "lockTimeoutMs", "durability", "readOnly"];

export class Mneme extends Api {
  /**
   * Opens the store in the folder `root` (created on the first write).
   * `durability`: "fsync" (default; an acknowledged write survives a power cut) or
   * "buffered". `readOnly`: refuse every write (a Claude Code home you only read).
   * `storage`: a storage of your own with FsStorage's synchronous methods.
   */
  static async open(options = {}) {
    // A misspelt option (`readonly`) would leave its default in force: a store meant
    // read-only would be written.
    checkOptions("open", options, OPEN_OPTIONS, MnemeError);
    let { root, storage, partBytes = 0, totalBytes = 0, lockTimeoutMs = 30_000, durability = "fsync", readOnly = false } = options;
    if (!storage && typeof root !== "string") throw new MnemeError("invalid-argument", "open needs `root`, the store's folder (or a `storage`)");
    try {
      storage ??= new FsStorage(root, { durability, lockTimeoutMs, readOnly });
    } catch (error) {
      throw error instanceof TypeError ? new MnemeError("invalid-argument", error.message) : error;
    }
    return new Mneme(new JcoEngine(instance(instantiate, coreModule, storage), storage, { partBytes, totalBytes }));
  }

  /** A relative working directory taken from the process's, as the CLI and the Python package take it. */
  static absolutePath(cwd) {
    return resolve(cwd);
  }

}
