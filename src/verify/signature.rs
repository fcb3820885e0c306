//! Authenticity (verification.md §b–d, §h): which of the four signing constructions a
//! signature satisfies, the DSSE binding checks D1–D12, and the timestamp proof.
//! Ed25519 is always strict (`verify_strict`: small-order keys and R rejected, S < L).

use super::encoding::{decode_base64, decode_hex, encode_base64, is_hex_signature};
use super::keys::Keyring;
use crate::canon::{
    CHAIN_EXCLUDED, SIGNED_EXCLUDED, SignatureSlot, Variant, canonical_bytes,
    canonical_bytes_without, has_divergence_trigger, sha256_hex, stored_order_bytes,
};
use crate::load::parser;
use crate::model::Record;
use crate::model::finding::{Finding, Severity};
use crate::model::json::{Json, Obj};
use ed25519_dalek::{Signature, VerifyingKey};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// The DSSE payload type of an AEP attestation (D1).
pub const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// The in-toto statement type (D5).
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// The AEP predicate type, also for v0.5 records (D6).
pub const PREDICATE_TYPE: &str = "https://wasmagent.dev/attestations/aep/v0.4";

/// The four signing constructions (verification.md §b).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Construction {
    /// S1: Ed25519 over C1(record − signature − dsse_envelope − timestamp_proof).
    JsLegacyInline,
    /// S2: Ed25519 over SHA-256 of the Rust gateway's struct-order JSON.
    RustGatewayLegacy,
    /// S3: DSSE with PAE over the base64 payload *string* (pre-fix).
    DssePrefixB64,
    /// S4: DSSE with PAE over the decoded payload bytes (current profile).
    DsseDecodedBody,
}

impl Construction {
    /// The name reported in output.
    pub fn name(self) -> &'static str {
        match self {
            Construction::JsLegacyInline => "js-legacy-inline",
            Construction::RustGatewayLegacy => "rust-gateway-legacy-sha256",
            Construction::DssePrefixB64 => "dsse-prefix-b64",
            Construction::DsseDecodedBody => "aep-dsse-ed25519-decoded-body-v1",
        }
    }

    /// Only S4 is valid under the current profile.
    pub fn is_legacy(self) -> bool {
        self != Construction::DsseDecodedBody
    }
}

/// Which verdicts historical constructions get.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Profile {
    /// Historical constructions verified and named (`valid` + construction).
    #[default]
    Forensic,
    /// As a current-profile verifier must: S1–S3 are `unsupported-legacy`.
    Current,
}

/// Authenticity outcomes (verifier-result contract, §f).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuthStatus {
    /// No signature material (or a placeholder).
    Unsigned,
    /// The signature verifies and, for DSSE, D1–D11 hold.
    Valid,
    /// The signature does not verify, or the envelope is malformed.
    Invalid,
    /// A historical construction verified, under the current profile.
    UnsupportedLegacy,
    /// The envelope signature verifies but the outer record is not what it signed.
    BindingMismatch,
}

impl AuthStatus {
    /// The name used in output.
    pub fn name(self) -> &'static str {
        match self {
            AuthStatus::Unsigned => "unsigned",
            AuthStatus::Valid => "valid",
            AuthStatus::Invalid => "invalid",
            AuthStatus::UnsupportedLegacy => "unsupported-legacy",
            AuthStatus::BindingMismatch => "binding-mismatch",
        }
    }
}

/// The DSSE binding result (JS-later `verify.ts` vocabulary, §c).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BindingStatus {
    /// The outer record is the predicate.
    Exact,
    /// Equal once the predicate's `aep/v0.3` is read as the outer `aep/v0.4`.
    LegacyNormalized,
    /// No envelope.
    NotApplicable,
    /// D8–D11 failed.
    Invalid,
}

/// What a `timestamp_proof` is worth (§d).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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

/// The authenticity axis of one record.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Authenticity {
    pub evaluated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<AuthStatus>,
    pub construction: Option<&'static str>,
    pub key_id: Option<String>,
    pub binding: Option<BindingStatus>,
    pub canon: Option<&'static str>,
    pub ed25519: &'static str,
    pub reason: Option<String>,
    /// Every failed check, not only the first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Not evaluated because the key id has no trusted key (a missing `--keys`, never a
    /// bad signature).
    #[serde(skip)]
    pub key_unknown: bool,
    /// What the `timestamp_proof` is worth, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<TimestampState>,
}

impl Default for Authenticity {
    fn default() -> Self {
        Authenticity {
            evaluated: true,
            status: None,
            construction: None,
            key_id: None,
            binding: None,
            canon: None,
            ed25519: "strict",
            reason: None,
            failures: Vec::new(),
            notes: Vec::new(),
            key_unknown: false,
            timestamp: None,
        }
    }
}

impl Authenticity {
    fn not_evaluated(mut self, reason: impl Into<String>) -> Self {
        self.evaluated = false;
        self.status = None;
        self.reason = Some(reason.into());
        self
    }

    fn key_unknown(mut self, key_id: &str) -> Self {
        self.key_unknown = true;
        self.not_evaluated(format!("unknown key {key_id:?}"))
    }

    fn with_status(mut self, status: AuthStatus, reason: Option<String>) -> Self {
        self.status = Some(status);
        self.reason = reason;
        self
    }
}

/// Strict Ed25519 verification of `sig` over `msg`.
fn verify_strict(key: &VerifyingKey, msg: &[u8], sig: &[u8; 64]) -> bool {
    key.verify_strict(msg, &Signature::from_bytes(sig)).is_ok()
}

/// DSSE pre-authentication encoding.
pub fn pae(payload_type: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {} {} ",
        payload_type.len(),
        payload_type,
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

const PLACEHOLDERS: [&str; 2] = ["UNSIGNED_PLACEHOLDER", "PLACEHOLDER"];

/// Verifies one record. `chain_bytes` are its C1 bytes without `signature` and
/// `dsse_envelope` (already computed for the chain hash; reused when they equal the S1
/// message). Findings about keys and encodings are appended to `findings`.
pub fn authenticate(
    record: &Record,
    chain_bytes: &[u8],
    keys: &Keyring,
    profile: Profile,
    findings: &mut Vec<Finding>,
) -> Authenticity {
    let auth = Authenticity::default();
    if let Some(env) = record.get("dsse_envelope") {
        return dsse(record, env, keys, profile, findings);
    }
    let sig_obj = match record.get("signature") {
        None | Some(Json::Null) => {
            return auth.with_status(AuthStatus::Unsigned, Some("no signature".into()));
        }
        Some(Json::Object(o)) => o,
        Some(other) => {
            return auth.with_status(
                AuthStatus::Invalid,
                Some(format!(
                    "signature is a {}, not an object",
                    other.type_name()
                )),
            );
        }
    };
    let sig_text = sig_obj.get("sig").and_then(Json::as_str);
    if let Some(p) = sig_text.filter(|s| PLACEHOLDERS.contains(s)) {
        let mut a = auth.with_status(
            AuthStatus::Unsigned,
            Some(format!("placeholder signature {p:?}")),
        );
        a.notes
            .push("built but never signed (build() placeholder)".into());
        return a;
    }
    let mut auth = auth;
    let key_id = sig_obj.get("key_id").and_then(Json::as_str);
    auth.key_id = key_id.map(str::to_string);
    match sig_obj.get("alg").and_then(Json::as_str) {
        Some("ed25519") => {}
        Some(other) => {
            return auth.with_status(
                AuthStatus::Invalid,
                Some(format!("unsupported alg {other:?}")),
            );
        }
        None => auth.notes.push("no alg given; ed25519 assumed".into()),
    }
    let Some(sig_text) = sig_text else {
        return auth.with_status(
            AuthStatus::Invalid,
            Some("signature has no sig string".into()),
        );
    };
    let Some(key_id) = key_id else {
        return auth.not_evaluated("signature has no key_id: no trusted key can be chosen");
    };
    let Some(key) = keys.get(key_id) else {
        return auth.key_unknown(key_id);
    };
    let sig = match decode_signature(sig_text, &mut auth.notes) {
        Ok(sig) => sig,
        Err(e) => {
            if let Some(sig) = without_whitespace(sig_text)
                && legacy_match(record, chain_bytes, true, |m| verify_strict(&key, m, &sig))
                    .is_some()
            {
                findings.push(sig_encoding(record, "verifies once whitespace is removed"));
            }
            return auth.with_status(AuthStatus::Invalid, Some(e));
        }
    };
    let hex = is_hex_signature(sig_text);
    if let Some(m) = legacy_match(record, chain_bytes, !hex, |m| verify_strict(&key, m, &sig)) {
        auth.construction = Some(m.construction.name());
        auth.canon = m.canon.map(Variant::name);
        auth.binding = Some(BindingStatus::NotApplicable);
        if let Some(v) = m.canon.filter(|v| *v != Variant::C1) {
            auth.notes
                .push(format!("verified only under canonicalisation {}", v.name()));
        }
        if record.get("timestamp_proof").is_some() {
            auth.notes.push(if m.proof_signed {
                "timestamp_proof is signed (passed through emitter options)".into()
            } else {
                "timestamp_proof is not covered by the signature (attached after signing)".into()
            });
            let signed = canonical_bytes_without(&record.json, SIGNED_EXCLUDED, Variant::C1);
            auth.timestamp = Some(timestamp_state(record.obj(), &signed));
        }
        return finish(auth, m.construction, profile);
    }
    auth.failures.push(format!(
        "signature does not verify under key {key_id:?} (tried {})",
        if hex { "S2" } else { "S1, S2" }
    ));
    if hex && legacy_match(record, chain_bytes, true, |m| verify_strict(&key, m, &sig)).is_some() {
        findings.push(sig_encoding(record, "S1 signature written in hex"));
    } else if legacy_match(record, chain_bytes, !hex, |m| verify_lenient(&key, m, &sig)).is_some() {
        findings.push(lenient_only(record, &key));
    }
    other_signer(keys, key_id, findings, record, |k| {
        legacy_match(record, chain_bytes, !hex, |m| verify_strict(k, m, &sig)).is_some()
    });
    auth.with_status(
        AuthStatus::Invalid,
        Some(format!("signature does not verify under key {key_id:?}")),
    )
}

/// The signature bytes of a `sig` that holds whitespace (line-wrapped or
/// newline-terminated base64), once the whitespace is removed. Such a spelling stays
/// invalid (b.4); this only tells a spelling problem from a forgery.
fn without_whitespace(text: &str) -> Option<[u8; 64]> {
    if !text.chars().any(char::is_whitespace) {
        return None;
    }
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    decode_base64(&compact).ok()?.bytes.try_into().ok()
}

/// F-SIG-ENCODING: a genuine signature rejected only for how it is written.
fn sig_encoding(record: &Record, spelling: &str) -> Finding {
    Finding {
        id: "F-SIG-ENCODING",
        severity: Severity::Info,
        run_id: record.run_id().map(str::to_string),
        action_ids: Vec::new(),
        message: format!(
            "signature rejected for its spelling, not forged: {spelling} (still invalid, as the encoding rules require)"
        ),
        evidence: serde_json::json!({ "spelling": spelling, "record": record.source.to_string() }),
    }
}

fn finish(auth: Authenticity, construction: Construction, profile: Profile) -> Authenticity {
    if profile == Profile::Current && construction.is_legacy() {
        let reason = format!(
            "{} verified, but only S4 is valid under the current profile",
            construction.name()
        );
        auth.with_status(AuthStatus::UnsupportedLegacy, Some(reason))
    } else {
        auth.with_status(AuthStatus::Valid, None)
    }
}

fn decode_signature(text: &str, notes: &mut Vec<String>) -> Result<[u8; 64], String> {
    let bytes = if is_hex_signature(text) {
        if text.bytes().any(|b| b.is_ascii_uppercase()) {
            notes.push("hex signature in upper case".into());
        }
        decode_hex(text).unwrap_or_default()
    } else {
        let d = decode_base64(text).map_err(|e| format!("signature: {e}"))?;
        notes.extend(d.notes.iter().map(|n| n.to_string()));
        d.bytes
    };
    bytes.as_slice().try_into().map_err(|_| {
        format!(
            "signature is {} bytes, Ed25519 signatures are 64",
            bytes.len()
        )
    })
}

/// A legacy construction that verified.
struct LegacyMatch {
    construction: Construction,
    canon: Option<Variant>,
    /// S1 verified only with the `timestamp_proof` included (b.1 exception).
    proof_signed: bool,
}

/// Tries each legacy message in turn with `verifies`: S1 when `try_s1` (C1 without the
/// timestamp proof, C1 with it, then C2/C3 when the record has divergence triggers), then
/// S2. Strict and lenient checks pass different `verifies` over the same messages.
fn legacy_match(
    record: &Record,
    chain_bytes: &[u8],
    try_s1: bool,
    verifies: impl Fn(&[u8]) -> bool,
) -> Option<LegacyMatch> {
    let s1 = |canon, proof_signed| LegacyMatch {
        construction: Construction::JsLegacyInline,
        canon: Some(canon),
        proof_signed,
    };
    if try_s1 {
        if record.get("timestamp_proof").is_some() {
            let unstamped = canonical_bytes_without(&record.json, SIGNED_EXCLUDED, Variant::C1);
            if verifies(&unstamped) {
                return Some(s1(Variant::C1, false));
            }
            // Chain bytes keep the proof: a proof passed through the emitter's options.
            if verifies(chain_bytes) {
                return Some(s1(Variant::C1, true));
            }
        } else if verifies(chain_bytes) {
            return Some(s1(Variant::C1, false));
        }
        if has_divergence_trigger(&record.json) {
            for v in [Variant::C2, Variant::C3] {
                if verifies(&canonical_bytes_without(&record.json, SIGNED_EXCLUDED, v)) {
                    return Some(s1(v, false));
                }
            }
        }
    }
    for slot in [SignatureSlot::NullInPlace, SignatureSlot::Removed] {
        if verifies(&Sha256::digest(stored_order_bytes(&record.json, slot))) {
            return Some(LegacyMatch {
                construction: Construction::RustGatewayLegacy,
                canon: None,
                proof_signed: false,
            });
        }
    }
    None
}

/// Cofactorless Ed25519 without the strict checks (small-order keys and R accepted).
fn verify_lenient(key: &VerifyingKey, msg: &[u8], sig: &[u8; 64]) -> bool {
    use ed25519_dalek::Verifier;
    key.verify(msg, &Signature::from_bytes(sig)).is_ok()
}

/// F-ED25519-LENIENT-ONLY: strict Ed25519 rejects the signature, and a lenient verifier
/// (small-order key or R, non-canonical encodings — what ZIP-215 verifiers such as the
/// reference emitter's may take) accepts it over the same message. Still invalid, and
/// named, because it is either an attack or a signer bug.
fn lenient_only(record: &Record, key: &VerifyingKey) -> Finding {
    Finding {
        id: "F-ED25519-LENIENT-ONLY",
        severity: Severity::High,
        run_id: record.run_id().map(str::to_string),
        action_ids: Vec::new(),
        message: "signature verifies only under lenient Ed25519 rules (small-order key or \
                  point, or a non-canonical encoding); strict RFC 8032 rejects it and so does aeplens"
            .into(),
        evidence: serde_json::json!({ "key_is_weak": key.is_weak() }),
    }
}

/// When the declared key fails, looks for a keyring key that does verify: a signature
/// "signed by K2, labelled K1" stays invalid but is named.
fn other_signer(
    keys: &Keyring,
    declared: &str,
    findings: &mut Vec<Finding>,
    record: &Record,
    verifies: impl Fn(&VerifyingKey) -> bool,
) {
    if let Some((other, _)) = keys.iter().find(|(id, k)| *id != declared && verifies(k)) {
        findings.push(Finding {
            id: "F-KEY-MISLABELLED",
            severity: Severity::High,
            run_id: record.run_id().map(str::to_string),
            action_ids: Vec::new(),
            message: format!("signed by key {other:?} but labelled {declared:?}"),
            evidence: serde_json::json!({ "declared_key_id": declared, "verifying_key_id": other }),
        });
    }
}

/// The LocalTimestamper check (verification.md §d.3–d.4): `proof` =
/// base64(SHA-256(B ‖ timestamp)). A proof without `logIndex` that recomputes is
/// local-consistent whatever its authority; one that does not is local-inconsistent when
/// it names the recipe's default authority, else opaque here — [`local_authorities`]
/// then settles it against the rest of the evidence.
fn timestamp_state(record: &Obj, signed_bytes: &[u8]) -> TimestampState {
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

/// DSSE records: the envelope signature (S4, then S3) and binding checks D1–D12.
fn dsse(
    record: &Record,
    env: &Json,
    keys: &Keyring,
    profile: Profile,
    findings: &mut Vec<Finding>,
) -> Authenticity {
    let mut auth = Authenticity::default();
    let Some(env) = env.as_object() else {
        return auth.with_status(
            AuthStatus::Invalid,
            Some("dsse_envelope is not an object".into()),
        );
    };
    let payload_type = env.get("payloadType").and_then(Json::as_str).unwrap_or("");
    let payload = env.get("payload").and_then(Json::as_str);
    let sigs = env
        .get("signatures")
        .and_then(Json::as_array)
        .unwrap_or(&[]);
    let mut fatal: Vec<String> = Vec::new();
    let mut binding: Vec<String> = Vec::new();
    if payload_type != IN_TOTO_PAYLOAD_TYPE {
        fatal.push(format!(
            "D1 payloadType is {payload_type:?}, not {IN_TOTO_PAYLOAD_TYPE:?}"
        ));
    }
    if sigs.len() != 1 {
        fatal.push(format!(
            "D2 envelope has {} signatures; AEP requires exactly one",
            sigs.len()
        ));
    }
    let env_sig = sigs.first();
    let env_keyid = env_sig.and_then(|s| s.get("keyid")).and_then(Json::as_str);
    let env_sig_text = env_sig.and_then(|s| s.get("sig")).and_then(Json::as_str);
    let outer_sig = record.get("signature").and_then(Json::as_object);
    let declared = outer_sig
        .and_then(|s| s.get("key_id"))
        .and_then(Json::as_str);
    if let (Some(d), Some(e)) = (declared, env_keyid)
        && d != e
    {
        auth.notes.push(format!(
            "D12 signature.key_id {d:?} differs from envelope keyid {e:?}"
        ));
        findings.push(Finding {
                id: "F-KEYID-MISMATCH",
                severity: Severity::Medium,
                run_id: record.run_id().map(str::to_string),
                action_ids: Vec::new(),
                message: format!("signature.key_id {d:?} differs from the envelope keyid {e:?}; the declared key decides"),
                evidence: serde_json::json!({ "signature.key_id": d, "envelope.keyid": e }),
            });
    }
    let Some(key_id) = declared.or(env_keyid) else {
        return auth.not_evaluated("no key id in signature or envelope");
    };
    auth.key_id = Some(key_id.to_string());
    let Some(key) = keys.get(key_id) else {
        return auth.key_unknown(key_id);
    };

    // D4: the payload decodes to a JSON object.
    let decoded = payload
        .ok_or_else(|| "D4 envelope has no payload string".to_string())
        .and_then(|p| {
            let d = decode_base64(p).map_err(|e| format!("D4 payload: {e}"))?;
            auth.notes
                .extend(d.notes.iter().map(|n| format!("payload: {n}")));
            Ok(d.bytes)
        });
    let statement = decoded.as_ref().map_err(Clone::clone).and_then(|bytes| {
        let text = std::str::from_utf8(bytes).map_err(|_| "D4 payload is not UTF-8".to_string())?;
        let json =
            parser::parse(text).map_err(|e| format!("D4 payload is not JSON: {}", e.message))?;
        if json.as_object().is_none() {
            return Err("D4 payload is not a JSON object".into());
        }
        Ok(json)
    });

    // D3: the signature, S4 then S3.
    let sig = env_sig_text
        .ok_or_else(|| "envelope signature has no sig".to_string())
        .and_then(|t| decode_signature(t, &mut auth.notes));
    let construction = match (&sig, &decoded) {
        (Ok(sig), Ok(body)) => dsse_match(&key, sig, payload_type, body, payload.unwrap_or("")),
        _ => None,
    };
    match (&sig, construction) {
        (Err(e), _) => {
            fatal.push(format!("D3 {e}"));
            if let (Some(sig), Ok(body)) = (env_sig_text.and_then(without_whitespace), &decoded)
                && dsse_match(&key, &sig, payload_type, body, payload.unwrap_or("")).is_some()
            {
                findings.push(sig_encoding(record, "verifies once whitespace is removed"));
            }
        }
        (Ok(_), None) => {
            fatal.push(format!(
                "D3 envelope signature does not verify under key {key_id:?} (tried S4, S3)"
            ));
            if let (Ok(sig), Ok(body)) = (&sig, &decoded) {
                other_signer(keys, key_id, findings, record, |k| {
                    dsse_match(k, sig, payload_type, body, payload.unwrap_or("")).is_some()
                });
            }
        }
        (Ok(_), Some(c)) => auth.construction = Some(c.name()),
    }

    match &statement {
        Err(e) => fatal.push(e.clone()),
        Ok(statement) => {
            statement_checks(record, statement, &mut fatal, &mut binding, &mut auth);
        }
    }

    // D11: the legacy signature mirrors the envelope signature.
    if let Some(outer) = outer_sig {
        if outer.get("alg").and_then(Json::as_str) != Some("ed25519") {
            binding.push("D11 signature.alg is not \"ed25519\"".into());
        }
        let mirror = outer.get("sig").and_then(Json::as_str);
        match (mirror, env_sig_text) {
            (Some(m), Some(e)) if m == e => {}
            (Some(m), Some(e)) => {
                let same_bytes = matches!((decode_base64(m), decode_base64(e)), (Ok(a), Ok(b)) if a.bytes == b.bytes);
                if same_bytes {
                    auth.notes
                        .push("D11 mirror signature spelled differently (same bytes)".into());
                } else {
                    binding.push("D11 signature.sig does not mirror the envelope signature".into());
                }
            }
            _ => binding.push("D11 signature.sig is missing".into()),
        }
    }

    if record.get("timestamp_proof").is_some() {
        let predicate = statement.as_ref().ok().and_then(|s| s.get("predicate"));
        auth.notes.push(
            if predicate.is_some_and(|p| p.get("timestamp_proof").is_some()) {
                "timestamp_proof is signed (inside the predicate: passed through emitter options)"
                    .into()
            } else {
                "timestamp_proof is not covered by the signature (attached after signing)".into()
            },
        );
        if let Some(pred) = predicate {
            let signed = canonical_bytes_without(pred, SIGNED_EXCLUDED, Variant::C1);
            auth.timestamp = Some(timestamp_state(record.obj(), &signed));
        }
    }

    let status = if !fatal.is_empty() {
        AuthStatus::Invalid
    } else if !binding.is_empty() {
        AuthStatus::BindingMismatch
    } else {
        AuthStatus::Valid
    };
    if !binding.is_empty() {
        auth.binding = Some(BindingStatus::Invalid);
    }
    let reason = fatal.first().or(binding.first()).cloned();
    auth.failures = fatal.into_iter().chain(binding).collect();
    match (status, construction) {
        (AuthStatus::Valid, Some(c)) => finish(auth, c, profile),
        _ => auth.with_status(status, reason),
    }
}

fn dsse_match(
    key: &VerifyingKey,
    sig: &[u8; 64],
    payload_type: &str,
    body: &[u8],
    payload_text: &str,
) -> Option<Construction> {
    if verify_strict(key, &pae(payload_type, body), sig) {
        Some(Construction::DsseDecodedBody)
    } else if verify_strict(key, &pae(payload_type, payload_text.as_bytes()), sig) {
        Some(Construction::DssePrefixB64)
    } else {
        None
    }
}

/// D5–D10 on the decoded statement.
fn statement_checks(
    record: &Record,
    statement: &Json,
    fatal: &mut Vec<String>,
    binding: &mut Vec<String>,
    auth: &mut Authenticity,
) {
    let st_type = statement.get("_type").and_then(Json::as_str).unwrap_or("");
    if st_type != STATEMENT_TYPE {
        fatal.push(format!(
            "D5 statement _type is {st_type:?}, not {STATEMENT_TYPE:?}"
        ));
    }
    let pred_type = statement
        .get("predicateType")
        .and_then(Json::as_str)
        .unwrap_or("");
    if pred_type != PREDICATE_TYPE {
        fatal.push(format!(
            "D6 predicateType is {pred_type:?}, not {PREDICATE_TYPE:?}"
        ));
    }
    let subjects = statement.get("subject").and_then(Json::as_array);
    let subject = match subjects {
        Some([one]) => Some(one),
        Some(list) => {
            fatal.push(format!(
                "D7 statement has {} subjects; exactly one required",
                list.len()
            ));
            None
        }
        None => {
            fatal.push("D7 statement subject is not an array".into());
            None
        }
    };
    let predicate = statement.get("predicate");
    if let Some(subject) = subject {
        let name = subject.get("name").and_then(Json::as_str);
        match (name, record.run_id().filter(|r| !r.is_empty())) {
            (Some(n), Some(run)) if n.strip_prefix("urn:wasmagent:run:") == Some(run) => {}
            (None, _) => binding
                .push("D8 subject has no name: the attestation is not bound to the run".into()),
            (Some(n), run) => binding.push(format!(
                "D8 subject name {n:?} is not \"urn:wasmagent:run:{}\"",
                run.unwrap_or("")
            )),
        }
        let digest = subject
            .get("digest")
            .and_then(|d| d.get("sha256"))
            .and_then(Json::as_str);
        if let Some(pred) = predicate {
            let mut variants = vec![Variant::C1];
            if has_divergence_trigger(pred) {
                variants.extend([Variant::C2, Variant::C3]);
            }
            let matched = variants
                .into_iter()
                .find(|v| Some(sha256_hex(&canonical_bytes(pred, *v)).as_str()) == digest);
            match matched {
                Some(v) => auth.canon = Some(v.name()),
                None => binding
                    .push("D9 subject digest is not the SHA-256 of the canonical predicate".into()),
            }
        }
    }
    let Some(pred) = predicate.filter(|p| p.as_object().is_some()) else {
        binding.push("D10 statement has no predicate object".into());
        return;
    };
    // D10: the outer proof is left out only when the predicate carries none (b.1).
    let excluded = if pred.get("timestamp_proof").is_some() {
        CHAIN_EXCLUDED
    } else {
        SIGNED_EXCLUDED
    };
    let outer = canonical_bytes_without(&record.json, excluded, Variant::C1);
    if canonical_bytes(pred, Variant::C1) == outer {
        auth.binding = Some(BindingStatus::Exact);
        return;
    }
    let pred_sv = pred.get("schema_version").and_then(Json::as_str);
    if pred_sv == Some("aep/v0.3") && record.schema_version() == Some("aep/v0.4") {
        let mut normalised = pred.clone();
        if let Json::Object(o) = &mut normalised {
            for (k, v) in o.members.iter_mut() {
                if k.bytes() == b"schema_version" {
                    *v = Json::String("aep/v0.4".into());
                }
            }
        }
        if canonical_bytes(&normalised, Variant::C1) == outer {
            auth.binding = Some(BindingStatus::LegacyNormalized);
            return;
        }
    }
    let mut paths = Vec::new();
    let outer_json = record.json.without(excluded);
    diff_paths(pred, &outer_json, "", &mut paths);
    paths.retain(|p| p != "schema_version" || pred_sv != Some("aep/v0.3"));
    binding.push(format!(
        "D10 outer record differs from the signed predicate at: {}",
        if paths.is_empty() {
            "schema_version".to_string()
        } else {
            paths.join(", ")
        }
    ));
}

/// JSON paths where two values differ canonically (at most 20).
pub fn diff_paths(a: &Json, b: &Json, path: &str, out: &mut Vec<String>) {
    if out.len() >= 20 {
        return;
    }
    match (a, b) {
        (Json::Object(x), Json::Object(y)) => {
            let xs = x.effective_members();
            let ys = y.effective_members();
            for (k, v) in &xs {
                let p = join(path, &k.lossy());
                match ys.iter().find(|(k2, _)| k2 == k) {
                    Some((_, w)) => diff_paths(v, w, &p, out),
                    None => out.push(format!("{p} (only in predicate)")),
                }
            }
            for (k, _) in &ys {
                if !xs.iter().any(|(k2, _)| k2 == k) {
                    out.push(format!("{} (only in outer record)", join(path, &k.lossy())));
                }
            }
        }
        (Json::Array(x), Json::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                diff_paths(v, w, &format!("{path}[{i}]"), out);
            }
        }
        _ => {
            if canonical_bytes(a, Variant::C1) != canonical_bytes(b, Variant::C1) {
                out.push(if path.is_empty() {
                    "(root)".into()
                } else {
                    path.to_string()
                });
            }
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
