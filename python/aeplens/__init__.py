"""aeplens for Python: AEP evidence verified and analysed over Arrow batches.

Every function takes and returns Arrow data through the Arrow C data interface
(``__arrow_c_array__``): pyarrow >= 14, and any engine that speaks it. Records are given
as their raw bytes, never as an engine's JSON parse (it would drop duplicate keys and
round numbers the verifier must see). The columns are those of ``docs/tables.md``, the
tables ``aeplens export --format parquet`` writes; ``python -m aeplens.spark`` runs the
steps as a Spark job.

The steps, each a pure function of its batch::

    split_files(files)                 # (path, content) -> pieces: (path, line, index, raw)
    verify_batch(pieces, keys=...)     # -> records columns, each record verified alone
    groups(ties)                       # (record_key, tie) -> (record_key, group)
    analyse_group(pieces, keys=...)    # every piece of one group -> its tables
    actions_batch(pieces, keys=...)    # the actions rows of whole groups

Keys and lease files are given as paths, or as ``(name, bytes)`` pairs read elsewhere
(what a Spark job broadcasts); every row returned carries their fingerprints
(``keyring``, ``lease_files``).
"""

from __future__ import annotations

import os
from typing import Iterable, Union

import pyarrow as pa

from . import _aeplens
from ._aeplens import TABLES_VERSION, __version__

__all__ = [
    "TABLES_VERSION",
    "__version__",
    "GROUP_TABLES",
    "split_files",
    "verify_batch",
    "groups",
    "analyse_group",
    "actions_batch",
    "manifest",
    "read_files",
]

#: The tables ``analyse_group`` returns, in order.
GROUP_TABLES = ("records", "actions", "findings", "edges", "leases")

Files = Union[None, str, os.PathLike, tuple, Iterable]


def read_files(files: Files) -> list[tuple[str, bytes]]:
    """Keyring or lease files as ``(name, bytes)`` pairs: a path, ``(name, bytes)``, or a
    list of either; ``None`` is none."""
    if files is None:
        return []
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    elif isinstance(files, tuple) and len(files) == 2 and isinstance(files[1], (bytes, bytearray)):
        files = [files]
    out = []
    for f in files:
        if isinstance(f, tuple):
            out.append((str(f[0]), bytes(f[1])))
        else:
            with open(f, "rb") as handle:
                out.append((os.fspath(f), handle.read()))
    return out


def _batch(data) -> pa.RecordBatch:
    """One record batch from a batch, a table (its chunks joined) or any Arrow object."""
    if isinstance(data, pa.RecordBatch):
        return data
    if isinstance(data, pa.Table) or hasattr(data, "__arrow_c_stream__"):
        table = pa.table(data).combine_chunks()
        batches = table.to_batches()
        if not batches:
            return pa.RecordBatch.from_pylist([], schema=table.schema)
        return batches[0]
    return pa.record_batch(data)


def split_files(files) -> pa.RecordBatch:
    """Files (``path`` string, ``content`` binary: Spark's ``binaryFile`` rows) cut into
    the bytes of their records, as ``aeplens`` reads each file: one row per piece
    (``path``, ``line``, ``index`` — null on an NDJSON line — and ``raw``) and one row per
    file (``raw`` null) with its ``sha256``, ``format``, ``bytes`` and ``file_errors``."""
    return pa.record_batch(_aeplens.split_files(_batch(files)))


def verify_batch(pieces, keys: Files = None, leases: Files = None, profile: str = "forensic") -> pa.RecordBatch:
    """Pieces (``path``, ``line``, ``raw``; ``index`` when known) -> one row per record
    with the ``records`` columns of docs/tables.md, each record verified alone: ``chain``
    is ``not-evaluated``, ``chain_link`` null and ``semantic`` ``fail`` or
    ``not-evaluated`` (they need the other records: ``analyse_group``). Then
    ``load_error`` (a row per piece that is no record: a bad line never raises),
    ``ties``, ``action_ids``, ``parent_ids`` (what groups it with other records),
    ``keyring`` and ``lease_files``."""
    return pa.record_batch(
        _aeplens.verify_batch(_batch(pieces), read_files(keys), read_files(leases), profile)
    )


def groups(ties) -> pa.RecordBatch:
    """Ties (``record_key``, ``tie``: one row per tie of a record, any number of batches)
    -> ``record_key``, ``group`` (the least record key of its group): records sharing a
    tie, transitively, are analysed together."""
    if isinstance(ties, pa.Table):
        batches = ties.to_batches()
    elif isinstance(ties, pa.RecordBatch):
        batches = [ties]
    else:
        batches = [_batch(t) for t in ties]
    return pa.record_batch(_aeplens.groups(batches))


def analyse_group(pieces, keys: Files = None, leases: Files = None, profile: str = "forensic") -> dict:
    """Every piece of one group (``path``, ``input`` — the file's position among the
    inputs —, ``line``, ``index``, ``raw``) -> its tables, ``{name: RecordBatch}`` for
    ``GROUP_TABLES``: the rows ``aeplens export --format parquet`` writes for these
    records, each with ``keyring`` and ``lease_files``. A group is one run, or runs that
    a chain, a lease, a causal chain or a parent named across runs ties together."""
    out = _aeplens.analyse_group(_batch(pieces), read_files(keys), read_files(leases), profile)
    return {name: pa.record_batch(batch) for name, batch in out}


def actions_batch(pieces, keys: Files = None, leases: Files = None, profile: str = "forensic") -> pa.RecordBatch:
    """The ``actions`` rows of pieces holding whole groups (``analyse_group``)."""
    return analyse_group(pieces, keys, leases, profile)["actions"]


def manifest(inputs, tables: dict, keys: Files = None, leases: Files = None, profile: str = "forensic"):
    """The manifest of tables written in parts: ``inputs`` (``path``, ``sha256``,
    ``bytes``), ``tables`` ``{name: (rows, [files])}``. Returns ``(set_key, text)``; the
    tables' ``set=`` partition is ``set_key[:16]``."""
    return _aeplens.manifest(_batch(inputs), tables, read_files(keys), read_files(leases), profile)
