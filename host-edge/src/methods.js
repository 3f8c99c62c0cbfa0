// The store methods a Durable Object serves over RPC (`MnemeStore.call`): every method
// of the JavaScript API (js/api.js) but those that need a live object on the
// caller's side (`compact` calls the caller's summariser) or end the object's store.
import { Mneme } from "../../host-node/gen/api.js";

const LOCAL = new Set(["constructor", "close", "compact"]);
export const METHODS = Object.getOwnPropertyNames(Mneme.prototype).filter((name) => !LOCAL.has(name));
