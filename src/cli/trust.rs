//! What the reviewer trusts, as every command that verifies takes it: Ed25519 keys
//! (`--keys`, `--key`, the environment), the roots RFC 3161 tokens must chain to
//! (`--tsa-certs`) and the anchors of chain heads (`--anchors`).

use crate::model::text::sanitize;
use clap::Args;

/// Where trusted keys, TSA roots and anchors come from.
#[derive(Args, Debug, Clone, Default)]
pub struct KeyArgs {
    /// Keyring file: a JSON object mapping key_id to a 32-byte Ed25519 public key (hex or base64). Repeatable.
    #[arg(long = "keys", value_name = "FILE")]
    pub keys: Vec<String>,
    /// One trusted key as KEY_ID=PUBKEY (hex or base64). Repeatable. Keys are also read
    /// from `WASMAGENT_AEP_PUBKEY_<KEYID>` (key id upper-cased, non-alphanumerics as _).
    #[arg(long = "key", value_name = "KEY_ID=PUBKEY")]
    pub key: Vec<String>,
    /// PEM file of the root certificates a timestamp authority must chain to. A record's
    /// RFC 3161 timestamp token is verified offline (imprint, signature, the critical
    /// timeStamping usage, validity at genTime); only one chaining to these roots proves
    /// its time (tsa-verified), any other is a claim. Repeatable.
    #[arg(long = "tsa-certs", value_name = "FILE")]
    pub tsa_certs: Vec<String>,
    /// Anchor file (NDJSON, one {"record_sha256", "authority", "proof"} a line, as
    /// `aeplens anchor --add` writes it): RFC 3161 tokens over chain heads. A chain is
    /// reported anchored through the record its anchor covers; an anchored record that is
    /// missing while its chain is loaded is F-TAIL-TRUNCATED (check fails). Repeatable.
    #[arg(long = "anchors", value_name = "FILE")]
    pub anchors: Vec<String>,
}

impl KeyArgs {
    /// Builds the keyring. The error is ready to print (escaped): a keyring file's names
    /// the file, line and column with a caret under the place; an argument's names it.
    pub fn keyring(&self) -> Result<crate::verify::Keyring, String> {
        let mut ring = crate::verify::Keyring::with_environment();
        for file in &self.keys {
            ring.add_file(file).map_err(|e| e.render())?;
        }
        for arg in &self.key {
            ring.add_argument(arg)
                .map_err(|e| format!("error: {}", sanitize(&e)))?;
        }
        for file in &self.tsa_certs {
            ring.add_tsa_certs(file).map_err(|e| e.render())?;
        }
        for file in &self.anchors {
            ring.add_anchors(file).map_err(|e| e.render())?;
        }
        Ok(ring)
    }
}
