// Types for host-node/js/postgres.js.
import type { Storage } from "./mneme.d.ts";

/** The schema a store takes when none is named. */
export const DEFAULT_SCHEMA: "mneme";

/** A connection string with its password left out, for messages. */
export function redact(url: string): string;

/**
 * Mneme's storage on PostgreSQL: the `mneme` CLI's schema, transactions and advisory
 * locks, so Node, Python and `mneme --store` on any machine share one store. Needs
 * node-postgres (`npm install pg`); its queries run on a worker thread of its own.
 */
export class PgStorage {
  /**
   * The store in schema `schema` (default `mneme`) of the database `url` names
   * (`postgresql://user@host/db`, or a libpq `key=value` string), its tables created
   * when missing. Throws when the database cannot be reached (the password left out).
   */
  constructor(url: string, options?: { schema?: string; lockTimeoutMs?: number; readOnly?: boolean });
  readonly schema: string;
  readonly readOnly: boolean;
  /** Releases every lock it holds, closes the connection and stops its worker. */
  close(): void;
}
export interface PgStorage extends Storage {}
