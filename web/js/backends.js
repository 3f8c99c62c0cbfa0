// Storage backends for Mneme in the browser. Each implements the contract of the
// core's `Storage` trait (core/src/storage.rs): list, read, append, replace, truncate,
// remove, rename; locking is added by `withLocks`. Failures are StorageFailure with a
// `kind` the binding maps onto the core's StorageError.

export class StorageFailure extends Error {
  constructor(kind, key, message) {
    super(message ?? `${kind}: ${key}`);
    this.name = "StorageFailure";
    this.kind = kind;
    this.key = key;
  }
}

/**
 * A browser error as a StorageFailure. A full disk is `quota-exceeded` (a refusal that
 * wrote nothing) however the browser words it: QuotaExceededError, or IndexedDB's
 * aborted transaction "DataError: Failed to write blobs" (Chromium on a full disk).
 */
export function failure(error, key) {
  if (error instanceof StorageFailure) return error;
  const name = error?.name;
  const full = name === "QuotaExceededError" || (name === "DataError" && /failed to write blobs/i.test(error?.message ?? ""));
  const kind = full ? "quota-exceeded" : name === "NotFoundError" ? "not-found" : "io";
  return new StorageFailure(kind, key, `${name ?? "Error"}: ${error?.message ?? error}`);
}

/** Refuses keys that could name something outside the namespace. */
export function checkKey(key) {
  const bad = typeof key !== "string" || key === "" || key.startsWith("/") || key.includes("\\") || key.includes("\0")
    || key.split("/").some((segment) => segment === "" || segment === "." || segment === "..");
  if (bad) throw new StorageFailure("invalid-key", String(key), `refused key ${JSON.stringify(key)}`);
  return key;
}

const quotaError = () => new DOMException("injected by a test", "QuotaExceededError");

function concat(chunks, size) {
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

function slice(bytes, offset, len) {
  const start = Math.min(offset, bytes.length);
  return bytes.slice(start, len == null ? bytes.length : Math.min(bytes.length, start + len));
}

/**
 * Counts writes and, when armed, throws QuotaExceededError at write number `at`:
 * tests use it to check that a failed write leaves nothing behind.
 */
export class Faults {
  constructor() { this.writes = 0; this.quotaAt = 0; }
  arm(at) { this.writes = 0; this.quotaAt = at; }
  write() { this.writes += 1; return this.quotaAt > 0 && this.writes === this.quotaAt; }
}

/** In memory: for tests and ephemeral playgrounds. */
export class MemoryBackend {
  constructor() { this.files = new Map(); this.faults = new Faults(); }
  static async open() { return new MemoryBackend(); }
  file(key) {
    const file = this.files.get(checkKey(key));
    if (!file) throw new StorageFailure("not-found", key);
    return file;
  }
  async list(prefix) {
    return [...this.files].filter(([key]) => key.startsWith(prefix)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, file]) => ({ key, size: file.size }));
  }
  async read(key, offset, len) {
    const file = this.file(key);
    return slice(concat(file.chunks, file.size), offset, len);
  }
  async append(key, data) {
    checkKey(key);
    if (this.faults.write()) throw failure(quotaError(), key);
    const file = this.files.get(key) ?? { chunks: [], size: 0 };
    file.chunks.push(data.slice());
    file.size += data.length;
    this.files.set(key, file);
    return file.size;
  }
  async replace(key, data, expectedSize) {
    checkKey(key);
    if (expectedSize != null && this.file(key).size !== expectedSize) throw new StorageFailure("changed", key);
    if (this.faults.write()) throw failure(quotaError(), key);
    this.files.set(key, { chunks: [data.slice()], size: data.length });
  }
  async truncate(key, len, expectedSize) {
    const file = this.file(key);
    if (file.size !== expectedSize) throw new StorageFailure("changed", key);
    if (file.size <= len) return;
    if (this.faults.write()) throw failure(quotaError(), key);
    const bytes = concat(file.chunks, file.size).slice(0, len);
    this.files.set(key, { chunks: [bytes], size: len });
  }
  async remove(key) {
    this.file(key);
    this.files.delete(key);
  }
  async rename(from, to) {
    const file = this.file(from);
    if (this.files.has(checkKey(to))) throw new StorageFailure("already-exists", to);
    this.files.delete(from);
    this.files.set(to, file);
  }
}

const request = (r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
const done = (tx) => new Promise((resolve, reject) => {
  tx.oncomplete = () => resolve();
  tx.onabort = () => reject(tx.error ?? new DOMException("transaction aborted", "AbortError"));
  // A request's own failure comes before the transaction's abort sets tx.error.
  tx.onerror = (event) => reject(event.target.error ?? tx.error);
});

/**
 * IndexedDB: each append is one chunk record keyed [path, sequence], written with a
 * file record {size, chunks} in one `strict` transaction: an append never rewrites the
 * session, and a failed transaction leaves nothing behind.
 */
export class IndexedDbBackend {
  constructor(db) { this.db = db; this.faults = new Faults(); }

  static async open(namespace) {
    const open = indexedDB.open(`mneme-${namespace}`, 1);
    open.onupgradeneeded = () => {
      open.result.createObjectStore("files");
      open.result.createObjectStore("chunks");
    };
    const db = await request(open);
    // A destroy (here or in another tab) is blocked until every connection closes:
    // this one closes, and its later calls fail with `io`.
    db.onversionchange = () => db.close();
    return new IndexedDbBackend(db);
  }

  static async destroy(namespace) {
    const deletion = indexedDB.deleteDatabase(`mneme-${namespace}`);
    deletion.onblocked = () => console.warn(`Mneme: destroying ${namespace} waits for its other connections to close`);
    await request(deletion);
  }

  close() { this.db.close(); }

  tx(mode) {
    return this.db.transaction(["files", "chunks"], mode, { durability: mode === "readwrite" ? "strict" : "default" });
  }

  chunkRange(key) { return IDBKeyRange.bound([key, 0], [key, Infinity]); }

  async run(key, mode, work) {
    checkKey(key);
    const tx = this.tx(mode);
    const finished = done(tx);
    try {
      const result = await work(tx.objectStore("files"), tx.objectStore("chunks"), tx);
      await finished;
      return result;
    } catch (error) {
      try { tx.abort(); } catch { /* already finished */ }
      await finished.catch(() => {});
      throw failure(error, key);
    }
  }

  /** Throws the injected quota error inside the transaction, after its writes were queued. */
  injected(tx) {
    if (this.faults.write()) {
      tx.abort();
      throw quotaError();
    }
  }

  async list(prefix) {
    const tx = this.tx("readonly");
    const files = tx.objectStore("files");
    const range = prefix === "" ? undefined : IDBKeyRange.bound(prefix, `${prefix}\uffff`);
    const [keys, values] = await Promise.all([request(files.getAllKeys(range)), request(files.getAll(range))]);
    return keys.map((key, i) => ({ key, size: values[i].size }));
  }

  async read(key, offset, len) {
    return this.run(key, "readonly", async (files, chunks) => {
      const meta = await request(files.get(key));
      if (!meta) throw new StorageFailure("not-found", key);
      return slice(concat(await request(chunks.getAll(this.chunkRange(key))), meta.size), offset, len);
    });
  }

  async append(key, data) {
    return this.run(key, "readwrite", async (files, chunks, tx) => {
      const meta = (await request(files.get(key))) ?? { size: 0, chunks: 0 };
      chunks.put(data.slice(), [key, meta.chunks]);
      const next = { size: meta.size + data.length, chunks: meta.chunks + 1 };
      files.put(next, key);
      this.injected(tx);
      return next.size;
    });
  }

  async replace(key, data, expectedSize) {
    return this.run(key, "readwrite", async (files, chunks, tx) => {
      if (expectedSize != null) {
        const meta = await request(files.get(key));
        if (!meta) throw new StorageFailure("not-found", key);
        if (meta.size !== expectedSize) throw new StorageFailure("changed", key);
      }
      chunks.delete(this.chunkRange(key));
      chunks.put(data.slice(), [key, 0]);
      files.put({ size: data.length, chunks: 1 }, key);
      this.injected(tx);
    });
  }

  async truncate(key, len, expectedSize) {
    return this.run(key, "readwrite", async (files, chunks, tx) => {
      const meta = await request(files.get(key));
      if (!meta) throw new StorageFailure("not-found", key);
      if (meta.size !== expectedSize) throw new StorageFailure("changed", key);
      if (meta.size <= len) return;
      const bytes = concat(await request(chunks.getAll(this.chunkRange(key))), meta.size).slice(0, len);
      chunks.delete(this.chunkRange(key));
      chunks.put(bytes, [key, 0]);
      files.put({ size: len, chunks: 1 }, key);
      this.injected(tx);
    });
  }

  async remove(key) {
    return this.run(key, "readwrite", async (files, chunks) => {
      if (!(await request(files.get(key)))) throw new StorageFailure("not-found", key);
      chunks.delete(this.chunkRange(key));
      files.delete(key);
    });
  }

  async rename(from, to) {
    checkKey(to);
    return this.run(from, "readwrite", async (files, chunks) => {
      const meta = await request(files.get(from));
      if (!meta) throw new StorageFailure("not-found", from);
      if (await request(files.get(to))) throw new StorageFailure("already-exists", to);
      const all = await request(chunks.getAll(this.chunkRange(from)));
      all.forEach((chunk, i) => chunks.put(chunk, [to, i]));
      chunks.delete(this.chunkRange(from));
      files.put({ size: meta.size, chunks: all.length }, to);
      files.delete(from);
    });
  }
}

/**
 * OPFS: files in the origin-private file system, written through sync access handles
 * in a dedicated worker (the only place they exist), flushed after every write.
 */
export class OpfsBackend {
  constructor(worker, url) {
    this.worker = worker;
    this.url = url;
    this.pending = new Map();
    this.next = 1;
    this.faults = { arm: (at) => this.call("arm", [at]) };
    worker.onmessage = ({ data }) => {
      const call = this.pending.get(data.id);
      if (!call) return;
      const { resolve, reject } = call;
      this.pending.delete(data.id);
      if (data.ok) resolve(data.result);
      else reject(new StorageFailure(data.error.kind, data.error.key, data.error.message));
    };
    // A worker that did not start (its script not served) or died answers nothing
    // more: its calls fail instead of waiting forever.
    worker.onerror = (event) => {
      event.preventDefault();
      const why = event.message || `its script did not load from ${this.url}: serve js/opfs-worker.js there (a bundler other than Vite: beside the bundle)`;
      this.stop(new StorageFailure("io", "", `the OPFS worker stopped (${why}); open the store again`));
    };
  }

  /** Ends the worker; its unanswered calls and every later one fail with `reason`. */
  stop(reason) {
    // Terminated, so nothing a failed call did can still land after it was refused.
    this.worker.terminate();
    this.stopped ??= reason;
    for (const { reject } of this.pending.values()) reject(this.stopped);
    this.pending.clear();
  }

  static async open(namespace) {
    const url = new URL("./opfs-worker.js", import.meta.url);
    const worker = new Worker(url, { type: "module" });
    const backend = new OpfsBackend(worker, url);
    try {
      await backend.call("init", [namespace]);
    } catch (error) {
      backend.close();
      throw error;
    }
    return backend;
  }

  static async destroy(namespace) {
    const root = await navigator.storage.getDirectory();
    const base = await root.getDirectoryHandle("mneme", { create: true });
    await base.removeEntry(namespace, { recursive: true }).catch((error) => {
      if (error.name !== "NotFoundError") throw failure(error, namespace);
    });
  }

  close() { this.stop(new StorageFailure("io", "", "the store is closed: open it again")); }

  call(op, args) {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, args });
    });
  }

  list(prefix) { return this.call("list", [prefix]); }
  read(key, offset, len) { return this.call("read", [checkKey(key), offset, len]); }
  append(key, data) { return this.call("append", [checkKey(key), data]); }
  replace(key, data, expectedSize) { return this.call("replace", [checkKey(key), data, expectedSize]); }
  truncate(key, len, expectedSize) { return this.call("truncate", [checkKey(key), len, expectedSize]); }
  remove(key) { return this.call("remove", [checkKey(key)]); }
  rename(from, to) { return this.call("rename", [checkKey(from), checkKey(to)]); }
}

// Each lock a store of this page gave back, until the browser has freed it: by the
// lock's full name, so another store of the same namespace waits for it too.
const freeing = new Map();

/**
 * Adds the exclusive per-session lock with the Web Locks API (`locks`: the page's
 * `navigator.locks`, or `pageLocks` where it has none), so two tabs never write one
 * session at once: a second writer waits its turn, up to `timeoutMs`, then fails with
 * `locked`.
 */
export function withLocks(backend, scope, timeoutMs = 10_000, locks = navigator.locks) {
  // name → how to give the lock back, and the promise of the browser freeing it.
  const held = new Map();
  const lockName = (name) => `mneme:${scope}:${name}`;
  // Resolves true once held, false when `ifAvailable` found it held elsewhere.
  const take = (name, options) => new Promise((taken, refused) => {
    const freed = locks.request(lockName(name), { mode: "exclusive", ...options }, (lock) => {
      taken(lock !== null);
      if (lock) return new Promise((release) => held.set(name, { release, freed }));
    });
    freed.catch(refused);
  });
  backend.lock = async (name) => {
    // The browser frees a lock given back a moment later: this page's next write of the
    // same session, by this store or another, waits for that, not for the timeout.
    await freeing.get(lockName(name));
    // A free lock is taken at once, whatever the wait allowed: a short wait times out
    // before the browser grants even a free lock.
    if (await take(name, { ifAvailable: true })) return;
    const busy = new StorageFailure("locked", name, `${name} is locked by another writer (waited ${timeoutMs} ms); retry when it finishes`);
    if (timeoutMs === 0) throw busy;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    try {
      await take(name, { signal: abort.signal });
    } catch {
      throw busy;
    } finally {
      clearTimeout(timer);
    }
  };
  backend.unlock = async (name) => {
    const lock = held.get(name);
    held.delete(name);
    if (!lock) return;
    lock.release();
    const freed = lock.freed.catch(() => {});
    freeing.set(lockName(name), freed);
    freed.then(() => freeing.get(lockName(name)) === freed && freeing.delete(lockName(name)));
  };
  return backend;
}

/**
 * Exclusive locks within this page, requested as the Web Locks API's are (`ifAvailable`,
 * `signal`): for storage no other page can reach (the memory backend) where the page
 * has no Web Locks (plain http from a host other than localhost).
 */
export const pageLocks = {
  // name → the requests waiting for it, while it is held.
  queues: new Map(),
  async request(name, options, callback) {
    options.signal?.throwIfAborted();
    const queue = this.queues.get(name);
    // As Web Locks do, the callback is called later, never within `request`: a caller
    // may use what `request` returns inside it.
    if (queue && options.ifAvailable) {
      await null;
      return callback(null);
    }
    if (queue) {
      await new Promise((granted, aborted) => {
        const waiter = { granted };
        queue.push(waiter);
        options.signal?.addEventListener("abort", () => {
          const at = queue.indexOf(waiter);
          if (at === -1) return;
          queue.splice(at, 1);
          aborted(new DOMException("the wait for the lock was aborted", "AbortError"));
        }, { once: true });
      });
    } else {
      this.queues.set(name, []);
      await null;
    }
    try {
      return await callback({ name, mode: "exclusive" });
    } finally {
      const next = this.queues.get(name).shift();
      if (next) next.granted();
      else this.queues.delete(name);
    }
  },
};
