//! The benchmarks' reference shape (`gen_store --shape reference`) is the reference
//! emitter's: the statistics of a generated store against those of the reference-emitter
//! stores vendored under `tests/fixtures/reference-stores/` (how a record is built: its
//! actions, decisions, envelope, snapshots) and against the 20,000-record store the same
//! emitter wrote for a fleet (the mix: sizes, actions, runs, DSSE, findings). Each
//! tolerance is written beside its statistic; a change to the generator that moves a
//! statistic outside it fails here.

use crate::common;
use crate::{reference, shape};

use shape::{Shape, Tally};
use std::sync::OnceLock;

/// Records generated: enough for every statistic to settle (they move by under 2 %
/// between 3,000 and 20,000 records).
const RECORDS: usize = 3_000;

/// The generated store, written once for every test, and its statistics.
pub(crate) fn generated() -> &'static (std::path::PathBuf, Shape) {
    static STORE: OnceLock<(std::path::PathBuf, Shape)> = OnceLock::new();
    STORE.get_or_init(|| {
        let dir = common::run_dir("reference-shape");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("fleet.ndjson");
        let mut bytes = Vec::new();
        reference::generate(RECORDS, &mut bytes).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        std::fs::write(dir.join("fleet.keys.json"), reference::keys_json()).unwrap();
        let shape = shape::of(std::str::from_utf8(&bytes).unwrap());
        (path, shape)
    })
}

/// The reference emitter's stores as written (kind `store` in `expected.json`: not the
/// edited or assembled copies).
fn reference_stores() -> Shape {
    let dir = common::fixtures().join("reference-stores");
    let expected = common::read_json(&dir.join("expected.json"));
    let mut tally = Tally::default();
    let files = expected["files"].as_object().unwrap();
    for (name, _) in files.iter().filter(|(_, f)| f["kind"] == "store") {
        tally.add(&std::fs::read_to_string(dir.join(name)).unwrap());
    }
    tally.shape()
}

/// `value` lies within `within` (a fraction) of `reference`.
fn near(what: &str, value: f64, reference: f64, within: f64) {
    let off = (value - reference).abs() / reference.abs().max(f64::EPSILON);
    assert!(
        off <= within,
        "{what}: generated {value:.3}, reference {reference:.3} ({:.0} % apart; tolerance {:.0} %)",
        off * 100.0,
        within * 100.0
    );
}

#[test]
fn a_record_is_built_as_the_reference_emitter_builds_it() {
    let (_, generated) = generated();
    let reference = reference_stores();
    assert!(reference.records > 100, "{reference:?}");
    // An action's JSON: the same members, digests as bare hex (±15 %).
    near(
        "median action bytes",
        generated.action_bytes,
        reference.action_bytes,
        0.15,
    );
    // A record-level decision: a quarter carry an `approval_extension` (±25 %).
    near(
        "median decision bytes",
        generated.decision_bytes,
        reference.decision_bytes,
        0.25,
    );
    // What a v0.3 line holds beside its actions and decisions: ids, refs, the link and
    // the signature (±15 %).
    near(
        "median record overhead",
        generated.record_overhead,
        reference.record_overhead,
        0.15,
    );
    // A DSSE line: the envelope's base64 payload of the whole record (±15 %).
    near(
        "median DSSE expansion",
        generated.dsse_expansion,
        reference.dsse_expansion,
        0.15,
    );
    // Cumulative snapshots: each record repeats its emitter's earlier actions (±5 %).
    near(
        "snapshot repeat share",
        generated.repeat_share,
        reference.repeat_share,
        0.05,
    );
    assert!(generated.emitters_per_run > 1.1, "{generated:?}");
}

/// The 20,000-record store the reference emitter (`FilesystemEvidenceStore`) wrote for a
/// fleet of 4,620 runs, as measured when it was tried (94.7 MB): it is too large to vendor,
/// so its statistics stand here.
struct Fleet;
impl Fleet {
    const BYTES_PER_RECORD: f64 = 4_735.0;
    const ACTIONS_PER_RECORD: f64 = 6.2;
    const RECORDS_PER_RUN: f64 = 20_000.0 / 4_620.0;
    const DSSE_SHARE: f64 = 0.07;
    const FINDINGS_PER_RECORD: f64 = 1.3;
}

#[test]
fn the_fleet_mix_is_the_reference_emitters_fleet() {
    let (path, generated) = generated();
    near(
        "bytes per record",
        generated.bytes_per_record,
        Fleet::BYTES_PER_RECORD,
        0.15,
    );
    near(
        "actions per record",
        generated.actions_per_record,
        Fleet::ACTIONS_PER_RECORD,
        0.10,
    );
    near(
        "records per run",
        generated.records_per_run,
        Fleet::RECORDS_PER_RUN,
        0.10,
    );
    near("DSSE share", generated.dsse_share, Fleet::DSSE_SHARE, 0.30);
    // Findings as `findings` reports them (per action identity), every record valid.
    let keys = path.with_file_name("fleet.keys.json");
    let args = ["findings", "--format", "json", "--no-index", "--keys"];
    let mut all: Vec<&str> = args.to_vec();
    all.extend([keys.to_str().unwrap(), path.to_str().unwrap()]);
    let (code, out, err) = common::aeplens(&all);
    assert!(code == 0 || code == 1, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let findings = doc["findings"].as_array().unwrap();
    let per_record = findings.len() as f64 / generated.records as f64;
    near(
        "findings per record",
        per_record,
        Fleet::FINDINGS_PER_RECORD,
        0.15,
    );
    let (code, out, err) = common::aeplens(&[
        "check",
        "--format",
        "json",
        "--no-index",
        "--keys",
        keys.to_str().unwrap(),
        path.to_str().unwrap(),
    ]);
    assert!(code <= 1, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let records = report["records"].as_array().unwrap();
    // As the reference emitter writes: signed, linked, and within the rules.
    for r in records {
        assert_eq!(r["authenticity"]["status"], "valid", "{r}");
        assert_eq!(r["semantic"]["status"], "pass", "{r}");
        assert_eq!(r["structural"]["status"], "pass", "{r}");
    }
}
