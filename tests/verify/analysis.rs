//! The analysis layer on the reference fixtures, on our RFC-final fixtures and on small
//! records made to fire (and not fire) each finding.

use crate::common;

use aeplens::analysis::chains::ChainKind;
use aeplens::analysis::comparability::BadgeState;
use aeplens::analysis::evidence::Evidence;
use aeplens::analysis::graph::GraphProblem;
use aeplens::analysis::lease::{LeaseSource, LeaseVerdict, SuppliedLeases};
use aeplens::cli::chains::chains_text;
use aeplens::cli::report::{findings_text, show_text};
use aeplens::load::{Corpus, parse_input};
use aeplens::verify::{Keyring, Options};
use common::fixtures;
use std::collections::BTreeSet;
use std::path::Path;

const RFC: &str = "tests/fixtures/rfc-final";
const V03: &str = "tests/fixtures/reference/v03.ndjson";

fn open(paths: &[&str], keys: Option<&str>, leases: Option<&str>) -> Evidence {
    let (corpus, keys, supplied) = common::inputs(paths, keys, leases);
    Evidence::open(corpus, &keys, &Options::default(), &supplied)
}

fn rfc() -> Evidence {
    open(
        &[&format!("{RFC}/evidence")],
        Some(&format!("{RFC}/keys.json")),
        Some(&format!("{RFC}/leases.ndjson")),
    )
}

fn node(ev: &Evidence, run: &str, id: &str) -> u32 {
    ev.analysis
        .graph
        .find(&ev.corpus, run, id)
        .unwrap_or_else(|| panic!("{run}/{id}"))
}

#[test]
fn v03_deny_chain_lease_window_and_badges() {
    let ev = open(&[V03], None, None);
    let run = "run-devfix-ledger-0417";
    // The drift-denied action and its re-approved child form one chain.
    let chain = ev
        .analysis
        .chains
        .iter()
        .find(|c| c.kind == ChainKind::DenyReapproval && c.actions()[0] == "L02-sql-denied-drift")
        .expect("deny chain from L02");
    assert_eq!(chain.actions()[1], "L03-sql-reapproved");
    assert!(
        chain.steps[1].fresh_approval,
        "L03 carries its own approval"
    );
    // Copies in the chained snapshot are one node.
    let l02 = node(&ev, run, "L02-sql-denied-drift");
    assert_eq!(ev.analysis.graph.nodes[l02 as usize].copies, 2);
    // The bounded-lease actions share one inferred window.
    let lease = ev
        .analysis
        .leases
        .summaries
        .iter()
        .find(|l| l.lease_id == "lease-7f3a-0001")
        .unwrap();
    assert_eq!(lease.source, LeaseSource::Inferred);
    let ids: Vec<u32> = [
        "L06-upload-lease-1",
        "L07-upload-lease-2",
        "L08-verify-backup",
    ]
    .iter()
    .map(|id| node(&ev, run, id))
    .collect();
    assert_eq!(lease.nodes, ids);
    for n in &ids {
        assert_eq!(
            ev.analysis.leases.by_node[n].verdict,
            LeaseVerdict::UnknownWindow
        );
    }
    // Every state_digest_kind gets the badge analysis-rules §3 prescribes.
    let expected = [
        ("S01-git-tree", BadgeState::Comparable, None),
        ("S02-db-rowset", BadgeState::Comparable, None),
        (
            "S03-db-rowset",
            BadgeState::Weaker,
            Some("best-effort, no snapshot"),
        ),
        ("S04-sandbox-fs", BadgeState::Comparable, None),
        ("S05-browser-dom", BadgeState::Comparable, None),
        ("S06-memory-bag", BadgeState::Comparable, None),
        (
            "S07-memory-bag",
            BadgeState::Weaker,
            Some("durable subset only"),
        ),
        ("S08-memory-bag", BadgeState::NotComparable, None),
        ("S09-kv-snapshot", BadgeState::NotComparable, None),
        ("S10-kv-snapshot", BadgeState::NotComparable, None),
        (
            "S11-other",
            BadgeState::Weaker,
            Some("vendor-defined equality (io.aeplens.influxdb-bucket@0.3.0-beta.2)"),
        ),
    ];
    for (id, state, assumption) in expected {
        let n = node(&ev, "run-devfix-state-0929", id);
        let (badge, _) = &ev.analysis.badges[&n];
        assert_eq!(badge.state, state, "{id}");
        assert_eq!(badge.assumption.as_deref(), assumption, "{id}");
        assert_eq!(
            badge.reason.is_some(),
            state == BadgeState::NotComparable,
            "{id}"
        );
    }
}

#[test]
fn rfc_fixtures_cover_every_verdict_badge_and_finding() {
    let ev = rfc();
    let verdicts: BTreeSet<&str> = ev
        .analysis
        .leases
        .by_node
        .values()
        .map(|l| l.verdict.name())
        .collect();
    for v in [
        "inside",
        "before-grant",
        "after-expiry",
        "over-budget",
        "revoked",
        "unknown-window",
    ] {
        assert!(verdicts.contains(v), "lease verdict {v}");
    }
    let sources: BTreeSet<String> = ev
        .analysis
        .leases
        .by_node
        .values()
        .map(|l| format!("{:?}", l.source))
        .collect();
    assert_eq!(sources.len(), 3, "recorded, supplied and inferred windows");
    let run = "run-rfc-leases-3";
    let verdict = |id: &str| ev.analysis.leases.by_node[&node(&ev, run, id)].verdict;
    assert_eq!(verdict("K01-inside"), LeaseVerdict::Inside);
    assert_eq!(verdict("K03-after-expiry"), LeaseVerdict::AfterExpiry);
    assert_eq!(verdict("K07-supplied-inside"), LeaseVerdict::Inside);
    assert_eq!(
        verdict("K08-supplied-after-expiry"),
        LeaseVerdict::AfterExpiry
    );
    assert_eq!(verdict("K09-inferred-1"), LeaseVerdict::UnknownWindow);

    let states: BTreeSet<&str> = ev
        .analysis
        .badges
        .values()
        .map(|(b, _)| b.state.name())
        .collect();
    assert_eq!(states.len(), 3);
    let reasons: BTreeSet<String> = ev
        .analysis
        .badges
        .values()
        .filter_map(|(b, _)| b.reason.clone().or(b.assumption.clone()).map(String::from))
        .collect();
    for needle in [
        "no coverage descriptor",
        "identity incomplete: tree_sha, tree_root",
        "connection string",
        "scratch state is not portable",
        "without mixed_partition",
        "audit_equality_basis none",
        "unknown kind",
        "best-effort, no snapshot",
        "unspecified symlink/generated-path policy",
        "no version boundary",
        "durable subset only",
        "vendor-defined equality (com.example.timestream@1.2.0)",
    ] {
        assert!(
            reasons.iter().any(|r| r.contains(needle)),
            "badge reason {needle:?} in {reasons:?}"
        );
    }

    let ids: BTreeSet<&str> = ev.findings.iter().map(|f| f.id).collect();
    for id in [
        "F-EXEC-AFTER-DENY",
        "F-UNAPPROVED-MUTATION",
        "F-UNKNOWN-CLASS-ALLOWED",
        "F-DRIFT-EXECUTED",
        "F-REAPPROVAL-SAME-PAYLOAD",
        "F-LEASE-OUTSIDE",
        "F-LEASE-LABEL-CONTRADICTED",
        "F-STATE-GAP",
        "F-ACTION-REWRITTEN",
        "F-DECISION-SHADOWED",
        "F-DUPLICATE-KEY",
        "F-NUMBER-PRECISION",
        "F-TERMINAL-CONTROL",
        "F-COV-CREDENTIAL",
        "F-COV-ROUTE-NOT-TEMPLATED",
    ] {
        assert!(ids.contains(id), "finding {id} in {ids:?}");
    }
    // V17 lands on the semantic axis of the snapshot that rewrote the action.
    let rewritten = &ev.report.records[5];
    assert_eq!(
        rewritten
            .semantic
            .status
            .map(aeplens::verify::CheckStatus::name),
        Some("fail")
    );
    assert!(
        rewritten
            .semantic
            .violations
            .iter()
            .any(|v| v.rule == "V17")
    );
    assert!(
        ev.report.records.iter().skip(3).all(|r| r
            .authenticity
            .status
            .map(aeplens::verify::AuthStatus::name)
            == Some("valid"))
    );
}

/// The built example program: beside the test binaries (`scripts/test` builds the
/// examples first), else built here into a separate target directory.
fn example_binary(example: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let beside = exe
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("examples")
        .join(example);
    if beside.exists() {
        return beside;
    }
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/regen-examples");
    let status = std::process::Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--example", example, "--target-dir"])
        .arg(&target)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap();
    assert!(status.success(), "building example {example}");
    target.join("debug/examples").join(example)
}

fn regenerate(example: &str, committed: &Path) {
    let bin = example_binary(example);
    let out = common::run_dir(&format!("regen-{example}"));
    let status = std::process::Command::new(&bin).arg(&out).status().unwrap();
    assert!(status.success());
    let mut files = 0;
    for entry in walk(&out) {
        let rel = entry.strip_prefix(&out).unwrap();
        let fresh = std::fs::read(&entry).unwrap();
        let kept = std::fs::read(committed.join(rel))
            .unwrap_or_else(|e| panic!("{}: {e}", committed.join(rel).display()));
        assert!(
            fresh == kept,
            "{} differs from a fresh regeneration",
            rel.display()
        );
        files += 1;
    }
    assert!(files >= 2);
    std::fs::remove_dir_all(&out).ok();
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn generators_regenerate_the_committed_bytes() {
    regenerate("gen_rfc_fixtures", Path::new(RFC));
    regenerate("gen_demo", Path::new("assets/demo"));
}

#[test]
fn golden_reference_outputs() {
    let ev = open(
        &[V03],
        Some(&fixtures().join("reference/keys.json").display().to_string()),
        None,
    );
    let all: Vec<_> = ev.findings.iter().collect();
    insta::assert_snapshot!("v03_findings", findings_text(&all, None));
    // At 80 columns every message wraps under itself: no line wider, no word lost.
    let narrow = findings_text(&all, Some(80));
    assert!(narrow.lines().all(|l| l.chars().count() <= 80), "{narrow}");
    let words = |t: &str| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    assert_eq!(words(&narrow), words(&findings_text(&all, None)));
    insta::assert_snapshot!("v03_chains", chains_text(ev.as_ref()));
    let run = "run-devfix-ledger-0417";
    for id in ["L03-sql-reapproved", "L07-upload-lease-2"] {
        let report = ev
            .analysis
            .show(
                &ev.corpus,
                node(&ev, run, id),
                &ev.findings,
                Some(&ev.report.records),
            )
            .unwrap();
        insta::assert_snapshot!(format!("v03_show_{id}"), show_text(&report, None));
    }
    let envelopes: Vec<String> = ev
        .analysis
        .envelopes(&ev.corpus)
        .iter()
        .map(|(_, e)| serde_json::to_string(e).unwrap())
        .collect();
    insta::assert_snapshot!("v03_envelopes", envelopes.join("\n"));
}

#[test]
fn golden_rfc_outputs() {
    let ev = rfc();
    let all: Vec<_> = ev.findings.iter().collect();
    insta::assert_snapshot!("rfc_findings", findings_text(&all, None));
    insta::assert_snapshot!("rfc_chains", chains_text(ev.as_ref()));
    for (run, id) in [
        ("run-rfc-payments-7", "P03-refund-reapproved"),
        ("run-rfc-leases-3", "K03-after-expiry"),
        ("run-rfc-state-2", "S21-cache-write"),
    ] {
        let report = ev
            .analysis
            .show(
                &ev.corpus,
                node(&ev, run, id),
                &ev.findings,
                Some(&ev.report.records),
            )
            .unwrap();
        insta::assert_snapshot!(format!("rfc_show_{id}"), show_text(&report, None));
        insta::assert_json_snapshot!(
            format!("rfc_show_{id}_json"),
            aeplens::model::contract::versioned("show", &report)
        );
    }
    let envelopes: Vec<String> = ev
        .analysis
        .envelopes(&ev.corpus)
        .iter()
        .map(|(_, e)| serde_json::to_string(e).unwrap())
        .collect();
    insta::assert_snapshot!("rfc_envelopes", envelopes.join("\n"));
}

// ---- findings in context (each finding's own fire/quiet case: tests/findings/) ----

fn evidence_of(actions: &str, extra: &str) -> Evidence {
    let text = format!(
        r#"{{"schema_version":"aep/v0.3","run_id":"r","created_at_ms":1780000000000{extra},"actions":[{actions}]}}"#
    );
    opened("t.json", &text)
}

/// `text` opened as the file `name`, without keys or leases.
fn opened(name: &str, text: &str) -> Evidence {
    let input = parse_input(name.into(), text.as_bytes());
    Evidence::open(
        Corpus::new(vec![input]),
        &Keyring::default(),
        &Options::default(),
        &SuppliedLeases::default(),
    )
}

fn act(id: &str, extra: &str) -> String {
    format!(
        r#"{{"action_id":"{id}","tool_name":"t","state_changing":true,"timestamp_ms":1780000000000,"side_effect_class":"mutate-external"{extra}}}"#
    )
}

#[test]
fn graph_reports_cycles_self_parents_and_dangling_parents_without_looping() {
    let with_parent =
        |id: &str, parent: &str| act(id, &format!(r#","parent_action_id":"{parent}""#));
    let ev = evidence_of(
        &[
            with_parent("a", "b"),
            with_parent("b", "a"),
            with_parent("s", "s"),
            with_parent("d", "missing"),
        ]
        .join(","),
        "",
    );
    let problems = &ev.analysis.graph.problems;
    assert!(
        problems
            .iter()
            .any(|p| matches!(p, GraphProblem::Cycle { nodes } if nodes.len() == 2))
    );
    assert!(
        problems
            .iter()
            .any(|p| matches!(p, GraphProblem::SelfParent { .. }))
    );
    assert!(problems.iter().any(
        |p| matches!(p, GraphProblem::DanglingParent { parent_id, .. } if parent_id == "missing")
    ));
    // Chains over the cycle end instead of looping.
    assert!(ev.analysis.chains.len() <= 4);
}

#[test]
fn parents_resolve_across_runs_only_when_unique() {
    let rec = |run: &str, actions: &str| {
        format!(
            r#"{{"schema_version":"aep/v0.3","run_id":"{run}","created_at_ms":1780000000000,"actions":[{actions}]}}"#
        )
    };
    let text = format!(
        "{}\n{}\n",
        rec("run-a", &act("root", "")),
        rec(
            "run-b",
            &[
                act("kid", r#","parent_action_id":"root""#),
                act("grandkid", r#","parent_action_id":"kid""#),
            ]
            .join(",")
        )
    );
    let ev = opened("t.ndjson", &text);
    let g = &ev.analysis.graph;
    let kid = g.find(&ev.corpus, "run-b", "kid").unwrap();
    let root = g.find(&ev.corpus, "run-a", "root").unwrap();
    let grandkid = g.find(&ev.corpus, "run-b", "grandkid").unwrap();
    assert_eq!(g.nodes[kid as usize].parent, Some(root));
    assert!(g.parent_is_cross_run(kid));
    // Within its run, and no parent at all: not across runs.
    assert_eq!(g.nodes[grandkid as usize].parent, Some(kid));
    assert!(!g.parent_is_cross_run(grandkid));
    assert!(!g.parent_is_cross_run(root));
    // Children are read back from the parent's side, whichever way they were found.
    assert_eq!(g.children(root), vec![kid]);
    assert_eq!(g.children(kid), vec![grandkid]);
    assert_eq!(g.children(grandkid), Vec::<u32>::new());
}

/// Look-ups by id read the ids from the facts: every `(run, action id)` finds its own
/// node (ids in any order, any text, the same id in two runs, copies merged into the
/// first), and nothing else is found.
#[test]
fn actions_are_found_by_run_and_id() {
    let rec = |run: &str, ids: &[&str]| {
        let actions: Vec<String> = ids.iter().map(|id| act(id, "")).collect();
        format!(
            r#"{{"schema_version":"aep/v0.3","run_id":"{run}","created_at_ms":1780000000000,"actions":[{}]}}"#,
            actions.join(",")
        )
    };
    let many: Vec<String> = (0..3000).rev().map(|i| format!("m{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let text = [
        rec("r1", &["a3", "a1", "ä2", ""]),
        rec("r2", &["a1", "b"]),
        rec("r1", &["a1", "c"]),
        rec("", &many),
    ]
    .join("\n");
    let ev = opened("t.ndjson", &text);
    let g = &ev.analysis.graph;
    let id_of = |n: u32| g.facts(&ev.corpus, n).and_then(|f| f.id()).unwrap();
    let run_of = |n: u32| g.runs[g.nodes[n as usize].run as usize].id.as_str();
    let pairs = [
        ("r1", "a3"),
        ("r1", "a1"),
        ("r1", "ä2"),
        ("r1", ""),
        ("r1", "c"),
    ];
    let more = [("r2", "a1"), ("r2", "b"), ("", "m0"), ("", "m2999")];
    for (run, id) in pairs.into_iter().chain(more) {
        let n = g
            .find(&ev.corpus, run, id)
            .unwrap_or_else(|| panic!("{run}/{id}"));
        assert_eq!((run_of(n), id_of(n)), (run, id));
    }
    assert_eq!(
        g.nodes.len(),
        4 + 2 + 1 + 3000,
        "the copy of r1/a1 is no node"
    );
    let a1 = g.find(&ev.corpus, "r1", "a1").unwrap();
    assert_eq!(g.nodes[a1 as usize].copies, 2);
    assert_eq!(g.nodes[a1 as usize].record, 0, "the first copy is the node");
    let both = g.find_all(&ev.corpus, "a1");
    assert_eq!(both, vec![a1, g.find(&ev.corpus, "r2", "a1").unwrap()]);
    for (run, id) in [
        ("r2", "a3"),
        ("r3", "a1"),
        ("r1", "A1"),
        ("r1", "m0"),
        ("r", "a1"),
    ] {
        assert_eq!(g.find(&ev.corpus, run, id), None, "{run}/{id}");
    }
    assert!(g.find_all(&ev.corpus, "zz").is_empty());
}

/// A digest badge belongs to the action that carries the digest, copies of earlier
/// actions before it or not.
#[test]
fn badges_land_on_their_nodes_past_copies() {
    let digest = r#","pre_state_digest":"sha256:aa","state_digest_kind":"fs-tree""#;
    let rec = |actions: &[String]| {
        format!(
            r#"{{"schema_version":"aep/v0.3","run_id":"r","created_at_ms":1780000000000,"actions":[{}]}}"#,
            actions.join(",")
        )
    };
    let text = [
        rec(&[act("a", ""), act("b", digest)]),
        rec(&[
            act("a", ""),
            act("b", digest),
            act("c", ""),
            act("d", digest),
        ]),
    ]
    .join("\n");
    let ev = opened("t.ndjson", &text);
    let g = &ev.analysis.graph;
    let badged: Vec<&str> = (0..g.nodes.len() as u32)
        .filter(|n| ev.analysis.badges.get(n).is_some())
        .map(|n| g.facts(&ev.corpus, n).and_then(|f| f.id()).unwrap())
        .collect();
    assert_eq!(badged, ["b", "d"]);
    assert_eq!(ev.analysis.badges.len(), 2);
}

#[test]
fn rewritten_copies_are_findings_only_in_chained_snapshots() {
    use aeplens::model::json::Json;
    let rec = |outcome: &str| {
        format!(
            r#"{{"schema_version":"aep/v0.3","run_id":"r","created_at_ms":1780000000000,"actions":[{}]}}"#,
            act("a", &format!(r#","outcome":"{outcome}""#))
        )
    };
    let first = rec("success");
    let hash =
        aeplens::canon::canonical_sha256(&Json::from_serde(&serde_json::from_str(&first).unwrap()));
    let chained = rec("failure").replacen('{', &format!(r#"{{"prev_record_hash":"{hash}","#), 1);
    let run = |second: &str| {
        let text = format!("{first}\n{second}\n");
        opened("t.ndjson", &text)
    };
    let ev = run(&chained);
    assert!(ev.findings.iter().any(|f| f.id == "F-ACTION-REWRITTEN"));
    assert_eq!(
        ev.report.records[1]
            .semantic
            .status
            .map(aeplens::verify::CheckStatus::name),
        Some("fail")
    );
    // The same difference between two unlinked emitters of one run is not a rewrite.
    let ev = run(&rec("failure"));
    assert!(!ev.findings.iter().any(|f| f.id == "F-ACTION-REWRITTEN"));
}

#[test]
fn a_deny_chain_is_abandoned_only_when_nothing_re_approved_it() {
    let action = |id: &str, parent: Option<&str>, decision: &str, outcome: bool| {
        let mut a = serde_json::json!({
            "action_id": id,
            "tool_name": "sql_exec",
            "timestamp_ms": 1_780_000_000_000u64,
            "capability_decision": {"capability": "db.write", "subject": "s",
                                    "resource": "r", "decision": decision},
        });
        if let Some(p) = parent {
            a["parent_action_id"] = p.into();
        }
        if outcome {
            a["outcome"] = "success".into();
        }
        a
    };
    let record = serde_json::json!({
        "schema_version": "aep/v0.3",
        "run_id": "run-x",
        "created_at_ms": 1_780_000_000_000u64,
        "actions": [
            action("d1", None, "deny", false),
            action("r1", Some("d1"), "allow", false),
            action("d2", None, "deny", false),
            action("d3", None, "deny", false),
            action("r3", Some("d3"), "allow", true),
        ],
    });
    let corpus = Corpus::new(vec![parse_input(
        "mem.ndjson".into(),
        format!("{record}\n").as_bytes(),
    )]);
    let an = aeplens::analysis::Analysis::build(&corpus, &SuppliedLeases::default());
    let ended = |start: &str| {
        an.chains
            .iter()
            .find(|c| c.kind == ChainKind::DenyReapproval && c.actions()[0] == start)
            .and_then(|c| c.ended.clone())
            .unwrap()
    };
    assert_eq!(ended("d1"), "re-approved-no-outcome");
    assert_eq!(ended("d2"), "abandoned");
    assert_eq!(ended("d3"), "executed");
}

/// The same finding from copies of one action is kept once — the first of them — and
/// what is kept is sorted by severity, then time (unknown times last).
#[test]
fn repeated_findings_are_kept_once_then_sorted() {
    use aeplens::model::finding::{Finding, Severity};
    let f = |id: &'static str, severity, action: &str, message: &str| Finding {
        id,
        severity,
        run_id: Some("run".into()),
        action_ids: vec![action.into()],
        chain: None,
        tool: None,
        message: message.into(),
        evidence: serde_json::json!({ "at": message }).into(),
        locations: Vec::new(),
        fingerprint: String::new(),
    };
    // One id on two emitter chains is two actions, two findings; copies of one action on
    // one chain are one.
    let on = |chain: &str| Finding {
        chain: Some(chain.into()),
        ..f("F-C", Severity::Low, "action-1", "same words")
    };
    let kept = aeplens::analysis::findings::dedupe_and_sort(vec![
        (on("s.ndjson:1"), Some(1.0)),
        (on("s.ndjson:4"), Some(2.0)),
        (on("s.ndjson:1"), Some(3.0)),
    ]);
    let chains: Vec<_> = kept.iter().map(|f| f.chain.as_deref().unwrap()).collect();
    assert_eq!(chains, ["s.ndjson:1", "s.ndjson:4"]);
    let timed = vec![
        (f("F-B", Severity::Medium, "a1", "first copy"), Some(3.0)),
        (f("F-A", Severity::High, "a2", "x"), None),
        (f("F-B", Severity::Medium, "a1", "first copy"), Some(1.0)),
        (f("F-A", Severity::High, "a3", "x"), Some(2.0)),
        (
            f("F-B", Severity::Medium, "a1", "another message"),
            Some(2.0),
        ),
        (f("F-A", Severity::High, "a2", "x"), Some(0.0)),
    ];
    let kept: Vec<(String, String, String)> = aeplens::analysis::findings::dedupe_and_sort(timed)
        .into_iter()
        .map(|f| {
            (
                f.id.to_string(),
                f.action_ids[0].clone(),
                f.evidence.value()["at"].to_string(),
            )
        })
        .collect();
    let row =
        |id: &str, action: &str, at: &str| (id.to_string(), action.to_string(), format!("{at:?}"));
    assert_eq!(
        kept,
        vec![
            row("F-A", "a3", "x"),
            row("F-A", "a2", "x"),
            row("F-B", "a1", "another message"),
            row("F-B", "a1", "first copy"),
        ]
    );
}
