//! Mneme's [`mneme_core::Storage`] on PostgreSQL, so sessions and memory outgrow one machine
//! through a database people already run: many `mneme` processes on many machines
//! share one store.
//!
//! A store is a schema (default `mneme`) with two tables:
//!
//! - `files (id, key, size)`: one row per object, `key` in the "C" collation so a
//!   prefix listing is a range scan of its unique index in byte order;
//! - `chunks (file_id, offset, data)`: an append is one new row at the file's old end,
//!   never a rewrite, and a read fetches only the rows covering the range asked for.
//!
//! Every write is one transaction (an append's chunk and the new size commit together
//! or not at all), and a commit is durable as PostgreSQL makes it (`synchronous_commit`
//! on, its default). Locks are session-level advisory locks (`pg_advisory_lock`) taken
//! on the storage's own connection with `lock_timeout`, so they exclude every other
//! connection, on any machine, and PostgreSQL drops them when a process dies.
//!
//! A connection lost while holding a lock makes every call fail until that lock is
//! released: the lock is gone with the connection, and writing on without it could
//! interleave with another writer. With no lock held, the next call reconnects.

pub mod cluster;

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mneme_core::keys::check_key;
use mneme_core::{KeyInfo, StorageError};
use postgres::error::SqlState;
use postgres::{Client, NoTls};

/// The schema a store lives in when none is named.
pub const DEFAULT_SCHEMA: &str = "mneme";

/// Rows a replace is split into at most this size (a `bytea` value is capped at 1 GB).
const CHUNK_BYTES: usize = 8 << 20;

/// Mneme's storage in a PostgreSQL schema.
pub struct PgStorage {
    config: postgres::Config,
    schema: String,
    lock_timeout: Duration,
    read_only: bool,
    connection: Mutex<Connection>,
}

struct Connection {
    client: Option<Client>,
    /// Locks this storage holds, by name (advisory locks are re-entrant in a session;
    /// Mneme's locks are not).
    held: HashSet<String>,
    /// Locks that were held when the connection died: gone, though the caller thinks
    /// otherwise, until it releases them.
    lost: HashSet<String>,
}

/// Why a store could not be opened.
#[derive(Debug)]
pub struct OpenError(String);

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OpenError {}

impl std::fmt::Debug for PgStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStorage").field("schema", &self.schema).field("read_only", &self.read_only).finish_non_exhaustive()
    }
}

impl PgStorage {
    /// Connects to the database `url` names (`postgres://user@host/db`, or a libpq
    /// key=value string) and opens the store in the schema `schema`, creating its
    /// tables if they are missing.
    pub fn open(url: &str, schema: &str) -> Result<Self, OpenError> {
        if schema.is_empty() || schema.len() > 63 || !schema.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
            return Err(OpenError(format!("`{schema}` cannot name a store's schema: use 1 to 63 lowercase ASCII letters, digits and '_'")));
        }
        let config: postgres::Config =
            url.parse().map_err(|e| OpenError(format!("`{}` is not a PostgreSQL connection string: {e}", redact(url))))?;
        let storage = Self {
            config,
            schema: schema.to_owned(),
            lock_timeout: Duration::from_secs(30),
            read_only: false,
            connection: Mutex::new(Connection { client: None, held: HashSet::new(), lost: HashSet::new() }),
        };
        storage.create_tables().map_err(|e| OpenError(format!("cannot open the store in {}: {e}", redact(url))))?;
        Ok(storage)
    }

    /// How long [`mneme_core::Storage::lock`] waits for another holder before failing with
    /// `locked`.
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    /// Refuses every write with `read-only`.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    pub fn schema(&self) -> &str {
        &self.schema
    }

    fn create_tables(&self) -> Result<(), StorageError> {
        let s = &self.schema;
        // A store there already is opened without DDL: a read-only connection (a
        // replica, a role that may only read) can read it.
        let exists = self.with_client(s, |client| {
            let row = client.query_one(
                "SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL",
                &[&format!("{s}.files"), &format!("{s}.chunks")],
            )?;
            row.try_get::<_, bool>(0)
        })?;
        if exists {
            return Ok(());
        }
        let created = self.with_client(s, |client| {
            let mut tx = client.transaction()?;
            // Concurrent first opens would race on the catalog; one at a time.
            tx.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", &[&format!("mneme schema {s}")])?;
            tx.batch_execute(&format!(
                r#"CREATE SCHEMA IF NOT EXISTS {s};
                CREATE TABLE IF NOT EXISTS {s}.files (
                    id bigserial PRIMARY KEY,
                    key text COLLATE "C" NOT NULL UNIQUE,
                    size bigint NOT NULL DEFAULT 0
                );
                CREATE TABLE IF NOT EXISTS {s}.chunks (
                    file_id bigint NOT NULL REFERENCES {s}.files (id) ON DELETE CASCADE,
                    "offset" bigint NOT NULL,
                    data bytea NOT NULL,
                    PRIMARY KEY (file_id, "offset")
                );"#
            ))?;
            tx.commit()
        });
        match created {
            Err(StorageError::ReadOnly { .. }) => Err(StorageError::Io {
                key: s.to_owned(),
                message: format!(
                    "the schema `{s}` holds no Mneme store, and this connection may not create one (it is read-only): open it once with a connection that may write"
                ),
            }),
            other => other,
        }
    }

    fn lock_connection(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding it cannot leave the sets inconsistent (insert/remove only).
        self.connection.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `action` on the connection, connecting first if there is none, and maps
    /// PostgreSQL's errors onto storage errors about `key`.
    fn with_client<T>(&self, key: &str, action: impl FnOnce(&mut Client) -> Result<T, postgres::Error>) -> Result<T, StorageError> {
        self.with_connection(key, |client, _| action(client))
    }

    /// [`Self::with_client`], with the set of locks held, all under one guard: a lock's
    /// check, its taking and its record cannot interleave with another thread's.
    fn with_connection<T>(
        &self,
        key: &str,
        action: impl FnOnce(&mut Client, &mut HashSet<String>) -> Result<T, postgres::Error>,
    ) -> Result<T, StorageError> {
        let mut guard = self.lock_connection();
        let Connection { client: slot, held, lost } = &mut *guard;
        if slot.as_ref().is_some_and(Client::is_closed) {
            // Locks held on a connection that died went with it.
            lost.extend(held.drain());
            *slot = None;
        }
        if let Some(error) = lost_lock(key, lost) {
            return Err(error);
        }
        let client = match slot {
            Some(client) => client,
            None => {
                let mut client = self.config.connect(NoTls).map_err(|e| pg_error(key, &e))?;
                let timeout = format!("SET lock_timeout = {}", self.lock_timeout.as_millis().max(1));
                client.batch_execute(&timeout).map_err(|e| pg_error(key, &e))?;
                slot.insert(client)
            }
        };
        let result = action(client, held);
        if result.is_err() && client.is_closed() {
            lost.extend(held.drain());
            *slot = None;
            // The call that finds the connection dead says what to do, as the next would.
            if let Some(error) = lost_lock(key, lost) {
                return Err(error);
            }
        }
        result.map_err(|e| pg_error(key, &e))
    }

    fn writable(&self, key: &str) -> Result<(), StorageError> {
        check_key(key)?;
        if self.read_only {
            return Err(StorageError::ReadOnly { key: key.to_owned() });
        }
        Ok(())
    }

    /// A read refused for want of privilege is no read-only store (which reads): it
    /// says which grant the role lacks.
    fn read_refused(&self, error: StorageError) -> StorageError {
        match error {
            StorageError::ReadOnly { key } => StorageError::Io {
                key,
                message: format!(
                    "this PostgreSQL role may not read the store's tables: grant it USAGE ON SCHEMA {s} and SELECT ON ALL TABLES IN SCHEMA {s}",
                    s = self.schema
                ),
            },
            other => other,
        }
    }

    fn list_sync(&self, prefix: &str) -> Result<Vec<KeyInfo>, StorageError> {
        let s = &self.schema;
        let rows = self
            .with_client(prefix, |client| match successor(prefix) {
                Some(end) => {
                    client.query(&format!("SELECT key, size FROM {s}.files WHERE key >= $1 AND key < $2 ORDER BY key"), &[&prefix, &end])
                }
                None => client.query(&format!("SELECT key, size FROM {s}.files WHERE key >= $1 ORDER BY key"), &[&prefix]),
            })
            .map_err(|e| self.read_refused(e))?;
        Ok(rows
            .iter()
            .map(|row| KeyInfo { key: row.get(0), size: u64::try_from(row.get::<_, i64>(1)).unwrap_or(0) })
            .filter(|info| info.key.starts_with(prefix))
            .collect())
    }

    fn read_sync(&self, key: &str, offset: u64, len: Option<u64>) -> Result<Vec<u8>, StorageError> {
        check_key(key)?;
        let s = &self.schema;
        // Past PostgreSQL's bigint is past every file's end: nothing to read there.
        let start = i64::try_from(offset).unwrap_or(i64::MAX);
        let end = match len {
            Some(len) => start.saturating_add(i64::try_from(len).unwrap_or(i64::MAX)),
            None => i64::MAX,
        };
        // One statement, one snapshot: the size and the chunks agree even while
        // another process replaces the file.
        let rows = self
            .with_client(key, |client| {
                client.query(
                    &format!(
                        r#"WITH f AS (SELECT id, size FROM {s}.files WHERE key = $1)
                    SELECT f.size, c."offset", c.data FROM f
                    LEFT JOIN {s}.chunks c ON c.file_id = f.id AND c."offset" < $3 AND c."offset" >= COALESCE(
                        (SELECT max(x."offset") FROM {s}.chunks x WHERE x.file_id = (SELECT id FROM f) AND x."offset" <= $2), 0)
                    ORDER BY c."offset""#
                    ),
                    &[&key, &start, &end],
                )
            })
            .map_err(|e| self.read_refused(e))?;
        let Some(first) = rows.first() else { return Err(StorageError::NotFound { key: key.to_owned() }) };
        let size: i64 = first.get(0);
        let end = end.min(size);
        let mut data = Vec::with_capacity(usize::try_from(end.saturating_sub(start)).unwrap_or(0));
        for row in &rows {
            let (Some(at), Some(chunk)) = (row.get::<_, Option<i64>>(1), row.get::<_, Option<&[u8]>>(2)) else { continue };
            let chunk_end = at.saturating_add(chunk.len() as i64);
            let (from, to) = (start.max(at), end.min(chunk_end));
            if from < to {
                data.extend_from_slice(&chunk[(from - at) as usize..(to - at) as usize]);
            }
        }
        Ok(data)
    }

    fn append_sync(&self, key: &str, data: &[u8]) -> Result<u64, StorageError> {
        self.writable(key)?;
        let s = &self.schema;
        let len = to_i64(key, data.len() as u64)?;
        // One statement, so one transaction (two round trips: the client prepares it
        // first; four statements were six): the upsert locks the file's row until
        // commit (appends to one file queue there), the chunk lands at the old end with
        // the new size, or neither does.
        let size: i64 = self.with_client(key, |client| {
            let sql = format!(
                "WITH file AS (INSERT INTO {s}.files (key, size) VALUES ($1, $2::bigint) \
                 ON CONFLICT (key) DO UPDATE SET size = {s}.files.size + EXCLUDED.size RETURNING id, size), \
                 chunk AS (INSERT INTO {s}.chunks (file_id, \"offset\", data) SELECT id, size - $2, $3::bytea FROM file WHERE $2 > 0) \
                 SELECT size FROM file"
            );
            Ok(client.query_one(&sql, &[&key, &len, &data])?.get(0))
        })?;
        Ok(size as u64)
    }

    fn replace_sync(&self, key: &str, data: &[u8], expected_size: Option<u64>) -> Result<(), StorageError> {
        self.writable(key)?;
        let s = &self.schema;
        let len = to_i64(key, data.len() as u64)?;
        let expected = expected_size.map(|size| to_i64(key, size)).transpose()?;
        self.with_client(key, |client| {
            let mut tx = client.transaction()?;
            let id: i64 = match expected {
                Some(expected) => {
                    let row = tx.query_opt(&format!("SELECT id, size FROM {s}.files WHERE key = $1 FOR UPDATE"), &[&key])?;
                    match row {
                        None => return Ok(Err(StorageError::NotFound { key: key.to_owned() })),
                        Some(row) if row.get::<_, i64>(1) != expected => return Ok(Err(StorageError::Changed { key: key.to_owned() })),
                        Some(row) => {
                            let id = row.get(0);
                            tx.execute(&format!("UPDATE {s}.files SET size = $2 WHERE id = $1"), &[&id, &len])?;
                            id
                        }
                    }
                }
                None => tx
                    .query_one(
                        &format!(
                            "INSERT INTO {s}.files (key, size) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET size = EXCLUDED.size RETURNING id"
                        ),
                        &[&key, &len],
                    )?
                    .get(0),
            };
            tx.execute(&format!("DELETE FROM {s}.chunks WHERE file_id = $1"), &[&id])?;
            for (index, piece) in data.chunks(CHUNK_BYTES).enumerate() {
                let at = (index * CHUNK_BYTES) as i64;
                tx.execute(&format!(r#"INSERT INTO {s}.chunks (file_id, "offset", data) VALUES ($1, $2, $3)"#), &[&id, &at, &piece])?;
            }
            tx.commit()?;
            Ok(Ok(()))
        })?
    }

    fn truncate_sync(&self, key: &str, len: u64, expected_size: u64) -> Result<(), StorageError> {
        self.writable(key)?;
        let s = &self.schema;
        let (len, expected) = (to_i64(key, len)?, to_i64(key, expected_size)?);
        self.with_client(key, |client| {
            let mut tx = client.transaction()?;
            let Some(row) = tx.query_opt(&format!("SELECT id, size FROM {s}.files WHERE key = $1 FOR UPDATE"), &[&key])? else {
                return Ok(Err(StorageError::NotFound { key: key.to_owned() }));
            };
            let (id, size): (i64, i64) = (row.get(0), row.get(1));
            if size != expected {
                return Ok(Err(StorageError::Changed { key: key.to_owned() }));
            }
            if size > len {
                tx.execute(&format!(r#"DELETE FROM {s}.chunks WHERE file_id = $1 AND "offset" >= $2"#), &[&id, &len])?;
                tx.execute(
                    &format!(
                        r#"UPDATE {s}.chunks SET data = substring(data FROM 1 FOR ($2 - "offset")::int)
                        WHERE file_id = $1 AND "offset" < $2 AND "offset" + length(data) > $2"#
                    ),
                    &[&id, &len],
                )?;
                tx.execute(&format!("UPDATE {s}.files SET size = $2 WHERE id = $1"), &[&id, &len])?;
            }
            tx.commit()?;
            Ok(Ok(()))
        })?
    }

    fn remove_sync(&self, key: &str) -> Result<(), StorageError> {
        self.writable(key)?;
        let s = &self.schema;
        let removed = self.with_client(key, |client| client.execute(&format!("DELETE FROM {s}.files WHERE key = $1"), &[&key]))?;
        if removed == 0 {
            return Err(StorageError::NotFound { key: key.to_owned() });
        }
        Ok(())
    }

    fn rename_sync(&self, from: &str, to: &str) -> Result<(), StorageError> {
        self.writable(from)?;
        self.writable(to)?;
        let s = &self.schema;
        // The unique key refuses an existing `to` atomically: never an overwrite.
        let renamed =
            self.with_client(to, |client| client.execute(&format!("UPDATE {s}.files SET key = $2 WHERE key = $1"), &[&from, &to]))?;
        if renamed == 0 {
            return Err(StorageError::NotFound { key: from.to_owned() });
        }
        Ok(())
    }

    fn lock_sync(&self, name: &str) -> Result<(), StorageError> {
        self.writable(name)?;
        let lock = format!("{}/{name}", self.schema);
        let taken = self.with_connection(name, |client, held| {
            // Advisory locks are re-entrant in one session; Mneme's are not.
            if held.contains(name) {
                return Ok(false);
            }
            client.execute("SELECT pg_advisory_lock(hashtextextended($1, 0))", &[&lock])?;
            held.insert(name.to_owned());
            Ok(true)
        })?;
        if taken { Ok(()) } else { Err(StorageError::Locked { key: name.to_owned() }) }
    }

    fn unlock_sync(&self, name: &str) -> Result<(), StorageError> {
        if self.lock_connection().lost.remove(name) {
            return Ok(());
        }
        let lock = format!("{}/{name}", self.schema);
        let unlocked = self.with_connection(name, |client, held| {
            // Forgotten once given back: an unlock that failed on a live connection
            // leaves the lock held, and this process must not take it a second time.
            if held.contains(name) {
                client.execute("SELECT pg_advisory_unlock(hashtextextended($1, 0))", &[&lock])?;
                held.remove(name);
            }
            Ok(())
        });
        // A connection found dead by this very unlock took the lock with it: nothing
        // is left to give back.
        if self.lock_connection().lost.remove(name) {
            return Ok(());
        }
        unlocked
    }
}

/// The error of every call while a lock went with a lost connection: writing on without
/// it could interleave with another writer.
fn lost_lock(key: &str, lost: &HashSet<String>) -> Option<StorageError> {
    let name = lost.iter().next()?;
    Some(StorageError::Io {
        key: key.to_owned(),
        message: format!(
            "the connection to PostgreSQL was lost while holding the lock `{name}`: release its session (`release`, or close the store) and `reopen` it, then write again"
        ),
    })
}

/// The smallest string greater than every string starting with `prefix` (in the "C"
/// collation, code point order), if there is one: the end of a prefix's range.
fn successor(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = (last as u32 + 1..=char::MAX as u32).find_map(char::from_u32);
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

fn to_i64(key: &str, value: u64) -> Result<i64, StorageError> {
    i64::try_from(value).map_err(|_| StorageError::Io { key: key.to_owned(), message: format!("{value} is past PostgreSQL's bigint") })
}

/// A connection string with its password left out, for messages.
fn redact(url: &str) -> String {
    let Some(scheme) = url.find("://") else {
        return url
            .split_whitespace()
            .map(|pair| if pair.starts_with("password=") { "password=***" } else { pair })
            .collect::<Vec<_>>()
            .join(" ");
    };
    let with_user = match url.find('@') {
        Some(at) if at > scheme => match url[scheme + 3..at].split_once(':') {
            Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
            None => url.to_owned(),
        },
        _ => url.to_owned(),
    };
    // libpq also takes the password as a query parameter.
    let Some((address, query)) = with_user.split_once('?') else { return with_user };
    let query: Vec<&str> = query.split('&').map(|pair| if pair.starts_with("password=") { "password=***" } else { pair }).collect();
    format!("{address}?{}", query.join("&"))
}

fn pg_error(key: &str, error: &postgres::Error) -> StorageError {
    let key = key.to_owned();
    match error.code() {
        Some(code) if *code == SqlState::LOCK_NOT_AVAILABLE => StorageError::Locked { key },
        Some(code) if *code == SqlState::DISK_FULL => StorageError::QuotaExceeded { key },
        // A role that may only read (SELECT granted, nothing else) is refused a write as
        // a read-only replica is: read-only, which the core reads as "serve reads, write
        // nothing" (a search then keeps its index in memory), not as a failed disk.
        Some(code) if *code == SqlState::READ_ONLY_SQL_TRANSACTION || *code == SqlState::INSUFFICIENT_PRIVILEGE => {
            StorageError::ReadOnly { key }
        }
        Some(code) if *code == SqlState::UNIQUE_VIOLATION => StorageError::AlreadyExists { key },
        _ => StorageError::Io { key, message: format!("PostgreSQL: {}", in_its_words(error)) },
    }
}

/// An error with its causes: the driver's own text is a category ("db error", "error
/// connecting to server"); the server's words (`role "x" does not exist`) and the
/// system's (`Connection refused`) are its sources.
fn in_its_words(error: &postgres::Error) -> String {
    let mut words = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(inner) = cause {
        let said = inner.to_string();
        if !words.ends_with(&said) {
            words.push_str(": ");
            words.push_str(&said);
        }
        cause = inner.source();
    }
    words
}

mneme_core::storage_from_sync!(PgStorage, threads);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_range_ends_after_every_string_it_starts() {
        assert_eq!(successor("projects/").as_deref(), Some("projects0"));
        assert_eq!(successor("a\u{10FFFF}").as_deref(), Some("b"));
        assert_eq!(successor("\u{D7FF}").as_deref(), Some("\u{E000}"));
        assert_eq!(successor(""), None);
        assert_eq!(successor("\u{10FFFF}"), None);
    }

    #[test]
    fn passwords_stay_out_of_messages() {
        assert_eq!(redact("postgres://me:secret@db/x"), "postgres://me:***@db/x");
        assert_eq!(redact("host=/tmp user=me password=secret"), "host=/tmp user=me password=***");
        assert_eq!(redact("postgres://me@db/x"), "postgres://me@db/x");
        assert_eq!(redact("postgres://me@db/x?sslmode=require&password=secret"), "postgres://me@db/x?sslmode=require&password=***");
        assert_eq!(redact("postgresql:///x?password=secret"), "postgresql:///x?password=***");
    }
}
