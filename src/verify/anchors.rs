//! Anchors (verification.md d.7): RFC 3161 tokens over chain heads, kept outside the
//! evidence (`--anchors FILE`), that show which part of a chain is covered and reveal a
//! chain whose tail was cut. An anchor line is `{"record_sha256": H, "authority": name,
//! "proof": base64 token whose imprint is H}`, and, when `aeplens anchor` wrote it,
//! `chain_root` (the `H` of the chain path's first record) and `run_id`: what lets a
//! missing head be recognised as its chain's. Anchors fail closed: one over a record
//! that is missing and whose chain it does not name is a cut tail all the same (d.7).

use super::links::{LinkGraph, RecordAt};
use super::tsa::{self, Stamped, Token, TsaState};
use crate::canon::Sha256Digest;
use crate::load::LoadError;
use crate::model::Record;
use crate::model::finding::{Finding, Location, Severity};
use crate::model::json::Json;
use serde::Serialize;
use std::sync::Arc;

/// One line of an anchor file.
#[derive(Clone, Debug, PartialEq)]
pub struct Anchor {
    /// The anchor file and the 1-based line the anchor is on.
    pub file: Arc<str>,
    pub line: usize,
    pub record_sha256: Sha256Digest,
    pub authority: String,
    /// The token's DER.
    pub token: Vec<u8>,
    /// The `H` of the first record of the anchored record's chain path.
    pub chain_root: Option<Sha256Digest>,
    /// The run of the anchored record, when the line names it.
    pub run_id: Option<String>,
    /// The line as written (what the index's configuration digests).
    pub text: String,
}

/// Reads an anchor file.
pub fn read_file(path: &str) -> Result<Vec<Anchor>, LoadError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoadError::whole(path, format!("cannot read anchors: {e}")))?;
    read_text(path, &text)
}

/// Reads an anchor file's text (read from `path`): one JSON object a line, blank lines
/// skipped. An error names the file, line and column.
pub fn read_text(path: &str, text: &str) -> Result<Vec<Anchor>, LoadError> {
    let file: Arc<str> = path.into();
    let mut anchors = Vec::new();
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let anchor = parse_line(trimmed)
            .map_err(|e| LoadError::located(path, text, start, format!("anchor: {e}")))?;
        anchors.push(Anchor {
            file: file.clone(),
            line: i + 1,
            text: trimmed.to_string(),
            ..anchor
        });
    }
    Ok(anchors)
}

fn parse_line(line: &str) -> Result<Anchor, String> {
    let json = crate::load::parser::parse(line).map_err(|e| e.message)?;
    let text = |name: &str| json.get(name).and_then(Json::as_str);
    let hash = |name: &str| {
        text(name)
            .map(|h| Sha256Digest::from_hex(h).ok_or(format!("{name} is not 64 lower-case hex")))
            .transpose()
    };
    let record_sha256 = hash("record_sha256")?.ok_or("no record_sha256")?;
    let proof = text("proof").ok_or("no proof")?;
    let token = super::encoding::decode_base64(proof)
        .map_err(|e| format!("proof: {e}"))?
        .bytes;
    Ok(Anchor {
        file: "".into(),
        line: 0,
        record_sha256,
        authority: text("authority").unwrap_or("").to_string(),
        token,
        chain_root: hash("chain_root")?,
        run_id: text("run_id").map(str::to_string),
        text: String::new(),
    })
}

/// What an anchor showed about the loaded evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AnchorStatus {
    /// Its token verifies and its record is loaded: the chain is covered through it.
    Anchored,
    /// Its token verifies, its record is missing while its chain's records are loaded —
    /// or while it names no chain (or a run that is loaded), so that it cannot be told
    /// from a cut tail.
    Truncated,
    /// Its token verifies; neither its record nor the chain or run it names is in the
    /// evidence.
    NotInEvidence,
    /// Its token is well-formed but reaches no trusted root (`--tsa-certs`): not used.
    Untrusted,
    /// Its token does not verify, or stamps other bytes.
    Invalid,
}

/// One anchor's verdict, as output.
#[derive(Clone, Debug, Serialize)]
pub struct AnchorOut {
    pub file: Arc<str>,
    pub line: usize,
    pub record_sha256: Sha256Digest,
    pub authority: String,
    pub status: AnchorStatus,
    /// The token's state (`tsa-verified`, …).
    pub token_state: &'static str,
    pub token: Token,
    /// The anchored record, when loaded.
    pub record: Option<RecordAt>,
    /// For a truncated chain: the last record of it that is loaded (none when the anchor
    /// does not say which chain it was).
    pub last_loaded: Option<RecordAt>,
}

/// A chain path's coverage by an anchor: the path is anchored through its record at
/// `position`; the records after it are not.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AnchoredThrough {
    #[serde(flatten)]
    pub record: RecordAt,
    /// The record's 0-based position on the path.
    pub position: usize,
    /// `genTime` of the anchor's token (ISO-8601 UTC).
    pub gen_time: String,
    pub tsa: Option<String>,
}

/// Verifies every anchor against the evidence: sets each path's `anchored_through` (the
/// furthest verified anchor on it), and pushes F-TAIL-TRUNCATED and F-ANCHOR-INVALID
/// onto `links.findings` when a loaded record is concerned, else onto `links.unplaced`;
/// either fails `check`.
pub fn apply(
    anchors: &[Anchor],
    roots: &super::tsa::Roots,
    records: &[&Record],
    hashes: &[Sha256Digest],
    links: &mut LinkGraph,
) -> Vec<AnchorOut> {
    if anchors.is_empty() {
        return Vec::new();
    }
    let by_hash: rustc_hash::FxHashMap<Sha256Digest, usize> = (hashes.iter().enumerate().rev())
        .map(|(i, h)| (*h, i))
        .collect();
    // Per record (a path's members are first copies), the paths through it.
    let mut paths_of: rustc_hash::FxHashMap<u32, Vec<usize>> = rustc_hash::FxHashMap::default();
    for (p, path) in links.paths.iter().enumerate() {
        for &m in &path.members {
            paths_of.entry(m).or_default().push(p);
        }
    }
    let mut out = Vec::with_capacity(anchors.len());
    for anchor in anchors {
        let check = tsa::verify(
            &anchor.token,
            Stamped::Sha256(&anchor.record_sha256.0),
            roots,
        );
        let loaded = by_hash.get(&anchor.record_sha256).copied();
        let root = (anchor.chain_root)
            .and_then(|h| by_hash.get(&h).copied())
            .filter(|_| loaded.is_none());
        // The last loaded record of the anchored chain, when the anchored record is not.
        let last_loaded = root.and_then(|r| {
            let paths = paths_of.get(&(r as u32))?;
            let longest = paths
                .iter()
                .max_by_key(|&&p| links.paths[p].members.len())?;
            Some(*links.paths[*longest].members.last()? as usize)
        });
        // An anchor that names no chain, or names a run that is loaded, over a record that
        // is not: whose tail it was cannot be told, so it is taken as a cut one.
        let unattributed = anchor.chain_root.is_none()
            && (anchor.run_id.as_deref())
                .is_none_or(|run| records.iter().any(|r| r.run_id() == Some(run)));
        let status = match check.state {
            TsaState::Verified if loaded.is_some() => AnchorStatus::Anchored,
            TsaState::Verified if last_loaded.is_some() || unattributed => AnchorStatus::Truncated,
            TsaState::Verified => AnchorStatus::NotInEvidence,
            TsaState::Untrusted => AnchorStatus::Untrusted,
            _ => AnchorStatus::Invalid,
        };
        let shown_on = loaded.or(last_loaded);
        match (status, shown_on) {
            (AnchorStatus::Anchored, Some(i)) => {
                let gen_time =
                    crate::model::time::format_ms(check.token.gen_time_ms.unwrap_or(0) as f64);
                for &p in paths_of.get(&(i as u32)).into_iter().flatten() {
                    let path = &mut links.paths[p];
                    let Some(position) = path.members.iter().position(|&m| m as usize == i) else {
                        continue;
                    };
                    if path
                        .anchored_through
                        .as_ref()
                        .is_some_and(|a| a.position >= position)
                    {
                        continue;
                    }
                    path.anchored_through = Some(AnchoredThrough {
                        record: RecordAt::of(records[i]),
                        position,
                        gen_time: gen_time.clone(),
                        tsa: check.token.tsa.clone(),
                    });
                }
            }
            (AnchorStatus::Truncated, Some(last)) => {
                links.anchors_fail = true;
                links
                    .findings
                    .push((last, truncated(anchor, &check.token, Some(records[last]))));
            }
            (AnchorStatus::Invalid, Some(i)) => {
                links.anchors_fail = true;
                links
                    .findings
                    .push((i, invalid(anchor, &check.token, Some(records[i]))));
            }
            (AnchorStatus::Truncated, None) => {
                links.anchors_fail = true;
                links.unplaced.push(truncated(anchor, &check.token, None));
            }
            (AnchorStatus::Invalid, None) => {
                links.anchors_fail = true;
                links.unplaced.push(invalid(anchor, &check.token, None));
            }
            _ => {}
        }
        out.push(AnchorOut {
            file: anchor.file.clone(),
            line: anchor.line,
            record_sha256: anchor.record_sha256,
            authority: anchor.authority.clone(),
            status,
            token_state: check.state.name(),
            token: check.token,
            record: loaded.map(|i| RecordAt::of(records[i])),
            last_loaded: last_loaded.map(|i| RecordAt::of(records[i])),
        });
    }
    out
}

/// Where an anchor line is.
fn anchor_location(file: &Arc<str>, line: usize, field: &str) -> Location {
    Location {
        path: file.clone(),
        line,
        pointer: crate::model::finding::pointer(&[field]),
    }
}

/// F-TAIL-TRUNCATED: the anchored record is missing; `last` is its chain's last loaded
/// one, or none when the anchor does not say which chain it was.
fn truncated(anchor: &Anchor, token: &Token, last: Option<&Record>) -> Finding {
    let at = format!("{}:{}", anchor.file, anchor.line);
    let (message, last_loaded) = match last {
        Some(last) => (
            format!(
                "the chain through {} was anchored further, at record {} ({}), which is not in the evidence loaded: its tail was cut (or its later records were not given)",
                last.source,
                anchor.record_sha256,
                token.proven()
            ),
            Some(last.source.to_string()),
        ),
        None => (
            format!(
                "the anchor at {at} proves record {} ({}), which is not in the evidence loaded, and names no chain of it: a tail was cut, or this anchor belongs to other evidence",
                anchor.record_sha256,
                token.proven()
            ),
            None,
        ),
    };
    Finding {
        id: "F-TAIL-TRUNCATED",
        severity: Severity::High,
        run_id: last
            .and_then(|r| r.run_id().map(str::to_string))
            .or_else(|| anchor.run_id.clone()),
        action_ids: Vec::new(),
        message,
        evidence: serde_json::json!({
            "last_loaded": last_loaded,
            "anchored": anchor.record_sha256.to_string(),
            "anchor": at,
            "tsa": token.tsa,
            "gen_time_ms": token.gen_time_ms,
        })
        .into(),
        locations: (last.map(|r| Location::record(&r.source)).into_iter())
            .chain([anchor_location(&anchor.file, anchor.line, "record_sha256")])
            .collect(),
        fingerprint: String::new(),
        chain: None,
        tool: None,
    }
}

/// F-ANCHOR-INVALID, shown on `shown_on` (the anchored record, or its chain's last) when
/// one is loaded.
fn invalid(anchor: &Anchor, token: &Token, shown_on: Option<&Record>) -> Finding {
    let at = format!("{}:{}", anchor.file, anchor.line);
    Finding {
        id: "F-ANCHOR-INVALID",
        severity: Severity::High,
        run_id: shown_on
            .and_then(|r| r.run_id().map(str::to_string))
            .or_else(|| anchor.run_id.clone()),
        action_ids: Vec::new(),
        message: format!(
            "the anchor at {at} for record {} does not verify: {}",
            anchor.record_sha256, token.reason
        ),
        evidence: serde_json::json!({
            "anchor": at,
            "record_sha256": anchor.record_sha256.to_string(),
            "reason": token.reason,
        })
        .into(),
        locations: (shown_on.map(|r| Location::record(&r.source)).into_iter())
            .chain([anchor_location(&anchor.file, anchor.line, "proof")])
            .collect(),
        fingerprint: String::new(),
        chain: None,
        tool: None,
    }
}
