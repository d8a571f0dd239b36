"""Pure-Python stand-in for MediaPipe's missing ``_pywrap_metadata_version``.

The mediapipe PyPI wheel (checked with 1.2.3) ships
``mediapipe/tasks/python/metadata/metadata.py`` which does

    from mediapipe.tasks.cc.metadata.python import _pywrap_metadata_version
    ...
    min_version = _pywrap_metadata_version.GetMinimumMetadataParserVersion(
        bytes(metadata_buf))

but the compiled ``mediapipe.tasks.cc`` extension is not in the wheel, so the
metadata writers cannot even be imported.  The only symbol used is
``GetMinimumMetadataParserVersion(buffer: bytes) -> str``: it returns the
smallest metadata-parser version able to read every field present in a
``ModelMetadata`` flatbuffer; the writer stores it in
``ModelMetadata.min_parser_version``.

Rather than returning a fixed constant, this module re-implements that rule in
Python: start at "1.0.0" and raise the version for each later-added schema
feature the buffer uses (versions as documented in MediaPipe's
``metadata_schema.fbs``, schema 1.5.0).  For the image-classifier metadata we
write (image input with normalisation, one TENSOR_AXIS_LABELS file) no later
feature is used and the answer is "1.0.0" — the same value the real C++
extension produces for such metadata.

Call :func:`install` before importing anything from
``mediapipe.tasks.python.metadata``.
"""
from __future__ import annotations

import sys
import types

# Schema features added after 1.0.0, and the parser version that introduced them.
_V_VOCABULARY_FILE = (1, 0, 1)
_V_SUBGRAPH_PROCESS_UNITS = (1, 1, 0)
_V_BERT_TOKENIZER = (1, 1, 0)
_V_SENTENCEPIECE_TOKENIZER = (1, 1, 0)
_V_TENSOR_GROUPS = (1, 2, 0)
_V_REGEX_TOKENIZER = (1, 2, 1)
_V_AUDIO_PROPERTIES = (1, 3, 0)
_V_SCANN_INDEX_FILE = (1, 4, 0)
_V_ASSOCIATED_FILE_VERSION = (1, 4, 1)
_V_CUSTOM_METADATA = (1, 5, 0)
_DEFAULT = (1, 0, 0)


def _vector(table, name):
    """Return the list of items of vector field `name`, or None if absent."""
    if getattr(table, name + "IsNone")():
        return None
    getter = getattr(table, name)
    return [getter(i) for i in range(getattr(table, name + "Length")())]


def GetMinimumMetadataParserVersion(buffer: bytes) -> str:  # noqa: N802 (C++ name)
    from mediapipe.tasks.metadata import metadata_schema_py_generated as fb

    buf = bytearray(buffer)
    if not fb.ModelMetadata.ModelMetadataBufferHasIdentifier(buf, 0):
        raise ValueError("The model metadata is not a valid FlatBuffer buffer.")
    root = fb.ModelMetadata.GetRootAs(buf, 0)
    found = [_DEFAULT]

    def files(items):
        for f in items or []:
            if f.Type() == fb.AssociatedFileType.VOCABULARY:
                found.append(_V_VOCABULARY_FILE)
            if f.Type() == fb.AssociatedFileType.SCANN_INDEX_FILE:
                found.append(_V_SCANN_INDEX_FILE)
            if f.Version() is not None:
                found.append(_V_ASSOCIATED_FILE_VERSION)

    def units(items):
        for u in items or []:
            t = u.OptionsType()
            if t == fb.ProcessUnitOptions.BertTokenizerOptions:
                found.append(_V_BERT_TOKENIZER)
            if t == fb.ProcessUnitOptions.SentencePieceTokenizerOptions:
                found.append(_V_SENTENCEPIECE_TOKENIZER)
            if t == fb.ProcessUnitOptions.RegexTokenizerOptions:
                found.append(_V_REGEX_TOKENIZER)

    def tensors(items):
        for t in items or []:
            files(_vector(t, "AssociatedFiles"))
            units(_vector(t, "ProcessUnits"))
            c = t.Content()
            if c is not None and c.ContentPropertiesType() == fb.ContentProperties.AudioProperties:
                found.append(_V_AUDIO_PROPERTIES)

    for sg in _vector(root, "SubgraphMetadata") or []:
        tensors(_vector(sg, "InputTensorMetadata"))
        tensors(_vector(sg, "OutputTensorMetadata"))
        files(_vector(sg, "AssociatedFiles"))
        for field, version in (("InputProcessUnits", _V_SUBGRAPH_PROCESS_UNITS),
                               ("OutputProcessUnits", _V_SUBGRAPH_PROCESS_UNITS)):
            items = _vector(sg, field)
            if items is not None:
                found.append(version)
                units(items)
        if not sg.InputTensorGroupsIsNone() or not sg.OutputTensorGroupsIsNone():
            found.append(_V_TENSOR_GROUPS)
        if not sg.CustomMetadataIsNone():
            found.append(_V_CUSTOM_METADATA)
    files(_vector(root, "AssociatedFiles"))
    return ".".join(str(x) for x in max(found))


_MODULE = "mediapipe.tasks.cc.metadata.python._pywrap_metadata_version"


def install() -> None:
    """Register the stand-in (and its parent packages) in ``sys.modules``."""
    if _MODULE in sys.modules:
        return
    import mediapipe.tasks  # the real parents must exist first

    parent = sys.modules["mediapipe.tasks"]
    parts = _MODULE.split(".")
    for i in range(3, len(parts) + 1):
        name = ".".join(parts[:i])
        mod = sys.modules.get(name)
        if mod is None:
            mod = types.ModuleType(name)
            if i < len(parts):
                mod.__path__ = []  # mark as package
            sys.modules[name] = mod
        setattr(parent, parts[i - 1], mod)
        parent = mod
    leaf = sys.modules[_MODULE]
    leaf.GetMinimumMetadataParserVersion = GetMinimumMetadataParserVersion
    leaf.__doc__ = __doc__
