//! Trusted Ed25519 public keys by key id (verification.md §i): keyring files, `--key`
//! arguments and `WASMAGENT_AEP_PUBKEY_<KEYID>` environment variables.

use super::encoding::decode_key;
use crate::load::{LoadError, parser};
use crate::model::json::Json;
use ed25519_dalek::VerifyingKey;
use std::collections::BTreeMap;

/// Key id → trusted public key. Lookups fall back to the environment; an id with no key
/// is "unknown key", never valid.
#[derive(Clone, Debug, Default)]
pub struct Keyring {
    keys: BTreeMap<String, VerifyingKey>,
    /// When false, the environment is not consulted (tests).
    pub use_environment: bool,
}

impl Keyring {
    /// An empty keyring that also consults the environment.
    pub fn with_environment() -> Keyring {
        Keyring {
            keys: BTreeMap::new(),
            use_environment: true,
        }
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
        let at = |offset: usize, message: String| LoadError::located(path, &text, offset, message);
        // Where a key's id is written, for an error about its value.
        let place_of = |id: &str| {
            let quoted = serde_json::to_string(id).unwrap_or_default();
            text.find(&quoted).unwrap_or(0)
        };
        let json = parser::parse(&text)
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
        if self.use_environment {
            let value = std::env::var(env_name(key_id)).ok()?;
            return parse_public_key(&value).ok();
        }
        None
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
    format!("WASMAGENT_AEP_PUBKEY_{suffix}")
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
