//! What the generated stores share: a tiny deterministic generator (xorshift) and the
//! emitters' test keys. A `#[path]` module `generated` beside `incident.rs` and
//! `reference.rs`, which use it.

use sha2::{Digest, Sha256};

/// A tiny deterministic generator (xorshift), so a store is reproducible.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A `sha256:` digest of four draws.
    pub fn digest(&mut self) -> String {
        format!(
            "sha256:{:016x}{:016x}{:016x}{:016x}",
            self.next(),
            self.next(),
            self.next(),
            self.next()
        )
    }
}

/// Three emitters' keys, `NAME-key-1` … `NAME-key-3`, each seeded by the SHA-256 of
/// `aeplens-NAME-key-N`.
pub fn emitter_keys(name: &str) -> Vec<(String, ed25519_dalek::SigningKey)> {
    (1..=3)
        .map(|i| {
            let seed: [u8; 32] = Sha256::digest(format!("aeplens-{name}-key-{i}")).into();
            (
                format!("{name}-key-{i}"),
                aeplens::verify::sign::signing_key(&seed),
            )
        })
        .collect()
}

/// The keyring file for `keys` (`{"key id": "public key hex"}`).
pub fn keyring_json(keys: &[(String, ed25519_dalek::SigningKey)]) -> String {
    let entries: Vec<String> = keys
        .iter()
        .map(|(id, k)| {
            let hex = aeplens::canon::hex(k.verifying_key().as_bytes());
            format!("  \"{id}\": \"{hex}\"")
        })
        .collect();
    format!("{{\n{}\n}}\n", entries.join(",\n"))
}

/// Signs a record (a DSSE envelope, or the inline signature) and appends it as the
/// emitter's store does: one line, its members in the order they were written; about
/// one in a hundred appended twice (a retried append).
pub fn sign_and_append(
    out: &mut impl std::io::Write,
    record: &mut aeplens::model::json::Json,
    (key_id, key): (&str, &ed25519_dalek::SigningKey),
    dsse: bool,
    rng: &mut Rng,
) -> std::io::Result<()> {
    if dsse {
        aeplens::verify::sign::sign_dsse(record, key_id, key);
    } else {
        aeplens::verify::sign::sign_legacy(record, key_id, key);
    }
    let line = serde_json::to_string(record).unwrap_or_default();
    out.write_all(line.as_bytes())?;
    out.write_all(b"\n")?;
    if rng.below(100) == 0 {
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
    }
    Ok(())
}
