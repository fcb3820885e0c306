//! Memory cells (aep-fields §16): a `memory-evidence` op records the digest its cell held
//! just before it (`prior_digest`, null on creation) and after it (`digest`), so the ops
//! of one `mem_ref`, in time order, form a hash chain. A `prior_digest` that is not the
//! previous op's `digest` is F-MEMORY-CHAIN-BROKEN (high): an op lost, reordered, or a past
//! write altered. Judged across every loaded input at once, like the link graph.

use super::RecordResult;
use crate::model::Record;
use crate::model::finding::{Finding, Location, Severity};
use crate::model::json::Json;
use crate::model::kind::Kind;
use std::collections::BTreeMap;

/// One memory op: its record (flat index), time, and the digests before and after it.
struct Op {
    record: usize,
    time: f64,
    prior: Option<String>,
    digest: String,
}

/// F-MEMORY-CHAIN-BROKEN for every op whose `prior_digest` is not its cell's previous
/// op's `digest`, each with the flat index of the record it is shown on.
pub fn broken_links(records: &[&Record], verdicts: &[RecordResult]) -> Vec<(usize, Finding)> {
    let mut cells: BTreeMap<String, Vec<Op>> = BTreeMap::new();
    for (i, v) in verdicts.iter().enumerate() {
        if v.kind != Kind::MemoryEvidence {
            continue;
        }
        records[i].with_record(|r| {
            let text = |key: &str| r.get(key).and_then(Json::as_str).map(str::to_string);
            let (Some(cell), Some(digest)) = (text("mem_ref"), text("digest")) else {
                return; // its schema says what is missing
            };
            let time = r
                .get("timestamp_ms")
                .and_then(Json::as_f64)
                .unwrap_or(f64::INFINITY);
            cells.entry(cell).or_default().push(Op {
                record: i,
                time,
                prior: text("prior_digest"),
                digest,
            });
        });
    }
    let mut out = Vec::new();
    for (cell, mut ops) in cells {
        ops.sort_by(|a, b| a.time.total_cmp(&b.time).then(a.record.cmp(&b.record)));
        for pair in ops.windows(2) {
            let (before, op) = (&pair[0], &pair[1]);
            if op.prior.as_deref() == Some(before.digest.as_str()) {
                continue;
            }
            out.push((op.record, broken(records, &cell, before, op)));
        }
    }
    out
}

fn broken(records: &[&Record], cell: &str, before: &Op, op: &Op) -> Finding {
    let (at, was) = (&records[op.record].source, &records[before.record].source);
    let text = crate::model::text::sanitize;
    Finding {
        id: "F-MEMORY-CHAIN-BROKEN",
        severity: Severity::High,
        run_id: None,
        action_ids: Vec::new(),
        message: format!(
            "memory cell {}: {at} says the cell held {} before it, but the op before it ({was}) left {}: an op lost or reordered, or a past write altered",
            text(cell),
            op.prior
                .as_deref()
                .map_or("nothing (a creation)".into(), text),
            text(&before.digest)
        ),
        evidence: serde_json::json!({
            "mem_ref": cell,
            "prior_digest": op.prior,
            "previous_digest": before.digest,
            "previous": was.to_string(),
        })
        .into(),
        locations: vec![Location::at(at, &["prior_digest"]), Location::record(was)],
        fingerprint: String::new(),
        chain: None,
        tool: None,
    }
}
