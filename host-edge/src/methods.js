// The store methods a Durable Object serves over RPC (`MnemeStore.call`): every method
// of the JavaScript API (js/api.js) but those that need a live object on the
// caller's side (`compact` calls the caller's summariser) or end the object's store.
import { Mneme } from "../../host-node/gen/api.js";

const LOCAL = new Set(["constructor", "close", "compact"]);
export const METHODS = Object.getOwnPropertyNames(Mneme.prototype).filter((name) => !LOCAL.has(name));

// The operations of no store (`Mneme.projectOf`, `Mneme.checkBytes`, …) it serves over
// RPC (`MnemeStore.callStatic`): every static method of the API but `absolutePath`,
// which takes a relative path from a working directory a Worker does not have.
export const STATIC_METHODS = Object.getOwnPropertyNames(Mneme).filter((name) => typeof Mneme[name] === "function" && name !== "absolutePath");
