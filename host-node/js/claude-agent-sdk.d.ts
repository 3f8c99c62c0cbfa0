// The Claude Agent SDK's SessionStore over a Mneme store. The shapes are the SDK's
// (`SessionKey`, `SessionStoreEntry`), written out so the package type-checks without
// the SDK installed; the tests hold MnemeSessionStore to the SDK's own `SessionStore`.
import type { Mneme } from "./mneme.js";

export interface SessionKey {
  projectKey: string;
  sessionId: string;
  /** A sub-agent's transcript (`subagents/agent-<id>`); left out for the session's own. */
  subpath?: string;
}

export type SessionStoreEntry = { type: string; uuid?: string; timestamp?: string; [key: string]: unknown };

export declare class MnemeSessionStore {
  /** A SessionStore over `store`, an open Mneme store. */
  constructor(store: Mneme);
  readonly store: Mneme;
  /** Appends `entries` to the transcript at `key` in one write; a retried batch is written once. */
  append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void>;
  /** Every entry appended at `key`, in order; null if none ever was. */
  load(key: SessionKey): Promise<SessionStoreEntry[] | null>;
  /** The project's sessions, each with when its lines were last written (epoch milliseconds). */
  listSessions(projectKey: string): Promise<Array<{ sessionId: string; mtime: number }>>;
  /** Each session's summary, folded by the SDK's `foldSessionSummary` from its lines. */
  listSessionSummaries(projectKey: string): Promise<Array<{ sessionId: string; mtime: number; data: Record<string, unknown> }>>;
  /** Removes the transcript at `key`; a session's own takes its sub-agents' with it. */
  delete(key: SessionKey): Promise<void>;
  /** The subpaths of the session's other transcripts. */
  listSubkeys(key: { projectKey: string; sessionId: string }): Promise<string[]>;
}
