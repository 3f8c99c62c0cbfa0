// Types for host-node/js/mneme.js. The value shapes are the browser package's (the
// JSON forms of mneme-core's types), written once there (web/js/mneme.d.ts) and copied
// into gen/ by the build, so the package's files hold them.
import type { CheckReport, Sessions } from "../gen/web.d.ts";

export type * from "../gen/web.d.ts";

export class MnemeError extends Error {
  /** The core's error kind: `session-not-found`, `storage/locked`, `storage/read-only`, … */
  kind: string;
  /** The error's fields, as in the browser package: `{message, reason}` for
   * `invalid-message`, `{key}` for a storage error, `{}` for `invalid-argument`. */
  details: Record<string, unknown>;
}

/** A storage error, thrown by FsStorage as the WIT `storage-error` variant. */
export class StorageFailure {
  tag: "not-found" | "already-exists" | "invalid-key" | "read-only" | "locked" | "quota-exceeded" | "changed" | "io";
  val: string | { key: string; reason: string } | { key: string; message: string };
}

/**
 * What a store's storage does, synchronously (the component calls it so): FsStorage, or
 * PgStorage from `@mneme/node/postgres`. Errors are thrown as StorageFailure.
 */
export interface Storage {
  list(prefix: string): { key: string; size: bigint }[];
  read(key: string, offset: bigint | number, len?: bigint | number): Uint8Array;
  append(key: string, data: Uint8Array): bigint;
  replace(key: string, data: Uint8Array, expectedSize?: bigint | number): void;
  truncate(key: string, len: bigint | number, expectedSize: bigint | number): void;
  remove(key: string): void;
  rename(from: string, to: string): void;
  lock(name: string): void;
  unlock(name: string): void;
  /** Releases every lock it holds (and what else it holds open). */
  close?(): void;
}

/** Mneme's storage on a folder, synchronous, sharing lock files with the `mneme` CLI. */
export class FsStorage {
  constructor(root: string, options?: { durability?: "fsync" | "buffered"; lockTimeoutMs?: number; readOnly?: boolean });
  readonly root: string;
  /** Releases every lock it holds. */
  close(): void;
}
export interface FsStorage extends Storage {}

export class Mneme {
  /**
   * Opens the store in the folder `root`, or on `storage` (a PgStorage from
   * `@mneme/node/postgres`, or one of your own). `durability` "fsync" (default)
   * acknowledges a write once it survives a power cut; `readOnly` refuses every write.
   */
  static open(options: {
    root?: string; storage?: Storage; partBytes?: number; totalBytes?: number; lockTimeoutMs?: number;
    durability?: "fsync" | "buffered"; readOnly?: boolean;
  }): Promise<Mneme>;
  static checkBytes(bytes: Uint8Array): Promise<CheckReport>;
  /** The project of a working directory, as Claude Code names its folder (`/home/me/app` → `-home-me-app`). */
  static projectOf(cwd: string): Promise<string>;
  /** The session id Mneme keeps a session an agent SDK names `name` under; no store is read (as `store.sessionIdOf`). */
  static sessionIdOf(name: string): Promise<string>;
  /** The context window of a model Mneme knows, in tokens; null for one it does not. */
  static contextWindow(model: string): Promise<number | null>;
  static silentReply(text: string): Promise<"deliver" | "hold" | "suppress">;
  readonly storage: Storage;
  /** Gives back the sessions it holds and the locks its storage took. */
  close(): Promise<void>;
}
export interface Mneme extends Sessions {}
