//! What a reviewer trusts: Ed25519 public keys by key id (verification.md §i) from
//! keyring files, `--key` arguments and `WASMAGENT_AEP_PUBKEY_<KEYID>` environment
//! variables; the roots RFC 3161 tokens must chain to (`--tsa-certs`, d.6); and the
//! anchors of chain heads (`--anchors`, d.7).

use super::anchors::Anchor;
use super::encoding::decode_key;
use super::tsa::Roots;
use crate::load::{LoadError, parser};
use crate::model::json::Json;
use ed25519_dalek::VerifyingKey;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Key id → trusted public key, with the trusted TSA roots and anchors. Lookups fall back
/// to the `WASMAGENT_AEP_PUBKEY_*` variables read when the keyring was made
/// ([`Keyring::with_environment`]); an id with no key is "unknown key", never valid.
/// Everything a lookup can answer from is in [`Keyring::fingerprints`], so nothing kept
/// under one keyring answers for another.
#[derive(Clone, Debug, Default)]
pub struct Keyring {
    keys: BTreeMap<String, VerifyingKey>,
    /// The environment's key variables, name → value, as read once.
    environment: BTreeMap<String, String>,
    /// Roots an RFC 3161 token's signer must chain to.
    tsa_roots: Arc<Roots>,
    anchors: Arc<Vec<Anchor>>,
}

/// What every key variable's name starts with.
const ENV_PREFIX: &str = "WASMAGENT_AEP_PUBKEY_";

impl Keyring {
    /// An empty keyring that also answers from the environment's
    /// `WASMAGENT_AEP_PUBKEY_<KEYID>` variables, read now (a later change to the
    /// environment does not change what it answers).
    pub fn with_environment() -> Keyring {
        let variables = std::env::vars_os()
            .filter_map(|(name, value)| Some((name.into_string().ok()?, value)))
            .map(|(name, value)| (name, value.to_string_lossy().into_owned()));
        Keyring::with_variables(variables)
    }

    /// An empty keyring that also answers from the key variables among `variables`
    /// (name, value): an environment read elsewhere (a Spark driver's, handed to its
    /// workers). The one reader of the environment is [`Keyring::with_environment`].
    pub fn with_variables(variables: impl IntoIterator<Item = (String, String)>) -> Keyring {
        let environment = (variables.into_iter())
            .filter(|(name, _)| name.starts_with(ENV_PREFIX))
            .collect();
        Keyring {
            environment,
            ..Keyring::default()
        }
    }

    /// Adds the certificates of a PEM file (`--tsa-certs`) as TSA roots.
    pub fn add_tsa_certs(&mut self, path: &str) -> Result<usize, LoadError> {
        let pem = std::fs::read(path)
            .map_err(|e| LoadError::whole(path, format!("cannot read TSA roots: {e}")))?;
        self.add_tsa_pem(path, &pem)
    }

    /// Adds the certificates of PEM bytes read from `name` as TSA roots.
    pub fn add_tsa_pem(&mut self, name: &str, pem: &[u8]) -> Result<usize, LoadError> {
        let roots = super::tsa::roots_from_pem(pem)
            .map_err(|e| LoadError::whole(name, format!("TSA roots: {e}")))?;
        let added = roots.certs().len();
        Arc::make_mut(&mut self.tsa_roots).extend(roots);
        Ok(added)
    }

    /// Adds the anchors of an anchor file (`--anchors`).
    pub fn add_anchors(&mut self, path: &str) -> Result<usize, LoadError> {
        let anchors = super::anchors::read_file(path)?;
        let added = anchors.len();
        Arc::make_mut(&mut self.anchors).extend(anchors);
        Ok(added)
    }

    /// Adds the anchors of an anchor file's text, read from `name`.
    pub fn add_anchors_text(&mut self, name: &str, text: &str) -> Result<usize, LoadError> {
        let anchors = super::anchors::read_text(name, text)?;
        let added = anchors.len();
        Arc::make_mut(&mut self.anchors).extend(anchors);
        Ok(added)
    }

    /// The roots an RFC 3161 token's signer must chain to.
    pub fn tsa_roots(&self) -> &Roots {
        &self.tsa_roots
    }

    /// The anchors given.
    pub fn anchors(&self) -> &[Anchor] {
        &self.anchors
    }

    /// Adds a key given as 64 hex digits or base64 of 32 bytes.
    pub fn add(&mut self, key_id: &str, public_key: &str) -> Result<(), String> {
        let key = parse_public_key(public_key).map_err(|e| format!("key {key_id:?}: {e}"))?;
        self.keys.insert(key_id.to_string(), key);
        Ok(())
    }

    /// Adds a `KEY_ID=PUBKEY` argument.
    pub fn add_argument(&mut self, arg: &str) -> Result<(), String> {
        let (id, key) = arg
            .split_once('=')
            .ok_or_else(|| format!("--key {arg:?}: expected KEY_ID=PUBKEY"))?;
        self.add(id, key)
    }

    /// Adds every key of a keyring file: a JSON object `{key_id: public_key}`, or the
    /// annotated form `{"keys": [{"keyid", "public_key_hex"}]}`. An error names the file
    /// and, when it has one, the line and column (`LoadError::render` draws the caret).
    pub fn add_file(&mut self, path: &str) -> Result<usize, LoadError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| LoadError::whole(path, format!("cannot read keyring: {e}")))?;
        self.add_text(path, &text)
    }

    /// [`Keyring::add_file`] on a keyring file's text, read elsewhere (`path` names it in
    /// errors).
    pub fn add_text(&mut self, path: &str, text: &str) -> Result<usize, LoadError> {
        let at = |offset: usize, message: String| LoadError::located(path, text, offset, message);
        // Where a key's id is written, for an error about its value.
        let place_of = |id: &str| {
            let quoted = serde_json::to_string(id).unwrap_or_default();
            text.find(&quoted).unwrap_or(0)
        };
        let json = parser::parse(text)
            .map_err(|e| at(e.offset, format!("invalid JSON: {}", e.message)))?;
        let obj = json.as_object().ok_or_else(|| {
            at(
                text.len() - text.trim_start().len(),
                "a keyring is a JSON object mapping key id to public key".into(),
            )
        })?;
        let mut added = 0;
        if let Some(list) = obj.get("keys").and_then(Json::as_array) {
            for entry in list {
                let id = entry
                    .get("keyid")
                    .or_else(|| entry.get("key_id"))
                    .and_then(Json::as_str);
                let key = entry
                    .get("public_key_hex")
                    .or_else(|| entry.get("public_key"))
                    .and_then(Json::as_str);
                if let (Some(id), Some(key)) = (id, key) {
                    self.add(id, key).map_err(|e| at(place_of(id), e))?;
                    added += 1;
                }
            }
            return Ok(added);
        }
        for (id, value) in obj.effective_members() {
            let id = id.lossy();
            if id.starts_with('_') {
                continue; // comments such as "_note"
            }
            let key = value.as_str().ok_or_else(|| {
                at(
                    place_of(&id),
                    format!("key {id:?}: expected a string public key"),
                )
            })?;
            self.add(&id, key).map_err(|e| at(place_of(&id), e))?;
            added += 1;
        }
        Ok(added)
    }

    /// The trusted key for `key_id`, from the keyring or the environment.
    pub fn get(&self, key_id: &str) -> Option<VerifyingKey> {
        if let Some(k) = self.keys.get(key_id) {
            return Some(*k);
        }
        let value = self.environment.get(&env_name(key_id))?;
        parse_public_key(value).ok()
    }

    /// Everything a lookup answers from, sorted: each key held as
    /// `key_id=sha256:<fingerprint>`, each key variable of the environment as
    /// `env:NAME=sha256:<digest of its value>` (a value that is no key is still one),
    /// each TSA root as `tsa-root=sha256:<digest of its DER>`, each anchor as
    /// `anchor=sha256:<digest of its line>`. The evidence index's configuration is made
    /// of it.
    pub fn fingerprints(&self) -> Vec<String> {
        let hex = |bytes: &[u8]| crate::canon::Sha256Digest::of(bytes).to_string();
        let mut out: Vec<String> = (self.keys.iter())
            .map(|(id, key)| format!("{id}=sha256:{}", hex(key.as_bytes())))
            .chain(
                (self.environment.iter()).map(|(name, value)| {
                    format!("env:{name}=sha256:{}", hex(value.trim().as_bytes()))
                }),
            )
            .chain((self.tsa_roots.certs().iter()).map(|root| {
                let der = der::Encode::to_der(root).unwrap_or_default();
                format!("tsa-root=sha256:{}", hex(&der))
            }))
            .chain(
                (self.anchors.iter()).map(|a| format!("anchor=sha256:{}", hex(a.text.as_bytes()))),
            )
            .collect();
        out.sort();
        out
    }

    /// Every key held (for "signed by another key" diagnostics).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &VerifyingKey)> {
        self.keys.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Number of keys held.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// The environment variable that holds the key for `key_id`:
/// `WASMAGENT_AEP_PUBKEY_` + the id upper-cased with non-alphanumerics as `_`.
pub fn env_name(key_id: &str) -> String {
    let suffix: String = key_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{ENV_PREFIX}{suffix}")
}

fn parse_public_key(text: &str) -> Result<VerifyingKey, String> {
    let bytes = decode_key(text.trim())?;
    let arr: [u8; 32] = bytes
        .as_slice()
        .try_into()
        .map_err(|_| format!("an Ed25519 public key is 32 bytes, got {}", bytes.len()))?;
    VerifyingKey::from_bytes(&arr).map_err(|_| "not a valid Ed25519 point".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names_follow_the_convention() {
        assert_eq!(
            env_name("aep-signer-v1"),
            "WASMAGENT_AEP_PUBKEY_AEP_SIGNER_V1"
        );
    }

    #[test]
    fn keys_in_hex_and_base64_and_bad_lengths() {
        let mut k = Keyring::default();
        k.add(
            "a",
            "e2fdefe91550de51c255f4430b3c5cdf37f6ffb449e889fd59c884f2e6ddabd0",
        )
        .unwrap();
        k.add("b", "4v3v6RVQ3lHCVfRDCzxc3zf2/7RJ6In9WciE8ubdq9A=")
            .unwrap();
        assert_eq!(k.get("a").unwrap(), k.get("b").unwrap());
        assert!(k.add("c", "abcd").unwrap_err().contains("32 bytes"));
        assert!(k.add_argument("nokey").is_err());
        assert!(k.get("missing").is_none());
    }
}
