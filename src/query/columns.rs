//! Evaluating an expression: each field's values over every action, made once per
//! opened evidence ([`Columns`]) from the one view of it ([`Ctx`]), and the expression
//! compiled against them — a string test is decided once per distinct value, so an
//! expression over a million actions is a table look-up per action and field.

use super::fields::{FIELDS, Type};
use super::parse::{Cmp, Expr, Item, Lit, Op, Query};
use crate::analysis::Analysis;
use crate::analysis::capture::Capture;
use crate::analysis::evidence::EvidenceRef;
use crate::analysis::graph::{ActionNode, NodeId};
use crate::load::Corpus;
use crate::model::finding::Finding;
use crate::review::file::Review;
use crate::review::marks::Mark;
use crate::verify::Report;
use crate::verify::verdict::RecordVerdict;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

/// A field's value for one action, as its getter gives it.
#[derive(Clone, Debug)]
pub enum Value<'a> {
    Null,
    Str(Cow<'a, str>),
    /// An int or a time (epoch milliseconds).
    Num(f64),
    Bool(bool),
    /// A severity's rank, 1 (info) to 4 (high).
    Sev(u8),
    Set(Vec<&'a str>),
}

/// The opened evidence as the fields read it: every action (graph node), its record's
/// verdict, the findings naming it, its chain role, and the review's marks.
pub struct Ctx<'a> {
    corpus: &'a Corpus,
    analysis: &'a Analysis,
    /// `None` while the explorer still verifies: record fields are null until then.
    report: Option<&'a Report>,
    findings: &'a [Finding],
    capture: Option<&'a Capture>,
    marks: Option<(&'a Review, &'a HashMap<NodeId, usize>)>,
    verdicts: OnceLock<Vec<RecordVerdict>>,
    /// (node, finding) for every action a finding names, sorted by node: given by a
    /// front end that keeps one (the explorer), else made when first needed.
    named: OnceLock<Vec<(NodeId, u32)>>,
    named_given: Option<&'a [(NodeId, u32)]>,
    /// Each action's flags and which of them make a problem, from a front end that keeps
    /// them (the explorer): `problem` then reads them instead of deciding again.
    problems_given: Option<(&'a [u16], u16)>,
    roles: OnceLock<FxHashMap<NodeId, &'static str>>,
    anchored: OnceLock<Vec<bool>>,
}

impl<'a> Ctx<'a> {
    /// The view of verified evidence.
    pub fn new(ev: EvidenceRef<'a>) -> Ctx<'a> {
        Ctx::of(
            ev.corpus,
            ev.analysis,
            Some(ev.report),
            ev.findings,
            ev.capture,
        )
    }

    /// The view of evidence whose verification may not have finished (`report` none).
    pub fn of(
        corpus: &'a Corpus,
        analysis: &'a Analysis,
        report: Option<&'a Report>,
        findings: &'a [Finding],
        capture: Option<&'a Capture>,
    ) -> Ctx<'a> {
        Ctx {
            corpus,
            analysis,
            report,
            findings,
            capture,
            marks: None,
            verdicts: OnceLock::new(),
            named: OnceLock::new(),
            named_given: None,
            problems_given: None,
            roles: OnceLock::new(),
            anchored: OnceLock::new(),
        }
    }

    /// With the findings each action is named by, as the caller keeps them: (node, index
    /// into the findings), sorted by node.
    pub fn with_named(mut self, named: &'a [(NodeId, u32)]) -> Self {
        self.named_given = Some(named);
        self
    }

    /// With the explorer's flags per action and the mask of those that make a problem.
    pub fn with_problems(mut self, flags: &'a [u16], problem: u16) -> Self {
        self.problems_given = Some((flags, problem));
        self
    }

    /// With a review's marks, placed on the actions (`by_node`: action → mark index).
    pub fn with_marks(mut self, review: &'a Review, by_node: &'a HashMap<NodeId, usize>) -> Self {
        self.marks = Some((review, by_node));
        self
    }

    /// How many actions (graph nodes) there are.
    pub fn len(&self) -> usize {
        self.analysis.graph.nodes.len()
    }

    /// True when there is no action.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(super) fn report(&self) -> Option<&'a Report> {
        self.report
    }

    pub(super) fn node(&self, n: NodeId) -> &'a ActionNode {
        &self.analysis.graph.nodes[n as usize]
    }

    pub(super) fn facts(&self, n: NodeId) -> Option<&'a crate::model::facts::ActionFacts> {
        self.analysis.graph.facts(self.corpus, n)
    }

    pub(super) fn run_id(&self, n: NodeId) -> &'a str {
        &self.analysis.graph.runs[self.node(n).run as usize].id
    }

    pub(super) fn time(&self, n: NodeId) -> Option<f64> {
        self.node(n).time()
    }

    pub(super) fn source(&self, n: NodeId) -> &'a crate::model::Source {
        &self.corpus.record(self.node(n).record as usize).source
    }

    pub(super) fn chain_name(&self, n: NodeId) -> crate::analysis::lineage::ChainName {
        self.analysis.graph.chain_name(self.corpus, n)
    }

    pub(super) fn lease(&self, n: NodeId) -> Option<&'a crate::analysis::lease::LeaseView> {
        self.analysis.leases.by_node.get(&n)
    }

    /// The verdict of the record the action is shown from (none before verification).
    pub(super) fn verdict(&self, n: NodeId) -> Option<&RecordVerdict> {
        let report = self.report?;
        let all = self
            .verdicts
            .get_or_init(|| report.records.par_iter().map(RecordVerdict::of).collect());
        all.get(self.node(n).record as usize)
    }

    /// The record's timestamp state (`opaque` for a proof that is not verified).
    pub(super) fn time_proof(&self, n: NodeId) -> Option<&'static str> {
        let r = self.report?.records.get(self.node(n).record as usize)?;
        let state = r.authenticity.timestamp?;
        state.name().split(' ').next()
    }

    /// The record lies on a chain path at or before a verified anchor.
    pub(super) fn anchored(&self, n: NodeId) -> Option<bool> {
        let report = self.report?;
        let all = self.anchored.get_or_init(|| {
            let mut on = vec![false; report.records.len()];
            for p in &report.links.paths {
                if let Some(a) = &p.anchored_through {
                    for &m in p.members.iter().take(a.position + 1) {
                        if let Some(x) = on.get_mut(m as usize) {
                            *x = true;
                        }
                    }
                }
            }
            on
        });
        all.get(self.node(n).record as usize).copied()
    }

    pub(super) fn span(&self, n: NodeId) -> Option<bool> {
        self.capture.map(|c| c.span_of(n).is_some())
    }

    /// The findings naming the action.
    pub(super) fn findings_of(&self, n: NodeId) -> impl Iterator<Item = &'a Finding> + '_ {
        let named = self.named_given.unwrap_or_else(|| {
            self.named.get_or_init(|| {
                let by_node = (self.analysis.graph).findings_by_node(self.corpus, self.findings);
                let mut pairs: Vec<(NodeId, u32)> = (by_node.into_iter())
                    .flat_map(|(n, list)| list.into_iter().map(move |i| (n, i)))
                    .collect();
                pairs.sort_unstable();
                pairs
            })
        });
        let findings = self.findings;
        crate::analysis::graph::indices_of(named, n).filter_map(move |i| findings.get(i))
    }

    /// `start`, `reapproved` or `member` of a denied→re-approved chain.
    pub(super) fn role(&self, n: NodeId) -> Option<&'static str> {
        let roles = self.roles.get_or_init(|| {
            use crate::analysis::chains::{ChainKind, Role};
            let mut roles = FxHashMap::default();
            let deny =
                (self.analysis.chains.iter()).filter(|c| c.kind == ChainKind::DenyReapproval);
            for c in deny {
                for s in &c.steps {
                    roles.insert(s.node, "member");
                }
            }
            for (node, role) in crate::analysis::chains::roles(&self.analysis.chains) {
                let name = match role {
                    Role::Start => "start",
                    Role::Reapproved => "reapproved",
                };
                roles.insert(node, name);
            }
            roles
        });
        roles.get(&n).copied()
    }

    /// Denied, drifted, outside its lease window, a failing signature or binding, or a
    /// high finding: the explorer's problems (`e`, `is:problem`).
    pub(super) fn problem(&self, n: NodeId) -> bool {
        use crate::analysis::lease::LeaseVerdict;
        use crate::verify::signature::AuthStatus;
        if let Some((flags, problem)) = self.problems_given {
            return flags.get(n as usize).is_some_and(|f| f & problem != 0);
        }
        let Some(f) = self.facts(n) else {
            return false;
        };
        let outside = self
            .lease(n)
            .is_some_and(|l| l.verdict.is_outside() && l.verdict != LeaseVerdict::UnknownWindow);
        let failing = (self.report)
            .and_then(|r| r.records.get(self.node(n).record as usize))
            .and_then(|r| r.authenticity.status)
            .is_some_and(|s| !matches!(s, AuthStatus::Valid | AuthStatus::Unsigned));
        f.outcome() == Some("deny")
            || f.drift == crate::model::drift::DriftResult::Drifted
            || outside
            || failing
            || (self.findings_of(n)).any(|f| f.severity == crate::model::finding::Severity::High)
    }

    pub(super) fn mark(&self, n: NodeId) -> Option<&'a Mark> {
        let (review, by_node) = self.marks?;
        review.marks.get(*by_node.get(&n)?)
    }
}

/// A distinct value of a string, bool or severity column.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Str(Box<str>),
    Bool(bool),
    Sev(u8),
}

/// No value.
const NULL: u32 = u32::MAX;

/// One field's values over every action.
enum Column {
    /// Strings, bools and severities: a code per action into the distinct values.
    Coded { codes: Vec<u32>, dict: Vec<Key> },
    /// Ints and times (NaN: null).
    Num(Vec<f64>),
    /// Sets: each action's members, `offsets[i]..offsets[i + 1]` of `codes`.
    Set {
        offsets: Vec<u32>,
        codes: Vec<u32>,
        dict: Vec<Key>,
    },
}

/// Each field's values, made once when an expression first reads the field.
pub struct Columns {
    cols: Vec<OnceLock<Column>>,
}

impl std::fmt::Debug for Columns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let made = self.cols.iter().filter(|c| c.get().is_some()).count();
        write!(f, "Columns({made} of {} made)", self.cols.len())
    }
}

impl Default for Columns {
    fn default() -> Self {
        Columns {
            cols: FIELDS.iter().map(|_| OnceLock::new()).collect(),
        }
    }
}

impl Columns {
    /// Makes every column an expression may read, but the review's (marks change while
    /// the explorer runs) and the ids (a value per action): the explorer's worker does it
    /// once the evidence is verified, so that no keystroke waits for a column.
    pub fn warm(&self, ctx: &Ctx<'_>) {
        for (i, f) in FIELDS.iter().enumerate() {
            if !f.reads_review() && !matches!(f.name, "action" | "parent") {
                self.column(i, ctx);
            }
        }
    }

    /// Forgets the review fields' values (after a mark changed).
    pub fn forget_marks(&mut self) {
        for (i, f) in FIELDS.iter().enumerate() {
            if f.reads_review() {
                self.cols[i] = OnceLock::new();
            }
        }
    }

    /// The distinct string values field `f` takes over the actions, sorted (for
    /// completion); none for a field that is not a string or a set.
    pub fn values(&self, f: usize, ctx: &Ctx<'_>) -> Vec<&str> {
        let dict = match self.column(f, ctx) {
            Column::Coded { dict, .. } | Column::Set { dict, .. } => dict,
            Column::Num(_) => return Vec::new(),
        };
        let mut out: Vec<&str> = (dict.iter())
            .filter_map(|k| match k {
                Key::Str(s) => Some(&**s),
                _ => None,
            })
            .collect();
        out.sort_unstable();
        out
    }

    fn column(&self, f: usize, ctx: &Ctx<'_>) -> &Column {
        self.cols[f].get_or_init(|| make(f, ctx))
    }
}

/// Field `f`'s column: each action's value coded into the distinct values (owned once
/// each, whatever the number of actions).
fn make(f: usize, ctx: &Ctx<'_>) -> Column {
    let field = &FIELDS[f];
    let each = || (0..ctx.len() as NodeId).into_par_iter();
    match field.ty {
        Type::Int | Type::Time => Column::Num(
            each()
                .map(|n| match (field.get)(ctx, n) {
                    Value::Num(x) => x,
                    _ => f64::NAN,
                })
                .collect(),
        ),
        Type::Bool | Type::Severity => {
            // Two (or four) values: the code is the value.
            let dict: Vec<Key> = match field.ty {
                Type::Bool => vec![Key::Bool(false), Key::Bool(true)],
                _ => (1..=4).map(Key::Sev).collect(),
            };
            let codes = each()
                .map(|n| match (field.get)(ctx, n) {
                    Value::Bool(b) => u32::from(b),
                    Value::Sev(s) => u32::from(s) - 1,
                    _ => NULL,
                })
                .collect();
            Column::Coded { codes, dict }
        }
        Type::Set | Type::Str => {
            let values: Vec<Value<'_>> = each().map(|n| (field.get)(ctx, n)).collect();
            let mut interned = Interned::default();
            let mut codes = Vec::with_capacity(values.len());
            if field.ty == Type::Set {
                let mut offsets = vec![0u32];
                for v in &values {
                    if let Value::Set(members) = v {
                        codes.extend(members.iter().map(|m| interned.code(m)));
                    }
                    offsets.push(codes.len() as u32);
                }
                return Column::Set {
                    offsets,
                    codes,
                    dict: interned.dict,
                };
            }
            for v in &values {
                codes.push(match v {
                    Value::Str(s) => interned.code(s),
                    _ => NULL,
                });
            }
            Column::Coded {
                codes,
                dict: interned.dict,
            }
        }
    }
}

/// Distinct strings, each owned once, and the code of each.
#[derive(Default)]
struct Interned<'v> {
    codes: FxHashMap<&'v str, u32>,
    dict: Vec<Key>,
}

impl<'v> Interned<'v> {
    fn code(&mut self, s: &'v str) -> u32 {
        *self.codes.entry(s).or_insert_with(|| {
            self.dict.push(Key::Str(s.into()));
            (self.dict.len() - 1) as u32
        })
    }
}

/// A value as a test sees it.
#[derive(Clone, Copy)]
enum Scalar<'v> {
    Str(&'v str),
    Num(f64),
    Bool(bool),
}

impl Key {
    fn scalar(&self) -> Scalar<'_> {
        match self {
            Key::Str(s) => Scalar::Str(s),
            Key::Bool(b) => Scalar::Bool(*b),
            Key::Sev(s) => Scalar::Num(f64::from(*s)),
        }
    }
}

/// `v == lit` (never for a null literal).
fn equals(v: Scalar<'_>, lit: &Lit) -> bool {
    match (v, lit) {
        (Scalar::Str(a), Lit::Str(b)) => a == b,
        (Scalar::Num(a), Lit::Num(b)) => a == *b,
        (Scalar::Bool(a), Lit::Bool(b)) => a == *b,
        _ => false,
    }
}

fn number(lit: &Lit) -> f64 {
    match lit {
        Lit::Num(x) => *x,
        _ => f64::NAN,
    }
}

/// `op` holds of a recorded (not null) value.
fn holds(op: &Op, v: Scalar<'_>) -> bool {
    match op {
        Op::IsTrue => matches!(v, Scalar::Bool(true)),
        Op::Exists => true,
        Op::Cmp(Cmp::Eq, lit) => *lit != Lit::Null && equals(v, lit),
        Op::Cmp(Cmp::Ne, lit) => *lit == Lit::Null || !equals(v, lit),
        Op::Cmp(c, lit) => {
            let (Scalar::Num(a), b) = (v, number(lit)) else {
                return false;
            };
            match c {
                Cmp::Lt => a < b,
                Cmp::Le => a <= b,
                Cmp::Gt => a > b,
                _ => a >= b,
            }
        }
        Op::In(items) => items.iter().any(|item| match item {
            Item::One(lit) => equals(v, lit),
            Item::Range(a, b) => {
                matches!(v, Scalar::Num(x) if number(a) <= x && x <= number(b))
            }
        }),
        Op::Contains(s) => matches!(v, Scalar::Str(x) if x.contains(s.as_str())),
        Op::Matches(re) => matches!(v, Scalar::Str(x) if re.is_match(x)),
    }
}

/// `op` holds of a missing value (query.md §4): only `== null`, `!= x` and a set naming
/// null.
fn holds_of_null(op: &Op) -> bool {
    match op {
        Op::Cmp(Cmp::Eq, lit) => *lit == Lit::Null,
        Op::Cmp(Cmp::Ne, lit) => *lit != Lit::Null,
        Op::In(items) => items.iter().any(|i| matches!(i, Item::One(Lit::Null))),
        _ => false,
    }
}

/// An expression compiled against its columns.
enum Pred<'c> {
    All,
    And(Box<Pred<'c>>, Box<Pred<'c>>),
    Or(Box<Pred<'c>>, Box<Pred<'c>>),
    Not(Box<Pred<'c>>),
    /// Decided per distinct value: `mask[code]`, `null` for none.
    Coded {
        codes: &'c [u32],
        mask: Vec<bool>,
        null: bool,
    },
    Num {
        values: &'c [f64],
        op: &'c Op,
        null: bool,
    },
    /// Any member passes `mask` (or, `none`, no member does); `empty` for no member.
    Set {
        offsets: &'c [u32],
        codes: &'c [u32],
        mask: Vec<bool>,
        none: bool,
        empty: bool,
    },
}

impl Pred<'_> {
    fn test(&self, i: usize) -> bool {
        match self {
            Pred::All => true,
            Pred::And(a, b) => a.test(i) && b.test(i),
            Pred::Or(a, b) => a.test(i) || b.test(i),
            Pred::Not(a) => !a.test(i),
            Pred::Coded { codes, mask, null } => match codes[i] {
                NULL => *null,
                c => mask[c as usize],
            },
            Pred::Num { values, op, null } => {
                let x = values[i];
                if x.is_nan() {
                    *null
                } else {
                    holds(op, Scalar::Num(x))
                }
            }
            Pred::Set {
                offsets,
                codes,
                mask,
                none,
                empty,
            } => {
                let members = &codes[offsets[i] as usize..offsets[i + 1] as usize];
                if members.is_empty() {
                    return *empty;
                }
                members.iter().any(|&c| mask[c as usize]) != *none
            }
        }
    }
}

fn compile<'c>(e: &'c Expr, ctx: &Ctx<'_>, cols: &'c Columns) -> Pred<'c> {
    let sub = |e| Box::new(compile(e, ctx, cols));
    match e {
        Expr::All => Pred::All,
        Expr::And(a, b) => Pred::And(sub(a), sub(b)),
        Expr::Or(a, b) => Pred::Or(sub(a), sub(b)),
        Expr::Not(a) => Pred::Not(sub(a)),
        Expr::Test(t) => {
            let null = holds_of_null(&t.op);
            match cols.column(t.field, ctx) {
                Column::Coded { codes, dict } => Pred::Coded {
                    codes,
                    mask: dict.iter().map(|k| holds(&t.op, k.scalar())).collect(),
                    null,
                },
                Column::Num(values) => Pred::Num {
                    values,
                    op: &t.op,
                    null,
                },
                Column::Set {
                    offsets,
                    codes,
                    dict,
                } => {
                    // `!= x`: no member equals x; `== null`/`!= null`/`exists`: whether
                    // there is a member at all.
                    let (op, none) = match &t.op {
                        Op::Cmp(Cmp::Ne, lit) if *lit != Lit::Null => {
                            (Op::Cmp(Cmp::Eq, lit.clone()), true)
                        }
                        Op::Cmp(Cmp::Ne, Lit::Null) => (Op::Exists, false),
                        op => (op.clone(), false),
                    };
                    let mask = dict.iter().map(|k| holds(&op, k.scalar())).collect();
                    Pred::Set {
                        offsets,
                        codes,
                        mask,
                        none,
                        empty: null,
                    }
                }
            }
        }
    }
}

impl Query {
    /// Per action (graph node), whether it matches.
    pub fn matches(&self, ctx: &Ctx<'_>, cols: &Columns) -> Vec<bool> {
        let pred = compile(&self.expr, ctx, cols);
        (0..ctx.len())
            .into_par_iter()
            .map(|i| pred.test(i))
            .collect()
    }
}
