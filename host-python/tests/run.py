"""The Python host's tests: the conformance vectors through the component under
wasmtime-py (outcomes compared with the native host's), the core's storage contract on
FsStorage, errors worded by the core, the compaction driver, and a Python process and
``mneme`` CLI processes writing one session at once through the same locks.

Run by ``cargo xtask test`` after ``cargo test`` (which writes the native outcomes and
builds target/release/mneme):  target/python/bin/python host-python/tests/run.py
"""

import datetime
import functools
import inspect
import json
import os
import re
import subprocess
import sys
import threading
import time
import typing

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from conformance import canonical, run_vectors  # noqa: E402
from harness import PostgresCluster, finish, test  # noqa: E402
from mneme import Mneme, MnemeError, _SESSIONS, _Instance, _default_component  # noqa: E402
from mneme.postgres import PgStorage, _redact  # noqa: E402
from mneme.storage import FsStorage, StorageFailure  # noqa: E402

TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
NATIVE = os.environ.get("MNEME_NATIVE_OUTCOMES") or os.path.join(TARGET, "tmp", "conformance-native.json")
MNEME = os.environ.get("MNEME_BIN") or os.path.join(TARGET, "release", "mneme")


def conforms(value, hint):
    """Whether ``value`` is what the annotation ``hint`` promises: the package's
    signatures name mneme.types' TypedDicts (each key there, none else, each value as
    its field's type), Literals, lists, text, bytes, numbers and None."""
    if hint is typing.Any:
        return True
    if hint is None or hint is type(None):
        return value is None
    if typing.is_typeddict(hint):
        fields = typing.get_type_hints(hint)
        return isinstance(value, dict) and set(value) == set(fields) and all(conforms(value[key], fields[key]) for key in fields)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return value in args
    if origin is typing.Union:
        return any(conforms(value, arg) for arg in args)
    if origin is dict:
        return isinstance(value, dict) and all(conforms(key, args[0]) and conforms(item, args[1]) for key, item in value.items())
    if origin is list:
        return isinstance(value, list) and all(conforms(item, args[0]) for item in value)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, float)
    return isinstance(value, hint)


# Every public method's result is held to its annotation for the whole run: a signature
# that promises what a call does not give fails the test that made the call.
returned = {}


def checked(name, method):
    hint = typing.get_type_hints(method)["return"]

    @functools.wraps(method)
    def call(*args, **kwargs):
        value = method(*args, **kwargs)
        assert conforms(value, hint), f"Mneme.{name} returned {type(value).__name__} ({str(value)[:200]}), not the {hint} its signature promises"
        returned[name] = returned.get(name, 0) + 1
        return value

    return call


for name, member in list(vars(Mneme).items()):
    if name.startswith("_"):
        continue
    if isinstance(member, staticmethod):
        setattr(Mneme, name, staticmethod(checked(name, member.__func__)))
    elif inspect.isfunction(member):
        setattr(Mneme, name, checked(name, member))


def quickstart(readme, language):
    """A package README's quickstart: the first fenced block in ``language`` under its
    "## Quickstart" heading, taken as written."""
    with open(readme, encoding="utf-8") as file:
        section = file.read().partition("\n## Quickstart\n")[2].partition("\n## ")[0]
    opening = f"\n```{language}\n"
    if opening not in section:
        raise AssertionError(f"{readme}'s quickstart has no ```{language} block")
    return section.partition(opening)[2].partition("\n```\n")[0] + "\n"


@test("the README's quickstart runs as written")
def _(scratch):
    code = quickstart(os.path.join(ROOT, "host-python/README.md"), "python")
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "host-python")}
    ran = subprocess.run([sys.executable, "-c", code], cwd=scratch, env=env, capture_output=True, text=True, check=False)
    assert ran.returncode == 0, f"the quickstart failed ({ran.returncode}): {ran.stderr}"
    assert "user Releases go to staging on Fridays." in ran.stdout and "assistant Noted (1 messages read)." in ran.stdout, ran.stdout
    sessions = [name for _, _, files in os.walk(os.path.join(scratch, "data/projects")) for name in files if name.endswith(".jsonl")]
    assert len(sessions) == 1, sessions


@test("conformance vectors through the component under wasmtime-py")
def _(scratch):
    results, failures = run_vectors(Mneme, MnemeError, os.path.join(ROOT, "tests", "vectors"), scratch)
    assert not failures, "\n".join(failures)
    assert os.path.exists(NATIVE), f"no native outcomes at {NATIVE}: run the Rust tests first (cargo xtask test does)"
    with open(NATIVE, encoding="utf-8") as handle:
        native = json.load(handle)
    assert len(results) == len(native), f"{len(results)} vectors ran here, the native host ran {len(native)}"
    for (name, outcomes), (native_name, native_outcomes) in zip(results, native):
        assert name == native_name, f"vector {name} here is {native_name} natively"
        got, expected = canonical(outcomes), canonical(native_outcomes)
        assert got == expected, f"{name}: Python's outcomes differ from the native host's\npython: {got[:1500]}\nnative: {expected[:1500]}"


@test("FsStorage keeps the core's storage contract")
def _(scratch):
    instance = _Instance(FsStorage(scratch, lock_timeout_ms=50), _default_component())
    broke = instance.call(_SESSIONS, "storage-contract")
    assert broke == [], "the contract broke:\n" + "\n".join(broke)


@test("a store's root or top folder linked to nothing refuses as leading nowhere; a missing root is made")
def _(scratch):
    # The quick answer of the link rule (no link on the way) must not take these for inside.
    os.symlink(os.path.join(scratch, "nothing"), os.path.join(scratch, "dangling-root"))
    os.makedirs(os.path.join(scratch, "store"))
    os.symlink(os.path.join(scratch, "nothing"), os.path.join(scratch, "store", "memory"))
    for root, key in [("dangling-root", "projects/p/s.jsonl"), ("store", "memory/x.md")]:
        storage = FsStorage(os.path.join(scratch, root))
        try:
            storage.append(key, b"x\n")
            raise AssertionError(f"{key} under {root} was written")
        except StorageFailure as failure:
            assert failure.tag == "invalid-key" and "leads nowhere" in failure.payload["reason"], (root, failure)
    fresh = FsStorage(os.path.join(scratch, "new", "store"))
    assert fresh.append("projects/p/s.jsonl", b"x\n") == 2
    assert fresh.read("projects/p/s.jsonl", 0, None) == b"x\n"


@test("a link is followed only inside the store: one leading out or nowhere is not listed, read or written through")
def _(scratch):
    outside, disk, root = (os.path.join(scratch, name) for name in ("outside", "disk", "store"))
    for folder in (os.path.join(outside, "p/memory"), os.path.join(disk, "p/memory"), os.path.join(root, "memory")):
        os.makedirs(folder)
    for path, text in [("outside/secret.md", "key\n"), ("outside/p/memory/x.md", "elsewhere\n"), ("disk/p/memory/real.md", "on the other disk\n")]:
        with open(os.path.join(scratch, path), "w") as handle:
            handle.write(text)
    storage = FsStorage(root)
    storage.replace("memory/kept.md", b"kept\n", None)
    for link, target in [
        ("store/projects", disk),
        ("store/memory/alias.md", "kept.md"),
        ("disk/p/memory/alias.md", "real.md"),
        ("store/memory/out.md", os.path.join(outside, "secret.md")),
        ("disk/p/memory/out.md", os.path.join(outside, "secret.md")),
        ("store/memory/folder", outside),
        ("disk/q", os.path.join(outside, "p")),
        ("store/memory/dangling.md", "nothing.md"),
        ("store/memory/loop.md", "loop.md"),
    ]:
        os.symlink(target, os.path.join(scratch, link))
    keys = lambda prefix: [key for key, _ in storage.list(prefix)]
    assert keys("memory/") == ["memory/alias.md", "memory/kept.md"], keys("memory/")
    assert keys("projects/") == ["projects/p/memory/alias.md", "projects/p/memory/real.md"], keys("projects/")
    assert keys("projects/q/memory/") == [] and keys("memory/folder/") == []
    assert storage.read("memory/alias.md", 0, None) == b"kept\n"
    assert storage.read("projects/p/memory/alias.md", 0, None) == b"on the other disk\n"
    for key, why in [
        ("memory/out.md", "leads outside the store"),
        ("projects/p/memory/out.md", "leads outside the store"),
        ("memory/folder/secret.md", "leads outside the store"),
        ("projects/q/memory/x.md", "leads outside the store"),
        ("memory/folder/new.md", "leads outside the store"),
        ("memory/dangling.md", "leads nowhere"),
        ("memory/loop.md", "leads nowhere"),
    ]:
        for call in [
            lambda: storage.read(key, 0, None),
            lambda: storage.append(key, b"more\n"),
            lambda: storage.truncate(key, 0, 4),
            lambda: storage.replace(key, b"new\n", None),
            lambda: storage.remove(key),
            lambda: storage.rename(key, "memory/moved.md"),
            lambda: storage.rename("memory/kept.md", key),
        ]:
            try:
                call()
                raise AssertionError(f"{key} went through its link")
            except StorageFailure as failure:
                assert failure.tag == "invalid-key" and why in failure.payload["reason"], (key, failure)
    for path, text in [("secret.md", "key\n"), ("p/memory/x.md", "elsewhere\n")]:
        with open(os.path.join(outside, path)) as handle:
            assert handle.read() == text, path
    assert not os.path.exists(os.path.join(outside, "new.md"))
    for link in ["memory/out.md", "memory/dangling.md", "memory/loop.md", "memory/folder"]:
        assert os.path.islink(os.path.join(root, link)), link

    # Through the memory tool: the model can neither read nor replace what a link out
    # leads to, and a create over a link that leads nowhere leaves it as it was.
    with Mneme(root) as store:
        listing = store.memory_tool(None, {"command": "view", "path": "/memories"})["content"]
        assert "out.md" not in listing and "/memories/kept.md" in listing, listing
        for input in [
            {"command": "view", "path": "/memories/out.md"},
            {"command": "create", "path": "/memories/out.md", "file_text": "overwritten"},
            {"command": "create", "path": "/memories/dangling.md", "file_text": "made"},
            {"command": "str_replace", "path": "/memories/out.md", "old_str": "key", "new_str": "lock"},
        ]:
            try:
                said = store.memory_tool(None, input)
                raise AssertionError(f"{input['command']} went through the link: {said}")
            except MnemeError as error:
                assert "symbolic link" in str(error), error
    assert os.path.islink(os.path.join(root, "memory/out.md")) and os.path.islink(os.path.join(root, "memory/dangling.md"))
    with open(os.path.join(outside, "secret.md")) as handle:
        assert handle.read() == "key\n"


@test("PgStorage keeps the core's storage contract (a throwaway PostgreSQL cluster)")
def _(scratch):
    cluster = PostgresCluster()
    try:
        storage = PgStorage(cluster.url, lock_timeout_ms=50)
        instance = _Instance(storage, _default_component())
        broke = instance.call(_SESSIONS, "storage-contract")
        assert broke == [], "the contract broke:\n" + "\n".join(broke)
        storage.close()
        for url, shown in [
            ("postgresql://me:secret@db/x", "postgresql://me:***@db/x"),
            ("postgresql://me@db/x?sslmode=require&password=secret", "postgresql://me@db/x?sslmode=require&password=***"),
            ("host=/tmp user=me password=secret", "host=/tmp user=me password=***"),
        ]:
            assert _redact(url) == shown, _redact(url)
        try:
            PgStorage(cluster.url, schema="No-Such")
            raise AssertionError("a schema name PostgreSQL would have to quote was taken")
        except ValueError as error:
            assert "lowercase" in str(error)
    finally:
        cluster.close()


@test("errors are MnemeErrors with the core's kind and words; bad arguments never trap")
def _(scratch):
    store = Mneme(scratch)

    def refused(call, kind, words):
        try:
            call()
        except MnemeError as error:
            assert error.kind == kind, f"expected {kind}, got {error.kind}: {error}"
            assert words in str(error), f'the message "{error}" does not say "{words}"'
            return
        raise AssertionError(f"expected {kind}, but the call succeeded")

    refused(lambda: store.load("nope"), "session-not-found", "list the store's sessions")
    refused(lambda: store.append("a/b", role="user", text="x"), "invalid-session-id", "a/b")
    refused(lambda: store.append("s", role="user", text=5), "invalid-argument", "text must be a string")
    # Out of its WIT type's range: refused, not wrapped (2^64 + 5 was written as 1970).
    refused(lambda: store.append("s", role="user", text="x", now=2**64 + 5), "invalid-argument", "now is 18446744073709551621")
    # Seconds (int(time.time())) or a float for milliseconds read as 1970: refused; a datetime is taken.
    refused(lambda: store.append("s", role="user", text="x", now=int(time.time())), "invalid-argument", "reads as seconds since the epoch")
    refused(lambda: store.append("s", role="user", text="x", now=time.time()), "invalid-argument", "a float: give milliseconds as an int")
    when = datetime.datetime(2026, 11, 29, 12, 0, tzinfo=datetime.timezone.utc)
    with Mneme(os.path.join(scratch, "times")) as other:
        assert other.append("dated", role="user", text="x", cwd="/w", now=when)["timestamp"] == "2026-11-29T12:00:00.000Z"
        # A relative working directory is taken from the current one, as the CLI takes it.
        relative = other.append("relative", role="user", text="x", cwd="app")
        # Left out, a line's folder is the session's own; a new session needs one.
        assert json.loads(other.append("dated", role="assistant", text="y")["raw"])["cwd"] == "/w"
        refused(lambda: other.append("placeless", role="user", text="x"), "invalid-argument", "a new session needs the working directory")
    assert json.loads(relative["raw"])["cwd"] == os.path.join(os.getcwd(), "app"), relative
    # A root that cannot be made is said by its folder, not as the session's file missing.
    open(os.path.join(scratch, "a-file"), "w").close()
    unmade = os.path.join(scratch, "a-file", "store")
    refused(lambda: Mneme(unmade).append("s", role="user", text="x", cwd="/w"), "storage/io", f"cannot make the folder {unmade}")
    refused(lambda: store.search("x", limit=2**32 + 1), "invalid-argument", "limit is 4294967297: give a whole number from 0 to 4294967295")
    refused(lambda: store.rollover_gate("k", -5), "invalid-argument", "max_context_tokens is -5")
    refused(lambda: store.gc({"ttl_days": 3, "dry_run": True}), "invalid-argument", "policy: unknown field `ttl_days`: use ttl_ms, classes")
    refused(lambda: store.gc({"ttl_ms": -1}), "invalid-argument", "the time to live of the default is -1 ms")
    # Inside a settings record too: -1 lines was a cap of no limit, "no" was True, 256 o'clock midnight.
    refused(lambda: store.memory_load("-w", {"lines": -1}), "invalid-argument", "lines is -1: give a whole number from 0 to 18446744073709551615")
    refused(lambda: store.memory_load("-w", {"units": 1.5}), "invalid-argument", "units must be a whole number, not float")
    refused(lambda: store.gc({"dry_run": "no"}), "invalid-argument", "dry_run must be True or False, not str")
    refused(lambda: store.plan_compaction("s", {"keep": {"recent_messages": 2**32}}), "invalid-argument", "recent_messages is 4294967296")
    refused(lambda: store.reset_gate("s", {"daily_reset_hour": 256}), "invalid-argument", "daily_reset_hour is 256: give a whole number from 0 to 255")
    refused(lambda: store.plan_compaction("s", {"trigger": {"fraction": "most"}}), "invalid-argument", "fraction must be a number, not str")
    refused(lambda: store.memory_add("-w", {"name": "t", "type": "user", "body": "b", "topics": "abc"}), "invalid-argument", "memory.topics must be a list, not str")
    closed = Mneme(os.path.join(scratch, "closed"))
    closed.close()
    refused(lambda: closed.list(), "invalid-argument", "this store is closed")
    refused(lambda: store.append_turn("s", [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope", "content": "x"}]}], cwd="/w"), "invalid-message", "nothing was written")
    entry = store.append("s", role="user", text="still here", cwd="/w")
    assert entry["text"] == "still here" and entry["parent_uuid"] is None, entry
    try:
        store.append_turn("s", [{"role": "user", "content": "fine"}, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope", "content": "x"}]}])
        raise AssertionError("a result answering no call was written")
    except MnemeError as error:
        assert error.kind == "invalid-message" and error.details["message"] == 1 and "nope" in error.details["reason"], (error.kind, error.details)
    refused(lambda: store.append_turn("s", {"role": "user", "content": "x"}, parent=5), "invalid-argument", "parent must be a string, not int")
    refused(lambda: store.append_turn("s", {"role": "user", "content": {1, 2}}), "invalid-argument", "messages cannot be written as JSON")
    refused(lambda: store.append_turn("s", {"role": "user", "content": "x"}, agent={"id": 5}), "invalid-argument", "agent.id must be a string")
    refused(lambda: store.fork("s", from_=5), "invalid-argument", "from_ must be a string, not int")
    refused(lambda: store.provider_context("s", injections=None), "invalid-argument", "injections must be a list of dicts, not NoneType")
    refused(lambda: store.provider_context("s", injections=[{"role": "user", "place": "end", "text": 5}]), "invalid-argument", "injections[0].text must be a string")
    refused(lambda: store.provider_context("s", injections=[{"role": "user", "text": "x", "where": "end"}]), "invalid-argument", "injections[0]: unknown field `where`")
    refused(lambda: Mneme(os.path.join(scratch, "x"), durability="x"), "invalid-argument", 'durability must be "fsync" or "buffered"')
    refused(lambda: Mneme(__file__), "invalid-argument", "is not a folder")
    # A lone surrogate (a cut emoji, bytes decoded with surrogateescape) becomes U+FFFD,
    # in a plain append and in a turn alike.
    cut = "cut \ud83d, " + b"\xff".decode("utf-8", "surrogateescape")
    refused(lambda: store.append("s" + b"\xff".decode("utf-8", "surrogateescape"), role="user", text="x"), "invalid-argument", "id has a lone surrogate (U+DCFF) at 1")
    assert store.append("s", role="user", text=cut)["text"] == "cut \ufffd, \ufffd"
    assert store.append_turn("s", {"role": "user", "content": cut})[0]["text"] == "cut \ufffd, \ufffd"
    refused(lambda: store.usage("s", {"input": 3.0, "output": 15.0}), "invalid-argument", "`cache_read` is missing")
    refused(lambda: store.usage("s", {"input": 3.0, "output": 15.0, "cache_read": 0, "cache_creation": 0, "cached": 1}), "invalid-argument", "unknown field `cached`")
    refused(lambda: store.usage("s", {"input": 3.0, "output": -15.0, "cache_read": 0, "cache_creation": 0}), "invalid-argument", "a number from 0 to 1000000000000")
    with Mneme(scratch, read_only=True) as reader:
        refused(lambda: reader.append("s", role="user", text="x"), "storage/read-only", "read-only")
        assert len(reader.list()["sessions"]) == 1
    store.close()


@test("nested settings refuse fields they do not have; a string is no list; flags are booleans; errors pickle")
def _(scratch):
    import pickle

    store = Mneme(scratch)

    def refused(call, words):
        try:
            call()
        except MnemeError as error:
            assert error.kind == "invalid-argument" and words in str(error), f"{error.kind}: {error}"
            return
        raise AssertionError(f"expected a refusal saying {words!r}")

    inbound = {"id": "u", "text": "x"}
    # `daily_hour` would have turned the default 04:00 reset off without a word.
    refused(lambda: store.resolve(inbound, policy={"reset": {"daily_hour": 4}}), "unknown field `daily_hour`")
    refused(lambda: store.resolve(inbound, policy={"overrides": [{"chattype": "group", "policy": {}}]}), "overrides[0]: unknown field `chattype`")
    refused(lambda: store.resolve({**inbound, "origin": {"displayname": "x"}}), "unknown field `displayname`")
    refused(lambda: store.plan_compaction("s", {"trigger": {"fraction": 0.5, "reserve": {"reserve_tokens": 3, "floor": 1}}}), "as {case: value}")
    refused(lambda: store.plan_compaction("s", {"keep": {"recent_message": 4}}), "'recent-message' is not one of recent_tokens, recent_messages")
    store.memory_add("-w", {"name": "Deploy", "type": "project", "description": "where", "body": "eu"})
    # memory_list's window, as memory_recall's: by when each memory holds from.
    assert len(store.memory_list("-w", since=0)) == 1 and store.memory_list("-w", until=1) == []
    refused(lambda: store.memory_update("-w", "deploy", {"topics": "abc"}), "topics must be a list, not str")
    refused(lambda: store.memory_add("-w", {"name": "t", "type": "user", "links": {"related": ["deploy"]}}), "unknown field `related`")
    refused(lambda: store.memory_add("-w", {"name": "t", "type": "user", "links": {"relates_to": "deploy"}}), "relates_to must be a list, not str")
    refused(lambda: store.memory_recall("-w", "eu", all=1), "all must be True or False, not int")
    refused(lambda: store.set_embeddings(5), "table must be str or bytes")
    refused(lambda: store.append_turn("s", {"role": "user", "content": float("nan")}), "messages cannot be written as JSON")
    for timeout in (None, "5", -1):
        refused(lambda: Mneme(scratch, lock_timeout_ms=timeout), "lock_timeout_ms must be a number of milliseconds")
    # A lone surrogate in a memory's words becomes U+FFFD, as in a message.
    assert store.memory_add("-w", {"name": "Cut", "type": "user", "body": "cut \ud83d"})["body"].startswith("cut \ufffd")
    # The compile cache keeps the newest three compiled components, nothing else of its own.
    import mneme

    cache = os.path.join(scratch, "cache")
    os.makedirs(cache)
    for n in range(5):
        path = os.path.join(cache, f"python-49.0.0-{n}.cwasm")
        open(path, "wb").close()
        os.utime(path, (1000 + n, 1000 + n))
    open(os.path.join(cache, "notes.txt"), "w").close()
    mneme._prune(cache)
    assert sorted(os.listdir(cache)) == ["notes.txt", "python-49.0.0-2.cwasm", "python-49.0.0-3.cwasm", "python-49.0.0-4.cwasm"], os.listdir(cache)
    error = MnemeError("invalid-message", "message 2 is invalid", {"message": 2})
    again = pickle.loads(pickle.dumps(error))
    assert (again.kind, str(again), again.details) == (error.kind, str(error), error.details)
    store.close()


@test("a write too large for wasmtime-py, two threads, an interruption: each is told, and the store goes on")
def _(scratch):
    class Interruptible(FsStorage):
        interrupt = False

        def lock(self, name):
            if self.interrupt:
                raise KeyboardInterrupt
            return super().lock(name)

    store = Mneme(storage=Interruptible(scratch, durability="buffered"))
    store.append("s", role="user", text="first", cwd="/w")
    store.hold("s")
    store.set_redaction([])
    # Text crosses in one piece: 3 MB goes through; 70 MB, or 25 million characters
    # of three bytes, would come back in the answer as more than 128 MiB, and is
    # refused before the component writes it.
    store.append("s", role="user", text="x" * 3_000_000)
    # An export's bytes cross as text too: as a byte list, more than 2.5 MB trapped.
    for to in ["claude", "markdown"]:
        exported = store.export_session("s", to)
        assert isinstance(exported["data"], bytes) and b"x" * 3_000_000 in exported["data"], (to, len(exported["data"]))
    # Bytes going in do not come out again: a 70 MB transcript is checked, not refused.
    transcript = (json.dumps({"type": "user", "message": {"role": "user", "content": "z" * 5000}}) + "\n").encode() * 14_000
    assert Mneme.check_bytes(transcript)["load"]["entry_count"] == 14_000
    for text in ["x" * 70_000_000, "語" * 25_000_000]:
        try:
            store.append("s", role="user", text=text)
            raise AssertionError(f"an append of {len(text):,} characters went through wasmtime-py")
        except MnemeError as error:
            assert error.kind == "too-large" and "nothing was written" in str(error), f"{error.kind}: {error}"
    # An answer over wasmtime-py's 128 MiB (the context of a 90 MB session) traps the
    # instance; the call says so and that nothing was written.
    for _ in range(3):
        store.append("big", role="user", text="y" * 30_000_000, cwd="/w")
    try:
        store.context("big")
        raise AssertionError("a 90 MB context came back through wasmtime-py")
    except MnemeError as error:
        assert error.kind == "too-large" and "nothing of it had been written" in str(error), f"{error.kind}: {error}"
    store.remove("big")
    # A new instance took the trapped one's place: the hold was given back, the
    # redaction setting kept, and nothing of the refused append written.
    token = "ghp_" + "a1B2" * 9
    entry = store.append("s", role="assistant", text=f"after it: {token}")
    assert token in entry["raw"], "the redaction setting was lost with the trapped instance"
    assert [m["text"][:9] for m in store.context("s")["messages"]] == ["first", "x" * 9, "after it:"]
    assert "s" not in str(store.storage.held), store.storage.held

    # Two threads on one store take turns: every append lands, on one chain.
    def writer(n):
        for i in range(40):
            store.append("t", role="user", text=f"{n}-{i}", cwd="/w")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.context("t")["messages"]) == 80
    assert not store.check("t")["dangling_parents"]

    # Ctrl-C while a storage call waits: raised as KeyboardInterrupt once the component
    # returns, which it does normally (no trap); the store goes on.
    store.storage.interrupt = True
    try:
        store.append("t", role="user", text="never")
        raise AssertionError("the interruption was lost")
    except KeyboardInterrupt:
        pass
    store.storage.interrupt = False
    assert store.append("t", role="user", text="after the interruption")["text"] == "after the interruption"
    assert len(store.context("t")["messages"]) == 81
    store.close()


@test("compact drives the core's run: rolling summaries from the caller's summariser, a failure recorded")
def _(scratch):
    with Mneme(scratch) as store:
        for sid in ("ok", "failing"):
            turn = [{"role": "user" if i % 2 == 0 else "assistant", "content": "word " * 400 + str(i)} for i in range(30)]
            store.append_turn(sid, turn, cwd="/w")
        settings = {"context_window": 8000, "keep": {"recent_tokens": 2000}}
        prompts = []

        def summarize(prompt, max_tokens):
            prompts.append(prompt)
            return f"summary in {max_tokens} tokens"

        done = store.compact("ok", settings, "manual", summarize)
        assert len(done["plan"]["steps"]) > 1 and len(prompts) == len(done["plan"]["steps"]), (len(prompts), done["plan"]["steps"])
        assert done["applied"]["action"] == "summarize" and done["failure"] is None, done
        context = store.context("ok")
        assert context["compacted"] and "summary in" in context["messages"][0]["text"], context["messages"][0]

        def down(prompt, max_tokens):
            raise RuntimeError("the model is down")

        failed_run = store.compact("failing", settings, "manual", down)
        assert failed_run["applied"] is None and failed_run["failure"] == "the model is down", failed_run
        assert not store.context("failing")["compacted"]


@test("memory_recall drives a host's embedder: the memories without a vector first, then the query; vectors kept")
def _(scratch):
    with Mneme(scratch) as store:
        store.memory_add("-w", {"name": "Ride", "type": "user", "description": "What the user drives", "body": "A red sedan."})
        store.memory_add("-w", {"name": "Forecast", "type": "project", "description": "Launch day", "body": "Sunny, no rain."})
        asked = []

        def embed(texts):
            """A toy model: vehicles, weather, anything else."""
            asked.append(len(texts))
            vectors = []
            for text in texts:
                vector = [0.0, 0.0, 0.0]
                for word in re.findall(r"[a-z]+", text.lower()):
                    axis = 0 if word in ("car", "automobile", "sedan") else 1 if word in ("sunny", "rain") else 2
                    vector[axis] += 0.1 if axis == 2 else 1.0
                vectors.append(vector)
            return vectors

        found = store.memory_recall("-w", "automobile", embed=embed, model="toy")
        assert [hit["file"] for hit in found["hits"]] == ["ride"] and found["hits"][0]["matched"], found
        assert asked == [2, 1], f"the memories, then the query: {asked}"
        store.memory_recall("-w", "automobile", embed=embed, model="toy")
        assert asked == [2, 1, 1], f"kept vectors are not embedded again: {asked}"
        assert store.memory_recall("-w", "automobile")["hits"] == [], "without the embedder, words alone"
        for call, words in [
            (lambda: store.memory_recall("-w", "car", embed=lambda texts: [[1.0, 0.0, 0.0]], model="other"), "embed gave list for 2 texts"),
            (lambda: store.memory_recall("-w", "car", embed=embed, model=""), "name the embedder's model"),
            (lambda: store.memory_recall("-w", "car", embed=embed, model="toy", near={"model": "toy", "vector": [1.0]}), "give near or embed, not both"),
        ]:
            try:
                call()
            except MnemeError as error:
                assert error.kind == "invalid-argument" and words in str(error), f"{error.kind}: {error}"
            else:
                raise AssertionError(f"expected a refusal saying {words!r}")


def cli(*args):
    return subprocess.run([MNEME, *args], capture_output=True, text=True, check=False)


@test("a Python process and `mneme` CLI processes append to one session at once: every line, one chain")
def _(scratch):
    assert os.path.exists(MNEME), f"no mneme binary at {MNEME}: build it with `cargo build --release -p mneme-host`"
    python_writes, cli_writes = 100, 100
    # The first `mneme` run after a build compiles the component (a second or two):
    # done here, so the writers overlap.
    assert cli("--root", scratch, "sessions", "list").returncode == 0
    writer = subprocess.Popen(
        [sys.executable, os.path.join(HERE, "writer.py"), scratch, "shared", str(python_writes)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert writer.stdout.readline().strip() == "ready", writer.stderr.read()
    for i in range(cli_writes):
        done = cli("--root", scratch, "append", "shared", "--role", "user", "--text", f"cli {i}", "--cwd", "/w")
        assert done.returncode == 0, done.stderr
    assert writer.wait() == 0, writer.stderr.read()
    with Mneme(scratch) as store:
        messages = store.context("shared")["messages"]
        # Had a lock not excluded the other process, two appends would have read the
        # same newest entry and forked the session: the main chain would be shorter.
        assert len(messages) == python_writes + cli_writes, f"the main chain has {len(messages)} messages"
        for who in ("python", "cli"):
            mine = [int(m["text"].split(" ")[1]) for m in messages if m["text"].startswith(who + " ")]
            assert mine == list(range(len(mine))) and len(mine) == 100, f"{who}'s messages are out of order or missing"
        writers = [m["text"].split(" ")[0] for m in messages]
        switches = sum(1 for a, b in zip(writers, writers[1:]) if a != b)
        assert switches >= 2, f"the writers did not overlap ({switches} switches: {writers[:3]} … {writers[-3:]}), so this run proved nothing"
        print(f"     the session switches between the Python and the CLI writers {switches} times")
        report = store.check("shared")
        assert not report["load"]["skipped"] and not report["dangling_parents"] and not report["load"]["torn_tail"], report


@test("a session Python holds makes a `mneme` CLI append wait until Python releases it")
def _(scratch):
    with Mneme(scratch) as store:
        store.append("held", role="user", text="first", cwd="/w")
        store.hold("held")
        started = time.monotonic()
        result = {}
        thread = threading.Thread(target=lambda: result.update(done=cli("--root", scratch, "append", "held", "--role", "user", "--text", "from the CLI")))
        thread.start()
        time.sleep(1.5)
        before = store.context("held")["messages"]
        store.release("held")
        thread.join()
        assert result["done"].returncode == 0, result["done"].stderr
        assert len(before) == 1, f"the CLI wrote while Python held the session: {before}"
        assert time.monotonic() - started >= 1.5
        assert len(store.context("held")["messages"]) == 2


public = [name for name, member in vars(Mneme).items() if not name.startswith("_") and callable(member)]
print(f"     {len(returned)} of the {len(public)} public methods ran, each result as its signature promises; not run here: {', '.join(sorted(set(public) - set(returned)))}")
finish("Python host")
