//! A record's verdict in short — its five axes, its key id and where it is — carried with
//! every action handed over (`show`, `chains`, the envelope, reports, exports), so that no
//! action is shown or written without what its record's verification said. `✓` means
//! "verified" (a valid signature) and nothing else.

use super::RecordResult;
use serde::{Deserialize, Serialize};

/// The five axes of one record, in short.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordVerdict {
    /// The record, `file:line`.
    pub record: String,
    /// `valid`, `invalid`, `binding-mismatch`, `unsupported-legacy`, `unsigned`, or
    /// `not-checked` (see `key_unknown`).
    pub authenticity: String,
    /// The key id the record names, when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
    /// True when that key id has no trusted key: the signature was not checked.
    pub key_unknown: bool,
    /// The worst status of the link-graph paths through the record.
    pub chain: String,
    /// The fork point (`file:line`) of a path through the record, when one forks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_at: Option<String>,
    /// `pass`, `fail` or `not-evaluated`.
    pub structural: String,
    pub semantic: String,
    /// `not-evaluated` (completeness is not provable from the records alone) or a status.
    pub capture: String,
    /// What the record's RFC 3161 token says of its time, when it has one: "proven by …"
    /// for a verified token only, else "claimed (…)".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
}

impl RecordVerdict {
    /// The verdict in short of a verified record.
    pub fn of(r: &RecordResult) -> RecordVerdict {
        let check = |evaluated: bool, status: Option<super::CheckStatus>| match status {
            Some(s) if evaluated => s.name().to_string(),
            _ => "not-evaluated".to_string(),
        };
        let a = &r.authenticity;
        RecordVerdict {
            record: format!("{}:{}", r.source.path, r.source.line),
            authenticity: a.status.map_or("not-checked", |s| s.name()).to_string(),
            key_id: a.key_id.clone(),
            key_unknown: a.key_unknown,
            chain: (r.chain.status.filter(|_| r.chain.evaluated))
                .map_or("not-checked", super::chain::ChainStatus::name)
                .to_string(),
            forked_at: (r.chain.forked_at.as_ref()).map(|f| format!("{}:{}", f.path, f.line)),
            structural: check(r.structural.evaluated, r.structural.status),
            semantic: check(r.semantic.evaluated, r.semantic.status),
            capture: (r.capture.run.as_ref())
                .filter(|_| r.capture.evaluated)
                .map_or_else(|| "not-evaluated".to_string(), |c| c.status.clone()),
            time: a.timestamp_token.as_ref().and_then(|_| a.time_words()),
        }
    }

    /// True only for a valid signature.
    pub fn verified(&self) -> bool {
        self.authenticity == "valid"
    }

    /// `✓` verified, `✗` a signature or binding that fails, `○` nothing verified (unsigned,
    /// a key not trusted, a construction not supported).
    pub fn glyph(&self) -> char {
        match self.authenticity.as_str() {
            "valid" => '✓',
            "invalid" | "binding-mismatch" => '✗',
            _ => '○',
        }
    }

    /// One line a reviewer reads: `✓ valid (key k1) · chain intact · file:line`, with
    /// `structural fail` / `semantic fail` when they fail and the capture axis when it was
    /// evaluated (`check` and the JSON give every axis). Record text escaped.
    pub fn short(&self) -> String {
        format!("{} {}", self.glyph(), self.words())
    }

    /// [`RecordVerdict::short`] without its glyph, where a glyph column already shows it.
    pub fn words(&self) -> String {
        use std::fmt::Write as _;
        let text = crate::model::text::sanitize;
        let mut s = self.authenticity.clone();
        let _ = match (&self.key_id, self.key_unknown) {
            (Some(k), true) => write!(s, " (key {}: not in the keyring)", text(k)),
            (Some(k), false) => write!(s, " (key {})", text(k)),
            (None, _) => Ok(()),
        };
        let _ = write!(s, " · chain {}", self.chain);
        if let Some(at) = &self.forked_at {
            let _ = write!(s, ", forked at {}", text(at));
        }
        for (axis, status) in [
            ("structural", &self.structural),
            ("semantic", &self.semantic),
        ] {
            if status == "fail" {
                let _ = write!(s, " · {axis} fail");
            }
        }
        if self.capture != "not-evaluated" {
            let _ = write!(s, " · capture {}", self.capture);
        }
        if let Some(time) = &self.time {
            let _ = write!(s, " · time {}", text(time));
        }
        let _ = write!(s, " · {}", text(&self.record));
        s
    }
}
