//! A one-pass index of the action members the analysis reads. Every per-action view
//! reads some thirty members; looking each up by scanning the member list costs a
//! thousand key comparisons per action, so the members are sorted into a fixed table
//! once (one hash and one comparison per member) and read from it in O(1).

use super::json::{Json, Obj, same_bytes};
use std::sync::LazyLock;

macro_rules! keys {
    ($($key:ident = $name:literal,)*) => {
        /// An action member the analysis reads, by name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub enum Key { $($key,)* }

        impl Key {
            /// Every key, in declaration order.
            pub const ALL: &'static [Key] = &[$(Key::$key,)*];

            /// The member name.
            pub const fn name(self) -> &'static str {
                match self { $(Key::$key => $name,)* }
            }
        }
    };
}

keys! {
    ActionId = "action_id",
    ToolName = "tool_name",
    ParentActionId = "parent_action_id",
    CausalChainId = "causal_chain_id",
    ScopeLeaseId = "scope_lease_id",
    ApprovalContextHash = "approval_context_hash",
    TimestampMs = "timestamp_ms",
    SideEffectClass = "side_effect_class",
    StateChanging = "state_changing",
    CapabilityDecision = "capability_decision",
    ArgumentDrift = "argument_drift",
    BoundedLeaseEvidence = "bounded_lease_evidence",
    PermissionGate = "permission_gate",
    StateDigestKind = "state_digest_kind",
    StateDigestCoverage = "state_digest_coverage",
    PreStateDigest = "pre_state_digest",
    PostStateDigest = "post_state_digest",
    ArgumentsDigest = "arguments_digest",
    Outcome = "outcome",
    ExitCode = "exit_code",
    ResultDigest = "result_digest",
    InputTaintLabels = "input_taint_labels",
    OutputTaintLabels = "output_taint_labels",
    MemoryReadRefs = "memory_read_refs",
    MemoryWriteRefs = "memory_write_refs",
    McpHeaderRisk = "mcp_header_risk",
}

const KEYS: usize = Key::ALL.len();
const SLOTS: usize = 256;
const EMPTY: u8 = u8::MAX;

/// A cheap hash of a member name: its length and three of its bytes.
fn slot_of(name: &[u8]) -> usize {
    let (Some(&first), Some(&last)) = (name.first(), name.last()) else {
        return 0;
    };
    let mid = name[name.len() / 2] as usize;
    (name.len() * 151 + first as usize * 31 + last as usize * 7 + mid * 3) % SLOTS
}

/// Open-addressed table from [`slot_of`] to key index.
static TABLE: LazyLock<[u8; SLOTS]> = LazyLock::new(|| {
    let mut table = [EMPTY; SLOTS];
    for (i, key) in Key::ALL.iter().enumerate() {
        let mut s = slot_of(key.name().as_bytes());
        while table[s] != EMPTY {
            s = (s + 1) % SLOTS;
        }
        table[s] = i as u8;
    }
    table
});

impl Key {
    /// The key named `name`, if the analysis reads it.
    pub fn of(name: &[u8]) -> Option<Key> {
        let table = &*TABLE;
        let mut s = slot_of(name);
        loop {
            let i = table[s];
            if i == EMPTY {
                return None;
            }
            let key = Key::ALL[i as usize];
            if same_bytes(key.name().as_bytes(), name) {
                return Some(key);
            }
            s = (s + 1) % SLOTS;
        }
    }
}

/// The indexed members of one action (the last one when a key is repeated, as
/// [`Obj::get`]).
#[derive(Clone, Copy, Debug)]
pub struct ActionFields<'a> {
    values: [Option<&'a Json>; KEYS],
}

impl<'a> ActionFields<'a> {
    /// Indexes an action in one pass over its members.
    pub fn of(action: &'a Obj) -> ActionFields<'a> {
        let mut values = [None; KEYS];
        for (k, v) in &action.members {
            if let Some(key) = Key::of(k.bytes()) {
                values[key as usize] = Some(v);
            }
        }
        ActionFields { values }
    }

    /// The member, if present.
    pub fn get(&self, key: Key) -> Option<&'a Json> {
        self.values[key as usize]
    }

    /// The member when it is a string.
    pub fn str(&self, key: Key) -> Option<&'a str> {
        self.get(key).and_then(Json::as_str)
    }

    /// The member when it is an object.
    pub fn obj(&self, key: Key) -> Option<&'a Obj> {
        self.get(key).and_then(Json::as_object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_found_by_its_name_and_nothing_else_is() {
        for &key in Key::ALL {
            assert_eq!(Key::of(key.name().as_bytes()), Some(key));
        }
        for other in [
            "",
            "a",
            "action",
            "action_ids",
            "run_id",
            "actions",
            "Outcome",
        ] {
            assert_eq!(Key::of(other.as_bytes()), None, "{other}");
        }
    }

    #[test]
    fn fields_agree_with_get_including_repeated_keys() {
        let parsed = crate::load::parser::parse(
            r#"{"action_id":"a","outcome":"x","exit_code":1,"outcome":"y","extra":2}"#,
        )
        .unwrap();
        let obj = parsed.as_object().unwrap();
        let fields = ActionFields::of(obj);
        for &key in Key::ALL {
            assert_eq!(fields.get(key), obj.get(key.name()), "{}", key.name());
        }
        assert_eq!(fields.str(Key::Outcome), Some("y"));
    }
}
