"""Read a PyTorch *legacy* (pre-1.6, non-zip) ``.pth`` state dict without torch.

The legacy serialisation written by ``torch.save(..., _use_new_zipfile_serialization=False)``
is a concatenation of:

  1. pickle: the magic number 0x1950a86a20f9469cfc6c
  2. pickle: the protocol version (1001)
  3. pickle: ``sys_info`` dict (endianness, type sizes)
  4. pickle: the object itself; tensors appear as
     ``torch._utils._rebuild_tensor_v2(<persistent storage>, offset, size, stride,
     requires_grad, backward_hooks)`` and storages as persistent ids
     ``('storage', <torch.XStorage>, key, location, numel, view_metadata)``
  5. pickle: the list of storage keys, in the order the raw storages follow
  6. for each key: int64 little-endian element count, then the raw little-endian
     element bytes.

Only the handful of globals needed for a plain state dict are admitted by the
restricted unpickler below (OrderedDict, _rebuild_tensor_v2 and the typed
storage classes); anything else raises ``pickle.UnpicklingError``, so a
malicious file cannot execute code.
"""
from __future__ import annotations

import collections
import io
import pickle
import struct
from typing import Dict

import numpy as np

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001

_STORAGE_DTYPES = {
    "FloatStorage": np.dtype("<f4"),
    "DoubleStorage": np.dtype("<f8"),
    "HalfStorage": np.dtype("<f2"),
    "LongStorage": np.dtype("<i8"),
    "IntStorage": np.dtype("<i4"),
    "ShortStorage": np.dtype("<i2"),
    "CharStorage": np.dtype("i1"),
    "ByteStorage": np.dtype("u1"),
    "BoolStorage": np.dtype("?"),
}


class _StorageType:
    """Stand-in for ``torch.XStorage`` classes: only carries the dtype."""

    def __init__(self, name: str):
        self.name = name
        self.dtype = _STORAGE_DTYPES[name]


class _StorageRef:
    """A not-yet-loaded storage, identified by its key."""

    def __init__(self, key: str, dtype: np.dtype, numel: int):
        self.key = key
        self.dtype = dtype
        self.numel = numel
        self.data: np.ndarray | None = None


class _TensorRef:
    """A tensor whose storage bytes arrive after the object pickle."""

    def __init__(self, storage: _StorageRef, offset: int, size, stride):
        self.storage = storage
        self.offset = int(offset)
        self.size = tuple(int(s) for s in size)
        self.stride = tuple(int(s) for s in stride)

    def materialise(self) -> np.ndarray:
        data = self.storage.data
        assert data is not None, f"storage {self.storage.key} was never read"
        if not self.size:
            return data[self.offset].copy()
        item = data.itemsize
        view = np.lib.stride_tricks.as_strided(
            data[self.offset:],
            shape=self.size,
            strides=tuple(s * item for s in self.stride),
            writeable=False,
        )
        return np.array(view, copy=True)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    return _TensorRef(storage, storage_offset, size, stride)


class _RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, f, storages: Dict[str, _StorageRef]):
        super().__init__(f)
        self._storages = storages

    def find_class(self, module, name):
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return _rebuild_tensor_v2
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(name)
        raise pickle.UnpicklingError(f"global {module}.{name} is not allowed")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and pid and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        _, storage_type, key, _location, numel, view_metadata = pid
        if view_metadata is not None:
            raise pickle.UnpicklingError("storage views are not supported")
        if key not in self._storages:
            self._storages[key] = _StorageRef(key, storage_type.dtype, int(numel))
        return self._storages[key]


class _PlainUnpickler(pickle.Unpickler):
    """For the header pickles and the key list: no globals at all."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"global {module}.{name} is not allowed")


def load_legacy_state_dict(path: str) -> "collections.OrderedDict[str, np.ndarray]":
    with open(path, "rb") as fh:
        f = io.BytesIO(fh.read())
    magic = _PlainUnpickler(f).load()
    if magic != MAGIC_NUMBER:
        raise ValueError("not a legacy torch file (bad magic number)")
    protocol = _PlainUnpickler(f).load()
    if protocol != PROTOCOL_VERSION:
        raise ValueError(f"unsupported protocol version {protocol}")
    sys_info = _PlainUnpickler(f).load()
    if not sys_info.get("little_endian", False):
        raise ValueError("big-endian files are not supported")

    storages: Dict[str, _StorageRef] = {}
    obj = _RestrictedUnpickler(f, storages).load()
    keys = _PlainUnpickler(f).load()

    for key in keys:
        (numel,) = struct.unpack("<q", f.read(8))
        ref = storages[key]
        if numel != ref.numel:
            raise ValueError(f"storage {key}: header says {numel}, pickle says {ref.numel}")
        raw = f.read(numel * ref.dtype.itemsize)
        if len(raw) != numel * ref.dtype.itemsize:
            raise ValueError(f"storage {key}: file truncated")
        ref.data = np.frombuffer(raw, dtype=ref.dtype)
    if f.read(1):
        raise ValueError("trailing bytes after the last storage")

    out = collections.OrderedDict()
    for name, value in obj.items():
        out[name] = value.materialise() if isinstance(value, _TensorRef) else value
    return out


if __name__ == "__main__":
    import sys

    sd = load_legacy_state_dict(sys.argv[1])
    for k, v in sd.items():
        print(k, getattr(v, "shape", v), getattr(v, "dtype", ""))
