"""wasmtime-py's value conversions and calls, made fast where Mneme's calls spend their time.

wasmtime-py (50.x) lowers and lifts a ``list<u8>`` one ctypes value per byte, about a
microsecond a byte. These replacements build and read the C array of values with
strided byte slices written in place instead (the same values, in C); every other list
goes through wasmtime-py's own code. (The storage imports pass an object's bytes as
text where they can, which crosses in one piece: see the WIT's ``data``.)

And it reads a type's parts from the C API again each time a value of it is lowered or
lifted, and a function's parameter types each time it is called or calls back: most of
a small call's time. A type's parts never change, so they are kept with the type (and a
variant's cases also per variant type met, found again by the C API's own type
equality, for types wasmtime-py makes afresh); :func:`call` and :func:`add_func` call
and serve functions with their types read once.

The replacements are installed only when wasmtime-py's layout is the one they were
written against. :func:`call` and :func:`add_func` reach into wasmtime-py's internals
too (``Func._func``, ``_context()``, ``FuncType._from_ptr``, ``component._enter``): the
package pins the wasmtime-py it was written against (pyproject.toml).
"""

import ctypes
import itertools
import struct
import sys
from ctypes import byref

from wasmtime import WasmtimeError
from wasmtime import _ffi as ffi
from wasmtime.component import FuncType, _types
from wasmtime.component._enter import catch_exceptions, enter_wasm

_VALUE = ffi.wasmtime_component_val_t
_STRIDE = ctypes.sizeof(_VALUE)
_KIND = _VALUE.kind.offset
_PAYLOAD = _VALUE.of.offset
_U8 = ffi.WASMTIME_COMPONENT_U8.value
_STRING_KIND = ffi.WASMTIME_COMPONENT_STRING
_BOOL = ffi.WASMTIME_COMPONENT_BOOL
_BYTES = ctypes.POINTER(ffi.wasm_byte_t)
# A value seen as bytes, when it is a string: its kind, then its byte vector's size
# and data address (the rest unused). Made by install() on the layout it was written for.
_VECTORS = None
_LIST = ffi.WASMTIME_COMPONENT_LIST

_lower = _types.ListType.convert_to_c
_lift = _types.ListType.convert_from_c


def _convert_to_c(self, store, value, ptr):
    if not self._is_bytes():
        return _lower(self, store, value, ptr)
    if not isinstance(value, (bytes, bytearray)):
        raise TypeError("expected bytes value")
    raw = ffi.wasmtime_component_vallist_t()
    ffi.wasmtime_component_vallist_new_uninit(raw, len(value))
    if value:
        # Written in place, the values' memory seen as bytes: a copy of 32 bytes a byte
        # built elsewhere and moved in cost twice as much again.
        image = memoryview((ctypes.c_ubyte * (len(value) * _STRIDE)).from_address(ctypes.addressof(raw.data.contents))).cast("B")
        image[_KIND::_STRIDE] = bytes([_U8]) * len(value)
        image[_PAYLOAD::_STRIDE] = value
    ptr.contents.kind = _LIST
    ptr.contents.of.list = raw
    return None


def _convert_from_c(self, value):
    if self._is_bytes():
        try:
            count = value.of.list.size
            return ctypes.string_at(value.of.list.data, count * _STRIDE)[_PAYLOAD::_STRIDE] if count else b""
        finally:
            ffi.wasmtime_component_vallist_delete(ctypes.byref(value.of.list))
    if _VECTORS is not None and isinstance(self.element, _types.String):
        # A list of strings (a transcript's lines) read from one copy of the values:
        # each is a byte vector's size and address. Deleting the list frees them.
        try:
            count = value.of.list.size
            image = ctypes.string_at(value.of.list.data, count * _STRIDE) if count else b""
            return [ctypes.string_at(address, size).decode("utf-8") for size, address in _VECTORS.iter_unpack(image)]
        finally:
            ffi.wasmtime_component_vallist_delete(ctypes.byref(value.of.list))
    return _lift(self, value)


def _string_to_c(self, store, value, ptr):
    # One copy, from the encoded text into the C API's vector (wasmtime-py makes three).
    if not isinstance(value, str):
        raise TypeError("expected string type")
    encoded = value.encode("utf-8")
    ptr.contents.kind = _STRING_KIND
    ffi.wasm_byte_vec_new(byref(ptr.contents.of.string), len(encoded), ctypes.cast(encoded, _BYTES))


def _string_from_c(self, value):
    vector = value.of.string
    try:
        return ctypes.string_at(vector.data, vector.size).decode("utf-8") if vector.size else ""
    finally:
        ffi.wasm_byte_vec_delete(byref(vector))


def _record_from_c(self, value):
    # wasmtime-py's, without decoding each field's name to check it: the C API gives
    # a record's fields in its type's order.
    record = _types.Record()
    raw = value.of.record
    try:
        for at, (name, kind) in zip(range(raw.size), self.fields):
            field = raw.data[at].val
            setattr(record, name, kind.convert_from_c(field))
            # Its payload is the new value's now: deleting the record must not free it.
            field.kind = _BOOL
            field.of.boolean = False
        return record
    finally:
        ffi.wasmtime_component_valrecord_delete(raw)


_read_cases = _types.VariantType.cases.fget
# Each variant type met, kept alive (the value types of its cases are its), with its cases.
_known_cases = []


def _cases(self):
    for known, cases in _known_cases:
        if ffi.wasmtime_component_variant_type_equal(self.ptr(), known.ptr()):
            return cases
    cases = _read_cases(self)
    _known_cases.append((self, cases))
    return cases


def _kept(name, read):
    """``read(self)``, read once per type object and kept on it."""

    def get(self):
        try:
            return self.__dict__[name]
        except KeyError:
            value = self.__dict__[name] = read(self)
            return value

    return get


def _plan(self):
    """Whether a variant-like type's values are tagged, and its cases with the Python
    classes an untagged value of each is."""
    cases = []
    for name, payload in self._cases():
        classes = set()
        if payload is not None:
            payload.add_classes(classes)
        cases.append((name, payload, tuple(classes)))
    return self._tagged(), cases


def _variant_lower(self, store, value):
    """wasmtime-py's ``VariantLikeType._lower``, over the type's kept plan."""
    tagged, cases = self._mneme_plan()
    if tagged and not isinstance(value, _types.Variant):
        raise TypeError("expected Variant type")
    for name, payload_type, classes in cases:
        if tagged:
            if name != value.tag:
                continue
        elif payload_type is None:
            if value is not None:
                continue
        elif not isinstance(value, classes):
            continue
        if payload_type is None:
            return (name, None)
        raw = ffi.wasmtime_component_val_t()
        payload_type.convert_to_c(store, value.payload if tagged else value, ctypes.pointer(raw))
        return (name, ffi.wasmtime_component_val_new(byref(raw)))
    raise ValueError("value not valid for this variant")


def signature(function_type):
    """A function type's parameters (name and type), their types, and its result type
    (None: no result)."""
    params = list(function_type.params)
    return params, [kind for _, kind in params], function_type.result


def call(function, store, params, result, args):
    """Calls component function ``function`` in ``store`` with wasmtime-py values
    ``args`` of types ``params``, returning its value of type ``result``: wasmtime-py's
    ``Func.__call__`` without reading the function's type again."""
    if len(args) != len(params):
        raise TypeError(f"wrong number of parameters provided: given {len(args)}, expected {len(params)}")
    values = (_VALUE * len(args))()
    lowered = 0
    try:
        for kind, value in zip(params, args):
            kind.convert_to_c(store, value, ctypes.pointer(values[lowered]))
            lowered += 1
        out = _VALUE() if result is not None else None
        enter_wasm(lambda: ffi.wasmtime_component_func_call(byref(function._func), store._context(), values, lowered, None if out is None else byref(out), 0 if out is None else 1))
        return None if out is None else result.convert_from_c(out)
    finally:
        for at in range(lowered):
            ffi.wasmtime_component_val_delete(byref(values[at]))


# Each served function's Python callable and, once it has been called, its signature.
_served = {}
_handles = itertools.count(1)


@ffi.wasmtime_component_func_callback_t
def _serve(handle, context, function_type, args, count, results, result_count):
    def run(store):
        served = _served[handle]
        if served[1] is None:
            _, params, result = signature(FuncType._from_ptr(function_type, owner=store))
            served[1] = (params, result)
        params, result = served[1]
        if count != len(params) or result_count != (0 if result is None else 1):
            raise WasmtimeError("a Mneme storage import was called with a signature it does not have")
        value = served[0](store, *[kind.convert_from_c(args[at]) for at, kind in enumerate(params)])
        if result is not None:
            result.convert_to_c(store, value, results)

    return catch_exceptions(context, run)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _forget(handle):
    _served.pop(handle or 0, None)


def add_func(linker_instance, name, function):
    """Serves import ``name`` of ``linker_instance`` (a wasmtime-py ``LinkerInstance``)
    with ``function(store, *args)``: wasmtime-py's ``add_func``, its parameter types
    read once."""
    handle = next(_handles)
    _served[handle] = [function, None]
    encoded = name.encode("utf-8")
    error = ffi.wasmtime_component_linker_instance_add_func(linker_instance.ptr(), ctypes.create_string_buffer(encoded), len(encoded), _serve, handle, _forget)
    if error:
        _served.pop(handle, None)
        raise WasmtimeError._from_ptr(error)


def install():
    """Replaces wasmtime-py's byte-list conversions, and keeps types' parts with them, if
    the layout is as expected."""
    global _VECTORS
    if _KIND == 0 and _PAYLOAD == 8 and _STRIDE == 32 and ctypes.sizeof(ctypes.c_size_t) == 8 and hasattr(_types.ListType, "_is_bytes"):
        vector = ffi.wasm_byte_vec_t
        if sys.byteorder == "little" and vector.size.offset == 0 and vector.data.offset == 8:
            _VECTORS = struct.Struct("<8xQQ8x")
        _types.ListType.convert_to_c = _convert_to_c
        _types.ListType.convert_from_c = _convert_from_c
    if callable(_types.String.__dict__.get("convert_to_c")) and callable(_types.String.__dict__.get("convert_from_c")):
        _types.String.convert_to_c = _string_to_c
        _types.String.convert_from_c = _string_from_c
    if callable(_types.RecordType.__dict__.get("convert_from_c")):
        _types.RecordType.convert_from_c = _record_from_c
    if isinstance(getattr(_types.VariantType, "cases", None), property) and hasattr(ffi, "wasmtime_component_variant_type_equal"):
        _types.VariantType.cases = property(_kept("_mneme_cases", _cases))
    for owner, name in [
        (_types.ListType, "element"),
        (_types.RecordType, "fields"),
        (_types.TupleType, "elements"),
        (_types.OptionType, "payload"),
        (_types.ResultType, "ok"),
        (_types.ResultType, "err"),
    ]:
        if isinstance(owner.__dict__.get(name), property):
            setattr(owner, name, property(_kept(f"_mneme_{name}", owner.__dict__[name].fget)))
    variant = _types.VariantLikeType
    if all(callable(variant.__dict__.get(name)) for name in ("_tagged", "_lower", "_cases")):
        variant._tagged = _kept("_mneme_tagged", variant.__dict__["_tagged"])
        variant._mneme_plan = _kept("_mneme_kept_plan", _plan)
        variant._lower = _variant_lower
