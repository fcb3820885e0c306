//! What the cross-record passes (link graph, action graph, leases, chains, badges, finding
//! checks, the explorer's row markers) read from a record and its actions: typed and
//! owned, read once (an action's through the one-pass member index, [`ActionFields`]), so
//! the passes never go back to the stored JSON — which a record may have let go.

use super::codec::{Reader, Writer};
use super::drift::{Drift, DriftInputs, DriftResult};
use super::fields::{ActionFields, Key};
use super::ids::ActionIds;
use super::json::{Json, Obj};
use super::kind::Kind;
pub use super::texts::ArgumentsDigest;
use super::texts::Texts;
use super::{Action, DecisionMembers, Link, LinkHash, Record};
use compact_str::CompactString;

/// What the cross-record passes (the link graph, chains, confusable ids, the action
/// graph, findings) read of one record, owned: once these are taken, the record's tree is
/// needed only for what a finding or a view shows of it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordFacts {
    /// Its evidence type: only an AEP record has a run and actions here.
    pub kind: Kind,
    pub run_id: Option<CompactString>,
    /// `trace_id`: the OpenTelemetry trace the run's telemetry is in (`--traces`).
    pub trace_id: Option<CompactString>,
    pub created_at_ms: Option<f64>,
    pub link: LinkFacts,
    /// `signature.key_id`, when it is a string.
    pub key_id: Option<CompactString>,
    /// True when an action's decision is not the one the record-level list shows for it
    /// ([`Record::shadows_a_decision`]): F-DECISION-SHADOWED reads the record only then.
    pub decision_shadowed: bool,
    /// The elements of `actions` that are objects: their position and facts.
    pub actions: ActionList,
}

/// The facts of the elements of a record's `actions` that are objects, in order, and
/// their positions in the array when those are not 0, 1, 2, … (some element is not an
/// object): a store's actions keep no position each.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ActionList {
    facts: Box<[ActionFacts]>,
    positions: Option<Box<[u32]>>,
}

impl ActionList {
    fn new(facts: Vec<ActionFacts>, positions: Vec<u32>) -> ActionList {
        let dense = positions.iter().enumerate().all(|(i, p)| *p as usize == i);
        ActionList {
            facts: facts.into_boxed_slice(),
            positions: (!dense).then(|| positions.into_boxed_slice()),
        }
    }

    /// Each action's ids, in order.
    pub fn ids(&self) -> Vec<ActionIds<'_>> {
        self.facts.iter().map(ActionIds::of).collect()
    }

    /// How many actions have facts.
    pub fn len(&self) -> usize {
        self.facts.len()
    }

    /// True when no element of `actions` is an object.
    pub fn is_empty(&self) -> bool {
        self.facts.is_empty()
    }

    /// Each action's position in `actions` and its facts, in order (none when the list
    /// holds only ids).
    pub fn iter(&self) -> impl Iterator<Item = (u32, &ActionFacts)> {
        let position = |i: usize| self.positions.as_ref().map_or(i as u32, |p| p[i]);
        self.facts
            .iter()
            .enumerate()
            .map(move |(i, f)| (position(i), f))
    }

    /// The facts of the action at position `pos` of `actions`.
    pub fn at(&self, pos: u32) -> Option<&ActionFacts> {
        self.facts.get(self.index_of(pos)?)
    }

    /// Where the action at position `pos` of `actions` is among the record's action
    /// objects (what a finding's location counts).
    pub fn index_of(&self, pos: u32) -> Option<usize> {
        match &self.positions {
            None => ((pos as usize) < self.facts.len()).then_some(pos as usize),
            Some(p) => p.binary_search(&pos).ok(),
        }
    }
}

/// `prev_record_hash`, owned ([`Link`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkFacts {
    Absent,
    Null,
    Hash(LinkHash),
    Malformed,
}

impl LinkFacts {
    /// The link, borrowed.
    pub fn as_link(&self) -> Link<'_> {
        match self {
            LinkFacts::Absent => Link::Absent,
            LinkFacts::Null => Link::Null,
            LinkFacts::Hash(h) => Link::Hash(h.borrowed()),
            LinkFacts::Malformed => Link::Malformed,
        }
    }
}

impl RecordFacts {
    /// Reads the facts of a record from its JSON. A sibling evidence type (a replay
    /// attestation, a checkpoint: [`Kind`]) holds no run's actions: it gives no run id and
    /// no actions, so no pass counts it as a run (its edges are `verify::siblings`').
    pub fn of(record: &Record) -> RecordFacts {
        let obj = record.obj();
        let kind = Kind::of(obj);
        let is_record = kind.is_record();
        let text = |v: Option<&Json>| v.and_then(Json::as_str).map(CompactString::from);
        let array = |key| {
            let items = obj.get(key).and_then(Json::as_array).unwrap_or(&[]);
            if is_record { items } else { &[] }
        };
        RecordFacts {
            kind,
            run_id: text(obj.get("run_id").filter(|_| is_record)),
            trace_id: text(obj.get("trace_id").filter(|_| is_record)),
            created_at_ms: obj.get("created_at_ms").and_then(Json::as_f64),
            link: match obj.get("prev_record_hash") {
                None => LinkFacts::Absent,
                Some(Json::Null) => LinkFacts::Null,
                Some(Json::String(s)) => s
                    .as_str()
                    .map_or(LinkFacts::Malformed, |h| LinkFacts::Hash(LinkHash::new(h))),
                Some(_) => LinkFacts::Malformed,
            },
            key_id: text(obj.get("signature").and_then(|s| s.get("key_id"))),
            decision_shadowed: is_record && record.shadows_a_decision(),
            actions: action_facts(record, array("actions")),
        }
    }
}

/// The facts of the object elements of `actions`, at their positions, in a list of
/// exactly their number (a list grown by doubling holds a fifth more, for every record).
fn action_facts(record: &Record, actions: &[Json]) -> ActionList {
    let n = actions.iter().filter(|a| a.as_object().is_some()).count();
    let (mut facts, mut positions) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for (pos, a) in actions.iter().enumerate() {
        if let Some(a) = a.as_object() {
            facts.push(ActionFacts::of(record, &Action(a)));
            positions.push(pos as u32);
        }
    }
    ActionList::new(facts, positions)
}

impl RecordFacts {
    /// Writes the facts for the evidence index ([`RecordFacts::decode`] reads them back;
    /// a change to either changes the index's format version).
    pub fn encode(&self, w: &mut Writer) {
        w.uint(u64::from(self.kind.code()));
        w.opt_str(self.run_id.as_deref());
        w.opt_str(self.trace_id.as_deref());
        w.opt_f64(self.created_at_ms);
        match &self.link {
            LinkFacts::Absent => w.uint(0),
            LinkFacts::Null => w.uint(1),
            LinkFacts::Malformed => w.uint(2),
            LinkFacts::Hash(h) => {
                w.uint(3);
                w.bytes(h.to_string().as_bytes());
            }
        }
        w.opt_str(self.key_id.as_deref());
        w.uint(u64::from(self.decision_shadowed));
        w.uint(self.actions.len() as u64);
        for (pos, a) in self.actions.iter() {
            w.uint(u64::from(pos));
            a.encode(w);
        }
    }

    /// The facts [`RecordFacts::encode`] wrote; `None` when the bytes are not that.
    pub fn decode(r: &mut Reader<'_>) -> Option<RecordFacts> {
        let text = |s: Option<&str>| s.map(CompactString::from);
        let kind = Kind::from_code(r.uint()?)?;
        let run_id = text(r.opt_str()?);
        let trace_id = text(r.opt_str()?);
        let created_at_ms = r.opt_f64()?;
        let link = match r.uint()? {
            0 => LinkFacts::Absent,
            1 => LinkFacts::Null,
            2 => LinkFacts::Malformed,
            3 => LinkFacts::Hash(LinkHash::new(r.str()?)),
            _ => return None,
        };
        let key_id = text(r.opt_str()?);
        let decision_shadowed = r.bool()?;
        let n: usize = r.int()?;
        let capacity = n.min(1 << 16);
        let (mut facts, mut positions) =
            (Vec::with_capacity(capacity), Vec::with_capacity(capacity));
        for _ in 0..n {
            let pos = r.int()?;
            // Positions in array order, as `encode` wrote them.
            if positions.last().is_some_and(|last| *last >= pos) {
                return None;
            }
            positions.push(pos);
            facts.push(ActionFacts::decode(r)?);
        }
        let actions = ActionList::new(facts, positions);
        Some(RecordFacts {
            kind,
            run_id,
            trace_id,
            created_at_ms,
            link,
            key_id,
            decision_shadowed,
            actions,
        })
    }
}

/// One action's analysis-relevant fields, copied out of the stored JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct ActionFacts {
    /// `action_id`, `tool_name`, … (see the accessors).
    texts: Texts,
    /// `timestamp_ms` ([`ActionFacts::time`]).
    time: Number,
    /// True when the action carries a `capability_decision` object.
    pub has_decision: bool,
    /// The drift check's result, every dialect normalised ([`Drift`]).
    pub drift: DriftResult,
    /// [`ActionFacts::observed`]: 0 for none, else 1 + its place in [`OBSERVED`].
    observed: u8,
    /// `state_changing`, when it is a boolean.
    pub state_changing: Option<bool>,
    /// `exit_code` ([`ActionFacts::exit_code`]).
    exit_code: Number,
    /// True when `result_digest` is present.
    pub has_result_digest: bool,
    /// How `tool_name`, `side_effect_class` and `state_changing` are stored
    /// ([`StoredMembers`]): whether the facts above hold them exactly as stored.
    stored: u8,
    /// `bounded_lease_evidence`, when it is an object (rare: kept boxed).
    pub bounded_lease_evidence: Option<Box<Obj>>,
    /// The state digest members, when the action carries a pre or post digest.
    pub state_digest: Option<Box<StateDigest>>,
    /// What F-EXEC-AFTER-DENY quotes ([`EXEC_AFTER_DENY_QUOTES`]), as stored, of an action
    /// whose decision is a deny (few: kept boxed), so that the finding is made without
    /// reading the action again.
    pub denied_quoted: Option<Box<Obj>>,
    /// The whole action's [`Json::equality_digest`]: two copies of an action (cumulative
    /// snapshots repeat them) are compared by it, their trees read only when they differ.
    pub copy_digest: [u8; 16],
}

/// An optional JSON number in eight bytes instead of sixteen (a million actions' facts
/// hold two): NaN, which no JSON number reads as, stands for none.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Number(f64);

impl Number {
    pub(crate) fn new(value: Option<f64>) -> Number {
        Number(value.filter(|v| !v.is_nan()).unwrap_or(f64::NAN))
    }

    pub(crate) fn get(self) -> Option<f64> {
        (!self.0.is_nan()).then_some(self.0)
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        self.get() == other.get()
    }
}

/// An action's state digest members (each as stored, any JSON type).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StateDigest {
    pub kind: Option<Json>,
    pub coverage: Option<Json>,
    pub pre: Option<Json>,
    pub post: Option<Json>,
}

impl StateDigest {
    /// The pre digest, when it is a string.
    pub fn pre(&self) -> Option<&str> {
        self.pre.as_ref().and_then(Json::as_str)
    }

    /// The post digest, when it is a string.
    pub fn post(&self) -> Option<&str> {
        self.post.as_ref().and_then(Json::as_str)
    }
}

/// The members F-EXEC-AFTER-DENY quotes of the action it is about ([`Action::quoted`]).
pub const EXEC_AFTER_DENY_QUOTES: [&str; 4] = [
    "capability_decision.decision",
    "outcome",
    "exit_code",
    "result_digest",
];

/// Which of `tool_name`, `side_effect_class` and `state_changing` an action stores, and
/// whether each one stored is exactly what the facts hold (a UTF-8 string for the first
/// two, a boolean for the third): then what quotes them as stored (a finding's evidence)
/// can be made from the facts, without reading the action again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredMembers(u8);

impl StoredMembers {
    /// The three members, in the order a finding's evidence lists them.
    pub const NAMES: [&'static str; 3] = ["tool_name", "side_effect_class", "state_changing"];
    const KEYS: [Key; 3] = [Key::ToolName, Key::SideEffectClass, Key::StateChanging];

    fn of(f: &ActionFields<'_>) -> StoredMembers {
        let mut bits = 0;
        for (i, key) in StoredMembers::KEYS.into_iter().enumerate() {
            let Some(v) = f.get(key) else { continue };
            let plain = match key {
                Key::StateChanging => v.as_bool().is_some(),
                _ => v.as_str().is_some(),
            };
            bits |= 1 << i | u8::from(!plain) << 3;
        }
        StoredMembers(bits)
    }

    /// Whether member `i` of [`StoredMembers::NAMES`] is stored.
    pub fn has(self, i: usize) -> bool {
        self.0 & 1 << i != 0
    }

    /// True when every member stored is what the facts hold.
    pub fn plain(self) -> bool {
        self.0 & 1 << 3 == 0
    }
}

impl ActionFacts {
    /// How `tool_name`, `side_effect_class` and `state_changing` are stored.
    pub fn stored(&self) -> StoredMembers {
        StoredMembers(self.stored)
    }

    /// Reads the facts of one action of `record`.
    pub fn of(record: &Record, action: &Action<'_>) -> ActionFacts {
        ActionFacts::with_drift(record, action.0, &ActionFields::of(action.0)).0
    }

    /// The facts of `action` (its members indexed in `f`; `record` holds it), with the
    /// whole normalised drift check.
    pub fn with_drift<'a>(
        record: &'a Record,
        action: &Obj,
        f: &ActionFields<'a>,
    ) -> (ActionFacts, Drift<'a>) {
        let decision = f.obj(Key::CapabilityDecision);
        let members = DecisionMembers::of(decision);
        let grant = members.grant();
        let state_digest = (f.get(Key::PreStateDigest).is_some()
            || f.get(Key::PostStateDigest).is_some())
        .then(|| {
            Box::new(StateDigest {
                kind: f.get(Key::StateDigestKind).cloned(),
                coverage: f.get(Key::StateDigestCoverage).cloned(),
                pre: f.get(Key::PreStateDigest).cloned(),
                post: f.get(Key::PostStateDigest).cloned(),
            })
        });
        let drift = Drift::from_inputs(record, &DriftInputs::of(f, grant));
        let facts = ActionFacts {
            texts: Texts::new([
                f.str(Key::ActionId),
                f.str(Key::ToolName),
                f.str(Key::ParentActionId),
                f.str(Key::CausalChainId),
                f.str(Key::ScopeLeaseId),
                f.str(Key::ApprovalContextHash),
                f.str(Key::SideEffectClass),
                members.outcome(),
                grant,
                members.approval_decision(),
                f.str(Key::Outcome),
                members.resource(),
                f.str(Key::ArgumentsDigest),
            ]),
            time: Number::new(f.get(Key::TimestampMs).and_then(Json::as_f64)),
            has_decision: decision.is_some(),
            drift: drift.result,
            observed: observed_code(observed(members.outcome(), f)),
            state_changing: f.get(Key::StateChanging).and_then(Json::as_bool),
            exit_code: Number::new(f.get(Key::ExitCode).and_then(Json::as_f64)),
            has_result_digest: f.get(Key::ResultDigest).is_some(),
            stored: StoredMembers::of(f).0,
            bounded_lease_evidence: f.obj(Key::BoundedLeaseEvidence).cloned().map(Box::new),
            state_digest,
            denied_quoted: (members.outcome() == Some("deny"))
                .then(|| Box::new(Action(action).quoted(&EXEC_AFTER_DENY_QUOTES))),
            copy_digest: action.equality_digest(),
        };
        (facts, drift)
    }

    /// `timestamp_ms`, when it is a number.
    pub fn time(&self) -> Option<f64> {
        self.time.get()
    }

    /// `exit_code`, when it is a number.
    pub fn exit_code(&self) -> Option<f64> {
        self.exit_code.get()
    }

    /// What the recorded result says happened ([`observed`]).
    pub fn observed(&self) -> Option<&'static str> {
        OBSERVED
            .get(usize::from(self.observed).checked_sub(1)?)
            .copied()
    }

    /// `action_id`.
    pub fn id(&self) -> Option<&str> {
        self.texts.get(0)
    }

    /// `tool_name`.
    pub fn tool(&self) -> Option<&str> {
        self.texts.get(1)
    }

    /// `parent_action_id`.
    pub fn parent(&self) -> Option<&str> {
        self.texts.get(2)
    }

    /// `causal_chain_id`.
    pub fn causal_chain_id(&self) -> Option<&str> {
        self.texts.get(3)
    }

    /// `scope_lease_id`.
    pub fn scope_lease_id(&self) -> Option<&str> {
        self.texts.get(4)
    }

    /// `approval_context_hash`.
    pub fn approval_context_hash(&self) -> Option<&str> {
        self.texts.get(5)
    }

    /// `side_effect_class`.
    pub fn side_effect_class(&self) -> Option<&str> {
        self.texts.get(6)
    }

    /// `decision` of the capability decision (`allow`, `deny`, …).
    pub fn outcome(&self) -> Option<&str> {
        self.texts.get(7)
    }

    /// The authority shape: `approval_grant`, else `approval_mode`
    /// ([`Decision::grant`](super::Decision::grant)).
    pub fn grant(&self) -> Option<&str> {
        self.texts.get(8)
    }

    /// The decision's RFC-final `approval_decision` label.
    pub fn approval_decision(&self) -> Option<&str> {
        self.texts.get(9)
    }

    /// The action's own `outcome` text (not the decision's).
    pub fn result_outcome(&self) -> Option<&str> {
        self.texts.get(10)
    }

    /// The decision's `resource`, when it is a string.
    pub fn resource(&self) -> Option<&str> {
        self.texts.get(11)
    }

    /// `arguments_digest`, when it is a string.
    pub fn arguments_digest(&self) -> Option<ArgumentsDigest<'_>> {
        self.texts.digest()
    }
}

/// What [`observed`] can say, in the order the index writes them (0 is None).
const OBSERVED: [&str; 4] = ["denied", "skipped", "failure", "success"];

/// Drift results in the order the index writes them.
const DRIFT: [DriftResult; 4] = [
    DriftResult::Matched,
    DriftResult::Drifted,
    DriftResult::NotChecked,
    DriftResult::Absent,
];

impl ActionFacts {
    fn encode(&self, w: &mut Writer) {
        self.texts.encode(w);
        w.opt_f64(self.time());
        w.uint(u64::from(self.has_decision));
        w.uint(DRIFT.iter().position(|d| *d == self.drift).unwrap_or(3) as u64);
        w.uint(u64::from(self.observed));
        w.uint(self.state_changing.map_or(0, |b| 1 + u64::from(b)));
        w.opt_f64(self.exit_code());
        w.uint(u64::from(self.has_result_digest));
        w.uint(u64::from(self.stored));
        w.uint(u64::from(self.bounded_lease_evidence.is_some()));
        if let Some(o) = &self.bounded_lease_evidence {
            w.obj(o);
        }
        w.uint(u64::from(self.state_digest.is_some()));
        if let Some(d) = &self.state_digest {
            for v in [&d.kind, &d.coverage, &d.pre, &d.post] {
                w.uint(u64::from(v.is_some()));
                if let Some(v) = v {
                    w.json(v);
                }
            }
        }
        w.uint(u64::from(self.denied_quoted.is_some()));
        if let Some(o) = &self.denied_quoted {
            w.obj(o);
        }
        w.bytes(&self.copy_digest);
    }

    fn decode(r: &mut Reader<'_>) -> Option<ActionFacts> {
        let texts = Texts::decode(r)?;
        let json = |r: &mut Reader<'_>| -> Option<Option<Json>> {
            if r.bool()? {
                r.json().map(Some)
            } else {
                Some(None)
            }
        };
        Some(ActionFacts {
            texts,
            time: Number::new(r.opt_f64()?),
            has_decision: r.bool()?,
            drift: *DRIFT.get(r.int::<usize>()?)?,
            observed: match r.int::<u8>()? {
                i if usize::from(i) <= OBSERVED.len() => i,
                _ => return None,
            },
            state_changing: match r.uint()? {
                0 => None,
                1 => Some(false),
                2 => Some(true),
                _ => return None,
            },
            exit_code: Number::new(r.opt_f64()?),
            has_result_digest: r.bool()?,
            stored: r.int::<u8>()?,
            bounded_lease_evidence: if r.bool()? {
                Some(Box::new(r.obj()?))
            } else {
                None
            },
            state_digest: if r.bool()? {
                Some(Box::new(StateDigest {
                    kind: json(r)?,
                    coverage: json(r)?,
                    pre: json(r)?,
                    post: json(r)?,
                }))
            } else {
                None
            },
            denied_quoted: if r.bool()? {
                Some(Box::new(r.obj()?))
            } else {
                None
            },
            copy_digest: r.bytes()?.try_into().ok()?,
        })
    }
}

/// [`ActionFacts::observed`]'s code for what [`observed`] says.
fn observed_code(observed: Option<&str>) -> u8 {
    observed
        .and_then(|o| OBSERVED.iter().position(|x| *x == o))
        .map_or(0, |i| i as u8 + 1)
}

/// `denied`, `skipped`, `failure`, `success` or None (analysis-rules §8): what the
/// action's recorded result says happened, given its decision's outcome.
pub fn observed(decision: Option<&str>, a: &ActionFields<'_>) -> Option<&'static str> {
    let outcome = a.str(Key::Outcome);
    let exit = a.get(Key::ExitCode).and_then(Json::as_f64);
    if decision == Some("deny") {
        Some("denied")
    } else if decision == Some("dry_run") {
        Some("skipped")
    } else if matches!(outcome, Some("failed" | "error" | "failure"))
        || exit.is_some_and(|c| c != 0.0)
    {
        Some("failure")
    } else if outcome.is_some() || exit.is_some() || a.get(Key::ResultDigest).is_some() {
        Some("success")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_input;

    /// Every fixture record's facts read back from their encoding exactly; a cut
    /// encoding never reads as facts.
    #[test]
    fn facts_read_back_as_written_for_every_fixture() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures").to_string();
        let mut records = 0;
        for input in crate::load::load_paths(&[root]) {
            for record in &input.records {
                let facts = record.facts();
                let mut w = Writer::default();
                facts.encode(&mut w);
                let mut r = Reader::new(&w.bytes);
                assert_eq!(RecordFacts::decode(&mut r).as_ref(), Some(facts));
                assert!(r.is_empty());
                let cut = &w.bytes[..w.bytes.len() - 1];
                assert_eq!(RecordFacts::decode(&mut Reader::new(cut)), None);
                // Only the ids kept: the same ids, the same record-level facts.
                let only = crate::model::ids::RecordIds::of(facts);
                assert_eq!(only.actions(), facts.actions.ids());
                assert_eq!(
                    (
                        only.run_id(),
                        only.created_at_ms(),
                        only.link(),
                        only.key_id()
                    ),
                    (
                        facts.run_id.as_deref(),
                        facts.created_at_ms,
                        facts.link.as_link(),
                        facts.key_id.as_deref()
                    )
                );
                records += 1;
            }
        }
        assert!(records > 300, "fixtures missing: {records}");
    }

    /// The facts of an action are what its members say, and a record's facts list only
    /// its object actions, at their positions.
    #[test]
    fn facts_read_the_members() {
        let text = r#"{"run_id":"r","prev_record_hash":null,"signature":{"key_id":"k"},"actions":[1,{"action_id":"a","tool_name":"t","parent_action_id":"p","side_effect_class":"read","outcome":"ok","capability_decision":{"decision":"deny","approval_mode":"bounded-lease"},"timestamp_ms":5}]}"#;
        let input = parse_input("t.json".into(), text.as_bytes());
        let facts = input.records[0].facts();
        assert_eq!(facts.run_id.as_deref(), Some("r"));
        assert_eq!(facts.link, LinkFacts::Null);
        assert_eq!(facts.key_id.as_deref(), Some("k"));
        assert_eq!(facts.actions.len(), 1);
        let (pos, a) = facts.actions.iter().next().unwrap();
        assert_eq!(pos, 1);
        // The only object is the second element: found at its position, nothing at 0.
        assert_eq!(facts.actions.at(1), Some(a));
        assert_eq!(facts.actions.at(0), None);
        assert_eq!(
            [a.id(), a.tool(), a.parent(), a.side_effect_class()],
            [Some("a"), Some("t"), Some("p"), Some("read")]
        );
        assert_eq!(
            [
                a.outcome(),
                a.grant(),
                a.result_outcome(),
                a.scope_lease_id()
            ],
            [Some("deny"), Some("bounded-lease"), Some("ok"), None]
        );
        assert_eq!(
            (a.time(), a.has_decision, a.observed()),
            (Some(5.0), true, Some("denied"))
        );
    }
}
