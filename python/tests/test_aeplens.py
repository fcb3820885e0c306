"""The Python surface of aeplens, on the repository's reference fixtures: batches in and
out through the Arrow C data interface, a bad line as a row, the keys' fingerprints on
every row, and analyse_group agreeing with the records verified alone."""

import os
import tempfile
import unittest

import pyarrow as pa

import aeplens

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
STORES = os.path.join(ROOT, "tests", "fixtures", "reference-stores")
KEYS = os.path.join(STORES, "keys.json")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def files(*names):
    paths = [os.path.join(STORES, n) for n in names]
    return pa.record_batch({"path": paths, "content": [read(p) for p in paths]})


class OnlyCapsule:
    """An Arrow batch known only by the C data interface (no pyarrow type)."""

    def __init__(self, batch):
        self.batch = batch

    def __arrow_c_array__(self, requested_schema=None):
        return self.batch.__arrow_c_array__(requested_schema)


class Surface(unittest.TestCase):
    def test_split_verify_and_analyse(self):
        pieces = aeplens.split_files(OnlyCapsule(files("three_emitters_one_store.ndjson")))
        self.assertEqual(pieces.num_rows, 10)  # nine lines and the file's own row
        file_row = pieces.filter(pa.compute.is_null(pieces.column("raw")))
        self.assertEqual(file_row.column("format").to_pylist(), ["ndjson"])
        records = aeplens.verify_batch(pieces, keys=KEYS)
        self.assertEqual(records.num_rows, 9)
        self.assertEqual(set(records.column("authenticity").to_pylist()), {"valid"})
        self.assertEqual(set(records.column("chain").to_pylist()), {"not-evaluated"})
        tables = aeplens.analyse_group(pieces, keys=KEYS)
        self.assertEqual(tuple(tables), aeplens.GROUP_TABLES)
        whole = tables["records"]
        self.assertEqual(
            whole.column("canonical_sha256").to_pylist(), records.column("canonical_sha256").to_pylist()
        )
        self.assertIn("mismatch", whole.column("chain_link").to_pylist())  # interleaved emitters
        self.assertEqual(aeplens.actions_batch(pieces, keys=KEYS).num_rows, tables["actions"].num_rows)

    def test_a_bad_line_is_a_row_not_an_exception(self):
        good = read(os.path.join(STORES, "fork_parallel_emit.ndjson"))
        batch = pa.record_batch({"path": ["x.ndjson"], "content": [good + b"{oops\n\xff\n"]})
        records = aeplens.verify_batch(aeplens.split_files(batch), keys=[("keys.json", read(KEYS))])
        errors = [e for e in records.column("load_error").to_pylist() if e]
        self.assertEqual(len(errors), 2, errors)
        self.assertTrue(any("invalid UTF-8" in e for e in errors), errors)
        fingerprints = set(records.column("keyring").to_pylist())
        self.assertEqual(len(fingerprints), 1)
        self.assertIn("fixture-key-1=sha256:", fingerprints.pop())

    def test_ranges_give_the_pieces_of_the_whole_file(self):
        data = read(os.path.join(STORES, "resaved_bom_crlf.ndjson")) + b"{oops\n\xff\n"
        self.assertTrue(aeplens.ndjson_from_head(data[:65536]))
        self.assertFalse(aeplens.ndjson_from_head(b"[" + data))
        whole = aeplens.split_files(pa.record_batch({"path": ["s.ndjson"], "content": [data]}))
        want = [(r["line"], r["raw"]) for r in whole.to_pylist() if r["raw"] is not None]
        placed = [(r["offset"], r["raw"]) for r in whole.to_pylist() if r["raw"] is not None]
        for size in (7, 100, 1000, len(data)):
            got, before = [], 0
            for start in range(0, len(data), size):
                end = min(start + size, len(data))
                stop = data.find(b"\n", end - 1)
                chunk = data[max(start - 1, 0) : len(data) if stop < 0 else stop + 1]
                for r in aeplens.split_range("s.ndjson", start, end, chunk).to_pylist():
                    if r["raw"] is None:
                        before += r["newlines"]
                    else:
                        got.append((r["line"] + before, r["raw"]))
                        self.assertIn((r["offset"], r["raw"]), placed)
            self.assertEqual(got, want, f"ranges of {size} bytes")
        # Each piece says where its bytes lie in the file.
        self.assertEqual([data[o : o + len(raw)] for o, raw in placed], [raw for _, raw in placed])
        tied = aeplens.ties_batch(whole)
        self.assertEqual(tied.num_rows, whole.num_rows)
        errors = [e for e in tied.column("load_error").to_pylist() if e]
        self.assertEqual(len(errors), 2)  # the two bad lines, each a row
        hashes = [h for h in tied.column("canonical_sha256").to_pylist() if h]
        verified = aeplens.verify_batch(whole, keys=KEYS)
        self.assertEqual(sorted(hashes), sorted(h for h in verified.column("canonical_sha256").to_pylist() if h))

    def test_the_job_reads_pieces_where_they_lie(self):
        from aeplens.spark import _read_pieces

        for path in (os.path.join(STORES, "resaved_bom_crlf.ndjson"),
                     os.path.join(ROOT, "tests", "fixtures", "reference", "equivalent_array.json")):
            whole = aeplens.split_files(pa.record_batch({"path": [path], "content": [read(path)]}))
            pieces = [r for r in whole.to_pylist() if r["raw"] is not None]
            self.assertGreater(len(pieces), 1, path)
            places = [(r["offset"], len(r["raw"])) for r in pieces]
            self.assertEqual(_read_pieces(path, places), [r["raw"] for r in pieces], path)
            self.assertEqual(_read_pieces(path, places[1:2]), [pieces[1]["raw"]], path)
        with tempfile.TemporaryDirectory() as d:
            cut = os.path.join(d, "cut.ndjson")
            with open(cut, "wb") as f:
                f.write(read(path)[: places[-1][0]])
            with self.assertRaisesRegex(RuntimeError, "cut.ndjson changed while the job read it"):
                _read_pieces(cut, places)

    def test_a_group_read_again_must_hold_what_was_read(self):
        pieces = aeplens.split_files(files("three_emitters_one_store.ndjson"))
        records = pieces.filter(pa.compute.is_valid(pieces.column("raw")))
        hashes = aeplens.ties_batch(records).column("canonical_sha256")
        plain = aeplens.analyse_group(records, keys=KEYS)
        same = aeplens.analyse_group(records.append_column("canonical_sha256", hashes), keys=KEYS)
        self.assertEqual({n: b.to_pylist() for n, b in same.items()}, {n: b.to_pylist() for n, b in plain.items()})
        # Another record in a piece's place, one that is no record now, and one gone.
        other = hashes.to_pylist()
        other[3] = "00" * 32
        raw = records.column("raw").to_pylist()
        at = records.schema.get_field_index("raw")
        for changed, read_as in (
            (records, pa.array(other)),
            (records.set_column(at, "raw", pa.array(raw[:2] + [b"{oops"] + raw[3:], pa.binary())), hashes),
            (records.set_column(at, "raw", pa.array(raw[:2] + [None] + raw[3:], pa.binary())), hashes),
        ):
            with self.assertRaisesRegex(ValueError, "not the record read there before: its file changed"):
                aeplens.analyse_group(changed.append_column("canonical_sha256", read_as), keys=KEYS)

    def test_groups_join_records_that_share_a_tie(self):
        ties = pa.record_batch({"record_key": [1, 2, 3, 4, 5], "tie": [10, 10, 20, 20, 30]})
        more = pa.record_batch({"record_key": [2], "tie": [20]})
        g = aeplens.groups([ties, more])
        groups = dict(zip(g.column("record_key").to_pylist(), g.column("group").to_pylist()))
        self.assertEqual(groups, {1: 1, 2: 1, 3: 1, 4: 1, 5: 5})

    def test_trust_takes_what_check_takes(self):
        # TSA roots: a token chaining to one proves its record's time, and only then.
        tsa = os.path.join(ROOT, "tests", "fixtures", "tsa")
        batch = pa.record_batch({"path": ["stamped.ndjson"], "content": [read(os.path.join(tsa, "stamped.ndjson"))]})
        pieces = aeplens.split_files(batch)
        keys = os.path.join(tsa, "keys.json")
        proven = aeplens.verify_batch(pieces, keys=keys, tsa_certs=os.path.join(tsa, "root.pem"))
        self.assertEqual(set(proven.column("timestamp").to_pylist()), {"tsa-verified"})
        self.assertNotIn(None, proven.column("proven_time_ms").to_pylist())
        claimed = aeplens.verify_batch(pieces, keys=keys)
        self.assertEqual(set(claimed.column("timestamp").to_pylist()), {"tsa-untrusted"})
        self.assertEqual(set(claimed.column("proven_time_ms").to_pylist()), {None})
        # The environment's key variables, as the command line reads them: a key given
        # only there verifies, and its fingerprint is on every row.
        stores = files("three_emitters_one_store.ndjson")
        import json
        ring = json.loads(read(KEYS))
        environment = [(aeplens.KEY_VARIABLE_PREFIX + k.upper().replace("-", "_"), v) for k, v in ring.items()]
        trust = aeplens.trust(environment=environment)
        records = aeplens.verify_batch(aeplens.split_files(stores), trust=trust)
        self.assertEqual(set(records.column("authenticity").to_pylist()), {"valid"})
        self.assertIn("env:" + aeplens.KEY_VARIABLE_PREFIX, records.column("keyring")[0].as_py())
        none = aeplens.verify_batch(aeplens.split_files(stores), trust=aeplens.trust(environment=[]))
        self.assertNotIn("valid", set(none.column("authenticity").to_pylist()))
        self.assertEqual(aeplens.environment_keys({"WASMAGENT_AEP_PUBKEY_X": "y", "HOME": "/"}),
                         [("WASMAGENT_AEP_PUBKEY_X", "y")])

    def test_bad_keys_and_batches_are_clear_errors(self):
        with self.assertRaisesRegex(ValueError, "keys.json"):
            aeplens.verify_batch(files("fork_parallel_emit.ndjson"), keys=[("keys.json", b"[1, 2]")])
        with self.assertRaisesRegex(ValueError, "no column"):
            aeplens.verify_batch(pa.record_batch({"path": ["x"]}))
        with self.assertRaisesRegex(TypeError, "Arrow record batch"):
            aeplens._aeplens.split_files(object())


if __name__ == "__main__":
    unittest.main()
