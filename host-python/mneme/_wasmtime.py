"""wasmtime-py's value conversions, made fast where Mneme's calls spend their time.

wasmtime-py (50.x) lowers and lifts a ``list<u8>`` one ctypes value per byte, about a
microsecond a byte: a second for each megabyte of transcript a ``read`` hands the
component, and ``list`` reads every session. These replacements build and read the C
array of values with strided byte slices written in place instead (the same values,
in C); every other list goes through wasmtime-py's own code.

And it reads a variant type's cases from the C API again each time a value of it is
lowered or lifted (several times a call, for the error variants every call and every
storage import returns): a third of a small call's time. Cases are kept per variant type,
found again by the C API's own type equality.

Both are installed only when wasmtime-py's layout is the one they were written against.
"""

import ctypes

from wasmtime import _ffi as ffi
from wasmtime.component import _types

_VALUE = ffi.wasmtime_component_val_t
_STRIDE = ctypes.sizeof(_VALUE)
_KIND = _VALUE.kind.offset
_PAYLOAD = _VALUE.of.offset
_U8 = ffi.WASMTIME_COMPONENT_U8.value
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
    if not self._is_bytes():
        return _lift(self, value)
    try:
        count = value.of.list.size
        return ctypes.string_at(value.of.list.data, count * _STRIDE)[_PAYLOAD::_STRIDE] if count else b""
    finally:
        ffi.wasmtime_component_vallist_delete(ctypes.byref(value.of.list))


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


def install():
    """Replaces wasmtime-py's byte-list conversions and variant cases, if the layout is
    as expected."""
    if _KIND == 0 and _PAYLOAD == 8 and _STRIDE == 32 and hasattr(_types.ListType, "_is_bytes"):
        _types.ListType.convert_to_c = _convert_to_c
        _types.ListType.convert_from_c = _convert_from_c
    if isinstance(getattr(_types.VariantType, "cases", None), property) and hasattr(ffi, "wasmtime_component_variant_type_equal"):
        _types.VariantType.cases = property(_cases)
