//! The storage contract as a suite every backend runs (automerge-repo's
//! `runStorageAdapterTests`): what [`Storage`]'s documentation promises, checked on
//! real calls. Hosts call [`run`] with two handles on one fresh, empty store (two
//! handles, so locks are checked across instances) and fail on any finding.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::{Storage, StorageError};

/// Keys every backend must refuse with [`StorageError::InvalidKey`], whatever the call.
pub const HOSTILE_KEYS: &[&str] = &["", "/abs", "a//b", "../x", "a/../b", "a/./b", ".", "a/", "a\0b", "a\\..\\b"];

/// Runs the whole contract on `a` and `b`, two handles on one empty store. Returns
/// what broke it, one sentence each; empty when the backend keeps every promise.
pub async fn run<S: Storage>(a: &S, b: &S) -> Vec<String> {
    let mut c = Checker { failures: Vec::new() };
    c.missing_keys(a).await;
    c.append_and_read(a).await;
    c.list(a).await;
    c.replace_truncate_remove(a).await;
    c.rename(a).await;
    c.locks(a, b).await;
    c.writes_under_a_lock(a, b).await;
    c.hostile_keys(a).await;
    c.failures
}

struct Checker {
    failures: Vec<String>,
}

fn kind<T>(result: &Result<T, StorageError>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(e) => e.kind(),
    }
}

impl Checker {
    fn expect(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.failures.push(what());
        }
    }

    fn expect_length(&mut self, call: &str, got: Result<u64, StorageError>, want: u64) {
        self.expect(got == Ok(want), || format!("{call} returns the length {want}, got {got:?}"));
    }

    fn expect_kind<T>(&mut self, call: &str, result: &Result<T, StorageError>, want: &str) {
        let got = kind(result);
        self.expect(got == want, || format!("{call}: expected `{want}`, got `{got}`"));
    }

    async fn missing_keys<S: Storage>(&mut self, s: &S) {
        let listed = s.list("").await;
        self.expect(matches!(&listed, Ok(keys) if keys.is_empty()), || format!("list(\"\") of an empty store: {listed:?}"));
        self.expect_kind("read of a missing key", &s.read("c/missing", 0, None).await, "not-found");
        self.expect_kind("truncate of a missing key", &s.truncate("c/missing", 0, 0).await, "not-found");
        self.expect_kind("remove of a missing key", &s.remove("c/missing").await, "not-found");
        self.expect_kind("rename of a missing key", &s.rename("c/missing", "c/other").await, "not-found");
        let listed = s.list("c/").await;
        self.expect(matches!(&listed, Ok(keys) if keys.is_empty()), || format!("failed calls left objects behind: {listed:?}"));
    }

    async fn append_and_read<S: Storage>(&mut self, s: &S) {
        let first = s.append("c/a/log", b"hello ").await;
        self.expect(first == Ok(6), || format!("append to a new key returns its length 6, got {first:?}"));
        let second = s.append("c/a/log", b"world").await;
        self.expect(second == Ok(11), || format!("a second append returns the total length 11, got {second:?}"));
        let empty = s.append("c/a/log", b"").await;
        self.expect(empty == Ok(11), || format!("an empty append changes nothing, got {empty:?}"));
        let read = |offset, len| s.read("c/a/log", offset, len);
        let cases: [(u64, Option<u64>, &[u8]); 6] = [
            (0, None, b"hello world"),
            (6, None, b"world"),
            (2, Some(3), b"llo"),
            (8, Some(100), b"rld"),
            (11, None, b""),
            (1000, Some(5), b""),
        ];
        for (offset, len, want) in cases {
            let got = read(offset, len).await;
            self.expect(got.as_deref() == Ok(want), || format!("read(offset {offset}, len {len:?}) gave {got:?}, want {want:?}"));
        }
        let zero = read(u64::MAX, Some(u64::MAX)).await;
        self.expect(zero.as_deref() == Ok(&[][..]), || format!("read at u64::MAX gave {zero:?}"));
        let bytes: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
        let big = s.append("c/a/binary", &bytes).await;
        self.expect(big == Ok(bytes.len() as u64), || format!("a 1 MiB append of every byte value returned {big:?}"));
        let back = s.read("c/a/binary", 0, None).await;
        self.expect(back.as_deref() == Ok(&bytes[..]), || "a 1 MiB binary object did not read back byte for byte".into());
    }

    async fn list<S: Storage>(&mut self, s: &S) {
        for key in ["c/l/b", "c/l/a", "c/l/ab/x", "c/lz"] {
            let written = s.replace(key, key.as_bytes(), None).await;
            self.expect_kind(&format!("replace({key})"), &written, "ok");
        }
        let listed = s.list("c/l").await.unwrap_or_default();
        let keys: Vec<(&str, u64)> = listed.iter().map(|k| (k.key.as_str(), k.size)).collect();
        let want = vec![("c/l/a", 5), ("c/l/ab/x", 8), ("c/l/b", 5), ("c/lz", 4)];
        self.expect(keys == want, || format!("list(\"c/l\") is a plain string prefix, sorted, with sizes: got {keys:?}, want {want:?}"));
        let nested = s.list("c/l/a").await.unwrap_or_default();
        self.expect(nested.len() == 2, || format!("list(\"c/l/a\") matches `c/l/a` and `c/l/ab/x`, got {nested:?}"));
    }

    async fn replace_truncate_remove<S: Storage>(&mut self, s: &S) {
        self.expect_kind("replace of a new key", &s.replace("c/r/doc", b"first version", None).await, "ok");
        self.expect_kind("replace of an existing key", &s.replace("c/r/doc", b"v2", None).await, "ok");
        let read = s.read("c/r/doc", 0, None).await;
        self.expect(read.as_deref() == Ok(b"v2"), || format!("replace leaves only the new content, read {read:?}"));
        self.expect_kind("replace with nothing", &s.replace("c/r/empty", b"", None).await, "ok");
        let listed = s.list("c/r/empty").await.unwrap_or_default();
        self.expect(listed.len() == 1 && listed[0].size == 0, || format!("an empty object is listed with size 0: {listed:?}"));
        self.expect_kind("replace expecting the current size", &s.replace("c/r/doc", b"v3", Some(2)).await, "ok");
        self.expect_kind("replace expecting another size", &s.replace("c/r/doc", b"lost", Some(5)).await, "changed");
        self.expect_kind("replace expecting an object that is missing", &s.replace("c/r/none", b"x", Some(0)).await, "not-found");
        let read = s.read("c/r/doc", 0, None).await;
        self.expect(read.as_deref() == Ok(b"v3"), || format!("a refused replace writes nothing, read {read:?}"));
        let listed = s.list("c/r/none").await.unwrap_or_default();
        self.expect(listed.is_empty(), || format!("a refused replace creates nothing: {listed:?}"));

        let _ = s.replace("c/r/t", b"0123456789", None).await;
        self.expect_kind("truncate of an object that is not the expected size", &s.truncate("c/r/t", 4, 9).await, "changed");
        let read = s.read("c/r/t", 0, None).await;
        self.expect(read.as_deref() == Ok(b"0123456789"), || format!("a refused truncate cuts nothing, read {read:?}"));
        self.expect_kind("truncate", &s.truncate("c/r/t", 4, 10).await, "ok");
        let read = s.read("c/r/t", 0, None).await;
        self.expect(read.as_deref() == Ok(b"0123"), || format!("truncate to 4 kept {read:?}"));
        self.expect_kind("truncate past the end", &s.truncate("c/r/t", 100, 4).await, "ok");
        let read = s.read("c/r/t", 0, None).await;
        self.expect(read.as_deref() == Ok(b"0123"), || format!("truncate past the end is a no-op, read {read:?}"));
        let grown = s.append("c/r/t", b"45").await;
        self.expect(grown == Ok(6), || format!("append after truncate continues at the cut, got {grown:?}"));

        self.expect_kind("remove", &s.remove("c/r/t").await, "ok");
        self.expect_kind("read after remove", &s.read("c/r/t", 0, None).await, "not-found");
        self.expect_kind("a second remove", &s.remove("c/r/t").await, "not-found");
        let listed = s.list("c/r/t").await.unwrap_or_default();
        self.expect(listed.is_empty(), || format!("a removed key is not listed: {listed:?}"));
    }

    async fn rename<S: Storage>(&mut self, s: &S) {
        let _ = s.replace("c/m/from", b"moving", None).await;
        let _ = s.replace("c/m/taken", b"stays", None).await;
        self.expect_kind("rename onto an existing key", &s.rename("c/m/from", "c/m/taken").await, "already-exists");
        let (from, taken) = (s.read("c/m/from", 0, None).await, s.read("c/m/taken", 0, None).await);
        self.expect(from.as_deref() == Ok(b"moving") && taken.as_deref() == Ok(b"stays"), || {
            format!("a refused rename changes neither object: {from:?}, {taken:?}")
        });
        self.expect_kind("rename into a new folder", &s.rename("c/m/from", "c/m/new/place").await, "ok");
        self.expect_kind("read of the old name", &s.read("c/m/from", 0, None).await, "not-found");
        let moved = s.read("c/m/new/place", 0, None).await;
        self.expect(moved.as_deref() == Ok(b"moving"), || format!("the renamed object reads {moved:?}"));
    }

    async fn locks<S: Storage>(&mut self, a: &S, b: &S) {
        self.expect_kind("lock", &a.lock("c/lock/one").await, "ok");
        self.expect_kind("lock held by another instance", &b.lock("c/lock/one").await, "locked");
        self.expect_kind("another lock name", &b.lock("c/lock/two").await, "ok");
        self.expect_kind("unlock", &a.unlock("c/lock/one").await, "ok");
        self.expect_kind("lock after the holder unlocked", &b.lock("c/lock/one").await, "ok");
        self.expect_kind("unlock", &b.unlock("c/lock/one").await, "ok");
        self.expect_kind("unlock", &b.unlock("c/lock/two").await, "ok");
        self.expect_kind("unlock of a lock not held", &a.unlock("c/lock/never").await, "ok");
        let listed = a.list("").await.unwrap_or_default();
        self.expect(!listed.iter().any(|k| k.key.starts_with("c/lock")), || "locks are not objects: they are never listed".into());
    }

    /// A storage may keep what it knows of an object while it holds the lock named by
    /// the object's key (an open handle, the length): its own replace, truncate, rename
    /// and remove must still be where the next append lands, and what another handle
    /// wrote once the lock was given back must be appended after.
    async fn writes_under_a_lock<S: Storage>(&mut self, a: &S, b: &S) {
        const KEY: &str = "c/held/s";
        self.expect_kind("lock", &a.lock(KEY).await, "ok");
        self.expect_length("a first append under the lock", a.append(KEY, b"one\n").await, 4);
        self.expect_length("a second append under the lock", a.append(KEY, b"two\n").await, 8);
        self.expect_kind("replace under the lock", &a.replace(KEY, b"new\n", Some(8)).await, "ok");
        self.expect_length("an append after a replace", a.append(KEY, b"after\n").await, 10);
        self.expect_kind("truncate under the lock", &a.truncate(KEY, 4, 10).await, "ok");
        self.expect_length("an append after a truncate", a.append(KEY, b"cut\n").await, 8);
        let read = a.read(KEY, 0, None).await;
        self.expect(read.as_deref() == Ok(b"new\ncut\n"), || {
            format!("under the lock, appends after a replace and a truncate read back {read:?}")
        });
        self.expect_kind("rename under the lock", &a.rename(KEY, "c/held/moved").await, "ok");
        self.expect_length("an append to the renamed key", a.append(KEY, b"fresh\n").await, 6);
        let (moved, fresh) = (a.read("c/held/moved", 0, None).await, a.read(KEY, 0, None).await);
        self.expect(moved.as_deref() == Ok(b"new\ncut\n") && fresh.as_deref() == Ok(b"fresh\n"), || {
            format!("an append after a rename goes to a new object, not the moved one: moved {moved:?}, new {fresh:?}")
        });
        self.expect_kind("remove under the lock", &a.remove(KEY).await, "ok");
        self.expect_length("an append after a remove", a.append(KEY, b"again\n").await, 6);
        self.expect_kind("unlock", &a.unlock(KEY).await, "ok");
        self.expect_length("another handle's append once the lock is given back", b.append(KEY, b"b\n").await, 8);
        self.expect_kind("lock again", &a.lock(KEY).await, "ok");
        self.expect_length("an append after another handle's", a.append(KEY, b"a\n").await, 10);
        self.expect_kind("unlock", &a.unlock(KEY).await, "ok");
        let read = b.read(KEY, 0, None).await;
        self.expect(read.as_deref() == Ok(b"again\nb\na\n"), || format!("appends on both sides of a lock read back {read:?}"));
    }

    async fn hostile_keys<S: Storage>(&mut self, s: &S) {
        for key in HOSTILE_KEYS {
            let refused = |k: &'static str| k == "invalid-key";
            let results = [
                ("read", kind(&s.read(key, 0, None).await)),
                ("append", kind(&s.append(key, b"x").await)),
                ("replace", kind(&s.replace(key, b"x", None).await)),
                ("truncate", kind(&s.truncate(key, 0, 0).await)),
                ("remove", kind(&s.remove(key).await)),
                ("rename from", kind(&s.rename(key, "c/h/x").await)),
                ("rename to", kind(&s.rename("c/h/missing", key).await)),
                ("lock", kind(&s.lock(key).await)),
            ];
            for (call, got) in results {
                // Renaming a missing source may fail on the source before the target.
                let ok = refused(got) || (call == "rename to" && got == "not-found");
                self.expect(ok, || format!("{call} of hostile key {key:?}: expected `invalid-key`, got `{got}`"));
            }
        }
        let listed = s.list("").await.unwrap_or_default();
        let stray: Vec<&str> = listed.iter().map(|k| k.key.as_str()).filter(|k| !k.starts_with("c/")).collect();
        self.expect(stray.is_empty(), || format!("refused keys left objects behind: {stray:?}"));
    }
}
