use super::*;
use crate::load::parse_input;

fn rules(record: &str) -> Vec<(&'static str, RuleSeverity)> {
    let input = parse_input("t".into(), record.as_bytes());
    check(&input.records[0])
        .into_iter()
        .map(|v| (v.rule, v.severity))
        .collect()
}

fn with_actions(extra: &str, actions: &str) -> String {
    format!(
        r#"{{"schema_version":"aep/v0.3","run_id":"r","created_at_ms":1{extra},"actions":[{actions}]}}"#
    )
}

const READ: &str = r#"{"action_id":"a","tool_name":"t","state_changing":false,"timestamp_ms":1780000000000,"side_effect_class":"read"}"#;

#[test]
fn v1_side_effect_max() {
    assert!(
        rules(&with_actions(
            r#","run_side_effect_class_max":"read""#,
            READ
        ))
        .is_empty()
    );
    assert_eq!(
        rules(&with_actions(
            r#","run_side_effect_class_max":"unknown""#,
            READ
        )),
        vec![("V1", RuleSeverity::Error)]
    );
}

#[test]
fn v3_digests_need_kind_and_coverage() {
    let bare = r#"{"action_id":"a","tool_name":"t","state_changing":true,"timestamp_ms":1780000000000,"post_state_digest":"x"}"#;
    assert_eq!(
        rules(&with_actions("", bare)),
        vec![("V3", RuleSeverity::Error)]
    );
    let full = r#"{"action_id":"a","tool_name":"t","state_changing":true,"timestamp_ms":1780000000000,"post_state_digest":"x","state_digest_kind":"git-tree","state_digest_coverage":{}}"#;
    assert!(rules(&with_actions("", full)).is_empty());
}

#[test]
fn v4_and_v5_on_decisions() {
    let allow_with_reason = r#"{"action_id":"a","tool_name":"t","state_changing":true,"timestamp_ms":1780000000000,"capability_decision":{"capability":"c","subject":"s","resource":"r","decision":"allow","deny_reason_class":"argument"}}"#;
    assert_eq!(
        rules(&with_actions("", allow_with_reason)),
        vec![("V4", RuleSeverity::Error)]
    );
    let deny_with_reason = allow_with_reason.replace("\"allow\"", "\"deny\"");
    assert!(rules(&with_actions("", &deny_with_reason)).is_empty());
    let lease = r#"{"action_id":"a","tool_name":"t","state_changing":true,"timestamp_ms":1780000000000,"capability_decision":{"capability":"c","subject":"s","resource":"r","decision":"allow","approval_mode":"bounded-lease"}}"#;
    assert_eq!(
        rules(&with_actions("", lease)),
        vec![("V5", RuleSeverity::Error)]
    );
    let leased = lease.replace(
        "\"timestamp_ms\":1780000000000,",
        "\"timestamp_ms\":1780000000000,\"scope_lease_id\":\"l\",",
    );
    assert!(rules(&with_actions("", &leased)).is_empty());
}

#[test]
fn v15_attribution() {
    let ok = r#","run_attribution_backing_floor":"operator_asserted","run_attribution_backing_observed":["operator_asserted","principal_key_signed"]"#;
    assert!(rules(&with_actions(ok, READ)).is_empty());
    for bad in [
        r#","run_attribution_backing_floor":"principal_key_signed","run_attribution_backing_observed":["operator_asserted","principal_key_signed"]"#,
        r#","run_attribution_backing_floor":"unknown","run_attribution_backing_observed":["operator_asserted"]"#,
        r#","run_attribution_backing_floor":"unknown""#,
        r#","run_attribution_backing_observed":["unknown"]"#,
        r#","run_attribution_backing_floor":"unknown","run_attribution_backing_observed":[]"#,
        r#","authorization_evidence_count":-1"#,
    ] {
        assert!(
            rules(&with_actions(bad, READ)).contains(&("V15", RuleSeverity::Error)),
            "{bad}"
        );
    }
}

#[test]
fn v16_ids_parents_and_cycles() {
    let act = |id: &str, parent: &str| {
        format!(
            r#"{{"action_id":"{id}","tool_name":"t","state_changing":false,"timestamp_ms":1780000000000,"parent_action_id":"{parent}"}}"#
        )
    };
    assert_eq!(
        rules(&with_actions("", &act("a", "a"))),
        vec![("V16", RuleSeverity::Error)]
    );
    assert_eq!(
        rules(&with_actions("", &act("a", "zz"))),
        vec![("V16", RuleSeverity::Warning)]
    );
    let cycle = format!("{},{},{}", act("a", "b"), act("b", "c"), act("c", "a"));
    assert_eq!(
        rules(&with_actions("", &cycle)),
        vec![("V16", RuleSeverity::Error)]
    );
    let dup = format!("{READ},{READ}");
    assert_eq!(
        rules(&with_actions("", &dup)),
        vec![("V16", RuleSeverity::Error)]
    );
    let chain: Vec<String> = (0..50_000)
        .map(|i| act(&format!("n{i}"), &format!("n{}", i + 1)))
        .collect();
    let long = rules(&with_actions("", &chain.join(",")));
    assert_eq!(
        long,
        vec![("V16", RuleSeverity::Warning)],
        "a long parent chain is linear and ends dangling"
    );
}

/// An action with `extra` JSON members spliced in.
fn act(extra: &str) -> String {
    format!(
        r#"{{"action_id":"a","tool_name":"t","state_changing":true,"timestamp_ms":1780000000000,"side_effect_class":"mutate-external"{extra}}}"#
    )
}

fn only(extra: &str) -> Vec<(&'static str, RuleSeverity)> {
    rules(&with_actions("", &act(extra)))
}

const LEASE_GRANT: &str = r#","scope_lease_id":"L1","capability_decision":{"capability":"c","subject":"s","resource":"r","decision":"allow","approval_grant":"bounded-lease","approval_decision":"allow"}"#;

#[test]
fn v2_state_changing_matches_class() {
    assert!(only("").is_empty());
    assert_eq!(
        rules(&with_actions("", &READ.replace("false", "true"))),
        vec![("V2", RuleSeverity::Warning)]
    );
}

#[test]
fn v6_v7_lease_evidence() {
    let ev = |id: &str, g: u64, e: u64, dur: u64| {
        format!(
            r#"{LEASE_GRANT},"argument_drift":{{"result":"not-checked"}},"bounded_lease_evidence":{{"lease_id":"{id}","lease_granted_at_ms":{g},"lease_expires_at_ms":{e},"lease_duration_ms":{dur},"execution_started_at_ms":{g}}}"#
        )
    };
    assert!(only(&ev("L1", 10, 20, 10)).is_empty());
    assert_eq!(
        only(&ev("L2", 10, 20, 10)),
        vec![("V6", RuleSeverity::Error)]
    );
    assert_eq!(
        only(&ev("L1", 10, 20, 5)),
        vec![("V7", RuleSeverity::Error)]
    );
    assert!(only(&ev("L1", 20, 10, 0)).contains(&("V7", RuleSeverity::Error)));
    let wrong_grant = r#","scope_lease_id":"L1","bounded_lease_evidence":{"lease_id":"L1"}"#;
    assert_eq!(only(wrong_grant), vec![("V6", RuleSeverity::Error)]);
}

#[test]
fn v8_v9_drift_binding_and_presence() {
    let bound = |id: &str| {
        format!(
            r#"{LEASE_GRANT},"argument_drift":{{"result":"not-checked","approval_or_lease_id":"{id}"}}"#
        )
    };
    assert!(only(&bound("L1")).is_empty());
    assert_eq!(only(&bound("other")), vec![("V8", RuleSeverity::Error)]);
    assert_eq!(only(LEASE_GRANT), vec![("V9", RuleSeverity::Error)]);
    let none_grant = LEASE_GRANT.replace("bounded-lease", "none");
    assert!(only(&none_grant).is_empty());
}

#[test]
fn v10_drift_consistency() {
    let deny = r#","capability_decision":{"capability":"c","subject":"s","resource":"r","decision":"deny","deny_reason_class":"argument"}"#;
    let allow = deny.replace("\"deny\",\"deny_reason_class\":\"argument\"", "\"allow\"");
    let js = |detected: bool, resolution: &str, b: &str| {
        format!(
            r#","argument_drift":{{"detected":{detected},"approved_args_digest":"a","observed_args_digest":"{b}","resolution":"{resolution}"}}"#
        )
    };
    assert!(only(&format!("{deny}{}", js(true, "denied", "b"))).is_empty());
    assert!(only(&format!("{allow}{}", js(false, "matched", "a"))).is_empty());
    for bad in [
        format!("{allow}{}", js(true, "denied", "b")),
        format!("{allow}{}", js(true, "matched", "a")),
        format!("{allow}{}", js(false, "matched", "b")),
        format!(
            r#"{allow},"argument_drift":{{"result":"drifted","approved_arg_digest":"a","observed_arg_digest":"b"}}"#
        ),
    ] {
        assert!(only(&bad).contains(&("V10", RuleSeverity::Error)), "{bad}");
    }
}

#[test]
fn v11_one_shot_needs_approval_hash() {
    let one_shot = r#","capability_decision":{"capability":"c","subject":"s","resource":"r","decision":"allow","approval_mode":"one-shot-payload"}"#;
    assert_eq!(only(one_shot), vec![("V11", RuleSeverity::Warning)]);
    assert!(only(&format!(r#"{one_shot},"approval_context_hash":"h""#)).is_empty());
}

#[test]
fn v12_reapproval_carries_its_own_approval() {
    let parent = r#"{"action_id":"p","tool_name":"t","state_changing":true,"timestamp_ms":1780000000000,"side_effect_class":"mutate-external","approval_context_hash":"h1","capability_decision":{"capability":"c","subject":"s","resource":"r","decision":"deny","deny_reason_class":"argument"},"argument_drift":{"detected":true,"approved_args_digest":"a","observed_args_digest":"b","resolution":"denied"}}"#;
    let child = |hash: &str| {
        format!(
            r#"{{"action_id":"c","tool_name":"t","state_changing":true,"timestamp_ms":1780000000001,"side_effect_class":"mutate-external","parent_action_id":"p","approval_context_hash":"{hash}"}}"#
        )
    };
    assert!(rules(&with_actions("", &format!("{parent},{}", child("h2")))).is_empty());
    assert_eq!(
        rules(&with_actions("", &format!("{parent},{}", child("h1")))),
        vec![("V12", RuleSeverity::Warning)]
    );
}

#[test]
fn v13_v14_coverage_shapes() {
    let cov = |kind: &str, c: &str| {
        format!(
            r#","state_digest_kind":"{kind}","state_digest_coverage":{c},"pre_state_digest":"x""#
        )
    };
    assert!(
        only(&cov(
            "other",
            r#"{"other_kind":"com.example.ts","coverage_schema_version":"1"}"#
        ))
        .is_empty()
    );
    assert_eq!(
        only(&cov("other", r#"{"other_kind":"ts"}"#)),
        vec![("V13", RuleSeverity::Warning)]
    );
    assert_eq!(
        only(&cov(
            "memory-bag",
            r#"{"namespace":"n","durable_vs_scratch":"mixed"}"#
        )),
        vec![("V14", RuleSeverity::Warning)]
    );
    assert!(
        only(&cov(
            "kv-snapshot",
            r#"{"namespace":"n","durable_vs_scratch":"mixed","mixed_partition":{"audit_equality_basis":"none"}}"#
        ))
        .is_empty()
    );
}

#[test]
fn v18_times() {
    let early = READ.replace("1780000000000", "5000");
    assert_eq!(
        rules(&with_actions("", &early)),
        vec![("V18", RuleSeverity::Warning)]
    );
    let parent = READ.replace("\"a\"", "\"p\"");
    let child = READ.replace(
        "\"timestamp_ms\":1780000000000",
        "\"timestamp_ms\":1779999999000,\"parent_action_id\":\"p\"",
    );
    assert_eq!(
        rules(&with_actions("", &format!("{parent},{child}"))),
        vec![("V18", RuleSeverity::Warning)]
    );
    let later = child.replace("1779999999000", "1780000000500");
    assert!(rules(&with_actions("", &format!("{parent},{later}"))).is_empty());
}
