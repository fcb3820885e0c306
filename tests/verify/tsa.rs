//! RFC 3161 time-stamp tokens (verification.md d.6) made by a real authority: openssl,
//! answering `openssl ts -query` with `openssl ts -reply` (tests/tsa/make_authority.sh),
//! RSA, ECDSA P-256 and P-384, an expired TSA certificate, a root that issued none of them,
//! a token moved to other bytes, and broken DER. `scripts/test` installs openssl when
//! missing; without it these tests fail in CI and are skipped elsewhere.

use crate::authority;
use crate::common;

use aeplens::verify::tsa::{Roots, Stamped, TsaCheck, TsaState, roots_from_pem};
use std::path::{Path, PathBuf};

/// The bytes the tokens stamp (in a record, `B`: what its signature covers).
const STAMPED: &[u8] = b"{\"actions\":[],\"run_id\":\"run-tsa\",\"schema_version\":\"aep/v0.3\"}";

/// The authority's directory, made once per test process; `None` (a skip, said) without
/// openssl outside CI.
fn authority() -> Option<PathBuf> {
    static MADE: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    MADE.get_or_init(|| {
        if std::process::Command::new("openssl")
            .arg("version")
            .output()
            .is_err()
        {
            assert!(
                std::env::var_os("CI").is_none(),
                "openssl is required in CI"
            );
            eprintln!("skipped: no openssl (scripts/test installs it)");
            return None;
        }
        let dir = common::run_dir("tsa");
        let digest = aeplens::canon::sha256_hex(STAMPED);
        let status = std::process::Command::new("tests/tsa/make_authority.sh")
            .arg(&dir)
            .arg(&digest)
            .status()
            .unwrap();
        assert!(status.success(), "make_authority.sh failed");
        Some(dir)
    })
    .clone()
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap()
}

fn verify(der: &[u8], stamped: &[u8], roots: &Roots) -> TsaCheck {
    aeplens::verify::tsa::verify(der, Stamped::Bytes(stamped), roots)
}

#[test]
fn every_authority_s_token_is_verified_under_its_root() {
    let Some(dir) = authority() else { return };
    let root = roots_from_pem(&read(&dir, "root.pem")).unwrap();
    for (file, tsa) in [
        ("rsa.tsr", "aeplens RSA TSA"),
        ("ec.tsr", "aeplens ECDSA TSA"),
        ("ec384.tsr", "aeplens P-384 TSA"),
        ("rsa.token.der", "aeplens RSA TSA"),
    ] {
        let check = verify(&read(&dir, file), STAMPED, &root);
        assert_eq!(
            check.state,
            TsaState::Verified,
            "{file}: {}",
            check.token.reason
        );
        assert_eq!(check.token.tsa.as_deref(), Some(tsa));
        assert_eq!(check.token.accuracy_ms, Some(1500), "secs:1, millisecs:500");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        let gen_time = check.token.gen_time_ms.unwrap();
        assert!(
            (now - gen_time).abs() < 10 * 60 * 1000,
            "genTime is when it was made"
        );
    }
}

#[test]
fn each_way_a_token_fails_has_its_state() {
    let Some(dir) = authority() else { return };
    let root = roots_from_pem(&read(&dir, "root.pem")).unwrap();
    let other = roots_from_pem(&read(&dir, "other-root.pem")).unwrap();
    let rsa = read(&dir, "rsa.tsr");
    // Moved to other bytes: the imprint is not theirs.
    let moved = verify(&rsa, b"another record", &root);
    assert_eq!(
        moved.state,
        TsaState::ImprintMismatch,
        "{}",
        moved.token.reason
    );
    // No root given, or a root that issued nothing of it: never proven.
    let none = verify(&rsa, STAMPED, &Roots::default());
    assert_eq!(none.state, TsaState::Untrusted);
    assert!(
        none.token.reason.contains("--tsa-certs"),
        "{}",
        none.token.reason
    );
    let foreign = verify(&rsa, STAMPED, &other);
    assert_eq!(
        foreign.state,
        TsaState::Untrusted,
        "{}",
        foreign.token.reason
    );
    // The TSA's certificate had expired when it signed.
    let expired = verify(&read(&dir, "expired.tsr"), STAMPED, &root);
    assert_eq!(expired.state, TsaState::Invalid);
    assert!(
        expired.token.reason.contains("not valid at genTime"),
        "{}",
        expired.token.reason
    );
    // A flipped bit in the signature.
    let mut flipped = rsa.clone();
    let at = flipped.len() - 5;
    flipped[at] ^= 1;
    let bad = verify(&flipped, STAMPED, &root);
    assert_eq!(bad.state, TsaState::Invalid, "{}", bad.token.reason);
    // Truncated DER, and DER that is no token.
    for broken in [
        &rsa[..100],
        &rsa[..rsa.len() - 1],
        &read(&dir, "root.pem")[..],
        b"\x30\x03\x02\x01\x05",
    ] {
        let check = verify(broken, STAMPED, &root);
        assert_eq!(check.state, TsaState::Malformed, "{}", check.token.reason);
    }
}

/// RFC 5280 path validation (d.6 amended), on paths the authority made this run: every
/// issuer a CA allowed to sign certificates, every certificate valid at genTime, path
/// length constraints kept. A good intermediate is followed; each broken path is invalid,
/// never "proven".
#[test]
fn each_broken_certificate_path_is_invalid() {
    let Some(dir) = authority() else { return };
    let root = roots_from_pem(&read(&dir, "root.pem")).unwrap();
    let chained = verify(&read(&dir, "chained.tsr"), STAMPED, &root);
    assert_eq!(
        chained.state,
        TsaState::Verified,
        "{}",
        chained.token.reason
    );
    assert_eq!(
        chained.token.tsa.as_deref(),
        Some("aeplens TSA under an intermediate")
    );
    for (file, why) in [
        (
            "rogue.tsr",
            "aeplens RSA TSA issued a certificate but is not a CA",
        ),
        ("stale.tsr", "aeplens expired CA had expired at genTime"),
        (
            "early.tsr",
            "aeplens CA of 2040 was not yet valid at genTime",
        ),
        ("deep.tsr", "path length constraint"),
        ("nosign.tsr", "does not allow keyCertSign"),
    ] {
        let check = verify(&read(&dir, file), STAMPED, &root);
        assert_eq!(
            check.state,
            TsaState::Invalid,
            "{file}: {}",
            check.token.reason
        );
        assert!(
            check.token.reason.contains(why),
            "{file}: {}",
            check.token.reason
        );
        // Checked twice: a remembered path is never taken for a broken one.
        let again = verify(&read(&dir, file), STAMPED, &root);
        assert_eq!(again.state, TsaState::Invalid, "{file}, again");
        // Without the root nothing is proven, and nothing says the path is good.
        let alone = verify(&read(&dir, file), STAMPED, &Roots::default());
        assert_eq!(alone.state, TsaState::Untrusted, "{file}, no root");
    }
    // A TSA's own certificate given as the root anchors nothing: roots are CAs.
    let leaf = roots_from_pem(&read(&dir, "rsa.pem")).unwrap();
    let pinned = verify(&read(&dir, "rsa.tsr"), STAMPED, &leaf);
    assert_eq!(pinned.state, TsaState::Untrusted, "{}", pinned.token.reason);
}

/// A refusal (`TimeStampResp` with status rejection and no token) is malformed, with the
/// authority's own words, whatever its length.
#[test]
fn a_refused_request_is_malformed() {
    let Some(dir) = authority() else { return };
    let root = roots_from_pem(&read(&dir, "root.pem")).unwrap();
    let refused = read(&dir, "refused.tsr");
    let check = verify(&refused, STAMPED, &root);
    assert_eq!(check.state, TsaState::Malformed, "{}", check.token.reason);
    assert!(
        check.token.reason.contains("rejection")
            && check
                .token
                .reason
                .contains("Message digest algorithm is not supported"),
        "{}",
        check.token.reason
    );
    // The shortest refusal: status alone (SEQUENCE { SEQUENCE { INTEGER 2 } }).
    let bare = b"\x30\x05\x30\x03\x02\x01\x02";
    assert_eq!(
        aeplens::verify::timestamp::token_bytes(&aeplens::verify::encoding::encode_base64(bare)),
        Some(bare.to_vec()),
        "a short refusal is read as a TimeStampResp, not as an opaque proof"
    );
    assert_eq!(verify(bare, STAMPED, &root).state, TsaState::Malformed);
}

#[test]
fn a_pem_file_without_a_certificate_is_refused() {
    assert!(roots_from_pem(b"not a certificate").is_err());
    assert!(roots_from_pem(b"").is_err());
}

// ---- Records stamped by the authority, as an emitter stamps them, and their anchors ----

/// The test key's id and seed (tests/fixtures/tsa/keys.json holds its public half).
const KEY_ID: &str = "tsa-test-key";
const SEED: [u8; 32] = [41; 32];

/// Asks the authority `tsa` (rsa, ec, ec384, expired) to stamp `digest` (hex): the DER
/// response, as `openssl ts -query` and `openssl ts -reply` make it.
fn stamp(dir: &Path, tsa: &str, digest: &str) -> Vec<u8> {
    authority::stamp(
        dir,
        &format!("{tsa}.cnf"),
        digest,
        &format!("{digest}.{tsa}"),
    )
}

/// Epoch milliseconds now.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// How a record of a made store is stamped.
#[derive(Clone, Copy)]
enum Proof<'a> {
    /// By this authority, claiming the time it asked at.
    By(&'a str),
    /// By this authority, claiming a time an hour later.
    ClaimingLater(&'a str),
    /// With the token of the record before it.
    Moved,
    /// With DER that is no token (the root certificate).
    NotAToken,
    /// With the authority's refusal (a TimeStampResp without a token).
    Refused,
}

/// Writes a chain of signed records, one per entry of `proofs`, each stamped after it was
/// signed as the emitter does (so its chain hash covers the proof); `created_back` makes
/// the record at that position claim it was created an hour before the one before it was
/// stamped. Returns the records' chain hashes.
fn make_store(
    dir: &Path,
    out: &Path,
    run: &str,
    proofs: &[Proof<'_>],
    created_back: Option<usize>,
) -> Vec<String> {
    use aeplens::canon::{SIGNED_EXCLUDED, Variant, canonical_bytes_without, sha256_hex};
    use aeplens::model::json::Json;
    use aeplens::verify::sign::{link_to, sign_legacy, signing_key, to_line};
    let key = signing_key(&SEED);
    let mut previous: Option<Json> = None;
    let mut last_token: Vec<u8> = Vec::new();
    let (mut lines, mut hashes) = (String::new(), Vec::new());
    for (i, proof) in proofs.iter().enumerate() {
        let created = if created_back == Some(i) {
            now_ms() - 3_600_000
        } else {
            now_ms()
        };
        let record = serde_json::json!({
            "schema_version": "aep/v0.3",
            "run_id": run,
            "input_refs": [],
            "output_refs": [],
            "capability_decisions": [],
            "actions": [{
                "action_id": format!("act-{i:03}"),
                "tool_name": "list_buckets",
                "state_changing": false,
                "outcome": "success",
                "arguments_digest": format!("sha256:{}", "0".repeat(64)),
                "evidence_refs": [],
                "timestamp_ms": created,
                "recording_mode": "validation",
                "side_effect_class": "read",
            }],
            "verifier_results": [],
            "created_at_ms": created,
            "run_side_effect_class_max": "read",
        });
        let mut record = Json::from_serde(&record);
        link_to(&mut record, previous.as_ref());
        sign_legacy(&mut record, KEY_ID, &key);
        let signed = canonical_bytes_without(&record, SIGNED_EXCLUDED, Variant::C1);
        let asked = aeplens::model::time::format_ms(now_ms() as f64);
        let (token, authority, claimed) = match *proof {
            Proof::By(tsa) => (stamp(dir, tsa, &sha256_hex(&signed)), tsa, asked),
            Proof::ClaimingLater(tsa) => (
                stamp(dir, tsa, &sha256_hex(&signed)),
                tsa,
                aeplens::model::time::format_ms((now_ms() + 3_600_000) as f64),
            ),
            Proof::Moved => (last_token.clone(), "rsa", asked),
            Proof::Refused => (read(dir, "refused.tsr"), "rsa", asked),
            Proof::NotAToken => {
                let pem = String::from_utf8(read(dir, "root.pem")).unwrap();
                let der = x509_cert::der::Encode::to_der(
                    &<x509_cert::Certificate as x509_cert::der::DecodePem>::from_pem(
                        pem.as_bytes(),
                    )
                    .unwrap(),
                )
                .unwrap();
                (der, "rsa", asked)
            }
        };
        last_token.clone_from(&token);
        let mut value: serde_json::Value = serde_json::to_value(&record).unwrap();
        value["timestamp_proof"] = serde_json::json!({
            "timestamp": claimed,
            "authority": format!("aeplens {authority} TSA"),
            "proof": aeplens::verify::encoding::encode_base64(&token),
        });
        let record = Json::from_serde(&value);
        lines.push_str(&to_line(&record));
        lines.push('\n');
        hashes.push(sha256_hex(&canonical_bytes_without(
            &record,
            aeplens::canon::CHAIN_EXCLUDED,
            Variant::C1,
        )));
        previous = Some(record);
    }
    std::fs::write(out, lines).unwrap();
    hashes
}

/// Anchors the record `digest` (hex) with the RSA authority through the binary:
/// `aeplens anchor --add` with the evidence, appending to `anchors`.
fn anchor(dir: &Path, digest: &str, anchors: &Path, evidence: &Path) {
    let reply = stamp(dir, "rsa", digest);
    let tsr = dir.join(format!("{digest}.anchor.tsr"));
    std::fs::write(&tsr, reply).unwrap();
    let root = dir.join("root.pem");
    let (code, _, err) = common::aeplens(&[
        "anchor",
        "--add",
        tsr.to_str().unwrap(),
        "--tsa-certs",
        root.to_str().unwrap(),
        "-o",
        anchors.to_str().unwrap(),
        evidence.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
}

/// The stores and anchors of tests/fixtures/tsa/, made by the authority in `dir` into
/// `out`: what the catalogue cases and these tests read.
fn make_fixtures(dir: &Path, out: &Path) {
    std::fs::create_dir_all(out).unwrap();
    for file in [
        "root.pem",
        "other-root.pem",
        "rsa.tsr",
        "ec.tsr",
        "rsa.token.der",
    ] {
        std::fs::copy(dir.join(file), out.join(file)).unwrap();
    }
    let key = aeplens::verify::sign::signing_key(&SEED);
    let public = aeplens::canon::Sha256Digest(*key.verifying_key().as_bytes()).to_string();
    std::fs::write(
        out.join("keys.json"),
        format!("{{\"{KEY_ID}\": \"{public}\"}}\n"),
    )
    .unwrap();
    use Proof::*;
    let store = out.join("stamped.ndjson");
    let hashes = make_store(dir, &store, "run-tsa-stamped", &[By("rsa"); 4], None);
    make_store(
        dir,
        &out.join("stamped_ec.ndjson"),
        "run-tsa-ec",
        &[By("ec"), By("ec384")],
        None,
    );
    make_store(
        dir,
        &out.join("moved.ndjson"),
        "run-tsa-moved",
        &[By("rsa"), Moved],
        None,
    );
    make_store(
        dir,
        &out.join("expired.ndjson"),
        "run-tsa-expired",
        &[By("expired")],
        None,
    );
    make_store(
        dir,
        &out.join("malformed.ndjson"),
        "run-tsa-malformed",
        &[NotAToken],
        None,
    );
    make_store(
        dir,
        &out.join("claim.ndjson"),
        "run-tsa-claim",
        &[ClaimingLater("rsa")],
        None,
    );
    make_store(
        dir,
        &out.join("order.ndjson"),
        "run-tsa-order",
        &[By("rsa"), By("rsa")],
        Some(1),
    );
    let text = std::fs::read_to_string(&store).unwrap();
    let cut: String = text.split_inclusive('\n').take(3).collect();
    std::fs::write(out.join("truncated.ndjson"), cut).unwrap();
    // The head anchored through `aeplens anchor`: the query it prints, answered.
    for name in ["anchors.ndjson", "anchors_mid.ndjson", "anchors_bad.ndjson"] {
        let _ = std::fs::remove_file(out.join(name));
    }
    let (code, queries, err) = common::aeplens(&["anchor", store.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let query = queries
        .lines()
        .find(|l| l.starts_with("openssl ts -query"))
        .unwrap();
    assert!(
        query.contains(&format!("-digest {} -sha256", hashes[3])),
        "{queries}"
    );
    anchor(dir, &hashes[3], &out.join("anchors.ndjson"), &store);
    anchor(dir, &hashes[1], &out.join("anchors_mid.ndjson"), &store);
    // The head's anchor line with the second record's token: a token for other bytes.
    let head: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(out.join("anchors.ndjson"))
            .unwrap()
            .trim(),
    )
    .unwrap();
    let mid: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(out.join("anchors_mid.ndjson"))
            .unwrap()
            .trim(),
    )
    .unwrap();
    let mut bad = head.clone();
    bad["proof"] = mid["proof"].clone();
    std::fs::write(out.join("anchors_bad.ndjson"), format!("{bad}\n")).unwrap();
}

/// The fixtures made fresh by this run's authority (once per test process).
fn fresh() -> Option<PathBuf> {
    static MADE: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    MADE.get_or_init(|| {
        let dir = authority()?;
        let out = dir.join("fixtures");
        make_fixtures(&dir, &out);
        if std::env::var_os("AEPLENS_UPDATE_TSA_FIXTURES").is_some() {
            make_fixtures(&dir, Path::new("tests/fixtures/tsa"));
        }
        Some(out)
    })
    .clone()
}

/// `check --format json` of `paths` under the fixture keys and `extra` arguments.
fn check_json(fixtures: &Path, extra: &[&str], paths: &[&str]) -> (i32, serde_json::Value) {
    let keys = fixtures.join("keys.json");
    let mut args = vec![
        "check",
        "--format",
        "json",
        "--no-index",
        "--keys",
        keys.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let paths: Vec<String> = paths
        .iter()
        .map(|p| fixtures.join(p).display().to_string())
        .collect();
    args.extend(paths.iter().map(String::as_str));
    let (code, out, err) = common::aeplens(&args);
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}")),
    )
}

fn states(doc: &serde_json::Value) -> Vec<String> {
    (doc["records"].as_array().unwrap().iter())
        .map(|r| {
            r["authenticity"]["timestamp"]
                .as_str()
                .unwrap_or("none")
                .to_string()
        })
        .collect()
}

fn finding_ids(doc: &serde_json::Value) -> Vec<String> {
    (doc["findings"].as_array().unwrap().iter())
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

/// Every state of d.6 on records stamped by the real authority, on the fixtures made in
/// this run and on the vendored ones alike.
#[test]
fn stamped_records_get_the_state_their_token_earns() {
    let vendored = PathBuf::from("tests/fixtures/tsa");
    let dirs: Vec<PathBuf> = fresh().into_iter().chain([vendored]).collect();
    for fixtures in &dirs {
        let root = fixtures.join("root.pem");
        let roots = ["--tsa-certs", root.to_str().unwrap()];
        let (code, doc) = check_json(fixtures, &roots, &["stamped.ndjson", "stamped_ec.ndjson"]);
        assert_eq!(code, 0, "{doc:#}");
        assert_eq!(states(&doc), vec!["tsa-verified"; 6]);
        let first = &doc["records"][0]["authenticity"];
        assert_eq!(first["status"], "valid");
        assert_eq!(first["timestamp_token"]["tsa"], "aeplens RSA TSA");
        assert_eq!(first["timestamp_token"]["accuracy_ms"], 1500);
        assert_eq!(
            doc["records"][4]["authenticity"]["timestamp_token"]["tsa"],
            "aeplens ECDSA TSA"
        );
        assert_eq!(
            doc["records"][5]["authenticity"]["timestamp_token"]["tsa"],
            "aeplens P-384 TSA"
        );
        assert!(finding_ids(&doc).is_empty(), "{:?}", finding_ids(&doc));
        // No root given, or a root that issued none of it: claimed, never proven.
        let (_, doc) = check_json(fixtures, &[], &["stamped.ndjson"]);
        assert_eq!(states(&doc), vec!["tsa-untrusted"; 4]);
        let other = fixtures.join("other-root.pem");
        let (_, doc) = check_json(
            fixtures,
            &["--tsa-certs", other.to_str().unwrap()],
            &["stamped.ndjson"],
        );
        assert_eq!(states(&doc), vec!["tsa-untrusted"; 4]);
        for (file, want, finding) in [
            (
                "moved.ndjson",
                ["tsa-verified", "tsa-imprint-mismatch"].as_slice(),
                "F-TIMESTAMP-IMPRINT",
            ),
            ("expired.ndjson", &["tsa-invalid"], "F-TIMESTAMP-INVALID"),
            (
                "malformed.ndjson",
                &["tsa-malformed"],
                "F-TIMESTAMP-MALFORMED",
            ),
            ("claim.ndjson", &["tsa-verified"], "F-TIMESTAMP-CLAIM"),
            (
                "order.ndjson",
                &["tsa-verified", "tsa-verified"],
                "F-TIMESTAMP-ORDER",
            ),
        ] {
            let (_, doc) = check_json(fixtures, &roots, &[file]);
            assert_eq!(states(&doc), want, "{file}");
            assert_eq!(finding_ids(&doc), [finding], "{file}");
        }
    }
}

/// A proof present and failing makes `check` exit 1 (d.6 amended): a token moved to
/// another record, a token that does not verify. A refusal in place of a token is
/// malformed: a finding, and no failed time claim.
#[test]
fn a_failing_token_fails_check() {
    let vendored = PathBuf::from("tests/fixtures/tsa");
    let dirs: Vec<PathBuf> = fresh().into_iter().chain([vendored]).collect();
    for fixtures in &dirs {
        let root = fixtures.join("root.pem");
        let roots = ["--tsa-certs", root.to_str().unwrap()];
        for (file, code) in [
            ("stamped.ndjson", 0),
            ("moved.ndjson", 1),
            ("expired.ndjson", 1),
            ("malformed.ndjson", 0),
        ] {
            let (got, doc) = check_json(fixtures, &roots, &[file]);
            assert_eq!(got, code, "{file}: {:?}", states(&doc));
        }
    }
    let Some(dir) = authority() else { return };
    let fixtures = fresh().unwrap();
    make_store(
        &dir,
        &fixtures.join("refused.ndjson"),
        "run-tsa-refused",
        &[Proof::Refused],
        None,
    );
    let root = fixtures.join("root.pem");
    let (code, doc) = check_json(
        &fixtures,
        &["--tsa-certs", root.to_str().unwrap()],
        &["refused.ndjson"],
    );
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(states(&doc), ["tsa-malformed"]);
    assert_eq!(finding_ids(&doc), ["F-TIMESTAMP-MALFORMED"]);
}

/// The text a reviewer reads: "proven by" only for a verified token.
#[test]
fn only_a_verified_token_is_shown_as_proven() {
    let fixtures = PathBuf::from("tests/fixtures/tsa");
    let keys = fixtures.join("keys.json");
    let root = fixtures.join("root.pem");
    let store = fixtures.join("stamped.ndjson");
    let text = |extra: &[&str]| {
        let mut args = vec![
            "check",
            "--format",
            "text",
            "--no-index",
            "--keys",
            keys.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.push(store.to_str().unwrap());
        common::aeplens(&args).1
    };
    let proven = text(&["--tsa-certs", root.to_str().unwrap()]);
    assert_eq!(
        proven
            .matches("    time: proven by aeplens RSA TSA at ")
            .count(),
        4,
        "{proven}"
    );
    assert!(proven.contains("(±1500 ms)"), "{proven}");
    let claimed = text(&[]);
    assert!(!claimed.contains("proven"), "{claimed}");
    assert_eq!(
        claimed
            .matches("    time: claimed (tsa-untrusted: no TSA root given")
            .count(),
        4,
        "{claimed}"
    );
}

/// Anchors (d.7): a chain covered through its anchored record, a cut tail caught, a bad
/// anchor named — on the fixtures made in this run and the vendored ones.
#[test]
fn anchors_show_coverage_and_catch_a_cut_tail() {
    let vendored = PathBuf::from("tests/fixtures/tsa");
    let dirs: Vec<PathBuf> = fresh().into_iter().chain([vendored]).collect();
    for fixtures in &dirs {
        let root = fixtures.join("root.pem");
        let with = |anchors: &str| {
            vec![
                "--tsa-certs".to_string(),
                root.display().to_string(),
                "--anchors".to_string(),
                fixtures.join(anchors).display().to_string(),
            ]
        };
        let run = |anchors: &str, store: &str| {
            let extra = with(anchors);
            let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
            check_json(fixtures, &extra, &[store])
        };
        let (code, doc) = run("anchors.ndjson", "stamped.ndjson");
        assert_eq!(code, 0, "{doc:#}");
        let through = &doc["chain_paths"][0]["anchored_through"];
        assert_eq!(through["position"], 3, "the head: {through}");
        assert_eq!(through["tsa"], "aeplens RSA TSA");
        assert_eq!(doc["anchors"][0]["status"], "anchored");
        let (code, doc) = run("anchors_mid.ndjson", "stamped.ndjson");
        assert_eq!(code, 0);
        assert_eq!(doc["chain_paths"][0]["anchored_through"]["position"], 1);
        // The head is gone while its chain is loaded: the tail was cut.
        let (code, doc) = run("anchors.ndjson", "truncated.ndjson");
        assert_eq!(code, 1, "check fails on a cut tail");
        assert_eq!(finding_ids(&doc), ["F-TAIL-TRUNCATED"]);
        assert_eq!(doc["anchors"][0]["status"], "truncated");
        assert_eq!(doc["anchors"][0]["last_loaded"]["index"], 2);
        assert!(doc["chain_paths"][0].get("anchored_through").is_none());
        // A token for other bytes.
        let (code, doc) = run("anchors_bad.ndjson", "stamped.ndjson");
        assert_eq!(code, 1);
        assert_eq!(finding_ids(&doc), ["F-ANCHOR-INVALID"]);
        assert_eq!(doc["anchors"][0]["status"], "invalid");
        assert_eq!(doc["anchors"][0]["token_state"], "tsa-imprint-mismatch");
        // Without the root, the anchor proves nothing and is not used.
        let (code, doc) = check_json(
            fixtures,
            &[
                "--anchors",
                fixtures.join("anchors.ndjson").to_str().unwrap(),
            ],
            &["truncated.ndjson"],
        );
        assert_eq!(code, 0);
        assert_eq!(doc["anchors"][0]["status"], "untrusted");
        assert!(finding_ids(&doc).is_empty());
    }
}

/// Anchors fail closed (d.7 amended): a three-member anchor (no `chain_root`, no
/// `run_id`) over a record that is missing is a cut tail — or an anchor of other evidence
/// — and fails `check`; an anchor that does not verify is a finding whether or not its
/// record is loaded, so `findings --fail-on high` fails too.
#[test]
fn anchors_fail_closed() {
    let fixtures = PathBuf::from("tests/fixtures/tsa");
    let scratch = common::run_dir("anchors-closed");
    std::fs::create_dir_all(&scratch).unwrap();
    let line = std::fs::read_to_string(fixtures.join("anchors.ndjson")).unwrap();
    let mut bare: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    let map = bare.as_object_mut().unwrap();
    map.remove("chain_root");
    map.remove("run_id");
    assert_eq!(map.len(), 3, "the spec's three members: {map:?}");
    let three = scratch.join("anchors_three.ndjson");
    std::fs::write(&three, format!("{bare}\n")).unwrap();
    let root = fixtures.join("root.pem");
    let run = |anchors: &Path, store: &str| {
        check_json(
            &fixtures,
            &[
                "--tsa-certs",
                root.to_str().unwrap(),
                "--anchors",
                anchors.to_str().unwrap(),
            ],
            &[store],
        )
    };
    // Over its own chain, with the head cut, and over other evidence: a cut tail.
    for store in ["truncated.ndjson", "stamped_ec.ndjson"] {
        let (code, doc) = run(&three, store);
        assert_eq!(code, 1, "{store}: {doc:#}");
        assert_eq!(doc["anchors"][0]["status"], "truncated", "{store}");
        assert_eq!(finding_ids(&doc), ["F-TAIL-TRUNCATED"], "{store}");
        let message = doc["findings"][0]["message"].as_str().unwrap();
        assert!(
            message.contains("a tail was cut, or this anchor belongs to other evidence"),
            "{message}"
        );
        assert!(
            (doc["findings"][0]["locations"].as_array().unwrap().iter()).any(|l| l["path"]
                .as_str()
                .unwrap()
                .ends_with("anchors_three.ndjson")),
            "the finding names the anchor: {doc:#}"
        );
    }
    // Over the whole chain it is anchored, as before.
    let (code, doc) = run(&three, "stamped.ndjson");
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["anchors"][0]["status"], "anchored");
    // An anchor naming its chain and run, over other evidence: attributed, not a cut.
    let (code, doc) = run(&fixtures.join("anchors.ndjson"), "stamped_ec.ndjson");
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["anchors"][0]["status"], "not-in-evidence");
    // A bad anchor whose record is not loaded: a finding, and both commands fail.
    let bad = fixtures.join("anchors_bad.ndjson");
    let (code, doc) = run(&bad, "stamped_ec.ndjson");
    assert_eq!(code, 1);
    assert_eq!(finding_ids(&doc), ["F-ANCHOR-INVALID"]);
    let keys = fixtures.join("keys.json");
    let (code, out, err) = common::aeplens(&[
        "findings",
        "--fail-on",
        "high",
        "--keys",
        keys.to_str().unwrap(),
        "--tsa-certs",
        root.to_str().unwrap(),
        "--anchors",
        bad.to_str().unwrap(),
        fixtures.join("stamped_ec.ndjson").to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("F-ANCHOR-INVALID"), "{out}");
}

/// `aeplens anchor` skips a head its anchor file already covers, and `--add` refuses a
/// response it cannot verify.
#[test]
fn the_anchor_command_skips_covered_heads_and_refuses_unverified_answers() {
    let fixtures = PathBuf::from("tests/fixtures/tsa");
    let store = fixtures.join("stamped.ndjson");
    let root = fixtures.join("root.pem");
    let anchors = fixtures.join("anchors.ndjson");
    let (code, out, _) = common::aeplens(&[
        "anchor",
        "--tsa-certs",
        root.to_str().unwrap(),
        "-o",
        anchors.to_str().unwrap(),
        store.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("already anchored"), "{out}");
    assert!(!out.contains("openssl ts -query"), "{out}");
    // The head of a cut chain, shorter than the one an anchor proves: warned of first.
    let (code, out, err) = common::aeplens(&[
        "anchor",
        "--tsa-certs",
        root.to_str().unwrap(),
        "-o",
        anchors.to_str().unwrap(),
        fixtures.join("truncated.ndjson").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let warning = out.find("warning: tests/fixtures/tsa/anchors.ndjson:1 proves record");
    let query = out.find("openssl ts -query");
    assert!(warning.is_some() && warning < query, "{out}");
    assert!(err.contains("its tail was cut"), "{err}");
    let scratch = common::run_dir("anchor-refused");
    std::fs::create_dir_all(&scratch).unwrap();
    let target = scratch.join("anchors.ndjson");
    // No root: the answer is not verified, nothing is written.
    let (code, _, err) = common::aeplens(&[
        "anchor",
        "--add",
        fixtures.join("rsa.tsr").to_str().unwrap(),
        "-o",
        target.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("tsa-untrusted") && err.contains("--tsa-certs"),
        "{err}"
    );
    assert!(!target.exists());
    // Writing the anchor file over the evidence is refused.
    let (code, _, err) = common::aeplens(&[
        "anchor",
        "-o",
        store.to_str().unwrap(),
        store.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
}

/// `check`'s JSON on stamped records, a moved token and an anchored chain, pinned (the
/// vendored fixtures: their tokens and times do not change).
#[test]
fn check_json_with_tokens_and_anchors_is_pinned() {
    let fixtures = PathBuf::from("tests/fixtures/tsa");
    let root = fixtures.join("root.pem");
    let anchors = fixtures.join("anchors_mid.ndjson");
    let (code, doc) = check_json(
        &fixtures,
        &[
            "--tsa-certs",
            root.to_str().unwrap(),
            "--anchors",
            anchors.to_str().unwrap(),
        ],
        &["stamped.ndjson", "moved.ndjson"],
    );
    assert_eq!(
        code, 1,
        "a moved token is a time claim that does not hold: check fails"
    );
    insta::assert_json_snapshot!("tsa_check_tokens_and_anchors", doc);
}

/// The Markdown report says how far an anchored chain is covered.
#[test]
fn the_report_says_what_an_anchor_covers() {
    let fixtures = PathBuf::from("tests/fixtures/tsa");
    let path = |f: &str| fixtures.join(f).display().to_string();
    let (code, md, err) = common::aeplens(&[
        "report",
        "--keys",
        &path("keys.json"),
        "--tsa-certs",
        &path("root.pem"),
        "--anchors",
        &path("anchors_mid.ndjson"),
        &path("stamped.ndjson"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        md.contains("Anchored: the path to tests/fixtures/tsa/stamped.ndjson:4 is covered through tests/fixtures/tsa/stamped.ndjson:2 (record 2 of 4) by aeplens RSA TSA at "),
        "{md}"
    );
    assert!(md.contains("the 2 after it are not."), "{md}");
}
