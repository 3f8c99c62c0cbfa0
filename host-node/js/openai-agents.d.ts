// The OpenAI Agents SDK's Session over a Mneme store. Items are typed loosely so the
// package type-checks without the SDK installed; the tests hold MnemeSession to the
// SDK's own `Session` interface.
import type { Mneme } from "./mneme.js";

/** An item of a session: what the SDK's `AgentInputItem` is. */
export type SessionItem = { [key: string]: unknown };

export declare class MnemeSession {
  /** Session `sessionId` (any string, as the SDK's) of `store`, an open Mneme store; a new one is filed under the project of `cwd` (default: the current directory). */
  constructor(sessionId: string, store: Mneme, options?: { cwd?: string });
  readonly sessionId: string;
  readonly store: Mneme;
  readonly cwd: string;
  getSessionId(): Promise<string>;
  /** The id of the Mneme session that keeps the items (what `mneme sessions show` and the store's methods take): `sessionId` itself when Mneme takes it as an id (ASCII letters, digits, `-`, `_`, at most 128, not `agent-…` nor `…_part<N>`), else a mapping of it (`user:42` is `user-42_` and a hash). */
  mnemeId(): Promise<string>;
  /** The session's items, oldest first, as added; the newest `limit` when given. */
  getItems(limit?: number): Promise<any[]>;
  /** Adds `items` in one write: all of them land, or none. */
  addItems(items: SessionItem[]): Promise<void>;
  /** Soft-deletes the newest item and resolves with it; undefined when there is none. */
  popItem(): Promise<any | undefined>;
  /** Removes the session's files (all its items); a session not there is fine. */
  clearSession(): Promise<void>;
}
