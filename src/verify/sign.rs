//! Signing, for generators and tests: the inverse of the constructions in [`super::signature`],
//! built on the same canonical bytes, so what aeplens signs it can verify.

use super::dsse::{IN_TOTO_PAYLOAD_TYPE, PREDICATE_TYPE, pae};
use super::encoding::encode_base64;
use crate::canon::{
    SIGNED_EXCLUDED, Variant, canonical_bytes, canonical_bytes_without, canonical_sha256,
    sha256_hex,
};
use crate::model::json::{JStr, Json, Obj};
use ed25519_dalek::{Signer, SigningKey};

/// A signing key from a 32-byte seed (RFC 8032).
pub fn signing_key(seed: &[u8; 32]) -> SigningKey {
    SigningKey::from_bytes(seed)
}

fn set(obj: &mut Obj, key: &str, value: Json) {
    obj.members.retain(|(k, _)| k.bytes() != key.as_bytes());
    obj.members.push((JStr::from(key), value));
}

fn signature_object(key_id: &str, sig: &[u8]) -> Json {
    Json::Object(Obj {
        members: vec![
            ("alg".into(), Json::String("ed25519".into())),
            ("key_id".into(), Json::String(key_id.into())),
            (
                "sig".into(),
                Json::String(encode_base64(sig).as_str().into()),
            ),
        ],
        has_duplicates: false,
    })
}

/// Sets `prev_record_hash` to the chain hash of `previous` (or null for a genesis record).
pub fn link_to(record: &mut Json, previous: Option<&Json>) {
    if let Json::Object(o) = record {
        let link = previous.map_or(Json::Null, |p| {
            Json::String(canonical_sha256(p).to_string().as_str().into())
        });
        set(o, "prev_record_hash", link);
    }
}

/// Signs with the JS legacy inline construction (S1): Ed25519 over
/// C1(record − signature − dsse_envelope − timestamp_proof).
pub fn sign_legacy(record: &mut Json, key_id: &str, key: &SigningKey) {
    let message = canonical_bytes_without(record, SIGNED_EXCLUDED, Variant::C1);
    let sig = key.sign(&message).to_bytes();
    if let Json::Object(o) = record {
        set(o, "signature", signature_object(key_id, &sig));
    }
}

/// Signs with the current DSSE profile (S4): the predicate is the record as it stands,
/// the statement is written canonically, PAE covers the decoded payload bytes, and
/// `signature` mirrors the envelope signature.
pub fn sign_dsse(record: &mut Json, key_id: &str, key: &SigningKey) {
    let predicate = record.without(SIGNED_EXCLUDED);
    let run_id = record
        .get("run_id")
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_string();
    let statement = serde_json::json!({
        "_type": super::dsse::STATEMENT_TYPE,
        "subject": [{
            "name": format!("urn:wasmagent:run:{run_id}"),
            "digest": { "sha256": sha256_hex(&canonical_bytes(&predicate, Variant::C1)) }
        }],
        "predicateType": PREDICATE_TYPE,
    });
    let mut statement = Json::from_serde(&statement);
    if let Json::Object(o) = &mut statement {
        set(o, "predicate", predicate);
    }
    let body = canonical_bytes(&statement, Variant::C1);
    let sig = key.sign(&pae(IN_TOTO_PAYLOAD_TYPE, &body)).to_bytes();
    let envelope = serde_json::json!({
        "payloadType": IN_TOTO_PAYLOAD_TYPE,
        "payload": encode_base64(&body),
        "signatures": [{ "keyid": key_id, "sig": encode_base64(&sig) }],
    });
    if let Json::Object(o) = record {
        set(o, "dsse_envelope", Json::from_serde(&envelope));
        set(o, "signature", signature_object(key_id, &sig));
    }
}

/// One line of NDJSON for a record (canonical member order).
pub fn to_line(record: &Json) -> String {
    String::from_utf8(canonical_bytes(record, Variant::C2)).unwrap_or_default()
}
