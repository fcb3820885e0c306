"""aeplens for Python: AEP evidence verified and analysed over Arrow batches.

Every function takes and returns Arrow data through the Arrow C data interface
(``__arrow_c_array__``): pyarrow >= 14, and any engine that speaks it. Records are given
as their raw bytes, never as an engine's JSON parse (it would drop duplicate keys and
round numbers the verifier must see). The columns are those of ``docs/tables.md``, the
tables ``aeplens export --format parquet`` writes; ``python -m aeplens.spark`` runs the
steps as a Spark job.

The steps, each a pure function of its batch::

    split_files(files)                 # (path, content) -> pieces: (path, line, index, raw)
    split_range(path, start, end, data)  # a byte range of a large NDJSON file -> its pieces
    ties_batch(pieces)                 # -> each piece with what ties its record to others
    verify_batch(pieces, keys=...)     # -> records columns, each record verified alone
    groups(ties)                       # (record_key, tie) -> (record_key, group)
    analyse_group(pieces, keys=...)    # every piece of one group -> its tables
    actions_batch(pieces, keys=...)    # the actions rows of whole groups

What a step verifies with is what ``aeplens check`` takes: ``keys`` (keyring files),
``tsa_certs`` (PEM roots an RFC 3161 token must chain to: only then is its time proven),
``anchors`` (anchor files), ``leases`` (lease files) — each a path, a ``(name, bytes)``
pair read elsewhere (what a Spark job broadcasts) or a list of either — and the
environment's ``WASMAGENT_AEP_PUBKEY_<KEYID>`` variables (``environment``: read from
``os.environ`` here unless given, as ``(name, value)`` pairs). Build them once with
``trust(...)`` and pass ``trust=`` to every step; every row returned carries their
fingerprints (``keyring``, ``lease_files``).
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
    "trust",
    "environment_keys",
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


#: What every key variable's name starts with (``WASMAGENT_AEP_PUBKEY_<KEYID>``).
KEY_VARIABLE_PREFIX = "WASMAGENT_AEP_PUBKEY_"


def environment_keys(environ=None) -> list[tuple[str, str]]:
    """The key variables of ``environ`` (``os.environ`` when not given), as ``(name,
    value)`` pairs: the one place the Python package reads the environment."""
    environ = os.environ if environ is None else environ
    return sorted((k, v) for k, v in environ.items() if k.startswith(KEY_VARIABLE_PREFIX))


def trust(keys: Files = None, leases: Files = None, tsa_certs: Files = None, anchors: Files = None,
          environment=None, profile: str = "forensic") -> dict:
    """What the steps verify with, read once: keyring, lease, TSA-root and anchor files
    (paths or ``(name, bytes)`` pairs), the environment's key variables (``(name, value)``
    pairs; read from ``os.environ`` when ``None``) and the profile (``forensic`` or
    ``current``). Plain data: a Spark job builds it on the driver and broadcasts it."""
    return {
        "keys": read_files(keys),
        "leases": read_files(leases),
        "tsa_certs": read_files(tsa_certs),
        "anchors": read_files(anchors),
        "environment": environment_keys() if environment is None else [(str(k), str(v)) for k, v in environment],
        "profile": profile,
    }


def _trust(given, keys, leases, profile, tsa_certs=None, anchors=None) -> dict:
    """``given`` (from ``trust(...)``), else one built from the loose keywords."""
    if given is not None:
        return given
    return trust(keys, leases, tsa_certs, anchors, None, profile)


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
    """Whole files (``path`` string, ``content`` binary) cut into
    the bytes of their records, as ``aeplens`` reads each file: one row per piece
    (``path``, ``line``, ``index`` — null on an NDJSON line —, ``raw`` and the ``offset``
    of its first byte in the file) and one row per
    file (``raw`` null) with its ``sha256``, ``format``, ``bytes`` and ``file_errors``."""
    return pa.record_batch(_aeplens.split_files(_batch(files)))


def ndjson_from_head(head: bytes) -> bool:
    """True when a file starting with ``head`` is NDJSON whatever follows (its first line
    with content is a whole JSON value and more follows): only such a file can be cut
    into ranges (``split_range``); any other is read whole (``split_files``)."""
    return _aeplens.ndjson_from_head(head)


def split_range(path: str, start: int, end: int, data: bytes) -> pa.RecordBatch:
    """The byte range ``start:end`` of the NDJSON file ``path`` cut into the pieces of the
    lines that start in it (a line belongs to the range holding its first byte), in
    ``split_files``' columns: ``data`` is the file from byte ``start - 1`` (0 for the
    first range) through the newline ending the line that holds byte ``end - 1``, or to
    the end of the file. A piece's ``line`` counts from the range's start (its ``offset``
    is in the file); the range's
    own row (``raw`` null) gives its ``newlines``: a piece's line in the file is its
    ``line`` plus the ``newlines`` of the file's ranges before it."""
    return pa.record_batch(_aeplens.split_range(path, start, end, data))


def ties_batch(pieces) -> pa.RecordBatch:
    """Pieces (``path``, ``line``, ``raw``; ``index`` when known) -> the same rows, each
    with what ties its record to others, from its bytes alone (parsed and hashed, not
    verified — ``analyse_group`` verifies): ``canonical_sha256``, ``run_id``, ``ties``,
    ``action_ids``, ``parent_ids``, or the ``load_error`` of a piece that is no record.
    Rows without ``raw`` pass through."""
    return pa.record_batch(_aeplens.ties_batch(_batch(pieces)))


def verify_batch(pieces, keys: Files = None, leases: Files = None, profile: str = "forensic", *,
                 tsa_certs: Files = None, anchors: Files = None, trust: dict = None) -> pa.RecordBatch:
    """Pieces (``path``, ``line``, ``raw``; ``index`` when known) -> one row per record
    with the ``records`` columns of docs/tables.md, each record verified alone: ``chain``
    is ``not-evaluated``, ``chain_link`` null and ``semantic`` ``fail`` or
    ``not-evaluated`` (they need the other records: ``analyse_group``). Then
    ``load_error`` (a row per piece that is no record: a bad line never raises),
    ``ties``, ``action_ids``, ``parent_ids`` (what groups it with other records),
    ``keyring`` and ``lease_files``."""
    return pa.record_batch(
        _aeplens.verify_batch(_batch(pieces), _trust(trust, keys, leases, profile, tsa_certs, anchors))
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


def analyse_group(pieces, keys: Files = None, leases: Files = None, profile: str = "forensic", *,
                  tsa_certs: Files = None, anchors: Files = None, trust: dict = None) -> dict:
    """Every piece of one group (``path``, ``input`` — the file's position among the
    inputs —, ``line``, ``index``, ``raw``; ``canonical_sha256`` when the pieces were read
    before: a ``ValueError`` when one no longer holds that record) -> its tables, ``{name: RecordBatch}`` for
    ``GROUP_TABLES``: the rows ``aeplens export --format parquet`` writes for these
    records, each with ``keyring`` and ``lease_files``. A group is one run, or runs that
    a chain, a lease, a causal chain or a parent named across runs ties together."""
    out = _aeplens.analyse_group(_batch(pieces), _trust(trust, keys, leases, profile, tsa_certs, anchors))
    return {name: pa.record_batch(batch) for name, batch in out}


def actions_batch(pieces, keys: Files = None, leases: Files = None, profile: str = "forensic", *,
                  tsa_certs: Files = None, anchors: Files = None, trust: dict = None) -> pa.RecordBatch:
    """The ``actions`` rows of pieces holding whole groups (``analyse_group``)."""
    given = _trust(trust, keys, leases, profile, tsa_certs, anchors)
    return analyse_group(pieces, trust=given)["actions"]


def manifest(inputs, tables: dict, keys: Files = None, leases: Files = None, profile: str = "forensic", *,
             tsa_certs: Files = None, anchors: Files = None, trust: dict = None):
    """The manifest of tables written in parts: ``inputs`` (``path``, ``sha256``,
    ``bytes``), ``tables`` ``{name: (rows, [files])}``. Returns ``(set_key, text)``; the
    tables' ``set=`` partition is ``set_key[:16]``."""
    return _aeplens.manifest(_batch(inputs), tables, _trust(trust, keys, leases, profile, tsa_certs, anchors))
