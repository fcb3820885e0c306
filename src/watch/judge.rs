//! What opened evidence gives to alert on (docs/watch.md §2–3): each record whose
//! signature fails, each chain that breaks, each finding — tamper or policy by its id —
//! each `--rules` rule matching an action, and each load error (infra). Every alert is
//! keyed by what it is about, never by where the files lie, so a rotated file raises
//! nothing again.

use super::alert::{ActionRef, Alert, Class, Subject, dedupe_key};
use crate::analysis::evidence::Evidence;
use crate::analysis::findings::fingerprints::Places;
use crate::analysis::graph::NodeId;
use crate::canon::{Variant, canonical_bytes};
use crate::model::finding::{Finding, Severity};
use crate::model::json::Json;
use crate::model::sha256::Sha256Digest;
use crate::model::text::sanitize;
use crate::query::{Columns, Ctx, Query};
use crate::verify::semantic::RuleSeverity;
use crate::verify::signature::AuthStatus;
use crate::verify::{CheckStatus, RecordResult};

/// Findings that say the evidence was altered, lost or forged: tamper, whatever their
/// severity (F-DUPLICATE-RECORD only when the copies differ, which is high).
pub const TAMPER_FINDINGS: &[&str] = &[
    "F-ACTION-REWRITTEN",
    "F-ANCHOR-INVALID",
    "F-CHAIN-FORK",
    "F-CHAIN-GAP",
    "F-DUPLICATE-RECORD",
    "F-ED25519-LENIENT-ONLY",
    "F-KEY-MISLABELLED",
    "F-MEMORY-CHAIN-BROKEN",
    "F-TAIL-TRUNCATED",
    "F-TIMESTAMP-IMPRINT",
    "F-TIMESTAMP-INVALID",
];

/// One `--rules` rule: `NAME SEVERITY: EXPR`.
#[derive(Debug)]
pub struct Rule {
    pub name: String,
    pub severity: Severity,
    pub query: Query,
}

/// Reads a rules file: one rule a line, `NAME SEVERITY: EXPR`, `#` comments and blank
/// lines skipped. An error names the line and, for the expression, the column.
pub fn read_rules(path: &str, text: &str) -> Result<Vec<Rule>, String> {
    let mut rules = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = format!("{}:{}", sanitize(path), n + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((head, expr)) = line.split_once(':') else {
            return Err(format!("{at}: a rule is NAME SEVERITY: EXPRESSION"));
        };
        let mut words = head.split_whitespace();
        let (Some(name), Some(severity), None) = (words.next(), words.next(), words.next()) else {
            return Err(format!("{at}: a rule is NAME SEVERITY: EXPRESSION"));
        };
        let severity = match severity {
            "high" => Severity::High,
            "medium" => Severity::Medium,
            "low" => Severity::Low,
            "info" => Severity::Info,
            other => {
                return Err(format!(
                    "{at}: severity {:?} is not high, medium, low or info",
                    sanitize(other)
                ));
            }
        };
        let query = Query::parse(expr.trim())
            .map_err(|e| format!("{at}: {e}\n{}", e.render(expr.trim())))?;
        if rules.iter().any(|r: &Rule| r.name == name) {
            return Err(format!("{at}: rule {:?} is named twice", sanitize(name)));
        }
        rules.push(Rule {
            name: name.to_string(),
            severity,
            query,
        });
    }
    Ok(rules)
}

/// What the alerts of one store are judged with.
pub struct Judging<'a> {
    /// The watched PATH, as given.
    pub store: &'a str,
    /// Findings below this are not policy alerts.
    pub fail_on: Severity,
    /// Keys are trusted: a signed record that does not verify under them is tamper.
    /// Without keys no signature was checked, and none is alerted.
    pub keys_given: bool,
    pub rules: &'a [Rule],
}

/// Every tamper, policy and load-error alert `ev` gives, keys not yet deduplicated.
pub fn judge(ev: &Evidence, how: &Judging) -> Vec<Alert> {
    let heads = chain_heads(ev);
    let mut alerts = Vec::new();
    for (i, r) in ev.report.records.iter().enumerate() {
        if let Some((class, rule, why)) = signature_fault(r, how.keys_given) {
            let hash = r.canonical_sha256.to_string();
            alerts.push(about_record(
                how,
                ev,
                &heads,
                i,
                (class, Severity::High, rule),
                &why,
                &hash,
            ));
        }
        alerts.extend(form_faults(how, ev, &heads, i));
    }
    for path in &ev.report.links.paths {
        if let Some(at) = &path.broken_at {
            let i = path.members.iter().map(|&m| m as usize).find(|&m| {
                let s = &ev.report.records[m].source;
                *s.path == *at.path && s.line == at.line
            });
            if let Some(i) = i {
                let why = "a link is not a hash string: the chain breaks here".to_string();
                let hash = ev.report.records[i].canonical_sha256.to_string();
                let what = (Class::Tamper, Severity::High, "chain-broken");
                alerts.push(about_record(how, ev, &heads, i, what, &why, &hash));
            }
        }
    }
    let places = Places::of(&ev.corpus);
    for f in &ev.findings {
        if let Some(alert) = of_finding(how, ev, &heads, &places, f) {
            alerts.push(alert);
        }
    }
    for rule in how.rules {
        alerts.extend(of_rule(how, ev, &heads, rule));
    }
    for e in ev.corpus.errors() {
        alerts.push(Alert {
            class: Class::Infra,
            severity: Severity::Medium,
            rule: "load-error".into(),
            dedupe_key: dedupe_key(&[
                "load-error",
                how.store,
                &e.path,
                &e.line.unwrap_or(0).to_string(),
                &e.message,
            ]),
            resolves: None,
            store: how.store.into(),
            record: Some(Subject {
                path: e.path.to_string(),
                line: e.line,
                offset: None,
                record_sha256: None,
            }),
            action: None,
            message: sanitize(&e.message).into_owned(),
            status: "open".into(),
        });
    }
    alerts.sort_by(|a, b| a.dedupe_key.cmp(&b.dedupe_key));
    alerts.dedup_by(|a, b| a.dedupe_key == b.dedupe_key);
    alerts
}

/// What is wrong with a record's signature, judged only under trusted keys.
fn signature_fault(r: &RecordResult, keys_given: bool) -> Option<(Class, &'static str, String)> {
    if !(r.signed && keys_given) {
        return None;
    }
    let a = &r.authenticity;
    let reason = a.reason.clone().unwrap_or_default();
    let (class, rule) = match a.status {
        Some(AuthStatus::Valid | AuthStatus::Unsigned) => return None,
        Some(AuthStatus::Invalid) => (Class::Tamper, "signature-invalid"),
        Some(AuthStatus::BindingMismatch) => (Class::Tamper, "binding-mismatch"),
        Some(AuthStatus::UnsupportedLegacy) => (Class::Policy, "signature-legacy"),
        None if a.key_unknown || reason.starts_with("unknown key") => {
            (Class::Tamper, "key-unknown")
        }
        None => (Class::Tamper, "signature-unchecked"),
    };
    let status = a.status.map_or("not checked", AuthStatus::name);
    Some((class, rule, format!("signature {status}: {reason}")))
}

/// A record that fails its schema (`record-malformed`), and each invariant it breaks
/// (`V1`…, keyed by the action it names, so a snapshot repeating the action raises
/// nothing again). V17 is the tamper finding F-ACTION-REWRITTEN.
fn form_faults(
    how: &Judging,
    ev: &Evidence,
    heads: &[Option<Sha256Digest>],
    i: usize,
) -> Vec<Alert> {
    let r = &ev.report.records[i];
    let policy = |rule: &str| (Class::Policy, Severity::High, rule.to_string());
    let mut out = Vec::new();
    if r.structural.status == Some(CheckStatus::Fail) {
        let first = r
            .structural
            .violations
            .first()
            .map(|v| v.message.clone())
            .unwrap_or_default();
        let why = format!("the record fails its schema: {first}");
        let hash = r.canonical_sha256.to_string();
        let (class, severity, rule) = policy("record-malformed");
        out.push(about_record(
            how,
            ev,
            heads,
            i,
            (class, severity, &rule),
            &why,
            &hash,
        ));
    }
    let errors = (r.semantic.violations.iter())
        .filter(|v| v.severity == RuleSeverity::Error && v.rule != "V17");
    for v in errors {
        let about = match &v.action_id {
            Some(action) => format!("{}/{action}", r.run_id.as_deref().unwrap_or("")),
            None => r.canonical_sha256.to_string(),
        };
        let (class, severity, rule) = policy(v.rule);
        out.push(about_record(
            how,
            ev,
            heads,
            i,
            (class, severity, &rule),
            &v.message,
            &about,
        ));
    }
    out
}

/// Per record (flat index), the chain hash of the first record of the first link-graph
/// path through it.
fn chain_heads(ev: &Evidence) -> Vec<Option<Sha256Digest>> {
    let records = &ev.report.records;
    let mut heads = vec![None; records.len()];
    for path in &ev.report.links.paths {
        let Some(&first) = path.members.first() else {
            continue;
        };
        let head = records[first as usize].canonical_sha256;
        for &m in &path.members {
            let slot = &mut heads[m as usize];
            slot.get_or_insert(head);
        }
    }
    heads
}

/// The alert about record `i`: `what` (class, severity, rule) keyed by the record's
/// chain head and `about`, what it is about (the record's chain hash, or the action).
fn about_record(
    how: &Judging,
    ev: &Evidence,
    heads: &[Option<Sha256Digest>],
    i: usize,
    (class, severity, rule): (Class, Severity, &str),
    message: &str,
    about: &str,
) -> Alert {
    let r = &ev.report.records[i];
    let head = heads[i].map(|h| h.to_string());
    Alert {
        class,
        severity,
        rule: rule.into(),
        dedupe_key: dedupe_key(&[rule, how.store, head.as_deref().unwrap_or(""), about]),
        resolves: None,
        store: how.store.into(),
        record: Some(subject(r)),
        action: r.run_id.as_ref().map(|run| ActionRef {
            run_id: Some(run.to_string()),
            action_id: None,
            chain_head: head,
        }),
        message: sanitize(message).into_owned(),
        status: "open".into(),
    }
}

fn subject(r: &RecordResult) -> Subject {
    Subject {
        path: r.source.path.to_string(),
        line: Some(r.source.line),
        offset: None,
        record_sha256: Some(r.canonical_sha256.to_string()),
    }
}

/// The alert a finding raises: tamper by its id, policy at or above `--fail-on`.
fn of_finding(
    how: &Judging,
    ev: &Evidence,
    heads: &[Option<Sha256Digest>],
    places: &Places,
    f: &Finding,
) -> Option<Alert> {
    let tamper = TAMPER_FINDINGS.contains(&f.id)
        && (f.id != "F-DUPLICATE-RECORD" || f.severity == Severity::High);
    let class = if tamper {
        Class::Tamper
    } else if f.severity <= how.fail_on {
        Class::Policy
    } else {
        return None;
    };
    let record = (f.locations.first()).and_then(|l| places.first_record_at(l));
    let head = record.and_then(|i| heads[i]).map(|h| h.to_string());
    let about = stable_subject(ev, places, f).unwrap_or_else(|| f.fingerprint.clone());
    Some(Alert {
        class,
        severity: if tamper { Severity::High } else { f.severity },
        rule: f.id.to_string(),
        dedupe_key: dedupe_key(&[f.id, how.store, head.as_deref().unwrap_or(""), &about]),
        resolves: None,
        store: how.store.into(),
        record: record.map(|i| subject(&ev.report.records[i])),
        action: (f.run_id.is_some() || !f.action_ids.is_empty()).then(|| ActionRef {
            run_id: f.run_id.clone(),
            action_id: f.action_ids.first().cloned(),
            chain_head: head.clone(),
        }),
        message: sanitize(&f.message).into_owned(),
        status: "open".into(),
    })
}

/// What a finding is about when that stays the same as the store grows, where its
/// fingerprint would not: a cut tail is about the anchored record that is missing
/// (wherever the chain now ends); a rewritten action about the action, its first copy and
/// what it was rewritten to (each later snapshot carries the rewritten copy on).
fn stable_subject(ev: &Evidence, places: &Places, f: &Finding) -> Option<String> {
    match f.id {
        "F-TAIL-TRUNCATED" => (f.evidence.value().get("anchored")?.as_str()).map(str::to_string),
        "F-ACTION-REWRITTEN" => {
            let [copy, first, ..] = f.locations.as_slice() else {
                return None;
            };
            let at = |l: &crate::model::finding::Location| {
                let i = places.first_record_at(l)?;
                ev.corpus.record(i).with_record(|r| {
                    at_pointer(r.json(), &l.pointer)
                        .map(|v| Sha256Digest::of(&canonical_bytes(v, Variant::C1)).to_string())
                })
            };
            Some(format!(
                "{}/{}:{}>{}",
                f.run_id.as_deref().unwrap_or(""),
                f.action_ids.join(","),
                at(first)?,
                at(copy)?
            ))
        }
        _ => None,
    }
}

/// The value at a JSON pointer (RFC 6901) in `json`.
fn at_pointer<'a>(json: &'a Json, pointer: &str) -> Option<&'a Json> {
    pointer.split('/').skip(1).try_fold(json, |j, segment| {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        match j {
            Json::Array(items) => items.get(segment.parse::<usize>().ok()?),
            other => other.get(&segment),
        }
    })
}

/// One policy alert per action `rule` matches, keyed by the action (its chain, run and
/// id): a later snapshot repeating it raises nothing again.
fn of_rule(
    how: &Judging,
    ev: &Evidence,
    heads: &[Option<Sha256Digest>],
    rule: &Rule,
) -> Vec<Alert> {
    let ev_ref = ev.as_ref();
    let passes = rule.query.matches(&Ctx::new(ev_ref), &Columns::default());
    let g = &ev.analysis.graph;
    crate::query::actions(ev_ref)
        .into_iter()
        .filter(|&n: &NodeId| passes.get(n as usize).copied().unwrap_or(false))
        .map(|n| {
            let node = &g.nodes[n as usize];
            let record = node.record as usize;
            let run = g.runs[node.run as usize].id.clone();
            let action = g
                .facts(&ev.corpus, n)
                .and_then(|f| f.id())
                .map(str::to_string);
            let head = heads.get(record).copied().flatten().map(|h| h.to_string());
            Alert {
                class: Class::Policy,
                severity: rule.severity,
                rule: rule.name.clone(),
                dedupe_key: dedupe_key(&[
                    &rule.name,
                    how.store,
                    head.as_deref().unwrap_or(""),
                    &run,
                    action.as_deref().unwrap_or(""),
                ]),
                resolves: None,
                store: how.store.into(),
                record: ev.report.records.get(record).map(subject),
                message: format!(
                    "rule {} matches action {} of run {}",
                    sanitize(&rule.name),
                    sanitize(action.as_deref().unwrap_or("(no id)")),
                    sanitize(&run)
                ),
                action: Some(ActionRef {
                    run_id: Some(run),
                    action_id: action,
                    chain_head: head,
                }),
                status: "open".into(),
            }
        })
        .collect()
}
