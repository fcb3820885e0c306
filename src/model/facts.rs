//! What the cross-record passes (link graph, action graph, leases, chains, badges, finding
//! checks, the explorer's row markers) read from a record and its actions: typed and
//! owned, read once (an action's through the one-pass member index, [`ActionFields`]), so
//! the passes never go back to the stored JSON — which a record may have let go.

use super::codec::{Reader, Writer};
use super::drift::{Drift, DriftInputs, DriftResult};
use super::fields::{ActionFields, Key};
use super::json::{Json, Obj};
use super::{Action, DecisionMembers, Link, Record};
use compact_str::CompactString;

/// What the cross-record passes (the link graph, chains, confusable ids, the action
/// graph, findings) read of one record, owned: once these are taken, the record's tree is
/// needed only for what a finding or a view shows of it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordFacts {
    pub run_id: Option<CompactString>,
    pub created_at_ms: Option<f64>,
    pub link: LinkFacts,
    /// `signature.key_id`, when it is a string.
    pub key_id: Option<CompactString>,
    /// True when the record-level `capability_decisions` list holds an object.
    pub has_decisions: bool,
    /// The elements of `actions` that are objects: their position and facts.
    pub actions: Vec<(u32, ActionFacts)>,
}

/// `prev_record_hash`, owned ([`Link`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkFacts {
    Absent,
    Null,
    Hash(CompactString),
    Malformed,
}

impl LinkFacts {
    /// The link, borrowed.
    pub fn as_link(&self) -> Link<'_> {
        match self {
            LinkFacts::Absent => Link::Absent,
            LinkFacts::Null => Link::Null,
            LinkFacts::Hash(h) => Link::Hash(h),
            LinkFacts::Malformed => Link::Malformed,
        }
    }
}

impl RecordFacts {
    /// Reads the facts of a record from its JSON.
    pub fn of(record: &Record) -> RecordFacts {
        let obj = record.obj();
        let text = |v: Option<&Json>| v.and_then(Json::as_str).map(CompactString::from);
        let array = |key| obj.get(key).and_then(Json::as_array).unwrap_or(&[]);
        RecordFacts {
            run_id: text(obj.get("run_id")),
            created_at_ms: obj.get("created_at_ms").and_then(Json::as_f64),
            link: match obj.get("prev_record_hash") {
                None => LinkFacts::Absent,
                Some(Json::Null) => LinkFacts::Null,
                Some(Json::String(s)) => s
                    .as_str()
                    .map_or(LinkFacts::Malformed, |h| LinkFacts::Hash(h.into())),
                Some(_) => LinkFacts::Malformed,
            },
            key_id: text(obj.get("signature").and_then(|s| s.get("key_id"))),
            has_decisions: array("capability_decisions")
                .iter()
                .any(|d| d.as_object().is_some()),
            actions: action_facts(record, array("actions")),
        }
    }
}

/// The facts of the object elements of `actions`, at their positions, in a list of
/// exactly their number (a list grown by doubling holds a fifth more, for every record).
fn action_facts(record: &Record, actions: &[Json]) -> Vec<(u32, ActionFacts)> {
    let mut facts = Vec::with_capacity(actions.iter().filter(|a| a.as_object().is_some()).count());
    facts.extend(actions.iter().enumerate().filter_map(|(pos, a)| {
        let a = a.as_object()?;
        Some((pos as u32, ActionFacts::of(record, &Action(a))))
    }));
    facts
}

impl RecordFacts {
    /// Writes the facts for the evidence index ([`RecordFacts::decode`] reads them back;
    /// a change to either changes the index's format version).
    pub fn encode(&self, w: &mut Writer) {
        w.opt_str(self.run_id.as_deref());
        w.opt_f64(self.created_at_ms);
        match &self.link {
            LinkFacts::Absent => w.uint(0),
            LinkFacts::Null => w.uint(1),
            LinkFacts::Malformed => w.uint(2),
            LinkFacts::Hash(h) => {
                w.uint(3);
                w.bytes(h.as_bytes());
            }
        }
        w.opt_str(self.key_id.as_deref());
        w.uint(u64::from(self.has_decisions));
        w.uint(self.actions.len() as u64);
        for (pos, a) in &self.actions {
            w.uint(u64::from(*pos));
            a.encode(w);
        }
    }

    /// The facts [`RecordFacts::encode`] wrote; `None` when the bytes are not that.
    pub fn decode(r: &mut Reader<'_>) -> Option<RecordFacts> {
        let text = |s: Option<&str>| s.map(CompactString::from);
        let run_id = text(r.opt_str()?);
        let created_at_ms = r.opt_f64()?;
        let link = match r.uint()? {
            0 => LinkFacts::Absent,
            1 => LinkFacts::Null,
            2 => LinkFacts::Malformed,
            3 => LinkFacts::Hash(r.str()?.into()),
            _ => return None,
        };
        let key_id = text(r.opt_str()?);
        let has_decisions = r.bool()?;
        let n: usize = r.int()?;
        let mut actions = Vec::with_capacity(n.min(1 << 16));
        for _ in 0..n {
            actions.push((r.int()?, ActionFacts::decode(r)?));
        }
        Some(RecordFacts {
            run_id,
            created_at_ms,
            link,
            key_id,
            has_decisions,
            actions,
        })
    }
}

/// The text members of [`ActionFacts`], in the order they are packed.
const TEXTS: usize = 13;

/// Where [`ActionFacts::arguments_digest`] is among the texts.
const DIGEST: usize = 12;

/// In [`Texts::present`]: the arguments digest is packed (its 32 bytes, not its text).
const PACKED: u16 = 1 << 15;

/// Text members packed in one allocation: the texts one after another, where each ends,
/// and which are present (a million actions' facts stay a few dozen bytes each). The
/// arguments digest, when it is the usual `sha256:` and 64 lower-case hex digits, is kept
/// as its 32 bytes ([`pack`]): it is a third of an action's text, and only search reads
/// it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Texts {
    buf: Box<str>,
    ends: Ends,
    /// Bit `i`: text `i` is present; [`PACKED`].
    present: u16,
}

/// Where each text ends in [`Texts::buf`]: two bytes each when they fit, as they do but
/// for actions with texts of tens of kilobytes.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ends {
    Short([u16; TEXTS]),
    Long(Box<[u32; TEXTS]>),
}

impl Ends {
    fn new(ends: [u32; TEXTS]) -> Ends {
        match ends.map(u16::try_from) {
            short if short.iter().all(Result::is_ok) => Ends::Short(short.map(|e| e.unwrap_or(0))),
            _ => Ends::Long(Box::new(ends)),
        }
    }

    fn get(&self, i: usize) -> usize {
        match self {
            Ends::Short(e) => usize::from(e[i]),
            Ends::Long(e) => e[i] as usize,
        }
    }

    fn all(&self) -> [u32; TEXTS] {
        std::array::from_fn(|i| self.get(i) as u32)
    }
}

/// The 32 bytes of `sha256:` and 64 lower-case hex digits (the text they pack back to).
fn packed_digest(text: &str) -> Option<[u8; 32]> {
    let hex = text.strip_prefix("sha256:")?.as_bytes();
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0; 32];
    for (o, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        *o = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

/// A packed digest's length: 32 bytes as 37 ASCII characters of seven bits each, so the
/// texts stay one `str`.
const PACKED_LEN: usize = 37;

/// Appends `bytes` to `out` seven bits to a character ([`PACKED_LEN`] of them).
fn pack(bytes: &[u8; 32], out: &mut String) {
    let (mut acc, mut bits) = (0u32, 0);
    for &b in bytes {
        acc = acc << 8 | u32::from(b);
        bits += 8;
        while bits >= 7 {
            bits -= 7;
            out.push(char::from((acc >> bits) as u8 & 0x7f));
        }
    }
    out.push(char::from((acc << (7 - bits)) as u8 & 0x7f));
}

/// The 32 bytes [`pack`] made `text` from.
fn unpack(text: &str) -> Option<[u8; 32]> {
    if text.len() != PACKED_LEN || !text.is_ascii() {
        return None;
    }
    let (mut out, mut n) = ([0u8; 32], 0);
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes() {
        acc = acc << 7 | u32::from(c);
        bits += 7;
        if bits >= 8 && n < 32 {
            bits -= 8;
            out[n] = (acc >> bits) as u8;
            n += 1;
        }
    }
    // The bits after the last byte are the zeros `pack` put there.
    (n == 32 && acc & ((1 << bits) - 1) == 0).then_some(out)
}

/// An arguments digest as its facts keep it: its text, or its packed bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgumentsDigest<'a> {
    Text(&'a str),
    /// `sha256:` and these bytes in lower-case hex.
    Sha256([u8; 32]),
}

impl ArgumentsDigest<'_> {
    /// Appends the digest's text to `out`.
    pub fn push_to(&self, out: &mut String) {
        match self {
            ArgumentsDigest::Text(t) => out.push_str(t),
            ArgumentsDigest::Sha256(bytes) => {
                out.push_str("sha256:");
                let digit = |v: u8| char::from_digit(u32::from(v), 16).unwrap_or('?');
                for b in bytes {
                    out.push(digit(b >> 4));
                    out.push(digit(b & 15));
                }
            }
        }
    }
}

impl Texts {
    fn new(texts: [Option<&str>; TEXTS]) -> Texts {
        let mut buf = String::with_capacity(texts.iter().flatten().map(|t| t.len()).sum());
        let mut ends = [0; TEXTS];
        let mut present = 0;
        for (i, t) in texts.iter().enumerate() {
            if let Some(t) = t {
                match packed_digest(t).filter(|_| i == DIGEST) {
                    Some(bytes) => {
                        pack(&bytes, &mut buf);
                        present |= PACKED;
                    }
                    None => buf.push_str(t),
                }
                present |= 1 << i;
            }
            // Texts past 4 GiB in one action are not a thing a store holds.
            ends[i] = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        }
        Texts {
            buf: buf.into_boxed_str(),
            ends: Ends::new(ends),
            present,
        }
    }

    /// Texts read back from their parts, when they are sound: each text inside the buffer
    /// after the one before it, a packed digest one [`pack`] makes.
    fn from_parts(buf: Box<str>, ends: [u32; TEXTS], present: u16) -> Option<Texts> {
        let texts = Texts {
            buf,
            ends: Ends::new(ends),
            present,
        };
        let mut start = 0;
        for (i, &end) in ends.iter().enumerate() {
            let part = texts.buf.get(start..end as usize)?;
            let packed_digest = i == DIGEST && texts.packed();
            if packed_digest && (present & (1 << i) == 0 || unpack(part).is_none()) {
                return None;
            }
            start = end as usize;
        }
        Some(texts)
    }

    fn packed(&self) -> bool {
        self.present & PACKED != 0
    }

    /// Text `i` as kept, when it is present.
    fn kept(&self, i: usize) -> Option<&str> {
        if self.present & (1 << i) == 0 {
            return None;
        }
        let start = if i == 0 { 0 } else { self.ends.get(i - 1) };
        self.buf.get(start..self.ends.get(i))
    }

    /// Text `i`, when it is present (a packed digest is no text: [`Texts::digest`]).
    fn get(&self, i: usize) -> Option<&str> {
        if i == DIGEST && self.packed() {
            return None;
        }
        self.kept(i)
    }

    fn digest(&self) -> Option<ArgumentsDigest<'_>> {
        let kept = self.kept(DIGEST)?;
        if self.packed() {
            unpack(kept).map(ArgumentsDigest::Sha256)
        } else {
            Some(ArgumentsDigest::Text(kept))
        }
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
    /// `bounded_lease_evidence`, when it is an object (rare: kept boxed).
    pub bounded_lease_evidence: Option<Box<Obj>>,
    /// The state digest members, when the action carries a pre or post digest.
    pub state_digest: Option<Box<StateDigest>>,
}

/// An optional JSON number in eight bytes instead of sixteen (a million actions' facts
/// hold two): NaN, which no JSON number reads as, stands for none.
#[derive(Clone, Copy, Debug)]
struct Number(f64);

impl Number {
    fn new(value: Option<f64>) -> Number {
        Number(value.filter(|v| !v.is_nan()).unwrap_or(f64::NAN))
    }

    fn get(self) -> Option<f64> {
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

impl ActionFacts {
    /// Reads the facts of one action of `record`.
    pub fn of(record: &Record, action: &Action<'_>) -> ActionFacts {
        ActionFacts::with_drift(record, &ActionFields::of(action.0)).0
    }

    /// The facts among an action's indexed members (`record` holds the action), with
    /// the whole normalised drift check.
    pub fn with_drift<'a>(record: &'a Record, f: &ActionFields<'a>) -> (ActionFacts, Drift<'a>) {
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
            bounded_lease_evidence: f.obj(Key::BoundedLeaseEvidence).cloned().map(Box::new),
            state_digest,
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
        let t = &self.texts;
        w.uint(u64::from(t.present));
        w.bytes(t.buf.as_bytes());
        t.ends.all().iter().for_each(|&e| w.uint(u64::from(e)));
        w.opt_f64(self.time());
        w.uint(u64::from(self.has_decision));
        w.uint(DRIFT.iter().position(|d| *d == self.drift).unwrap_or(3) as u64);
        w.uint(u64::from(self.observed));
        w.uint(self.state_changing.map_or(0, |b| 1 + u64::from(b)));
        w.opt_f64(self.exit_code());
        w.uint(u64::from(self.has_result_digest));
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
    }

    fn decode(r: &mut Reader<'_>) -> Option<ActionFacts> {
        let present = r.int()?;
        let buf: Box<str> = r.str()?.into();
        let mut ends = [0u32; TEXTS];
        for end in &mut ends {
            *end = r.int()?;
        }
        let texts = Texts::from_parts(buf, ends, present)?;
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

    /// The packed texts give back each member as stored: absent, empty, non-ASCII, long
    /// (past what two bytes address) ones alike, whatever their neighbours; an arguments
    /// digest of `sha256:` and 64 lower-case hex digits is packed and gives back its text.
    #[test]
    fn packed_texts_read_back_as_stored() {
        let long = "x".repeat(300);
        let huge = "é".repeat(40_000);
        let digest = format!("sha256:{}", "0123456789abcdef".repeat(4));
        let upper = digest.to_uppercase().replace("SHA256", "sha256");
        let short = &digest[..70];
        let mut cases: Vec<[Option<&str>; TEXTS]> = vec![[None; TEXTS], [Some(""); TEXTS]];
        for (big, d) in [
            (&long, "sha256:ab"),
            (&huge, &digest),
            (&long, &upper),
            (&long, short),
        ] {
            cases.push([
                Some("act-1"),
                None,
                Some(""),
                Some("causal-é"),
                None,
                Some(big),
                Some("read"),
                Some("deny"),
                None,
                Some("revoked"),
                Some("ok"),
                None,
                Some(d),
            ]);
        }
        for texts in cases {
            let packed = Texts::new(texts);
            for (i, t) in texts.iter().enumerate().take(DIGEST) {
                assert_eq!(packed.get(i), *t, "{i} of {texts:?}");
            }
            let digest = packed.digest().map(|d| {
                let mut text = String::new();
                d.push_to(&mut text);
                text
            });
            assert_eq!(digest.as_deref(), texts[DIGEST]);
            let is_packed = matches!(packed.digest(), Some(ArgumentsDigest::Sha256(_)));
            assert_eq!(
                is_packed,
                texts[DIGEST].is_some_and(|d| d.len() == 71 && d == d.to_lowercase())
            );
            let long_ends = matches!(packed.ends, Ends::Long(_));
            assert_eq!(long_ends, texts[5].is_some_and(|t| t.len() > 60_000));
            let back = Texts::from_parts(packed.buf.clone(), packed.ends.all(), packed.present);
            assert_eq!(back.as_ref(), Some(&packed));
        }
        // A packed digest that is not one `pack` makes, or a text that ends inside a
        // character, is refused.
        let packed = Texts::new(cases_digest(&digest));
        let mut ends = packed.ends.all();
        ends[DIGEST] -= 1;
        assert_eq!(
            Texts::from_parts(packed.buf.clone(), ends, packed.present),
            None
        );
        let mut buf = packed.buf.to_string();
        buf.replace_range(buf.len() - 1.., "é");
        let all = packed.ends.all();
        assert_eq!(Texts::from_parts(buf.into(), all, packed.present), None);
        let texts = Texts::new([Some("é"); TEXTS]);
        let mut ends = texts.ends.all();
        ends[0] = 1;
        assert_eq!(
            Texts::from_parts(texts.buf.clone(), ends, texts.present),
            None
        );
        let bytes: [u8; 32] = std::array::from_fn(|i| (i * 37 + 255) as u8);
        let mut text = String::new();
        pack(&bytes, &mut text);
        assert_eq!((text.len(), unpack(&text)), (PACKED_LEN, Some(bytes)));
        let last = text.pop().unwrap();
        text.push(char::from(last as u8 | 1));
        assert_eq!(unpack(&text), None, "padding bits set");
    }

    fn cases_digest(digest: &str) -> [Option<&str>; TEXTS] {
        let mut texts = [Some("a"); TEXTS];
        texts[DIGEST] = Some(digest);
        texts
    }

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
        let (pos, a) = &facts.actions[0];
        assert_eq!(*pos, 1);
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
