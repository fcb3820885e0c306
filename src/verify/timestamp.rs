//! Timestamp proofs (verification.md §d): the LocalTimestamper recipe recomputed, an
//! authority that produced a consistent proof judged across the evidence (d.4), and
//! RFC 3161 tokens verified offline (d.6, [`super::tsa`]) with their findings
//! (analysis-rules §10).

use super::encoding::encode_base64;
use super::keys::Keyring;
use super::tsa::{self, Stamped, Token, TsaState};
use crate::model::Record;
use crate::model::finding::{Finding, Location, Severity};
use crate::model::json::{Json, Obj};
use serde::{Deserialize, Serialize};

/// What a `timestamp_proof` is worth (§d).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum TimestampState {
    /// Recomputes under the LocalTimestamper recipe (proves nothing about time).
    LocalConsistent,
    /// From a local authority, but does not recompute: edited or back-dated.
    LocalInconsistent,
    /// Another kind of proof: not verified.
    Opaque,
    /// An RFC 3161 token (d.6); only [`TsaState::Verified`] proves a time.
    Token(TsaState),
}

impl TimestampState {
    /// Every state, for reading names back.
    const ALL: [TimestampState; 8] = [
        TimestampState::LocalConsistent,
        TimestampState::LocalInconsistent,
        TimestampState::Opaque,
        TimestampState::Token(TsaState::Verified),
        TimestampState::Token(TsaState::Untrusted),
        TimestampState::Token(TsaState::ImprintMismatch),
        TimestampState::Token(TsaState::Invalid),
        TimestampState::Token(TsaState::Malformed),
    ];

    /// The name used in output.
    pub fn name(self) -> &'static str {
        match self {
            TimestampState::LocalConsistent => "local-consistent",
            TimestampState::LocalInconsistent => "local-inconsistent",
            TimestampState::Opaque => "opaque (not verified)",
            TimestampState::Token(state) => state.name(),
        }
    }

    /// True when a token is present and fails (d.6: `tsa-imprint-mismatch`,
    /// `tsa-invalid`): the evidence carries a time claim that does not hold, and `check`
    /// fails.
    pub fn fails(self) -> bool {
        matches!(
            self,
            TimestampState::Token(TsaState::ImprintMismatch | TsaState::Invalid)
        )
    }

    /// True when the proof proves a time (a verified RFC 3161 token); every other proof
    /// is a claim.
    pub fn proves_time(self) -> bool {
        self == TimestampState::Token(TsaState::Verified)
    }
}

impl From<TimestampState> for String {
    fn from(state: TimestampState) -> String {
        state.name().to_string()
    }
}

impl TryFrom<String> for TimestampState {
    type Error = String;
    fn try_from(name: String) -> Result<TimestampState, String> {
        (TimestampState::ALL.into_iter())
            .find(|s| s.name() == name)
            .ok_or_else(|| format!("unknown timestamp state {name:?}"))
    }
}

/// What a record's `timestamp_proof` is worth, and the token's facts when it is one.
pub(super) struct Judged {
    pub state: TimestampState,
    pub token: Option<Box<Token>>,
}

/// Judges the `timestamp_proof` of `record`, whose signed bytes (`B`) are
/// `signed_bytes`: the LocalTimestamper recipe first (d.3–d.4: `proof` =
/// base64(SHA-256(B ‖ timestamp)); local-consistent whatever its authority), then an
/// RFC 3161 token (d.6: a proof that decodes to DER — a SEQUENCE longer than a digest),
/// verified under the keyring's TSA roots with its findings pushed to `findings`; else
/// local-inconsistent when it names the recipe's default authority, opaque otherwise —
/// [`local_authorities`] then settles those against the rest of the evidence. A proof
/// with a `logIndex` (a transparency-log entry) stays opaque.
pub(super) fn timestamp_state(
    record: &Record,
    signed_bytes: &[u8],
    keys: &Keyring,
    findings: &mut Vec<Finding>,
) -> Judged {
    let claim = |state| Judged { state, token: None };
    let Some(proof) = record.get("timestamp_proof") else {
        return claim(TimestampState::Opaque);
    };
    if proof.get("logIndex").is_some() {
        return claim(TimestampState::Opaque);
    }
    let stamp = proof.get("timestamp").and_then(Json::as_str).unwrap_or("");
    let claimed = proof.get("proof").and_then(Json::as_str).unwrap_or("");
    let mut h = crate::model::sha256::Hasher::default();
    h.update(signed_bytes);
    h.update(stamp.as_bytes());
    if encode_base64(&h.finish()) == claimed {
        return claim(TimestampState::LocalConsistent);
    }
    if let Some(der) = token_bytes(claimed) {
        let check = tsa::verify(&der, Stamped::Bytes(signed_bytes), keys.tsa_roots());
        findings.extend(token_findings(record, stamp, &check.state, &check.token));
        return Judged {
            state: TimestampState::Token(check.state),
            token: Some(Box::new(check.token)),
        };
    }
    if timestamp_authority(record.obj()) == Some(LOCAL_TIMESTAMPER_DEFAULT) {
        claim(TimestampState::LocalInconsistent)
    } else {
        claim(TimestampState::Opaque)
    }
}

/// The DER of a proof that is an RFC 3161 token: standard base64 of a SEQUENCE longer
/// than the 32 bytes of a digest (the local recipe's proofs are digests), or of a
/// `TimeStampResp` of any length (a refusal without a token is short, and malformed).
pub fn token_bytes(proof: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    let der = base64::engine::general_purpose::STANDARD
        .decode(proof)
        .ok()?;
    let sequence = der.first() == Some(&0x30);
    (sequence && (der.len() > 32 || tsa::is_response(&der))).then_some(der)
}

/// How far a record's claimed `timestamp` may be from a token's `genTime` when the token
/// states no accuracy.
const CLAIM_TOLERANCE_MS: u64 = 1000;

/// The findings of analysis-rules §10 about one record's token: F-TIMESTAMP-IMPRINT,
/// F-TIMESTAMP-INVALID, F-TIMESTAMP-MALFORMED, and F-TIMESTAMP-CLAIM for a token that
/// verifies (trusted or not) while the record claims another time.
fn token_findings(record: &Record, claimed: &str, state: &TsaState, token: &Token) -> Vec<Finding> {
    let finding =
        |id: &'static str, severity, message: String, evidence: serde_json::Value| Finding {
            id,
            severity,
            run_id: record.run_id().map(str::to_string),
            action_ids: Vec::new(),
            message,
            evidence: evidence.into(),
            locations: vec![Location::at(&record.source, &["timestamp_proof", "proof"])],
            fingerprint: String::new(),
            chain: None,
            tool: None,
        };
    let at = record.source.to_string();
    match state {
        TsaState::ImprintMismatch => vec![finding(
            "F-TIMESTAMP-IMPRINT",
            Severity::High,
            format!(
                "the RFC 3161 token of {at} stamps other bytes: moved from another record, or the record was edited after it was stamped"
            ),
            serde_json::json!({ "tsa": token.tsa, "reason": token.reason }),
        )],
        TsaState::Invalid => vec![finding(
            "F-TIMESTAMP-INVALID",
            Severity::High,
            format!(
                "the RFC 3161 token of {at} does not verify: {}",
                token.reason
            ),
            serde_json::json!({ "tsa": token.tsa, "reason": token.reason }),
        )],
        TsaState::Malformed => vec![finding(
            "F-TIMESTAMP-MALFORMED",
            Severity::Medium,
            format!(
                "the timestamp proof of {at} is DER but not an RFC 3161 token: {}",
                token.reason
            ),
            serde_json::json!({ "reason": token.reason }),
        )],
        TsaState::Verified | TsaState::Untrusted => {
            let (Some(gen_time), Some(claimed_ms)) = (
                token.gen_time_ms,
                crate::model::time::parse_iso8601_ms(claimed),
            ) else {
                return Vec::new();
            };
            let tolerance = token.accuracy_ms.unwrap_or(CLAIM_TOLERANCE_MS);
            let apart = (claimed_ms - gen_time as f64).abs();
            if apart <= tolerance as f64 {
                return Vec::new();
            }
            vec![finding(
                "F-TIMESTAMP-CLAIM",
                Severity::Low,
                format!(
                    "{at} claims it was stamped at {claimed}, {apart:.0} ms from the token's genTime {} (accuracy ±{tolerance} ms)",
                    crate::model::time::format_ms(gen_time as f64)
                ),
                serde_json::json!({
                    "claimed": claimed,
                    "gen_time": crate::model::time::format_ms(gen_time as f64),
                    "accuracy_ms": token.accuracy_ms,
                    "tsa": token.tsa,
                }),
            )]
        }
    }
}

/// The LocalTimestamper's default authority name.
pub const LOCAL_TIMESTAMPER_DEFAULT: &str = "local-dev-tsa";

/// The `authority` of a record's `timestamp_proof`, when it has no `logIndex` (a log
/// entry is never the local recipe).
pub fn timestamp_authority(record: &Obj) -> Option<&str> {
    let proof = record.get("timestamp_proof")?;
    if proof.get("logIndex").is_some() {
        return None;
    }
    proof.get("authority").and_then(Json::as_str)
}

/// d.4 across the evidence: an authority that produced a local-consistent proof anywhere
/// makes its proofs that do not recompute local-inconsistent, never opaque.
pub fn local_authorities(results: &mut [super::RecordResult]) {
    let consistent: std::collections::HashSet<compact_str::CompactString> = (results.iter())
        .map(|r| &r.authenticity)
        .filter(|a| a.timestamp == Some(TimestampState::LocalConsistent))
        .filter_map(|a| a.timestamp_authority.clone())
        .collect();
    if consistent.is_empty() {
        return;
    }
    for result in results.iter_mut() {
        let a = &result.authenticity;
        if a.timestamp == Some(TimestampState::Opaque)
            && let Some(authority) = a.timestamp_authority.as_deref()
            && consistent.contains(authority)
        {
            let note = format!(
                "timestamp proof does not recompute, though {authority:?} produced a local-consistent proof elsewhere in the evidence"
            );
            let auth = std::sync::Arc::make_mut(&mut result.authenticity);
            auth.timestamp = Some(TimestampState::LocalInconsistent);
            auth.notes.push(note);
        }
    }
}

/// F-TIMESTAMP-ORDER (analysis-rules §10): on each chain path, a record whose token's
/// `genTime` (less its accuracy) is later than the next record's `created_at_ms` — an
/// honest emitter stamps a record before it builds the next. Each with the flat index of
/// the stamped record.
pub fn order_findings(
    records: &[&Record],
    results: &[super::RecordResult],
    links: &super::links::LinkGraph,
) -> Vec<(usize, Finding)> {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut out = Vec::new();
    for path in &links.paths {
        for pair in path.members.windows(2) {
            let (a, b) = (pair[0] as usize, pair[1] as usize);
            let auth = &results[a].authenticity;
            let (
                Some(TimestampState::Token(TsaState::Verified | TsaState::Untrusted)),
                Some(token),
            ) = (auth.timestamp, auth.timestamp_token.as_deref())
            else {
                continue;
            };
            let (Some(gen_time), Some(next_created)) =
                (token.gen_time_ms, records[b].created_at_ms())
            else {
                continue;
            };
            let earliest = gen_time as f64 - token.accuracy_ms.unwrap_or(0) as f64;
            if earliest <= next_created || !seen.insert((a, b)) {
                continue;
            }
            let stamped = crate::model::time::format_ms(gen_time as f64);
            let next = crate::model::time::format_ms(next_created);
            out.push((
                a,
                Finding {
                    id: "F-TIMESTAMP-ORDER",
                    severity: Severity::Medium,
                    run_id: records[a].run_id().map(str::to_string),
                    action_ids: Vec::new(),
                    message: format!(
                        "{} was stamped at {stamped}, after the next record on its chain ({}) was created at {next}: not the order an emitter stamps in",
                        records[a].source, records[b].source
                    ),
                    evidence: serde_json::json!({
                        "gen_time": stamped,
                        "accuracy_ms": token.accuracy_ms,
                        "next": records[b].source.to_string(),
                        "next_created_at": next,
                    })
                    .into(),
                    locations: vec![
                        Location::at(&records[a].source, &["timestamp_proof", "proof"]),
                        Location::at(&records[b].source, &["created_at_ms"]),
                    ],
                    fingerprint: String::new(),
                    chain: None,
                    tool: None,
                },
            ));
        }
    }
    out
}
