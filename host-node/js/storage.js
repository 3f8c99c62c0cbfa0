// Mneme's `storage` import on node:fs, synchronous (Node 20 has no JSPI, so the
// component's imports cannot await). The same files, the same guarantees and the same
// lock files as the `mneme` CLI's storage (host-fs/src/lib.rs), so a Node
// process and a `mneme` process can share one folder:
//
// - append: one write at the old end, then fdatasync; a failed write is cut back out,
//   so no partial line is left to fuse with the next one.
// - replace: temp file, write, fdatasync, size check, rename, folder fsync.
// - rename: hard link then unlink, so an existing target is never overwritten.
// - lock: flock(2) on `.mneme/locks/<name>.lock`, the call the CLI makes (through
//   koffi, as node:fs has none); the kernel drops it when a process dies.
//
// Keys arrive checked by the core's rules (the component checks each key before it
// calls out); this module adds what is the host's own: `.mneme/` is reserved, a path
// that would resolve outside the root is refused whatever the key says, and a linked
// link is followed only while it stays inside the store (see `checkInside`).
//
// Errors are thrown as the WIT `storage-error` variant, `{tag, val}`, which jco passes
// to the component as the import's `err`.
import { closeSync, constants as fsConstants, fdatasyncSync, fstatSync, ftruncateSync, fsyncSync, linkSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { createRequire } from "node:module";
import { constants } from "node:os";

const RESERVED_DIR = ".mneme";
// Why a key reached through a link is refused, as the CLI's storage says it.
const LEADS_OUTSIDE =
  "it is reached through a symbolic link that leads outside the store; Mneme follows links only inside it (to keep the store on another disk, link the store's folder itself, or its projects/ or memory/)";
const LEADS_NOWHERE = "it is reached through a symbolic link that leads nowhere (to nothing, around a loop, or through a folder this user cannot open)";
const APPEND_EXISTING = fsConstants.O_WRONLY | fsConstants.O_APPEND;
const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;

let flockCall;
/** flock(2) from the C library, loaded on the first lock. */
function flock(fd, operation) {
  if (!flockCall) {
    const koffi = createRequire(import.meta.url)("koffi");
    const libc = koffi.load(process.platform === "darwin" ? "libc.dylib" : "libc.so.6");
    flockCall = { call: libc.func("int flock(int, int)"), errno: koffi.errno };
  }
  const result = flockCall.call(fd, operation);
  return result === 0 ? 0 : flockCall.errno();
}
const { EWOULDBLOCK, EINTR } = constants.errno;

/** `path` opened with `flags`, or `undefined` when it does not exist. */
function tryOpen(path, flags) {
  try {
    return openSync(path, flags);
  } catch (error) {
    // A file on the way (ENOTDIR) is as missing: the create path says why.
    if (error.code === "ENOENT" || error.code === "ENOTDIR") return undefined;
    throw error;
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));
/** Blocks the thread for `ms` milliseconds: the imports are synchronous, so waiting for a lock must be too. */
function sleep(ms) {
  Atomics.wait(pause, 0, 0, ms);
}

/** A storage error as the component expects it thrown. */
export class StorageFailure {
  constructor(tag, val) {
    this.tag = tag;
    this.val = val;
  }
}

function failure(key, error) {
  switch (error?.code) {
    case "ENOENT":
    case "ENOTDIR":
      return new StorageFailure("not-found", key);
    case "EEXIST":
      return new StorageFailure("already-exists", key);
    case "ENOSPC":
    case "EDQUOT":
      return new StorageFailure("quota-exceeded", key);
    case "EROFS":
      return new StorageFailure("read-only", key);
    default:
      return new StorageFailure("io", { key, message: String(error?.message ?? error) });
  }
}

/**
 * Makes `folder` and those above it for `key`. What stops it (a file where a folder
 * must be, a root in a place that cannot hold one) is said with the folder's path: as
 * the storage error of the failed call it would read as `key` missing.
 */
function makeFolder(key, folder) {
  try {
    mkdirSync(folder, { recursive: true });
  } catch (error) {
    // In the operating system's words, as the CLI and the Python package say them.
    const said = { ENOENT: "No such file or directory", ENOTDIR: "Not a directory", EEXIST: "File exists" }[error?.code];
    if (said !== undefined) throw new StorageFailure("io", { key, message: `cannot make the folder ${folder}: ${said}` });
    throw error;
  }
}

/** Runs `action`, turning a node:fs error into the storage error for `key`. */
function io(key, action) {
  try {
    return action();
  } catch (error) {
    if (error instanceof StorageFailure) throw error;
    throw failure(key, error);
  }
}

/**
 * Runs `action` once the change is in place: a failure now is never a kind that says
 * nothing was written (a full disk refusing the folder's sync), as the core undoes
 * only what may have landed.
 */
function landed(key, action) {
  try {
    return action();
  } catch (error) {
    throw new StorageFailure("io", { key, message: String(error?.message ?? error) });
  }
}

function writeAll(fd, data) {
  for (let at = 0; at < data.length; ) at += writeSync(fd, data, at, data.length - at);
}

let tempCounter = 0;

export class FsStorage {
  /**
   * Files under `root`. `durability`: "fsync" (an acknowledged write survives a power
   * cut) or "buffered" (survives a crash of the process). `lockTimeoutMs`: how long
   * `lock` waits for another holder before failing with `locked`.
   */
  constructor(root, { durability = "fsync", lockTimeoutMs = 30_000, readOnly = false } = {}) {
    if (typeof root !== "string" || root === "") throw new TypeError("the store's root must be a folder path");
    if (durability !== "fsync" && durability !== "buffered") throw new TypeError(`durability must be "fsync" or "buffered", not ${JSON.stringify(durability)}`);
    // A string ("100" from an environment variable) added to a time never comes due.
    if (typeof lockTimeoutMs !== "number" || !(lockTimeoutMs >= 0) || lockTimeoutMs === Infinity) {
      throw new TypeError(`lockTimeoutMs must be a number of milliseconds, 0 or more, not ${JSON.stringify(lockTimeoutMs) ?? String(lockTimeoutMs)}`);
    }
    if (typeof readOnly !== "boolean") throw new TypeError(`readOnly must be true or false, not ${JSON.stringify(readOnly) ?? String(readOnly)}`);
    let found;
    try {
      found = statSync(root, { throwIfNoEntry: false });
    } catch {} // unreadable: the first call that needs it says why
    if (found && !found.isDirectory()) throw new TypeError(`the store's root ${root} is not a folder: name a folder (it is made on the first write)`);
    this.root = resolve(root);
    this.durable = durability === "fsync";
    this.lockTimeoutMs = lockTimeoutMs;
    this.readOnly = readOnly;
    this.held = new Map();
    // Append handles kept open while this storage holds the lock named by their key (a
    // session's lock is named by its first part's key): the lock's contract is that no
    // other writer touches the file then, so a held session's append is one write, with
    // no open, stat or close (a quarter of its time). Closed when the lock is given
    // back, and when the file is replaced, truncated, removed or renamed.
    this.appenders = new Map();
  }

  path(key) {
    if (key.split("/")[0] === RESERVED_DIR) throw new StorageFailure("invalid-key", { key, reason: "`.mneme/` is reserved for Mneme's own files" });
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep)) throw new StorageFailure("invalid-key", { key, reason: "the key names a path outside the store" });
    return path;
  }

  writable(key) {
    const path = this.path(key);
    if (this.readOnly) throw new StorageFailure("read-only", key);
    return path;
  }

  /**
   * Refuses `key`'s file at `path` unless it lies inside the store, as the CLI's
   * storage does (host-fs/src/lib.rs, `check_inside`): its real path (for a file not
   * written yet, its nearest existing folder's) inside the real path of the root or of
   * the folder the key starts in. Links an owner makes to keep the store elsewhere
   * (`projects/` on another disk) are followed; a link below them, to a file or a
   * folder, only while it stays inside; a link that leads nowhere, never.
   */
  checkInside(key, path) {
    const refuse = (reason) => new StorageFailure("invalid-key", { key, reason });
    let at = path;
    let real;
    for (;;) {
      let there = true;
      try {
        lstatSync(at);
      } catch {
        there = false;
      }
      if (there) {
        try {
          real = realpathSync.native(at);
          break;
        } catch {
          throw refuse(LEADS_NOWHERE);
        }
      }
      // Nothing of the store exists yet: nothing there can lead anywhere.
      if (at === this.root || dirname(at) === at) return;
      at = dirname(at);
    }
    const inside = (folder) => {
      try {
        const bound = realpathSync.native(folder);
        return real === bound || real.startsWith(bound.endsWith(sep) ? bound : bound + sep);
      } catch {
        return false;
      }
    };
    const slash = key.indexOf("/");
    if (inside(this.root) || (slash > 0 && inside(join(this.root, key.slice(0, slash))))) return;
    throw refuse(LEADS_OUTSIDE);
  }

  /** Whether `key`'s file or folder at `path` is the store's: reached through no link out of it. */
  leadsInside(key, path) {
    try {
      this.checkInside(key, path);
      return true;
    } catch {
      return false;
    }
  }

  sync(fd) {
    if (this.durable) fdatasyncSync(fd);
  }

  syncFolder(folder) {
    if (!this.durable) return;
    const fd = openSync(folder, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  list(prefix) {
    const at = prefix.lastIndexOf("/");
    const folderKey = at < 0 ? "" : prefix.slice(0, at);
    let start = this.root;
    if (folderKey !== "") {
      try {
        start = this.path(folderKey);
      } catch {
        return [];
      }
      // A folder reached through a link out of the store holds none of its keys (a top
      // folder is the owner's layout, wherever it leads).
      if (folderKey.includes("/") && !this.leadsInside(folderKey, start)) return [];
    }
    const found = [];
    const seen = new Set();
    const walk = (folder, base, depth) => {
      let entries;
      try {
        entries = readdirSync(folder, { withFileTypes: true });
      } catch (error) {
        if (error.code === "ENOENT" || error.code === "ENOTDIR") return;
        throw failure(prefix, error);
      }
      for (const entry of entries) {
        const name = entry.name;
        if (base === "" && name === RESERVED_DIR) continue;
        const key = base + name;
        // The walk starts in the folder the prefix's last "/" ends, so a name there that
        // does not start what is left of it holds no key listed: not looked at, so an
        // append (which lists its session's parts) costs about the same in a project of
        // one session as of thousands.
        if (!key.startsWith(prefix)) continue;
        let stat;
        try {
          stat = statSync(join(folder, name), { bigint: true });
        } catch {
          continue;
        }
        const topFolder = base === "" && stat.isDirectory();
        if (!topFolder && entry.isSymbolicLink() && !this.leadsInside(key, join(folder, name))) continue;
        if (stat.isDirectory()) {
          const sub = `${key}/`;
          const id = `${stat.dev}:${stat.ino}`;
          if (!seen.has(id) && depth < 64) {
            seen.add(id);
            walk(join(folder, name), sub, depth + 1);
            seen.delete(id);
          }
        } else {
          found.push({ key, size: stat.size });
        }
      }
    };
    walk(start, folderKey === "" ? "" : `${folderKey}/`, 0);
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  read(key, offset, len) {
    const path = this.path(key);
    this.checkInside(key, path);
    return io(key, () => {
      const fd = openSync(path, "r");
      try {
        const stat = fstatSync(fd);
        if (stat.isDirectory()) throw new StorageFailure("not-found", key);
        const start = Number(offset);
        if (start >= stat.size) return new Uint8Array(0);
        const want = Math.min(stat.size - start, len === undefined ? Infinity : Number(len));
        const data = new Uint8Array(want);
        let got = 0;
        while (got < want) {
          const n = readSync(fd, data, got, want - got, start + got);
          if (n === 0) break;
          got += n;
        }
        return got === want ? data : data.subarray(0, got);
      } finally {
        closeSync(fd);
      }
    });
  }

  append(key, data) {
    const kept = this.appenders.get(key);
    if (kept !== undefined) {
      return io(key, () => {
        try {
          this.writeOrUndo(kept.fd, data, kept.size, undefined);
        } catch (error) {
          this.forgetAppender(key);
          throw error;
        }
        kept.size += data.length;
        return BigInt(kept.size);
      });
    }
    const path = this.writable(key);
    this.checkInside(key, path);
    return io(key, () => {
      // The file exists but for a session's first append: opened without O_CREAT
      // first, as a thrown error (its stack captured) costs more than the system calls.
      let fd = tryOpen(path, APPEND_EXISTING);
      let created = false;
      if (fd === undefined) {
        try {
          fd = openSync(path, "ax");
          created = true;
        } catch (error) {
          if (error.code === "ENOENT" || error.code === "ENOTDIR") {
            makeFolder(key, dirname(path));
            fd = openSync(path, "ax");
            created = true;
          } else if (error.code === "EEXIST") {
            fd = openSync(path, "a");
          } else {
            throw error;
          }
        }
      }
      let keep = false;
      try {
        const oldSize = fstatSync(fd).size;
        this.writeOrUndo(fd, data, oldSize, created ? path : undefined);
        if (created) landed(key, () => this.syncFolder(dirname(path)));
        const size = oldSize + data.length;
        keep = this.held.has(key);
        if (keep) this.appenders.set(key, { fd, size });
        return BigInt(size);
      } finally {
        if (!keep) closeSync(fd);
      }
    });
  }

  /**
   * Writes `data` at the end of `fd` (opened for appending, `oldSize` long) and syncs
   * it. The call must be atomic: on failure what landed is taken back out (the file
   * removed when `created` names it), so no partial line stays to fuse with the next.
   */
  writeOrUndo(fd, data, oldSize, created) {
    try {
      writeAll(fd, data);
      this.sync(fd);
    } catch (error) {
      try {
        if (created !== undefined) unlinkSync(created);
        else ftruncateSync(fd, oldSize);
      } catch (undo) {
        throw new Error(`${error.message}; undoing the partial write failed too: ${undo.message}`);
      }
      throw error;
    }
  }

  /** Closes the append handle kept for `key`, if any. */
  forgetAppender(key) {
    const kept = this.appenders.get(key);
    if (kept === undefined) return;
    this.appenders.delete(key);
    // A failed close is ignored, as Rust's `File` ignores it on drop: every byte was
    // written (and synced, under fsync) before its append returned.
    try {
      closeSync(kept.fd);
    } catch {}
  }

  replace(key, data, expectedSize) {
    const path = this.writable(key);
    this.checkInside(key, path);
    this.forgetAppender(key);
    const folder = dirname(path);
    io(key, () => makeFolder(key, folder));
    const temp = join(folder, `.${path.slice(folder.length + 1)}.tmp-${process.pid}-${tempCounter++}`);
    try {
      io(key, () => {
        const fd = openSync(temp, "w");
        try {
          writeAll(fd, data);
          this.sync(fd);
        } finally {
          closeSync(fd);
        }
        // Checked as late as possible, right before the rename (see the CLI's storage).
        if (expectedSize !== undefined && BigInt(statSync(path).size) !== BigInt(expectedSize)) throw new StorageFailure("changed", key);
        renameSync(temp, path);
      });
    } catch (error) {
      try {
        unlinkSync(temp);
      } catch {}
      throw error;
    }
    landed(key, () => this.syncFolder(folder));
  }

  truncate(key, len, expectedSize) {
    const path = this.writable(key);
    this.checkInside(key, path);
    this.forgetAppender(key);
    io(key, () => {
      const fd = openSync(path, "r+");
      try {
        const size = BigInt(fstatSync(fd).size);
        if (size !== BigInt(expectedSize)) throw new StorageFailure("changed", key);
        if (size > BigInt(len)) {
          ftruncateSync(fd, Number(len));
          this.sync(fd);
        }
      } finally {
        closeSync(fd);
      }
    });
  }

  remove(key) {
    const path = this.writable(key);
    this.checkInside(key, path);
    this.forgetAppender(key);
    io(key, () => unlinkSync(path));
    // Temp files of replacements a crash interrupted go with the object.
    const folder = dirname(path);
    const stale = `.${path.slice(folder.length + 1)}.tmp-`;
    try {
      for (const name of readdirSync(folder)) if (name.startsWith(stale)) unlinkSync(join(folder, name));
    } catch {}
    io(key, () => this.syncFolder(folder));
  }

  rename(from, to) {
    const fromPath = this.writable(from);
    const toPath = this.writable(to);
    this.checkInside(from, fromPath);
    this.checkInside(to, toPath);
    this.forgetAppender(from);
    io(from, () => {
      if (!statSync(fromPath).isFile()) throw new StorageFailure("not-found", from);
    });
    io(to, () => {
      makeFolder(to, dirname(toPath));
      // A hard link fails if `to` exists, atomically: never an overwrite.
      linkSync(fromPath, toPath);
    });
    landed(from, () => unlinkSync(fromPath));
    landed(to, () => this.syncFolder(dirname(toPath)));
    landed(from, () => this.syncFolder(dirname(fromPath)));
  }

  lock(name) {
    this.path(name);
    if (this.readOnly) throw new StorageFailure("read-only", name);
    if (this.held.has(name)) throw new StorageFailure("locked", name);
    const path = join(this.root, RESERVED_DIR, "locks", `${name}.lock`);
    const fd = io(name, () => {
      makeFolder(name, dirname(path));
      return openSync(path, "a");
    });
    // Loading the C library can fail (a libc by another name): an error, not a trap.
    const locked = (operation) => {
      try {
        return io(name, () => flock(fd, operation));
      } catch (error) {
        closeSync(fd);
        throw error;
      }
    };
    const deadline = Date.now() + this.lockTimeoutMs;
    let wait = 0.2;
    for (;;) {
      const errno = locked(LOCK_EX | LOCK_NB);
      if (errno === 0) break;
      if (errno === EINTR) continue;
      if (errno !== EWOULDBLOCK || Date.now() >= deadline) {
        closeSync(fd);
        if (errno === EWOULDBLOCK) throw new StorageFailure("locked", name);
        throw new StorageFailure("io", { key: name, message: `flock failed with errno ${errno}` });
      }
      sleep(wait);
      wait = Math.min(wait * 2, 20);
    }
    this.held.set(name, fd);
  }

  unlock(name) {
    const fd = this.held.get(name);
    if (fd === undefined) return;
    this.held.delete(name);
    // Without the lock another writer may touch the file: the next append opens it.
    this.forgetAppender(name);
    // Closing the descriptor releases the flock even if unlocking failed.
    io(name, () => {
      try {
        flock(fd, LOCK_UN);
      } finally {
        closeSync(fd);
      }
    });
  }

  /** Releases every lock this storage holds (a closing store). */
  close() {
    for (const name of [...this.held.keys()]) this.unlock(name);
  }
}
