//! Authenticity (verification.md §b–d, §h): which of the four signing constructions a
//! signature satisfies, the DSSE binding checks D1–D12, and the timestamp proof.
//! Ed25519 is always strict (`verify_strict`: small-order keys and R rejected, S < L).

use super::encoding::{decode_base64, decode_hex, encode_base64, is_hex_signature};
use super::keys::Keyring;
use crate::canon::{
    SIGNED_EXCLUDED, SignatureSlot, Variant, canonical_bytes, canonical_bytes_without,
    has_divergence_trigger, sha256_hex, stored_order_bytes,
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

/// The authenticity axis of one record.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Authenticity {
    pub evaluated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
    pub construction: Option<&'static str>,
    pub key_id: Option<String>,
    pub binding: Option<&'static str>,
    pub canon: Option<&'static str>,
    pub ed25519: &'static str,
    pub reason: Option<String>,
    /// Every failed check, not only the first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// `local-consistent`, `local-inconsistent` or `opaque (not verified)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<&'static str>,
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

    fn with_status(mut self, status: &'static str, reason: Option<String>) -> Self {
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
            return auth.with_status("unsigned", Some("no signature".into()));
        }
        Some(Json::Object(o)) => o,
        Some(other) => {
            return auth.with_status(
                "invalid",
                Some(format!(
                    "signature is a {}, not an object",
                    other.type_name()
                )),
            );
        }
    };
    let sig_text = sig_obj.get("sig").and_then(Json::as_str);
    if let Some(p) = sig_text.filter(|s| PLACEHOLDERS.contains(s)) {
        let mut a = auth.with_status("unsigned", Some(format!("placeholder signature {p:?}")));
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
            return auth.with_status("invalid", Some(format!("unsupported alg {other:?}")));
        }
        None => auth.notes.push("no alg given; ed25519 assumed".into()),
    }
    let Some(sig_text) = sig_text else {
        return auth.with_status("invalid", Some("signature has no sig string".into()));
    };
    let Some(key_id) = key_id else {
        return auth.not_evaluated("signature has no key_id: no trusted key can be chosen");
    };
    let Some(key) = keys.get(key_id) else {
        return auth.not_evaluated(format!("unknown key {key_id:?}"));
    };
    let sig = match decode_signature(sig_text, &mut auth.notes) {
        Ok(sig) => sig,
        Err(e) => return auth.with_status("invalid", Some(e)),
    };
    if let Some((construction, canon)) = legacy_match(record, chain_bytes, &key, &sig, sig_text) {
        auth.construction = Some(construction.name());
        auth.canon = canon.map(Variant::name);
        auth.binding = Some("not-applicable");
        if let Some(v) = canon.filter(|v| *v != Variant::C1) {
            auth.notes
                .push(format!("verified only under canonicalisation {}", v.name()));
        }
        if record.get("timestamp_proof").is_some() {
            auth.notes.push(
                "timestamp_proof is not covered by the signature (attached after signing)".into(),
            );
            let signed = canonical_bytes_without(&record.json, SIGNED_EXCLUDED, Variant::C1);
            auth.timestamp = timestamp_state(record.obj(), &signed);
        }
        return finish(auth, construction, profile);
    }
    auth.failures.push(format!(
        "signature does not verify under key {key_id:?} (tried S1, S2)"
    ));
    lenient_only(record, &key, &sig, findings);
    other_signer(keys, key_id, findings, record, |k| {
        legacy_match(record, chain_bytes, k, &sig, sig_text).is_some()
    });
    auth.with_status(
        "invalid",
        Some(format!("signature does not verify under key {key_id:?}")),
    )
}

fn finish(auth: Authenticity, construction: Construction, profile: Profile) -> Authenticity {
    if profile == Profile::Current && construction.is_legacy() {
        let reason = format!(
            "{} verified, but only S4 is valid under the current profile",
            construction.name()
        );
        auth.with_status("unsupported-legacy", Some(reason))
    } else {
        auth.with_status("valid", None)
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

/// Tries S1 (C1, then C2/C3 when the record has divergence triggers) and S2.
fn legacy_match(
    record: &Record,
    chain_bytes: &[u8],
    key: &VerifyingKey,
    sig: &[u8; 64],
    sig_text: &str,
) -> Option<(Construction, Option<Variant>)> {
    if !is_hex_signature(sig_text) {
        let has_proof = record.get("timestamp_proof").is_some();
        // Without a timestamp proof the S1 message is exactly the chain bytes.
        let c1: std::borrow::Cow<'_, [u8]> = if has_proof {
            canonical_bytes_without(&record.json, SIGNED_EXCLUDED, Variant::C1).into()
        } else {
            chain_bytes.into()
        };
        if verify_strict(key, &c1, sig) {
            return Some((Construction::JsLegacyInline, Some(Variant::C1)));
        }
        if has_divergence_trigger(&record.json) {
            for v in [Variant::C2, Variant::C3] {
                let bytes = canonical_bytes_without(&record.json, SIGNED_EXCLUDED, v);
                if verify_strict(key, &bytes, sig) {
                    return Some((Construction::JsLegacyInline, Some(v)));
                }
            }
        }
    }
    for slot in [SignatureSlot::NullInPlace, SignatureSlot::Removed] {
        let digest = Sha256::digest(stored_order_bytes(&record.json, slot));
        if verify_strict(key, &digest, sig) {
            return Some((Construction::RustGatewayLegacy, None));
        }
    }
    None
}

/// A signature strict Ed25519 rejects but a lenient verifier accepts (small-order key or
/// R, non-canonical encodings — what ZIP-215 verifiers such as the reference emitter's
/// may take): still invalid here, and named, because it is either an attack or a
/// signer bug.
fn lenient_only(record: &Record, key: &VerifyingKey, sig: &[u8; 64], findings: &mut Vec<Finding>) {
    use ed25519_dalek::Verifier;
    let message = canonical_bytes_without(&record.json, SIGNED_EXCLUDED, Variant::C1);
    if key.verify(&message, &Signature::from_bytes(sig)).is_ok() {
        findings.push(Finding {
            id: "F-ED25519-LENIENT-ONLY",
            severity: Severity::High,
            run_id: record.run_id().map(str::to_string),
            action_ids: Vec::new(),
            message: "signature verifies only under lenient Ed25519 rules (small-order key or \
                      point, or a non-canonical encoding); strict RFC 8032 rejects it and so does aeplens"
                .into(),
            evidence: serde_json::json!({ "key_is_weak": key.is_weak() }),
        });
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

/// The LocalTimestamper check (verification.md §d): `proof` = base64(SHA-256(B ‖ timestamp)).
fn timestamp_state(record: &Obj, signed_bytes: &[u8]) -> Option<&'static str> {
    let proof = record.get("timestamp_proof")?;
    let stamp = proof.get("timestamp").and_then(Json::as_str).unwrap_or("");
    let claimed = proof.get("proof").and_then(Json::as_str).unwrap_or("");
    let authority = proof.get("authority").and_then(Json::as_str).unwrap_or("");
    let mut h = Sha256::new();
    h.update(signed_bytes);
    h.update(stamp.as_bytes());
    if encode_base64(&h.finalize()) == claimed {
        Some("local-consistent")
    } else if authority.contains("local") || authority.contains("dev") {
        Some("local-inconsistent")
    } else {
        Some("opaque (not verified)")
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
        return auth.with_status("invalid", Some("dsse_envelope is not an object".into()));
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
        return auth.not_evaluated(format!("unknown key {key_id:?}"));
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
        (Err(e), _) => fatal.push(format!("D3 {e}")),
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
        auth.notes.push(
            "timestamp_proof is not covered by the signature (attached after signing)".into(),
        );
        if let Ok(statement) = &statement
            && let Some(pred) = statement.get("predicate")
        {
            auth.timestamp = timestamp_state(record.obj(), &canonical_bytes(pred, Variant::C1));
        }
    }

    let status = if !fatal.is_empty() {
        "invalid"
    } else if !binding.is_empty() {
        "binding-mismatch"
    } else {
        "valid"
    };
    if !binding.is_empty() {
        auth.binding = Some("invalid");
    }
    let reason = fatal.first().or(binding.first()).cloned();
    auth.failures = fatal.into_iter().chain(binding).collect();
    match (status, construction) {
        ("valid", Some(c)) => finish(auth, c, profile),
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
    let outer = canonical_bytes_without(&record.json, SIGNED_EXCLUDED, Variant::C1);
    if canonical_bytes(pred, Variant::C1) == outer {
        auth.binding = Some("exact");
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
            auth.binding = Some("legacy-normalized");
            return;
        }
    }
    let mut paths = Vec::new();
    let outer_json = record.json.without(SIGNED_EXCLUDED);
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
