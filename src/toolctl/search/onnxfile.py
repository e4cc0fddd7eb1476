"""The weights of an ONNX model file, read without onnx or onnxruntime.

An ONNX file is a protocol buffer: a ``ModelProto`` whose field 7 is the graph, whose repeated
field 5 holds the weights (``TensorProto``: dims = 1, data_type = 2, name = 8, raw_data = 9).
Only that path is walked; the operators are not read (the caller knows the architecture and
checks the weights' names and shapes). The file is memory-mapped: a weight is a read-only
numpy view of its bytes, so nothing is copied until it is used.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from numpy.typing import NDArray

# ONNX TensorProto.DataType -> numpy dtype (the ones a quantised encoder stores)
_DTYPES = {1: "<f4", 3: "i1", 6: "<i4", 7: "<i8", 10: "<f2"}


def _varint(buf: memoryview, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _fields(buf: memoryview, start: int, end: int) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value) of a message: ints for varints, (start, end) spans for
    length-delimited fields."""
    at = start
    while at < end:
        key, at = _varint(buf, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(buf, at)
            yield number, wire, value
        elif wire == 2:
            size, at = _varint(buf, at)
            if at + size > end:
                raise ValueError("a field runs past its message")
            yield number, wire, (at, at + size)
            at += size
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def _tensor(buf: memoryview, start: int, end: int) -> tuple[str, NDArray[Any]] | None:
    import numpy as np

    dims: list[int] = []
    dtype = name = raw = None
    for number, wire, value in _fields(buf, start, end):
        if number == 1 and wire == 0:
            dims.append(value)
        elif number == 1 and wire == 2:  # packed dims
            at = value[0]
            while at < value[1]:
                dim, at = _varint(buf, at)
                dims.append(dim)
        elif number == 2 and wire == 0:
            dtype = _DTYPES.get(value)
        elif number == 8 and wire == 2:
            name = bytes(buf[value[0] : value[1]]).decode("utf-8")
        elif number == 9 and wire == 2:
            raw = buf[value[0] : value[1]]
    if name is None or dtype is None or raw is None:
        return None  # a constant stored another way: not a weight this reader needs
    array = np.frombuffer(raw, dtype=dtype)
    count = 1
    for dim in dims:
        count *= dim
    if array.size != count:
        raise ValueError(f"tensor {name}: {array.size} values for shape {dims}")
    return name, array.reshape(dims)


def weights(path: Path) -> dict[str, NDArray[Any]]:
    """Every weight stored as raw data in the ONNX model at ``path``, by name, in file order.
    Raises OSError or ValueError for a file that is not such a model."""
    with path.open("rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    buf = memoryview(mapped)
    out: dict[str, NDArray[Any]] = {}
    try:
        graph = next((v for n, w, v in _fields(buf, 0, len(buf)) if n == 7 and w == 2), None)
        if graph is None:
            raise ValueError(f"{path}: no graph in the model")
        for number, wire, value in _fields(buf, *graph):
            if number == 5 and wire == 2:
                found = _tensor(buf, *value)
                if found is not None:
                    out[found[0]] = found[1]
    except IndexError:  # a varint or a field cut short by the end of the file
        raise ValueError(f"{path}: the model file is truncated") from None
    return out
