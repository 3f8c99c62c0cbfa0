// Types for host-node/js/mneme.js. The value shapes are the browser package's (the
// JSON forms of mneme-core's types), imported from there so they are written once.
import type {
  AnthropicMessage, Applied, Branch, CheckReport, CompactionSettings, Context, Decision, Entry, Injection, Ledger, Listing,
  OpenAIMessage, Plan, Prices, Provider, ProviderContext, RepairReport, Subagent, Transcript,
} from "../../web/js/mneme.d.ts";

export type * from "../../web/js/mneme.d.ts";

export class MnemeError extends Error {
  /** The core's error kind: `session-not-found`, `storage/locked`, `storage/read-only`, … */
  kind: string;
}

/** A storage error, thrown by FsStorage as the WIT `storage-error` variant. */
export class StorageFailure {
  tag: "not-found" | "already-exists" | "invalid-key" | "read-only" | "locked" | "quota-exceeded" | "changed" | "io";
  val: string | { key: string; reason: string } | { key: string; message: string };
}

/** Mneme's storage on a folder, synchronous, sharing lock files with the `mneme` CLI. */
export class FsStorage {
  constructor(root: string, options?: { durability?: "fsync" | "buffered"; lockTimeoutMs?: number; readOnly?: boolean });
  readonly root: string;
  list(prefix: string): { key: string; size: bigint }[];
  read(key: string, offset: bigint | number, len?: bigint | number): Uint8Array;
  append(key: string, data: Uint8Array): bigint;
  replace(key: string, data: Uint8Array, expectedSize?: bigint | number): void;
  truncate(key: string, len: bigint | number, expectedSize: bigint | number): void;
  remove(key: string): void;
  rename(from: string, to: string): void;
  lock(name: string): void;
  unlock(name: string): void;
  /** Releases every lock it holds. */
  close(): void;
}

export class Mneme {
  /**
   * Opens the store in the folder `root`. `durability` "fsync" (default) acknowledges a
   * write once it survives a power cut; `readOnly` refuses every write.
   */
  static open(options: {
    root?: string; storage?: FsStorage; partBytes?: number; totalBytes?: number; lockTimeoutMs?: number;
    durability?: "fsync" | "buffered"; readOnly?: boolean;
  }): Promise<Mneme>;
  static checkBytes(bytes: Uint8Array): Promise<CheckReport>;
  static contextWindow(model: string): Promise<number | undefined>;
  static silentReply(text: string): Promise<"deliver" | "hold" | "suppress">;
  readonly storage: FsStorage;
  /** Gives back the sessions it holds and the locks its storage took. */
  close(): Promise<void>;
  /** Keeps a session open for writing until `release` (or `close`); other processes, the CLI included, wait, then fail with `storage/locked`. */
  hold(id: string): Promise<null>;
  release(id: string): Promise<null>;
  append(id: string, message: { role: "user" | "assistant"; text: string; cwd?: string; uuid?: string; now?: number }): Promise<Entry>;
  appendTurn(
    id: string,
    messages: AnthropicMessage | AnthropicMessage[] | OpenAIMessage | OpenAIMessage[],
    options?: { provider?: Provider; cwd?: string; uuid?: string; now?: number; parent?: string | null; agent?: { id: string; parent_call?: string | null } | null },
  ): Promise<Entry[]>;
  providerContext(id: string, options?: { provider?: Provider; injections?: Injection[] }): Promise<ProviderContext>;
  branches(id: string): Promise<Branch[]>;
  usage(id: string, prices?: Prices | null): Promise<Ledger>;
  fork(id: string, options?: { from?: string | null; to?: string; now?: number }): Promise<Entry[]>;
  tombstone(id: string, uuid: string, now?: number): Promise<null>;
  load(id: string): Promise<Transcript>;
  context(id: string): Promise<Context>;
  list(): Promise<Listing>;
  check(id: string): Promise<CheckReport>;
  subagents(id: string): Promise<Subagent[]>;
  remove(id: string): Promise<string[]>;
  repair(id: string, now?: number): Promise<RepairReport>;
  reopen(id: string): void;
  planCompaction(id: string, settings?: CompactionSettings, mode?: "auto" | "manual" | "overflow"): Promise<Plan>;
  summarizeOffline(id: string, plan: Plan): Promise<string>;
  applyCompaction(id: string, plan: Plan, summary: string, ids?: { boundary?: string; summaryUuid?: string; now?: number }): Promise<Applied>;
  compact(id: string, options?: {
    settings?: CompactionSettings; mode?: "auto" | "manual" | "overflow";
    summarize?: (prompt: string, maxTokens: number) => Promise<string> | string;
    boundary?: string; summaryUuid?: string; now?: number;
  }): Promise<{ plan: Plan; applied: Applied | null; failure: string | null }>;
  recordCompactionFailure(id: string, reason: string, now?: number): Promise<null>;
  memoryFlushGate(id: string, settings?: { context_window?: number; reserve_floor?: number; soft_threshold?: number }): Promise<Decision>;
  recordMemoryFlush(id: string, now?: number): Promise<null>;
  extractionGate(id: string, settings?: { min_messages?: number; min_tool_calls?: number }): Promise<Decision>;
  recordExtraction(id: string, now?: number): Promise<null>;
  resetGate(id: string, policy?: { idle_minutes?: number; daily_reset_hour?: number; utc_offset_minutes?: number; ttl_ms?: number }, now?: number): Promise<Decision>;
  dreamGate(settings?: { min_interval_ms?: number; min_new_sessions?: number; stale_lock_ms?: number }, now?: number): Promise<Decision>;
  dreamAcquire(holder: string, settings?: { min_interval_ms?: number; min_new_sessions?: number; stale_lock_ms?: number }, now?: number): Promise<Decision>;
  dreamRelease(holder: string, completed: boolean, now?: number): Promise<null>;
}
