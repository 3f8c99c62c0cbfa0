// Mneme's storage on PostgreSQL, for Node: the same schema, transactions and advisory
// locks as the `mneme` CLI's (host-postgres/src/lib.rs) and the Python package's, so
// Node processes, Python processes and `mneme --store postgres://…` on any machine
// share one store.
//
//   import { Mneme } from "@mneme/node";
//   import { PgStorage } from "@mneme/node/postgres";
//   const store = await Mneme.open({ storage: new PgStorage("postgresql://me@db.internal/agents") });
//
// Needs node-postgres (`npm install pg`). The component calls its storage
// synchronously, so the queries run on a worker thread of this storage's own while
// the calling thread waits for each answer (postgres-worker.js).
//
// - A store is a schema (default `mneme`) of two tables: `files (id, key, size)`, the
//   key in the "C" collation so a prefix listing is a range scan in byte order, and
//   `chunks (file_id, offset, data)`: an append is one new row at the file's old end.
// - Every write is one transaction, durable as PostgreSQL makes a commit durable.
// - Locks are session-level advisory locks with `lock_timeout`: they exclude every
//   other connection on every machine, and PostgreSQL drops them when a process dies.
//   A connection lost while holding a lock makes every call fail until that lock is
//   released; with no lock held, the next call connects again.
import { createRequire } from "node:module";
import { MessageChannel, Worker, receiveMessageOnPort } from "node:worker_threads";
import { StorageFailure } from "./storage.js";

export const DEFAULT_SCHEMA = "mneme";

/** A connection string with its password left out, for messages. */
export function redact(url) {
  if (/^postgres(ql)?:\/\//.test(url)) {
    // Everything from the user's `:` to the last `@`: a password may hold `@` or `/`,
    // and a path holding `@` costs only some of the text, never the password.
    return url.replace(/^(postgres(?:ql)?:\/\/[^:/@]*):.*@/, "$1:***@").replace(/([?&])password=[^&]*/g, "$1password=***");
  }
  // As libpq reads a value: quoted (with escapes) or up to a space (with escapes).
  return url.replace(/(^|\s)password\s*=\s*(?:'(?:\\[\s\S]|[^'\\])*'?|(?:\\[\s\S]|[^\s\\])*)/g, "$1password=***");
}

export class PgStorage {
  /**
   * The store in schema `schema` of the database `url` names (`postgresql://user@host/db`,
   * or a libpq `key=value` string), its tables created when missing. `lockTimeoutMs`:
   * how long `lock` waits for another holder before failing with `locked`.
   * `readOnly`: refuse every write.
   */
  constructor(url, { schema = DEFAULT_SCHEMA, lockTimeoutMs = 30_000, readOnly = false } = {}) {
    if (typeof url !== "string" || url === "") throw new TypeError("PgStorage needs the database's URL (postgresql://user@host/db) or a libpq key=value string");
    if (typeof schema !== "string" || !/^[a-z0-9_]{1,63}$/.test(schema)) {
      throw new TypeError(`\`${schema}\` cannot name a store's schema: use 1 to 63 lowercase ASCII letters, digits and '_'`);
    }
    if (!Number.isInteger(lockTimeoutMs) || lockTimeoutMs < 0) {
      throw new TypeError(`lockTimeoutMs must be a whole number of milliseconds, 0 or more, not ${JSON.stringify(lockTimeoutMs) ?? String(lockTimeoutMs)}`);
    }
    if (typeof readOnly !== "boolean") throw new TypeError(`readOnly must be true or false, not ${JSON.stringify(readOnly) ?? String(readOnly)}`);
    try {
      createRequire(import.meta.url).resolve("pg");
    } catch {
      throw new Error("@mneme/node/postgres needs node-postgres: npm install pg");
    }
    this.schema = schema;
    this.readOnly = readOnly;
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.flag = new Int32Array(new SharedArrayBuffer(4));
    this.worker = new Worker(new URL("./postgres-worker.js", import.meta.url), {
      workerData: { port: port2, flag: this.flag, url, schema, lockTimeoutMs },
      transferList: [port2],
    });
    // The worker waits for calls only: it must not keep the process alive. Its end is
    // told through the flag; an error event left unheard would end the process.
    this.worker.unref();
    this.port.unref();
    this.worker.on("error", () => {});
    this.calls = 0;
    try {
      this.call("open");
    } catch (error) {
      try {
        this.close();
      } catch {} // a worker that stopped holds nothing to give back; the open's error is the one to tell
      const said = error instanceof StorageFailure ? (typeof error.val === "object" ? error.val.message ?? error.val.reason : error.tag) : error.message;
      throw new Error(`cannot open the store in ${redact(url)}: ${said}`);
    }
  }

  /** Runs `op` on the worker and waits for its answer. */
  call(op, ...args) {
    if (this.worker === undefined) throw new StorageFailure("io", { key: args[0] ?? this.schema, message: "this PgStorage is closed" });
    const key = args[0] ?? this.schema;
    const stopped = () => new StorageFailure("io", { key, message: "the PostgreSQL worker thread stopped: open a new PgStorage" });
    // Cleared and checked in one step: an end told meanwhile is kept, not overwritten.
    if (Atomics.exchange(this.flag, 0, 0) === 2) {
      Atomics.store(this.flag, 0, 2);
      throw stopped();
    }
    const id = ++this.calls;
    this.port.postMessage({ id, op, args });
    // Each call ends in an answer (PostgreSQL's lock_timeout bounds a lock's wait, the
    // connection's timeout and keepalives a server gone), or the worker's end sets the
    // flag (its exit event could not reach this waiting thread).
    // The worker posts an answer before it raises the flag: a raised flag means an
    // answer is on the port.
    for (;;) {
      const answered = receiveMessageOnPort(this.port);
      if (answered?.message.id === id) return this.answer(answered.message);
      // An answer to an earlier call, come late: that call has been told already.
      if (answered !== undefined) continue;
      if (Atomics.load(this.flag, 0) === 2) throw stopped();
      Atomics.wait(this.flag, 0, 0);
      Atomics.compareExchange(this.flag, 0, 1, 0);
    }
  }

  answer({ result, failure }) {
    if (failure !== undefined) throw new StorageFailure(failure.tag, failure.val);
    return result;
  }

  writable(key) {
    if (this.readOnly) throw new StorageFailure("read-only", key);
  }

  list(prefix) {
    return this.call("list", prefix);
  }

  read(key, offset, len) {
    return this.call("read", key, offset, len);
  }

  append(key, data) {
    this.writable(key);
    return this.call("append", key, data);
  }

  replace(key, data, expectedSize) {
    this.writable(key);
    this.call("replace", key, data, expectedSize);
  }

  truncate(key, len, expectedSize) {
    this.writable(key);
    this.call("truncate", key, len, expectedSize);
  }

  remove(key) {
    this.writable(key);
    this.call("remove", key);
  }

  rename(from, to) {
    this.writable(from);
    this.writable(to);
    this.call("rename", from, to);
  }

  lock(name) {
    this.writable(name);
    this.call("lock", name);
  }

  unlock(name) {
    this.call("unlock", name);
  }

  /** Releases every lock it holds, closes the connection and stops its worker. */
  close() {
    if (this.worker === undefined) return;
    try {
      // A worker that stopped took its connection, and the locks on it, with it.
      if (Atomics.load(this.flag, 0) !== 2) this.call("close");
    } finally {
      this.worker.terminate();
      this.port.close();
      this.worker = undefined;
    }
  }
}
