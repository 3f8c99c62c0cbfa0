// Mneme's `storage` import on a Durable Object's SQLite (`ctx.storage.sql`, which is
// synchronous, as the component's imports must be).
//
// Two tables: `mneme_files (key, size)` and `mneme_chunks (key, offset, data)`. An
// append inserts rows at the file's old end and updates its size in one
// `transactionSync`, never rewriting what is there; rows are cut at `chunkBytes`
// (1 MiB by default) because production caps a row at 2 MB (local workerd does not).
// A read fetches only the rows covering the range asked for. Listing a prefix is a
// range scan of the primary key (`key >= prefix AND key < successor`), not LIKE,
// whose patterns production caps at 50 bytes. SQLite compares text bytewise, the order
// the contract asks for.
//
// Locks: a Durable Object runs one event at a time and a component call never yields,
// so nothing interleaves with a call; a lock only has to last across requests (a
// session `hold`), which an in-memory set does. A lock held by an earlier request is
// refused at once with `locked`: synchronous code cannot wait for another request.
//
// Errors are thrown as the WIT `storage-error` variant, `{tag, val}`.

const fail = (tag, val) => ({ tag, val });

/** The smallest string above every string that starts with `prefix`, if any. */
function successor(prefix) {
  const chars = [...prefix];
  while (chars.length) {
    const last = chars.pop().codePointAt(0);
    for (let next = last + 1; next <= 0x10ffff; next++) {
      if (next >= 0xd800 && next <= 0xdfff) continue;
      return chars.join("") + String.fromCodePoint(next);
    }
  }
  return null;
}

export class SqlStorage {
  /** `storage`: the Durable Object's `ctx.storage` (SQLite-backed). */
  constructor(storage, { chunkBytes = 1 << 20 } = {}) {
    this.storage = storage;
    this.sql = storage.sql;
    this.chunkBytes = chunkBytes;
    this.held = new Set();
    this.sql.exec(`CREATE TABLE IF NOT EXISTS mneme_files (key TEXT PRIMARY KEY, size INTEGER NOT NULL)`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS mneme_chunks (key TEXT NOT NULL, "offset" INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (key, "offset"))`);
  }

  #run(key, action) {
    try {
      return action();
    } catch (error) {
      if (error && typeof error.tag === "string" && !(error instanceof Error)) throw error;
      const message = String(error?.message ?? error);
      throw /SQLITE_FULL|storage limit|exceeded/i.test(message) ? fail("quota-exceeded", key) : fail("io", { key, message });
    }
  }

  #size(key) {
    const row = this.sql.exec(`SELECT size FROM mneme_files WHERE key = ?`, key).toArray()[0];
    return row === undefined ? undefined : Number(row.size);
  }

  #insertChunks(key, at, data) {
    for (let from = 0; from < data.length; from += this.chunkBytes) {
      this.sql.exec(`INSERT INTO mneme_chunks (key, "offset", data) VALUES (?, ?, ?)`, key, at + from, data.subarray(from, from + this.chunkBytes));
    }
  }

  list(prefix) {
    return this.#run(prefix, () => {
      const end = successor(prefix);
      const rows = end === null
        ? this.sql.exec(`SELECT key, size FROM mneme_files WHERE key >= ? ORDER BY key`, prefix)
        : this.sql.exec(`SELECT key, size FROM mneme_files WHERE key >= ? AND key < ? ORDER BY key`, prefix, end);
      return rows.toArray().map(({ key, size }) => ({ key, size: BigInt(size) }));
    });
  }

  read(key, offset, len) {
    return this.#run(key, () => {
      const size = this.#size(key);
      if (size === undefined) throw fail("not-found", key);
      const start = Number(offset);
      const end = len === undefined ? size : Math.min(size, start + Number(len));
      if (start >= end) return new Uint8Array(0);
      const rows = this.sql
        .exec(
          `SELECT "offset", data FROM mneme_chunks WHERE key = ? AND "offset" < ?
           AND "offset" >= (SELECT COALESCE(MAX("offset"), 0) FROM mneme_chunks WHERE key = ? AND "offset" <= ?) ORDER BY "offset"`,
          key, end, key, start,
        )
        .toArray();
      const out = new Uint8Array(end - start);
      for (const { offset: at, data } of rows) {
        const bytes = new Uint8Array(data);
        const from = Math.max(start, at);
        const to = Math.min(end, at + bytes.length);
        if (from < to) out.set(bytes.subarray(from - at, to - at), from - start);
      }
      return out;
    });
  }

  append(key, data) {
    return this.#run(key, () =>
      this.storage.transactionSync(() => {
        const size = this.#size(key) ?? 0;
        this.sql.exec(`INSERT INTO mneme_files (key, size) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET size = excluded.size`, key, size + data.length);
        this.#insertChunks(key, size, data);
        return BigInt(size + data.length);
      }),
    );
  }

  replace(key, data, expectedSize) {
    this.#run(key, () =>
      this.storage.transactionSync(() => {
        if (expectedSize !== undefined) {
          const size = this.#size(key);
          if (size === undefined) throw fail("not-found", key);
          if (size !== Number(expectedSize)) throw fail("changed", key);
        }
        this.sql.exec(`DELETE FROM mneme_chunks WHERE key = ?`, key);
        this.sql.exec(`INSERT INTO mneme_files (key, size) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET size = excluded.size`, key, data.length);
        this.#insertChunks(key, 0, data);
      }),
    );
  }

  truncate(key, len, expectedSize) {
    this.#run(key, () =>
      this.storage.transactionSync(() => {
        const size = this.#size(key);
        if (size === undefined) throw fail("not-found", key);
        if (size !== Number(expectedSize)) throw fail("changed", key);
        const cut = Number(len);
        if (size <= cut) return;
        this.sql.exec(`DELETE FROM mneme_chunks WHERE key = ? AND "offset" >= ?`, key, cut);
        this.sql.exec(`UPDATE mneme_chunks SET data = substr(data, 1, ? - "offset") WHERE key = ? AND "offset" < ? AND "offset" + length(data) > ?`, cut, key, cut, cut);
        this.sql.exec(`UPDATE mneme_files SET size = ? WHERE key = ?`, cut, key);
      }),
    );
  }

  remove(key) {
    this.#run(key, () =>
      this.storage.transactionSync(() => {
        if (this.#size(key) === undefined) throw fail("not-found", key);
        this.sql.exec(`DELETE FROM mneme_files WHERE key = ?`, key);
        this.sql.exec(`DELETE FROM mneme_chunks WHERE key = ?`, key);
      }),
    );
  }

  rename(from, to) {
    this.#run(from, () =>
      this.storage.transactionSync(() => {
        if (this.#size(from) === undefined) throw fail("not-found", from);
        if (this.#size(to) !== undefined) throw fail("already-exists", to);
        this.sql.exec(`UPDATE mneme_files SET key = ? WHERE key = ?`, to, from);
        this.sql.exec(`UPDATE mneme_chunks SET key = ? WHERE key = ?`, to, from);
      }),
    );
  }

  lock(name) {
    if (this.held.has(name)) throw fail("locked", name);
    this.held.add(name);
  }

  unlock(name) {
    this.held.delete(name);
  }

  /** Rows and their sizes, for operators (and the chunking test). */
  stats() {
    const files = this.sql.exec(`SELECT COUNT(*) AS n FROM mneme_files`).one().n;
    const { n, largest } = this.sql.exec(`SELECT COUNT(*) AS n, COALESCE(MAX(length(data)), 0) AS largest FROM mneme_chunks`).one();
    return { files, chunks: n, largest_chunk_bytes: largest };
  }
}
