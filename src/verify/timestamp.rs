//! Timestamp proofs (verification.md §d): the LocalTimestamper recipe recomputed, and an
//! authority that produced a consistent proof judged across the evidence (d.4).

use super::encoding::encode_base64;
use super::signature::Authenticity;
use crate::model::json::{Json, Obj};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What a `timestamp_proof` is worth (§d).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TimestampState {
    /// Recomputes under the LocalTimestamper recipe (proves nothing about time).
    #[serde(rename = "local-consistent")]
    LocalConsistent,
    /// From a local authority, but does not recompute: edited or back-dated.
    #[serde(rename = "local-inconsistent")]
    LocalInconsistent,
    /// Another kind of proof: not verified.
    #[serde(rename = "opaque (not verified)")]
    Opaque,
}

impl TimestampState {
    /// The name used in output.
    pub fn name(self) -> &'static str {
        match self {
            TimestampState::LocalConsistent => "local-consistent",
            TimestampState::LocalInconsistent => "local-inconsistent",
            TimestampState::Opaque => "opaque (not verified)",
        }
    }
}

/// The LocalTimestamper check (verification.md §d.3–d.4): `proof` =
/// base64(SHA-256(B ‖ timestamp)). A proof without `logIndex` that recomputes is
/// local-consistent whatever its authority; one that does not is local-inconsistent when
/// it names the recipe's default authority, else opaque here — [`local_authorities`]
/// then settles it against the rest of the evidence.
pub(super) fn timestamp_state(record: &Obj, signed_bytes: &[u8]) -> TimestampState {
    let Some(proof) = record.get("timestamp_proof") else {
        return TimestampState::Opaque;
    };
    if proof.get("logIndex").is_some() {
        return TimestampState::Opaque;
    }
    let stamp = proof.get("timestamp").and_then(Json::as_str).unwrap_or("");
    let claimed = proof.get("proof").and_then(Json::as_str).unwrap_or("");
    let mut h = Sha256::new();
    h.update(signed_bytes);
    h.update(stamp.as_bytes());
    if encode_base64(&h.finalize()) == claimed {
        TimestampState::LocalConsistent
    } else if timestamp_authority(record) == Some(LOCAL_TIMESTAMPER_DEFAULT) {
        TimestampState::LocalInconsistent
    } else {
        TimestampState::Opaque
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
pub fn local_authorities(results: &mut [(&Obj, &mut Authenticity)]) {
    let consistent: std::collections::HashSet<&str> = results
        .iter()
        .filter(|(_, a)| a.timestamp == Some(TimestampState::LocalConsistent))
        .filter_map(|(r, _)| timestamp_authority(r))
        .collect();
    for (record, auth) in results.iter_mut() {
        if auth.timestamp == Some(TimestampState::Opaque)
            && let Some(authority) = timestamp_authority(record)
            && consistent.contains(authority)
        {
            auth.timestamp = Some(TimestampState::LocalInconsistent);
            auth.notes.push(format!(
                "timestamp proof does not recompute, though {authority:?} produced a local-consistent proof elsewhere in the evidence"
            ));
        }
    }
}
