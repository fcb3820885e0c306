//! `aeplens diff`: what changed between two bodies of evidence (two stores), or between two
//! runs of one. Actions are aligned by action id, then — for those left — by (tool,
//! resource) in time order; for each aligned pair the members that differ canonically, and
//! the decision and observed-outcome changes; actions only on one side; findings new and
//! resolved (the same finding: same id, run and actions); and, for two stores, what
//! verification says differently of the records both hold (the same canonical hash):
//! records that stopped or started verifying, key ids that changed, chain statuses that
//! changed — exit 1 when verification got worse.

use super::report::{emit, open};
use super::{DiffArgs, EvidenceArgs, Format};
use crate::analysis::compare::differing;
use crate::analysis::evidence::Evidence;
use crate::model::Action;
use crate::model::contract::document;
use crate::model::facts::ActionFacts;
use crate::model::finding::Finding;
use crate::model::text::{sanitize, show_id};
use crate::verify::Trees;
use crate::verify::chain::ChainStatus;
use crate::verify::verdict::RecordVerdict;
use serde::Serialize;
use std::fmt::Write as _;

/// The difference, as printed.
#[derive(Serialize)]
pub struct Diff<'a> {
    /// `stores` (A and B are two bodies of evidence) or `runs` (two runs of one).
    pub mode: &'static str,
    pub a: Side,
    pub b: Side,
    pub changed: Vec<Changed>,
    /// Actions only in B.
    pub added: Vec<Only>,
    /// Actions only in A.
    pub removed: Vec<Only>,
    /// Findings in B and not in A, and in A and not in B.
    pub findings_new: Vec<&'a Finding>,
    pub findings_resolved: Vec<&'a Finding>,
    /// Aligned pairs that are canonically identical.
    pub unchanged: usize,
    /// What verification says differently of the records both sides hold.
    pub verification: Verification,
}

/// Verification compared record by record: records are the same when their canonical
/// hashes are (the signed content; the n-th copy on A with the n-th on B).
#[derive(Serialize, Default)]
pub struct Verification {
    /// Records whose verdict differs.
    pub changed: Vec<VerdictChange>,
    /// Records held by both sides.
    pub records_compared: usize,
    /// Records only A holds, and only B (a record edited on one side is one of each), with
    /// their verdicts.
    pub only_a: Vec<RecordVerdict>,
    pub only_b: Vec<RecordVerdict>,
    /// True when a record stopped verifying or its chain status got worse, or B holds a
    /// record A does not that does not verify.
    pub worse: bool,
}

/// One record both sides hold, judged differently.
#[derive(Serialize)]
pub struct VerdictChange {
    /// What changed: `stopped-verifying`, `started-verifying`, `authenticity`, `key-id`,
    /// `chain`.
    pub what: Vec<&'static str>,
    pub a: RecordVerdict,
    pub b: RecordVerdict,
}

/// [`Verification`] of two bodies of evidence.
fn verification(a: &Evidence, b: &Evidence) -> Verification {
    use std::collections::HashMap;
    let mut in_b: HashMap<_, std::collections::VecDeque<usize>> = HashMap::new();
    for (i, r) in b.report.records.iter().enumerate() {
        in_b.entry(r.canonical_sha256).or_default().push_back(i);
    }
    // Worse chain statuses sort later (`ChainStatus` is ordered by severity).
    let rank = |name: &str| ChainStatus::ALL.iter().position(|c| c.name() == name);
    let mut out = Verification::default();
    for ra in &a.report.records {
        let Some(j) = in_b
            .get_mut(&ra.canonical_sha256)
            .and_then(std::collections::VecDeque::pop_front)
        else {
            out.only_a.push(RecordVerdict::of(ra));
            continue;
        };
        out.records_compared += 1;
        let (x, y) = (
            RecordVerdict::of(ra),
            RecordVerdict::of(&b.report.records[j]),
        );
        let mut what = Vec::new();
        match (x.verified(), y.verified()) {
            (true, false) => what.push("stopped-verifying"),
            (false, true) => what.push("started-verifying"),
            _ if x.authenticity != y.authenticity => what.push("authenticity"),
            _ => {}
        }
        if x.key_id != y.key_id || x.key_unknown != y.key_unknown {
            what.push("key-id");
        }
        if x.chain != y.chain {
            what.push("chain");
        }
        if what.is_empty() {
            continue;
        }
        let chain_worse = matches!((rank(&x.chain), rank(&y.chain)), (Some(p), Some(q)) if q > p);
        out.worse |= what.contains(&"stopped-verifying") || chain_worse;
        out.changed.push(VerdictChange { what, a: x, b: y });
    }
    let mut left: Vec<usize> = in_b.into_values().flatten().collect();
    left.sort_unstable();
    out.only_b = (left.into_iter())
        .map(|j| RecordVerdict::of(&b.report.records[j]))
        .collect();
    out.worse |= out.only_b.iter().any(|v| !v.verified());
    out
}

/// One side of the comparison.
#[derive(Serialize)]
pub struct Side {
    pub paths: Vec<String>,
    pub runs: Vec<String>,
    pub actions: usize,
}

/// An aligned pair that differs.
#[derive(Serialize)]
pub struct Changed {
    pub run_a: String,
    pub run_b: String,
    pub action_a: String,
    pub action_b: String,
    /// `id`, or `tool-resource` (the n-th use of one tool on one resource on each side).
    pub aligned_by: &'static str,
    /// Members of the action that differ canonically (added or removed ones included).
    pub fields: Vec<String>,
    /// The decision, when it changed: [A, B].
    pub decision: Option<[Option<String>; 2]>,
    /// The observed outcome, when it changed: [A, B].
    pub outcome: Option<[Option<String>; 2]>,
    /// The verdicts of the records holding the first copies that differ (the records the
    /// action is shown from when no copy does, or for two runs their last copies): [A, B].
    pub records: [Option<RecordVerdict>; 2],
}

/// An action on one side only.
#[derive(Serialize)]
pub struct Only {
    pub run: String,
    pub action: String,
    pub tool: Option<String>,
}

/// An action as the diff sees it: its facts (first copy) and every copy of it in the
/// records of its emitter chain (and the chains continuing it), in load order (chained
/// snapshots repeat earlier actions).
struct Seen<'e> {
    run: &'e str,
    /// The record it is shown from (flat index).
    record: u32,
    /// Each copy, with the record (flat index) holding it.
    copies: Vec<(u32, Action<'e>)>,
    facts: &'e ActionFacts,
}

impl<'e> Seen<'e> {
    /// The action id ("" without one).
    fn id(&self) -> &'e str {
        self.facts.id().unwrap_or("")
    }
}

fn actions<'e>(ev: &'e Evidence, runs: Option<&str>) -> Vec<Seen<'e>> {
    let g = &ev.analysis.graph;
    let mut out = Vec::new();
    for run in &g.runs {
        if runs.is_some_and(|r| r != run.id) {
            continue;
        }
        // Every copy of each action id in the run's records, with the record's emitter
        // chain, in load order (one pass).
        let mut copies: std::collections::HashMap<&str, Vec<(u32, u32, Action<'e>)>> =
            std::collections::HashMap::new();
        for &r in &run.records {
            let chain = g.lineages.of(r as usize);
            for a in ev.corpus.record(r as usize).actions() {
                if let Some(id) = a.id() {
                    copies.entry(id).or_default().push((chain, r, a));
                }
            }
        }
        for &n in &run.nodes {
            let (Some((_, action)), Some(facts)) =
                (g.action(&ev.corpus, n), g.facts(&ev.corpus, n))
            else {
                continue;
            };
            let chain = g.nodes[n as usize].chain;
            let record = g.nodes[n as usize].record;
            let held = |(on, r, a): &(u32, u32, Action<'e>)| {
                g.lineages.sees(*on, chain).then_some((*r, *a))
            };
            out.push(Seen {
                run: &run.id,
                record,
                copies: (action.id().and_then(|id| copies.get(id))).map_or_else(
                    || vec![(record, action)],
                    |c| c.iter().filter_map(held).collect(),
                ),
                facts,
            });
        }
    }
    out
}

/// Pairs A's and B's actions: equal ids (within the run, or across the two runs compared;
/// the n-th action of an id on A with the n-th on B, when several emitter chains hold it),
/// then the n-th unpaired use of a (tool, resource) on each side.
fn align(a: &[Seen], b: &[Seen], by_run: bool) -> Vec<(usize, usize, &'static str)> {
    let mut pairs = Vec::new();
    let mut used_b = vec![false; b.len()];
    let mut used_a = vec![false; a.len()];
    let mut index: std::collections::HashMap<(&str, &str), std::collections::VecDeque<usize>> =
        std::collections::HashMap::new();
    for (j, s) in b.iter().enumerate() {
        if !s.id().is_empty() {
            let run = if by_run { s.run } else { "" };
            index.entry((run, s.id())).or_default().push_back(j);
        }
    }
    for (i, s) in a.iter().enumerate() {
        if s.id().is_empty() {
            continue;
        }
        let run = if by_run { s.run } else { "" };
        if let Some(j) =
            (index.get_mut(&(run, s.id()))).and_then(std::collections::VecDeque::pop_front)
        {
            used_b[j] = true;
            used_a[i] = true;
            pairs.push((i, j, "id"));
        }
    }
    let key = |s: &Seen<'_>| {
        let resource = s.facts.resource().unwrap_or("");
        let run = if by_run { s.run } else { "" };
        (
            run.to_string(),
            s.facts.tool().unwrap_or("").to_string(),
            resource.to_string(),
        )
    };
    // The unpaired actions of B per (run, tool, resource), in order.
    let mut queues: std::collections::HashMap<_, std::collections::VecDeque<usize>> =
        std::collections::HashMap::new();
    for (j, s) in b.iter().enumerate() {
        if !used_b[j] {
            queues.entry(key(s)).or_default().push_back(j);
        }
    }
    for (i, s) in a.iter().enumerate() {
        if used_a[i] {
            continue;
        }
        if let Some(j) = queues
            .get_mut(&key(s))
            .and_then(std::collections::VecDeque::pop_front)
        {
            pairs.push((i, j, "tool-resource"));
        }
    }
    pairs
}

/// Members that differ canonically between the copies of two actions, copy by copy, and
/// `copies` when one side holds more copies than the other; with the position of the
/// first copy that differs (or is on one side only).
fn differing_copies(a: &[(u32, Action)], b: &[(u32, Action)]) -> (Vec<String>, Option<usize>) {
    let mut fields: Vec<String> = Vec::new();
    let mut first = None;
    for (k, ((_, x), (_, y))) in a.iter().zip(b).enumerate() {
        for f in differing(x, y) {
            first.get_or_insert(k);
            if !fields.contains(&f) {
                fields.push(f);
            }
        }
    }
    if a.len() != b.len() {
        first.get_or_insert(a.len().min(b.len()));
        fields.push(format!("copies ({} → {})", a.len(), b.len()));
    }
    (fields, first)
}

fn side(ev: &Evidence, seen: &[Seen], run: Option<&str>) -> Side {
    let mut runs: Vec<String> = Vec::new();
    for s in seen {
        if !runs.iter().any(|r| r == s.run) {
            runs.push(s.run.to_string());
        }
    }
    if let Some(r) = run {
        runs = vec![r.to_string()];
    }
    Side {
        paths: ev
            .corpus
            .inputs
            .iter()
            .map(|i| i.path.to_string())
            .collect(),
        runs,
        actions: seen.len(),
    }
}

/// `aeplens diff`.
pub fn run(args: &DiffArgs) -> i32 {
    let one = |path: &str| EvidenceArgs {
        paths: vec![path.to_string()],
        ..args.evidence.clone()
    };
    let (mode, ev_a, ev_b, runs) = match (args.run.as_slice(), args.evidence.paths.as_slice()) {
        ([x, y], _) => {
            let ev = match open(&args.evidence, Trees::Held) {
                Ok(ev) => std::rc::Rc::new(ev),
                Err(code) => return code,
            };
            ("runs", ev.clone(), ev, Some((x.clone(), y.clone())))
        }
        ([], [a, b]) => match (open(&one(a), Trees::Held), open(&one(b), Trees::Held)) {
            (Ok(a), Ok(b)) => ("stores", std::rc::Rc::new(a), std::rc::Rc::new(b), None),
            (Err(code), _) | (_, Err(code)) => return code,
        },
        _ => {
            eprintln!(
                "aeplens: diff compares two bodies of evidence (aeplens diff A B) or two runs of one (aeplens diff --run X --run Y PATH...)"
            );
            return 2;
        }
    };
    let (run_a, run_b) = match &runs {
        Some((x, y)) => (Some(x.as_str()), Some(y.as_str())),
        None => (None, None),
    };
    let a = actions(&ev_a, run_a);
    let b = actions(&ev_b, run_b);
    for (run, seen) in [(run_a, &a), (run_b, &b)] {
        if let Some(r) = run
            && seen.is_empty()
        {
            eprintln!("aeplens: no run {:?} in the evidence", sanitize(r));
            return 2;
        }
    }
    let pairs = align(&a, &b, runs.is_none());
    let mut changed = Vec::new();
    let mut unchanged = 0;
    for &(i, j, aligned_by) in &pairs {
        let (x, y) = (&a[i], &b[j]);
        // Two stores: every copy of the action, in order, and the records of the first
        // that differs. Two runs: their last copies.
        let (fields, records) =
            if let (true, Some(p), Some(q)) = (runs.is_some(), x.copies.last(), y.copies.last()) {
                (differing(&p.1, &q.1), [Some(p.0), Some(q.0)])
            } else {
                let (fields, first) = differing_copies(&x.copies, &y.copies);
                let at = |s: &Seen, k: Option<usize>| {
                    let copy = k.and_then(|k| s.copies.get(k).or(s.copies.last()));
                    Some(copy.map_or(s.record, |c| c.0))
                };
                (fields, [at(x, first), at(y, first)])
            };
        if fields.is_empty() {
            unchanged += 1;
            continue;
        }
        let pair = |p: Option<&str>, q: Option<&str>| {
            (p != q).then(|| [p.map(str::to_string), q.map(str::to_string)])
        };
        let verdict = |ev: &Evidence, record: Option<u32>| {
            (ev.report.records.get(record? as usize)).map(RecordVerdict::of)
        };
        changed.push(Changed {
            records: [verdict(&ev_a, records[0]), verdict(&ev_b, records[1])],
            run_a: x.run.to_string(),
            run_b: y.run.to_string(),
            action_a: x.id().to_string(),
            action_b: y.id().to_string(),
            aligned_by,
            fields,
            decision: pair(x.facts.outcome(), y.facts.outcome()),
            outcome: pair(x.facts.observed(), y.facts.observed()),
        });
    }
    let only = |side: &[Seen], used: &dyn Fn(usize) -> bool| -> Vec<Only> {
        side.iter()
            .enumerate()
            .filter(|(i, _)| !used(*i))
            .map(|(_, s)| Only {
                run: s.run.to_string(),
                action: s.id().to_string(),
                tool: s.facts.tool().map(str::to_string),
            })
            .collect()
    };
    let mut paired_a = vec![false; a.len()];
    let mut paired_b = vec![false; b.len()];
    for &(i, j, _) in &pairs {
        paired_a[i] = true;
        paired_b[j] = true;
    }
    let removed = only(&a, &|i| paired_a[i]);
    let added = only(&b, &|j| paired_b[j]);
    // The same finding: same id, run and actions (a changed record keeps its findings' identity).
    let key = |f: &Finding| (f.id, f.run_id.clone(), f.action_ids.clone());
    let in_run =
        |f: &&Finding, run: Option<&str>| run.is_none_or(|r| f.run_id.as_deref() == Some(r));
    let fa: Vec<&Finding> = ev_a.findings.iter().filter(|f| in_run(f, run_a)).collect();
    let fb: Vec<&Finding> = ev_b.findings.iter().filter(|f| in_run(f, run_b)).collect();
    let strip = |f: &Finding| {
        let (id, run, actions) = key(f);
        (id, if runs.is_some() { None } else { run }, actions)
    };
    let keys_a: std::collections::HashSet<_> = fa.iter().map(|f| strip(f)).collect();
    let keys_b: std::collections::HashSet<_> = fb.iter().map(|f| strip(f)).collect();
    let findings_new: Vec<&Finding> = fb
        .iter()
        .copied()
        .filter(|f| !keys_a.contains(&strip(f)))
        .collect();
    let findings_resolved: Vec<&Finding> = fa
        .iter()
        .copied()
        .filter(|f| !keys_b.contains(&strip(f)))
        .collect();
    let verification = match runs {
        None => verification(&ev_a, &ev_b),
        Some(_) => Verification::default(),
    };
    // Worse too when a changed action's record verified on A and does not on B.
    let verified = |v: &Option<RecordVerdict>| v.as_ref().is_some_and(RecordVerdict::verified);
    let worse = verification.worse
        || (changed.iter()).any(|c| verified(&c.records[0]) && !verified(&c.records[1]));
    let diff = Diff {
        verification,
        mode,
        a: side(&ev_a, &a, run_a),
        b: side(&ev_b, &b, run_b),
        changed,
        added,
        removed,
        findings_new,
        findings_resolved,
        unchanged,
    };
    let text = match super::report::resolve(args.format) {
        Format::Json => document("diff", &diff),
        Format::Text => {
            crate::model::text::wrap_lines(&text(&diff), super::report::terminal_width(), 4)
        }
    };
    match emit(&text) {
        0 if worse => 1,
        code => code,
    }
}

/// The diff for people.
pub fn text(d: &Diff) -> String {
    let mut s = String::new();
    let name = |side: &Side| {
        if d.mode == "runs" {
            format!(
                "run {}",
                side.runs
                    .first()
                    .map_or("?".into(), |r| sanitize(r).into_owned())
            )
        } else {
            sanitize(&side.paths.join(" ")).into_owned()
        }
    };
    let _ = writeln!(
        s,
        "A: {} ({} actions)\nB: {} ({} actions)",
        name(&d.a),
        d.a.actions,
        name(&d.b),
        d.b.actions
    );
    let _ = writeln!(
        s,
        "{} changed · {} unchanged · {} added · {} removed · findings {} new, {} resolved",
        d.changed.len(),
        d.unchanged,
        d.added.len(),
        d.removed.len(),
        d.findings_new.len(),
        d.findings_resolved.len()
    );
    for c in &d.changed {
        let id = if c.action_a == c.action_b {
            show_id(&c.action_a).into_owned()
        } else {
            format!("{} → {}", show_id(&c.action_a), show_id(&c.action_b))
        };
        let _ = write!(
            s,
            "~ {id} [{}] {}",
            c.aligned_by,
            sanitize(&c.fields.join(", "))
        );
        for (what, change) in [("decision", &c.decision), ("outcome", &c.outcome)] {
            if let Some([x, y]) = change {
                let show = |v: &Option<String>| {
                    v.as_deref()
                        .map_or("none".into(), |v| sanitize(v).into_owned())
                };
                let _ = write!(s, " · {what} {} → {}", show(x), show(y));
            }
        }
        // The records whose copies differ, always: a forged copy is named with its verdict.
        if let [Some(x), Some(y)] = &c.records {
            let _ = write!(s, " · in {} → {}", x.short(), y.short());
        }
        s.push('\n');
    }
    for (mark, list) in [("+", &d.added), ("-", &d.removed)] {
        for o in list {
            let _ = writeln!(
                s,
                "{mark} {} {} ({})",
                sanitize(&o.run),
                show_id(&o.action),
                sanitize(o.tool.as_deref().unwrap_or("?"))
            );
        }
    }
    let v = &d.verification;
    if d.mode == "stores" {
        let _ = writeln!(
            s,
            "verification: {} of {} records held by both judged differently · {} only in A · {} only in B{}",
            v.changed.len(),
            v.records_compared,
            v.only_a.len(),
            v.only_b.len(),
            if v.worse { " · worse" } else { "" }
        );
    }
    for (side, list) in [("A", &v.only_a), ("B", &v.only_b)] {
        for r in list {
            let _ = writeln!(s, "only in {side}: {}", r.short());
        }
    }
    for c in &v.changed {
        let _ = writeln!(
            s,
            "! {}: {} → {}",
            c.what.join(", "),
            c.a.short(),
            c.b.short()
        );
    }
    for (mark, list) in [("new", &d.findings_new), ("resolved", &d.findings_resolved)] {
        for f in list {
            let _ = writeln!(
                s,
                "{mark:<8} {} {} {}",
                f.severity.name().to_uppercase(),
                f.id,
                sanitize(&f.message)
            );
        }
    }
    s
}
