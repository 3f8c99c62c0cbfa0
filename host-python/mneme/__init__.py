"""Mneme in Python: durable agent sessions, run by the Mneme component under
wasmtime-py, on a folder laid out like a Claude Code home (shared safely with the
``mneme`` CLI and the Node package).

    from mneme import Mneme
    store = Mneme("./data")
    store.append("chat-1", role="user", text="hello", cwd="/home/me/app")
    messages = store.context("chat-1")["messages"]

Values are mneme-core's JSON forms as Python dicts and lists (snake_case keys, the
shapes of the README's "JSON output" and of the browser and Node packages). Failures
raise ``MnemeError`` whose ``kind`` is the core's (``session-not-found``,
``storage/locked``, ...), with the message the core words.

Each call costs about a millisecond in wasmtime-py's value reflection (see the
README's Python table): prefer ``append_turn`` (a whole turn in one call) to many
``append`` calls.
"""

import datetime
import gc
import hashlib
import importlib.metadata
import json
import os
import re
import threading
import time
import uuid as uuids
from typing import Any, Callable, List, Optional, Sequence, Union

import wasmtime
import wasmtime.component as wc
from wasmtime.component import Record, Variant

from . import _wasmtime
from .storage import FsStorage, StorageFailure
from .types import (
    Applied,
    ArchivedSession,
    Branch,
    CheckReport,
    Consolidation,
    ConsolidationPlan,
    Context,
    CrabSession,
    Decision,
    EmbeddingPlan,
    EmbeddingsInfo,
    Entry,
    ExportFormat,
    Exported,
    Extracted,
    ExtractionPlan,
    Field,
    GcReport,
    Imported,
    IndexHealth,
    KeyEntry,
    KeyParts,
    KeyView,
    KeysImported,
    Ledger,
    LinkKind,
    Listing,
    Loaded,
    LoadedInstructions,
    Memory,
    MemoryIndexReport,
    MemoryToolResult,
    Mode,
    Near,
    Plan,
    Prices,
    ProviderContext,
    RebuildReport,
    Recalled,
    RepairReport,
    Resolution,
    RolledOver,
    SearchHit,
    Shown,
    Subagent,
    Transcript,
    WrittenSession,
)

# The types in the signatures. Values are mneme-core's JSON forms: a record is a dict
# with the snake_case keys the docstrings name (the README's "JSON output"); what a
# method returns is typed by mneme.types, which `cargo xtask codegen` writes from the
# WIT (and checks each method's annotation against the function it calls).
# (typing's List: in Mneme's body `list` is its method, not the builtin.)
Json = dict[str, Any]
# A time: milliseconds since the epoch, a datetime, or None for the clock.
Time = Union[int, datetime.datetime, None]
# A working directory, as text or a path.
Folder = Union[str, os.PathLike]

_wasmtime.install()

__all__ = ["Mneme", "MnemeError", "FsStorage", "StorageFailure"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(os.path.dirname(_HERE))
_STORAGE = "mneme:engine/storage@0.1.0"
_SESSIONS = "mneme:engine/sessions@0.1.0"
_COMPACTION = "mneme:engine/compaction@0.1.0"
_GATES = "mneme:engine/gates@0.1.0"
_MEMORY = "mneme:engine/memory@0.1.0"
_INDEX = "mneme:engine/index@0.1.0"


class MnemeError(Exception):
    """A refused or failed call: ``kind`` is the core's error kind, ``details`` its
    fields (``{"message": 2, "reason": …}`` for an invalid message; ``{}`` when the
    words say it all)."""

    def __init__(self, kind, message, details=None):
        super().__init__(message)
        self.kind = kind
        self.details = {} if details is None else details

    def __reduce__(self):
        # Pickled whole (a process pool sends errors back pickled).
        return (MnemeError, (self.kind, str(self), self.details))


# --- Values -------------------------------------------------------------------------
#
# wasmtime-py's value mapping, written down once. Records are objects with one
# attribute per field, named as in the WIT (``parent-uuid``); enums are strings; options
# are the value or None; lists of u8 are bytes. A variant (results and options
# included) is passed *untagged* (the bare payload, None for a case without one) when
# its cases' payloads have distinct Python types, and as ``Variant(tag, payload)``
# otherwise: ``result<entry, error>`` comes back as a Record or, on failure, the
# ``error`` variant, which is itself tagged (several of its cases carry strings).
# ``_to_wit`` and ``_from_wit`` follow the function's own types, so every call uses
# the rule the same way; callers only ever see mneme-core's JSON.


def _snake(name):
    return name.replace("-", "_")


def _case_of(variant_type, value):
    """The case an (untagged or tagged) variant value is, and its payload."""
    if variant_type._tagged():
        return value.tag, value.payload
    # A case whose payload may be anything (an option: `object` for its none) is tried
    # last, or `result<option<T>, error>` would take every error for an ok.
    by_class = []
    for name, payload_type in _cases(variant_type):
        if payload_type is None:
            if value is None:
                return name, None
            continue
        classes = set()
        payload_type.add_classes(classes)
        by_class.append((object in classes, name, tuple(classes)))
    for _, name, classes in sorted(by_class, key=lambda case: case[0]):
        if isinstance(value, classes):
            return name, value
    raise TypeError(f"{value!r} is no case of the variant")


def _cases(variant_type):
    if isinstance(variant_type, wc.ResultType):
        return [("ok", variant_type.ok), ("err", variant_type.err)]
    if isinstance(variant_type, wc.OptionType):
        return [("none", None), ("some", variant_type.payload)]
    return variant_type.cases


# Each integer type's range: wasmtime-py lowers a number outside it wrapped (-1 as a u64
# is 2**64 - 1, a "lines" cap of no limit) or a bool as 0 or 1, without a word.
_INTEGERS = {
    wc.U8: (0, 2**8 - 1),
    wc.U16: (0, 2**16 - 1),
    wc.U32: (0, 2**32 - 1),
    wc.U64: (0, 2**64 - 1),
    wc.S8: (-(2**7), 2**7 - 1),
    wc.S16: (-(2**15), 2**15 - 1),
    wc.S32: (-(2**31), 2**31 - 1),
    wc.S64: (-(2**63), 2**63 - 1),
}


def _to_wit(value_type, value, name="value"):
    """mneme-core's JSON as a wasmtime-py value of ``value_type``; ``name`` says where
    the value sits, for the error that refuses it."""
    if isinstance(value_type, wc.RecordType):
        names = [_snake(field_name) for field_name, _ in value_type.fields]
        if not isinstance(value, dict):
            raise MnemeError("invalid-argument", f"{name} must be a dict with {', '.join(names)}, not {type(value).__name__}")
        # A misspelt field (`daily_hour` for `daily_reset_hour`) would leave its default
        # silently in force, as the core's JSON refuses it.
        unknown = [key for key in value if key not in names]
        if unknown:
            raise MnemeError("invalid-argument", f"{name}: unknown field `{unknown[0]}`, expected one of {', '.join(names)}")
        record = Record()
        for field_name, field_type in value_type.fields:
            field = value.get(_snake(field_name))
            if field is None and not isinstance(field_type, wc.OptionType):
                # wasmtime-py would raise a TypeError from inside the call.
                raise MnemeError("invalid-argument", f"{name}: `{_snake(field_name)}` is missing")
            setattr(record, field_name, _to_wit(field_type, field, f"{name}.{_snake(field_name)}"))
        return record
    if isinstance(value_type, wc.OptionType):
        return None if value is None else _to_wit(value_type.payload, value, name)
    if isinstance(value_type, wc.ListType):
        if isinstance(value, (bytes, bytearray)):
            return bytes(value)
        if not isinstance(value, (list, tuple)):
            # A string would go in a letter an item.
            raise MnemeError("invalid-argument", f"{name} must be a list, not {type(value).__name__}")
        return [_to_wit(value_type.element, item, f"{name}[{i}]") for i, item in enumerate(value)]
    if isinstance(value_type, wc.Bool) and not isinstance(value, bool):
        # wasmtime-py would raise its own TypeError from inside the call.
        raise MnemeError("invalid-argument", f"{name} must be True or False, not {type(value).__name__}")
    if type(value_type) in _INTEGERS:
        low, high = _INTEGERS[type(value_type)]
        return _int(name, value, low, high)
    if isinstance(value_type, wc.EnumType):
        case = value.replace("_", "-") if isinstance(value, str) else value
        if case not in value_type.names:
            # wasmtime-py would raise its own error from inside the call.
            choices = ", ".join(name.replace("-", "_") for name in value_type.names)
            raise MnemeError("invalid-argument", f"{name}: {value!r} is not one of {choices}")
        return case
    if isinstance(value_type, (wc.F32, wc.F64)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise MnemeError("invalid-argument", f"{name} must be a number, not {type(value).__name__}")
        # JSON writes 1.0 as 1; a float type takes only floats.
        return float(value)
    if isinstance(value_type, wc.String):
        if not isinstance(value, str):
            raise MnemeError("invalid-argument", f"{name} must be a string, not {type(value).__name__}")
        return _prose(name, value)
    if isinstance(value_type, wc.VariantType) and _is_data(value_type):
        return _data_to_wit(value, name)
    if isinstance(value_type, (wc.VariantType, wc.ResultType)):
        # `{"case": payload}`, or `"case"` for a case without one.
        cases = dict(_cases(value_type))
        choices = ", ".join(_snake(case) for case in cases)
        if isinstance(value, dict) and len(value) != 1:
            raise MnemeError("invalid-argument", f"{name} must be one of {choices}, as {{case: value}}: {sorted(value)} are {len(value)}")
        tag, payload = next(iter(value.items())) if isinstance(value, dict) else (value, None)
        tag = tag.replace("_", "-") if isinstance(tag, str) else tag
        if tag not in cases:
            raise MnemeError("invalid-argument", f"{name}: {tag!r} is not one of {choices}")
        payload_type = cases[tag]
        lowered = None if payload_type is None else _to_wit(payload_type, payload, f"{name}.{_snake(tag)}")
        return Variant(tag, lowered) if value_type._tagged() else lowered
    return value


def _parse_many(text):
    """``json.loads`` of a document of many objects (a session's entries or items),
    with the cycle collector paused: the parse makes no reference cycle, and the
    passes its new objects set off walk every live object of the process (they made
    loads of 10,000 entries take from 30 to over 60 ms, by what else was alive). The
    collector is the process's: a ``gc.disable()`` another thread makes meanwhile is
    undone when the parse ends; one made before it is kept."""
    if not gc.isenabled():
        return json.loads(text)
    gc.disable()
    try:
        return json.loads(text)
    finally:
        gc.enable()


# The WIT types whose values `_from_wit` changes; any other comes as it is.
_CONVERTED = (wc.RecordType, wc.OptionType, wc.ListType, wc.EnumType, wc.VariantType)


def _from_wit(value_type, value):
    """A wasmtime-py value of ``value_type`` as mneme-core's JSON."""
    if isinstance(value_type, wc.RecordType):
        return {_snake(name): _from_wit(field_type, getattr(value, name)) for name, field_type in value_type.fields}
    if isinstance(value_type, wc.OptionType):
        return None if value is None else _from_wit(value_type.payload, value)
    if isinstance(value_type, wc.ListType):
        # A list whose items come as they are (a transcript's lines) is not copied.
        if isinstance(value, bytes) or not isinstance(value_type.element, _CONVERTED):
            return value
        return [_from_wit(value_type.element, item) for item in value]
    if isinstance(value_type, wc.EnumType):
        return _snake(value)
    if isinstance(value_type, wc.VariantType):
        if _is_data(value_type):
            return _data_from_wit(value)
        tag, payload = _case_of(value_type, value)
        payload_type = dict(_cases(value_type))[tag]
        return _snake(tag) if payload_type is None else {_snake(tag): _from_wit(payload_type, payload)}
    return value


def _is_data(variant_type):
    return [name for name, _ in variant_type.cases] == ["text", "bytes"]


class _DataText(str):
    """Bytes of the WIT's `data` crossing as their text, which the call only reads (a
    transcript to check, an embedding table): they do not come out of the component
    again (see `_echo_size`)."""

    __slots__ = ()


class _WrittenData(_DataText):
    """`_DataText` the call writes to storage (a transcript to import, OpenClaw keys):
    it comes out of the component once, in a storage call."""

    __slots__ = ()


def _data_to_wit(value, name, written=False):
    """Bytes (or text) as the WIT's `data`, which wasmtime-py passes untagged: text where
    they are UTF-8, as wasmtime-py copies a string in one piece and a byte list as 32
    bytes a byte (and caps what comes out of the component at 128 MiB of those).
    ``written``: the call writes them to storage."""
    if isinstance(value, _DataText):
        return value
    text = _WrittenData if written else _DataText
    if isinstance(value, str):
        # Refused here, not while the call is lowered (which would take the instance down).
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as error:
                raise MnemeError("invalid-argument", f"{name} holds a lone surrogate at character {error.start}: it cannot be written as UTF-8") from None
        return text(value)
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise MnemeError("invalid-argument", f"{name} must be str or bytes, not {type(value).__name__}")
    try:
        return text(value, "utf-8")
    except UnicodeDecodeError:
        return bytes(value)


def _data_from_wit(value):
    """The WIT's `data` as bytes, however it crossed."""
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


# --- The component ------------------------------------------------------------------

_ENGINE = wasmtime.Engine()
_COMPILED = {}


def _component(path):
    """The component at ``path``, compiled once per process and cached on disk (by its
    bytes' hash) so later processes skip compiling it."""
    if path in _COMPILED:
        return _COMPILED[path]
    with open(path, "rb") as file:
        data = file.read()
    cache_dir = os.environ.get("MNEME_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "mneme")
    # Keyed by wasmtime's version too: another version cannot load what this one wrote.
    cached = os.path.join(cache_dir, f"python-{_wasmtime_version()}-{hashlib.sha256(data).hexdigest()[:32]}.cwasm")
    component = None
    if os.path.exists(cached):
        try:
            component = wc.Component.deserialize_file(_ENGINE, cached)
        except wasmtime.WasmtimeError:
            component = None
        else:
            # Marked used: pruning keeps the newest, and the one in use is among them.
            try:
                os.utime(cached)
            except OSError:
                pass
    if component is None:
        component = wc.Component(_ENGINE, data)
        try:
            os.makedirs(cache_dir, exist_ok=True)
            partial = f"{cached}.{os.getpid()}"
            with open(partial, "wb") as file:
                file.write(component.serialize())
            os.replace(partial, cached)
            _prune(cache_dir)
        except OSError:
            pass
    _COMPILED[path] = component
    return component


def _wasmtime_version():
    try:
        return importlib.metadata.version("wasmtime")
    except importlib.metadata.PackageNotFoundError:
        # Vendored without its metadata: the cache then relies on wasmtime's own check.
        return "unknown"


def _prune(cache_dir, keep=3):
    """Removes all but the ``keep`` newest compiled components (each build of the
    component, each wasmtime version left one, ~8 MB apiece)."""
    compiled = [os.path.join(cache_dir, name) for name in os.listdir(cache_dir) if name.startswith("python-") and name.endswith(".cwasm")]
    compiled.sort(key=os.path.getmtime, reverse=True)
    for stale in compiled[keep:]:
        try:
            os.unlink(stale)
        except OSError:
            pass


def _default_component():
    """The component the wheel ships beside this file; in a checkout of the
    repository, the one the release build leaves in target/. ``MNEME_COMPONENT``
    names another."""
    chosen = os.environ.get("MNEME_COMPONENT")
    if chosen:
        if not os.path.exists(chosen):
            raise MnemeError("invalid-argument", f"no Mneme component at {chosen}, where MNEME_COMPONENT points: unset it to use the one the package ships")
        return chosen
    shipped = os.path.join(_HERE, "mneme.component.wasm")
    if os.path.exists(shipped):
        return shipped
    built = os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(_REPO, "target"), "mneme.component.wasm")
    if not os.path.exists(built):
        raise MnemeError(
            "invalid-argument",
            f"no Mneme component beside the package ({shipped}) or in the repository's build ({built}): install the wheel (`cargo xtask package` builds it), or run `cargo build --release -p mneme-host` in the repository",
        )
    return built


def _serve(storage, interrupted, landed):
    """The ``storage`` import's functions over ``storage``. A failure goes back as the
    ``storage-error`` variant, which is the import result's (untagged) error case. A
    KeyboardInterrupt or SystemExit goes back as an I/O failure too (escaping an import,
    it would trap the instance) and is kept in ``interrupted``, to be raised once the
    component has returned. The key of each write that landed is added to ``landed``."""

    def call(method, convert=lambda value: value):
        def run(_store, *args):
            try:
                return convert(method(*args))
            except StorageFailure as failure:
                tag, payload = failure.tag, failure.payload
            except Exception as error:  # noqa: BLE001 - anything else escaping an import would trap the instance
                tag, payload = "io", {"key": str(args[0]) if args else "", "message": f"{type(error).__name__}: {error}"}
            except BaseException as stop:
                interrupted.append(stop)
                tag, payload = "io", {"key": str(args[0]) if args else "", "message": f"interrupted ({type(stop).__name__})"}
            if isinstance(payload, dict):
                record = Record()
                for name, field in payload.items():
                    setattr(record, name, field)
                payload = record
            return Variant(tag, payload)

        return run

    def listing(items):
        records = []
        for key, size in items:
            record = Record()
            record.key = key
            record.size = size
            records.append(record)
        return records

    # An object's bytes cross as the WIT's `data`; a storage reads and writes bytes.
    def data(read):
        return _data_to_wit(read, "the storage's read")

    def writing(method, takes_data=False, keys=1):
        def write(key, *rest):
            if takes_data:
                given, *rest = rest
                rest = [_data_from_wit(given), *rest]
            done = method(key, *rest)
            landed.extend([key, *rest][:keys])
            return done

        return write

    return {
        "wants-text": lambda _store: True,
        "list": call(storage.list, listing),
        "read": call(storage.read, data),
        "append": call(writing(storage.append, takes_data=True)),
        "replace": call(writing(storage.replace, takes_data=True)),
        "truncate": call(writing(storage.truncate)),
        "remove": call(writing(storage.remove)),
        "rename": call(writing(storage.rename, keys=2)),
        "lock": call(storage.lock),
        "unlock": call(storage.unlock),
    }


class _Instance:
    """One instance of the component, its storage imports served by ``storage``. Calls
    take turns (an instance runs one call at a time; two threads at once corrupted it).
    A trap leaves it ``dead``: wasmtime enters it no more."""

    def __init__(self, storage, component_path):
        self.store = wasmtime.Store(_ENGINE)
        self.interrupted = []
        self.landed = []
        self.turn = threading.RLock()
        self.dead = False
        linker = wc.Linker(_ENGINE)
        with linker.root() as root:
            with root.add_instance(_STORAGE) as imports:
                for name, function in _serve(storage, self.interrupted, self.landed).items():
                    _wasmtime.add_func(imports, name, function)
        self.instance = linker.instantiate(self.store, _component(component_path))
        self.functions = {}

    def _run(self, signature, args):
        """Calls the function of ``signature`` (as ``function`` gives it); a trap becomes a
        MnemeError, an interruption in a storage call is raised once the component has
        returned."""
        if self.dead:
            raise MnemeError("trapped", "another call trapped the component while this one waited; nothing of this one ran: call it again")
        function, _, result_type, kinds = signature
        self.landed.clear()
        try:
            result = _wasmtime.call(function, self.store, kinds, result_type, args)
            function.post_return(self.store)
        except wasmtime.WasmtimeError as error:
            self.dead = True
            self.interrupted.clear()
            done = (
                f"writes to {', '.join(sorted(set(self.landed)))} had landed before it stopped"
                if self.landed
                else "nothing of it had been written"
            )
            if "hostcalls has been exhausted" in str(error):
                raise MnemeError(
                    "too-large",
                    "the component stopped the call partway: its answer or a storage call's data was more than "
                    "wasmtime-py takes from it at once (128 MiB, or 2.5 MB as a list of bytes; wasmtime-py 50 gives no "
                    f"way to raise that); {done}. Read or write such a session with the mneme CLI or the Node package",
                ) from None
            raise MnemeError("trapped", f"the Mneme component trapped; the rest of the call's work is lost ({done}): {error}") from None
        except BaseException:
            # wasmtime-py re-raises what escaped a host function (a storage returning a
            # value of the wrong type): the instance trapped all the same.
            self.dead = True
            self.interrupted.clear()
            raise
        if self.interrupted:
            raise self.interrupted.pop()
        return result

    def function(self, interface, name):
        key = (interface, name)
        if key not in self.functions:
            parent = self.instance.get_export_index(self.store, interface)
            index = self.instance.get_export_index(self.store, name, parent)
            function = self.instance.get_func(self.store, index)
            params, param_types, result = _wasmtime.signature(function.type(self.store))
            self.functions[key] = (function, params, result, param_types)
        return self.functions[key]

    def raw(self, interface, name, *args):
        """Calls with wasmtime-py values; returns its value as is."""
        with self.turn:
            return self._run(self.function(interface, name), args)

    def call(self, interface, name, *args):
        """Calls with mneme-core's JSON (resources as they are); returns JSON, or raises
        MnemeError for an ``err``."""
        with self.turn:
            signature = self.function(interface, name)
            _, params, result_type, _ = signature
            lowered = [arg if isinstance(arg, wc.ResourceAny) else _to_wit(t, arg, _snake(n)) for (n, t), arg in zip(params, args)]
            echoed = _echo_size(lowered)
            if echoed > _ANSWER_LIMIT:
                # The component would write it, then trap handing the answer back.
                raise MnemeError(
                    "too-large",
                    f"the call's text, as written and as itself, comes to {echoed / 2**20:.0f} MiB: it could leave the "
                    "component in one piece that large (an entry's answer, a line holding an item), past the 128 MiB "
                    "wasmtime-py takes from it at once (it gives no way to raise that); nothing was written. Keep such "
                    "data out of the store (a path to it instead), or write it with the mneme CLI or the Node package",
                )
            result = self._run(signature, lowered)
            if isinstance(result_type, wc.ResultType):
                tag, payload = _case_of(result_type, result)
                if tag == "err":
                    explained = self.raw(_SESSIONS, "explain", payload)
                    raise MnemeError(explained.kind, explained.message, json.loads(explained.details))
                return None if result_type.ok is None else _from_wit(result_type.ok, payload)
            return None if result_type is None else _from_wit(result_type, result)


# wasmtime-py takes at most 128 MiB out of the component at once (a storage call's data,
# an answer), and gives no way to raise that. A call's text can leave it twice in one of
# them: an appended entry comes back as its line and its text, a line holds an item and
# the message made of it. So a call's text may come to at most half of this.
_ANSWER_LIMIT = 120 * 2**20


def _echo_size(value):
    """What the text in the wasmtime-py value ``value`` may come to leaving the
    component: as written in a line (its UTF-8, JSON-escaped) and as itself. Bytes the
    call only reads (an embedding table, a transcript to check) do not leave it again;
    a transcript to import leaves it once, written to storage."""
    if isinstance(value, _WrittenData):
        return len(value) if value.isascii() else len(value.encode("utf-8"))
    if isinstance(value, _DataText):
        return 0
    if isinstance(value, str):
        size = len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
        if size < 2**20:
            return 2 * size
        return size + len(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if isinstance(value, (list, tuple)):
        return sum(_echo_size(item) for item in value)
    if isinstance(value, Record):
        return sum(_echo_size(field) for field in vars(value).values())
    if isinstance(value, Variant):
        return _echo_size(value.payload)
    return 0


_tools = None


def _utility():
    """An instance for calls that need no store (``check_bytes``); its storage refuses everything."""
    global _tools
    if _tools is None:

        class Refusing:
            def __getattr__(self, operation):
                def refuse(key, *_):
                    raise StorageFailure("io", {"key": str(key), "message": f"no storage behind {operation}"})

                return refuse

        _tools = _Instance(Refusing(), _default_component())
    return _tools


def _now():
    return int(time.time() * 1000)


# Milliseconds from here to the window's end are 1970-01-12 to 1973-03-03, a time no
# agent writes; in seconds they are 2001 to 5138: an `int(time.time())` passed as is.
_SECONDS_WINDOW = (10**9, 10**11)


def _now_ms(now, name="now"):
    """A time argument: milliseconds since the epoch (an int), or a ``datetime`` (one
    without a time zone is taken as local time, as Python does); None: the clock."""
    if now is None:
        return _now()
    if isinstance(now, datetime.datetime):
        return _int(name, int(now.timestamp() * 1000))
    if isinstance(now, float):
        raise MnemeError("invalid-argument", f"{name} is {now!r}, a float: give milliseconds as an int (time.time_ns() // 1_000_000) or a datetime")
    if isinstance(now, int) and not isinstance(now, bool) and _SECONDS_WINDOW[0] <= now < _SECONDS_WINDOW[1]:
        raise MnemeError("invalid-argument", f"{name} is {now}, which reads as seconds since the epoch: give milliseconds (time.time_ns() // 1_000_000) or a datetime")
    return _int(name, now)


def _window(since, until):
    """A time window from its ends (each a time as ``now`` takes it, or None: open)."""
    return {"since_ms": None if since is None else _now_ms(since, "since"), "until_ms": None if until is None else _now_ms(until, "until")}


def _text(name, value):
    """A string argument: an id, a key, a path. A lone surrogate (bytes decoded with
    `surrogateescape`) has no UTF-8 form, and replaced it would make two names one."""
    if not isinstance(value, str):
        raise MnemeError("invalid-argument", f"{name} must be a string, not {type(value).__name__}")
    lone = _LONE_SURROGATE.search(value)
    if lone:
        raise MnemeError("invalid-argument", f"{name} has a lone surrogate (U+{ord(lone.group()):04X}) at {lone.start()}, which no UTF-8 text holds: decode it without surrogateescape")
    return value


def _cwd(value):
    """A working directory: its project is named after the absolute path (as Claude
    Code names it), so a relative one is taken from the current directory, as the
    CLI takes it. A path object is taken as its text."""
    if value is None:
        return ""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    return _text("cwd", os.path.abspath(value) if isinstance(value, str) and value and not os.path.isabs(value) else value)


def _prose(name, value):
    """A message's words: a lone surrogate (text cut inside an emoji through UTF-16,
    bytes decoded with `surrogateescape`) becomes U+FFFD, as the core makes one escaped
    in a turn's JSON, and as Node's and the browsers' encoders do."""
    if not isinstance(value, str):
        raise MnemeError("invalid-argument", f"{name} must be a string, not {type(value).__name__}")
    return value if value.isascii() else _LONE_SURROGATE.sub("\ufffd", value)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _optional_text(name, value):
    return None if value is None else _text(name, value)


def _json_value(text):
    """What a function gives as WIT's `json`, as the value it holds; None as None."""
    return None if text is None else _parse_many(text)


def _fresh_id(value):
    """An id for what a call creates (WIT's `fresh-id`): a random UUID when None."""
    return str(uuids.uuid4()) if value is None else value


def _json(name, value):
    """``value`` as JSON text, compact and with its non-ASCII text as written, as Claude
    Code and JavaScript write it (escaped, an 'é' is six bytes of a stored line). A lone
    surrogate (what json.loads makes of a `\\ud83d` Claude Code writes when it cuts an
    emoji in two) has no UTF-8 form, so it stays an escape. A value json.dumps cannot
    write is a refusal."""
    try:
        # NaN and infinities are no JSON: refused here, by name, not as a parse error.
        text = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        raise MnemeError("invalid-argument", f"{name} cannot be written as JSON: {error}") from None
    # The ASCII test costs nothing next to the pattern's scan (12 µs a 6 KB batch).
    return text if text.isascii() else _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def _texts(name, value):
    if not isinstance(value, (list, tuple)):
        raise MnemeError("invalid-argument", f"{name} must be a list of strings, not {type(value).__name__}")
    return [_text(f"{name}[{i}]", item) for i, item in enumerate(value)]


def _int(name, value, low=-(2**63), high=2**63 - 1):
    """A whole number within its WIT type (a time is an s64), never wrapped."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise MnemeError("invalid-argument", f"{name} must be a whole number, not {type(value).__name__}")
    if not low <= value <= high:
        raise MnemeError("invalid-argument", f"{name} is {value}: give a whole number from {low} to {high}")
    return value


def _u64(name, value):
    return _int(name, value, 0, 2**64 - 1)


def _u32(name, value):
    return _int(name, value, 0, 2**32 - 1)


def _flag(name, value):
    if not isinstance(value, bool):
        raise MnemeError("invalid-argument", f"{name} must be True or False, not {type(value).__name__}")
    return value


def _scope(project):
    """A memory scope: a project's folder name, or None for the global memory."""
    return "global" if project is None else {"project": _text("project", project)}


def _record(name, value, defaults=None):
    """``value`` with ``defaults`` for what it leaves out. The fields it may have are the
    WIT record's: ``_to_wit`` refuses any other, as the core's JSON does."""
    if not isinstance(value, dict):
        raise MnemeError("invalid-argument", f"{name} must be a dict, not {type(value).__name__}")
    return {**(defaults or {}), **value}


_NO_LINKS = {"relates_to": [], "contradicts": [], "extends": [], "derived_from": []}


def _new_memory(memory):
    """A memory to write, with the defaults of what it may leave out; a partial
    ``links`` is completed."""
    memory = _record("memory", memory, {"description": "", "body": "", "topics": []})
    links = memory.get("links")
    return {**memory, "links": _record("memory.links", {} if links is None else links, _NO_LINKS)}


def _overlay(defaults, given, name):
    """The core's defaults (as JSON) overlaid with what the caller set in argument ``name``."""
    if given is None:
        return defaults
    if not isinstance(given, dict):
        raise MnemeError("invalid-argument", f"{name} must be a dict, not {type(given).__name__}")
    # A misspelt field (`ttl_days` for `ttl_ms`) would leave its default silently in force.
    unknown = [key for key in given if key not in defaults]
    if unknown:
        raise MnemeError("invalid-argument", f"{name}: unknown field `{unknown[0]}`: use {', '.join(defaults)}")
    return {**defaults, **given}


class Mneme:
    """A store in the folder ``root`` (created on the first write).

    ``durability``: "fsync" (default; an acknowledged write survives a power cut) or
    "buffered". ``read_only``: refuse every write. ``storage``: a storage of your own
    with FsStorage's methods; its ``close`` (optional) gives back every lock it holds,
    and the storage is used again after it when an instance that trapped is replaced. ``part_bytes`` / ``total_bytes``: size limits (0: the
    core's defaults)."""

    def __init__(self, root: Optional[Folder] = None, *, storage: Any = None, part_bytes: int = 0, total_bytes: int = 0, lock_timeout_ms: int = 30_000, durability: str = "fsync", read_only: bool = False, component: Any = None) -> None:
        if storage is None:
            if not isinstance(root, (str, os.PathLike)):
                raise MnemeError("invalid-argument", "Mneme needs root, the store's folder (or a storage)")
            try:
                storage = FsStorage(os.fspath(root), durability=durability, lock_timeout_ms=lock_timeout_ms, read_only=read_only)
            except ValueError as error:
                raise MnemeError("invalid-argument", str(error)) from None
        self.storage = storage
        self._component = component or _default_component()
        self._live = _Instance(storage, self._component)
        defaults = self._live.call(_SESSIONS, "default-limits")
        self._limits = {"part_bytes": _u64("part_bytes", part_bytes) or defaults["part_bytes"], "total_bytes": _u64("total_bytes", total_bytes) or defaults["total_bytes"]}
        self._handle = self._live.call(_SESSIONS, "[constructor]store", self._limits)
        # Set again on the instance that replaces one that trapped.
        self._redaction = None
        self._embeddings = None
        self._reviving = threading.Lock()

    @property
    def _instance(self):
        if self._live.dead and self._handle is not None:
            with self._reviving:
                # Another thread may have revived it while this one waited.
                if self._live.dead:
                    self._revive()
        return self._live

    def _revive(self):
        """A new instance in place of one that trapped (its error was raised by the call
        that trapped): the locks the dead one held are given back, so the sessions it
        held are released, and what was set on it is set again."""
        close = getattr(self.storage, "close", None)
        if close:
            close()
        self._live = _Instance(self.storage, self._component)
        self._handle = self._live.call(_SESSIONS, "[constructor]store", self._limits)
        if self._redaction is not None:
            self._live.call(_SESSIONS, "[method]store.set-redaction", self._handle, self._redaction)
        if self._embeddings is not None:
            self._live.call(_MEMORY, "set-embeddings", self._handle, self._embeddings)

    @property
    def _store(self):
        if self._handle is None:
            raise MnemeError("invalid-argument", "this store is closed: open it again (Mneme(root))")
        return self._handle

    def _method(self, name, *args):
        return self._instance.call(_SESSIONS, f"[method]store.{name}", self._store, *args)

    def close(self) -> None:
        """Gives back the sessions it holds and the locks its storage took."""
        try:
            if self._handle is not None and not self._live.dead:
                self._handle.drop(self._live.store)
            self._handle = None
        finally:
            close = getattr(self.storage, "close", None)
            if close:
                close()

    def __enter__(self) -> "Mneme":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # Sessions

    def append(self, id: str, role: str, text: str, cwd: Optional[Folder] = None, uuid: Optional[str] = None, now: Time = None) -> Entry:
        """Appends a message. ``cwd``, the agent's working directory, files a new
        session under its project (a new session needs one); None: a line names the
        session's own."""
        entry = {"uuid": _text("uuid", str(uuids.uuid4()) if uuid is None else uuid), "now_ms": _now_ms(now), "role": _text("role", role), "text": _prose("text", text), "cwd": _cwd(cwd)}
        return self._method("append", _text("id", id), entry)

    def append_turn(self, id: str, messages: Union[Json, Sequence[Json]], provider: str = "anthropic", cwd: Optional[Folder] = None, uuid: Optional[str] = None, now: Time = None, parent: Optional[str] = None, agent: Optional[Json] = None) -> List[Entry]:
        """Appends a turn in one write (all of it or nothing): one message or a list,
        in Anthropic's shape or OpenAI's (``provider="openai"``). ``parent`` rewinds;
        ``agent={"id": …, "parent_call": …}`` writes into that sub-agent's transcript.
        ``cwd`` as for ``append``."""
        turn = {
            "uuid": _text("uuid", str(uuids.uuid4()) if uuid is None else uuid),
            "now_ms": _now_ms(now),
            "cwd": _cwd(cwd),
            "provider": _text("provider", provider),
            "messages": _json("messages", messages),
            "parent": _optional_text("parent", parent),
            "agent": agent,
        }
        return self._method("append-turn", _text("id", id), turn)

    def provider_context(self, id: str, provider: str = "anthropic", injections: Sequence[Json] = (), model: Optional[str] = None) -> ProviderContext:
        """What to send a model next: ``{provider, body, message_count, compacted, tokens,
        interrupted}``; ``body`` is the request (a dict), ready to extend with the model and tools.

        ``model``, the model the request goes to: the thinking of replies another model
        wrote is then sent as the session's client sends it (Claude Code's sessions: left
        out; pi's: as text), since the API refuses its signature."""
        model = None if model is None else _text("model", model)
        if not isinstance(injections, (list, tuple)):
            raise MnemeError("invalid-argument", f"injections must be a list of dicts, not {type(injections).__name__}")
        context = self._method("provider-context", _text("id", id), _text("provider", provider), model, injections)
        return {**context, "body": json.loads(context["body"])}

    def import_session(self, data: Union[bytes, str], from_: Optional[str] = None, id: Optional[str] = None, cwd: Optional[Folder] = None, origin: str = "", uuid: Optional[str] = None, now: Time = None) -> Imported:
        """Imports another agent's transcript (``data``: its bytes or text) as a new
        session; the original is only read. ``from_`` is ``claude``, ``pi``, ``codex``,
        ``gemini`` or ``openai`` (None: told from the content); ``id`` and ``cwd`` default
        to the transcript's own; ``origin`` (its path) is recorded in the new session.
        An id already taken raises ``session-exists``."""
        request = {
            "data": _data_to_wit(data, "data", written=True),
            "source": None if from_ is None else _text("from_", from_),
            "id": None if id is None else _text("id", id),
            "cwd": None if cwd is None else _cwd(cwd),
            "origin": _text("origin", origin),
            "uuid": _text("uuid", str(uuids.uuid4()) if uuid is None else uuid),
            "now_ms": _now_ms(now),
        }
        imported = self._method("import-session", request)
        return {**imported, "provenance": json.loads(imported["provenance"])}

    def context(self, id: str) -> Context:
        """What a model resumes with: ``{compacted, messages}``, the main chain from the
        last compaction on; each message's ``content`` is its blocks."""
        context = self._method("context", _text("id", id))
        return {**context, "messages": [{**m, "content": json.loads(m["content"])} for m in context["messages"]]}

    def append_items(self, id: str, items: Sequence[Json], cwd: Optional[Folder] = None, uuid: Optional[str] = None, now: Time = None) -> int:
        """Appends OpenAI Responses API items (what the OpenAI Agents SDK keeps in a
        session) to session ``id`` in one write, a line each in Claude Code's format with
        the item kept as given; a new session is filed under the project of ``cwd``.
        Returns how many were written."""
        if not isinstance(items, (list, tuple)):
            raise MnemeError("invalid-argument", f"items must be a list of item dicts, not {type(items).__name__}")
        return self._method("append-items", _text("id", id), _json("items", list(items)), _cwd(cwd), _text("uuid", str(uuids.uuid4()) if uuid is None else uuid), _now_ms(now))

    def set_redaction(self, kinds: Sequence[str]) -> None:
        """The kinds of secret taken out of every line and memory file before it is
        written (every kind by default; ``[]`` writes text as given)."""
        kinds = _texts("kinds", kinds)
        self._method("set-redaction", kinds)
        self._redaction = kinds

    # Compaction

    def _compaction(self, name, *args):
        return self._instance.call(_COMPACTION, name, self._store, *args)

    def apply_compaction(self, id: str, plan: Json, summary: str, boundary: Optional[str] = None, summary_uuid: Optional[str] = None, now: Time = None) -> Applied:
        """Applies ``plan`` with ``summary`` (the model's text) in one atomic write;
        ``{format, action, boundary_uuid, summary_uuid, tokens_before, tokens_after}``.
        A session changed since the plan raises ``stale-plan``: plan again."""
        ids = {"boundary": str(uuids.uuid4()) if boundary is None else boundary, "summary": str(uuids.uuid4()) if summary_uuid is None else summary_uuid}
        return self._compaction("apply-compaction", _text("id", id), plan, _text("summary", summary), ids, _now_ms(now))

    def compact(self, id: str, settings: Optional[Json] = None, mode: str = "auto", summarize: Optional[Callable[[str, int], str]] = None, boundary: Optional[str] = None, summary_uuid: Optional[str] = None, now: Time = None) -> Json:
        """One compaction through the core's driver (the component's ``run``): plan;
        have ``summarize(prompt, max_tokens)`` answer each request (or the offline
        summary without it); apply; or record the failure (an exception or an empty
        answer). Returns ``{plan, applied, failure}``: both None when nothing was
        compacted (not due, nothing to summarise, or blocked), and ``plan["blocked"]``
        or ``plan["reason"]`` says why."""
        plan = self.plan_compaction(id, settings, mode)
        instance = self._instance
        run = instance.call(_COMPACTION, "[constructor]run", plan)
        applied = None
        try:
            while True:
                step = self._instance.call(_COMPACTION, "[method]run.next", run)
                kind = step if isinstance(step, str) else next(iter(step))
                if kind == "summarize":
                    request = step["summarize"]
                    if summarize is None:
                        try:
                            answer = {"ok": self.summarize_offline(id, plan)}
                        except MnemeError as error:
                            answer = {"err": str(error)}
                        self._instance.call(_COMPACTION, "[method]run.answer-all", run, answer)
                        continue
                    try:
                        text = summarize(request["prompt"], request["max_tokens"])
                        answer = {"ok": text} if isinstance(text, str) else {"err": "the summariser answered with something other than text"}
                    except Exception as error:  # noqa: BLE001 - any failure of the caller's summariser is recorded, as the core expects
                        answer = {"err": str(error)}
                    self._instance.call(_COMPACTION, "[method]run.answer", run, answer)
                elif kind == "apply":
                    applied = self.apply_compaction(id, plan, step["apply"], boundary, summary_uuid, now)
                    self._instance.call(_COMPACTION, "[method]run.finish", run)
                elif kind == "record_failure":
                    self.record_compaction_failure(id, step["record_failure"], now)
                    self._instance.call(_COMPACTION, "[method]run.finish", run)
                else:
                    break
            return {"plan": plan, "applied": applied, "failure": self._instance.call(_COMPACTION, "[method]run.failure", run)}
        finally:
            # A run belongs to the instance that made it; a trapped one is gone with it.
            if not instance.dead:
                run.drop(instance.store)

    # Gates

    def _gate(self, name, *args):
        return self._instance.call(_GATES, name, self._store, *args)

    # Long-term memory: ``project`` is a project's folder name (as Claude Code names it,
    # e.g. "-home-me-app"), or None for the global memory. Values are mneme-core's JSON.

    def _memory(self, name, project, *args):
        return self._instance.call(_MEMORY, name, self._store, _scope(project), *args)

    def memory_add(self, project: Optional[str], memory: Json, now: Time = None) -> Memory:
        """Writes ``{name, type, description, body, topics?, links?, confidence?, session?, entry?, valid_from_ms?}``."""
        return self._memory("memory-add", project, _new_memory(memory), _now_ms(now))

    def memory_add_many(self, project: Optional[str], memories: Sequence[Json], now: Time = None) -> List[Memory]:
        """Writes many memories with one index write (bulk import)."""
        if not isinstance(memories, (list, tuple)):
            raise MnemeError("invalid-argument", "memories must be a list")
        return self._memory("memory-add-many", project, [_new_memory(m) for m in memories], _now_ms(now))

    def memory_supersede(self, project: Optional[str], file: str, memory: Json, now: Time = None) -> Memory:
        """Writes ``memory``, then marks ``file`` invalid and superseded by it; both are kept."""
        return self._memory("memory-supersede", project, _text("file", file), _new_memory(memory), _now_ms(now))

    def memory_list(self, project: Optional[str], filter: Optional[Json] = None, since: Time = None, until: Time = None) -> List[Memory]:
        """Memories without their bodies, newest first; ``filter``: ``{type?, topic?,
        session?, all?}``. ``since`` (included) and ``until`` (left out) bound when the
        memories hold from, as ``memory_recall``'s."""
        filter = _record("filter", filter or {}, {"all": False})
        if since is not None or until is not None:
            filter = {**filter, "window": _window(since, until)}
        return self._memory("memory-list", project, filter)

    def memory_recall(
        self,
        project: Optional[str],
        query: str,
        limit: int = 10,
        all: bool = False,
        since: Time = None,
        until: Time = None,
        near: Optional[Near] = None,
        embed: Optional[Callable[[List[str]], Sequence[Sequence[float]]]] = None,
        model: Optional[str] = None,
    ) -> Recalled:
        """``{hits: [{file, name, description, type, score, current, matched}], report}``,
        best first; ``matched`` is False for a memory found only through the memories
        around it (its session's neighbouring turns, its links). ``since`` (included)
        and ``until`` (left out) bound when the memories hold from. With the host's
        embedder, ``embed(texts)`` (one vector per text) of ``model``: the scope's
        memories without a vector of ``model`` are embedded first (the vectors kept
        beside the recall index), then the query, and memories rank by meaning too;
        ``near`` (``{"model", "vector"}``) gives the query's vector itself."""
        if embed is not None:
            if near is not None:
                raise MnemeError("invalid-argument", "give near or embed, not both: embed makes the query's vector")
            near = self._embed_all(project, query, embed, model)
        return self._memory("memory-recall", project, _text("query", query), _u32("limit", limit), _flag("all", all), _window(since, until), near)

    def _embed_all(self, project, query, embed, model) -> Near:
        """Has ``embed`` embed every memory of the scope with no vector of ``model``,
        then ``query``: the query's ``near``."""
        if not callable(embed):
            raise MnemeError("invalid-argument", "embed must be a function from texts to their vectors")
        if not isinstance(model, str) or not model.strip():
            raise MnemeError("invalid-argument", "name the embedder's model (model=\"…\"): vectors are kept by it")

        def vectors_of(texts):
            vectors = embed(texts)
            # Lists, tuples or arrays (numpy's, from sentence-transformers): anything
            # with a length whose items are numbers.
            if isinstance(vectors, (str, bytes)) or not hasattr(vectors, "__len__") or len(vectors) != len(texts):
                raise MnemeError("invalid-argument", f"embed gave {type(vectors).__name__} for {len(texts)} texts: give one vector per text, in order")
            try:
                return [[float(value) for value in vector] for vector in vectors]
            except (TypeError, ValueError) as error:
                raise MnemeError("invalid-argument", f"embed gave a vector that is not numbers: {error}") from None

        # A memory planned again after its vector was given (written again meanwhile)
        # is left for the next recall: this one goes on rather than plan forever.
        given = set()
        while True:
            plan = self.plan_embedding(project, model)
            if not plan["files"] or given.intersection(plan["files"]):
                break
            if self.apply_embedding(project, plan, vectors_of(plan["texts"])) == 0:
                break
            given.update(plan["files"])
        return {"model": model, "vector": vectors_of([query])[0]}

    def set_embeddings(self, table: Union[str, bytes, bytearray, memoryview, None]) -> Optional[EmbeddingsInfo]:
        """Makes recall and search hybrid with a static embedding table in its text form
        (a word per line, then its values; ``str`` or ``bytes``); ``None``: words alone.
        Kept in memory, never written. ``{words, terms, dimensions, skipped}`` or ``None``."""
        data = None if table is None else _data_to_wit(table, "table")
        info = self._instance.call(_MEMORY, "set-embeddings", self._store, data)
        self._embeddings = data
        return info

    def instructions(self, request: Json) -> LoadedInstructions:
        """The CLAUDE.md files, rules and imports a session in ``request["cwd"]`` starts
        with, from the files kept in the store: ``{text, files}``. ``request`` is
        ``{cwd, home, managed?, paths?, external_imports?}``: imports outside ``cwd`` that a
        managed, project or local file makes load only with ``external_imports`` true (the
        user's approval); each is listed with ``external`` true."""
        request = _record("request", request, {"paths": [], "external_imports": False})
        return self._instance.call(_MEMORY, "instructions", self._store, request)

    # --- The session index ---------------------------------------------------------

    def _route_policy(self, policy):
        """The core's default route policy, with each field given replacing the default's;
        a ``reset`` given is whole (what it leaves out is off)."""
        off = {"idle_minutes": None, "daily_reset_hour": None, "utc_offset_minutes": 0, "ttl_ms": None}
        given = _record("policy", policy or {})
        merged = {**self._instance.call(_INDEX, "default-route-policy"), **given}
        if "reset" in given:
            merged["reset"] = {**off, **given["reset"]}
        overrides = [_record(f"overrides[{i}]", o, {"policy": {}}) for i, o in enumerate(given.get("overrides", []))]
        merged["overrides"] = [{**o, "policy": {**off, **o["policy"]}} for o in overrides]
        return merged

    @staticmethod
    def _inbound(inbound):
        return _record("inbound", inbound, {"chat_type": "direct", "text": "", "origin": {}, "metadata": []})

    def resolve(self, inbound: Json, policy: Optional[Json] = None, now: Time = None, new_session_id: Optional[str] = None) -> Resolution:
        """Routes a message: ``{key, session_id, action, reason, previous_session_id, text}``,
        and records it. ``new_session_id`` (a fresh uuid when None) is used only when a new
        session starts."""
        new_id = str(uuids.uuid4()) if new_session_id is None else new_session_id
        return self._instance.call(_INDEX, "resolve", self._store, self._inbound(inbound), self._route_policy(policy),
                                   _now_ms(now), _text("new_session_id", new_id))

    def import_openclaw_keys(self, data: Union[bytes, str]) -> KeysImported:
        """Adds the keys of an OpenClaw ``sessions.json`` (bytes or text) in one write:
        ``{imported, existing, refused}``. Keys the index has are left as they are;
        fields it has no place for are kept in the toggle ``openclaw``."""
        return self._instance.call(_INDEX, "import-openclaw-keys", self._store, _data_to_wit(data, "data", written=True))

    def rollover(self, key: str, summary: str, new_session_id: Optional[str] = None, boundary: Optional[str] = None, summary_uuid: Optional[str] = None, now: Time = None) -> RolledOver:
        """Moves ``key`` to a new session that starts from ``summary`` of its current one,
        in the old session's format and linked to it; the old session is not touched."""
        ids = {"boundary": str(uuids.uuid4()) if boundary is None else boundary, "summary": str(uuids.uuid4()) if summary_uuid is None else summary_uuid}
        new_id = str(uuids.uuid4()) if new_session_id is None else new_session_id
        return self._instance.call(_INDEX, "rollover", self._store, _text("key", key), _text("summary", summary), ids,
                                   _text("new_session_id", new_id), _now_ms(now))

    def key_of(self, inbound: Json, policy: Optional[Json] = None) -> str:
        """The session key of a message (nothing is read or written)."""
        return self._instance.call(_INDEX, "key-of", self._inbound(inbound), self._route_policy(policy))

    def parse_key(self, key: str) -> KeyParts:
        """A session key's parts: ``{chat_type, agent, provider, id, thread}``."""
        return self._instance.call(_INDEX, "parse-key", _text("key", key))

    @staticmethod
    def session_id_of(name: str) -> str:
        """The session id Mneme keeps a session an agent SDK names ``name`` under:
        ``name`` itself if it is an id, else a mapping of it (``user:42`` is
        ``user-42_`` and a hash). No store is read: ``Mneme.session_id_of(name)``
        needs none open."""
        return _utility().call(_SESSIONS, "session-id-of", _text("name", name))

    @staticmethod
    def project_of(cwd: str) -> str:
        """The project of a working directory, as Claude Code names its folder
        (``/home/me/app`` is ``-home-me-app``): what the memory methods' ``project`` takes."""
        return _utility().call(_SESSIONS, "project-of", _text("cwd", cwd))

    @staticmethod
    def check_bytes(data: bytes) -> CheckReport:
        """Checks transcript bytes that are not in a store."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise MnemeError("invalid-argument", f"check_bytes takes bytes, not {type(data).__name__}")
        return _utility().call(_SESSIONS, "check-bytes", data)

    # <operations: written by `cargo xtask codegen` from wit/, each one no method above calls; do not edit>
    def plan_compaction(self, id: str, settings: Optional[Json] = None, mode: Mode = "auto") -> Plan:
        """Plans a compaction of session `id`: when (trigger, circuit breaker, loop
        guard) and what (API rounds, never splitting a tool call from its result,
        keeping at least the recent budget). Writes nothing. `mode` defaults to `auto`.
        """
        return self._instance.call(_COMPACTION, "plan-compaction", self._store, _text("id", id), _overlay(self._instance.call(_COMPACTION, "default-settings"), settings, "settings"), mode)

    def summarize_offline(self, id: str, plan: Json) -> str:
        """A summary of what `plan` summarises, written without a model."""
        return self._instance.call(_COMPACTION, "summarize-offline", self._store, _text("id", id), plan)

    def record_compaction_failure(self, id: str, reason: str, now: Time = None) -> None:
        """Records a failed compaction; `max_failures` in a row block auto plans."""
        return self._instance.call(_COMPACTION, "record-compaction-failure", self._store, _text("id", id), _text("reason", reason), _now_ms(now))

    def memory_flush_gate(self, id: str, settings: Optional[Json] = None) -> Decision:
        """Whether to run the pre-compaction memory flush now (once per compaction cycle)."""
        return self._instance.call(_GATES, "memory-flush-gate", self._store, _text("id", id), _overlay(self._instance.call(_GATES, "default-flush-settings"), settings, "settings"))

    def record_memory_flush(self, id: str, now: Time = None) -> None:
        """Records that the memory flush ran now, closing this compaction cycle's gate."""
        return self._instance.call(_GATES, "record-memory-flush", self._store, _text("id", id), _now_ms(now))

    def extraction_gate(self, id: str, settings: Optional[Json] = None) -> Decision:
        """Whether to extract memories now (messages and tool calls since the last)."""
        return self._instance.call(_GATES, "extraction-gate", self._store, _text("id", id), _overlay(self._instance.call(_GATES, "default-extraction-settings"), settings, "settings"))

    def record_extraction(self, id: str, now: Time = None) -> None:
        """Records that memories were extracted now: the gate counts from here."""
        return self._instance.call(_GATES, "record-extraction", self._store, _text("id", id), _now_ms(now))

    def reset_gate(self, id: str, policy: Optional[Json] = None, now: Time = None) -> Decision:
        """Whether the next message should start a new session (never deletes): after
        `idle_minutes` without activity, at `daily_reset_hour` (local to
        `utc_offset_minutes`), or past `ttl_ms`; a policy that sets none of them never.
        """
        return self._instance.call(_GATES, "reset-gate", self._store, _text("id", id), _now_ms(now), _overlay(self._instance.call(_GATES, "default-reset-policy"), policy, "policy"))

    def dream_gate(self, settings: Optional[Json] = None, now: Time = None) -> Decision:
        """Whether a memory consolidation is due, without taking it."""
        return self._instance.call(_GATES, "dream-gate", self._store, _now_ms(now), _overlay(self._instance.call(_GATES, "default-dream-settings"), settings, "settings"))

    def dream_acquire(self, holder: str, settings: Optional[Json] = None, now: Time = None) -> Decision:
        """Takes the consolidation for `holder` if due; exactly one of several
        concurrent callers gets it.
        """
        return self._instance.call(_GATES, "dream-acquire", self._store, _now_ms(now), _text("holder", holder), _overlay(self._instance.call(_GATES, "default-dream-settings"), settings, "settings"))

    def dream_release(self, holder: str, completed: bool, now: Time = None) -> None:
        """Releases it; `completed` records the run as the last consolidation."""
        return self._instance.call(_GATES, "dream-release", self._store, _now_ms(now), _text("holder", holder), completed)

    def reset_key(self, key: str, new_session_id: Optional[str] = None, now: Time = None) -> KeyEntry:
        """Gives `key` a new session (what `/new` does); the old one is kept in its
        `previous_session_ids`. `new_session_id` left out is a new random UUID.
        """
        return self._instance.call(_INDEX, "reset-key", self._store, _text("key", key), _text("new_session_id", _fresh_id(new_session_id)), _now_ms(now))

    def update_key(self, key: str, patch: Optional[Json] = None) -> KeyEntry:
        """Sets a key's labels: `title`, `model` and `origin` as `patch` gives them (an
        empty title or model removes it), each of its `toggles` and `metadata` by name
        (an empty value removes it); what it leaves out stays.
        """
        return self._instance.call(_INDEX, "update-key", self._store, _text("key", key), _overlay(self._instance.call(_INDEX, "default-key-patch"), patch, "patch"))

    def remove_key(self, key: str) -> KeyEntry:
        """Forgets a key; its sessions stay. Returns the entry it had."""
        return self._instance.call(_INDEX, "remove-key", self._store, _text("key", key))

    def key(self, key: str) -> KeyView:
        """A key with its current session's listing and counters."""
        return self._instance.call(_INDEX, "key", self._store, _text("key", key))

    def keys(self, filter: Optional[Sequence[Field]] = None) -> List[KeyEntry]:
        """Keys whose metadata has every `{name, value}` of `filter`, most recently active first.
        `filter` defaults to `[]`: every key.
        """
        return self._instance.call(_INDEX, "keys", self._store, [] if filter is None else filter)

    def index_report(self) -> IndexHealth:
        """The index's generation, sizes and anything damaged that was skipped."""
        return self._instance.call(_INDEX, "index-report", self._store)

    def rebuild_index(self) -> RebuildReport:
        """Rebuilds the index from the transcripts: every session read again, its rows and
        the keys as they are saved as a new generation, so damaged or torn log lines and
        an unreadable snapshot are left behind. Key bindings are kept as they are.
        """
        return self._instance.call(_INDEX, "rebuild-index", self._store)

    def export_openclaw_keys(self) -> bytes:
        """Every key as an OpenClaw `sessions.json`, counters from the transcripts the store has."""
        return self._instance.call(_INDEX, "export-openclaw-keys", self._store)

    def crab_latest(self, agent: str, sender: str, project: Optional[str] = None) -> Optional[CrabSession]:
        """The newest crab session of `agent` with `sender` (crab's `find-latest-session`:
        the highest seq) in `project` (default `crab`); none when there is none.
        """
        return self._instance.call(_INDEX, "crab-latest", self._store, _optional_text("project", project), _text("agent", agent), _text("sender", sender))

    def crab_start(self, agent: str, sender: str, project: Optional[str] = None, created_by: str = "user", now: Time = None) -> CrabSession:
        """Starts the next crab session of `agent` with `sender`, `{agent}_{sender}_{seq}`
        with seq one past the latest, its meta line written. `created_by` defaults to `user`.
        """
        return self._instance.call(_INDEX, "crab-start", self._store, _optional_text("project", project), _text("agent", agent), _text("sender", sender), _text("created_by", created_by), _now_ms(now))

    def crab_show(self, id: str) -> CrabSession:
        """A crab session as its name and newest meta line say."""
        return self._instance.call(_INDEX, "crab-show", self._store, _text("id", id))

    def crab_set_title(self, id: str, title: str) -> CrabSession:
        """Titles a crab session: its file renamed `{agent}_{sender}_{seq}_{title slug}`
        and a meta line appended (never a rewrite). Returns it under its new id.
        """
        return self._instance.call(_INDEX, "crab-set-title", self._store, _text("id", id), _text("title", title))

    def crab_add_uptime(self, id: str, secs: int) -> CrabSession:
        """Adds `secs` to a crab session's `uptime_secs`, as an appended meta line."""
        return self._instance.call(_INDEX, "crab-add-uptime", self._store, _text("id", id), secs)

    def rollover_gate(self, key: str, max_context_tokens: int) -> Decision:
        """Whether `key`'s session should roll over: its context (from its last
        compaction on) holds `max_context_tokens` or more.
        """
        return self._instance.call(_INDEX, "rollover-gate", self._store, _text("key", key), max_context_tokens)

    def memory_update(self, project: Optional[str], file: str, change: Json, now: Time = None) -> Memory:
        """Changes fields in place (supersede when the fact itself changed)."""
        return self._instance.call(_MEMORY, "memory-update", self._store, _scope(project), _text("file", file), change, _now_ms(now))

    def memory_forget(self, project: Optional[str], file: str, now: Time = None) -> Memory:
        """Archives a memory: kept (listed with `all`), out of MEMORY.md and default recall."""
        return self._instance.call(_MEMORY, "memory-forget", self._store, _scope(project), _text("file", file), _now_ms(now))

    def memory_tool(self, project: Optional[str], input: Json, now: Time = None) -> MemoryToolResult:
        """Runs one call of Claude's memory tool (`memory_20250818`) over the scope's
        memory files, as `/memories/<file>.md`: `input` is the tool_use block's input
        (an object; anything else is `invalid-argument`), the result the tool_result's
        `content` and `is_error`. A
        path, command or edit the tool refuses is a result marked as an error, in words
        the model can act on; an error of the call is the caller's or the store's.
        """
        return self._instance.call(_MEMORY, "memory-tool", self._store, _scope(project), _json("input", input), _now_ms(now))

    def memory_link(self, project: Optional[str], from_: str, kind: LinkKind, to: str, now: Time = None) -> Memory:
        """Records that `from_` relates to `to`."""
        return self._instance.call(_MEMORY, "memory-link", self._store, _scope(project), _text("from_", from_), kind, _text("to", to), _now_ms(now))

    def memory_show(self, project: Optional[str], file: str) -> Shown:
        """One memory with its body and its supersession history."""
        return self._instance.call(_MEMORY, "memory-show", self._store, _scope(project), _text("file", file))

    def plan_embedding(self, project: Optional[str], model: str, limit: int = 64) -> EmbeddingPlan:
        """At most `limit` memories of `project` with no vector of `model` for what they say
        now, each with its text: the host embeds `texts` and gives the vectors to
        `apply_embedding`, until a plan comes back empty. `limit` defaults to `64`.
        """
        return self._instance.call(_MEMORY, "plan-embedding", self._store, _scope(project), _text("model", model), limit)

    def apply_embedding(self, project: Optional[str], plan: EmbeddingPlan, vectors: Sequence[Sequence[float]]) -> int:
        """Keeps the vectors the host's embedder made of `plan`'s texts, one per text in its
        order, beside the recall index (`.mneme/vectors.jsonl`; in memory only on a
        read-only store), where `memory_recall` with `near` finds them. Returns how many
        were kept: none of a memory that says something else since the plan. A vector
        of another length than the model's others is `invalid-argument`.
        """
        return self._instance.call(_MEMORY, "apply-embedding", self._store, _scope(project), plan, vectors)

    def memory_load(self, project: Optional[str], caps: Optional[Json] = None) -> Loaded:
        """MEMORY.md as a model should load it within `caps` (by default Claude Code's: 200
        lines, 25,000 UTF-16 units), never cut in silence: the
        least recently useful lines go first; a line of a memory archived or superseded
        (a write cut short leaves one; the next write of the scope takes it out) never loads.
        """
        return self._instance.call(_MEMORY, "memory-load", self._store, _scope(project), _overlay(self._instance.call(_MEMORY, "default-caps"), caps, "caps"))

    def memory_reindex(self, project: Optional[str]) -> MemoryIndexReport:
        """Reads the memory folder again and rewrites the recall index."""
        return self._instance.call(_MEMORY, "memory-reindex", self._store, _scope(project))

    def memory_used(self, project: Optional[str], files: Sequence[str], now: Time = None) -> List[Memory]:
        """Records that memories were useful now (put in a model's context, cited by it), so
        `memory_load` keeps them over memories nobody used. Recall records nothing by itself.
        One write; `updated_ms` stays. Returns the memories as written, bodies included.
        """
        return self._instance.call(_MEMORY, "memory-used", self._store, _scope(project), _texts("files", files), _now_ms(now))

    def plan_extraction(self, project: Optional[str], id: str) -> ExtractionPlan:
        """Plans an extraction from session `id` into `project` (run it when the extraction
        gate fires): the host has a model answer `prompt`, then calls `apply_extraction`.
        """
        return self._instance.call(_MEMORY, "plan-extraction", self._store, _scope(project), _text("id", id))

    def apply_extraction(self, project: Optional[str], plan: Json, answer: str, now: Time = None) -> Extracted:
        """Checks every line of the model's answer (one JSON object per line: add, update,
        supersede, noop), then writes the memories and records the extraction. An answer
        that does not read is `invalid-answer` and writes nothing.
        """
        return self._instance.call(_MEMORY, "apply-extraction", self._store, _scope(project), plan, _text("answer", answer), _now_ms(now))

    def record_extraction_failure(self, id: str, reason: str, now: Time = None) -> None:
        """Records a failed extraction (the model failed, or its answer did not read)."""
        return self._instance.call(_MEMORY, "record-extraction-failure", self._store, _text("id", id), _text("reason", reason), _now_ms(now))

    def plan_consolidation(self, project: Optional[str], now: Time = None) -> ConsolidationPlan:
        """Plans a consolidation of `project`'s memory (take the gates' dream lock first):
        the host has a model answer `prompt`, then calls `apply_consolidation`.
        """
        return self._instance.call(_MEMORY, "plan-consolidation", self._store, _scope(project), _now_ms(now))

    def apply_consolidation(self, project: Optional[str], plan: Json, answer: str, dry_run: bool = False, now: Time = None) -> Consolidation:
        """Checks every line of the model's answer (merge, supersede, update, add, archive,
        link, noop) and stages the changes; unless `dry_run`, records them in the scope's
        consolidation log and writes them (`rollback_consolidation` undoes it by the
        returned `id`). Nothing is deleted. An answer that does not
        read is `invalid-answer` and stages nothing. `dry_run` defaults to `False`.
        """
        return self._instance.call(_MEMORY, "apply-consolidation", self._store, _scope(project), plan, _text("answer", answer), _now_ms(now), dry_run)

    def rollback_consolidation(self, project: Optional[str], id: str, now: Time = None) -> Consolidation:
        """Undoes a consolidation: changed memories get their text back, added ones are
        archived. Refuses, writing nothing, when a memory changed after it.
        """
        return self._instance.call(_MEMORY, "rollback-consolidation", self._store, _scope(project), _text("id", id), _now_ms(now))

    def consolidations(self, project: Optional[str]) -> List[Consolidation]:
        """The consolidations recorded in `project`, oldest first."""
        return self._instance.call(_MEMORY, "consolidations", self._store, _scope(project))

    def write_file(self, path: str, text: str) -> None:
        """Keeps an instruction file at absolute `path` (key `files/<path>`)."""
        return self._instance.call(_MEMORY, "write-file", self._store, _text("path", path), _text("text", text))

    def read_file(self, path: str) -> Optional[str]:
        """The instruction file kept at absolute `path`, or none."""
        return self._instance.call(_MEMORY, "read-file", self._store, _text("path", path))

    def remove_file(self, path: str) -> None:
        """Removing a file that is not there is fine."""
        return self._instance.call(_MEMORY, "remove-file", self._store, _text("path", path))

    def tombstone(self, id: str, uuid: str, now: Time = None) -> None:
        """Soft-deletes entry `uuid` by appending a tombstone
        (`{"type":"tombstone","deleted_uuid":…}`); it applies across all parts.
        """
        return self._method("tombstone", _text("id", id), _text("uuid", uuid), _now_ms(now))

    def load(self, id: str) -> Transcript:
        """Every live entry of session `id`, its main chain and the load report."""
        return self._method("load", _text("id", id))

    def branches(self, id: str) -> List[Branch]:
        """Every branch (each leaf message), the current one first."""
        return self._method("branches", _text("id", id))

    def usage(self, id: str, prices: Optional[Prices] = None) -> Ledger:
        """The token ledger: usage in all and per branch, priced when `prices` (dollars
        per million tokens of each kind) are given.
        """
        return self._method("usage", _text("id", id), prices)

    def fork(self, id: str, from_: Optional[str] = None, to: Optional[str] = None, now: Time = None) -> List[Entry]:
        """A new session `to` in the same project holding the conversation from its
        root to entry `from_` (where resume is when none), written as the
        session's client writes a fork (Claude Code: `forkedFrom` on each line; pi:
        `parentSession` in the header). The original is untouched. Returns the lines
        written (their `session_id` is `to`). `to` left out is a new random UUID.
        """
        return self._method("fork", _text("id", id), _optional_text("from_", from_), _text("to", _fresh_id(to)), _now_ms(now))

    def export_session(self, id: str, to: ExportFormat, uuid: Optional[str] = None) -> Exported:
        """Session `id` in `to`: in its own dialect as stored (`verbatim`); in
        another, as the conversation it resumes to (new line ids derive from `uuid`).
        `data` is the bytes; `message_count` the messages they hold. `uuid` left out is a new random UUID.
        """
        return self._method("export-session", _text("id", id), to, _text("uuid", _fresh_id(uuid)))

    def gc(self, policy: Optional[Json] = None, now: Time = None) -> GcReport:
        """One cleanup pass: archives sessions past their time to live, deletes what
        `policy` asks, reports all of it (and only reports, in a dry run).
        """
        return self._method("gc", _overlay(self._instance.call(_SESSIONS, "default-retention"), policy, "policy"), _now_ms(now))

    def archive(self, id: str, now: Time = None) -> ArchivedSession:
        """Moves session `id` into the archive now, every file of it."""
        return self._method("archive", _text("id", id), _now_ms(now))

    def archived(self) -> List[ArchivedSession]:
        """Every archived session, oldest first."""
        return self._method("archived")

    def restore(self, id: str) -> ArchivedSession:
        """Puts archived session `id` back; `session-exists` if a session has the id again,
        `invalid-argument` if the session is live (not archived).
        """
        return self._method("restore", _text("id", id))

    def check(self, id: str) -> CheckReport:
        """The load report plus dangling parents and orphaned tool calls."""
        return self._method("check", _text("id", id))

    def subagents(self, id: str) -> List[Subagent]:
        """The session's sub-agent transcripts (`<id>/subagents/agent-*.jsonl`, and
        flat `agent-*.jsonl` files whose entries name the session).
        """
        return self._method("subagents", _text("id", id))

    def hold(self, id: str) -> None:
        """Keeps session `id` open for writing: takes its lock and keeps it until
        `release` (or until the store is closed), so every write after this skips
        locking and listing and costs one append. Other writers wait for the lock
        and then fail with `storage/locked`. The session must exist. Programs that take no
        lock (Claude Code) must not write it meanwhile.
        """
        return self._method("hold", _text("id", id))

    def release(self, id: str) -> None:
        """Gives back the lock `hold` took; a session not held is left alone."""
        return self._method("release", _text("id", id))

    def remove(self, id: str) -> List[str]:
        """Removes every part, sub-agent file and sidecar of the session; returns the
        keys removed, the first part last.
        """
        return self._method("remove", _text("id", id))

    def repair(self, id: str, now: Time = None) -> RepairReport:
        """Rewrites broken parts (unreadable lines, glued objects, invalid UTF-8,
        torn tail) after saving each original as `<part>.bak-<now-ms>`; a line whose
        parent was an unreadable line is chained past it (`relinked`). A part
        another program wrote to meanwhile is left alone (`storage/changed`).
        """
        return self._method("repair", _text("id", id), _now_ms(now))

    def list(self) -> Listing:
        """Every session in the store, most recently updated first, and the files
        that could not be listed as sessions.
        """
        return self._method("list")

    def search(self, query: str, limit: int = 10, project: Optional[str] = None, since: Time = None, until: Time = None) -> List[SearchHit]:
        """The `limit` messages across every session that best match `query` (the
        recall index memories use: the user's own words counting twice, each session
        read as one text too), best first:
        only `project`'s sessions when it is named (`invalid-project` for a name no
        folder can have), only messages in `window` (one without a timestamp counts
        as 1970). A hit's `matched` is false when it was found through its session
        alone. `limit` defaults to `10`. `since` (included) and `until` (left out) bound `window`, in milliseconds since the epoch (None: open).
        """
        return self._method("search", _text("query", query), limit, _optional_text("project", project), _window(since, until))

    def reopen(self, id: str) -> None:
        """Forgets what the store knows of session `id`: the next call reads it again."""
        return self._method("reopen", _text("id", id))

    def append_lines(self, key: Json, lines: Sequence[str], now: Time = None) -> int:
        """Appends `lines` (each the JSON text of one object, as the session's
        client wrote it) to the transcript at `key` in one storage append. A line
        whose `uuid` the transcript holds already is left out, so a batch retried
        after a failure that had in fact landed, or a transcript imported again, is
        written once; lines without one are always written. A line cut short by a
        crash is moved aside first. Secrets are taken out as from every line; the
        store's size limits do not apply (these are another program's files).
        Returns how many lines were written; given none, writes nothing (no empty
        file).
        """
        return self._method("append-lines", key, _texts("lines", lines), _now_ms(now))

    def read_lines(self, key: Json) -> Optional[List[str]]:
        """The lines of the transcript at `key` as they were appended, oldest first
        (a line cut short by a crash is left out); none if nothing was ever
        written there.
        """
        return self._method("read-lines", key)

    def written_sessions(self, project: str) -> List[WrittenSession]:
        """The sessions of `project` that have a transcript of their own (one with
        sub-agent transcripts only is not listed).
        """
        return self._method("written-sessions", _text("project", project))

    def subpaths(self, project: str, id: str) -> List[str]:
        """The subpaths of session `id`'s other transcripts in `project` (its
        sub-agents': `subagents/agent-<id>`), sorted.
        """
        return self._method("subpaths", _text("project", project), _text("id", id))

    def remove_transcript(self, key: Json) -> None:
        """Removes the transcript at `key`; the session's own takes every file of the
        session with it (its parts, its sub-agents'). Removing what is not there is
        fine.
        """
        return self._method("remove-transcript", key)

    def items(self, id: str, limit: Optional[int] = None) -> List[Json]:
        """The items of session `id`'s resume context, oldest first, as added, as a JSON
        array (only the newest `limit` when given). After a compaction the first is
        `{"role":"user","content":<summary>}`; messages not added as items are not
        among them. A session that does not exist has none.
        """
        return _json_value(self._method("items", _text("id", id), limit))

    def pop_item(self, id: str, now: Time = None) -> Optional[Json]:
        """Soft-deletes session `id`'s newest item (a tombstone; the line stays in
        the file) and returns it; none when there is none. The
        session's lock is held from the read to the tombstone, so another pop
        waits (`storage/locked` past the storage's wait); a writer that takes no
        lock is caught by writing only if the session is still as read, and
        `stale-plan` when such writers raced it eight times (try again).
        """
        return _json_value(self._method("pop-item", _text("id", id), _now_ms(now)))

    # </operations>
