// MnemeSession where the OpenAI Agents SDK wants its own Session: type-checked (strict)
// by openai-agents.mjs against the SDK's declarations, never run.
import type { Session } from "@openai/agents";
import { MnemeSession } from "../js/openai-agents.js";
import { Mneme } from "../js/mneme.js";

export const session: Session = new MnemeSession("conversation-1", await Mneme.open({ root: "./sessions" }));
