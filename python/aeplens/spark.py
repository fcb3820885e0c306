"""python -m aeplens.spark: a fleet's AEP evidence verified as a Spark job.

    python -m aeplens.spark --keys KEYS [--tsa-certs PEM] [--anchors FILE] [--leases FILE] --out OUT [--master URL] INPUT...

INPUT: files, directories (their .json, .jsonl and .ndjson files, recursively) or globs,
local or on any Hadoop-compatible file system (hdfs://, s3a://, abfss://, gs://). OUT gets
the Parquet tables of ``aeplens export --format parquet`` (docs/tables.md) — the same rows —
partitioned ``set=<evidence set key>`` and written by Spark's committer (``_SUCCESS``),
with ``OUT/manifest/set=<key>.json``.

The steps (docs/spark.md):

1. ``binaryFile`` → ``split_files`` (``mapInArrow``): each file cut into the bytes of its
   records as aeplens reads it (one row per NDJSON line or array element), exact bytes,
   exact line numbers. ``spark.read.text`` is not used: it decodes UTF-8 (repairing what
   the verifier must see broken) and numbers no lines.
2. ``verify_batch`` (``mapInArrow``, spread over every core): each record verified alone,
   with what ties it to others.
3. The ties as engine joins (a parent named in another run: an anti-join, then a join);
   the groups they make (union–find on the driver: 16 bytes a tie).
4. ``analyse_group`` (``groupBy("group").applyInArrow``): each group's tables, by the
   code ``aeplens export`` runs.
5. One write per table, into its ``set=<key>`` partition (other evidence sets under OUT
   stay), each with the committer's ``_SUCCESS``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc

import aeplens

#: Spark's schema of each step's batches (names and types of the Rust side's).
PIECES = "path string, line bigint, index bigint, raw binary, sha256 string, format string, bytes bigint, file_errors bigint"
EVIDENCE_EXTENSIONS = (".json", ".jsonl", ".ndjson")


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
    """The schemas of verify_batch and analyse_group's tables, from an empty run."""
    empty = pa.record_batch(
        {
            "path": pa.array([], pa.string()),
            "input": pa.array([], pa.int64()),
            "line": pa.array([], pa.int64()),
            "index": pa.array([], pa.int64()),
            "raw": pa.array([], pa.binary()),
        }
    )
    verified = aeplens.verify_batch(empty, trust=trust).schema
    tables = {n: b.schema for n, b in aeplens.analyse_group(empty, trust=trust).items()}
    return verified, tables


def _union(tables: dict) -> pa.Schema:
    """One schema holding every table's columns (a name has one type in all), and
    ``table``."""
    fields = {"table": pa.field("table", pa.string())}
    for schema in tables.values():
        for f in schema:
            if f.name in fields and fields[f.name].type != f.type:
                raise TypeError(f"column {f.name} has two types")
            fields.setdefault(f.name, f)
    return pa.schema(list(fields.values()))


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
        tsa_certs=None, anchors=None):
    """Runs the job on a Spark session; returns the summary (records, load errors,
    actions, findings, groups, seconds). What it verifies with is read here, on the
    driver, and broadcast: keyring, lease, TSA-root and anchor files and the driver's
    key variables (``aeplens.trust``). ``partitions``: how many parts the records are
    verified and analysed in (default: twice the cores Spark has)."""
    from pyspark.sql import functions as F
    from pyspark import StorageLevel
    from pyspark.sql.window import Window

    started = time.monotonic()
    trust = aeplens.trust(keys, leases, tsa_certs, anchors, None, profile)
    verified_schema, table_schemas = _schemas(trust)
    union = _union(table_schemas)

    uris = _expand(spark, inputs)
    shown = [_shown(u) for u in uris]
    names = dict(zip(uris, shown))

    def split(batches):
        for files in batches:
            paths = [names.get(p, _shown(p)) for p in files.column("path").to_pylist()]
            files = pa.record_batch({"path": pa.array(paths, pa.string()), "content": files.column("content")})
            yield aeplens.split_files(files)

    files = spark.read.format("binaryFile").load(uris).select("path", "content")
    pieces = files.mapInArrow(split, PIECES).persist(StorageLevel.MEMORY_AND_DISK)
    file_rows = pieces.where(F.col("raw").isNull())

    def verify(batches):
        for b in batches:
            yield aeplens.verify_batch(b, trust=trust)

    cores = spark.sparkContext.defaultParallelism if _hadoop(spark) else os.cpu_count()
    parallelism = partitions or 2 * cores
    spark.conf.set("spark.sql.shuffle.partitions", str(parallelism))
    lines = pieces.where(F.col("raw").isNotNull()).select("path", "line", "index", "raw")
    verified = (
        lines.repartition(parallelism)
        .mapInArrow(verify, _ddl(verified_schema))
        .withColumn("record_key", F.xxhash64("path", "line"))
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    records = verified.where(F.col("load_error").isNull())
    # An NDJSON record's position in its file (the records on lines before it), and the
    # record before it there (what its `chain_link` compares with).
    in_file = Window.partitionBy("path").orderBy("line")
    records = records.withColumn(
        "record_index", F.coalesce("record_index", F.row_number().over(in_file) - 1)
    ).withColumn("file_previous", F.lag("canonical_sha256").over(in_file))

    # The ties, and a parent named in another run (groups.rs's rule, as joins).
    ties = records.select("record_key", F.explode("ties").alias("tie"))
    run = F.coalesce(F.col("run_id"), F.lit(""))
    asked = records.select("record_key", run.alias("run"), F.explode("parent_ids").alias("id"))
    held = records.select("record_key", run.alias("run"), F.explode("action_ids").alias("id"))
    dangling = asked.join(held.select("run", "id").distinct(), ["run", "id"], "left_anti")
    wanted = dangling.select("id").distinct()
    parent_tie = F.xxhash64(F.lit("parent"), F.col("id")).alias("tie")
    ties = ties.unionByName(dangling.select("record_key", parent_tie)).unionByName(
        held.join(wanted, "id").select("record_key", parent_tie)
    )
    grouped = aeplens.groups(ties.toArrow())
    log(f"aeplens.spark: {grouped.num_rows} records in {len(pc.unique(grouped.column('group')))} groups")
    groups = spark.createDataFrame(pa.Table.from_batches([grouped]))

    keyed = records.select("path", "line", "record_index", "file_previous", "record_key").join(
        groups, "record_key"
    )
    order = spark.createDataFrame([(s, i) for i, s in enumerate(shown)], "path string, input bigint")
    work = (
        lines.join(keyed, ["path", "line"])
        .join(file_rows.select("path", "format"), "path")
        .join(F.broadcast(order), "path")
        .select(
            "group", "path", "input", "format", "line",
            F.col("record_index").alias("index"), "raw", "file_previous",
        )
    )

    def analyse(table):
        out = aeplens.analyse_group(table.drop_columns(["group"]), trust=trust)
        parts = []
        for name, batch in out.items():
            t = pa.Table.from_batches([batch])
            columns = {f.name: t.column(f.name) if f.name in t.column_names else pa.nulls(t.num_rows, f.type) for f in union}
            columns["table"] = pa.array([name] * t.num_rows, pa.string())
            parts.append(pa.table(columns, schema=union))
        return pa.concat_tables(parts)

    made = work.groupBy("group").applyInArrow(analyse, _ddl(union)).persist(StorageLevel.MEMORY_AND_DISK)

    # The inputs table: what each file is, and how many records and load errors it gave.
    counts = verified.groupBy("path").agg(
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
    read = set(inputs_arrow.column("path").to_pylist())
    missing = [u for u in uris if names[u] not in read]
    # Spark's file sources skip empty files: they still are inputs, said so as aeplens
    # says it (split_files on no bytes).
    empty = [u for u in missing if _length(spark, u) == 0]
    if len(empty) < len(missing):
        lost = ", ".join(names[u] for u in missing if u not in empty)
        raise SystemExit(f"aeplens.spark: not read: {lost}")
    if empty:
        rows = aeplens.split_files(
            pa.record_batch({"path": [names[u] for u in empty], "content": pa.array([b""] * len(empty), pa.binary())})
        )
        zero = pa.array([0] * rows.num_rows, pa.int64())
        extra = pa.table(
            [rows.column(c) for c in ("path", "sha256", "format", "bytes")] + [zero, rows.column("file_errors")],
            schema=inputs_arrow.schema,
        )
        inputs_arrow = pa.concat_tables([inputs_arrow, extra])
    # In the order the inputs were given, as `aeplens export` lists them.
    inputs_arrow = inputs_arrow.take(pc.index_in(pa.array(shown), value_set=inputs_arrow.column("path")))
    set_key, _ = aeplens.manifest(inputs_arrow, {}, trust=trust)
    partition = set_key[:16]

    def write(df, name):
        # This evidence set's partition only (others under OUT stay), with the
        # committer's _SUCCESS.
        df.write.mode("overwrite").parquet(f"{out}/{name}/set={partition}")

    write(spark.createDataFrame(inputs_arrow), "inputs")
    rows = {"inputs": inputs_arrow.num_rows}
    for name, schema in table_schemas.items():
        columns = [f.name for f in schema if f.name not in ("keyring", "lease_files")]
        table = made.where(F.col("table") == name).select(*columns)
        write(table, name)
    for name, n in made.groupBy("table").count().collect():
        rows[name] = n
    # No telemetry in the job: the spans table is written empty (one file, its schema).
    spans = spark.createDataFrame([], _ddl(_spans_schema()))
    write(spans.coalesce(1), "spans")
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
        "findings": made.where(F.col("table") == "findings").select("finding_key").distinct().count(),
        "groups": len(pc.unique(grouped.column("group"))),
        "set": partition,
        "seconds": round(time.monotonic() - started, 1),
    }
    pieces.unpersist()
    verified.unpersist()
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
                        help="parts the records are verified and analysed in (default: twice the cores Spark has)")
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
                tsa_certs=args.tsa_certs, anchors=args.anchors)
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
