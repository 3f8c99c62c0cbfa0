// MnemeMemoryTool where the Anthropic SDK wants its own memory-tool handlers:
// type-checked (strict) by anthropic-memory.mjs against the SDK's declarations, never run.
import { betaMemoryTool, type MemoryToolHandlers } from "@anthropic-ai/sdk/helpers/beta/memory";
import { MnemeMemoryTool } from "../js/anthropic.js";
import { Mneme } from "../js/mneme.js";

export const handlers: MemoryToolHandlers = new MnemeMemoryTool(await Mneme.open({ root: "./data" }), await Mneme.projectOf("/home/me/app"));
export const tool = betaMemoryTool(handlers);
