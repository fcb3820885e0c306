//! Comparability badges for state digests (analysis-rules §3): exactly one of
//! comparable / comparable under a named weaker assumption / not comparable, per kind,
//! with the equality tuple used to pair digests, plus pre-vs-post and state-gap pairs.

use crate::model::json::{Json, KeySet, Obj};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The three badge states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BadgeState {
    Comparable,
    Weaker,
    NotComparable,
}

impl BadgeState {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            BadgeState::Comparable => "comparable",
            BadgeState::Weaker => "weaker",
            BadgeState::NotComparable => "not-comparable",
        }
    }
}

/// The badge of one state digest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparability {
    pub state: BadgeState,
    /// The named weaker assumption (state `weaker`).
    pub assumption: Option<Cow<'static, str>>,
    /// Why not comparable (state `not-comparable`).
    pub reason: Option<Cow<'static, str>>,
    /// True when the rule applied is aeplens's interpretation, not the protocol's.
    pub interpretation: bool,
    /// The equality tuple: two digests are compared only when these are equal.
    #[serde(skip)]
    pub tuple: Option<Box<[u8]>>,
    /// browser-dom `capture_timestamp_ms`: a different offset weakens a pair.
    #[serde(skip)]
    pub capture_offset: Option<String>,
}

/// A coverage problem that is also a finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoverageFinding {
    /// `database_id` looks like a connection string.
    Credential,
    /// `route_path` carries a concrete id segment.
    RouteNotTemplated,
}

impl Comparability {
    /// Why the badge is not plain comparable: the weaker assumption, else the reason.
    pub fn why(&self) -> Option<&str> {
        self.assumption.as_deref().or(self.reason.as_deref())
    }

    fn comparable(tuple: Box<[u8]>) -> Self {
        Comparability {
            state: BadgeState::Comparable,
            assumption: None,
            reason: None,
            interpretation: false,
            tuple: Some(tuple),
            capture_offset: None,
        }
    }
    fn weaker(
        assumption: impl Into<Cow<'static, str>>,
        tuple: Box<[u8]>,
        interpretation: bool,
    ) -> Self {
        Comparability {
            state: BadgeState::Weaker,
            assumption: Some(assumption.into()),
            reason: None,
            interpretation,
            tuple: Some(tuple),
            capture_offset: None,
        }
    }
    fn not(reason: impl Into<Cow<'static, str>>) -> Self {
        Comparability {
            state: BadgeState::NotComparable,
            assumption: None,
            reason: Some(reason.into()),
            interpretation: false,
            tuple: None,
            capture_offset: None,
        }
    }
}

/// Identity fields per kind (§3): the `target_boundary` of the decision envelope.
pub fn identity_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "git-tree" => &["tree_sha", "tree_root"],
        "db-rowset" => &["database_id", "schema", "table"],
        "sandbox-fs" => &["base_image_digest", "sandbox_root"],
        "browser-dom" => &["origin", "route_path", "frame_path"],
        "memory-bag" | "kv-snapshot" => &["namespace"],
        "other" => &["other_kind", "coverage_schema_version"],
        _ => &[],
    }
}

/// The equality-tuple fields of each kind (§3), identity fields first.
fn tuple_fields(kind: &str) -> &'static KeySet {
    static GIT: KeySet = KeySet::new(&["tree_sha", "tree_root", "path_predicate", "excludes"]);
    static DB: KeySet = KeySet::new(&[
        "database_id",
        "schema",
        "table",
        "query_hash",
        "snapshot_id",
    ]);
    static SANDBOX: KeySet = KeySet::new(&[
        "base_image_digest",
        "sandbox_root",
        "include_predicates",
        "exclude_predicates",
        "symlink_policy",
        "generated_paths_included",
    ]);
    static BROWSER: KeySet = KeySet::new(&[
        "origin",
        "route_path",
        "frame_path",
        "selector_root",
        "selector_kind",
        "capture_phase",
        "attribute_order",
        "whitespace_policy",
    ]);
    static MEMORY: KeySet = KeySet::new(&[
        "namespace",
        "key_predicate",
        "redaction_profile",
        "durable_vs_scratch",
    ]);
    static OTHER: KeySet = KeySet::new(&["other_kind", "coverage_schema_version"]);
    static NONE: KeySet = KeySet::new(&[]);
    match kind {
        "git-tree" => &GIT,
        "db-rowset" => &DB,
        "sandbox-fs" => &SANDBOX,
        "browser-dom" => &BROWSER,
        "memory-bag" | "kv-snapshot" => &MEMORY,
        "other" => &OTHER,
        _ => &NONE,
    }
}

/// The identity fields of a kind and the coverage values of its tuple fields, read in
/// one pass over the coverage members: `(names, values)`, identity fields first.
pub fn tuple_values<'a>(
    kind: &str,
    coverage: &'a Obj,
) -> (&'static [&'static str], [Option<&'a Json>; MAX_TUPLE]) {
    let fields = tuple_fields(kind);
    let mut values = [None; MAX_TUPLE];
    coverage.get_each(fields, &mut values[..fields.names().len()]);
    (fields.names(), values)
}

/// The most tuple fields any kind has.
pub const MAX_TUPLE: usize = 8;

/// The badge for the state digests of an action (one kind and coverage cover both:
/// `state_digest_kind`, `state_digest_coverage`), and any coverage finding.
pub fn badge(
    kind: Option<&Json>,
    coverage: Option<&Json>,
) -> (Comparability, Option<CoverageFinding>) {
    let (Some(kind), Some(coverage)) = (kind, coverage) else {
        return (Comparability::not("no coverage descriptor"), None);
    };
    let (Some(kind), Some(cov)) = (kind.as_str(), coverage.as_object()) else {
        return (Comparability::not("no coverage descriptor"), None);
    };
    let (fields, values) = tuple_values(kind, cov);
    let values = &values[..fields.len()];
    let identity = identity_fields(kind).len();
    if kind != "other" && values[..identity].iter().any(Option::is_none) {
        let missing: Vec<&str> = fields[..identity]
            .iter()
            .zip(values)
            .filter(|(_, v)| v.is_none())
            .map(|(f, _)| *f)
            .collect();
        return (
            Comparability::not(format!("identity incomplete: {}", missing.join(", "))),
            None,
        );
    }
    let tuple = || equality_tuple(kind, values);
    let text = |i: usize| values[i].and_then(Json::as_str);
    match kind {
        "git-tree" => (Comparability::comparable(tuple()), None),
        "db-rowset" => {
            let id = text(0).unwrap_or("");
            if ["://", "@", "password="].iter().any(|p| {
                id.as_bytes()
                    .windows(p.len())
                    .any(|w| w.eq_ignore_ascii_case(p.as_bytes()))
            }) {
                return (
                    Comparability::not("database_id looks like a connection string"),
                    Some(CoverageFinding::Credential),
                );
            }
            if values[4].is_some() {
                (Comparability::comparable(tuple()), None)
            } else {
                (
                    Comparability::weaker("best-effort, no snapshot", tuple(), false),
                    None,
                )
            }
        }
        "sandbox-fs" => {
            if values[4].is_some() && values[5].is_some() {
                (Comparability::comparable(tuple()), None)
            } else {
                (
                    Comparability::weaker(
                        "unspecified symlink/generated-path policy",
                        tuple(),
                        true,
                    ),
                    None,
                )
            }
        }
        "browser-dom" => {
            let route = text(1).unwrap_or("");
            let finding =
                route_has_concrete_id(route).then_some(CoverageFinding::RouteNotTemplated);
            let mut c = Comparability::comparable(tuple());
            c.capture_offset = cov.get("capture_timestamp_ms").map(|v| format!("{v:?}"));
            (c, finding)
        }
        "memory-bag" | "kv-snapshot" => (memory_badge(cov, text(3), tuple), None),
        "other" => match (text(0), text(1)) {
            (Some(k), Some(v)) if k.contains('.') => (
                Comparability::weaker(format!("vendor-defined equality ({k}@{v})"), tuple(), false),
                None,
            ),
            _ => (
                Comparability::not(
                    "other kind without a namespaced other_kind and coverage_schema_version",
                ),
                None,
            ),
        },
        _ => (Comparability::not("unknown kind"), None),
    }
}

fn memory_badge(
    cov: &Obj,
    durability: Option<&str>,
    tuple: impl FnOnce() -> Box<[u8]>,
) -> Comparability {
    let versioned = ["vector_clock", "read_timestamp_ms", "generation_number"]
        .iter()
        .any(|f| cov.get(f).is_some());
    match durability {
        Some("durable-only") if versioned => Comparability::comparable(tuple()),
        Some("durable-only") => Comparability::weaker("no version boundary", tuple(), false),
        Some("scratch-only") => Comparability::not("scratch state is not portable"),
        Some("mixed") => {
            let partition = cov.get("mixed_partition");
            let basis = partition
                .and_then(|p| p.get("audit_equality_basis"))
                .and_then(Json::as_str);
            match (partition, basis) {
                (None, _) => Comparability::not("mixed durable/scratch without mixed_partition"),
                (Some(_), Some("durable-only")) => {
                    Comparability::weaker("durable subset only", tuple(), false)
                }
                (Some(_), Some("none")) => {
                    Comparability::not("mixed partition with audit_equality_basis none")
                }
                (Some(_), _) => Comparability::not("mixed partition without an equality basis"),
            }
        }
        _ => Comparability {
            interpretation: true,
            ..Comparability::not("durable_vs_scratch not recorded: durability unknown")
        },
    }
}

/// The equality tuple: kind plus each tuple field's value (absent kept distinct), as
/// bytes compared only for equality. Each value is length-prefixed and tagged, so no
/// value can imitate a field boundary or a value of another type.
fn equality_tuple(kind: &str, values: &[Option<&Json>]) -> Box<[u8]> {
    let mut t = Vec::with_capacity(
        4 + kind.len()
            + values
                .iter()
                .map(|v| 5 + v.map_or(0, value_len))
                .sum::<usize>(),
    );
    t.extend_from_slice(&(kind.len() as u32).to_le_bytes());
    t.extend_from_slice(kind.as_bytes());
    for v in values {
        let (tag, bytes): (u8, Cow<'_, [u8]>) = match v {
            Some(Json::String(s)) => (b's', Cow::Borrowed(s.bytes())),
            Some(v) => (b'j', Cow::Owned(serde_json::to_vec(v).unwrap_or_default())),
            None => (b'-', Cow::Borrowed(&[][..])),
        };
        t.push(tag);
        t.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        t.extend_from_slice(&bytes);
    }
    t.into_boxed_slice()
}

/// The bytes a string value adds to a tuple (other values are measured when written).
fn value_len(v: &Json) -> usize {
    match v {
        Json::String(s) => s.bytes().len(),
        _ => 0,
    }
}

/// True when a path segment is all digits or a UUID (not a template).
fn route_has_concrete_id(route: &str) -> bool {
    route.split('/').any(|seg| {
        (!seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()))
            || (seg.len() == 36
                && seg.bytes().enumerate().all(|(i, b)| {
                    if [8, 13, 18, 23].contains(&i) {
                        b == b'-'
                    } else {
                        b.is_ascii_hexdigit()
                    }
                }))
    })
}

/// The outcome of comparing two digests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Comparison {
    Unchanged,
    Changed,
    /// The badges do not allow a comparison (the note says why).
    NotCompared,
}

impl Comparison {
    /// The name used in output.
    pub fn name(self) -> &'static str {
        match self {
            Comparison::Unchanged => "unchanged",
            Comparison::Changed => "changed",
            Comparison::NotCompared => "not-compared",
        }
    }
}

/// What comparing two digests says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairVerdict {
    pub verdict: Comparison,
    /// Under which assumption, or why not compared.
    pub note: Option<Cow<'static, str>>,
}

/// Compares two digests with their badges: only when both are comparable (or both
/// weaker under the same assumption) and their equality tuples match.
pub fn compare(a: (&str, &Comparability), b: (&str, &Comparability)) -> PairVerdict {
    let (da, ca) = a;
    let (db, cb) = b;
    let not = |why: Cow<'static, str>| PairVerdict {
        verdict: Comparison::NotCompared,
        note: Some(why),
    };
    if ca.state == BadgeState::NotComparable || cb.state == BadgeState::NotComparable {
        let why = ca
            .reason
            .clone()
            .or_else(|| cb.reason.clone())
            .unwrap_or_default();
        return not(format!("not comparable: {why}").into());
    }
    // One badge covers both digests of an action: nothing to compare but the digests.
    let same_badge = std::ptr::eq(ca, cb);
    if !same_badge && (ca.state != cb.state || ca.assumption != cb.assumption) {
        return not("the two digests are comparable under different assumptions".into());
    }
    if !same_badge && ca.tuple != cb.tuple {
        return not("different equality tuples (not the same observed scope)".into());
    }
    let offsets_differ = ca.capture_offset.is_some()
        && cb.capture_offset.is_some()
        && ca.capture_offset != cb.capture_offset;
    PairVerdict {
        verdict: if da == db {
            Comparison::Unchanged
        } else {
            Comparison::Changed
        },
        note: if offsets_differ {
            Some(Cow::Borrowed(
                "same phase, different capture offset (interpretation)",
            ))
        } else {
            ca.assumption.clone()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equality_tuples_keep_field_boundaries_and_value_types() {
        let parsed = crate::load::parser::parse(
            r#"[{"tree_sha":"as","tree_root":"b"},{"tree_sha":"a","tree_root":"sb"},
                {"tree_sha":"1","tree_root":"c"},{"tree_sha":1,"tree_root":"c"},
                {"tree_root":"b","tree_sha":"as"}]"#,
        )
        .unwrap();
        let kind = Json::String("git-tree".into());
        let tuples: Vec<_> = parsed
            .as_array()
            .unwrap()
            .iter()
            .map(|cov| badge(Some(&kind), Some(cov)).0.tuple.unwrap())
            .collect();
        assert_ne!(
            tuples[0], tuples[1],
            "a value must not spill into the next field"
        );
        assert_ne!(tuples[2], tuples[3], "a string and a number must differ");
        assert_eq!(tuples[0], tuples[4], "equal coverage, equal tuple");
    }

    #[test]
    fn identity_fields_lead_every_tuple() {
        for kind in [
            "git-tree",
            "db-rowset",
            "sandbox-fs",
            "browser-dom",
            "memory-bag",
            "kv-snapshot",
            "other",
        ] {
            let (identity, tuple) = (identity_fields(kind), tuple_fields(kind).names());
            assert!(tuple.len() <= MAX_TUPLE, "{kind}");
            assert_eq!(identity, &tuple[..identity.len()], "{kind}");
        }
    }
}
