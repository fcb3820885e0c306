//! Evidence from compromised systems: each hostile input class gets a clear per-file or
//! per-line error or a finding, the rest loads, nothing panics or hangs; crypto is strict;
//! and no command alters what it reads.

use crate::common;

use aeplens::analysis::evidence::Evidence;
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::load::{Corpus, load_paths, parse_input};
use aeplens::model::json::Json;
use aeplens::verify::sign::{sign_legacy, signing_key, to_line};
use aeplens::verify::{Keyring, Options};
use std::path::{Path, PathBuf};

fn open(text: &[u8]) -> Evidence {
    let corpus = Corpus::new(vec![parse_input("hostile.ndjson".into(), text)]);
    Evidence::open(
        corpus,
        &Keyring::default(),
        &Options::default(),
        &SuppliedLeases::default(),
    )
}

const GOOD: &str =
    r#"{"schema_version":"aep/v0.3","run_id":"ok","created_at_ms":1780000000000,"actions":[]}"#;

fn record_with(extra: &str) -> String {
    format!(r#"{{"schema_version":"aep/v0.3","run_id":"r","created_at_ms":1780000000000{extra}}}"#)
}

fn ids(ev: &Evidence) -> Vec<&'static str> {
    ev.findings.iter().map(|f| f.id).collect()
}

#[test]
fn deep_nesting_is_a_line_error_and_the_rest_loads() {
    let deep = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
    let text = format!(
        "{GOOD}\n{}\n{GOOD}\n",
        record_with(&format!(r#","x":{deep}"#))
    );
    let ev = open(text.as_bytes());
    assert_eq!(ev.corpus.len(), 2);
    let errors: Vec<_> = ev.corpus.errors().collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].line, Some(2));
    assert!(errors[0].message.contains("nest"), "{}", errors[0].message);
}

#[test]
fn a_fifty_megabyte_string_loads_and_verifies() {
    let big = "a".repeat(50 * 1024 * 1024);
    let text = record_with(&format!(r#","note":"{big}""#));
    let ev = open(text.as_bytes());
    assert_eq!(ev.corpus.len(), 1);
    assert_eq!(
        ev.report.records[0]
            .structural
            .status
            .map(aeplens::verify::CheckStatus::name),
        Some("pass")
    );
    // The chain hash covers the whole string.
    let json = aeplens::model::json::Json::from_serde(&serde_json::from_str(&text).unwrap());
    assert_eq!(
        ev.report.records[0].canonical_sha256,
        aeplens::canon::canonical_sha256(&json)
    );
}

#[test]
fn three_hundred_thousand_actions_in_one_record() {
    let action = |i: usize| {
        format!(
            r#"{{"action_id":"a{i}","tool_name":"t","state_changing":false,"timestamp_ms":{},"side_effect_class":"read"{}}}"#,
            1_780_000_000_000u64 + i as u64,
            if i > 0 {
                format!(r#","parent_action_id":"a{}""#, i - 1)
            } else {
                String::new()
            }
        )
    };
    let actions: Vec<String> = (0..300_000).map(action).collect();
    let text = record_with(&format!(r#","actions":[{}]"#, actions.join(",")));
    let ev = open(text.as_bytes());
    assert_eq!(ev.analysis.graph.nodes.len(), 300_000);
    assert_eq!(
        ev.report.records[0]
            .semantic
            .status
            .map(aeplens::verify::CheckStatus::name),
        Some("pass")
    );
    // A 300,000-deep parent chain walks without recursion.
    let last = ev.analysis.graph.find(&ev.corpus, "r", "a299999").unwrap();
    assert!(ev.analysis.graph.nodes[last as usize].parent.is_some());
}

/// A store whose actions name more distinct tools and classes than the vocabulary holds:
/// every action's facts still give back its own texts (past the vocabulary's room they
/// are kept in the action's own buffer), and the vocabulary stops growing.
#[test]
fn more_distinct_tool_names_than_the_vocabulary_holds() {
    use aeplens::model::vocabulary::{CAPACITY, number};
    let n = CAPACITY + 500;
    let actions: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"action_id":"a{i}","tool_name":"tool-{i}","side_effect_class":"class-{i}"}}"#
            )
        })
        .collect();
    let text = record_with(&format!(r#","actions":[{}]"#, actions.join(",")));
    let ev = open(text.as_bytes());
    let facts = ev.corpus.record(0).facts();
    assert_eq!(facts.actions.len(), n);
    for (i, (_, a)) in facts.actions.iter().enumerate() {
        assert_eq!(a.tool(), Some(format!("tool-{i}").as_str()));
        assert_eq!(a.side_effect_class(), Some(format!("class-{i}").as_str()));
    }
    assert_eq!(number("a word the full vocabulary has no room for"), None);
    // A word it holds keeps its number, on a thread that never looked it up too.
    let here = number("tool-0");
    let elsewhere = std::thread::spawn(|| number("tool-0")).join().unwrap();
    assert!(here.is_some());
    assert_eq!(here, elsewhere);
}

#[test]
fn bad_lines_bytes_and_shapes_each_get_an_error() {
    let mut text = Vec::new();
    text.extend_from_slice(b"\xEF\xBB\xBF");
    text.extend_from_slice(GOOD.as_bytes());
    text.extend_from_slice(b"\r\n");
    text.extend_from_slice(b"{\"run_id\":\"\xff\xfe\"}\r\n"); // invalid UTF-8
    text.extend_from_slice(b"\x00\x01garbage\n");
    text.extend_from_slice(b"null\n[]\n");
    text.extend_from_slice(GOOD.as_bytes());
    text.extend_from_slice(b"\n{\"truncated\": ");
    let ev = open(&text);
    assert_eq!(ev.corpus.len(), 2, "the two good records load");
    let lines: Vec<Option<usize>> = ev.corpus.errors().map(|e| e.line).collect();
    assert_eq!(lines, vec![Some(2), Some(3), Some(4), Some(5), Some(7)]);
    assert!(
        ev.corpus
            .errors()
            .last()
            .unwrap()
            .message
            .contains("truncated")
    );
    // Empty files and `{}` alone.
    for (bytes, records) in [(&b""[..], 0), (&b"{}"[..], 1), (&b"   \n"[..], 0)] {
        let ev = open(bytes);
        assert_eq!(ev.corpus.len(), records);
    }
}

#[test]
fn a_directory_symlink_loop_is_reported_and_skipped() {
    let dir = common::run_dir("loop");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/a.ndjson"), GOOD).unwrap();
    let link = dir.join("sub/back");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    let inputs = load_paths(&[dir.display().to_string()]);
    let records: usize = inputs.iter().map(|i| i.records.len()).sum();
    assert_eq!(records, 1);
    assert!(
        inputs
            .iter()
            .flat_map(|i| &i.errors)
            .any(|e| e.message.contains("symlink loop"))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn numbers_duplicates_and_controls_become_findings() {
    let text = [
        record_with(r#","n":1e400"#),
        record_with(r#","n":-0,"k":1,"k":2"#),
        record_with(r#","run_id":"x\u001b[2J\u202e""#),
    ]
    .join("\n");
    let ev = open(text.as_bytes());
    let found = ids(&ev);
    for id in [
        "F-NUMBER-PRECISION",
        "F-DUPLICATE-KEY",
        "F-TERMINAL-CONTROL",
    ] {
        assert!(found.contains(&id), "{id} in {found:?}");
    }
    // -0 is written 0, as JSON.stringify does.
    let r = &ev.corpus.record(1).json();
    assert!(
        String::from_utf8(aeplens::canon::canonical_bytes(
            r,
            aeplens::canon::Variant::C1
        ))
        .unwrap()
        .contains("\"n\":0")
    );
}

#[test]
fn odd_versions_algorithms_signatures_keys_and_times() {
    let text = [
        record_with(r#","schema_version":"aep/v9.9""#),
        record_with(r#","signature":{"alg":"rsa","key_id":"k","sig":"AAAA"}"#),
        record_with(r#","signature":{"alg":"ed25519","key_id":"k","sig":"%%% not base64 %%%"}"#),
        record_with(r#","signature":{"alg":"ed25519","key_id":"k","sig":"AAAA"}"#),
        record_with(r#","actions":[{"action_id":"a","tool_name":"t","state_changing":false,"timestamp_ms":-5},{"action_id":"b","tool_name":"t","state_changing":false,"timestamp_ms":1.5},{"action_id":"c","tool_name":"t","state_changing":false,"timestamp_ms":9007199254740993}]"#),
    ]
    .join("\n");
    let mut keys = Keyring::default();
    assert!(
        keys.add("short", "abcd").is_err(),
        "wrong-length key refused"
    );
    keys.add("k", &"11".repeat(32)).ok();
    let corpus = Corpus::new(vec![parse_input("odd.ndjson".into(), text.as_bytes())]);
    let ev = Evidence::open(
        corpus,
        &keys,
        &Options::default(),
        &SuppliedLeases::default(),
    );
    assert_eq!(ev.report.records.len(), 5);
    assert_eq!(
        ev.report.records[0]
            .structural
            .status
            .map(aeplens::verify::CheckStatus::name),
        Some("fail")
    );
    for r in &ev.report.records[1..4] {
        assert_ne!(
            r.authenticity.status.map(aeplens::verify::AuthStatus::name),
            Some("valid")
        );
    }
    let v18: Vec<_> = ev.report.records[4]
        .semantic
        .violations
        .iter()
        .filter(|v| v.rule == "V18")
        .collect();
    assert!(v18.len() >= 2, "pre-2001 times flagged: {v18:?}");
}

// ---- crypto discipline ----

fn hex(s: &str) -> Vec<u8> {
    aeplens::verify::encoding::decode_hex(s).unwrap()
}

#[test]
fn rfc8032_vectors() {
    // RFC 8032 §7.1, TEST 1–3: key derivation and signatures are deterministic.
    let vectors = [
        (
            "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
            "",
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
        ),
        (
            "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
            "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
            "72",
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
        ),
        (
            "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
            "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
            "af82",
            "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
        ),
    ];
    for (secret, public, msg, sig) in vectors {
        let key = signing_key(&hex(secret).try_into().unwrap());
        assert_eq!(key.verifying_key().as_bytes().to_vec(), hex(public));
        use ed25519_dalek::Signer;
        let s = key.sign(&hex(msg));
        assert_eq!(s.to_bytes().to_vec(), hex(sig));
        assert!(key.verifying_key().verify_strict(&hex(msg), &s).is_ok());
    }
}

/// A record signed with RFC 8032 TEST 1's key, and a keyring trusting it.
fn signed_record() -> (Json, Keyring) {
    let key = signing_key(
        &hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
            .try_into()
            .unwrap(),
    );
    let mut record = Json::from_serde(&serde_json::from_str(&record_with("")).unwrap());
    sign_legacy(&mut record, "rfc8032-1", &key);
    let mut keys = Keyring::default();
    keys.add(
        "rfc8032-1",
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    )
    .unwrap();
    (record, keys)
}

fn verdict(record: &Json, keys: &Keyring) -> (Option<&'static str>, Vec<&'static str>) {
    let corpus = Corpus::new(vec![parse_input(
        "sig.json".into(),
        to_line(record).as_bytes(),
    )]);
    let ev = Evidence::open(
        corpus,
        keys,
        &Options::default(),
        &SuppliedLeases::default(),
    );
    (
        ev.report.records[0]
            .authenticity
            .status
            .map(aeplens::verify::AuthStatus::name),
        ids(&ev),
    )
}

fn replace_sig(record: &Json, sig: &[u8]) -> Json {
    let mut v = record.to_serde();
    v["signature"]["sig"] = aeplens::verify::encoding::encode_base64(sig).into();
    Json::from_serde(&v)
}

#[test]
fn malleated_signatures_are_rejected() {
    let (record, keys) = signed_record();
    assert_eq!(verdict(&record, &keys).0, Some("valid"));
    let sig = aeplens::verify::encoding::decode_base64(
        record
            .get("signature")
            .unwrap()
            .get("sig")
            .unwrap()
            .as_str()
            .unwrap(),
    )
    .unwrap()
    .bytes;
    // S + L (the group order): the same point equation, a non-canonical scalar.
    const L: [u8; 32] = [
        0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde,
        0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ];
    let mut malleated = sig.clone();
    let mut carry = 0u16;
    for i in 0..32 {
        let v = u16::from(malleated[32 + i]) + u16::from(L[i]) + carry;
        malleated[32 + i] = v as u8;
        carry = v >> 8;
    }
    assert_ne!(
        verdict(&replace_sig(&record, &malleated), &keys).0,
        Some("valid")
    );
    // A flipped bit anywhere is invalid too.
    let mut flipped = sig.clone();
    flipped[10] ^= 1;
    assert_eq!(
        verdict(&replace_sig(&record, &flipped), &keys).0,
        Some("invalid")
    );
}

#[test]
fn small_order_keys_are_rejected_and_named() {
    // The identity point as public key; R = identity, S = 0 "verifies" any message under
    // lenient rules. Strict Ed25519 refuses it.
    let mut identity = [0u8; 32];
    identity[0] = 1;
    let (record, _) = signed_record();
    let mut forged_sig = [0u8; 64];
    forged_sig[..32].copy_from_slice(&identity);
    let forged = replace_sig(&record, &forged_sig);
    let vk = ed25519_dalek::VerifyingKey::from_bytes(&identity).unwrap();
    let message = aeplens::canon::canonical_bytes_without(
        &forged,
        aeplens::canon::SIGNED_EXCLUDED,
        aeplens::canon::Variant::C1,
    );
    use ed25519_dalek::Verifier;
    assert!(
        vk.verify(&message, &ed25519_dalek::Signature::from_bytes(&forged_sig))
            .is_ok(),
        "the forgery is real under lenient rules"
    );
    let mut keys = Keyring::default();
    keys.add("rfc8032-1", &aeplens::canon::hex(&identity))
        .unwrap();
    let (status, found) = verdict(&forged, &keys);
    assert_eq!(status, Some("invalid"));
    assert!(found.contains(&"F-ED25519-LENIENT-ONLY"), "{found:?}");
}

#[test]
fn unknown_keys_are_never_valid_and_mislabelled_keys_are_named() {
    let (record, keys) = signed_record();
    let (status, _) = verdict(&record, &Keyring::default());
    assert_ne!(status, Some("valid"));
    let mut v = record.to_serde();
    v["signature"]["key_id"] = "someone-else".into();
    let relabelled = Json::from_serde(&v);
    let mut both = keys.clone();
    both.add("someone-else", &"22".repeat(32)).ok();
    let other = signing_key(&[7u8; 32]);
    both.add(
        "someone-else",
        &aeplens::canon::hex(other.verifying_key().as_bytes()),
    )
    .unwrap();
    let (status, found) = verdict(&relabelled, &both);
    assert_eq!(status, Some("invalid"));
    assert!(found.contains(&"F-KEY-MISLABELLED"), "{found:?}");
}

// ---- read-only ----

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let meta = std::fs::metadata(&p).unwrap();
        out.push((
            p.clone(),
            std::fs::read(&p).unwrap(),
            meta.modified().unwrap(),
        ));
    }
    out.sort();
    out
}

#[test]
fn every_command_leaves_its_inputs_untouched() {
    let dir = common::run_dir("ro");
    std::fs::create_dir_all(&dir).unwrap();
    for f in [
        "assets/demo/evidence/incident.ndjson",
        "assets/demo/keys.json",
        "assets/demo/leases.ndjson",
    ] {
        std::fs::copy(f, dir.join(Path::new(f).file_name().unwrap())).unwrap();
    }
    let before = snapshot(&dir);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let d = |f: &str| dir.join(f).display().to_string();
    let common = ["--keys", &d("keys.json"), "--leases", &d("leases.ndjson")];
    let runs: Vec<Vec<String>> = vec![
        ["check", "--format", "json"]
            .iter()
            .map(std::string::ToString::to_string)
            .collect(),
        ["findings"]
            .iter()
            .map(std::string::ToString::to_string)
            .collect(),
        ["chains"]
            .iter()
            .map(std::string::ToString::to_string)
            .collect(),
        ["envelope"]
            .iter()
            .map(std::string::ToString::to_string)
            .collect(),
        ["show", "act-003", "--run", "run-deploy-0042"]
            .iter()
            .map(std::string::ToString::to_string)
            .collect(),
    ];
    for mut args in runs {
        if args[0] == "check" {
            args.extend(["--keys".to_string(), d("keys.json")]);
        } else {
            args.extend(common.iter().map(std::string::ToString::to_string));
        }
        args.push(d("incident.ndjson"));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_aeplens"))
            .args(&args)
            .output()
            .unwrap();
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
    // The explorer without a terminal refuses and reads nothing more.
    let _ = std::process::Command::new(env!("CARGO_BIN_EXE_aeplens"))
        .arg(d("incident.ndjson"))
        .output()
        .unwrap();
    assert_eq!(snapshot(&dir), before, "bytes and mtimes unchanged");
    let _ = std::fs::remove_dir_all(&dir);
}
