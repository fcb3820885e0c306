"""python -m aeplens.spark: a fleet's AEP evidence verified as a Spark job.

    python -m aeplens.spark --keys KEYS [--tsa-certs PEM] [--anchors FILE] [--leases FILE] --out OUT [--master URL] [--range-size SIZE] [--bytes-from files|shuffle] INPUT...

INPUT: files, directories (their .json, .jsonl and .ndjson files, recursively) or globs,
local or on any Hadoop-compatible file system (hdfs://, s3a://, abfss://, gs://). OUT gets
the Parquet tables of ``aeplens export --format parquet`` (docs/tables.md) — the same rows —
partitioned ``set=<evidence set key>`` and written by Spark's committer (``_SUCCESS``),
with ``OUT/manifest/set=<key>.json``.

The steps (docs/spark.md), no task holding a large file whole:

1. Scan: an NDJSON file larger than ``--range-size`` (``ndjson_from_head``) is read once
   by one task, a range at a time, for its SHA-256 and the newlines in each range.
2. Read (``mapInArrow``, each task its share of the ranges, one at a time):
   ``split_range`` — the range cut into the bytes of the records whose lines start in it,
   exact bytes, exact line numbers, where each starts in the file — or, for any other
   file, ``split_files`` on the whole file; then ``ties_batch``: each record parsed and
   hashed for what ties it to others (verified once, in step 4). The bytes stay in the
   worker. ``spark.read.text`` is not used: it decodes UTF-8 (repairing what the verifier
   must see broken) and numbers no lines.
3. The ties as engine joins (a parent named in another run); the groups they make
   (union–find on the driver: 16 bytes a tie).
4. ``analyse_group`` (``groupBy("group").applyInArrow``): each group's records' bytes read
   where they lie (``--bytes-from files``) or shuffled to it (``shuffle``), then its
   tables, by the code ``aeplens export`` runs, leaving the task as Arrow IPC streams.
5. Once every group is analysed, the tables written side by side, each into its
   ``set=<key>`` partition (other evidence sets under OUT stay) with the committer's
   ``_SUCCESS``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc

import aeplens

EVIDENCE_EXTENSIONS = (".json", ".jsonl", ".ndjson")
#: The bytes of a range a task reads of a large NDJSON file (``--range-mb``).
RANGE_BYTES = 32 << 20
#: Pieces of one file a group's task reads in one span when no more than this lies
#: between them.
SPAN_GAP_BYTES = 64 << 10
#: What is read of a file larger than a range to see whether it is NDJSON.
HEAD_BYTES = 1 << 20
#: Rows in a batch the JVM holds whole: a cached batch, an Arrow batch to or from Python,
#: a group's table stream (1,000 records are about 5 MB of evidence).
BATCH_ROWS = 1000
#: A group's tables as Arrow IPC streams are LZ4-compressed: the cache that every table's
#: write reads holds a fraction of their bytes.
IPC_COMPRESSION = "lz4"


def _ddl(schema: pa.Schema) -> str:
    """A pyarrow schema as Spark DDL."""
    names = {
        pa.string(): "string",
        pa.int64(): "bigint",
        pa.float64(): "double",
        pa.bool_(): "boolean",
        pa.binary(): "binary",
    }

    def kind(t):
        if pa.types.is_list(t):
            return f"array<{kind(t.value_type)}>"
        return names[t]

    return ", ".join(f"`{f.name}` {kind(f.type)}" for f in schema)


def _schemas(trust):
    """The schemas of the read step's rows (``split_range`` then ``ties_batch``) and of
    analyse_group's tables, from an empty run."""
    empty = pa.record_batch(
        {
            "path": pa.array([], pa.string()),
            "input": pa.array([], pa.int64()),
            "line": pa.array([], pa.int64()),
            "index": pa.array([], pa.int64()),
            "raw": pa.array([], pa.binary()),
        }
    )
    read = aeplens.ties_batch(aeplens.split_range("", 0, 0, b"")).schema
    tables = {n: b.schema for n, b in aeplens.analyse_group(empty, trust=trust).items()}
    return read, tables


def _hadoop(spark):
    """The JVM and Hadoop configuration of a classic session; ``None`` under Spark Connect
    (Sail), where the driver reads and writes local paths itself."""
    try:
        return spark.sparkContext._jvm, spark.sparkContext._jsc.hadoopConfiguration()
    except Exception:  # Spark Connect has no SparkContext
        return None


def _expand_local(inputs):
    """``_expand`` without Hadoop: local files, directories and globs."""
    import glob

    out = []
    for given in inputs:
        matches = sorted(glob.glob(given)) or ([given] if os.path.exists(given) else [])
        if not matches:
            raise SystemExit(f"aeplens.spark: {given}: no such file or directory")
        for m in matches:
            if os.path.isdir(m):
                found = [
                    os.path.join(d, f)
                    for d, _, files in os.walk(m)
                    for f in files
                    if f.lower().endswith(EVIDENCE_EXTENSIONS)
                ]
                out.extend("file:" + os.path.abspath(f) for f in sorted(found))
            else:
                out.append("file:" + os.path.abspath(m))
    return out


def _expand(spark, inputs):
    """The input files in the order ``aeplens export`` reads them: each INPUT as given,
    a directory's evidence files and a glob's matches in sorted order. Returns the
    qualified paths."""
    hadoop = _hadoop(spark)
    if hadoop is None:
        return _expand_local(inputs)
    jvm, conf = hadoop
    out = []
    for given in inputs:
        path = jvm.org.apache.hadoop.fs.Path(given)
        fs = path.getFileSystem(conf)
        statuses = fs.globStatus(path)
        if statuses is None or len(statuses) == 0:
            raise SystemExit(f"aeplens.spark: {given}: no such file or directory")
        for status in sorted(statuses, key=lambda s: s.getPath().toString()):
            if status.isDirectory():
                found = []
                it = fs.listFiles(status.getPath(), True)
                while it.hasNext():
                    p = it.next().getPath().toString()
                    if p.lower().endswith(EVIDENCE_EXTENSIONS):
                        found.append(p)
                out.extend(sorted(found))
            else:
                out.append(status.getPath().toString())
    return out


def _shown(uri: str) -> str:
    """A file's name in the tables: a local file by its path, anything else by its URI."""
    if uri.startswith("file:"):
        rest = uri[len("file:") :]
        return "/" + rest.lstrip("/") if rest.startswith("/") else rest
    return uri


def _local(path: str):
    """The local path a URI or path names, or ``None`` for another file system."""
    if path.startswith("file:"):
        return _shown(path)
    return None if "://" in path else os.path.abspath(path)


def _length(spark, uri: str) -> int:
    """A file's size in bytes."""
    local = _local(uri)
    if local is not None:
        return os.path.getsize(local)
    jvm, conf = _hadoop(spark)
    p = jvm.org.apache.hadoop.fs.Path(uri)
    return p.getFileSystem(conf).getFileStatus(p).getLen()


def _open(uri: str):
    """A file opened for reading on a worker: a local one as any file, anything else
    through pyarrow's file systems (S3, GCS, HDFS, Azure; ``s3a://`` read as ``s3://``)."""
    local = _local(uri)
    if local is not None:
        return open(local, "rb")
    import pyarrow.fs

    for hadoop, arrow in (("s3a://", "s3://"), ("s3n://", "s3://")):
        if uri.startswith(hadoop):
            uri = arrow + uri[len(hadoop):]
    fs, path = pyarrow.fs.FileSystem.from_uri(uri)
    return fs.open_input_file(path)


def _scan(uri: str, range_bytes: int):
    """One pass over a file cut into ranges: its SHA-256 and the newlines in each range
    (what numbers a range's lines in the file), one range in memory at a time."""
    import hashlib

    sha, newlines = hashlib.sha256(), []
    with _open(uri) as f:
        while True:
            chunk = f.read(range_bytes)
            while chunk and len(chunk) < range_bytes:  # a short read before the end
                more = f.read(range_bytes - len(chunk))
                if not more:
                    break
                chunk += more
            if not chunk:
                break
            sha.update(chunk)
            newlines.append(chunk.count(b"\n"))
    return sha.hexdigest(), newlines


def _read_range(uri: str, start: int, end: int) -> bytes:
    """What ``aeplens.split_range`` takes for ``start:end``: the file from byte
    ``start - 1`` through the newline ending the line that holds byte ``end - 1``."""
    with _open(uri) as f:
        first = max(start - 1, 0)
        f.seek(first)
        data = bytearray(f.read(end - first))
        while not data.endswith(b"\n"):
            more = f.read(1 << 16)
            if not more:
                break
            newline = more.find(b"\n")
            data += more if newline < 0 else more[: newline + 1]
        return bytes(data)


def _read_pieces(uri: str, places):
    """The bytes at ``places`` (``(offset, length)`` pairs in offset order) of a file
    opened once: pieces at most ``SPAN_GAP_BYTES`` apart are read in one span."""
    out = []
    with _open(uri) as f:
        k = 0
        while k < len(places):
            start, end, j = places[k][0], sum(places[k]), k + 1
            while j < len(places) and places[j][0] - end <= SPAN_GAP_BYTES:
                end, j = max(end, sum(places[j])), j + 1
            f.seek(start)
            span = f.read(end - start)
            if len(span) < end - start:
                raise RuntimeError(f"aeplens.spark: {_shown(uri)} changed while the job read it "
                                   f"(shorter than byte {end})")
            out.extend(span[offset - start:offset - start + length] for offset, length in places[k:j])
            k = j
    return out


def _read(uri: str, n: int = None) -> bytes:
    """A file's first ``n`` bytes (fewer when it is shorter), or all of it, read as the
    workers read it."""
    with _open(uri) as f:
        return f.read(n)


def _write_text(spark, path: str, text: str):
    """Writes a small text file: a local one as any file (no .crc beside it), anything
    else through Hadoop's file system."""
    local = _local(path)
    if local is not None:
        os.makedirs(os.path.dirname(local), exist_ok=True)
        with open(local, "w", encoding="utf-8") as f:
            f.write(text)
        return
    jvm, conf = _hadoop(spark)
    p = jvm.org.apache.hadoop.fs.Path(path)
    out = p.getFileSystem(conf).create(p, True)
    out.write(bytearray(text.encode("utf-8")))
    out.close()


def _parts(spark, path: str):
    """The names of the Parquet files in a directory."""
    local = _local(path)
    if local is not None:
        names = os.listdir(local) if os.path.isdir(local) else []
        return sorted(n for n in names if n.endswith(".parquet"))
    jvm, conf = _hadoop(spark)
    p = jvm.org.apache.hadoop.fs.Path(path)
    fs = p.getFileSystem(conf)
    if not fs.exists(p):
        return []
    return sorted(s.getPath().getName() for s in fs.listStatus(p) if s.getPath().getName().endswith(".parquet"))


def run(spark, inputs, out, keys=None, leases=None, profile="forensic", partitions=None, log=print,
        tsa_certs=None, anchors=None, range_bytes=RANGE_BYTES, bytes_from=None):
    """Runs the job on a Spark session; returns the summary (records, load errors,
    actions, findings, groups, seconds). What it verifies with is read here, on the
    driver, and broadcast: keyring, lease, TSA-root and anchor files and the driver's
    key variables (``aeplens.trust``). ``partitions``: how many tasks the files are read
    in and parts the records are analysed in (default: twice the cores Spark has). ``range_bytes``: the size of the
    ranges an NDJSON file larger than one is cut into, read one at a time.
    ``bytes_from``: how a group's task gets its records' bytes — ``"files"``, read where
    they lie, or ``"shuffle"``, read again with their ranges and shuffled to it
    (default: ``"files"`` when every input is a local or HDFS file, where reading a
    piece is cheap; ``"shuffle"`` on an object store, where each read is a request)."""
    from pyspark.sql import functions as F
    from pyspark import StorageLevel
    from pyspark.sql.window import Window

    started = time.monotonic()
    trust = aeplens.trust(keys, leases, tsa_certs, anchors, None, profile)
    read_schema, table_schemas = _schemas(trust)

    uris = _expand(spark, inputs)
    if bytes_from is None:
        bytes_from = "files" if all(_local(u) is not None or u.startswith("hdfs:") for u in uris) else "shuffle"
    if bytes_from not in ("files", "shuffle"):
        raise ValueError(f"bytes_from {bytes_from!r}: expected \"files\" or \"shuffle\"")
    shown = [_shown(u) for u in uris]
    sizes = [_length(spark, u) for u in uris]
    # An NDJSON file larger than a range is cut into ranges, each read apart; any other
    # file is read whole.
    cut = [
        i for i, (u, size) in enumerate(zip(uris, sizes))
        if size > range_bytes and aeplens.ndjson_from_head(_read(u, HEAD_BYTES))
    ]
    cores = spark.sparkContext.defaultParallelism if _hadoop(spark) else os.cpu_count()
    parallelism = partitions or 2 * cores
    spark.conf.set("spark.sql.shuffle.partitions", str(parallelism))
    # The steps' rows come from a few task numbers (``spark.range``): the planner would
    # take them for small tables and broadcast them whole. Only a table measured small as
    # it runs (adaptive execution) is broadcast.
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    spark.conf.set("spark.sql.adaptive.autoBroadcastJoinThreshold", "10MB")
    # A cached batch, and an Arrow batch to Python, is built whole in a task's memory:
    # 1,000 records (5 MB of evidence), not Spark's 10,000, so that the records' bytes
    # fit Spark's default memory.
    spark.conf.set("spark.sql.inMemoryColumnarStorage.batchSize", str(BATCH_ROWS))
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(BATCH_ROWS))

    # 1. The files cut into ranges: each one's SHA-256 and the newlines in each range, in
    # one pass a file (one range in memory at a time).
    def scan(batches):
        for b in batches:
            for i in b.column("id").to_pylist():
                sha256, newlines = _scan(uris[cut[i]], range_bytes)
                yield pa.record_batch({"id": [i], "sha256": [sha256], "newlines": [newlines]},
                                      schema=pa.schema([("id", pa.int64()), ("sha256", pa.string()),
                                                        ("newlines", pa.list_(pa.int64()))]))

    scanned = {}
    if cut:
        rows = spark.range(0, len(cut), 1, min(len(cut), parallelism)).mapInArrow(
            scan, "id bigint, sha256 string, newlines array<bigint>").collect()
        scanned = {cut[r["id"]]: (r["sha256"], r["newlines"]) for r in rows}
        ranges = sum(len(n) for _, n in scanned.values())
        log(f"aeplens.spark: {len(cut)} of {len(uris)} files cut into {ranges} ranges of {range_bytes} bytes")

    # 2. Read: each range (its lines numbered in the file) or whole file cut into the
    # bytes of its records, each with what ties it to others (``ties_batch``: parsed and
    # hashed; every record is verified once, in step 4).
    # What is read apart: (file, start, end, the newlines before start); end None: the
    # whole file. Each task reads its share of them, one at a time.
    reads = []
    for i, uri in enumerate(uris):
        if i in scanned:
            before = 0
            for k, newlines in enumerate(scanned[i][1]):
                start = k * range_bytes
                reads.append((i, start, min(start + range_bytes, sizes[i]), before))
                before += newlines
        else:
            reads.append((i, 0, None, 0))

    def pieces_of(t):
        """The pieces of read ``t`` (``split_range`` or ``split_files``), lines numbered in
        the file: the same rows, in the same order, each time its bytes are read."""
        i, start, end, before = reads[t]
        if end is None:
            content = pa.array([_read(uris[i])], pa.binary())
            return aeplens.split_files(pa.record_batch({"path": [shown[i]], "content": content}))
        pieces = aeplens.split_range(shown[i], start, end, _read_range(uris[i], start, end))
        line = pc.add(pieces.column("line"), before)
        return pieces.set_column(pieces.schema.get_field_index("line"), "line", line)

    def read(batches):
        for b in batches:
            for t in b.column("id").to_pylist():
                tied = aeplens.ties_batch(pieces_of(t))
                # A row's key is its read and its place in the read's rows: exact (no
                # hash to collide), and what finds its bytes when they are read again.
                key = pc.add(pa.array(range(tied.num_rows), pa.int64()), t << 32)
                raw = tied.column("raw")
                tied = (tied.append_column("piece", pc.is_valid(raw))
                        .append_column("length", pc.binary_length(raw).cast(pa.int64()))
                        .drop_columns(["raw"]).append_column("record_key", key))
                # In slices the size of a cached batch: the JVM holds one at a time.
                for at in range(0, tied.num_rows, BATCH_ROWS):
                    yield tied.slice(at, BATCH_ROWS)

    # What the read gives but the records' bytes (a few hundred bytes a record, in memory
    # while it fits): the bytes stay in the workers (from an object store they enter the
    # JVM once, shuffled to their groups).
    read_schema = (pa.schema([f for f in read_schema if f.name != "raw"])
                   .append(pa.field("piece", pa.bool_())).append(pa.field("length", pa.int64()))
                   .append(pa.field("record_key", pa.int64())))
    meta = (
        spark.range(0, len(reads), 1, max(min(len(reads), parallelism), 1))
        .mapInArrow(read, _ddl(read_schema))
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    log(f"aeplens.spark: {meta.where(F.col('piece')).count()} pieces read in {len(reads)} ranges and files")
    # A file read whole has its own row; one cut into ranges gets it from its scan.
    whole_files = meta.where(F.col("format").isNotNull()).select(
        "path", "sha256", "format", "bytes", "file_errors")
    scanned_files = spark.createDataFrame(
        [(shown[i], sha256, "ndjson", sizes[i], 0) for i, (sha256, _) in scanned.items()],
        "path string, sha256 string, format string, bytes bigint, file_errors bigint",
    )
    file_rows = whole_files.unionByName(scanned_files)
    pieces = meta.where(F.col("piece")).select(
        "path", "line", "index", "canonical_sha256", "run_id", "load_error", "ties",
        "action_ids", "parent_ids", "record_key", "offset", "length",
    )
    records = pieces.where(F.col("load_error").isNull())
    # An NDJSON record's position in its file (the records on lines before it), and the
    # record before it there (what its `chain_link` compares with): a window over the
    # records' keys and hashes, not their bytes.
    in_file = Window.partitionBy("path").orderBy("line")
    place = records.select(
        "record_key", "line",
        F.coalesce("index", F.row_number().over(in_file) - 1).alias("index"),
        F.lag("canonical_sha256").over(in_file).alias("file_previous"),
        "canonical_sha256", "offset", "length",
    )

    # The ties, and a parent named in another run (groups.rs's rule, as joins): a record
    # names only the parents it does not hold itself, so the names are few and the joins
    # broadcast them against the ids every record holds (unless they are many).
    ties = records.select("record_key", F.explode("ties").alias("tie"))
    run = F.coalesce(F.col("run_id"), F.lit(""))
    asked = records.select("record_key", run.alias("run"), F.explode("parent_ids").alias("id"))
    held = records.select("record_key", run.alias("run"), F.explode("action_ids").alias("id"))
    named = asked.select("run", "id").distinct().persist(StorageLevel.MEMORY_AND_DISK)
    few = named.count() <= 100_000  # about 10 MB to broadcast

    def small(df):
        return F.broadcast(df) if few else df

    found = held.join(small(named), ["run", "id"], "left_semi").select("run", "id").distinct()
    dangling = asked.join(small(found), ["run", "id"], "left_anti")
    wanted = dangling.select("id").distinct()
    parent_tie = F.xxhash64(F.lit("parent"), F.col("id")).alias("tie")
    ties = ties.unionByName(dangling.select("record_key", parent_tie)).unionByName(
        held.join(small(wanted), "id").select("record_key", parent_tie)
    )
    grouped = aeplens.groups(ties.toArrow())
    group_count = len(pc.unique(grouped.column("group")))
    log(f"aeplens.spark: {grouped.num_rows} records in {group_count} groups")
    groups = spark.createDataFrame(pa.Table.from_batches([grouped]))

    # The inputs table: what each file is, and how many records and load errors it gave.
    counts = pieces.groupBy("path").agg(
        F.sum(F.col("load_error").isNull().cast("long")).alias("records"),
        F.sum(F.col("load_error").isNotNull().cast("long")).alias("line_errors"),
    )
    inputs = (
        file_rows.join(counts, "path", "left")
        .select(
            "path",
            "sha256",
            "format",
            "bytes",
            F.coalesce("records", F.lit(0)).alias("records"),
            (F.col("file_errors") + F.coalesce("line_errors", F.lit(0))).alias("load_errors"),
        )
    )
    inputs_arrow = inputs.toArrow()
    # In the order the inputs were given, as `aeplens export` lists them.
    inputs_arrow = inputs_arrow.take(pc.index_in(pa.array(shown), value_set=inputs_arrow.column("path")))

    # Each record's group and place, and where its bytes lie: its read (the key's high
    # half) and file, its offset and length there. Read again, its bytes must still hold
    # the record they held (its canonical hash): ``analyse_group`` fails the job if not.
    assigned = place.join(groups, "record_key")
    read_input = pa.array([r[0] for r in reads], pa.int64())
    file_paths = pa.array(shown, pa.string())
    file_formats = inputs_arrow.column("format").combine_chunks()
    work_schema = pa.schema([
        ("group", pa.int64()), ("path", pa.string()), ("input", pa.int64()), ("format", pa.string()),
        ("line", pa.int64()), ("index", pa.int64()), ("raw", pa.binary()), ("file_previous", pa.string()),
        ("canonical_sha256", pa.string()),
    ])

    def input_of(rows):
        """The file of each of ``rows`` (of ``assigned``): its read's, the key's high half."""
        return read_input.take(pc.shift_right(rows.column("record_key"), 32))

    def placed(rows, raw):
        """What ``analyse_group`` takes: rows of ``assigned`` with their bytes."""
        inputs = input_of(rows)
        return pa.table({
            "group": rows.column("group"), "path": file_paths.take(inputs), "input": inputs,
            "format": file_formats.take(inputs), "line": rows.column("line"),
            "index": rows.column("index"), "raw": raw, "file_previous": rows.column("file_previous"),
            "canonical_sha256": rows.column("canonical_sha256"),
        }, schema=work_schema)

    def fetched(rows):
        """The bytes of ``rows`` read where they lie: each file opened once, pieces close
        together read in one span."""
        inputs = input_of(rows).to_pylist()
        offsets, lengths = rows.column("offset").to_pylist(), rows.column("length").to_pylist()
        raw = [None] * rows.num_rows
        by_file = {}
        for k, i in enumerate(inputs):
            by_file.setdefault(i, []).append(k)
        for i, ks in by_file.items():
            ks.sort(key=offsets.__getitem__)
            found = _read_pieces(uris[i], [(offsets[k], lengths[k]) for k in ks])
            for k, piece in zip(ks, found):
                raw[k] = piece
        return pa.array(raw, pa.binary())

    def reread(batches):
        """Each read's bytes read again, and its records' bytes sent on to their groups."""
        batches = list(batches)
        if not batches:
            return
        rows = pa.Table.from_batches(batches)
        read_of = pc.shift_right(rows.column("record_key"), 32)
        for t in pc.unique(read_of).to_pylist():
            mine = rows.filter(pc.equal(read_of, t))
            at = pc.bit_wise_and(mine.column("record_key"), (1 << 32) - 1)
            pieces = pieces_of(t)
            if pc.max(at).as_py() >= pieces.num_rows:  # what each piece holds, analyse_group checks
                raise RuntimeError(f"aeplens.spark: {shown[reads[t][0]]} changed while the job read it")
            yield from placed(mine, pieces.column("raw").take(at)).to_batches(max_chunksize=BATCH_ROWS)

    if bytes_from == "shuffle":
        # Each read's rows go to the task that reads its bytes again: the bytes enter the
        # JVM once, shuffled to their groups.
        shares = max(min(len(reads), parallelism), 1)
        work = assigned.repartitionByRange(shares, F.shiftright("record_key", 32)).mapInArrow(
            reread, _ddl(work_schema))
    else:
        # Only where the bytes lie goes to the groups; each group's task reads them.
        work = assigned.select("group", "record_key", "line", "index", "file_previous", "canonical_sha256",
                               "offset", "length")

    # Each group's tables leave its task as Arrow IPC streams, one row a table: the JVM
    # moves their bytes and never converts a cell (the wide rows of every table's columns
    # in one schema took most of this step's time).
    # With them, each group's findings (a finding is one group's: its `finding_key` is
    # numbered within the group), on the first row of its findings table.
    def analyse(table):
        if "raw" not in table.column_names:
            table = placed(table, fetched(table))
        out = aeplens.analyse_group(table.drop_columns(["group"]), trust=trust)
        names, rows, findings, streams = [], [], [], []
        options = pa.ipc.IpcWriteOptions(compression=IPC_COMPRESSION)
        for name, whole in out.items():
            found = len(pc.unique(whole.column("finding_key"))) if name == "findings" else 0
            for batch in pa.Table.from_batches([whole]).to_batches(max_chunksize=BATCH_ROWS):
                sink = pa.BufferOutputStream()
                with pa.ipc.new_stream(sink, batch.schema, options=options) as stream:
                    stream.write_batch(batch)
                names.append(name)
                rows.append(batch.num_rows)
                findings.append(found)
                found = 0
                streams.append(sink.getvalue().to_pybytes())
        return pa.table({"table": pa.array(names, pa.string()), "rows": pa.array(rows, pa.int64()),
                         "findings": pa.array(findings, pa.int64()),
                         "arrow": pa.array(streams, pa.binary())})

    # Those rows are large (up to 1,000 table rows each): a cached batch holds 16.
    spark.conf.set("spark.sql.inMemoryColumnarStorage.batchSize", "16")
    made = (
        work.groupBy("group")
        .applyInArrow(analyse, "table string, rows bigint, findings bigint, arrow binary")
        .persist(StorageLevel.DISK_ONLY)
    )

    def rows_of(name, schema):
        """One table's rows, read back from the groups' IPC streams."""
        columns = [f.name for f in schema if f.name not in ("keyring", "lease_files")]

        def decode(batches):
            for b in batches:
                for blob in b.column("arrow"):
                    for batch in pa.ipc.open_stream(blob.as_buffer()):
                        yield batch.select(columns)

        kept = pa.schema([schema.field(c) for c in columns])
        return made.where(F.col("table") == name).select("arrow").mapInArrow(decode, _ddl(kept))

    set_key, _ = aeplens.manifest(inputs_arrow, {}, trust=trust)
    partition = set_key[:16]

    def write(df, name):
        # This evidence set's partition only (others under OUT stay), with the
        # committer's _SUCCESS.
        df.write.mode("overwrite").parquet(f"{out}/{name}/set={partition}")

    # Every group analysed (the cache of their tables made), then the tables written side
    # by side: a write's last tasks leave cores idle that the others take.
    rows = {"inputs": inputs_arrow.num_rows}
    findings = 0
    for name, n, found in made.groupBy("table").agg(F.sum("rows"), F.sum("findings")).collect():
        rows[name] = n
        findings += found
    # No telemetry in the job: the spans table is written empty (one file, its schema).
    spans = spark.createDataFrame([], _ddl(_spans_schema()))
    writes = [(spark.createDataFrame(inputs_arrow), "inputs"), (spans.coalesce(1), "spans")]
    writes += [(rows_of(name, schema), name) for name, schema in table_schemas.items()]
    with ThreadPoolExecutor(len(writes)) as pool:
        for done in [pool.submit(write, df, name) for df, name in writes]:
            done.result()
    tables = {}
    for name in ("inputs", *table_schemas.keys(), "spans"):
        files = _parts(spark, f"{out}/{name}/set={partition}")
        tables[name] = (rows.get(name, 0), [f"{name}/set={partition}/{f}" for f in files])
    _, text = aeplens.manifest(inputs_arrow, tables, trust=trust)
    _write_text(spark, f"{out}/manifest/set={partition}.json", text)
    summary = {
        "files": inputs_arrow.num_rows,
        "records": rows.get("records", 0),
        "load_errors": sum(inputs_arrow.column("load_errors").to_pylist()),
        "actions": rows.get("actions", 0),
        "findings": findings,
        "groups": group_count,
        "set": partition,
        "seconds": round(time.monotonic() - started, 1),
    }
    meta.unpersist()
    named.unpersist()
    made.unpersist()
    return summary


def _spans_schema() -> pa.Schema:
    """The spans table's columns (docs/tables.md): the job joins no telemetry."""
    s, i, d = pa.string(), pa.int64(), pa.float64()
    cols = [
        ("trace_id", s), ("span_id", s), ("parent_span_id", s), ("name", s), ("tool_name", s),
        ("call_id", s), ("run_id", s), ("start_unix_nano", i), ("end_unix_nano", i),
        ("evidence_time_ms", d), ("status", s), ("service", s), ("path", s), ("line", i),
        ("pointer", s), ("join_rule", s), ("action_id", s), ("action_record_sha256", s),
        ("run_capture", s),
    ]
    return pa.schema(cols)


def _size(text: str) -> int:
    """A size in bytes, with an optional K, M or G (KiB, MiB, GiB): ``--range-size``."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    number, unit = (text[:-1], units[text[-1].lower()]) if text[-1:].lower() in units else (text, 1)
    try:
        size = int(number) * unit
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected bytes, e.g. 32M or 65536") from None
    if size < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: at least one byte")
    return size


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m aeplens.spark",
        description="Verify AEP evidence as a Spark job and write the Parquet tables of "
        "`aeplens export --format parquet` (docs/tables.md) with Spark's committer.",
        epilog="examples:\n"
        "  python -m aeplens.spark --keys keys.json --out /tmp/aep --master 'local[*]' evidence/\n"
        "  PYSPARK_PYTHON=./environment/bin/python spark-submit --archives aep-env.tar.gz#environment \\\n"
        "      \"$(python -c 'import aeplens.spark as m; print(m.__file__)')\" --keys keys.json \\\n"
        "      --out s3a://bucket/aep-tables 's3a://bucket/evidence/2026-*/*.ndjson'\n"
        "  (a cluster's workers need the package: docs/spark.md)\n"
        "Query OUT with the recipes of docs/tables.md (DuckDB, Spark SQL, Trino).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--keys", action="append", required=True, metavar="KEYS",
                        help="trusted keys (a keyring JSON file on this machine; repeatable); broadcast to the workers")
    parser.add_argument("--tsa-certs", action="append", metavar="FILE",
                        help="PEM roots an RFC 3161 timestamp token must chain to (repeatable), as "
                        "`aeplens check --tsa-certs`: only then is a record's time proven (the records "
                        "table's proven_time_ms); broadcast to the workers")
    parser.add_argument("--anchors", action="append", metavar="FILE",
                        help="anchor file (repeatable), as `aeplens check --anchors`; broadcast to the workers")
    parser.add_argument("--leases", action="append", metavar="FILE",
                        help="ScopeLease / ApprovalReceipt file (repeatable); broadcast to the workers")
    parser.add_argument("--out", required=True, metavar="OUT",
                        help="where the tables go (a directory or URI); other evidence sets already there stay")
    parser.add_argument("--master", metavar="URL",
                        help="Spark master (local[2], spark://…, yarn); default: what spark-submit or the environment says")
    parser.add_argument("--profile", default="forensic", choices=["forensic", "current"],
                        help="verification profile, as `aeplens --profile` (default: forensic)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for this session (repeatable), e.g. spark.driver.memory=8g")
    parser.add_argument("--partitions", type=int, metavar="N",
                        help="tasks the files are read in, and parts the records are verified and analysed "
                        "in (default: twice the cores Spark has)")
    parser.add_argument("--range-size", type=_size, default=RANGE_BYTES, metavar="SIZE",
                        help="an NDJSON file larger than SIZE bytes (K, M, G: KiB, MiB, GiB) is cut into "
                        "ranges of SIZE at line boundaries, read one at a time, so that no task "
                        f"holds a whole large file (default: {RANGE_BYTES >> 20}M)")
    parser.add_argument("--bytes-from", choices=["files", "shuffle"],
                        help="how each group's task gets its records' bytes: read where they lie in "
                        "their files, or read again with their ranges and shuffled to it "
                        "(default: files for local and HDFS inputs, shuffle on object stores, where "
                        "each read is a request)")
    parser.add_argument("inputs", nargs="+", metavar="INPUT",
                        help="evidence files, directories or globs (any Hadoop-compatible URI)")
    args = parser.parse_args(argv)

    from pyspark.sql import SparkSession

    # Local workers run this interpreter (which has aeplens), not whatever python3 is
    # first on PATH; a cluster says its own (PYSPARK_PYTHON, spark.pyspark.python).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    builder = SparkSession.builder.appName("aeplens")
    if args.master:
        builder = builder.master(args.master)
    for setting in args.conf:
        key, eq, value = setting.partition("=")
        if not eq:
            parser.error(f"--conf {setting!r}: expected KEY=VALUE")
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        s = run(spark, args.inputs, args.out.rstrip("/"), args.keys, args.leases, args.profile,
                args.partitions, log=lambda m: print(m, file=sys.stderr),
                tsa_certs=args.tsa_certs, anchors=args.anchors, range_bytes=args.range_size,
                bytes_from=args.bytes_from)
    finally:
        spark.stop()
    print(
        f"aeplens.spark: {s['files']} files, {s['records']} records, {s['load_errors']} load errors, "
        f"{s['actions']} actions, {s['findings']} findings in {s['groups']} groups -> "
        f"{args.out} (set={s['set']}) in {s['seconds']} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
