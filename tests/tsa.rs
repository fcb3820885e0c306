//! RFC 3161 time-stamp tokens (verification.md d.6) made by a real authority: openssl,
//! answering `openssl ts -query` with `openssl ts -reply` (tests/tsa/make_authority.sh),
//! RSA, ECDSA P-256 and P-384, an expired TSA certificate, a root that issued none of them,
//! a token moved to other bytes, and broken DER. `scripts/test` installs openssl when
//! missing; without it these tests fail in CI and are skipped elsewhere.

mod common;

use aeplens::verify::tsa::{TsaState, roots_from_pem, verify};
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
        assert_eq!(check.state, TsaState::Verified, "{file}: {}", check.reason);
        assert_eq!(check.tsa.as_deref(), Some(tsa));
        assert_eq!(check.accuracy_ms, Some(1500), "secs:1, millisecs:500");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        let gen_time = check.gen_time_ms.unwrap();
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
    assert_eq!(moved.state, TsaState::ImprintMismatch, "{}", moved.reason);
    // No root given, or a root that issued nothing of it: never proven.
    let none = verify(&rsa, STAMPED, &[]);
    assert_eq!(none.state, TsaState::Untrusted);
    assert!(none.reason.contains("--tsa-certs"), "{}", none.reason);
    let foreign = verify(&rsa, STAMPED, &other);
    assert_eq!(foreign.state, TsaState::Untrusted, "{}", foreign.reason);
    // The TSA's certificate had expired when it signed.
    let expired = verify(&read(&dir, "expired.tsr"), STAMPED, &root);
    assert_eq!(expired.state, TsaState::Invalid);
    assert!(
        expired.reason.contains("not valid at genTime"),
        "{}",
        expired.reason
    );
    // A flipped bit in the signature.
    let mut flipped = rsa.clone();
    let at = flipped.len() - 5;
    flipped[at] ^= 1;
    let bad = verify(&flipped, STAMPED, &root);
    assert_eq!(bad.state, TsaState::Invalid, "{}", bad.reason);
    // Truncated DER, and DER that is no token.
    for broken in [
        &rsa[..100],
        &rsa[..rsa.len() - 1],
        &read(&dir, "root.pem")[..],
        b"\x30\x03\x02\x01\x05",
    ] {
        let check = verify(broken, STAMPED, &root);
        assert_eq!(check.state, TsaState::Malformed, "{}", check.reason);
    }
}

#[test]
fn a_pem_file_without_a_certificate_is_refused() {
    assert!(roots_from_pem(b"not a certificate").is_err());
    assert!(roots_from_pem(b"").is_err());
}
