//! Findings about how a record is written rather than what it says: repeated keys
//! (F-DUPLICATE-KEY), numbers a double cannot hold (F-NUMBER-PRECISION) and strings
//! that would drive a terminal (F-TERMINAL-CONTROL), one walk over the stored JSON; and,
//! across records, ids a reviewer cannot tell apart on screen (F-CONFUSABLE-ID).

use crate::canon::{PrecisionLoss, precision_loss};
use crate::model::Record;
use crate::model::finding::{Finding, Location, Severity};
use crate::model::json::{JStr, Json};
use crate::model::text::is_terminal_control;

const MAX_PATHS: usize = 20;

#[derive(Default)]
struct Walk {
    duplicate_keys: Vec<String>,
    rounded: Vec<(String, String)>,
    overflow: Vec<(String, String)>,
    /// (path, is an active sequence: ESC, C1 control or bidi override)
    control: Vec<(String, bool)>,
}

fn is_active(c: char) -> bool {
    matches!(c, '\u{1b}' | '\u{80}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

impl Walk {
    fn string(&mut self, s: &JStr, path: &dyn Fn() -> String) {
        let bytes = s.bytes();
        // Fast path: printable ASCII and ordinary UTF-8 lead bytes cannot hold a control
        // except C1 and the soft hyphen (0xC2), the bidi, zero-width and separator marks
        // (0xE2, 0xD8 0x9C), the BOM (0xEF) and tag characters (0xF3). One branch-free
        // pass (it vectorises): nearly every string has none of them.
        let suspect =
            |b: u8| b < 0x20 || b == 0x7f || matches!(b, 0xc2 | 0xd8 | 0xe2 | 0xef | 0xf3);
        if !bytes.iter().fold(false, |any, &b| any | suspect(b)) {
            return;
        }
        let text = s.lossy();
        if text.chars().any(is_terminal_control) && self.control.len() < MAX_PATHS {
            let p = path();
            if !self.control.iter().any(|(seen, _)| *seen == p) {
                self.control.push((p, text.chars().any(is_active)));
            }
        }
    }

    fn value(&mut self, v: &Json, path: &dyn Fn() -> String) {
        match v {
            Json::Number(n) => {
                if n.raw.len() > 15 || n.raw.contains(['e', 'E']) || !n.value.is_finite() {
                    match precision_loss(&n.raw, n.value) {
                        Some(PrecisionLoss::Rounded) if self.rounded.len() < MAX_PATHS => {
                            self.rounded.push((path(), n.raw.to_string()));
                        }
                        Some(PrecisionLoss::Overflow) if self.overflow.len() < MAX_PATHS => {
                            self.overflow.push((path(), n.raw.to_string()));
                        }
                        _ => {}
                    }
                }
            }
            Json::String(s) => self.string(s, path),
            Json::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.value(item, &|| format!("{}[{i}]", path()));
                }
            }
            Json::Object(o) => {
                if o.has_duplicates && self.duplicate_keys.len() < MAX_PATHS {
                    let mut seen = std::collections::HashSet::new();
                    for (k, _) in &o.members {
                        if !seen.insert(k) {
                            self.duplicate_keys.push(join(&path(), &k.lossy()));
                        }
                    }
                }
                for (k, item) in &o.members {
                    let key_path = || join(&path(), &k.lossy());
                    self.string(k, &key_path);
                    self.value(item, &key_path);
                }
            }
            Json::Null | Json::Bool(_) => {}
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The hygiene findings of one record.
pub fn check(record: &Record) -> Vec<Finding> {
    let mut w = Walk::default();
    w.value(record.json(), &String::new);
    let run_id = record.run_id().map(str::to_string);
    // The whole record: the paths in the message are aeplens's notation, not pointers.
    let finding = |id, severity, message: String, evidence: serde_json::Value| Finding {
        id,
        severity,
        run_id: run_id.clone(),
        action_ids: Vec::new(),
        message,
        evidence: evidence.into(),
        locations: vec![Location::record(&record.source)],
        fingerprint: String::new(),
        chain: None,
        tool: None,
    };
    let mut out = Vec::new();
    if !w.duplicate_keys.is_empty() {
        out.push(finding(
            "F-DUPLICATE-KEY",
            Severity::High,
            format!(
                "repeated key at {}: the record is ambiguous (the signature covers only the last value)",
                w.duplicate_keys.join(", ")
            ),
            serde_json::json!({ "paths": w.duplicate_keys }),
        ));
    }
    if !w.overflow.is_empty() {
        out.push(finding(
            "F-NUMBER-PRECISION",
            Severity::High,
            format!("number overflows a double and is signed as null at {}", paths(&w.overflow)),
            serde_json::json!({ "overflow": w.overflow.iter().map(|(p, raw)| serde_json::json!({"path": p, "text": raw})).collect::<Vec<_>>() }),
        ));
    }
    if !w.rounded.is_empty() {
        out.push(finding(
            "F-NUMBER-PRECISION",
            Severity::Medium,
            format!("number written with more precision than a double holds at {}: the signature covers the rounded value", paths(&w.rounded)),
            serde_json::json!({ "rounded": w.rounded.iter().map(|(p, raw)| serde_json::json!({"path": p, "text": raw})).collect::<Vec<_>>() }),
        ));
    }
    if !w.control.is_empty() {
        let active = w.control.iter().any(|(_, a)| *a);
        out.push(finding(
            "F-TERMINAL-CONTROL",
            if active { Severity::High } else { Severity::Low },
            format!(
                "string holds terminal control characters{} at {} (shown escaped, never sent to the terminal)",
                if active { " (escape sequence, C1 control or bidi override)" } else { "" },
                w.control.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>().join(", ")
            ),
            serde_json::json!({ "paths": w.control.iter().map(|(p, _)| p).collect::<Vec<_>>() }),
        ));
    }
    out
}

fn paths(list: &[(String, String)]) -> String {
    list.iter()
        .map(|(p, raw)| format!("{p} ({raw})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One id as it occurs: its kind, text, record and the action holding it.
#[derive(Clone, Copy)]
struct IdUse<'a> {
    kind: &'static str,
    text: &'a str,
    record: usize,
    action: Option<&'a str>,
}

/// Every id F-CONFUSABLE-ID compares (analysis-rules §6) — `run_id`, the action ids, the
/// signature's `key_id` — in record order (within a record and kind, in action order).
fn each_id<'a>(records: &[&'a Record], mut each: impl FnMut(IdUse<'a>)) {
    for (record, r) in records.iter().enumerate() {
        let mut id = |kind, text: Option<&'a str>, action| {
            if let Some(text) = text {
                each(IdUse {
                    kind,
                    text,
                    record,
                    action,
                });
            }
        };
        id("run_id", r.run_id(), None);
        for a in r.action_ids() {
            id("action_id", a.id, a.id);
            id("causal_chain_id", a.causal_chain_id, a.id);
            id("scope_lease_id", a.scope_lease_id, a.id);
        }
        id("key_id", r.key_id(), None);
    }
}

/// The id quoted, with its code points beside it when it is not plain ASCII.
fn spelled(id: &str) -> String {
    let points = crate::model::text::code_points(id);
    if points == id {
        format!("{id:?}")
    } else {
        format!("{:?} ({points})", crate::model::text::sanitize(id))
    }
}

/// F-CONFUSABLE-ID over every record: an id not in NFC, or two ids of one kind equal
/// after NFC and the UTS #39 confusable skeleton while their bytes differ. Each finding
/// comes with the flat index of the record it is shown on.
pub fn confusable_ids(records: &[&Record]) -> Vec<(usize, Finding)> {
    use std::collections::{BTreeMap, BTreeSet};
    use unicode_normalization::{UnicodeNormalization, is_nfc};
    use unicode_security::confusable_detection::skeleton;
    let mut out = Vec::new();
    // Every distinct non-ASCII spelling once per kind, with where it first occurs.
    let mut first: BTreeMap<(&str, &str), IdUse<'_>> = BTreeMap::new();
    each_id(records, |u| {
        if !u.text.is_ascii() {
            first.entry((u.kind, u.text)).or_insert(u);
        }
    });
    let finding = |u: &IdUse<'_>, others: &[IdUse<'_>], message: String| Finding {
        id: "F-CONFUSABLE-ID",
        severity: Severity::Medium,
        run_id: records[u.record].run_id().map(str::to_string),
        action_ids: std::iter::once(u)
            .chain(others)
            .filter_map(|x| x.action.map(str::to_string))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        message,
        evidence: serde_json::json!({
            "kind": u.kind,
            "ids": std::iter::once(u).chain(others).map(|x| serde_json::json!({
                "id": x.text,
                "nfc": is_nfc(x.text),
                "record": records[x.record].source.to_string(),
            })).collect::<Vec<_>>(),
        })
        .into(),
        locations: std::iter::once(u)
            .chain(others)
            .map(|x| Location::record(&records[x.record].source))
            .collect(),
        fingerprint: String::new(),
        chain: None,
        tool: None,
    };
    for u in first.values() {
        if !is_nfc(u.text) {
            out.push((
                u.record,
                finding(
                    u,
                    &[],
                    format!(
                        "{} {} is not in Unicode NFC: it prints like its composed form but its bytes differ",
                        u.kind,
                        spelled(u.text)
                    ),
                ),
            ));
        }
    }
    // Ids of one kind grouped by skeleton; ASCII ids join a group only when a non-ASCII
    // id shares their skeleton (op-o vs op-ο).
    let mut groups: BTreeMap<(&str, String), Vec<IdUse<'_>>> = BTreeMap::new();
    for u in first.values() {
        let nfc: String = u.text.nfc().collect();
        groups
            .entry((u.kind, skeleton(&nfc).collect()))
            .or_default()
            .push(*u);
    }
    // With no non-ASCII id there is no group for an ASCII id to join (the usual case: the
    // ASCII ids are then not even gathered).
    if !groups.is_empty() {
        let mut ascii_seen: BTreeSet<(&str, &str)> = BTreeSet::new();
        each_id(records, |u| {
            if u.text.is_ascii() && ascii_seen.insert((u.kind, u.text)) {
                let key = (u.kind, skeleton(u.text).collect::<String>());
                if let Some(group) = groups.get_mut(&key) {
                    group.push(u);
                }
            }
        });
    }
    for group in groups.values() {
        let Some((head, rest)) = group.split_first().filter(|(_, rest)| !rest.is_empty()) else {
            continue;
        };
        let names: Vec<String> = group.iter().map(|u| spelled(u.text)).collect();
        out.push((
            rest[0].record,
            finding(
                head,
                rest,
                format!(
                    "{} ids look alike but differ in their bytes: {} — a reviewer cannot tell them apart on screen",
                    head.kind,
                    names.join(" vs ")
                ),
            ),
        ));
    }
    out
}
