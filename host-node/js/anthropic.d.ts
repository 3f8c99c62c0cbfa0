// Claude's memory tool for the Anthropic SDK over a Mneme store. Commands are typed
// loosely so the package type-checks without the SDK installed; the tests hold
// MnemeMemoryTool to the SDK's own `MemoryToolHandlers`.
import type { Mneme } from "./mneme.js";

/** A command of the memory tool as the SDK parsed it from the model's tool_use input (its other fields as the API names them). */
export type MemoryCommand = { command: string };

export declare class MnemeMemoryTool {
  /** The memory tool over `store`'s memories of `project` (`await Mneme.projectOf(cwd)`; null: the global ones). */
  constructor(store: Mneme, project?: string | null);
  readonly store: Mneme;
  readonly project: string | null;
  /** Each resolves with the tool_result's text, or rejects with the SDK's ToolError for a refusal. */
  view(command: MemoryCommand): Promise<string>;
  create(command: MemoryCommand): Promise<string>;
  str_replace(command: MemoryCommand): Promise<string>;
  insert(command: MemoryCommand): Promise<string>;
  delete(command: MemoryCommand): Promise<string>;
  rename(command: MemoryCommand): Promise<string>;
}
