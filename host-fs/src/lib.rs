//! [`mneme_core::Storage`] on a directory: the `mneme` CLI's storage, and under WASI the storage
//! the `wasmtime run` build of Mneme provides to the engine (host-wasi/).
//!
//! Keys map to paths under the root segment by segment. Keys are checked lexically
//! and anything that could name a path outside the root, or mean different files on
//! different platforms, is refused. Links are followed while they stay inside the
//! store, the root and its top folders as their real paths (people link
//! `~/.claude/projects` to other disks): `FsStorage::check_inside`. The engine has no
//! operation that creates a link.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use mneme_core::keys::parse_session_key;
use mneme_core::{KeyInfo, StorageError};

mod home;
pub use home::{Home, HomeStorage};

/// Mneme's own files under the root (lock files); no key may reach into it.
const RESERVED_DIR: &str = ".mneme";
const WINDOWS_DEVICE_NAMES: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "LPT1", "LPT2", "LPT3", "LPT4",
    "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

/// Why a key reached through a link is refused: said to the person whose link it is
/// (a model that asked cannot change a link), and without where it leads.
const LEADS_OUTSIDE: &str = "it is reached through a symbolic link that leads outside the store; Mneme follows links only \
     inside it (to keep the store on another disk, link the store's folder itself, or its projects/ or memory/)";
const LEADS_NOWHERE: &str = "it is reached through a symbolic link that leads nowhere (to nothing, around a loop, or through a \
     folder this user cannot open)";

/// When an append is acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// After `fsync`: the entry survives a power cut.
    Fsync,
    /// After the write reaches the OS: survives a crash of the process, not of the machine.
    Buffered,
}

#[derive(Debug)]
pub struct FsStorage {
    root: PathBuf,
    read_only: bool,
    durability: Durability,
    lock_timeout: Duration,
    held_locks: Mutex<HashMap<String, File>>,
    /// Files kept open for appending between appends, with their identity when opened:
    /// an append first checks the path still names that file (a replace, a remove or
    /// another program's rewrite means opening it again), so no line goes to a file
    /// that is no longer there. Saves the folder creation, open and close of each append.
    appenders: Mutex<HashMap<String, Appender>>,
}

/// An open append handle and the identity (device, inode) of the file it was opened on.
#[derive(Debug)]
struct Appender {
    file: File,
    identity: (u64, u64),
    /// The file's length after this storage's last append, kept while this storage
    /// holds the lock that covers the file (see [`FsStorage::holds`]): no other writer
    /// may touch the file then (the lock's contract), so the next append needs neither
    /// the path's check nor the length's. Forgotten when the lock is given back.
    held_len: Option<u64>,
}

/// Append handles kept open at most; the cache is emptied when it would grow past this.
const MAX_APPENDERS: usize = 64;

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl FsStorage {
    /// A writable store rooted at `root` (created on first write).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            read_only: false,
            durability: Durability::Fsync,
            lock_timeout: Duration::from_secs(30),
            held_locks: Mutex::default(),
            appenders: Mutex::default(),
        }
    }

    /// A store that refuses every write with [`StorageError::ReadOnly`].
    pub fn read_only(root: impl Into<PathBuf>) -> Self {
        Self { read_only: true, ..Self::new(root) }
    }

    pub fn with_durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// How long [`mneme_core::Storage::lock`] waits for another holder before failing.
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The path a key maps to, or why the key is refused.
    pub fn resolve(&self, key: &str) -> Result<PathBuf, StorageError> {
        check_key(key).map_err(|reason| StorageError::InvalidKey { key: key.to_owned(), reason })?;
        Ok(self.root.join(key))
    }

    fn writable(&self, key: &str) -> Result<PathBuf, StorageError> {
        let path = self.resolve(key)?;
        if self.read_only {
            return Err(StorageError::ReadOnly { key: key.to_owned() });
        }
        Ok(path)
    }

    /// Refuses `key`'s file at `path` unless it lies inside the store: its real path
    /// (for a file not written yet, its nearest existing folder's) inside the real path
    /// of the root or of the folder the key starts in. So the links an owner makes to
    /// keep the store elsewhere (`projects/` or `memory/` on another disk, the root
    /// itself) are followed, and a link below them, to a file or a folder, only while
    /// it stays inside. A link a program with a shell left in a memory folder
    /// (`notes.md -> ~/.ssh/id_ed25519`, `memory -> ~`) is not listed, read, written
    /// through, replaced or removed through, and a model using the memory tool cannot
    /// reach what it leads to; nor a link that leads nowhere. Under WASI the runtime
    /// keeps every path inside the folder it was given.
    fn check_inside(&self, key: &str, path: &Path) -> Result<(), StorageError> {
        if cfg!(target_os = "wasi") {
            return Ok(());
        }
        let refuse = |reason: &str| Err(StorageError::InvalidKey { key: key.to_owned(), reason: reason.to_owned() });
        let mut at = path;
        let real = loop {
            if fs::symlink_metadata(at).is_ok() {
                match fs::canonicalize(at) {
                    Ok(real) => break real,
                    // There, but not as anything a path reaches: a link to nothing, a
                    // loop of links, a folder on the way this user cannot search.
                    Err(_) => return refuse(LEADS_NOWHERE),
                }
            }
            match at.parent() {
                Some(parent) if at != self.root => at = parent,
                // Nothing of the store exists yet: nothing there can lead anywhere.
                _ => return Ok(()),
            }
        };
        let inside = |folder: &Path| fs::canonicalize(folder).is_ok_and(|folder| real.starts_with(folder));
        if inside(&self.root) || key.split_once('/').is_some_and(|(top, _)| inside(&self.root.join(top))) {
            return Ok(());
        }
        refuse(LEADS_OUTSIDE)
    }

    fn sync(&self, file: &File) -> io::Result<()> {
        match self.durability {
            Durability::Fsync => file.sync_data(),
            Durability::Buffered => Ok(()),
        }
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        // WASI too: wasi:filesystem syncs a folder's descriptor (without it a new
        // session's file could be lost in a power cut under `wasmtime run`).
        if self.durability == Durability::Fsync && cfg!(any(unix, target_os = "wasi")) {
            // The parent of a relative root of one name (`--root store`) is the empty
            // path, which names no folder: it is the current one.
            let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    }

    /// Creates `dir` and its missing parents. Each new folder is durable only once the
    /// folder holding it is synced: without that, a power cut can take a new project's
    /// folder, and the acknowledged session in it, away.
    fn create_dirs(&self, dir: &Path) -> io::Result<()> {
        if dir.is_dir() {
            return Ok(());
        }
        let missing: Vec<&Path> = dir.ancestors().take_while(|at| !at.exists()).collect();
        fs::create_dir_all(dir).map_err(|e| unmade_folder(dir, e))?;
        for created in missing.iter().rev() {
            self.sync_dir(created.parent().unwrap_or(&self.root))?;
        }
        Ok(())
    }

    fn held_locks(&self) -> std::sync::MutexGuard<'_, HashMap<String, File>> {
        // A panic while holding the map cannot leave it inconsistent (insert/remove only).
        self.held_locks.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Why `key` is refused, if it is: the core's portable rules, Mneme's reserved
/// folder, and on Windows the names Windows would misread. Device names and `:` are
/// ordinary file names on Linux and macOS, so `aux` is a valid session there.
fn check_key(key: &str) -> Result<(), String> {
    mneme_core::keys::check_key(key).map_err(|e| match e {
        StorageError::InvalidKey { reason, .. } => reason,
        other => other.to_string(),
    })?;
    if key.split('/').next() == Some(RESERVED_DIR) {
        return Err("`.mneme/` is reserved for Mneme's own files".into());
    }
    if cfg!(windows) {
        windows_rules(key)?;
    }
    Ok(())
}

fn windows_rules(key: &str) -> Result<(), String> {
    if key.contains(':') {
        return Err("':' would name a drive or an alternate data stream on Windows".into());
    }
    for segment in key.split('/') {
        if segment.ends_with('.') || segment.ends_with(' ') {
            return Err("a segment ending in '.' or ' ' names another file on Windows".into());
        }
        let stem = segment.split('.').next().unwrap_or(segment);
        if WINDOWS_DEVICE_NAMES.iter().any(|name| stem.eq_ignore_ascii_case(name)) {
            return Err("a Windows device name (CON, NUL, COM1, ...) cannot be a file on Windows".into());
        }
    }
    Ok(())
}

/// Reads this big (a long session's transcript) are worth backing with huge pages.
const HUGE_PAGE_READ: u64 = 8 << 20;

/// Asks Linux to back the unwritten buffer with 2 MiB pages: a read into fresh memory
/// faults every page in, and a 100 MB session read for its context spent about a third
/// of the read doing that with 4 KiB ones. Only advice: where transparent huge pages
/// are off (or elsewhere than Linux), nothing changes.
fn advise_huge_pages(buffer: &mut Vec<u8>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = buffer.as_mut_ptr() as usize;
        let (first, end) = (start.next_multiple_of(HUGE), (start + buffer.capacity()) & !(HUGE - 1));
        if end > first {
            // SAFETY: the range lies inside the buffer's own allocation; MADV_HUGEPAGE
            // changes how its pages are backed, not what they hold.
            unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buffer;
}

/// Reads `size` bytes of `file` at `offset` into `data`'s reserved capacity, a slice
/// per core: copying from the page cache is the CPU's work (a fifth of a 100 MB
/// session's context), and split over two cores that context took 197 ms where it had
/// taken 235. Keeps the bytes up to the first slice that came short (the file was cut
/// meanwhile). Elsewhere than Linux, reads nothing: the caller's sequential read does
/// it all.
fn read_split(file: &File, offset: u64, size: usize, data: &mut Vec<u8>) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get).min(4);
        let Some(spare) = data.spare_capacity_mut().get_mut(..size) else { return Ok(()) };
        let piece = spare.len().div_ceil(threads).max(1);
        let counts = std::thread::scope(|scope| {
            let reads: Vec<_> = spare
                .chunks_mut(piece)
                .enumerate()
                .map(|(i, slice)| {
                    let at = offset + (i * piece) as u64;
                    scope.spawn(move || (slice.len(), pread_all(file, slice, at)))
                })
                .collect();
            reads
                .into_iter()
                .map(|read| read.join().unwrap_or_else(|_| (1, Err(io::Error::other("a read thread panicked")))))
                .collect::<Vec<_>>()
        });
        let mut filled = 0;
        for (wanted, count) in counts {
            let count = count?;
            filled += count;
            if count < wanted {
                break;
            }
        }
        // SAFETY: the slices are the spare capacity in order, and each was written by
        // `pread` from its start for as many bytes as counted: the first `filled` are
        // initialised.
        unsafe { data.set_len(filled) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, size, data);
    Ok(())
}

/// Reads into `slice` from `file` at `offset` until it is full or the file ends; the
/// bytes read.
#[cfg(target_os = "linux")]
fn pread_all(file: &File, slice: &mut [std::mem::MaybeUninit<u8>], offset: u64) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let mut done = 0;
    while done < slice.len() {
        let at = libc::off_t::try_from(offset + done as u64).map_err(|_| io::Error::from(ErrorKind::InvalidInput))?;
        let rest = &mut slice[done..];
        // SAFETY: `pread` writes at most `rest.len()` bytes, into `rest`'s own memory.
        let count = unsafe { libc::pread(file.as_raw_fd(), rest.as_mut_ptr().cast(), rest.len(), at) };
        match usize::try_from(count) {
            Ok(0) => break,
            Ok(count) => done += count,
            Err(_) => {
                let error = io::Error::last_os_error();
                if error.kind() != ErrorKind::Interrupted {
                    return Err(error);
                }
            }
        }
    }
    Ok(done)
}

/// Whether two paths name one file (one inode), as a link leaves them.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // Not through a symlink: one at `b` that points at `a` is another name, not a link.
        matches!((fs::symlink_metadata(a), fs::symlink_metadata(b)), (Ok(a), Ok(b)) if a.dev() == b.dev() && a.ino() == b.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        false
    }
}

/// A failure once the change is in place: never a kind that says nothing was written
/// (a full disk refusing the folder's sync), as the core undoes only what may have landed.
fn landed(key: &str, error: io::Error) -> StorageError {
    StorageError::Io { key: key.to_owned(), message: error.to_string() }
}

/// A folder that could not be made, said with its path: what stops it (a file where a
/// folder must be, a root in a place that cannot hold one) would otherwise read as the
/// key of the failed call missing.
fn unmade_folder(dir: &Path, error: io::Error) -> io::Error {
    match error.kind() {
        ErrorKind::NotFound | ErrorKind::NotADirectory | ErrorKind::AlreadyExists => {
            io::Error::other(format!("cannot make the folder {}: {error}", dir.display()))
        }
        _ => error,
    }
}

fn io_error(key: &str, error: io::Error) -> StorageError {
    let key = key.to_owned();
    match error.kind() {
        ErrorKind::NotFound => StorageError::NotFound { key },
        ErrorKind::AlreadyExists => StorageError::AlreadyExists { key },
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => StorageError::QuotaExceeded { key },
        ErrorKind::ReadOnlyFilesystem => StorageError::ReadOnly { key },
        _ => StorageError::Io { key, message: error.to_string() },
    }
}

impl FsStorage {
    fn list_sync(&self, prefix: &str) -> Result<Vec<KeyInfo>, StorageError> {
        // Walk only the folder the prefix's complete segments name.
        let dir_part = prefix.rfind('/').map_or("", |at| &prefix[..at]);
        let start = if dir_part.is_empty() {
            self.root.clone()
        } else {
            match self.resolve(dir_part) {
                // A folder reached through a link out of the store holds none of its keys
                // (a top folder is the owner's layout, wherever it leads).
                Ok(path) if !dir_part.contains('/') || self.check_inside(dir_part, &path).is_ok() => path,
                // A prefix no key can have matches nothing.
                _ => return Ok(Vec::new()),
            }
        };
        let mut found = Vec::new();
        let base = if dir_part.is_empty() { String::new() } else { format!("{dir_part}/") };
        self.walk(&start, &base, prefix, &mut found).map_err(|e| io_error(prefix, e))?;
        found.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(found)
    }

    fn read_sync(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, StorageError> {
        let path = self.resolve(key)?;
        self.check_inside(key, &path)?;
        let read = || -> io::Result<Vec<u8>> {
            let mut file = File::open(&path)?;
            let metadata = file.metadata()?;
            if metadata.is_dir() {
                return Err(io::Error::new(ErrorKind::NotFound, "is a folder"));
            }
            // Past the end is empty, by the contract; seeking there can be EINVAL.
            if offset >= metadata.len() {
                return Ok(Vec::new());
            }
            let mut data = Vec::new();
            let size = (metadata.len() - offset).min(len.unwrap_or(u64::MAX));
            // Reserved only when it can be: a read too big for memory fails in the read.
            if size >= HUGE_PAGE_READ
                && let Ok(size) = usize::try_from(size)
                && data.try_reserve_exact(size).is_ok()
            {
                advise_huge_pages(&mut data);
                read_split(&file, offset, size, &mut data)?;
            }
            // The rest: all of a smaller read, and what was appended since the size was
            // taken (the whole file is asked for: a writer may be adding to it).
            file.seek(SeekFrom::Start(offset + data.len() as u64))?;
            match len {
                Some(len) => file.take(len - data.len() as u64).read_to_end(&mut data)?,
                None => file.read_to_end(&mut data)?,
            };
            Ok(data)
        };
        read().map_err(|e| match io_error(key, e) {
            // `list` names a file whose name is not UTF-8 with U+FFFD in place of the
            // bad bytes; no key reaches it, and the caller should hear why.
            StorageError::NotFound { key } if key.contains(char::REPLACEMENT_CHARACTER) => {
                StorageError::InvalidKey { key, reason: "the file's name is not valid UTF-8; rename the file to use it".to_owned() }
            }
            other => other,
        })
    }

    fn append_sync(&self, key: &str, data: &[u8]) -> Result<u64, StorageError> {
        // A kept handle's key was checked when it was kept (a read-only store keeps none).
        if let Some(size) = self.append_open(key, data).map_err(|e| io_error(key, e))? {
            return Ok(size);
        }
        let path = self.writable(key)?;
        self.check_inside(key, &path)?;
        let append = || -> io::Result<u64> {
            let parent = path.parent().unwrap_or(&self.root);
            self.create_dirs(parent)?;
            let created = !path.exists();
            let file = OpenOptions::new().create(true).append(true).open(&path)?;
            let old_len = file.metadata()?.len();
            self.write_or_undo(&file, created.then_some(&*path), old_len, data)?;
            // A new file is durable only once its folder entry is.
            if created {
                self.sync_dir(parent).map_err(io::Error::other)?;
            }
            // The line has landed: keeping the handle is only a saving, never a failure.
            if cfg!(unix)
                && let Ok(metadata) = file.metadata()
            {
                // Asked under the handles' lock: an unlock in between would leave a
                // kept length no unlock clears.
                let mut appenders = self.appenders.lock().unwrap_or_else(PoisonError::into_inner);
                let held_len = self.holds(key).then_some(old_len + data.len() as u64);
                if appenders.len() >= MAX_APPENDERS {
                    appenders.clear();
                }
                appenders.insert(key.to_owned(), Appender { file, identity: folder_id(&metadata), held_len });
            }
            Ok(old_len + data.len() as u64)
        };
        append().map_err(|e| io_error(key, e))
    }

    fn replace_sync(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), StorageError> {
        let path = self.writable(key)?;
        self.check_inside(key, &path)?;
        self.forget_appender(key);
        let parent = path.parent().unwrap_or(&self.root);
        self.create_dirs(parent).map_err(|e| io_error(key, e))?;
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("object");
        let temp = parent.join(format!(".{name}.tmp-{}", temp_suffix()));
        let written = (|| {
            // `create_new`: a name another writer took is an error, never its half-written file.
            let mut file = File::options().write(true).create_new(true).open(&temp).map_err(|e| io_error(key, e))?;
            file.write_all(data).map_err(|e| io_error(key, e))?;
            self.sync(&file).map_err(|e| io_error(key, e))?;
            // Checked as late as possible, right before the rename: a program that takes
            // no lock Mneme sees can still append in the gap between two system calls,
            // but not while the new content was being written.
            if let Some(expected) = expected_size {
                let size = fs::metadata(&path).map_err(|e| io_error(key, e))?.len();
                if size != expected {
                    return Err(StorageError::Changed { key: key.to_owned() });
                }
            }
            fs::rename(&temp, &path).map_err(|e| io_error(key, e))
        })();
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
        written?;
        self.sync_dir(parent).map_err(|e| landed(key, e))
    }

    fn truncate_sync(&self, key: &str, len: u64, expected_size: u64) -> Result<(), StorageError> {
        let path = self.writable(key)?;
        self.check_inside(key, &path)?;
        self.forget_appender(key);
        let file = OpenOptions::new().write(true).open(&path).map_err(|e| io_error(key, e))?;
        let size = file.metadata().map_err(|e| io_error(key, e))?.len();
        if size != expected_size {
            return Err(StorageError::Changed { key: key.to_owned() });
        }
        if size > len {
            file.set_len(len).map_err(|e| io_error(key, e))?;
            self.sync(&file).map_err(|e| io_error(key, e))?;
        }
        Ok(())
    }

    fn remove_sync(&self, key: &str) -> Result<(), StorageError> {
        let path = self.writable(key)?;
        self.check_inside(key, &path)?;
        self.forget_appender(key);
        fs::remove_file(&path).map_err(|e| io_error(key, e))?;
        // Temp files of replacements a crash interrupted go with the object.
        if let (Some(parent), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) {
            let stale = format!(".{name}.tmp-");
            for entry in fs::read_dir(parent).into_iter().flatten().flatten() {
                if entry.file_name().to_str().is_some_and(|n| n.starts_with(&stale)) {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
        self.sync_dir(path.parent().unwrap_or(&self.root)).map_err(|e| io_error(key, e))
    }

    fn rename_sync(&self, from: &str, to: &str) -> Result<(), StorageError> {
        let from_path = self.writable(from)?;
        let to_path = self.writable(to)?;
        self.check_inside(from, &from_path)?;
        self.check_inside(to, &to_path)?;
        if !from_path.is_file() {
            return Err(StorageError::NotFound { key: from.to_owned() });
        }
        self.forget_appender(from);
        let parent = to_path.parent().unwrap_or(&self.root);
        self.create_dirs(parent).map_err(|e| io_error(to, e))?;
        // A hard link fails if `to` exists, atomically: a check-then-rename could
        // overwrite a file created in between. A rename cut between its link and its
        // unlink (kill -9, a power cut) left both names on one file: this one finishes
        // it, where refusing would leave the file in two places for good.
        if let Err(error) = fs::hard_link(&from_path, &to_path)
            && !(error.kind() == ErrorKind::AlreadyExists && same_file(&from_path, &to_path))
        {
            return Err(io_error(to, error));
        }
        fs::remove_file(&from_path).map_err(|e| landed(from, e))?;
        self.sync_dir(parent).map_err(|e| landed(to, e))?;
        self.sync_dir(from_path.parent().unwrap_or(&self.root)).map_err(|e| landed(from, e))
    }

    /// Appends through a handle kept open from an earlier append, if the path still
    /// names its file; `None` when there is none to use. Under the lock that covers
    /// the key, held since the last append, the file is known and the append is one
    /// write.
    fn append_open(&self, key: &str, data: &[u8]) -> io::Result<Option<u64>> {
        let mut appenders = self.appenders.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(appender) = appenders.get_mut(key) else { return Ok(None) };
        let old_len = match appender.held_len {
            Some(len) => len,
            None => {
                match fs::metadata(self.root.join(key)) {
                    Ok(metadata) if folder_id(&metadata) == appender.identity => {}
                    _ => {
                        appenders.remove(key);
                        return Ok(None);
                    }
                }
                match appender.file.metadata() {
                    Ok(metadata) => metadata.len(),
                    Err(error) => {
                        appenders.remove(key);
                        return Err(error);
                    }
                }
            }
        };
        match self.write_or_undo(&appender.file, None, old_len, data) {
            Ok(()) => {
                let new_len = old_len + data.len() as u64;
                // A length kept means the lock is still held: giving it back forgets it.
                let held = appender.held_len.is_some() || self.holds(key);
                appender.held_len = held.then_some(new_len);
                Ok(Some(new_len))
            }
            Err(error) => {
                appenders.remove(key);
                Err(error)
            }
        }
    }

    /// Whether this storage holds the lock that covers `key`: the one named by `key`
    /// itself, or for a later part of a session, its first part's (the core names a
    /// session's lock by its first part's key).
    fn holds(&self, key: &str) -> bool {
        self.held_locks().keys().any(|lock| covers(lock, key))
    }

    /// Closes the append handle kept for `key`, if any (the file is going away).
    fn forget_appender(&self, key: &str) {
        self.appenders.lock().unwrap_or_else(PoisonError::into_inner).remove(key);
    }

    /// Writes `data` at the end of `file` (opened for appending at `old_len`) and syncs
    /// it; on failure takes it back out, so the call stays atomic: no partial line may
    /// stay behind to fuse with the next, no empty file stand for a session never written.
    /// `created` is the file's path when this append created it.
    fn write_or_undo(&self, file: &File, created: Option<&Path>, old_len: u64, data: &[u8]) -> io::Result<()> {
        let written = (&*file).write_all(data).and_then(|()| self.sync(file));
        let Err(error) = written else { return Ok(()) };
        let rolled_back = match created {
            Some(path) => fs::remove_file(path),
            None => file.set_len(old_len),
        };
        Err(match rolled_back {
            Ok(()) => error,
            // What is on disk is unknown now: not a refusal that wrote nothing.
            Err(rollback) => io::Error::other(format!("{error}; undoing the partial write failed too: {rollback}")),
        })
    }

    fn lock_sync(&self, name: &str) -> Result<(), StorageError> {
        check_key(name).map_err(|reason| StorageError::InvalidKey { key: name.to_owned(), reason })?;
        if self.read_only {
            return Err(StorageError::ReadOnly { key: name.to_owned() });
        }
        if self.held_locks().contains_key(name) {
            return Err(StorageError::Locked { key: name.to_owned() });
        }
        let path = self.root.join(RESERVED_DIR).join("locks").join(format!("{name}.lock"));
        let open = || -> io::Result<File> {
            // The store's root holds the data to come: it must outlive a power cut. The
            // lock folders under it need not.
            self.create_dirs(&self.root)?;
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(|e| unmade_folder(parent, e))?;
            }
            OpenOptions::new().create(true).truncate(false).write(true).open(&path)
        };
        let file = open().map_err(|e| io_error(name, e))?;
        // wasi:filesystem has no locks: under WASI a lock excludes only this instance's
        // other callers (host-wasi/README.md says what that guarantees). Elsewhere it is
        // flock(2), which every other process sees.
        if cfg!(target_os = "wasi") {
            self.held_locks().insert(name.to_owned(), file);
            return Ok(());
        }
        let deadline = Instant::now() + self.lock_timeout;
        let mut pause = Duration::from_micros(200);
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(StorageError::Locked { key: name.to_owned() });
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io_error(name, e)),
            }
        }
        self.held_locks().insert(name.to_owned(), file);
        Ok(())
    }

    fn unlock_sync(&self, name: &str) -> Result<(), StorageError> {
        let held = self.held_locks().remove(name);
        // Without the lock, another writer may touch its files: their next appends check.
        for (key, appender) in self.appenders.lock().unwrap_or_else(PoisonError::into_inner).iter_mut() {
            if covers(name, key) {
                appender.held_len = None;
            }
        }
        if let Some(file) = held
            && !cfg!(target_os = "wasi")
        {
            file.unlock().map_err(|e| io_error(name, e))?;
        }
        Ok(())
    }
}

/// Whether the lock `lock` covers the object `key`: its own, or a later part of the
/// session whose first part names the lock.
fn covers(lock: &str, key: &str) -> bool {
    key == lock
        || matches!((parse_session_key(lock), parse_session_key(key)),
            (Some(first), Some(later)) if first.part == 1 && later.part > 1 && (first.project, first.id) == (later.project, later.id))
}

/// A temp file name's unique part: this process's id and a counter, plus randomness for
/// WASI, which has no process ids (`std::process::id` panics there) while several
/// `wasmtime run` processes may replace the same key at once.
fn temp_suffix() -> String {
    let count = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    if cfg!(target_os = "wasi") {
        let random = std::hash::BuildHasher::build_hasher(&std::collections::hash_map::RandomState::new());
        format!("{:016x}-{count}", std::hash::Hasher::finish(&random))
    } else {
        format!("{}-{count}", std::process::id())
    }
}

/// A folder's identity, to notice a symlink that leads back into a folder being walked.
#[cfg(unix)]
fn folder_id(metadata: &fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (metadata.dev(), metadata.ino())
}

#[cfg(not(unix))]
fn folder_id(_: &fs::Metadata) -> (u64, u64) {
    (0, 0)
}

/// Folders deeper than this are not walked (where folder identities are unknown, this
/// is what ends a symlink cycle).
const MAX_DEPTH: usize = 64;

impl FsStorage {
    /// Collects the files under `dir` (whose key prefix is `base`) whose keys start
    /// with `prefix`, leaving out links that lead out of the store.
    fn walk(&self, dir: &Path, base: &str, prefix: &str, found: &mut Vec<KeyInfo>) -> io::Result<()> {
        let mut ancestors = Vec::new();
        if let Ok(metadata) = fs::metadata(dir) {
            ancestors.push(folder_id(&metadata));
        }
        self.walk_in(dir, base, prefix, found, &mut ancestors)
    }

    fn walk_in(&self, dir: &Path, base: &str, prefix: &str, found: &mut Vec<KeyInfo>, ancestors: &mut Vec<(u64, u64)>) -> io::Result<()> {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            // A name that is not UTF-8 cannot be a key; it is listed lossily, and reading
            // it says why, so the caller can report it instead of never seeing it.
            let name = entry.file_name().to_string_lossy().into_owned();
            if base.is_empty() && name == RESERVED_DIR {
                continue;
            }
            let key = format!("{base}{name}");
            // The walk starts in the folder the prefix's last '/' ends, so a name there that
            // does not start what is left of it holds no key listed: not looked at, so an
            // append (which lists its session's parts) costs about the same in a project
            // of one session as of thousands.
            if !key.starts_with(prefix) {
                continue;
            }
            // `metadata` follows symlinks, so linked folders are walked like real ones,
            // as long as they stay inside the store. (The type comes with the entry.)
            let Ok(metadata) = fs::metadata(entry.path()) else {
                continue;
            };
            let top_folder = base.is_empty() && metadata.is_dir();
            if !top_folder && entry.file_type().is_ok_and(|kind| kind.is_symlink()) && self.check_inside(&key, &entry.path()).is_err() {
                continue;
            }
            if metadata.is_dir() {
                let sub = format!("{key}/");
                // A link back to a folder on the way here (`a -> .`) would be walked forever.
                let id = folder_id(&metadata);
                let cycle = cfg!(unix) && ancestors.contains(&id);
                if !cycle && ancestors.len() < MAX_DEPTH {
                    ancestors.push(id);
                    let walked = self.walk_in(&entry.path(), &sub, prefix, found, ancestors);
                    ancestors.pop();
                    walked?;
                }
            } else {
                found.push(KeyInfo { key, size: metadata.len() });
            }
        }
        Ok(())
    }
}

mneme_core::storage_from_sync!(FsStorage, threads);

#[cfg(test)]
mod tests {
    use super::*;
    use mneme_core::{Storage, block_on};

    const HOSTILE_KEYS: &[&str] = &[
        "",
        "/etc/passwd",
        "//server/share",
        "..",
        "../outside",
        "projects/../../outside",
        "projects/./x.jsonl",
        "projects/x/..",
        "projects//x.jsonl",
        "projects/x/",
        "a\\..\\..\\outside",
        "C:\\Windows\\win.ini",
        "projects/x\0.jsonl",
        "projects/x\n.jsonl",
        "projects/\u{7f}",
        ".mneme/locks/x.lock",
        ".mneme",
    ];

    /// A rename killed between its link and its unlink left one file under both
    /// names: renaming again finishes it (it refused, "already exists", and the file
    /// stayed in two places); a different file at the target is still never replaced.
    #[cfg(unix)]
    #[test]
    fn a_rename_cut_after_its_link_is_finished_by_renaming_again() {
        let dir = tempfile::tempdir().unwrap();
        let storage = FsStorage::new(dir.path());
        storage.append_sync("archive/1-s/projects/p/s.jsonl", b"line\n").unwrap();
        fs::create_dir_all(dir.path().join("projects/p")).unwrap();
        fs::hard_link(dir.path().join("archive/1-s/projects/p/s.jsonl"), dir.path().join("projects/p/s.jsonl")).unwrap();
        storage.rename_sync("archive/1-s/projects/p/s.jsonl", "projects/p/s.jsonl").unwrap();
        assert!(!dir.path().join("archive/1-s/projects/p/s.jsonl").exists());
        assert_eq!(storage.read_sync("projects/p/s.jsonl", 0, None).unwrap(), b"line\n");
        storage.append_sync("other.jsonl", b"other\n").unwrap();
        assert!(matches!(storage.rename_sync("other.jsonl", "projects/p/s.jsonl"), Err(StorageError::AlreadyExists { .. })));
        assert_eq!(storage.read_sync("projects/p/s.jsonl", 0, None).unwrap(), b"line\n");
    }

    /// Names only Windows misreads are files like any other elsewhere: one of them
    /// must not break a whole store on Linux.
    #[cfg(not(windows))]
    #[test]
    fn windows_device_names_are_ordinary_names_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let storage = FsStorage::new(dir.path());
        for key in ["projects/aux/s.jsonl", "projects/p/a:b.jsonl", "projects/p/nul.jsonl", "projects/p/CON"] {
            block_on(storage.append(key, b"{}\n")).unwrap_or_else(|e| panic!("{key}: {e}"));
            assert_eq!(block_on(storage.read(key, 0, None)).unwrap(), b"{}\n");
        }
    }

    /// Reads big enough for huge pages return the same bytes, whole or in part.
    #[test]
    fn big_reads_return_the_files_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let storage = FsStorage::new(dir.path());
        let bytes: Vec<u8> = (0..(HUGE_PAGE_READ as usize) * 3 / 2).map(|i| (i % 251) as u8).collect();
        block_on(storage.replace("projects/p/big.jsonl", &bytes, None)).unwrap();
        assert!(block_on(storage.read("projects/p/big.jsonl", 0, None)).unwrap() == bytes);
        let (offset, len) = (12_345, HUGE_PAGE_READ + 7);
        let part = block_on(storage.read("projects/p/big.jsonl", offset, Some(len))).unwrap();
        assert!(part == bytes[offset as usize..(offset + len) as usize]);
        let tail = block_on(storage.read("projects/p/big.jsonl", offset, Some(u64::MAX))).unwrap();
        assert!(tail == bytes[offset as usize..]);
    }

    /// The core's jobs on threads: every job runs once, whatever the count, and
    /// `run_jobs` returns only when all have.
    #[test]
    fn every_job_runs_once_on_the_threads() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let storage = FsStorage::new(dir.path());
        assert!(storage.parallelism() >= 1);
        for count in [0usize, 1, 2, 7, 64] {
            let runs: Vec<AtomicUsize> = (0..count).map(|_| AtomicUsize::new(0)).collect();
            let jobs: Vec<mneme_core::storage::Job> =
                runs.iter().map(|run| -> mneme_core::storage::Job { Box::new(move || _ = run.fetch_add(1, Ordering::Relaxed)) }).collect();
            storage.run_jobs(jobs);
            assert!(runs.iter().all(|run| run.load(Ordering::Relaxed) == 1), "{count} jobs");
        }
    }

    /// A file cut while it is read split: the bytes up to the cut, whichever slice it
    /// falls in, and none from a later slice. (Elsewhere than Linux the sequential
    /// read does it all.)
    #[cfg(target_os = "linux")]
    #[test]
    fn a_split_read_of_a_file_shorter_than_asked_keeps_what_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cut.jsonl");
        let bytes: Vec<u8> = (0..70u8).collect();
        fs::write(&path, &bytes).unwrap();
        let file = File::open(&path).unwrap();
        for (offset, size) in [(0, 100), (0, 70), (0, 1000), (30, 100), (69, 5), (70, 10)] {
            let mut data = Vec::with_capacity(size);
            read_split(&file, offset as u64, size, &mut data).unwrap();
            let end = (offset + size).min(bytes.len());
            assert_eq!(data, bytes[offset..end], "offset {offset}, size {size}");
        }
    }

    /// A link is followed while it stays inside the store: the root and its top folders
    /// as their real paths, so a `projects/` on another disk is the store's, and a link
    /// below, to a file or a folder, only when it leads inside. One leading out or
    /// nowhere is not listed, read, appended to, cut, replaced or removed through, and
    /// stays as it was.
    #[cfg(unix)]
    #[test]
    fn a_link_is_followed_only_inside_the_store() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.md"), b"key\n").unwrap();
        fs::create_dir_all(outside.path().join("p/memory")).unwrap();
        fs::write(outside.path().join("p/memory/x.md"), b"elsewhere\n").unwrap();
        let disk = tempfile::tempdir().unwrap();
        fs::create_dir_all(disk.path().join("p/memory")).unwrap();
        fs::write(disk.path().join("p/memory/real.md"), b"on the other disk\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let storage = FsStorage::new(dir.path());
        block_on(storage.replace("memory/kept.md", b"kept\n", None)).unwrap();
        symlink(disk.path(), dir.path().join("projects")).unwrap();
        symlink("kept.md", dir.path().join("memory/alias.md")).unwrap();
        symlink("real.md", disk.path().join("p/memory/alias.md")).unwrap();
        symlink(outside.path().join("secret.md"), dir.path().join("memory/out.md")).unwrap();
        symlink(outside.path().join("secret.md"), disk.path().join("p/memory/out.md")).unwrap();
        symlink(outside.path(), dir.path().join("memory/folder")).unwrap();
        symlink(outside.path().join("p"), disk.path().join("q")).unwrap();
        symlink("nothing.md", dir.path().join("memory/dangling.md")).unwrap();
        symlink("loop.md", dir.path().join("memory/loop.md")).unwrap();

        let keys = |prefix| block_on(storage.list(prefix)).unwrap().into_iter().map(|k| k.key).collect::<Vec<_>>();
        assert_eq!(keys("memory/"), ["memory/alias.md", "memory/kept.md"]);
        assert_eq!(keys("projects/"), ["projects/p/memory/alias.md", "projects/p/memory/real.md"]);
        assert!(keys("projects/q/memory/").is_empty() && keys("memory/folder/").is_empty());
        assert_eq!(block_on(storage.read("memory/alias.md", 0, None)).unwrap(), b"kept\n");
        assert_eq!(block_on(storage.read("projects/p/memory/alias.md", 0, None)).unwrap(), b"on the other disk\n");
        let refused = |key: &str, why: &str, result: Result<(), StorageError>| match result {
            Err(StorageError::InvalidKey { reason, .. }) => assert!(reason.contains(why), "{key}: {reason}"),
            other => panic!("{key}: {other:?}"),
        };
        for (key, why) in [
            ("memory/out.md", "leads outside the store"),
            ("projects/p/memory/out.md", "leads outside the store"),
            ("memory/folder/secret.md", "leads outside the store"),
            ("projects/q/memory/x.md", "leads outside the store"),
            ("memory/dangling.md", "leads nowhere"),
            ("memory/loop.md", "leads nowhere"),
        ] {
            refused(key, why, block_on(storage.read(key, 0, None)).map(drop));
            refused(key, why, block_on(storage.append(key, b"more\n")).map(drop));
            refused(key, why, block_on(storage.truncate(key, 0, 4)));
            refused(key, why, block_on(storage.replace(key, b"new\n", None)));
            refused(key, why, block_on(storage.remove(key)));
            refused(key, why, block_on(storage.rename(key, "memory/moved.md")));
            refused(key, why, block_on(storage.rename("memory/kept.md", key)));
        }
        // A new file in a folder that leads out is refused before it is made.
        refused("memory/folder/new.md", "outside", block_on(storage.replace("memory/folder/new.md", b"x", None)));
        assert!(!outside.path().join("new.md").exists());
        assert_eq!(fs::read(outside.path().join("secret.md")).unwrap(), b"key\n");
        assert_eq!(fs::read(outside.path().join("p/memory/x.md")).unwrap(), b"elsewhere\n");
        for link in ["memory/out.md", "memory/dangling.md", "memory/loop.md", "memory/folder"] {
            assert!(fs::symlink_metadata(dir.path().join(link)).unwrap().is_symlink(), "{link}");
        }
    }

    /// Two symlinks to `.` under a root made listing (and with it every append) hang.
    #[cfg(unix)]
    #[test]
    fn symlink_cycles_end() {
        let dir = tempfile::tempdir().unwrap();
        let storage = FsStorage::new(dir.path());
        block_on(storage.append("projects/p/s.jsonl", b"{}\n")).unwrap();
        std::os::unix::fs::symlink(".", dir.path().join("projects/a")).unwrap();
        std::os::unix::fs::symlink(".", dir.path().join("projects/b")).unwrap();
        let listed = block_on(storage.list("projects/")).unwrap();
        assert_eq!(listed.iter().filter(|k| k.key.ends_with("s.jsonl")).count(), 1, "{listed:?}");
        let store = mneme_core::Store::new(&storage);
        assert_eq!(block_on(store.sessions().list()).unwrap().sessions.len(), 1);
    }

    /// A replacement interrupted by a crash leaves a hidden temp file; removing the
    /// object (as `sessions rm` does) takes it too.
    #[test]
    fn removing_an_object_removes_its_interrupted_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let storage = FsStorage::new(dir.path());
        block_on(storage.append("projects/p/s.jsonl", b"{}\n")).unwrap();
        let stale = dir.path().join("projects/p/.s.jsonl.tmp-999-0");
        fs::write(&stale, b"half").unwrap();
        block_on(storage.remove("projects/p/s.jsonl")).unwrap();
        assert!(!stale.exists());
    }

    #[test]
    fn the_storage_contract_holds() {
        let dir = tempfile::tempdir().unwrap();
        let a = FsStorage::new(dir.path()).with_lock_timeout(Duration::from_millis(20));
        let b = FsStorage::new(dir.path()).with_lock_timeout(Duration::from_millis(20));
        let failures = block_on(mneme_core::storage::contract::run(&a, &b));
        assert!(failures.is_empty(), "{failures:#?}");
    }

    #[test]
    fn hostile_keys_are_refused_by_every_operation() {
        let dir = tempfile::tempdir().unwrap();
        let storage = FsStorage::new(dir.path().join("root"));
        let long_segment = format!("projects/{}", "a".repeat(256));
        let long_key = "a/".repeat(600);
        let mut keys: Vec<&str> = HOSTILE_KEYS.to_vec();
        keys.extend([long_segment.as_str(), long_key.as_str()]);
        assert!(keys.len() >= 16);
        for key in keys {
            let refused = |result: Result<(), StorageError>, op: &str| match result {
                Err(StorageError::InvalidKey { key: k, reason }) => {
                    assert_eq!(k, key);
                    assert!(!reason.is_empty());
                }
                other => panic!("{op} {key:?} was not refused: {other:?}"),
            };
            refused(block_on(storage.append(key, b"x")).map(drop), "append");
            refused(block_on(storage.read(key, 0, None)).map(drop), "read");
            refused(block_on(storage.replace(key, b"x", None)), "replace");
            refused(block_on(storage.remove(key)), "remove");
            refused(block_on(storage.truncate(key, 0, 0)), "truncate");
            refused(block_on(storage.rename("ok", key)), "rename to");
            refused(block_on(storage.lock(key)), "lock");
        }
        // Nothing was written anywhere, inside the root or beside it.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn round_trips_bytes_and_lists_by_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let storage = FsStorage::new(dir.path()).with_durability(Durability::Buffered);
        assert_eq!(block_on(storage.append("projects/p/a.jsonl", b"one\n")), Ok(4));
        assert_eq!(block_on(storage.append("projects/p/a.jsonl", b"two\n")), Ok(8));
        block_on(storage.replace("projects/q/b.jsonl", b"bee", None)).unwrap();
        block_on(storage.lock("projects/p/a.jsonl")).unwrap();
        assert_eq!(block_on(storage.read("projects/p/a.jsonl", 4, Some(2))).unwrap(), b"tw");
        assert_eq!(block_on(storage.read("projects/p/a.jsonl", 99, None)).unwrap(), b"");
        let keys: Vec<(String, u64)> = block_on(storage.list("projects/")).unwrap().into_iter().map(|i| (i.key, i.size)).collect();
        assert_eq!(keys, [("projects/p/a.jsonl".to_owned(), 8), ("projects/q/b.jsonl".to_owned(), 3)]);
        assert_eq!(block_on(storage.list("projects/q")).unwrap().len(), 1);
        assert_eq!(block_on(storage.list("")).unwrap().len(), 2, "lock files are not listed");
        assert_eq!(block_on(storage.list("nothing/")).unwrap(), []);
        assert_eq!(
            block_on(storage.rename("projects/q/b.jsonl", "projects/p/a.jsonl")),
            Err(StorageError::AlreadyExists { key: "projects/p/a.jsonl".into() })
        );
        block_on(storage.rename("projects/q/b.jsonl", "projects/r/c.jsonl")).unwrap();
        block_on(storage.remove("projects/r/c.jsonl")).unwrap();
        assert_eq!(block_on(storage.remove("projects/r/c.jsonl")), Err(StorageError::NotFound { key: "projects/r/c.jsonl".into() }));
        assert!(matches!(block_on(storage.read("missing", 0, None)), Err(StorageError::NotFound { .. })));
    }

    #[test]
    fn locks_exclude_other_instances_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let first = FsStorage::new(dir.path());
        let second = FsStorage::new(dir.path()).with_lock_timeout(Duration::from_millis(50));
        block_on(first.lock("projects/p/s.jsonl")).unwrap();
        assert_eq!(block_on(second.lock("projects/p/s.jsonl")), Err(StorageError::Locked { key: "projects/p/s.jsonl".into() }));
        block_on(first.unlock("projects/p/s.jsonl")).unwrap();
        block_on(second.lock("projects/p/s.jsonl")).unwrap();
    }

    #[test]
    fn an_append_never_goes_to_a_file_that_is_no_longer_there() {
        let dir = tempfile::tempdir().unwrap();
        let storage = FsStorage::new(dir.path()).with_durability(Durability::Buffered);
        let key = "projects/p/s.jsonl";
        let path = dir.path().join(key);
        assert_eq!(block_on(storage.append(key, b"one\n")).unwrap(), 4);
        assert_eq!(block_on(storage.append(key, b"two\n")).unwrap(), 8);
        // Replaced behind the open handle (a repair, another program's rewrite).
        block_on(storage.replace(key, b"new\n", None)).unwrap();
        assert_eq!(block_on(storage.append(key, b"three\n")).unwrap(), 10);
        assert_eq!(fs::read(&path).unwrap(), b"new\nthree\n");
        // Removed by someone else: the next append creates it again.
        fs::remove_file(&path).unwrap();
        assert_eq!(block_on(storage.append(key, b"four\n")).unwrap(), 5);
        assert_eq!(fs::read(&path).unwrap(), b"four\n");
        // Cut (a torn tail moved aside): appends continue at the new end.
        block_on(storage.truncate(key, 2, 5)).unwrap();
        assert_eq!(block_on(storage.append(key, b"!\n")).unwrap(), 4);
        assert_eq!(fs::read(&path).unwrap(), b"fo!\n");
    }

    #[test]
    fn under_its_own_lock_a_file_is_appended_without_checks_until_the_lock_is_given_back() {
        let dir = tempfile::tempdir().unwrap();
        let storage = FsStorage::new(dir.path()).with_durability(Durability::Buffered);
        let key = "projects/p/s.jsonl";
        let path = dir.path().join(key);
        block_on(storage.lock(key)).unwrap();
        assert_eq!(block_on(storage.append(key, b"one\n")).unwrap(), 4);
        assert_eq!(block_on(storage.append(key, b"two\n")).unwrap(), 8);
        // This storage's own rewrites and cuts are known to it, lock or no lock.
        block_on(storage.replace(key, b"new\n", None)).unwrap();
        assert_eq!(block_on(storage.append(key, b"three\n")).unwrap(), 10);
        block_on(storage.truncate(key, 4, 10)).unwrap();
        assert_eq!(block_on(storage.append(key, b"four\n")).unwrap(), 9);
        assert_eq!(fs::read(&path).unwrap(), b"new\nfour\n");
        block_on(storage.unlock(key)).unwrap();
        // Without the lock another program may rewrite the file: the next append sees it.
        fs::write(dir.path().join("other"), b"rewritten\n").unwrap();
        fs::rename(dir.path().join("other"), &path).unwrap();
        assert_eq!(block_on(storage.append(key, b"five\n")).unwrap(), 15);
        assert_eq!(fs::read(&path).unwrap(), b"rewritten\nfive\n");
        // And after an unlocked append through the kept handle too: it keeps no length.
        assert_eq!(block_on(storage.append(key, b"5b\n")).unwrap(), 18);
        fs::write(dir.path().join("other"), b"again\n").unwrap();
        fs::rename(dir.path().join("other"), &path).unwrap();
        assert_eq!(block_on(storage.append(key, b"six\n")).unwrap(), 10);
        assert_eq!(fs::read(&path).unwrap(), b"again\nsix\n");
        // Taken again, the lock lets appends skip the checks again: a file renamed over
        // the key (which the lock's contract rules out) is not looked for.
        block_on(storage.lock(key)).unwrap();
        assert_eq!(block_on(storage.append(key, b"seven\n")).unwrap(), 16);
        fs::write(dir.path().join("other"), b"outside\n").unwrap();
        fs::rename(dir.path().join("other"), &path).unwrap();
        assert_eq!(block_on(storage.append(key, b"eight\n")).unwrap(), 22);
        block_on(storage.unlock(key)).unwrap();
    }

    /// A session's later parts are covered by its lock, named by its first part's key:
    /// they are appended without checks while it is held, and checked again after.
    #[test]
    fn a_sessions_lock_covers_its_later_parts() {
        let dir = tempfile::tempdir().unwrap();
        let storage = FsStorage::new(dir.path()).with_durability(Durability::Buffered);
        let (lock, part) = ("projects/p/s.jsonl", "projects/p/s_part2.jsonl");
        let path = dir.path().join(part);
        block_on(storage.lock(lock)).unwrap();
        assert_eq!(block_on(storage.append(part, b"one\n")).unwrap(), 4);
        // A program ignoring the lock renames a file over the part: under the lock, the
        // append takes the kept handle and length without looking (the contract says no
        // one does this), which is how a held session's appends are one system call.
        fs::write(dir.path().join("other"), b"outside\n").unwrap();
        fs::rename(dir.path().join("other"), &path).unwrap();
        assert_eq!(block_on(storage.append(part, b"two\n")).unwrap(), 8);
        block_on(storage.unlock(lock)).unwrap();
        assert_eq!(block_on(storage.append(part, b"three\n")).unwrap(), 14);
        assert_eq!(fs::read(&path).unwrap(), b"outside\nthree\n");
        // Another session's lock covers nothing of this one: under it, a rename over
        // the part is seen.
        block_on(storage.lock("projects/p/t.jsonl")).unwrap();
        assert_eq!(block_on(storage.append(part, b"four\n")).unwrap(), 19);
        fs::write(dir.path().join("other"), b"again\n").unwrap();
        fs::rename(dir.path().join("other"), &path).unwrap();
        assert_eq!(block_on(storage.append(part, b"five\n")).unwrap(), 11);
        block_on(storage.unlock("projects/p/t.jsonl")).unwrap();
        assert!(!covers("projects/p/t.jsonl", part) && !covers(part, "projects/p/s.jsonl") && covers(lock, part));
    }

    #[test]
    fn read_only_refuses_writes_but_reads() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("projects/p")).unwrap();
        fs::write(dir.path().join("projects/p/s.jsonl"), "{}\n").unwrap();
        let storage = FsStorage::read_only(dir.path());
        assert_eq!(block_on(storage.read("projects/p/s.jsonl", 0, None)).unwrap(), b"{}\n");
        for result in [
            block_on(storage.append("projects/p/s.jsonl", b"x")).map(drop),
            block_on(storage.replace("projects/p/s.jsonl", b"x", None)),
            block_on(storage.remove("projects/p/s.jsonl")),
            block_on(storage.truncate("projects/p/s.jsonl", 0, 3)),
            block_on(storage.lock("projects/p/s.jsonl")),
        ] {
            assert!(matches!(result, Err(StorageError::ReadOnly { .. })), "{result:?}");
        }
        assert_eq!(fs::read(dir.path().join("projects/p/s.jsonl")).unwrap(), b"{}\n");
    }
}
