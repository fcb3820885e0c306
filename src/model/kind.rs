//! Which AEP evidence type a record is (aep-fields §16). The protocol defines sibling
//! objects beside `aep-record` that share its `schema_version` namespace but are not
//! records of a run: checkpoints, forks, memory operations, replay attestations,
//! canonical events, seeds. Each is told by its required members, never failed as a broken
//! record nor counted as a run with no actions.

use super::json::Obj;
use serde::{Deserialize, Serialize};

/// The evidence type of one JSON object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// An AEP record: a run's actions (the default: anything not told apart below).
    #[default]
    AepRecord,
    Checkpoint,
    CheckpointEvidence,
    Fork,
    MemoryEvidence,
    ReplayEvidence,
    CanonicalEvent,
    Seed,
    /// A line of `aeplens watch`'s alert log (docs/watch.md): signed and chained as a v0.3
    /// record, so `check` verifies the log like any other evidence.
    AeplensAlert,
}

impl Kind {
    /// Every kind beside `aep-record`, in the order they are told apart.
    pub const SIBLINGS: [Kind; 8] = [
        Kind::AeplensAlert,
        Kind::ReplayEvidence,
        Kind::MemoryEvidence,
        Kind::Fork,
        Kind::CheckpointEvidence,
        Kind::Checkpoint,
        Kind::CanonicalEvent,
        Kind::Seed,
    ];

    /// The kind of `obj`: the first sibling whose distinguishing required members it holds
    /// (a replay attestation also has a record's `run_id`, a signed checkpoint a
    /// checkpoint's `checkpoint_id`), else an AEP record. Its schema then says whether the
    /// rest is there.
    pub fn of(obj: &Obj) -> Kind {
        let has = |key: &str| obj.get(key).is_some();
        Kind::SIBLINGS
            .into_iter()
            .find(|k| k.marks().iter().all(|m| has(m)))
            .unwrap_or(Kind::AepRecord)
    }

    /// The members that tell this kind apart (each required by its schema).
    fn marks(self) -> &'static [&'static str] {
        match self {
            Kind::AepRecord => &[],
            Kind::ReplayEvidence => &["seed", "input_digests"],
            Kind::MemoryEvidence => &["mem_ref", "op"],
            Kind::Fork => &["fork_id", "source_checkpoint_id"],
            Kind::CheckpointEvidence => &["checkpoint_id", "created_at_ms"],
            Kind::Checkpoint => &["checkpoint_id"],
            Kind::CanonicalEvent => &["event_id", "event_type"],
            Kind::Seed => &["seed_id"],
            Kind::AeplensAlert => &["dedupe_key", "class", "seen_at_ms"],
        }
    }

    /// The name used in output (the protocol schema's name).
    pub fn name(self) -> &'static str {
        match self {
            Kind::AepRecord => "aep-record",
            Kind::Checkpoint => "checkpoint",
            Kind::CheckpointEvidence => "checkpoint-evidence",
            Kind::Fork => "fork",
            Kind::MemoryEvidence => "memory-evidence",
            Kind::ReplayEvidence => "replay-evidence",
            Kind::CanonicalEvent => "canonical-event",
            Kind::Seed => "seed",
            Kind::AeplensAlert => "aeplens-alert",
        }
    }

    /// The kind's one-byte code in the evidence index ([`Kind::from_code`] reads it).
    pub fn code(self) -> u8 {
        match self {
            Kind::AepRecord => 0,
            Kind::Checkpoint => 1,
            Kind::CheckpointEvidence => 2,
            Kind::Fork => 3,
            Kind::MemoryEvidence => 4,
            Kind::ReplayEvidence => 5,
            Kind::CanonicalEvent => 6,
            Kind::Seed => 7,
            Kind::AeplensAlert => 8,
        }
    }

    /// The kind [`Kind::code`] gave `code`.
    pub fn from_code(code: u64) -> Option<Kind> {
        std::iter::once(Kind::AepRecord)
            .chain(Kind::SIBLINGS)
            .find(|k| u64::from(k.code()) == code)
    }

    /// True for an AEP record (what holds a run's actions).
    pub fn is_record(self) -> bool {
        self == Kind::AepRecord
    }

    /// The protocol's JSON Schema of a sibling kind (`schema/aep/`).
    pub fn schema(self) -> Option<&'static str> {
        Some(match self {
            Kind::AepRecord => return None,
            Kind::Checkpoint => include_str!("../../schema/aep/checkpoint.schema.json"),
            Kind::CheckpointEvidence => {
                include_str!("../../schema/aep/checkpoint-evidence.schema.json")
            }
            Kind::Fork => include_str!("../../schema/aep/fork.schema.json"),
            Kind::MemoryEvidence => include_str!("../../schema/aep/memory-evidence.schema.json"),
            Kind::ReplayEvidence => include_str!("../../schema/aep/replay-evidence.schema.json"),
            Kind::CanonicalEvent => include_str!("../../schema/aep/canonical-event.schema.json"),
            Kind::Seed => include_str!("../../schema/aep/seed.schema.json"),
            Kind::AeplensAlert => include_str!("../../schema/alert.schema.json"),
        })
    }
}
