"""Read the class names from a joblib-pickled scikit-learn LabelEncoder
without importing scikit-learn or joblib.

joblib writes numpy arrays as a ``joblib.numpy_pickle.NumpyArrayWrapper``
object in the pickle stream; when that object's BUILD opcode is executed the
raw array bytes follow directly in the file (after an alignment-padding
length byte and the padding itself, when ``numpy_array_alignment_bytes`` is
set).  We use the pure-Python ``pickle._Unpickler`` so the BUILD opcode can be
intercepted, and admit only these globals:

  sklearn.preprocessing._label.LabelEncoder -> a plain attribute holder
  joblib.numpy_pickle.NumpyArrayWrapper     -> a plain attribute holder
  numpy.ndarray                              -> marker (wrapper.subclass)
  numpy.dtype                                -> numpy.dtype (plain dtypes only)
"""
from __future__ import annotations

import io
import pickle

import numpy as np


class _Holder:
    def __setstate__(self, state):
        self.__dict__.update(state)


class LabelEncoderState(_Holder):
    pass


class NumpyArrayWrapperState(_Holder):
    pass


class _Reader(pickle._Unpickler):  # noqa: SLF001 - pure-Python unpickler needed
    dispatch = dict(pickle._Unpickler.dispatch)  # noqa: SLF001

    def find_class(self, module, name):
        allowed = {
            ("sklearn.preprocessing._label", "LabelEncoder"): LabelEncoderState,
            ("joblib.numpy_pickle", "NumpyArrayWrapper"): NumpyArrayWrapperState,
            ("numpy", "ndarray"): np.ndarray,
            ("numpy", "dtype"): np.dtype,
        }
        try:
            return allowed[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"global {module}.{name} is not allowed") from None

    def load_build(self):
        super().load_build()
        obj = self.stack[-1]
        if isinstance(obj, NumpyArrayWrapperState):
            self.stack[-1] = self._read_array(obj)

    dispatch[pickle.BUILD[0]] = load_build

    def _read_array(self, w):
        dtype = np.dtype(w.dtype)
        if dtype.hasobject:
            raise pickle.UnpicklingError("object arrays are not supported")
        if getattr(w, "numpy_array_alignment_bytes", None):
            pad = self._raw.read(1)[0]
            self._raw.read(pad)
        count = int(np.prod(w.shape))
        data = self._raw.read(count * dtype.itemsize)
        return np.frombuffer(data, dtype=dtype).reshape(w.shape, order=w.order)


def load_label_encoder_classes(path: str) -> list[str]:
    with open(path, "rb") as f:
        raw = io.BytesIO(f.read())
    r = _Reader(raw)
    r._raw = raw  # raw stream: array bytes are read from here, outside pickle frames
    enc = r.load()
    if not isinstance(enc, LabelEncoderState):
        raise ValueError("not a LabelEncoder pickle")
    return [str(c) for c in enc.classes_]


if __name__ == "__main__":
    import sys
    for i, c in enumerate(load_label_encoder_classes(sys.argv[1])):
        print(i, c)
