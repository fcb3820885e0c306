//! A one-pass index of the action members the analysis reads. Every per-action view
//! reads some thirty members; looking each up by scanning the member list costs a
//! thousand key comparisons per action, so the members are sorted into a fixed table
//! once (one hash and one comparison per member) and read from it in O(1).

use super::json::{Json, Obj, same_bytes};
use super::prefetch;

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
const SLOTS: usize = 64;
const EMPTY: u8 = u8::MAX;

/// A perfect hash of the key names (no two keys share a slot; the table below fails
/// to compile if a new key collides): length and three of the bytes.
const fn slot_of(name: &[u8]) -> usize {
    let n = name.len();
    if n == 0 {
        return 0;
    }
    (n + name[0] as usize * 2 + name[n - 1] as usize * 57 + name[n / 2] as usize) % SLOTS
}

/// Slot → key index, built at compile time.
const TABLE: [u8; SLOTS] = {
    let mut table = [EMPTY; SLOTS];
    let mut i = 0;
    while i < KEYS {
        let s = slot_of(Key::ALL[i].name().as_bytes());
        assert!(table[s] == EMPTY, "two keys share a slot: adjust slot_of");
        table[s] = i as u8;
        i += 1;
    }
    table
};

impl Key {
    /// The key named `name`, if the analysis reads it: one slot, one comparison.
    #[inline]
    pub fn of(name: &[u8]) -> Option<Key> {
        let key = *Key::ALL.get(TABLE[slot_of(name)] as usize)?;
        same_bytes(key.name().as_bytes(), name).then_some(key)
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
                // Nested objects (decision, drift, coverage, lease evidence) are read
                // next: ask for their members now so the loads overlap.
                if let Json::Object(o) = v {
                    prefetch::at(o.members.as_ptr());
                }
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
