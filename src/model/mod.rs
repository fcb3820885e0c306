//! Records as stored (raw JSON kept) with typed, read-only views over them.
//!
//! A [`Record`] owns its parsed JSON and where it came from; [`Action`] and the
//! accessors below read fields without copying, so canonical bytes are always computed
//! from exactly what was stored.

pub mod codec;
pub mod contract;
pub mod drift;
pub mod facts;
pub mod fields;
pub mod finding;
pub mod ids;
pub mod json;
pub mod kind;
pub mod name;
pub mod prefetch;
pub mod sha256;
pub mod telemetry;
pub mod text;
mod texts;
pub mod time;
pub mod vocabulary;

use json::{JStr, Json, KeySet, Obj, index_of};
use std::sync::Arc;

/// Where a record was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// The file (or `-` for stdin).
    pub path: Arc<str>,
    /// 1-based line where the record starts.
    pub line: usize,
    /// 0-based position of the record within its file.
    pub index: usize,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.path, self.line)
    }
}

/// Where a record's line is in its file: a store's records can be read again from there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Byte offset of the line's first byte in the file.
    pub offset: u64,
    /// Length of the line without its line ending.
    pub len: u32,
}

/// Reads a record's line again and parses it; `Err` says why it could not be had, or —
/// when a digest is given — that the line no longer has it (which digest is the
/// function's: the canonical SHA-256 for [`crate::load::reread`], the line's bytes'
/// for [`crate::load::reread_line`]).
pub type Reread = fn(&Source, Span, Option<&[u8; 32]>) -> Result<Json, String>;

/// One AEP record: its source and its JSON object exactly as parsed — held in memory, or
/// (once verified, for commands that answer from the analysis) read again from its file
/// when asked for, bound to what was verified (its canonical hash, or its line's bytes).
#[derive(Clone, Debug)]
pub struct Record {
    pub source: Source,
    /// Where its line is (records of NDJSON stores), `None` for documents.
    pub span: Option<Span>,
    tree: Tree,
    facts: Kept,
}

#[derive(Clone, Debug)]
enum Tree {
    Held(Json),
    /// Read again from the record's [`Span`] when asked for (a store's records are mostly
    /// this, so it is kept inline: one allocation a record fewer).
    OnDisk(OnDisk),
}

#[derive(Clone, Debug)]
struct OnDisk {
    /// The digest `reread` checks the line against.
    bound_to: [u8; 32],
    reread: Reread,
    tree: std::sync::OnceLock<Box<Result<Json, String>>>,
}

/// What a record keeps of its facts: all of them, read when first asked for, or — between
/// its verification and its batch's analysis ([`Record::keep_only_ids`]) — its ids alone.
#[derive(Clone, Debug, Default)]
struct Kept {
    /// Shared with the copy [`Record::with_record`] makes.
    all: std::sync::OnceLock<Arc<facts::RecordFacts>>,
    /// Set only while `all` is not.
    ids: Option<ids::RecordIds>,
}

/// The state of `prev_record_hash`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link<'a> {
    /// The key is not there (pre-1.12.0 emitters, Rust gateway).
    Absent,
    /// `null`: the first record of an emitter's chain.
    Null,
    /// A string (a hash spelled as usual is held as its bytes: [`LinkHash`]).
    Hash(LinkHashRef<'a>),
    /// Some other JSON type: counts as present and mismatching.
    Malformed,
}

/// A `prev_record_hash` string: the usual spelling (64 lower-case hex digits) kept as
/// the 32 bytes it stands for — a store's records hold one each — any other as its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkHash {
    Digest(crate::model::sha256::Sha256Digest),
    Text(compact_str::CompactString),
}

impl LinkHash {
    /// The link as it was written.
    pub fn new(text: &str) -> LinkHash {
        crate::model::sha256::Sha256Digest::from_hex(text)
            .map_or_else(|| LinkHash::Text(text.into()), LinkHash::Digest)
    }

    /// The link, borrowed.
    pub fn borrowed(&self) -> LinkHashRef<'_> {
        match self {
            LinkHash::Digest(d) => LinkHashRef::Digest(*d),
            LinkHash::Text(t) => LinkHashRef::Text(t),
        }
    }
}

impl std::fmt::Display for LinkHash {
    /// The text as the record has it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.borrowed().fmt(f)
    }
}

/// A `prev_record_hash` string, borrowed ([`LinkHash`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkHashRef<'a> {
    Digest(crate::model::sha256::Sha256Digest),
    Text(&'a str),
}

impl LinkHashRef<'_> {
    /// The chain hash it names, when it is spelled as one.
    pub fn digest(self) -> Option<crate::model::sha256::Sha256Digest> {
        match self {
            LinkHashRef::Digest(d) => Some(d),
            LinkHashRef::Text(t) => crate::model::sha256::Sha256Digest::from_hex(t),
        }
    }
}

impl std::fmt::Display for LinkHashRef<'_> {
    /// The text as the record has it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkHashRef::Digest(d) => d.fmt(f),
            LinkHashRef::Text(t) => f.write_str(t),
        }
    }
}

impl Link<'_> {
    /// True for a value that claims a predecessor.
    pub fn is_present(self) -> bool {
        matches!(self, Link::Hash(_) | Link::Malformed)
    }
}

/// Side-effect classes in policy order (analysis-rules §2); a missing class is `unknown`.
pub const SIDE_EFFECT_ORDER: [&str; 5] = [
    "read",
    "mutate-local",
    "mutate-external",
    "network-egress",
    "unknown",
];

/// Rank of a side-effect class in [`SIDE_EFFECT_ORDER`] (unlisted values rank as `unknown`).
pub fn side_effect_rank(class: Option<&str>) -> usize {
    class
        .and_then(|c| SIDE_EFFECT_ORDER.iter().position(|x| *x == c))
        .unwrap_or(4)
}

/// What a record whose line could not be read again stands for: an empty object.
static UNREADABLE: Json = Json::Object(Obj {
    members: Vec::new(),
    has_duplicates: false,
});

impl Record {
    /// A record held in memory.
    pub fn new(source: Source, span: Option<Span>, json: Json) -> Record {
        Record {
            source,
            span,
            tree: Tree::Held(json),
            facts: Kept::default(),
        }
    }

    /// A store record known without being read (from the evidence index): its place,
    /// the canonical hash it was verified with and its facts; its JSON is read from the
    /// file when asked for, as for a record let go ([`Record::let_go`]).
    pub fn on_disk(
        source: Source,
        span: Span,
        canonical: [u8; 32],
        reread: Reread,
        facts: facts::RecordFacts,
    ) -> Record {
        Record {
            source,
            span: Some(span),
            tree: Tree::OnDisk(OnDisk {
                bound_to: canonical,
                reread,
                tree: std::sync::OnceLock::new(),
            }),
            facts: Kept {
                all: Arc::new(facts).into(),
                ids: None,
            },
        }
    }

    /// Reads the record's line again — bound to what was verified unless `unbound` — for
    /// a record whose tree was let go.
    fn read_again(&self, d: &OnDisk, unbound: bool) -> Result<Json, String> {
        let span = self.span.ok_or("its line in the file is not known")?;
        (d.reread)(&self.source, span, (!unbound).then_some(&d.bound_to))
    }

    /// The JSON as parsed. A record whose tree was let go ([`Record::let_go`]) is read
    /// and parsed again; if that fails, or the line is no longer the one that was
    /// verified, it reads as an empty object and [`Record::reread_error`] says why.
    pub fn json(&self) -> &Json {
        match &self.tree {
            Tree::Held(json) => json,
            Tree::OnDisk(d) => d
                .tree
                .get_or_init(|| Box::new(self.read_again(d, false)))
                .as_ref()
                .as_ref()
                .unwrap_or(&UNREADABLE),
        }
    }

    /// Calls `f` with the record, its JSON held: itself, or — when its tree was let go
    /// and nothing asked for it yet — a copy holding the JSON read again for this call
    /// alone, so what a pass over many records reads does not pile up in memory. A failed
    /// read is kept ([`Record::reread_error`]) and `f` sees the record as an empty object.
    pub fn with_record<R>(&self, f: impl FnOnce(&Record) -> R) -> R {
        let Tree::OnDisk(d) = &self.tree else {
            return f(self);
        };
        if d.tree.get().is_some() {
            return f(self);
        }
        match self.read_again(d, false) {
            Ok(json) => f(&Record {
                source: self.source.clone(),
                span: self.span,
                tree: Tree::Held(json),
                facts: Kept {
                    all: self.facts.all.clone(),
                    ids: None,
                },
            }),
            Err(e) => {
                let _ = d.tree.set(Box::new(Err(e)));
                f(self)
            }
        }
    }

    /// Keeps only the record's own facts and its actions' ids ([`ids::RecordIds`])
    /// once its tree is let go: what is read of it before its batch's analysis, which
    /// works on [`Record::with_facts_again`].
    pub fn keep_only_ids(&mut self) {
        if let Some(all) = self.facts.all.take() {
            self.facts.ids = Some(ids::RecordIds::of(&all));
        }
    }

    /// True when the record keeps facts (all of them, or only its ids).
    pub fn keeps_facts(&self) -> bool {
        self.facts.all.get().is_some() || self.facts.ids.is_some()
    }

    /// True when the record keeps only its actions' ids ([`Record::keep_only_ids`]).
    pub fn keeps_only_ids(&self) -> bool {
        self.only_ids().is_some()
    }

    /// The ids a record keeping only ids keeps.
    fn only_ids(&self) -> Option<&ids::RecordIds> {
        self.facts
            .ids
            .as_ref()
            .filter(|_| self.facts.all.get().is_none())
    }

    /// Lets go of the ids a record keeping only ids keeps, once nothing reads them (the
    /// groups of `check` are made): its facts are read again from its line
    /// when asked for ([`Record::facts`], [`Record::with_facts_again`]).
    pub fn let_go_of_ids(&mut self) {
        self.facts.ids = None;
    }

    /// Lets go of the facts of a record whose tree was let go, once nothing reads them
    /// (its batch of `check` is analysed): read again from its line if asked.
    pub fn let_go_of_facts(&mut self) {
        if matches!(self.tree, Tree::OnDisk(_)) {
            self.facts = Kept::default();
        }
    }

    /// The record with all its facts: a copy of it, its facts read again from its line
    /// (bound to what was verified, the tree not kept) when it keeps only ids or none. A
    /// line that cannot be read again gives the facts of an empty record, and the failure
    /// is kept ([`Record::reread_error`]).
    pub fn with_facts_again(&self) -> Record {
        let all = match self.facts.all.get() {
            Some(all) => all.clone(),
            None => Arc::new(self.with_record(facts::RecordFacts::of)),
        };
        Record {
            source: self.source.clone(),
            span: self.span,
            tree: self.tree.clone(),
            facts: Kept {
                all: all.into(),
                ids: None,
            },
        }
    }

    /// Takes on the failure of `copy` (a clone of this record) to be read again, so the
    /// failure is not lost with the copy.
    pub fn note_reread_error_of(&self, copy: &Record) {
        if let (Tree::OnDisk(d), Some(e)) = (&self.tree, copy.reread_error()) {
            let _ = d.tree.set(Box::new(Err(e.to_string())));
        }
    }

    /// Why the record could not be read again, once it was asked for and could not be.
    pub fn reread_error(&self) -> Option<&str> {
        match &self.tree {
            Tree::OnDisk(d) => d.tree.get()?.as_ref().as_ref().err().map(String::as_str),
            Tree::Held(_) => None,
        }
    }

    /// True while the parsed JSON is in memory.
    pub fn is_held(&self) -> bool {
        match &self.tree {
            Tree::Held(_) => true,
            Tree::OnDisk(d) => d.tree.get().is_some(),
        }
    }

    /// Lets go of the parsed JSON of a record with a [`Span`] (its facts are taken
    /// first): later reads of it go through `reread`, bound to `bound_to` (the digest
    /// that function checks: [`Reread`]). False (and nothing changes) without a span.
    pub fn let_go(&mut self, bound_to: [u8; 32], reread: Reread) -> bool {
        if self.span.is_none() {
            return false;
        }
        self.facts();
        self.tree = Tree::OnDisk(OnDisk {
            bound_to,
            reread,
            tree: std::sync::OnceLock::new(),
        });
        true
    }

    /// Holds the JSON again, as the file has it now (not bound to a hash: for a record
    /// that is to be verified again). False, and the record reads as unreadable, when
    /// its line cannot be read.
    pub fn hold_again(&mut self) -> bool {
        let Tree::OnDisk(d) = &self.tree else {
            return true;
        };
        match self.read_again(d, true) {
            Ok(json) => {
                self.tree = Tree::Held(json);
                self.facts = Kept::default();
                true
            }
            Err(e) => {
                let _ = d.tree.set(Box::new(Err(e)));
                false
            }
        }
    }

    /// What the cross-record passes read of the record, read once (from its line again,
    /// the tree not kept, once the record has let go of them). A record keeping only ids
    /// reads them all again and keeps them: what is read between verification and
    /// analysis uses the accessors below, which read the ids.
    pub fn facts(&self) -> &facts::RecordFacts {
        self.facts
            .all
            .get_or_init(|| Arc::new(self.with_record(facts::RecordFacts::of)))
    }

    /// The record's top-level object (loading guarantees an object).
    pub fn obj(&self) -> &Obj {
        static EMPTY: std::sync::OnceLock<Obj> = std::sync::OnceLock::new();
        self.json()
            .as_object()
            .unwrap_or_else(|| EMPTY.get_or_init(Obj::default))
    }

    /// A top-level field.
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.obj().get(key)
    }

    /// A top-level string field.
    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Json::as_str)
    }

    /// `schema_version` when it is a string.
    pub fn schema_version(&self) -> Option<&str> {
        self.str_field("schema_version")
    }

    /// Its evidence type (aep-fields §16): an AEP record or a sibling.
    pub fn kind(&self) -> kind::Kind {
        match self.only_ids() {
            Some(ids) => ids.kind(),
            None => self.facts().kind,
        }
    }

    /// `run_id` when it is a string.
    pub fn run_id(&self) -> Option<&str> {
        match self.only_ids() {
            Some(ids) => ids.run_id(),
            None => self.facts().run_id.as_deref(),
        }
    }

    /// `created_at_ms` when it is a number.
    pub fn created_at_ms(&self) -> Option<f64> {
        match self.only_ids() {
            Some(ids) => ids.created_at_ms(),
            None => self.facts().created_at_ms,
        }
    }

    /// The `prev_record_hash` link.
    pub fn link(&self) -> Link<'_> {
        match self.only_ids() {
            Some(ids) => ids.link(),
            None => self.facts().link.as_link(),
        }
    }

    /// `signature.key_id` when it is a string.
    pub fn key_id(&self) -> Option<&str> {
        match self.only_ids() {
            Some(ids) => ids.key_id(),
            None => self.facts().key_id.as_deref(),
        }
    }

    /// Each action's ids, in order.
    pub fn action_ids(&self) -> Vec<ids::ActionIds<'_>> {
        match self.only_ids() {
            Some(ids) => ids.actions(),
            None => self.facts().actions.ids(),
        }
    }

    /// The actions (elements of `actions` that are objects).
    pub fn actions(&self) -> impl Iterator<Item = Action<'_>> {
        self.get("actions")
            .and_then(Json::as_array)
            .unwrap_or(&[])
            .iter()
            .filter_map(|a| a.as_object().map(Action))
    }

    /// The action at a position of the `actions` array, when it is an object.
    pub fn action_at(&self, pos: usize) -> Option<Action<'_>> {
        self.get("actions")
            .and_then(Json::as_array)
            .and_then(|a| a.get(pos))
            .and_then(Json::as_object)
            .map(Action)
    }

    /// The record-level `capability_decisions` list.
    pub fn decisions(&self) -> impl Iterator<Item = Decision<'_>> {
        self.get("capability_decisions")
            .and_then(Json::as_array)
            .unwrap_or(&[])
            .iter()
            .filter_map(|d| d.as_object().map(Decision))
    }

    /// The first decision of the record-level list with the (capability, subject,
    /// resource) of `d`: the one the list shows for it.
    pub fn listed_decision(&self, d: &Decision<'_>) -> Option<Decision<'_>> {
        self.decisions().find(|x| x.triple() == d.triple())
    }

    /// True when an action's decision is not the one the record-level list shows for its
    /// (capability, subject, resource): another outcome or grant (F-DECISION-SHADOWED).
    pub fn shadows_a_decision(&self) -> bool {
        self.actions().any(|a| {
            let Some(d) = a.decision() else { return false };
            self.listed_decision(&d).is_some_and(|listed| {
                listed.outcome() != d.outcome() || listed.grant() != d.grant()
            })
        })
    }

    /// True when the record carries any signature material.
    pub fn is_signed(&self) -> bool {
        matches!(self.get("signature"), Some(Json::Object(_)))
            || self.get("dsse_envelope").is_some()
    }
}

/// One element of `actions[]`.
#[derive(Clone, Copy, Debug)]
pub struct Action<'a>(pub &'a Obj);

impl<'a> Action<'a> {
    /// A field of the action.
    pub fn get(&self, key: &str) -> Option<&'a Json> {
        self.0.get(key)
    }

    /// The members `names` names, those the action has, as stored and in that order: a
    /// name `capability_decision.X` is the member `X` of its decision. What a finding's
    /// evidence quotes.
    pub fn quoted(&self, names: &[&str]) -> Obj {
        let members = (names.iter())
            .filter_map(|name| {
                let value = match name.strip_prefix("capability_decision.") {
                    Some(member) => self.get("capability_decision")?.get(member),
                    None => self.get(name),
                }?;
                Some((JStr::from(*name), value.clone()))
            })
            .collect();
        Obj {
            members,
            has_duplicates: false,
        }
    }

    /// A string field of the action.
    pub fn str_field(&self, key: &str) -> Option<&'a str> {
        self.get(key).and_then(Json::as_str)
    }

    /// `action_id`.
    pub fn id(&self) -> Option<&'a str> {
        self.str_field("action_id")
    }

    /// `tool_name`.
    pub fn tool(&self) -> Option<&'a str> {
        self.str_field("tool_name")
    }

    /// `side_effect_class` as recorded.
    pub fn side_effect_class(&self) -> Option<&'a str> {
        self.str_field("side_effect_class")
    }

    /// `parent_action_id`.
    pub fn parent(&self) -> Option<&'a str> {
        self.str_field("parent_action_id")
    }

    /// `timestamp_ms`.
    pub fn timestamp_ms(&self) -> Option<f64> {
        self.get("timestamp_ms").and_then(Json::as_f64)
    }

    /// The action's `capability_decision`.
    pub fn decision(&self) -> Option<Decision<'a>> {
        self.get("capability_decision")
            .and_then(Json::as_object)
            .map(Decision)
    }
}

/// The decision members the analysis and the views read, each decision in one pass
/// ([`DecisionMembers`]).
pub const DECISION_MEMBERS: [&str; 10] = [
    "decision",
    "capability",
    "subject",
    "resource",
    "approval_grant",
    "approval_decision",
    "approval_mode",
    "approval_extension",
    "deny_reason_class",
    "reason_code",
];

static DECISION_KEYS: KeySet = KeySet::new(&DECISION_MEMBERS);

/// The [`DECISION_MEMBERS`] of one decision, by position (all none without a decision).
#[derive(Clone, Copy, Debug, Default)]
pub struct DecisionMembers<'a>(pub [Option<&'a Json>; DECISION_MEMBERS.len()]);

impl<'a> DecisionMembers<'a> {
    /// Reads the members of a decision in one pass.
    pub fn of(decision: Option<&'a Obj>) -> DecisionMembers<'a> {
        decision.map_or_else(Default::default, |d| {
            DecisionMembers(d.get_many(&DECISION_KEYS))
        })
    }

    fn text(&self, name: usize) -> Option<&'a str> {
        self.0[name].and_then(Json::as_str)
    }

    /// `decision` ([`Decision::outcome`]).
    pub fn outcome(&self) -> Option<&'a str> {
        self.text(const { index_of(&DECISION_MEMBERS, "decision") })
    }

    /// The authority shape: RFC-final `approval_grant`, else the implemented
    /// `approval_mode` (both dialects name `bounded-lease` and `one-shot-payload` alike).
    pub fn grant(&self) -> Option<&'a str> {
        self.text(const { index_of(&DECISION_MEMBERS, "approval_grant") })
            .or_else(|| self.text(const { index_of(&DECISION_MEMBERS, "approval_mode") }))
    }

    /// `resource`, when it is a string.
    pub fn resource(&self) -> Option<&'a str> {
        self.text(const { index_of(&DECISION_MEMBERS, "resource") })
    }

    /// The RFC-final `approval_decision` label.
    pub fn approval_decision(&self) -> Option<&'a str> {
        self.text(const { index_of(&DECISION_MEMBERS, "approval_decision") })
    }

    /// `subject`.
    pub fn subject(&self) -> Option<&'a str> {
        self.text(const { index_of(&DECISION_MEMBERS, "subject") })
    }
}

/// A capability decision (record list entry or `actions[].capability_decision`).
#[derive(Clone, Copy, Debug)]
pub struct Decision<'a>(pub &'a Obj);

impl<'a> Decision<'a> {
    /// (capability, subject, resource): what a decision is about.
    pub fn triple(&self) -> [Option<&'a str>; 3] {
        ["capability", "subject", "resource"].map(|k| self.str_field(k))
    }

    /// A string field of the decision.
    pub fn str_field(&self, key: &str) -> Option<&'a str> {
        self.0.get(key).and_then(Json::as_str)
    }

    /// `decision`: allow, deny, ask_user, dry_run.
    pub fn outcome(&self) -> Option<&'a str> {
        self.str_field("decision")
    }

    /// The authority shape ([`DecisionMembers::grant`]).
    pub fn grant(&self) -> Option<&'a str> {
        DecisionMembers::of(Some(self.0)).grant()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_is_shadowed_when_the_list_shows_another_for_its_triple() {
        let record = |list: &str, action: &str| {
            let text = format!(
                r#"{{"run_id":"r","capability_decisions":[{list}],"actions":[{{"action_id":"a","capability_decision":{action}}}]}}"#
            );
            let source = Source {
                path: "t.ndjson".into(),
                line: 1,
                index: 0,
            };
            Record::new(source, None, crate::load::parser::parse(&text).unwrap())
        };
        let allow = r#"{"capability":"c","subject":"s","resource":"r","decision":"allow"}"#;
        let deny = r#"{"capability":"c","subject":"s","resource":"r","decision":"deny"}"#;
        let other = r#"{"capability":"c","subject":"s","resource":"other","decision":"allow"}"#;
        assert!(record(allow, deny).shadows_a_decision());
        assert!(record(&format!("{allow},{deny}"), deny).shadows_a_decision());
        assert!(!record(&format!("{deny},{allow}"), deny).shadows_a_decision());
        assert!(!record(other, deny).shadows_a_decision());
        assert!(!record("", deny).shadows_a_decision());
        // What the facts keep says the same, so the record is read again only then.
        assert!(facts::RecordFacts::of(&record(allow, deny)).decision_shadowed);
        assert!(!facts::RecordFacts::of(&record(deny, deny)).decision_shadowed);
    }

    #[test]
    fn a_link_reads_back_as_written_and_names_a_hash_only_in_the_usual_spelling() {
        let lower = "0a".repeat(32);
        let upper = lower.to_uppercase();
        for text in [lower.as_str(), upper.as_str(), "sha256:0a", ""] {
            assert_eq!(LinkHash::new(text).to_string(), text);
        }
        assert!(matches!(LinkHash::new(&lower), LinkHash::Digest(_)));
        assert_eq!(
            LinkHash::new(&lower).borrowed().digest(),
            crate::model::sha256::Sha256Digest::from_hex(&lower)
        );
        assert!(matches!(LinkHash::new(&upper), LinkHash::Text(_)));
        assert_eq!(LinkHash::new(&upper).borrowed().digest(), None);
    }

    fn reread_as(_: &Source, _: Span, _: Option<&[u8; 32]>) -> Result<Json, String> {
        crate::load::parser::parse(r#"{"run_id":"again"}"#).map_err(|e| e.message)
    }

    fn unreadable(_: &Source, _: Span, _: Option<&[u8; 32]>) -> Result<Json, String> {
        Err("gone".into())
    }

    fn record() -> Record {
        let source = Source {
            path: "s.ndjson".into(),
            line: 1,
            index: 0,
        };
        let json = crate::load::parser::parse(r#"{"run_id":"r"}"#).unwrap();
        Record::new(source, Some(Span { offset: 0, len: 14 }), json)
    }

    /// A record let go keeps its facts; `with_record` reads its JSON for the call alone,
    /// `json` reads and keeps it; a failed read is an empty object and says why.
    #[test]
    fn a_record_let_go_reads_again_when_asked() {
        let mut r = record();
        assert!(r.let_go([0; 32], reread_as));
        assert!(!r.is_held());
        assert_eq!(r.run_id(), Some("r"), "facts taken before letting go");
        let seen = r.with_record(|r| r.str_field("run_id").map(str::to_string));
        assert_eq!(seen.as_deref(), Some("again"));
        assert!(!r.is_held(), "with_record does not keep it");
        assert_eq!(r.str_field("run_id"), Some("again"));
        assert!(r.is_held() && r.reread_error().is_none());

        // Keeping only ids: what the ids say (kept from before), no read; all the facts
        // again are the line's as read now.
        let mut r = record();
        r.let_go([0; 32], reread_as);
        r.keep_only_ids();
        assert!(r.keeps_only_ids() && r.keeps_facts());
        assert_eq!(
            (r.run_id(), r.link(), r.key_id()),
            (Some("r"), Link::Absent, None)
        );
        assert!(r.action_ids().is_empty() && !r.is_held());
        assert_eq!(r.with_facts_again().run_id(), Some("again"));
        r.let_go_of_ids();
        assert!(!r.keeps_facts());

        let mut r = record();
        r.let_go([0; 32], unreadable);
        assert!(r.obj().members.is_empty());
        assert_eq!(r.reread_error(), Some("gone"));
        assert!(!r.hold_again());

        let mut whole = record();
        whole.span = None;
        assert!(
            !whole.let_go([0; 32], reread_as),
            "a document has no line to read"
        );
        assert!(whole.is_held());
    }
}
