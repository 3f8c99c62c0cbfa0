"""Mneme's storage on a folder, for the Python host: the same files, guarantees and
lock files as the ``mneme`` CLI's storage (host-fs/src/lib.rs), so Python
processes, Node processes and ``mneme`` share one folder safely.

- append: one write at the old end, then fdatasync; a failed write is cut back out.
- replace: temp file, write, fdatasync, size check, rename, folder fsync.
- rename: hard link then unlink, so an existing target is never overwritten.
- lock: flock(2) on ``.mneme/locks/<name>.lock``, as the CLI takes it; the kernel
  drops it when the process dies.

Keys arrive checked by the core's rules (the component checks each key before it calls
out); this module adds the host's own: ``.mneme/`` is reserved, a path that would
resolve outside the root is refused, and a link is followed only while it stays
inside the store (``_check_inside``).
"""

import errno
import fcntl
import os
import stat
import time
import uuid

RESERVED_DIR = ".mneme"
# Why a key reached through a link is refused, as the CLI's storage says it.
LEADS_OUTSIDE = (
    "it is reached through a symbolic link that leads outside the store; Mneme follows links only inside it "
    "(to keep the store on another disk, link the store's folder itself, or its projects/ or memory/)"
)
LEADS_NOWHERE = "it is reached through a symbolic link that leads nowhere (to nothing, around a loop, or through a folder this user cannot open)"


class StorageFailure(Exception):
    """A storage error: ``tag`` is the WIT ``storage-error`` case, ``payload`` its value."""

    def __init__(self, tag, payload):
        super().__init__(f"{tag}: {payload}")
        self.tag = tag
        self.payload = payload


def _make_folder(key, folder):
    """Makes ``folder`` and those above it for ``key``. What stops it (a file where a
    folder must be, a root in a place that cannot hold one) is said with the folder's
    path: as the storage error of the failed call it would read as ``key`` missing."""
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.EEXIST):
            raise StorageFailure("io", {"key": key, "message": f"cannot make the folder {folder}: {error.strerror or error}"}) from error
        raise _failure(key, error) from error


def _failure(key, error):
    code = getattr(error, "errno", None)
    if code in (errno.ENOENT, errno.ENOTDIR):
        return StorageFailure("not-found", key)
    if code == errno.EEXIST:
        return StorageFailure("already-exists", key)
    if code in (errno.ENOSPC, errno.EDQUOT):
        return StorageFailure("quota-exceeded", key)
    if code == errno.EROFS:
        return StorageFailure("read-only", key)
    return StorageFailure("io", {"key": key, "message": str(error)})


class FsStorage:
    """Files under ``root``. ``durability``: "fsync" (an acknowledged write survives a
    power cut) or "buffered". ``lock_timeout_ms``: milliseconds ``lock`` waits for
    another holder before failing with ``locked`` (as every time in this package, and
    JavaScript's ``lockTimeoutMs``)."""

    def __init__(self, root, durability="fsync", lock_timeout_ms=30_000, read_only=False):
        if durability not in ("fsync", "buffered"):
            raise ValueError(f'durability must be "fsync" or "buffered", not {durability!r}')
        if os.path.exists(root) and not os.path.isdir(root):
            raise ValueError(f"the store's root {root} is not a folder: name a folder (it is made on the first write)")
        if isinstance(lock_timeout_ms, bool) or not isinstance(lock_timeout_ms, (int, float)) or not 0 <= lock_timeout_ms < float("inf"):
            raise ValueError(f"lock_timeout_ms must be a number of milliseconds, 0 or more, not {lock_timeout_ms!r}")
        self.root = os.path.abspath(root)
        self.durable = durability == "fsync"
        self.lock_timeout_ms = lock_timeout_ms
        self.read_only = read_only
        self.held = {}

    def _path(self, key):
        if key.split("/")[0] == RESERVED_DIR:
            raise StorageFailure("invalid-key", {"key": key, "reason": "`.mneme/` is reserved for Mneme's own files"})
        path = os.path.normpath(os.path.join(self.root, key))
        if not path.startswith(self.root + os.sep):
            raise StorageFailure("invalid-key", {"key": key, "reason": "the key names a path outside the store"})
        return path

    def _writable(self, key):
        path = self._path(key)
        if self.read_only:
            raise StorageFailure("read-only", key)
        return path

    def _check_inside(self, key, path):
        """Refuses ``key``'s file at ``path`` unless it lies inside the store, as the
        CLI's storage does (host-fs/src/lib.rs, ``check_inside``): its real path (for a
        file not written yet, its nearest existing folder's) inside the real path of the
        root or of the folder the key starts in. Links an owner makes to keep the store
        elsewhere (``projects/`` on another disk) are followed; a link below them, to a
        file or a folder, only while it stays inside; a link that leads nowhere, never."""
        if self._plainly_inside(key):
            return
        at = path
        while not os.path.lexists(at):
            parent = os.path.dirname(at)
            if at == self.root or parent == at:
                # Nothing of the store exists yet: nothing there can lead anywhere.
                return
            at = parent
        # There, but not as anything a path reaches: a link to nothing, a loop of
        # links, a folder on the way this user cannot search.
        if not os.path.exists(at):
            raise StorageFailure("invalid-key", {"key": key, "reason": LEADS_NOWHERE})
        real = os.path.realpath(at)
        folders = [self.root] + ([os.path.join(self.root, key.split("/")[0])] if "/" in key else [])
        for folder in folders:
            bound = os.path.realpath(folder)
            if os.path.exists(bound) and (real == bound or real.startswith(os.path.join(bound, ""))):
                return
        raise StorageFailure("invalid-key", {"key": key, "reason": LEADS_OUTSIDE})

    def _plainly_inside(self, key):
        """Whether ``key`` is inside by the rule of ``_check_inside`` seen from the root
        down, in a few ``lstat`` calls (the real path takes one a folder from ``/``, on
        every call of every write): true when no file or folder on its way below the
        top folder is a link and the top folder, if a link, leads to a folder. False
        leaves the answer to the full rule."""
        names = key.split("/")
        if os.name != "posix" or any(name in ("", ".", "..") for name in names):
            # What is opened is the path normalised; these keys are for the whole rule.
            return False
        at = self.root
        for depth, name in enumerate(names):
            at = f"{at}/{name}"
            try:
                mode = os.lstat(at).st_mode
            except (FileNotFoundError, NotADirectoryError):
                # Nothing from here down exists yet: inside, if what holds it is a
                # folder (not a root or top folder linked to nothing).
                return os.path.isdir(os.path.dirname(at))
            except OSError:
                return False
            if stat.S_ISLNK(mode):
                # A top folder is the owner's layout, followed wherever it leads.
                if depth == 0 and len(names) > 1 and os.path.isdir(at):
                    continue
                return False
        return True

    def _leads_inside(self, key, path):
        try:
            self._check_inside(key, path)
            return True
        except StorageFailure:
            return False

    def _sync(self, fd):
        if self.durable:
            # macOS has no fdatasync.
            getattr(os, "fdatasync", os.fsync)(fd)

    def _sync_folder(self, folder):
        if self.durable:
            fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def list(self, prefix):
        at = prefix.rfind("/")
        folder_key = prefix[:at] if at >= 0 else ""
        start = self.root
        if folder_key:
            try:
                start = self._path(folder_key)
            except StorageFailure:
                return []
            # A folder reached through a link out of the store holds none of its keys (a
            # top folder is the owner's layout, wherever it leads).
            if "/" in folder_key and not self._leads_inside(folder_key, start):
                return []
        found = []
        seen = set()

        def walk(folder, base, depth):
            # Only names that start a listed key are looked at, so an append (which lists
            # its session's parts) costs about the same in a project of one session as of
            # thousands. The walk starts in the folder the prefix's last "/" ends, so what
            # is left of it there has no "/"; below, every name is under it.
            rest = prefix[len(base) :] if prefix.startswith(base) else ""
            try:
                with os.scandir(folder) as scanned:
                    entries = [entry for entry in scanned if entry.name.startswith(rest)]
            except (FileNotFoundError, NotADirectoryError):
                return
            except OSError as error:
                raise _failure(prefix, error) from error
            for entry in entries:
                name = entry.name
                if base == "" and name == RESERVED_DIR:
                    continue
                if not _is_utf8(name):
                    # A name that is not UTF-8 cannot be a key (as in the CLI's storage).
                    continue
                key = base + name
                try:
                    found_stat = entry.stat()
                except OSError:
                    continue
                is_folder = stat.S_ISDIR(found_stat.st_mode)
                top_folder = base == "" and is_folder
                if not top_folder and entry.is_symlink() and not self._leads_inside(key, entry.path):
                    continue
                if is_folder:
                    sub = key + "/"
                    identity = (found_stat.st_dev, found_stat.st_ino)
                    if identity not in seen and depth < 64:
                        seen.add(identity)
                        walk(os.path.join(folder, name), sub, depth + 1)
                        seen.discard(identity)
                else:
                    found.append((key, found_stat.st_size))

        walk(start, folder_key + "/" if folder_key else "", 0)
        return sorted(found, key=lambda item: item[0].encode())

    def read(self, key, offset, length):
        path = self._path(key)
        self._check_inside(key, path)
        try:
            with open(path, "rb") as file:
                size = os.fstat(file.fileno()).st_size
                if offset >= size:
                    return b""
                file.seek(offset)
                return file.read() if length is None else file.read(length)
        except IsADirectoryError:
            raise StorageFailure("not-found", key) from None
        except OSError as error:
            raise _failure(key, error) from error

    def append(self, key, data):
        path = self._writable(key)
        self._check_inside(key, path)
        created = False
        # The file exists but for a session's first append: opened as it is first, so
        # the common case raises nothing.
        try:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            except (FileNotFoundError, NotADirectoryError):
                try:
                    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
                except (FileNotFoundError, NotADirectoryError):
                    _make_folder(key, os.path.dirname(path))
                    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
                created = True
        except FileExistsError:
            # Created by another writer since the first look: append to it as it is.
            try:
                fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            except OSError as error:
                raise _failure(key, error) from error
        except OSError as error:
            raise _failure(key, error) from error
        try:
            old_size = os.fstat(fd).st_size
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                self._sync(fd)
            except OSError as error:
                # The call must be atomic: take back what landed, so no partial line stays.
                try:
                    if created:
                        os.unlink(path)
                    else:
                        os.ftruncate(fd, old_size)
                except OSError as undo:
                    raise StorageFailure("io", {"key": key, "message": f"{error}; undoing the partial write failed too: {undo}"}) from error
                raise _failure(key, error) from error
            if created:
                _landed(key, self._sync_folder, os.path.dirname(path))
            return old_size + len(data)
        finally:
            os.close(fd)

    def replace(self, key, data, expected_size):
        path = self._writable(key)
        self._check_inside(key, path)
        folder = os.path.dirname(path)
        temp = os.path.join(folder, f".{os.path.basename(path)}.tmp-{os.getpid()}-{uuid.uuid4().hex}")
        try:
            _make_folder(key, folder)
            # "x": a name another writer took is an error, never its half-written file.
            with open(temp, "xb") as file:
                file.write(data)
                file.flush()
                self._sync(file.fileno())
            # Checked as late as possible, right before the rename (see the CLI's storage).
            if expected_size is not None and os.stat(path).st_size != expected_size:
                raise StorageFailure("changed", key)
            os.rename(temp, path)
        except StorageFailure:
            _remove_quietly(temp)
            raise
        except OSError as error:
            _remove_quietly(temp)
            raise _failure(key, error) from error
        _landed(key, self._sync_folder, folder)

    def truncate(self, key, length, expected_size):
        path = self._writable(key)
        self._check_inside(key, path)
        try:
            fd = os.open(path, os.O_WRONLY)
        except OSError as error:
            raise _failure(key, error) from error
        try:
            size = os.fstat(fd).st_size
            if size != expected_size:
                raise StorageFailure("changed", key)
            if size > length:
                os.ftruncate(fd, length)
                self._sync(fd)
        except OSError as error:
            raise _failure(key, error) from error
        finally:
            os.close(fd)

    def remove(self, key):
        path = self._writable(key)
        self._check_inside(key, path)
        try:
            os.unlink(path)
        except OSError as error:
            raise _failure(key, error) from error
        # Temp files of replacements a crash interrupted go with the object.
        folder = os.path.dirname(path)
        stale = f".{os.path.basename(path)}.tmp-"
        for name in os.listdir(folder):
            if name.startswith(stale):
                _remove_quietly(os.path.join(folder, name))
        _landed(key, self._sync_folder, folder)

    def rename(self, source, target):
        source_path = self._writable(source)
        target_path = self._writable(target)
        self._check_inside(source, source_path)
        self._check_inside(target, target_path)
        if not os.path.isfile(source_path):
            raise StorageFailure("not-found", source)
        try:
            _make_folder(target, os.path.dirname(target_path))
            # A hard link fails if the target exists, atomically: never an overwrite.
            # Not through a link (macOS's link(2) follows one): the name moves, as on Linux.
            os.link(source_path, target_path, follow_symlinks=False)
        except OSError as error:
            raise _failure(target, error) from error
        _landed(source, os.unlink, source_path)
        _landed(target, self._sync_folder, os.path.dirname(target_path))
        _landed(source, self._sync_folder, os.path.dirname(source_path))

    def lock(self, name):
        self._path(name)
        if self.read_only:
            raise StorageFailure("read-only", name)
        if name in self.held:
            raise StorageFailure("locked", name)
        path = os.path.join(self.root, RESERVED_DIR, "locks", name + ".lock")
        try:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
            except (FileNotFoundError, NotADirectoryError):
                _make_folder(name, os.path.dirname(path))
                fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        except OSError as error:
            raise _failure(name, error) from error
        deadline = time.monotonic() + self.lock_timeout_ms / 1000
        pause = 0.0002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise StorageFailure("locked", name) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.02)
            except OSError as error:
                os.close(fd)
                raise _failure(name, error) from error
            except BaseException:
                # Interrupted while waiting (Ctrl-C): the descriptor is not kept.
                os.close(fd)
                raise
        self.held[name] = fd

    def unlock(self, name):
        fd = self.held.pop(name, None)
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                # Closing the descriptor gives the lock back even if the unlock failed.
                os.close(fd)

    def close(self):
        """Releases every lock it holds."""
        for name in list(self.held):
            self.unlock(name)


def _landed(key, action, *args):
    """Runs ``action`` once the change is in place: a failure now is never a kind that
    says nothing was written (a full disk refusing the folder's sync), as the core undoes
    only what may have landed."""
    try:
        action(*args)
    except OSError as error:
        raise StorageFailure("io", {"key": key, "message": str(error)}) from error


def _remove_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _is_utf8(name):
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False
