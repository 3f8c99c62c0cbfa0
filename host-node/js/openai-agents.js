// `@mneme/node/openai-agents`: the OpenAI Agents SDK's Session over a Mneme store. The
// class is every JavaScript host's (js/openai-agents.js, built into gen/).
export { MnemeSession } from "../gen/openai-agents.js";
