//! DSSE envelopes (verification.md §b.3, §c): the envelope signature (S4, then S3) and
//! the binding checks D1–D12 between the envelope, its statement and the outer record.

use super::encoding::decode_base64;
use super::keys::Keyring;
use super::signature::{
    AuthStatus, Authenticity, BindingStatus, Construction, Profile, decode_signature, finish,
    other_signer, sig_encoding, verify_strict, without_whitespace,
};
use crate::canon::{
    CHAIN_EXCLUDED, SIGNED_EXCLUDED, Variant, canonical_bytes, canonical_bytes_without,
    has_divergence_trigger, sha256_hex,
};
use crate::load::parser;
use crate::model::Record;
use crate::model::finding::{Finding, Location, Severity};
use crate::model::json::Json;
use ed25519_dalek::VerifyingKey;

/// The DSSE payload type of an AEP attestation (D1).
pub const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// The in-toto statement type (D5).
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// The AEP predicate type, also for v0.5 records (D6).
pub const PREDICATE_TYPE: &str = "https://wasmagent.dev/attestations/aep/v0.4";

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

/// DSSE records: the envelope signature (S4, then S3) and binding checks D1–D12.
pub(super) fn dsse(
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
                evidence: serde_json::json!({ "signature.key_id": d, "envelope.keyid": e }).into(),
                locations: vec![
                    Location::at(&record.source, &["signature", "key_id"]),
                    Location::at(&record.source, &["dsse_envelope", "signatures", "0", "keyid"]),
                ],
                fingerprint: String::new(),
                chain: None,
                tool: None,
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
        (Ok(_), Some(c)) => auth.construction = Some(c),
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
            auth.judge_timestamp(record, &signed, keys, findings);
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
                Some(v) => auth.canon = Some(v),
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
    let outer = canonical_bytes_without(record.json(), excluded, Variant::C1);
    if canonical_bytes(pred, Variant::C1) == outer {
        auth.binding = Some(BindingStatus::Exact);
        return;
    }
    let pred_sv = pred.get("schema_version").and_then(Json::as_str);
    if pred_sv == Some("aep/v0.3") && record.schema_version() == Some("aep/v0.4") {
        let mut normalised = pred.clone();
        if let Json::Object(o) = &mut normalised {
            for (k, v) in &mut o.members {
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
    let outer_json = record.json().without(excluded);
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

/// One test per binding rule: a genuine S4 record, then each rule broken alone (re-signed
/// where the rule is about what is signed, so only that rule can fire).
#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::encoding::encode_base64;
    use crate::verify::sign::{sign_dsse, signing_key};
    use ed25519_dalek::{Signer, SigningKey};
    use serde_json::{Value, json};

    const KEY_ID: &str = "k1";

    fn key() -> SigningKey {
        signing_key(&[7; 32])
    }

    /// `k1`, and `k2` naming the same public key.
    fn keyring() -> Keyring {
        let public = encode_base64(key().verifying_key().as_bytes());
        let mut ring = Keyring::default();
        ring.add(KEY_ID, &public).unwrap();
        ring.add("k2", &public).unwrap();
        ring
    }

    /// A genuine v0.3 record signed under the current DSSE profile (S4).
    fn genuine() -> Value {
        let mut record = Json::from_serde(&json!({
            "schema_version": "aep/v0.3",
            "run_id": "run-1",
            "prev_record_hash": null,
            "actions": [{"action_id": "a1", "tool_name": "read_file", "timestamp_ms": 1}],
        }));
        sign_dsse(&mut record, KEY_ID, &key());
        serde_json::to_value(&record).unwrap()
    }

    /// Replaces the envelope's payload with `body` under `payload_type`, signed properly,
    /// with the outer signature mirroring it.
    fn resign_body(record: &mut Value, payload_type: &str, body: &[u8]) {
        let sig = encode_base64(&key().sign(&pae(payload_type, body)).to_bytes());
        let env = &mut record["dsse_envelope"];
        env["payloadType"] = payload_type.into();
        env["payload"] = encode_base64(body).into();
        env["signatures"][0]["sig"] = sig.clone().into();
        record["signature"]["sig"] = sig.into();
    }

    /// Edits the signed statement and re-signs it.
    fn resign(record: &mut Value, edit: impl FnOnce(&mut Value)) {
        let payload = record["dsse_envelope"]["payload"].as_str().unwrap();
        let mut statement: Value =
            serde_json::from_slice(&decode_base64(payload).unwrap().bytes).unwrap();
        edit(&mut statement);
        let body = canonical_bytes(&Json::from_serde(&statement), Variant::C1);
        resign_body(record, IN_TOTO_PAYLOAD_TYPE, &body);
    }

    fn verify(record: &Value) -> (Authenticity, Vec<Finding>) {
        let line = serde_json::to_string(record).unwrap();
        let input = crate::load::parse_input("t.ndjson".into(), line.as_bytes());
        let record = &input.records[0];
        let mut findings = Vec::new();
        let env = record.get("dsse_envelope").unwrap();
        let auth = dsse(record, env, &keyring(), Profile::Forensic, &mut findings);
        (auth, findings)
    }

    /// The status, and that exactly one failure names `rule`.
    fn fails(record: &Value, rule: &str) -> AuthStatus {
        let (auth, _) = verify(record);
        assert!(
            auth.failures.iter().any(|f| f.starts_with(rule)),
            "{rule} not among {:?}",
            auth.failures
        );
        auth.status.unwrap()
    }

    #[test]
    fn genuine_s4_is_valid_and_exactly_bound() {
        let (auth, findings) = verify(&genuine());
        assert_eq!(auth.status, Some(AuthStatus::Valid), "{:?}", auth.failures);
        assert_eq!(auth.construction, Some(Construction::DsseDecodedBody));
        assert_eq!(auth.binding, Some(BindingStatus::Exact));
        assert!(auth.failures.is_empty() && findings.is_empty());
    }

    #[test]
    fn d1_payload_type_must_be_in_toto() {
        let mut r = genuine();
        let body = decode_base64(r["dsse_envelope"]["payload"].as_str().unwrap()).unwrap();
        resign_body(&mut r, "application/json", &body.bytes);
        assert_eq!(fails(&r, "D1 payloadType"), AuthStatus::Invalid);
    }

    #[test]
    fn d2_exactly_one_envelope_signature() {
        let mut r = genuine();
        let second = r["dsse_envelope"]["signatures"][0].clone();
        r["dsse_envelope"]["signatures"]
            .as_array_mut()
            .unwrap()
            .push(second);
        assert_eq!(
            fails(&r, "D2 envelope has 2 signatures"),
            AuthStatus::Invalid
        );
    }

    #[test]
    fn d3_the_envelope_signature_verifies() {
        let mut r = genuine();
        let other = encode_base64(&key().sign(b"something else").to_bytes());
        r["dsse_envelope"]["signatures"][0]["sig"] = other.clone().into();
        r["signature"]["sig"] = other.into();
        assert_eq!(
            fails(&r, "D3 envelope signature does not verify"),
            AuthStatus::Invalid
        );
    }

    #[test]
    fn d4_the_payload_is_a_json_object() {
        let mut r = genuine();
        resign_body(&mut r, IN_TOTO_PAYLOAD_TYPE, b"not json");
        assert_eq!(fails(&r, "D4 payload is not JSON"), AuthStatus::Invalid);
        resign_body(&mut r, IN_TOTO_PAYLOAD_TYPE, b"[1]");
        assert_eq!(
            fails(&r, "D4 payload is not a JSON object"),
            AuthStatus::Invalid
        );
    }

    #[test]
    fn d5_statement_type() {
        let mut r = genuine();
        resign(&mut r, |s| {
            s["_type"] = "https://in-toto.io/Statement/v0.1".into();
        });
        assert_eq!(fails(&r, "D5 statement _type"), AuthStatus::Invalid);
    }

    #[test]
    fn d6_predicate_type() {
        let mut r = genuine();
        resign(&mut r, |s| {
            s["predicateType"] = "https://example.com/other".into();
        });
        assert_eq!(fails(&r, "D6 predicateType"), AuthStatus::Invalid);
    }

    #[test]
    fn d7_exactly_one_subject() {
        let mut r = genuine();
        resign(&mut r, |s| {
            let one = s["subject"][0].clone();
            s["subject"].as_array_mut().unwrap().push(one);
        });
        assert_eq!(
            fails(&r, "D7 statement has 2 subjects"),
            AuthStatus::Invalid
        );
    }

    #[test]
    fn d8_subject_names_the_run() {
        let mut r = genuine();
        resign(&mut r, |s| {
            s["subject"][0]["name"] = "urn:wasmagent:run:run-2".into();
        });
        assert_eq!(fails(&r, "D8 subject name"), AuthStatus::BindingMismatch);
    }

    #[test]
    fn d9_subject_digest_is_the_canonical_predicate() {
        let mut r = genuine();
        resign(&mut r, |s| {
            s["subject"][0]["digest"]["sha256"] = "00".repeat(32).into();
        });
        assert_eq!(fails(&r, "D9 subject digest"), AuthStatus::BindingMismatch);
    }

    #[test]
    fn d10_outer_record_equals_the_signed_predicate() {
        let mut r = genuine();
        r["actions"][0]["tool_name"] = "delete_file".into();
        assert_eq!(
            fails(&r, "D10 outer record differs"),
            AuthStatus::BindingMismatch
        );
        let (auth, _) = verify(&r);
        assert!(
            auth.failures
                .iter()
                .any(|f| f.contains("actions[0].tool_name")),
            "{:?}",
            auth.failures
        );
        let mut r = genuine();
        resign(&mut r, |s| {
            s.as_object_mut().unwrap().remove("predicate");
        });
        assert_eq!(
            fails(&r, "D10 statement has no predicate"),
            AuthStatus::BindingMismatch
        );
    }

    #[test]
    fn d11_the_outer_signature_mirrors_the_envelope() {
        let mut r = genuine();
        r["signature"]["sig"] = encode_base64(&key().sign(b"x").to_bytes()).into();
        assert_eq!(
            fails(&r, "D11 signature.sig does not mirror"),
            AuthStatus::BindingMismatch
        );
        let mut r = genuine();
        r["signature"]["alg"] = "rsa".into();
        assert_eq!(fails(&r, "D11 signature.alg"), AuthStatus::BindingMismatch);
        // The same bytes spelled URL-safe and unpadded: a note, not a mismatch.
        let mut r = genuine();
        let sig = r["signature"]["sig"].as_str().unwrap().to_string();
        let url: String = sig
            .trim_end_matches('=')
            .replace('+', "-")
            .replace('/', "_");
        if url != sig {
            r["signature"]["sig"] = url.into();
            let (auth, _) = verify(&r);
            assert_eq!(auth.status, Some(AuthStatus::Valid), "{:?}", auth.failures);
            assert!(
                auth.notes
                    .iter()
                    .any(|n| n.starts_with("D11 mirror signature spelled differently"))
            );
        }
    }

    #[test]
    fn d12_declared_key_id_differs_from_the_envelope_keyid() {
        let mut r = genuine();
        r["signature"]["key_id"] = "k2".into();
        let (auth, findings) = verify(&r);
        // The declared key decides (k2 is the same key here, so the signature verifies).
        assert_eq!(auth.key_id.as_deref(), Some("k2"));
        assert_eq!(auth.status, Some(AuthStatus::Valid), "{:?}", auth.failures);
        assert!(
            auth.notes
                .iter()
                .any(|n| n.starts_with("D12 signature.key_id \"k2\""))
        );
        assert!(findings.iter().any(|f| f.id == "F-KEYID-MISMATCH"));
        assert!(
            verify(&genuine())
                .1
                .iter()
                .all(|f| f.id != "F-KEYID-MISMATCH")
        );
    }
}
