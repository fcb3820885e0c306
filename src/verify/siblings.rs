//! The edges between AEP evidence types (aep-fields §16): a fork names the checkpoint it
//! was made from, a checkpoint or fork its run, a checkpoint the checkpoint it was forked
//! from, a replay attestation or canonical event its run, an event the event before it,
//! and an action the memory cells it read and wrote. Each edge is resolved across every
//! loaded input and said with what it found — how many, and the first — or that nothing
//! loaded holds it (the evidence may be elsewhere: no finding is made of it).

use super::{RecordResult, SourceOut};
use crate::model::Record;
use crate::model::json::Json;
use crate::model::kind::Kind;
use serde::Serialize;
use std::collections::HashMap;

/// One edge from a record: the member that names the target, the name, what is named and
/// what the evidence holds of it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct EvidenceLink {
    /// The member naming the target (`source_checkpoint_id`, `actions[2].memory_write_refs`).
    pub member: String,
    /// The name it gives.
    pub value: String,
    /// What it names: `run` (AEP records of that `run_id`), or an evidence type's name.
    pub to: &'static str,
    /// How many loaded records it names (0: nothing loaded holds it).
    pub found: usize,
    /// The first of them, in load order.
    pub first: Option<SourceOut>,
}

impl EvidenceLink {
    /// The edge in words: `fork_of → checkpoint cp-1: 1 record, v03.ndjson:4`, or that
    /// nothing loaded holds it.
    pub fn words(&self) -> String {
        let text = crate::model::text::sanitize;
        let head = format!("{} → {} {}", text(&self.member), self.to, text(&self.value));
        match &self.first {
            None => format!("{head}: not in the evidence loaded"),
            Some(at) => format!(
                "{head}: {} record{}, first {}:{}",
                self.found,
                if self.found == 1 { "" } else { "s" },
                text(&at.path),
                at.line
            ),
        }
    }
}

/// What an edge points at.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Target {
    Run,
    Checkpoint,
    Event,
    MemoryCell,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Run => "run",
            Target::Checkpoint => Kind::Checkpoint.name(),
            Target::Event => Kind::CanonicalEvent.name(),
            Target::MemoryCell => Kind::MemoryEvidence.name(),
        }
    }

    /// The target a record of `kind` is, under the member that names it.
    fn of(kind: Kind) -> Option<(Target, &'static str)> {
        match kind {
            Kind::AepRecord => Some((Target::Run, "run_id")),
            Kind::Checkpoint | Kind::CheckpointEvidence => {
                Some((Target::Checkpoint, "checkpoint_id"))
            }
            Kind::CanonicalEvent => Some((Target::Event, "event_id")),
            Kind::MemoryEvidence => Some((Target::MemoryCell, "mem_ref")),
            _ => None,
        }
    }
}

/// The members of a sibling kind that name another piece of evidence.
fn edges(kind: Kind) -> &'static [(&'static str, Target)] {
    match kind {
        Kind::Fork => &[
            ("source_checkpoint_id", Target::Checkpoint),
            ("parent_run_id", Target::Run),
        ],
        Kind::Checkpoint | Kind::CheckpointEvidence => &[
            ("parent_run_id", Target::Run),
            ("fork_of", Target::Checkpoint),
        ],
        Kind::ReplayEvidence => &[("run_id", Target::Run)],
        Kind::CanonicalEvent => &[("run_id", Target::Run), ("parent_event_id", Target::Event)],
        _ => &[],
    }
}

/// The memory-reference lists of an action.
pub const MEMORY_REFS: [&str; 2] = ["memory_read_refs", "memory_write_refs"];

/// Where each named thing is: (target, name) → (how many, the first's flat index).
#[derive(Default)]
pub struct Targets<'a>(HashMap<(Target, &'a str), (usize, usize)>);

impl<'a> Targets<'a> {
    /// Every run, checkpoint, event and memory cell the records hold. A run's records are
    /// read from their kept ids; a sibling's name from its JSON (siblings are few).
    fn of(records: &[&'a Record], verdicts: &[RecordResult]) -> Targets<'a> {
        let mut at = HashMap::new();
        for (i, (record, v)) in records.iter().zip(verdicts).enumerate() {
            let Some((target, member)) = Target::of(v.kind) else {
                continue;
            };
            let name = if v.kind.is_record() {
                record.run_id()
            } else {
                record.str_field(member)
            };
            if let Some(name) = name {
                at.entry((target, name)).or_insert((0, i)).0 += 1;
            }
        }
        Targets(at)
    }

    fn link(&self, records: &[&Record], member: String, value: &str, to: Target) -> EvidenceLink {
        let (found, first) = self.0.get(&(to, value)).copied().unwrap_or((0, 0));
        EvidenceLink {
            member,
            value: value.to_string(),
            to: to.name(),
            found,
            first: (found > 0).then(|| SourceOut::of(records[first])),
        }
    }

    /// True when a memory cell is loaded (only then are actions' memory refs read).
    fn has_memory(&self) -> bool {
        self.0.keys().any(|(t, _)| *t == Target::MemoryCell)
    }
}

/// Every record's edges (empty for most), in record order.
pub fn resolve(records: &[&Record], verdicts: &[RecordResult]) -> Vec<Vec<EvidenceLink>> {
    let mut out = vec![Vec::new(); records.len()];
    let siblings = verdicts.iter().any(|v| !v.kind.is_record());
    if !siblings {
        return out;
    }
    let targets = Targets::of(records, verdicts);
    let memory = targets.has_memory();
    for (i, v) in verdicts.iter().enumerate() {
        let record = records[i];
        if !v.kind.is_record() {
            for &(member, to) in edges(v.kind) {
                if let Some(value) = record.str_field(member) {
                    out[i].push(targets.link(records, member.to_string(), value, to));
                }
            }
        } else if memory {
            out[i] = record.with_record(|r| memory_links(r, &targets, records));
        }
    }
    out
}

/// The memory-cell edges of a record's actions.
fn memory_links(record: &Record, targets: &Targets<'_>, records: &[&Record]) -> Vec<EvidenceLink> {
    let mut out = Vec::new();
    let actions = record
        .get("actions")
        .and_then(Json::as_array)
        .unwrap_or(&[]);
    for (a, action) in actions.iter().enumerate() {
        for list in MEMORY_REFS {
            let refs = action.get(list).and_then(Json::as_array).unwrap_or(&[]);
            for value in refs.iter().filter_map(Json::as_str) {
                let member = format!("actions[{a}].{list}");
                out.push(targets.link(records, member, value, Target::MemoryCell));
            }
        }
    }
    out
}
