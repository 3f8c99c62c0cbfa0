// The Claude Agent SDK's SessionStore over a Mneme store (`@mneme/node/claude-agent-sdk`).
//
//   import { query } from "@anthropic-ai/claude-agent-sdk";
//   import { Mneme } from "@mneme/node";
//   import { MnemeSessionStore } from "@mneme/node/claude-agent-sdk";
//   const sessionStore = new MnemeSessionStore(await Mneme.open({ root: "./sessions" }));
//   for await (const message of query({ prompt: "hi", options: { sessionStore } })) …
//
// The SDK mirrors every transcript line Claude Code writes into the store, keyed by
// project folder, session id and (for a sub-agent) subpath, and loads them back to
// resume a session elsewhere. The lines land where Claude Code keeps them, so the store
// is a Claude Code home that `mneme` and Claude Code read. The store's redaction applies
// (every kind by default): a line holding a secret loads back with it masked;
// `store.setRedaction([])` mirrors lines exactly. The SDK treats a line's `uuid` as its
// idempotency key: a line whose `uuid` the transcript holds already is not written
// again, so a batch the SDK retries after a failure that had landed, or a transcript
// it imports again, is written once. A batch is one storage append.
import { Mneme, MnemeError } from "./mneme.js";

/** The SDK's `SessionKey` as the store's transcript key, refused in the SDK's names when it is not one. */
function mnemeKey(key) {
  const { projectKey, sessionId, subpath = null } = key ?? {};
  if (typeof projectKey !== "string" || typeof sessionId !== "string" || (subpath !== null && typeof subpath !== "string")) {
    throw new MnemeError("invalid-argument", `the key must be a SessionKey, { projectKey, sessionId, subpath? } with strings, not ${JSON.stringify(key) ?? String(key)}`);
  }
  return { project: projectKey, id: sessionId, subpath };
}

export class MnemeSessionStore {
  /** A SessionStore over `store`, an open Mneme store. */
  constructor(store) {
    if (!(store instanceof Mneme)) throw new TypeError("MnemeSessionStore takes an open Mneme store (await Mneme.open({ root }))");
    this.store = store;
  }

  /** Appends `entries` to the transcript at `key` in one write. */
  async append(key, entries) {
    if (!Array.isArray(entries)) throw new MnemeError("invalid-argument", `entries must be an array of transcript entries, not ${entries === null ? "null" : typeof entries}`);
    const transcript = mnemeKey(key);
    if (entries.length > 0) await this.store.appendLines(transcript, entries.map((entry) => JSON.stringify(entry)));
  }

  /** Every entry appended at `key`, in order; null if none ever was. */
  async load(key) {
    const lines = await this.store.readLines(mnemeKey(key));
    return lines === null ? null : lines.map((line) => JSON.parse(line));
  }

  /** The project's sessions (not their sub-agents' transcripts), each with when its lines were last written, in epoch milliseconds. */
  async listSessions(projectKey) {
    return (await this.store.writtenSessions(projectKey)).map((session) => ({ sessionId: session.id, mtime: session.updated_ms }));
  }

  /**
   * Each session's summary, folded by the SDK's own `foldSessionSummary` from its lines
   * when asked (none is kept beside them), with its `listSessions` time.
   */
  async listSessionSummaries(projectKey) {
    const { foldSessionSummary } = await import("@anthropic-ai/claude-agent-sdk");
    const summaries = [];
    for (const { sessionId, mtime } of await this.listSessions(projectKey)) {
      const key = { projectKey, sessionId };
      summaries.push({ ...foldSessionSummary(undefined, key, (await this.load(key)) ?? []), mtime });
    }
    return summaries;
  }

  /** Removes the transcript at `key`; a session's own takes its sub-agents' with it. Removing what is not there is fine. */
  async delete(key) {
    await this.store.removeTranscript(mnemeKey(key));
  }

  /** The subpaths of the session's other transcripts (`subagents/agent-<id>`). */
  async listSubkeys(key) {
    const { project, id } = mnemeKey(key);
    return this.store.subpaths(project, id);
  }
}
