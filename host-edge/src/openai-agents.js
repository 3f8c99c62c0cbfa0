// The OpenAI Agents SDK's Session at the edge: a Worker that runs the SDK keeps each
// session in a Durable Object's store, over RPC.
//
//   import { MnemeSession, objectStore } from "./openai-agents.js";
//   const store = objectStore(env.STORES.get(env.STORES.idFromName("acme")));
//   const result = await run(agent, input, { session: new MnemeSession("chat-1", store, { cwd: "/acme" }) });
import { MnemeError } from "../../host-node/gen/api.js";
import { METHODS } from "./methods.js";

export { MnemeSession } from "../../host-node/gen/openai-agents.js";

/** The store in Durable Object `stub` with the Mneme API: each method a call over RPC, its error a MnemeError again. */
export function objectStore(stub) {
  const store = {};
  for (const method of METHODS) {
    store[method] = async (...args) => {
      const result = await stub.call(method, args);
      if (result.err) throw new MnemeError(result.err.kind, result.err.message, result.err.details);
      return result.ok;
    };
  }
  return store;
}
