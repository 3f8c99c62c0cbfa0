// `@mneme/node/anthropic`: Claude's memory tool (`memory_20250818`) for the Anthropic
// SDK (`@anthropic-ai/sdk`), kept in a Mneme store. `MnemeMemoryTool` is a handler set
// of the SDK's `MemoryToolHandlers`, as its own `BetaLocalFilesystemMemoryTool` is:
//
//   import Anthropic from "@anthropic-ai/sdk";
//   import { betaMemoryTool } from "@anthropic-ai/sdk/helpers/beta/memory";
//   import { Mneme } from "@mneme/node";
//   import { MnemeMemoryTool } from "@mneme/node/anthropic";
//   const memory = betaMemoryTool(new MnemeMemoryTool(await Mneme.open({ root: "./data" }), await Mneme.projectOf(process.cwd())));
//   const runner = new Anthropic().beta.messages.toolRunner({ model, max_tokens: 1024, messages, tools: [memory] });
//
// Every command runs the core's rule (the one `mneme mcp` runs): a folder `/memories`
// of Markdown files, one memory each, that MEMORY.md lists and recall finds; `delete`
// archives, `rename` supersedes. A refusal is thrown as the SDK's `ToolError`, which the
// runner gives back to the model marked `is_error`; a MnemeError is the caller's or the
// store's failure.
import { ToolError } from "@anthropic-ai/sdk/lib/tools/ToolError";

export class MnemeMemoryTool {
  /** The memory tool over `store`'s memories of `project` (`await Mneme.projectOf(cwd)`; null: the global ones). */
  constructor(store, project = null) {
    if (typeof store?.memoryTool !== "function") throw new TypeError("MnemeMemoryTool needs an open Mneme store (await Mneme.open(...))");
    this.store = store;
    this.project = project;
  }

  async #run(command) {
    const { content, is_error } = await this.store.memoryTool(this.project, command);
    if (is_error) throw new ToolError(content);
    return content;
  }

  view(command) { return this.#run(command); }
  create(command) { return this.#run(command); }
  str_replace(command) { return this.#run(command); }
  insert(command) { return this.#run(command); }
  delete(command) { return this.#run(command); }
  rename(command) { return this.#run(command); }
}
