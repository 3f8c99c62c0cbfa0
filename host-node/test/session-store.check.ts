// MnemeSessionStore where the Claude Agent SDK wants its own SessionStore: type-checked
// (strict) by session-store.mjs against the SDK's declarations, never run.
import type { SessionStore } from "@anthropic-ai/claude-agent-sdk";
import { MnemeSessionStore } from "../js/claude-agent-sdk.js";
import { Mneme } from "../js/mneme.js";

export const store: SessionStore = new MnemeSessionStore(await Mneme.open({ root: "./sessions" }));
