//! Names that are `&'static str` in verdicts (rule ids, finding ids) read back from the
//! evidence index: each distinct name is allocated once for the life of the process and
//! shared after that. The index only holds names aeplens itself wrote, so the set stays
//! as small as the vocabulary.

use serde::{Deserialize, Deserializer};
use std::collections::BTreeSet;
use std::sync::Mutex;

/// A `&'static str` name in a deserialised verdict. (Spelt through this alias because
/// serde would otherwise try to borrow a `&str` field from the input.)
pub type Name = &'static str;

static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

/// The one `&'static str` equal to `name`.
pub fn intern(name: &str) -> &'static str {
    let mut names = NAMES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(&known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// Serde `deserialize_with` for a `&'static str` field.
pub fn interned<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let name = std::borrow::Cow::<'de, str>::deserialize(d)?;
    Ok(intern(&name))
}

#[cfg(test)]
mod tests {
    use super::intern;

    #[test]
    fn a_name_is_allocated_once() {
        let a = intern(&String::from("example-name"));
        let b = intern(&String::from("example-name"));
        assert_eq!(a, "example-name");
        assert!(std::ptr::eq(a, b));
        assert!(!std::ptr::eq(a, intern("another-name")));
    }
}
