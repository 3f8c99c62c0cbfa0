// The PostgreSQL side of postgres.js's PgStorage, on a worker thread: node-postgres is
// asynchronous and the component's storage imports are not (Node 20 has no JSPI), so
// the main thread posts each call here and waits on a shared flag until its answer is
// on the port. The schema, transactions and advisory locks are the `mneme` CLI's
// (host-postgres/src/lib.rs) and the Python package's (mneme/postgres.py), so every
// host shares one store.
import { createRequire } from "node:module";
import { workerData } from "node:worker_threads";

const { port, flag, url, schema: s, lockTimeoutMs } = workerData;
// A worker that stops (a crash, node-postgres missing) must not leave its caller
// waiting: the flag says so (2), where an answer says 1.
process.on("exit", () => {
  Atomics.store(flag, 0, 2);
  Atomics.notify(flag, 0);
});
const { default: pg } = await import("pg");
// Rows a replace is split into at most this size (a bytea value is capped at 1 GB).
const CHUNK_BYTES = 8 << 20;
const MAX_OFFSET = (1n << 63n) - 1n;
const CONNECT_TIMEOUT_MS = 30_000;
// How long past its lock's wait a query may take before its connection counts as dead.
const QUERY_SLACK_MS = 60_000;

/** A storage error, passed back to be thrown as the WIT `storage-error` variant. */
class Failure {
  constructor(tag, val) {
    this.tag = tag;
    this.val = val;
  }
}

let client = null;
// Locks held, by name (advisory locks are re-entrant in a session; Mneme's are not),
// and those held when the connection died.
const held = new Set();
const lost = new Set();

const refused = (reason) => new Failure("invalid-key", { key: s, reason });

/** libpq's `key=value` string, as libpq reads it: whole, values quoted or escaped. */
function pairs(text) {
  const pair = /\s*([^=\s]+)\s*=\s*(?:'((?:\\[\s\S]|[^'\\])*)'|((?:\\[\s\S]|[^\s'\\])*))(?=\s|$)/y;
  const found = new Map();
  for (pair.lastIndex = 0; pair.lastIndex < text.trimEnd().length; ) {
    const at = pair.lastIndex;
    const match = pair.exec(text);
    // Where, not what: the text there may be a password.
    if (match === null) throw refused(`the connection string cannot be read from its character ${at + 1} on: give key=value pairs (a value with spaces in single quotes) or a postgresql:// URL`);
    found.set(match[1], (match[2] ?? match[3]).replace(/\\([\s\S])/g, "$1"));
  }
  return found;
}

/**
 * node-postgres's settings for a URL or a libpq `key=value` string, read by
 * pg-connection-string with libpq's meaning of sslmode (and its sslrootcert, sslcert
 * and sslkey files). A setting it cannot honour is refused, not dropped: a
 * `sslmode=require` left out would connect without TLS.
 */
function settings(text) {
  const { parse } = createRequire(createRequire(import.meta.url).resolve("pg"))("pg-connection-string");
  let url = text;
  let timeout = CONNECT_TIMEOUT_MS;
  if (!/^postgres(ql)?:\/\//.test(text)) {
    const given = pairs(text);
    const known = ["host", "hostaddr", "port", "user", "password", "dbname", "sslmode", "sslrootcert", "sslcert", "sslkey", "connect_timeout", "application_name"];
    const unknown = [...given.keys()].find((key) => !known.includes(key));
    if (unknown !== undefined) throw refused(`the connection setting \`${unknown}\` is not one this storage takes: use a postgresql:// URL, or ${known.join(", ")}`);
    if (given.has("hostaddr") && given.has("host")) throw refused("give host or hostaddr, not both: this storage connects to and checks one name");
    if (given.has("connect_timeout")) {
      const seconds = Number(given.get("connect_timeout"));
      if (!Number.isInteger(seconds) || seconds < 0) throw refused(`connect_timeout=${given.get("connect_timeout")} is not a whole number of seconds`);
      // libpq's 0 waits for ever; here a wait has an end.
      if (seconds > 0) timeout = seconds * 1000;
      given.delete("connect_timeout");
    }
    const database = given.get("dbname") ?? "";
    given.delete("dbname");
    if (given.has("hostaddr")) given.set("host", given.get("hostaddr"));
    given.delete("hostaddr");
    url = `postgresql:///${encodeURIComponent(database)}?${new URLSearchParams([...given])}`;
  }
  let mode;
  try {
    mode = new URL(url.replace(/^postgres(ql)?:/, "http:")).searchParams.get("sslmode");
  } catch {
    throw refused("the connection string is no valid URL (a `/`, `@` or `:` in a password must be percent-encoded)");
  }
  if (mode !== null && !["disable", "require", "verify-ca", "verify-full"].includes(mode)) {
    throw refused(`sslmode=${mode} is not one this storage takes (it cannot fall back from TLS to none): use disable, require, verify-ca or verify-full`);
  }
  let config;
  try {
    config = parse(url, { useLibpqCompat: true });
  } catch (error) {
    // Its own words, without the string it was given (which may hold a password).
    throw refused(`the connection string cannot be used: ${String(error?.message ?? error).split(url).join("<url>")}`);
  }
  // Keepalives as libpq sends them, probed after 10 s of quiet, and a limit on each
  // query past the lock's own wait: a server gone silent must not hold the waiting
  // thread.
  return { ...config, connectionTimeoutMillis: timeout, keepAlive: true, keepAliveInitialDelayMillis: 10_000, query_timeout: lockTimeoutMs + QUERY_SLACK_MS };
}

function refuseAfterLostLock(key) {
  for (const name of lost) {
    throw new Failure("io", {
      key,
      message: `the connection to PostgreSQL was lost while holding the lock \`${name}\`: release its session (\`release\`, or close the store) and \`reopen\` it, then write again`,
    });
  }
}

function failure(key, error) {
  if (error instanceof Failure) return error;
  switch (error?.code) {
    case "55P03": // lock_not_available
      return new Failure("locked", key);
    case "53100": // disk_full
      return new Failure("quota-exceeded", key);
    // A role that may only read is refused a write as a read-only replica is.
    case "25006": // read_only_sql_transaction
    case "42501": // insufficient_privilege
      return new Failure("read-only", key);
    case "23505": // unique_violation
      return new Failure("already-exists", key);
    default:
      return new Failure("io", { key, message: `PostgreSQL: ${error?.message ?? error}` });
  }
}

/** Forgets the connection if it died, and with it the locks it held. */
function dropBroken() {
  if (client !== null && client.dead) {
    for (const name of held) lost.add(name);
    held.clear();
    client.end().catch(() => {});
    client = null;
  }
}

/** `action(client)` on the connection (made first if there is none), PostgreSQL's errors as storage failures about `key`. */
async function run(key, action) {
  dropBroken();
  refuseAfterLostLock(key);
  try {
    if (client === null) {
      const made = new pg.Client(settings(url));
      // Each connection's own: one that failed to open must not mark its successor.
      made.on("error", () => (made.dead = true));
      made.on("end", () => (made.dead = true));
      await made.connect();
      client = made;
      await client.query(`SET lock_timeout = ${Math.max(lockTimeoutMs, 1)}`);
    }
    return await action(client);
  } catch (error) {
    // A query past node-postgres's own time left the connection in no known state: it
    // is given up. (The server's lock_timeout is an answer, `locked`, on a sound one.)
    if (client !== null && error?.message === "Query read timeout") client.dead = true;
    dropBroken();
    refuseAfterLostLock(key);
    throw failure(key, error);
  }
}

/** `action` in one transaction: all of it commits, or none. */
async function transaction(key, action) {
  return run(key, async (c) => {
    await c.query("BEGIN");
    try {
      const result = await action(c);
      await c.query("COMMIT");
      return result;
    } catch (error) {
      await c.query("ROLLBACK").catch(() => {});
      throw error;
    }
  });
}

/** A read refused for want of privilege is no read-only store (which reads). */
function readRefused(error) {
  if (error instanceof Failure && error.tag === "read-only") {
    return new Failure("io", {
      key: error.val,
      message: `this PostgreSQL role may not read the store's tables: grant it USAGE ON SCHEMA ${s} and SELECT ON ALL TABLES IN SCHEMA ${s}`,
    });
  }
  return error;
}

/**
 * The smallest string greater than every string starting with `prefix` (in code point
 * order, the "C" collation's), if there is one: the end of a prefix's range.
 */
function successor(prefix) {
  const chars = [...prefix];
  while (chars.length > 0) {
    const last = chars.pop().codePointAt(0);
    for (let code = last + 1; code < 0x110000; code++) {
      if (code < 0xd800 || code > 0xdfff) return chars.join("") + String.fromCodePoint(code);
    }
  }
  return null;
}

const ops = {
  async open() {
    const exists = await run(s, async (c) => (await c.query("SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AS there", [`${s}.files`, `${s}.chunks`])).rows[0].there);
    if (exists) return;
    try {
      await transaction(s, async (c) => {
        // Concurrent first opens would race on the catalog; one at a time.
        await c.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`mneme schema ${s}`]);
        await c.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
        await c.query(`CREATE TABLE IF NOT EXISTS ${s}.files (id bigserial PRIMARY KEY, key text COLLATE "C" NOT NULL UNIQUE, size bigint NOT NULL DEFAULT 0)`);
        await c.query(
          `CREATE TABLE IF NOT EXISTS ${s}.chunks (file_id bigint NOT NULL REFERENCES ${s}.files (id) ON DELETE CASCADE, "offset" bigint NOT NULL, data bytea NOT NULL, PRIMARY KEY (file_id, "offset"))`,
        );
      });
    } catch (error) {
      if (!(error instanceof Failure) || error.tag !== "read-only") throw error;
      throw new Failure("io", {
        key: s,
        message: `the schema \`${s}\` holds no Mneme store, and this connection may not create one (it is read-only): open it once with a connection that may write`,
      });
    }
  },

  async list(prefix) {
    const end = successor(prefix);
    try {
      const { rows } =
        end === null
          ? await run(prefix, (c) => c.query(`SELECT key, size FROM ${s}.files WHERE key >= $1 ORDER BY key`, [prefix]))
          : await run(prefix, (c) => c.query(`SELECT key, size FROM ${s}.files WHERE key >= $1 AND key < $2 ORDER BY key`, [prefix, end]));
      return rows.filter((row) => row.key.startsWith(prefix)).map((row) => ({ key: row.key, size: BigInt(row.size) }));
    } catch (error) {
      throw readRefused(error);
    }
  },

  async read(key, offset, len) {
    const start = BigInt(offset) < MAX_OFFSET ? BigInt(offset) : MAX_OFFSET;
    let end = len === undefined ? MAX_OFFSET : start + BigInt(len) < MAX_OFFSET ? start + BigInt(len) : MAX_OFFSET;
    // One statement, one snapshot: the size and the chunks agree even while another
    // process replaces the file.
    const query =
      `WITH f AS (SELECT id, size FROM ${s}.files WHERE key = $1) ` +
      `SELECT f.size, c."offset", c.data FROM f LEFT JOIN ${s}.chunks c ON c.file_id = f.id AND c."offset" < $3 ` +
      `AND c."offset" >= COALESCE((SELECT max(x."offset") FROM ${s}.chunks x WHERE x.file_id = (SELECT id FROM f) AND x."offset" <= $2), 0) ` +
      `ORDER BY c."offset"`;
    let rows;
    try {
      ({ rows } = await run(key, (c) => c.query(query, [key, start.toString(), end.toString()])));
    } catch (error) {
      throw readRefused(error);
    }
    if (rows.length === 0) throw new Failure("not-found", key);
    const size = BigInt(rows[0].size);
    if (size < end) end = size;
    const pieces = [];
    let total = 0;
    for (const row of rows) {
      if (row.offset === null || row.data === null) continue;
      const at = BigInt(row.offset);
      const low = start > at ? start : at;
      const high = end < at + BigInt(row.data.length) ? end : at + BigInt(row.data.length);
      if (low < high) {
        const piece = row.data.subarray(Number(low - at), Number(high - at));
        pieces.push(piece);
        total += piece.length;
      }
    }
    return new Uint8Array(Buffer.concat(pieces, total));
  },

  async append(key, data) {
    // One statement, so one transaction and one round trip: the upsert locks the file's
    // row until commit (appends to one file queue there), the chunk lands at the old end
    // with the new size, or neither does.
    const { rows } = await run(key, (c) =>
      c.query(
        `WITH file AS (INSERT INTO ${s}.files (key, size) VALUES ($1, $2::bigint) ` +
          `ON CONFLICT (key) DO UPDATE SET size = ${s}.files.size + EXCLUDED.size RETURNING id, size), ` +
          `chunk AS (INSERT INTO ${s}.chunks (file_id, "offset", data) SELECT id, size - $2, $3::bytea FROM file WHERE $2 > 0) ` +
          `SELECT size FROM file`,
        [key, data.length, Buffer.from(data)],
      ),
    );
    return BigInt(rows[0].size);
  },

  async replace(key, data, expectedSize) {
    await transaction(key, async (c) => {
      let fileId;
      if (expectedSize === undefined) {
        const { rows } = await c.query(`INSERT INTO ${s}.files (key, size) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET size = EXCLUDED.size RETURNING id`, [key, data.length]);
        fileId = rows[0].id;
      } else {
        const { rows } = await c.query(`SELECT id, size FROM ${s}.files WHERE key = $1 FOR UPDATE`, [key]);
        if (rows.length === 0) throw new Failure("not-found", key);
        if (BigInt(rows[0].size) !== BigInt(expectedSize)) throw new Failure("changed", key);
        fileId = rows[0].id;
        await c.query(`UPDATE ${s}.files SET size = $1 WHERE id = $2`, [data.length, fileId]);
      }
      await c.query(`DELETE FROM ${s}.chunks WHERE file_id = $1`, [fileId]);
      for (let at = 0; at < data.length; at += CHUNK_BYTES) {
        await c.query(`INSERT INTO ${s}.chunks (file_id, "offset", data) VALUES ($1, $2, $3)`, [fileId, at, Buffer.from(data.subarray(at, at + CHUNK_BYTES))]);
      }
    });
  },

  async truncate(key, len, expectedSize) {
    await transaction(key, async (c) => {
      const { rows } = await c.query(`SELECT id, size FROM ${s}.files WHERE key = $1 FOR UPDATE`, [key]);
      if (rows.length === 0) throw new Failure("not-found", key);
      const [{ id, size }] = rows;
      if (BigInt(size) !== BigInt(expectedSize)) throw new Failure("changed", key);
      if (BigInt(size) > BigInt(len)) {
        const length = BigInt(len).toString();
        await c.query(`DELETE FROM ${s}.chunks WHERE file_id = $1 AND "offset" >= $2`, [id, length]);
        await c.query(
          `UPDATE ${s}.chunks SET data = substring(data FROM 1 FOR ($2::bigint - "offset")::int) WHERE file_id = $1 AND "offset" < $2::bigint AND "offset" + length(data) > $2::bigint`,
          [id, length],
        );
        await c.query(`UPDATE ${s}.files SET size = $1 WHERE id = $2`, [length, id]);
      }
    });
  },

  async remove(key) {
    const { rowCount } = await run(key, (c) => c.query(`DELETE FROM ${s}.files WHERE key = $1`, [key]));
    if (rowCount === 0) throw new Failure("not-found", key);
  },

  async rename(from, to) {
    // The unique key refuses an existing target atomically: never an overwrite.
    const { rowCount } = await run(to, (c) => c.query(`UPDATE ${s}.files SET key = $1 WHERE key = $2`, [to, from]));
    if (rowCount === 0) throw new Failure("not-found", from);
  },

  async lock(name) {
    await run(name, async (c) => {
      // Advisory locks are re-entrant in one session; Mneme's are not.
      if (held.has(name)) throw new Failure("locked", name);
      await c.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [`${s}/${name}`]);
      held.add(name);
    });
  },

  async unlock(name) {
    if (lost.delete(name)) return;
    try {
      // Forgotten once given back: an unlock that failed on a live connection leaves
      // the lock held, and this process must not take it a second time.
      await run(name, async (c) => {
        if (held.has(name)) {
          await c.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [`${s}/${name}`]);
          held.delete(name);
        }
      });
    } catch (error) {
      // A connection found dead by this very unlock took the lock with it: nothing is
      // left to give back.
      if (!lost.has(name)) throw error;
    } finally {
      lost.delete(name);
    }
  },

  async close() {
    try {
      for (const name of [...held]) await ops.unlock(name);
    } finally {
      held.clear();
      lost.clear();
      if (client !== null) await client.end().catch(() => {});
      client = null;
    }
  },
};

// One call at a time, in order, each answer naming its call: the caller waits for each,
// and the queue keeps that true whatever arrives.
let queue = Promise.resolve();
port.on("message", ({ id, op, args }) => {
  queue = queue.then(async () => {
    let answer;
    try {
      answer = { id, result: await ops[op](...args) };
    } catch (error) {
      const known = failure(args[0] ?? s, error);
      answer = { id, failure: { tag: known.tag, val: known.val } };
    }
    port.postMessage(answer);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  });
});
