// OPFS storage, in a dedicated worker: the only context where sync access handles
// exist. Handles are exclusive across the origin, so each one is held only for the
// duration of one operation (another tab's worker may need the same file next).

let root;
let writes = 0;
let quotaAt = 0;

function failure(kind, key, message) {
  return { kind, key, message: message ?? `${kind}: ${key}` };
}

function fromError(error, key) {
  if (error && error.kind) return error;
  const name = error?.name;
  const kind = name === "QuotaExceededError" ? "quota-exceeded" : name === "NotFoundError" || name === "TypeMismatchError" ? "not-found" : "io";
  return failure(kind, key, `${name ?? "Error"}: ${error?.message ?? error}`);
}

async function parent(key, create) {
  const segments = key.split("/");
  let dir = root;
  for (const segment of segments.slice(0, -1)) dir = await dir.getDirectoryHandle(segment, { create });
  return { dir, name: segments[segments.length - 1] };
}

async function fileHandle(key, create) {
  const { dir, name } = await parent(key, create);
  return dir.getFileHandle(name, { create });
}

async function exists(key) {
  try {
    await fileHandle(key, false);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `attempt` again while it fails with one of `refusals`: Chromium's answer while
 * another worker holds a sync access handle on the file (another tab's write holds one
 * for milliseconds; a worker being terminated, a moment more). Gives up after ~2 s.
 */
async function whileHeld(refusals, attempt) {
  for (let tries = 0; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (tries > 200 || !refusals.includes(error.name)) throw error;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

/** Runs `work` with a sync access handle, waiting while another worker holds one. */
async function withHandle(handle, work) {
  const access = await whileHeld(["NoModificationAllowedError", "InvalidStateError"], () => handle.createSyncAccessHandle());
  try {
    return work(access);
  } finally {
    access.close();
  }
}

/** A move or a removal, waiting while another worker holds the file it touches. */
const whileLocked = (change) => whileHeld(["NoModificationAllowedError"], change);

/** The file as a File (its size, for a listing): a reader waits for the writer instead of failing. */
const snapshot = (handle) => whileHeld(["NotReadableError"], () => handle.getFile());

/**
 * Bytes `offset` to `len` of a file, from one snapshot: a writer in another tab between
 * the snapshot and reading its bytes makes them unreadable (NotReadableError), so the
 * whole read, snapshot and bytes, is tried again until it sees one whole state.
 */
const readWhole = (handle, offset, len) =>
  whileHeld(["NotReadableError"], async () => {
    const file = await handle.getFile();
    const end = len == null ? file.size : Math.min(file.size, offset + len);
    return new Uint8Array(await file.slice(Math.min(offset, file.size), end).arrayBuffer());
  });

function injected() {
  writes += 1;
  return quotaAt > 0 && writes === quotaAt;
}

const ops = {
  async init(namespace) {
    const opfs = await navigator.storage.getDirectory();
    root = await (await opfs.getDirectoryHandle("mneme", { create: true })).getDirectoryHandle(namespace, { create: true });
  },

  arm(at) {
    writes = 0;
    quotaAt = at;
  },

  async list(prefix) {
    const found = [];
    // The folders the prefix names whole are opened by name, so only the last one is
    // read: a prefix naming one file costs a few lookups, not a listing of every
    // folder on the way (a memory folder of 100,000 files).
    let start = root;
    let base = "";
    for (const segment of prefix.split("/").slice(0, -1)) {
      try {
        start = await start.getDirectoryHandle(segment);
      } catch (error) {
        if (error.name === "NotFoundError" || error.name === "TypeMismatchError") return [];
        throw error;
      }
      base += segment + "/";
    }
    // Sizes are asked for all at once (one at a time, a folder of 100,000 files takes
    // 35 s); a lookup's failure is kept rather than rejected, so none goes unhandled
    // when the listing itself fails first.
    const sizes = [];
    let failed;
    async function walk(dir, base) {
      for await (const [name, entry] of dir.entries()) {
        const key = base + name;
        if (entry.kind === "directory") {
          if ((key + "/").startsWith(prefix) || prefix.startsWith(key + "/")) await walk(entry, key + "/");
        } else if (key.startsWith(prefix) && !name.startsWith(".mneme-tmp-")) {
          // A file another tab moved away (archived, renamed) since the folder was read is not listed.
          sizes.push(snapshot(entry).then((file) => found.push({ key, size: file.size }), (error) => {
            if (error.name !== "NotFoundError") failed ??= error;
          }));
        }
      }
    }
    await walk(start, base);
    await Promise.all(sizes);
    if (failed) throw failed;
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  },

  async read(key, offset, len) {
    return readWhole(await fileHandle(key, false), offset, len);
  },

  async append(key, data) {
    const handle = await fileHandle(key, true);
    return withHandle(handle, (access) => {
      const size = access.getSize();
      try {
        if (injected()) {
          // A real partial write: half the bytes land, then the quota runs out.
          access.write(data.subarray(0, data.length >> 1), { at: size });
          throw new DOMException("injected by a test", "QuotaExceededError");
        }
        const written = access.write(data, { at: size });
        if (written !== data.length) throw new DOMException(`wrote ${written} of ${data.length} bytes`, "QuotaExceededError");
        access.flush();
        return size + data.length;
      } catch (error) {
        // Keep the append atomic: nothing of a failed write may stay to fuse with the next.
        access.truncate(size);
        access.flush();
        throw error;
      }
    });
  },

  async replace(key, data, expectedSize) {
    const { dir, name } = await parent(key, true);
    // Checked before the swap: the writer's Web Lock keeps other Mneme writers out,
    // and the check is as close to the move as OPFS allows.
    const checkUnchanged = async () => {
      if (expectedSize == null) return;
      const size = (await snapshot(await fileHandle(key, false))).size;
      if (size !== expectedSize) throw failure("changed", key);
    };
    const temp = `.mneme-tmp-${name}`;
    const handle = await dir.getFileHandle(temp, { create: true });
    try {
      await withHandle(handle, (access) => {
        access.truncate(0);
        if (injected()) throw new DOMException("injected by a test", "QuotaExceededError");
        const written = access.write(data, { at: 0 });
        if (written !== data.length) throw new DOMException(`wrote ${written} of ${data.length} bytes`, "QuotaExceededError");
        access.flush();
      });
      await checkUnchanged();
      // Moving over the old file swaps it whole: readers see the old or the new content.
      await whileLocked(() => handle.move(dir, name));
    } catch (error) {
      // A copy that did not replace the file must not hold the quota a retry needs.
      await dir.removeEntry(temp).catch(() => {});
      throw error;
    }
  },

  async truncate(key, len, expectedSize) {
    const handle = await fileHandle(key, false);
    return withHandle(handle, (access) => {
      const size = access.getSize();
      if (size !== expectedSize) throw failure("changed", key);
      if (size <= len) return;
      if (injected()) throw new DOMException("injected by a test", "QuotaExceededError");
      access.truncate(len);
      access.flush();
    });
  },

  async remove(key) {
    const { dir, name } = await parent(key, false);
    await whileLocked(() => dir.removeEntry(name));
  },

  async rename(from, to) {
    if (await exists(to)) throw failure("already-exists", to);
    const handle = await fileHandle(from, false);
    const { dir, name } = await parent(to, true);
    await whileLocked(() => handle.move(dir, name));
  },
};

self.onmessage = async ({ data: { id, op, args } }) => {
  try {
    const result = await ops[op](...args);
    self.postMessage({ id, ok: true, result });
  } catch (error) {
    self.postMessage({ id, ok: false, error: fromError(error, args[0]) });
  }
};
