//! Stamps every record of a store with a real RFC 3161 authority, for the token benchmark.
//!
//! ```text
//! tests/tsa/make_authority.sh AUTH 0000000000000000000000000000000000000000000000000000000000000000
//! cargo run --release --example stamp_store -- IN.ndjson OUT AUTH [TSA]
//! ```
//! Reads IN.ndjson (from `gen_store`, signed with its bench key) and writes two stores with
//! the same records, each re-signed S1 and re-linked to its predecessor: `OUT.plain.ndjson`
//! without a proof and `OUT.stamped.ndjson` where each record carries, as the emitter
//! attaches it after signing, the token `openssl ts -reply` of the authority in AUTH (TSA:
//! `ec`, the default, or `rsa`) gives for the record's signed bytes. A record is stamped
//! once its predecessor is (its link covers the proof); records of different chains are
//! stamped on every core, each worker with its own serial file.

#[path = "support/authority.rs"]
mod authority;

use aeplens::canon::{CHAIN_EXCLUDED, SIGNED_EXCLUDED, Variant, canonical_bytes_without};
use aeplens::model::json::Json;
use aeplens::verify::sign::{sign_legacy, signing_key, to_line};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, out, authority, rest @ ..] = args.as_slice() else {
        eprintln!("usage: stamp_store IN.ndjson OUT AUTHORITY_DIR [ec|rsa]");
        std::process::exit(2);
    };
    let tsa = rest.first().map_or("ec", String::as_str);
    let dir = PathBuf::from(authority);
    let text = std::fs::read_to_string(input).expect("read the store");
    let mut records: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a record a line"))
        .collect();
    // Each record's predecessor (by its old chain hash), and its depth on its chain.
    let old_hash: Vec<String> = records.iter().map(chain_hash).collect();
    let position: HashMap<&str, usize> = old_hash
        .iter()
        .enumerate()
        .map(|(i, h)| (h.as_str(), i))
        .collect();
    let predecessor: Vec<Option<usize>> = (records.iter())
        .map(|r| (r["prev_record_hash"].as_str()).and_then(|h| position.get(h).copied()))
        .collect();
    let mut depth = vec![0usize; records.len()];
    for i in 0..records.len() {
        depth[i] = predecessor[i].map_or(0, |p| depth[p] + 1);
    }
    let seed: [u8; 32] = Sha256::digest(b"aeplens-bench-key").into();
    let key = signing_key(&seed);
    let workers = rayon::current_num_threads();
    let configs: Vec<PathBuf> = (0..workers).map(|w| worker_config(&dir, tsa, w)).collect();
    let n = records.len();
    let (mut plain, mut plain_hash, mut new_hash) = (
        vec![String::new(); n],
        vec![String::new(); n],
        vec![String::new(); n],
    );
    let levels = depth.iter().max().map_or(0, |d| d + 1);
    for level in 0..levels {
        let at: Vec<usize> = (0..records.len()).filter(|&i| depth[i] == level).collect();
        let done: Vec<(usize, serde_json::Value, String, String, String)> = at
            .par_iter()
            .map(|&i| {
                // Built now, so that the token's genTime follows it and precedes the next.
                let created = now_ms();
                let resigned = |prev: Option<&String>| {
                    let mut record = records[i].clone();
                    let obj = record.as_object_mut().expect("an object");
                    for member in ["signature", "dsse_envelope", "timestamp_proof"] {
                        obj.remove(member);
                    }
                    obj.insert("created_at_ms".into(), created.into());
                    if let Some(prev) = prev {
                        obj.insert("prev_record_hash".into(), prev.clone().into());
                    }
                    let mut json = Json::from_serde(&record);
                    sign_legacy(&mut json, "bench-key-1", &key);
                    json
                };
                let plain_json = resigned(predecessor[i].map(|p| &plain_hash[p]));
                let plain_line = to_line(&plain_json);
                let plain_h = chain_hash(&serde_json::to_value(&plain_json).expect("serialises"));
                let json = resigned(predecessor[i].map(|p| &new_hash[p]));
                let signed = canonical_bytes_without(&json, SIGNED_EXCLUDED, Variant::C1);
                let worker = rayon::current_thread_index().unwrap_or(0);
                let digest = aeplens::canon::sha256_hex(&signed);
                let config = configs[worker].to_str().expect("a UTF-8 path");
                let token = authority::stamp(&dir, config, &digest, &format!("r{i}"));
                let mut value = serde_json::to_value(&json).expect("serialises");
                value["timestamp_proof"] = serde_json::json!({
                    "timestamp": aeplens::model::time::format_ms(created),
                    "authority": format!("aeplens {tsa} TSA"),
                    "proof": aeplens::verify::encoding::encode_base64(&token),
                });
                let hash = chain_hash(&value);
                (i, value, plain_line, plain_h, hash)
            })
            .collect();
        for (i, value, plain_line, plain_h, hash) in done {
            records[i] = value;
            plain[i] = plain_line;
            plain_hash[i] = plain_h;
            new_hash[i] = hash;
        }
        eprintln!("level {}/{levels}: {} records stamped", level + 1, at.len());
    }
    let write = |name: &str, lines: &mut dyn Iterator<Item = String>| {
        let path = format!("{out}.{name}.ndjson");
        let text: String = lines.map(|l| l + "\n").collect();
        std::fs::write(&path, text).expect("write");
        eprintln!("wrote {path}");
    };
    write("plain", &mut plain.into_iter());
    write(
        "stamped",
        &mut records.iter().map(|r| to_line(&Json::from_serde(r))),
    );
}

/// The chain hash `H` of a record (lower-case hex).
fn chain_hash(record: &serde_json::Value) -> String {
    let json = Json::from_serde(record);
    aeplens::canon::sha256_hex(&canonical_bytes_without(&json, CHAIN_EXCLUDED, Variant::C1))
}

fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as f64
}

/// A copy of the authority's configuration for `tsa` with worker `w`'s own serial file.
fn worker_config(authority: &Path, tsa: &str, w: usize) -> PathBuf {
    let text = std::fs::read_to_string(authority.join(format!("{tsa}.cnf")))
        .expect("the TSA's configuration");
    let serial = format!("{tsa}-w{w}.serial");
    std::fs::write(authority.join(&serial), format!("{:02x}00000001\n", w + 1)).expect("serial");
    let text = text.replace(&format!("./{tsa}.serial"), &format!("./{serial}"));
    let path = authority.join(format!("{tsa}-w{w}.cnf"));
    std::fs::write(&path, text).expect("config");
    path
}
