// The OpenAI Agents SDK's Session over a Mneme store, for every JavaScript host: the
// Node package (`@mneme/node/openai-agents`) and the edge (a Durable Object's store over
// RPC, host-edge/src/openai-agents.js) take it from here.
//
//   import { Agent, run } from "@openai/agents";
//   import { Mneme } from "@mneme/node";
//   import { MnemeSession } from "@mneme/node/openai-agents";
//   const session = new MnemeSession("conversation-1", await Mneme.open({ root: "./sessions" }));
//   const result = await run(new Agent({ name: "Assistant" }), "hi", { session });
//
// Each item the SDK adds is a line of a Claude Code session (`projects/<project of
// cwd>/<id>.jsonl`, the id `await session.mnemeId()`: the SDK's id when Mneme takes it
// as one, else a mapping of it, `user:42` is `user-42_` and a hash) in Claude Code's
// shape with the item kept verbatim beside it: `getItems` gives each back as added
// (its own text, key order and all), and the session is one `mneme` shows, searches,
// prices and compacts (after a compaction the first item is the summary, a user
// message). `addItems` is one write: a batch lands whole or not at all. `popItem`
// soft-deletes (the line stays, tombstoned); `clearSession` removes the session's files
// (`store.archive(await session.mnemeId())` keeps them). The store's redaction applies
// (every kind by default): an item holding a secret comes back with it masked;
// `store.setRedaction([])` keeps every byte.

import { MnemeError } from "./api.js";
import { checkOptions } from "./options.js";

const STORE_METHODS = ["appendItems", "items", "popItem", "remove", "sessionIdOf"];

export class MnemeSession {
  /** The Mneme session id this session is kept under, once asked. */
  #mnemeId;

  /**
   * Session `sessionId` (any string, as the SDK's) of `store`, an open Mneme store (or
   * the edge's `objectStore(stub)`); a new session is filed under the project of `cwd`
   * (default: the process's working directory, `/` where there is none).
   */
  constructor(sessionId, store, options = {}) {
    // A misspelt option (`cwdd`) would file the session under another project.
    checkOptions("MnemeSession", options, ["cwd"], MnemeError);
    const { cwd = globalThis.process?.cwd?.() ?? "/" } = options;
    if (STORE_METHODS.some((method) => typeof store?.[method] !== "function")) {
      throw new TypeError("MnemeSession takes an open Mneme store (await Mneme.open({ root }), or objectStore(stub) on the edge)");
    }
    if (typeof sessionId !== "string") throw new TypeError(`the session id must be a string, not ${typeof sessionId}`);
    this.sessionId = sessionId;
    this.store = store;
    this.cwd = cwd;
  }

  async getSessionId() {
    return this.sessionId;
  }

  /** The id of the Mneme session that keeps the items: what `mneme sessions show` and the store's methods take. */
  async mnemeId() {
    this.#mnemeId ??= await this.store.sessionIdOf(this.sessionId);
    return this.#mnemeId;
  }

  /** The session's items, oldest first; the newest `limit` when given. */
  async getItems(limit) {
    return this.store.items(await this.mnemeId(), limit ?? null);
  }

  /** Adds `items` in one write: all of them land, or none. */
  async addItems(items) {
    // Anything but an empty array goes to the store, which refuses what is no array.
    if (!Array.isArray(items) || items.length > 0) await this.store.appendItems(await this.mnemeId(), items, { cwd: this.cwd });
  }

  /** Soft-deletes the newest item and resolves with it; undefined when there is none. */
  async popItem() {
    return (await this.store.popItem(await this.mnemeId())) ?? undefined;
  }

  /** Removes the session's files (all its items); a session not there is fine. */
  async clearSession() {
    try {
      await this.store.remove(await this.mnemeId());
    } catch (error) {
      if (error?.kind !== "session-not-found") throw error;
    }
  }
}
