//! An alert (docs/watch.md) and the log it is written to: one JSON line each, chained by
//! `prev_record_hash` and, with a signing key, signed as an AEP v0.3 record is — so
//! `aeplens check --keys MONITOR-KEYS` verifies the log as the evidence type
//! `aeplens-alert`. The log is also what says which alerts were issued: reopened after a
//! crash, its torn last line is cut and every dedupe key it holds is known.

use crate::canon::canonical_sha256;
use crate::model::finding::Severity;
use crate::model::json::Json;
use crate::model::sha256::{Hasher, Sha256Digest, hex};
use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// What raised an alert: the evidence fails, a rule or finding matched, or the monitor
/// could not do its work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    Tamper,
    Policy,
    Infra,
}

impl Class {
    pub const ALL: [Class; 3] = [Class::Tamper, Class::Policy, Class::Infra];

    pub fn name(self) -> &'static str {
        match self {
            Class::Tamper => "tamper",
            Class::Policy => "policy",
            Class::Infra => "infra",
        }
    }
}

/// The record (or for infra, the file and byte offset) an alert is about.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Subject {
    pub path: String,
    pub line: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    pub record_sha256: Option<String>,
}

/// The action an alert concerns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActionRef {
    pub run_id: Option<String>,
    pub action_id: Option<String>,
    /// The chain hash of the first record of the emitter chain the action is on.
    pub chain_head: Option<String>,
}

/// One alert, before it is given its time, its link and its signature.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Alert {
    pub class: Class,
    pub severity: Severity,
    pub rule: String,
    pub dedupe_key: String,
    /// On a `resolved` line, the key of the infra alert that cleared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolves: Option<String>,
    pub store: String,
    pub record: Option<Subject>,
    pub action: Option<ActionRef>,
    pub message: String,
    /// `open`, or `resolved` for an infra condition that cleared.
    pub status: String,
}

/// The dedupe key of a condition: SHA-256 over each part, length-prefixed, as
/// `sha256:HEX`. The parts are the rule, the store, the chain head and the subject
/// (docs/watch.md §4).
pub fn dedupe_key(parts: &[&str]) -> String {
    let mut h = Hasher::default();
    for part in parts {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    format!("sha256:{}", hex(&h.finish()))
}

impl Alert {
    /// The line saying that the infra condition of `self` cleared.
    pub fn resolved(&self) -> Alert {
        Alert {
            dedupe_key: dedupe_key(&["resolved", &self.dedupe_key]),
            resolves: Some(self.dedupe_key.clone()),
            message: format!("resolved: {}", self.message),
            status: "resolved".into(),
            ..self.clone()
        }
    }
}

/// The infra alerts that are conditions: open while they hold, and said `resolved` once
/// when they clear. The others (a load error, a file gone) are said once.
pub const CONDITIONS: &[&str] = &[
    "unreadable",
    "partial-line",
    "keyring-missing",
    "leases-missing",
    "state-write-failed",
    "sink-failed",
];

/// The key an alert log is signed with (`--sign-key`), and the id it signs under.
pub struct Signer {
    pub key_id: String,
    pub key: SigningKey,
}

impl Signer {
    /// Reads a 32-byte Ed25519 seed from `path`: 64 hex digits (surrounding whitespace
    /// allowed) or 32 raw bytes.
    pub fn read(path: &Path, key_id: &str) -> Result<Signer, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let text = String::from_utf8_lossy(&bytes);
        let seed: [u8; 32] = match Sha256Digest::from_hex(text.trim()) {
            Some(d) => d.0,
            None => bytes.as_slice().try_into().map_err(|_| {
                format!(
                    "{}: not an Ed25519 seed (64 hex digits or 32 raw bytes)",
                    path.display()
                )
            })?,
        };
        Ok(Signer {
            key_id: key_id.to_string(),
            key: crate::verify::sign::signing_key(&seed),
        })
    }

    /// The public key as a keyring file holds it: `{"KEY_ID": "HEX"}`.
    pub fn keyring_json(&self) -> String {
        let public = hex(self.key.verifying_key().as_bytes());
        serde_json::json!({ &self.key_id: public }).to_string()
    }
}

/// Where alerts go first: a file that is also the record of what was issued, or stdout.
pub struct AlertLog {
    /// `None`: stdout.
    path: Option<PathBuf>,
    /// The chain hash of the last alert written.
    last: Option<Sha256Digest>,
    /// Every dedupe key in the log, but those of conditions said resolved after.
    issued: HashSet<String>,
    /// The infra conditions alerted and not resolved.
    open: BTreeMap<String, Alert>,
    /// Lines in the log.
    lines: u64,
    signer: Option<Signer>,
}

/// A line written, as written (without its newline).
pub type Line = String;

impl AlertLog {
    /// Opens the log at `path` (stdout when `None`) to append to: a torn last line (no
    /// newline: the monitor was killed while writing it) is cut, and every line is read
    /// for its dedupe key and the last for its chain hash. A line that is not an alert
    /// is refused: the log would no longer verify.
    pub fn open(path: Option<&Path>, signer: Option<Signer>) -> Result<AlertLog, String> {
        let mut log = AlertLog {
            path: path.map(Path::to_path_buf),
            last: None,
            issued: HashSet::new(),
            open: BTreeMap::new(),
            lines: 0,
            signer,
        };
        let Some(path) = path else { return Ok(log) };
        let shown = crate::model::text::sanitize(&path.display().to_string()).into_owned();
        let mut file = match std::fs::File::options().read(true).write(true).open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(log),
            Err(e) => return Err(format!("alert log {shown}: {e}")),
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| format!("alert log {shown}: {e}"))?;
        let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if whole < bytes.len() {
            file.set_len(whole as u64)
                .and_then(|()| file.sync_all())
                .map_err(|e| format!("alert log {shown}: cutting its torn last line: {e}"))?;
        }
        for (n, line) in bytes[..whole].split(|&b| b == b'\n').enumerate() {
            if line.is_empty() {
                continue;
            }
            let value: serde_json::Value = serde_json::from_slice(line)
                .map_err(|e| format!("alert log {shown} line {}: not JSON ({e})", n + 1))?;
            let alert = Alert::deserialize(&value)
                .map_err(|e| format!("alert log {shown} line {}: not an alert ({e})", n + 1))?;
            match &alert.resolves {
                Some(cleared) if alert.status == "resolved" => {
                    log.issued.remove(cleared);
                    log.open.remove(cleared);
                }
                _ => {
                    log.issued.insert(alert.dedupe_key.clone());
                    if CONDITIONS.contains(&alert.rule.as_str()) {
                        log.open.insert(alert.dedupe_key.clone(), alert);
                    }
                }
            }
            log.last = Some(canonical_sha256(&Json::from_serde(&value)));
            log.lines += 1;
        }
        Ok(log)
    }

    /// The log goes to stdout, which keeps no record: the state does.
    pub fn to_stdout(&self) -> bool {
        self.path.is_none()
    }

    /// True when an alert with `key` was written.
    pub fn issued(&self, key: &str) -> bool {
        self.issued.contains(key)
    }

    /// Counts `key` as issued (from the state, for a log on stdout).
    pub fn remember(&mut self, key: String) {
        self.issued.insert(key);
    }

    /// Every dedupe key issued and not resolved since.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.issued.iter()
    }

    /// The infra conditions the log holds open (alerted, not resolved).
    pub fn open_conditions(&self) -> &BTreeMap<String, Alert> {
        &self.open
    }

    /// The chain hash of the last alert (what the next one links to).
    pub fn last(&self) -> Option<Sha256Digest> {
        self.last
    }

    /// Continues the chain from `last` (from the state, for a log on stdout).
    pub fn continue_from(&mut self, last: Option<Sha256Digest>) {
        if self.path.is_none() {
            self.last = last;
        }
    }

    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Appends `alerts` seen at `now_ms`, each linked to the one before and signed, and
    /// syncs the log: once this returns, they are issued. Gives the lines written.
    pub fn append(&mut self, alerts: &[Alert], now_ms: u64) -> std::io::Result<Vec<Line>> {
        let mut lines = Vec::with_capacity(alerts.len());
        let mut last = self.last;
        for alert in alerts {
            let (line, hash) = self.line(alert, now_ms, last);
            last = Some(hash);
            lines.push(line);
        }
        let mut text = String::new();
        for line in &lines {
            text.push_str(line);
            text.push('\n');
        }
        match &self.path {
            None => {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())?;
                out.flush()?;
            }
            Some(path) => {
                let mut file = std::fs::File::options()
                    .create(true)
                    .append(true)
                    .open(path)?;
                file.write_all(text.as_bytes())?;
                file.sync_data()?;
            }
        }
        self.last = last;
        self.lines += lines.len() as u64;
        self.issued
            .extend(alerts.iter().map(|a| a.dedupe_key.clone()));
        Ok(lines)
    }

    /// The line of `alert`: its fields, `seen_at_ms`, the link to `previous`, and the
    /// signature over C1 of the rest; with its chain hash.
    fn line(
        &self,
        alert: &Alert,
        now_ms: u64,
        previous: Option<Sha256Digest>,
    ) -> (Line, Sha256Digest) {
        let mut value = serde_json::json!({ "schema_version": SCHEMA_VERSION });
        let fields = serde_json::to_value(alert).expect("an alert serialises");
        let (serde_json::Value::Object(out), serde_json::Value::Object(fields)) =
            (&mut value, fields)
        else {
            unreachable!("both are objects")
        };
        out.extend(fields);
        out.insert("seen_at_ms".into(), now_ms.into());
        out.insert(
            "prev_record_hash".into(),
            previous.map_or(serde_json::Value::Null, |h| h.to_string().into()),
        );
        let mut json = Json::from_serde(&value);
        if let Some(signer) = &self.signer {
            crate::verify::sign::sign_legacy(&mut json, &signer.key_id, &signer.key);
        }
        let hash = canonical_sha256(&json);
        (escape_controls(&json.to_serde().to_string()), hash)
    }

    /// Reads the log's lines from line `from` (0-based) on: what a sink that fell behind
    /// is given again.
    pub fn lines_from(&self, from: u64) -> std::io::Result<Vec<Line>> {
        let Some(path) = &self.path else {
            return Ok(Vec::new());
        };
        let mut file = std::fs::File::open(path)?;
        file.rewind()?;
        let mut text = String::new();
        file.read_to_string(&mut text)?;
        Ok((text.lines())
            .skip(usize::try_from(from).unwrap_or(usize::MAX))
            .map(str::to_string)
            .collect())
    }
}

/// `line` (JSON text) with the control characters JSON leaves raw (DEL and C1) written
/// as `\\u` escapes: the same JSON value, and nothing a terminal would act on when the log
/// is stdout.
fn escape_controls(line: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// The `schema_version` of an alert line.
pub const SCHEMA_VERSION: &str = "aeplens-alert/1";
