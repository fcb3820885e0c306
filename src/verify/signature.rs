//! Authenticity (verification.md §b, §h): which of the four signing constructions a
//! signature satisfies; DSSE envelopes are checked in [`super::dsse`], timestamp proofs in
//! [`super::timestamp`].
//! Ed25519 is always strict (`verify_strict`: small-order keys and R rejected, S < L).

use super::dsse::dsse;
use super::encoding::{decode_base64, decode_hex, is_hex_signature};
use super::keys::Keyring;
pub use super::timestamp::TimestampState;
use super::timestamp::{timestamp_authority, timestamp_state};
use super::tsa::Token;
use crate::canon::{
    SIGNED_EXCLUDED, SignatureSlot, Variant, canonical_bytes_without, has_divergence_trigger,
    stored_order_bytes,
};
use crate::model::Record;
use crate::model::finding::{Finding, Location, Severity};
use crate::model::json::Json;
use ed25519_dalek::{Signature, VerifyingKey};
use serde::{Deserialize, Serialize};

/// The four signing constructions (verification.md §b), written by [`Construction::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub enum Construction {
    /// S1: Ed25519 over C1(record − signature − dsse_envelope − timestamp_proof).
    #[serde(rename = "js-legacy-inline")]
    JsLegacyInline,
    /// S2: Ed25519 over SHA-256 of the Rust gateway's struct-order JSON.
    #[serde(rename = "rust-gateway-legacy-sha256")]
    RustGatewayLegacy,
    /// S3: DSSE with PAE over the base64 payload *string* (pre-fix).
    #[serde(rename = "dsse-prefix-b64")]
    DssePrefixB64,
    /// S4: DSSE with PAE over the decoded payload bytes (current profile).
    #[serde(rename = "aep-dsse-ed25519-decoded-body-v1")]
    DsseDecodedBody,
}

impl std::fmt::Display for Construction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which Ed25519 rules a verdict was made under: always RFC 8032 strict (written `strict`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub enum Ed25519Rules {
    #[default]
    #[serde(rename = "strict")]
    Strict,
}

impl Ed25519Rules {
    /// The name written in output.
    pub fn name(self) -> &'static str {
        "strict"
    }
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
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

/// The authenticity axis of one record.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub struct Authenticity {
    pub evaluated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<AuthStatus>,
    pub construction: Option<Construction>,
    pub key_id: Option<String>,
    pub binding: Option<BindingStatus>,
    pub canon: Option<Variant>,
    pub ed25519: Ed25519Rules,
    pub reason: Option<String>,
    /// Every failed check, not only the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Not evaluated because the key id has no trusted key (a missing `--keys`, never a
    /// bad signature).
    #[serde(skip)]
    pub key_unknown: bool,
    /// What the `timestamp_proof` is worth, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<TimestampState>,
    /// What an RFC 3161 token says (its TSA, `genTime`, accuracy, and why it is worth
    /// what `timestamp` says), when the proof is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_token: Option<Box<Token>>,
    /// The proof's `authority`, for a proof that is not a token and has no `logIndex`:
    /// what d.4 judges across the evidence. Kept by the index beside the verdicts; not
    /// printed.
    #[serde(skip)]
    pub timestamp_authority: Option<compact_str::CompactString>,
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
            ed25519: Ed25519Rules::Strict,
            reason: None,
            failures: Vec::new(),
            notes: Vec::new(),
            key_unknown: false,
            timestamp: None,
            timestamp_token: None,
            timestamp_authority: None,
        }
    }
}

impl Authenticity {
    /// Sets `timestamp` (and `timestamp_token`) from the record's proof over its signed
    /// bytes `signed`.
    pub(super) fn judge_timestamp(
        &mut self,
        record: &Record,
        signed: &[u8],
        keys: &Keyring,
        findings: &mut Vec<Finding>,
    ) {
        let judged = timestamp_state(record, signed, keys, findings);
        if judged.token.is_none() {
            self.timestamp_authority = timestamp_authority(record.obj()).map(Into::into);
        }
        self.timestamp = Some(judged.state);
        self.timestamp_token = judged.token;
    }

    /// What the record's timestamp proof says about its time, in words: `proven by TSA
    /// at genTime (±accuracy)` for a verified RFC 3161 token only, `claimed` with why
    /// for every other proof; `None` without a proof.
    pub fn time_words(&self) -> Option<String> {
        let proven = self.proves_time();
        let state = self.timestamp?;
        let token = self.timestamp_token.as_deref();
        Some(match token {
            Some(token) if proven => token.proven(),
            Some(token) => format!("claimed ({}: {})", state.name(), token.reason),
            None => format!("claimed ({})", state.name()),
        })
    }

    /// True when the record's time is proven (a verified RFC 3161 token).
    pub fn proves_time(&self) -> bool {
        self.timestamp.is_some_and(TimestampState::proves_time)
    }

    pub(super) fn not_evaluated(mut self, reason: impl Into<String>) -> Self {
        self.evaluated = false;
        self.status = None;
        self.reason = Some(reason.into());
        self
    }

    pub(super) fn key_unknown(mut self, key_id: &str) -> Self {
        self.key_unknown = true;
        self.not_evaluated(format!("unknown key {key_id:?}"))
    }

    pub(super) fn with_status(mut self, status: AuthStatus, reason: Option<String>) -> Self {
        self.status = Some(status);
        self.reason = reason;
        self
    }
}

/// Strict Ed25519 verification of `sig` over `msg`.
pub(super) fn verify_strict(key: &VerifyingKey, msg: &[u8], sig: &[u8; 64]) -> bool {
    key.verify_strict(msg, &Signature::from_bytes(sig)).is_ok()
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
    if let Some(mut m) = legacy_match(record, chain_bytes, !hex, |m| verify_strict(&key, m, &sig)) {
        auth.construction = Some(m.construction);
        auth.canon = m.canon;
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
            let signed = (m.unstamped.take()).unwrap_or_else(|| {
                canonical_bytes_without(record.json(), SIGNED_EXCLUDED, Variant::C1)
            });
            auth.judge_timestamp(record, &signed, keys, findings);
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
pub(super) fn without_whitespace(text: &str) -> Option<[u8; 64]> {
    if !text.chars().any(char::is_whitespace) {
        return None;
    }
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    decode_base64(&compact).ok()?.bytes.try_into().ok()
}

/// The signature that was checked: the envelope's for a DSSE record, else `signature.sig`.
fn signature_location(record: &Record) -> Location {
    if record.get("dsse_envelope").is_some() {
        Location::at(&record.source, &["dsse_envelope", "signatures", "0", "sig"])
    } else {
        Location::at(&record.source, &["signature", "sig"])
    }
}

/// F-SIG-ENCODING: a genuine signature rejected only for how it is written.
pub(super) fn sig_encoding(record: &Record, spelling: &str) -> Finding {
    Finding {
        id: "F-SIG-ENCODING",
        severity: Severity::Info,
        run_id: record.run_id().map(str::to_string),
        action_ids: Vec::new(),
        message: format!(
            "signature rejected for its spelling, not forged: {spelling} (still invalid, as the encoding rules require)"
        ),
        evidence: serde_json::json!({ "spelling": spelling, "record": record.source.to_string() })
            .into(),
        locations: vec![signature_location(record)],
        fingerprint: String::new(),
        chain: None,
        tool: None,
    }
}

pub(super) fn finish(
    auth: Authenticity,
    construction: Construction,
    profile: Profile,
) -> Authenticity {
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

pub(super) fn decode_signature(text: &str, notes: &mut Vec<String>) -> Result<[u8; 64], String> {
    let bytes = if is_hex_signature(text) {
        if text.bytes().any(|b| b.is_ascii_uppercase()) {
            notes.push("hex signature in upper case".into());
        }
        decode_hex(text).unwrap_or_default()
    } else {
        let d = decode_base64(text).map_err(|e| format!("signature: {e}"))?;
        notes.extend(d.notes.iter().map(std::string::ToString::to_string));
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
    /// The record's C1 bytes without `timestamp_proof` (what a proof stamps), when they
    /// were made to try S1.
    unstamped: Option<Vec<u8>>,
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
    let s1 = |canon, proof_signed, unstamped| LegacyMatch {
        construction: Construction::JsLegacyInline,
        canon: Some(canon),
        proof_signed,
        unstamped,
    };
    if try_s1 {
        if record.get("timestamp_proof").is_some() {
            let unstamped = canonical_bytes_without(record.json(), SIGNED_EXCLUDED, Variant::C1);
            if verifies(&unstamped) {
                return Some(s1(Variant::C1, false, Some(unstamped)));
            }
            // Chain bytes keep the proof: a proof passed through the emitter's options.
            if verifies(chain_bytes) {
                return Some(s1(Variant::C1, true, Some(unstamped)));
            }
        } else if verifies(chain_bytes) {
            return Some(s1(Variant::C1, false, None));
        }
        if has_divergence_trigger(record.json()) {
            for v in [Variant::C2, Variant::C3] {
                if verifies(&canonical_bytes_without(record.json(), SIGNED_EXCLUDED, v)) {
                    return Some(s1(v, false, None));
                }
            }
        }
    }
    for slot in [SignatureSlot::NullInPlace, SignatureSlot::Removed] {
        if verifies(
            &crate::model::sha256::Sha256Digest::of(&stored_order_bytes(record.json(), slot)).0,
        ) {
            return Some(LegacyMatch {
                construction: Construction::RustGatewayLegacy,
                canon: None,
                proof_signed: false,
                unstamped: None,
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
        evidence: serde_json::json!({ "key_is_weak": key.is_weak() }).into(),
        locations: vec![signature_location(record)],
        fingerprint: String::new(),
        chain: None,
        tool: None,
    }
}

/// When the declared key fails, looks for a keyring key that does verify: a signature
/// "signed by K2, labelled K1" stays invalid but is named.
pub(super) fn other_signer(
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
            evidence: serde_json::json!({ "declared_key_id": declared, "verifying_key_id": other })
                .into(),
            locations: vec![Location::at(&record.source, &["signature", "key_id"])],
            fingerprint: String::new(),
            chain: None,
            tool: None,
        });
    }
}
