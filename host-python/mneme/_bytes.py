"""Fast ``list<u8>`` values for wasmtime-py.

wasmtime-py (50.x) lowers and lifts a ``list<u8>`` one ctypes value per byte, about a
microsecond a byte: a second for each megabyte of transcript a ``read`` hands the
component, and ``list`` reads every session. These replacements build and read the C
array of values with strided byte slices instead (the same values, in C, over a
hundred times faster); every other list goes through wasmtime-py's own code. They are
installed only when the C value layout is the one they were written against.
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
        image = bytearray(len(value) * _STRIDE)
        image[_KIND::_STRIDE] = bytes([_U8]) * len(value)
        image[_PAYLOAD::_STRIDE] = value
        ctypes.memmove(raw.data, bytes(image), len(image))
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


def install():
    """Replaces wasmtime-py's byte-list conversions, if the layout is as expected."""
    if _KIND == 0 and _PAYLOAD == 8 and _STRIDE == 32 and hasattr(_types.ListType, "_is_bytes"):
        _types.ListType.convert_to_c = _convert_to_c
        _types.ListType.convert_from_c = _convert_from_c
