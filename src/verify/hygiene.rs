//! Findings about how a record is written rather than what it says: repeated keys
//! (F-DUPLICATE-KEY), numbers a double cannot hold (F-NUMBER-PRECISION) and strings
//! that would drive a terminal (F-TERMINAL-CONTROL). One walk over the stored JSON.

use crate::canon::{PrecisionLoss, precision_loss};
use crate::model::Record;
use crate::model::finding::{Finding, Severity};
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
        // except C1 (0xC2 0x80..0x9F) and the bidi marks (0xE2 0x80/0x81, 0xD8 0x9C).
        if !bytes
            .iter()
            .any(|&b| b < 0x20 || b == 0x7f || b == 0xc2 || b == 0xe2 || b == 0xd8)
        {
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
                            self.rounded.push((path(), n.raw.to_string()))
                        }
                        Some(PrecisionLoss::Overflow) if self.overflow.len() < MAX_PATHS => {
                            self.overflow.push((path(), n.raw.to_string()))
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
    w.value(&record.json, &String::new);
    let run_id = record.run_id().map(str::to_string);
    let finding = |id, severity, message: String, evidence| Finding {
        id,
        severity,
        run_id: run_id.clone(),
        action_ids: Vec::new(),
        message,
        evidence,
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
