//! The `check` command as a user runs it: formats, exit codes, stdin, errors.

use crate::common;

use common::aeplens;

use common::fixtures;
use std::io::Write;
use std::process::{Command, Stdio};

fn reference(name: &str) -> String {
    fixtures()
        .join("reference")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn json_report_follows_the_contract() {
    let (code, out, _) = aeplens(&[
        "check",
        "--format",
        "json",
        "--keys",
        &reference("keys.json"),
        &reference("v03.ndjson"),
    ]);
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["tool"], "aeplens");
    assert_eq!(doc["inputs"][0]["records"], 11);
    let r = &doc["records"][0];
    assert_eq!(r["source"]["line"], 1);
    assert_eq!(
        r["canonical_sha256"],
        "79645d1ee9e18de532f3fa586cfd05e6a739c77e9c07f5bb87cf993b4062c6ee"
    );
    for axis in ["structural", "semantic", "authenticity", "chain", "capture"] {
        assert!(r[axis]["evaluated"].is_boolean(), "{axis}");
        // Contract rule 2: no status when not evaluated.
        if r[axis]["evaluated"] == false {
            assert!(r[axis].get("status").is_none(), "{axis}");
        }
    }
    assert_eq!(r["authenticity"]["construction"], "js-legacy-inline");
    assert_eq!(r["authenticity"]["ed25519"], "strict");
    assert_eq!(r["capture"], serde_json::json!({"evaluated": false}));
    // e.1 in file order: #1 links to #0, #2–#10 carry no link (other emitters' genesis
    // records) — partial, never intact; in the link graph every path is intact or vacuous.
    assert_eq!(doc["chains"][0]["status"], "partial");
    let paths = doc["chain_paths"].as_array().unwrap();
    assert_eq!(paths.len(), 10);
    assert_eq!(paths[0]["status"], "intact");
    assert_eq!(
        paths[0]["records"],
        serde_json::json!([
            {"path": reference("v03.ndjson"), "index": 0},
            {"path": reference("v03.ndjson"), "index": 1}
        ])
    );
    assert!(paths[1..].iter().all(|p| p["status"] == "not-present"));
    // The pinned shape of a chain path (scripts depend on it).
    let keys: Vec<&str> = paths[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["status", "records", "files", "broken_at"]);
    assert_eq!(paths[0]["broken_at"], serde_json::Value::Null);
    assert_eq!(doc["summary"]["chain_paths"]["intact"], 1);
    let text = out.to_lowercase();
    assert!(!text.contains("\"verdict\"") && !text.contains("\"complete\""));
}

#[test]
fn exit_codes() {
    let keys = reference("keys.json");
    assert_eq!(
        aeplens(&[
            "check",
            "--format",
            "text",
            "--keys",
            &keys,
            &reference("chain.ndjson")
        ])
        .0,
        0
    );
    let (code, out, _) = aeplens(&[
        "check",
        "--format",
        "text",
        "--keys",
        &keys,
        &reference("tampered_chain_swapped.ndjson"),
    ]);
    // Swapped lines: file order breaks at 7, but every link resolves and the one path is
    // intact, so the chain part passes (verification.md e.2) and the text says why.
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("file order broken at record 7"), "{out}");
    assert!(out.contains("stored out of link order"), "{out}");
    let (code, out, _) = aeplens(&[
        "check",
        "--format",
        "text",
        "--keys",
        &keys,
        &reference("tampered_chain_removed.ndjson"),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("F-CHAIN-GAP"), "{out}");
    let (code, _, err) = aeplens(&[
        "check",
        "--keys",
        "/nonexistent/keys.json",
        &reference("v03.ndjson"),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/keys.json"), "{err}");
    assert_eq!(aeplens(&["check", "--bogus"]).0, 2);
    // Nothing to verify is its own code, never a pass.
    let empty = common::run_dir("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, _, err) = aeplens(&["check", empty.to_str().unwrap()]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("nothing to verify"), "{err}");
    let _ = std::fs::remove_dir_all(&empty);
    // The explorer refuses a path it cannot open, with the message check gives.
    let (code, _, err) = aeplens(&["/nonexistent/evidence.ndjson"]);
    assert_eq!(code, 2);
    let (_, _, check_err) = aeplens(&["check", "/nonexistent/evidence.ndjson"]);
    assert_eq!(err, check_err);
    assert!(
        err.contains("/nonexistent/evidence.ndjson: cannot read file"),
        "{err}"
    );
}

#[test]
fn key_arguments_and_environment() {
    let path = reference("v03.ndjson");
    let pk = "e2fdefe91550de51c255f4430b3c5cdf37f6ffb449e889fd59c884f2e6ddabd0";
    let (code, out, _) = aeplens(&[
        "check",
        "--format",
        "json",
        "--key",
        &format!("fixture-key-1={pk}"),
        &path,
    ]);
    assert_eq!(code, 1, "key-3 record stays unverifiable");
    assert!(out.contains("\"valid\""));
    let out = Command::new(env!("CARGO_BIN_EXE_aeplens"))
        .args(["check", "--format", "json", &reference("chain.ndjson")])
        .env(
            "WASMAGENT_AEP_PUBKEY_FIXTURE_KEY_1",
            "4v3v6RVQ3lHCVfRDCzxc3zf2_7RJ6In9WciE8ubdq9A",
        )
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn stdin_bad_lines_and_strict() {
    let good = std::fs::read_to_string(reference("chain.ndjson")).unwrap();
    let first = good.lines().next().unwrap();
    let input = format!("{first}\nnot json at all\n{{\"truncated\": ");
    let run = |extra: &[&str]| {
        let mut args = vec!["check", "--format", "json", "--keys"];
        let keys = reference("keys.json");
        args.push(&keys);
        args.extend_from_slice(extra);
        args.push("-");
        let mut child = Command::new(env!("CARGO_BIN_EXE_aeplens"))
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let out = run(&[]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["inputs"][0]["records"], 1);
    let errors = doc["inputs"][0]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 2);
    assert_eq!(errors[0]["line"], 2);
    assert!(errors[1]["message"].as_str().unwrap().contains("truncated"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-:3"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(run(&["--strict"]).status.code(), Some(2));
}

#[test]
fn no_arguments_without_a_terminal_points_to_the_commands() {
    let (code, out, err) = aeplens(&[]);
    assert!(err.contains("bundled demo"), "{err}");
    assert!(err.contains("aeplens check PATH"), "{err}");
    assert!(
        out.is_empty(),
        "nothing drawn when stdout is not a terminal: {out}"
    );
    assert_eq!(code, 2);
}

#[test]
fn the_demo_verifies_with_its_tampered_record() {
    let (code, out, _) = aeplens(&[
        "check",
        "--format",
        "text",
        "--keys",
        "assets/demo/keys.json",
        "assets/demo/evidence",
    ]);
    assert!(out.contains("run-deploy-0042"), "{out}");
    assert!(out.contains("broken at record 2"), "{out}");
    assert_eq!(code, 1, "the demo contains a tampered record");
}

#[test]
fn hostile_strings_never_reach_the_terminal_raw() {
    let dir = common::run_dir("hostile");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("evil.json");
    std::fs::write(&file, "{\"schema_version\":\"aep/v0.5\",\"run_id\":\"r\\u001b]52;c;aGk=\\u0007\\u001b[2J\",\"created_at_ms\":1,\"x\":1,\"x\":2}").unwrap();
    let (_, out, _) = aeplens(&["check", "--format", "text", file.to_str().unwrap()]);
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
    assert!(
        out.contains("F-TERMINAL-CONTROL") && out.contains("F-DUPLICATE-KEY"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn findings_fail_on_gates_ci() {
    let demo = ["--keys", "assets/demo/keys.json", "assets/demo/evidence"];
    let run = |extra: &[&str]| {
        let mut args = vec!["findings", "--format", "json"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&demo);
        aeplens(&args).0
    };
    // The demo holds high findings: a gate at high or lower fails, no gate passes.
    assert_eq!(run(&[]), 0);
    assert_eq!(run(&["--fail-on", "high"]), 1);
    assert_eq!(run(&["--fail-on", "info"]), 1);
    // A genuine store with nothing above low passes a medium gate.
    let clean = fixtures().join("reference-stores/resaved_bom_crlf.ndjson");
    let keys = fixtures().join("reference-stores/keys.json");
    let (code, out, _) = aeplens(&[
        "findings",
        "--format",
        "json",
        "--fail-on",
        "medium",
        "--keys",
        keys.to_str().unwrap(),
        clean.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn timings_name_every_phase_on_stderr() {
    let (code, out, err) = aeplens(&[
        "check",
        "--timings",
        "--format",
        "json",
        "--keys",
        "assets/demo/keys.json",
        "assets/demo/evidence",
    ]);
    assert_eq!(code, 1, "the demo holds a tampered record");
    assert!(
        serde_json::from_str::<serde_json::Value>(&out).is_ok(),
        "stdout stays JSON"
    );
    for phase in [
        "read, parse and verify",
        "analysis",
        "findings",
        "report",
        "total",
    ] {
        assert!(
            err.lines()
                .any(|l| l.starts_with("timings: ") && l.contains(phase) && l.ends_with(" s")),
            "{phase}: {err}"
        );
    }
    let (_, _, quiet) = aeplens(&["check", "--format", "json", "assets/demo/evidence"]);
    assert!(!quiet.contains("timings:"));
}

#[test]
fn a_load_error_in_a_long_record_points_at_the_byte() {
    let dir = common::run_dir("caret");
    std::fs::create_dir_all(&dir).unwrap();
    // One 50 kB record with a missing comma in the middle, then a good record.
    let filler = "x".repeat(25_000);
    let bad = format!(
        "{{\"schema_version\":\"aep/v0.3\",\"run_id\":\"r\",\"note\":\"{filler}\" \"actions\":[],\"tail\":\"{filler}\"}}"
    );
    let good = r#"{"schema_version":"aep/v0.3","run_id":"r2","created_at_ms":1,"actions":[]}"#;
    let file = dir.join("long.ndjson");
    std::fs::write(&file, format!("{good}\n{bad}\n")).unwrap();
    let (_, out, _) = aeplens(&["check", "--format", "text", file.to_str().unwrap()]);
    // 1-based: the quote opening "actions", where a comma was expected.
    let column = bad.find("\" \"actions").unwrap() + 3;
    assert!(
        out.contains(&format!("long.ndjson:2:{column}: invalid JSON")),
        "{out}"
    );
    // A window of the line, not 50 kB of it, and a caret under the offending byte.
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("\"actions"))
        .expect("the excerpt");
    assert!(lines[at].chars().count() < 120, "{}", lines[at]);
    let caret = lines[at + 1].find('^').expect("a caret");
    assert_eq!(
        &lines[at][caret..=caret],
        "\"",
        "{}\n{}",
        lines[at],
        lines[at + 1]
    );
    // The good record still loads and the JSON report carries the column.
    let (_, json, _) = aeplens(&["check", "--format", "json", file.to_str().unwrap()]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["inputs"][0]["records"], 1);
    assert_eq!(doc["inputs"][0]["errors"][0]["line"], 2);
    assert_eq!(doc["inputs"][0]["errors"][0]["column"], column);
    // A pretty-printed array: the line and column inside the file.
    let array = dir.join("records.json");
    std::fs::write(&array, "[\n  {\"a\": 1},\n  {\"b\": 2 \"c\": 3}\n]\n").unwrap();
    let (_, out, _) = aeplens(&["check", "--format", "text", array.to_str().unwrap()]);
    assert!(
        out.contains("records.json:3:11: invalid JSON array"),
        "{out}"
    );
    assert!(out.contains("  {\"b\": 2 \"c\": 3}"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_broken_keyring_names_line_and_column_with_a_caret() {
    let dir = common::run_dir("keyring");
    std::fs::create_dir_all(&dir).unwrap();
    let keys = dir.join("keys.json");
    let evidence = reference("v03.ndjson");
    let run = |text: &str| {
        std::fs::write(&keys, text).unwrap();
        let (code, _, err) = aeplens(&["check", "--keys", keys.to_str().unwrap(), &evidence]);
        assert_eq!(code, 2, "{err}");
        err
    };
    let err = run("{\n  \"a\": \"00\",\n  \"b\": 12 ]\n}\n");
    assert!(err.contains("keys.json:3:11: invalid JSON"), "{err}");
    assert!(err.contains("3 |   \"b\": 12 ]"), "{err}");
    assert!(err.lines().any(|l| l.ends_with("|           ^")), "{err}");
    // A bad key value points at its id; a hostile id reaches the terminal escaped.
    let err = run(
        "{\n  \"ok\": \"e2fdefe91550de51c255f4430b3c5cdf37f6ffb449e889fd59c884f2e6ddabd0\",\n  \"ev\\u001bil\": \"abcd\"\n}",
    );
    assert!(
        err.contains("keys.json:3:3: key \"ev\\u{1b}il\": an Ed25519 public key is 32 bytes"),
        "{err}"
    );
    assert!(!err.contains('\u{1b}'), "{err:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn quiet_silences_notes_but_not_that_evidence_failed_to_load() {
    let dir = common::run_dir("quiet");
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("store.ndjson");
    let good = std::fs::read_to_string(reference("v03.ndjson")).unwrap();
    std::fs::write(&store, format!("{{\"a\": 1,,}}\n{good}")).unwrap();
    let store = store.to_str().unwrap();
    let (_, _, loud) = aeplens(&["findings", "--format", "json", store]);
    assert!(loud.contains("store.ndjson:1:9: invalid JSON"), "{loud}");
    assert!(loud.contains("1 | {\"a\": 1,,}"), "caret excerpt: {loud}");
    let (_, out, err) = aeplens(&["findings", "-q", "--format", "json", store]);
    assert_eq!(err.trim(), "aeplens: 1 load error (details hidden by -q)");
    assert!(out.contains("\"findings\""), "{out}");
    // check keeps the load error in its report, so -q leaves stderr empty.
    let (code, out, err) = aeplens(&["check", "-q", "--format", "json", store]);
    assert_eq!(err, "", "quiet check");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("invalid JSON at column 9"), "{out}");
    let (_, _, err) = aeplens(&["check", "--format", "json", store]);
    assert!(err.contains("store.ndjson:1:9"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The JSON report is written member by member (records on every core), byte for byte
/// what pretty-printing the whole document at once writes — on every fixture set, and on
/// nothing at all.
#[test]
fn json_report_is_byte_for_byte_the_pretty_document() {
    use aeplens::analysis::evidence::Evidence;
    use aeplens::analysis::lease::SuppliedLeases;
    use aeplens::load::{Corpus, load_paths};
    use aeplens::verify::{Options, Profile};
    let sets = [
        vec![reference("v03.ndjson")],
        vec![fixtures().join("reference-stores").display().to_string()],
        vec![fixtures().join("ecosystem").display().to_string()],
        vec!["assets/demo/evidence".to_string()],
        vec![],
    ];
    for paths in sets {
        let keys = common::keyring(&fixtures().join("reference/keys.json"));
        let ev = Evidence::open(
            Corpus::new(load_paths(&paths)),
            &keys,
            &Options::default(),
            &SuppliedLeases::default(),
        );
        let whole = serde_json::json!({
            "schema_version": "1",
            "tool": "aeplens",
            "version": env!("CARGO_PKG_VERSION"),
            "profile": "forensic",
            "inputs": ev.report.inputs,
            "records": ev.report.records,
            "chains": ev.report.chains,
            "chain_paths": ev.report.links.paths,
            "findings": ev.findings,
            "summary": ev.report.summary_with(&ev.findings),
        });
        let expected = serde_json::to_string_pretty(&whole).unwrap() + "\n";
        let actual = aeplens::cli::check::json_report(&ev.report, &ev.findings, Profile::Forensic);
        assert!(actual == expected, "{paths:?} differs");
    }
}

/// Without an index, `check` and `findings` make the analysis in batches of whole groups
/// of runs and let each go; with one, they keep it whole (for what later commands read).
/// Both say the same, byte for byte, on a directory of stores and on the demo.
#[test]
fn without_an_index_the_batched_analysis_says_what_the_whole_one_says() {
    let keys = reference("keys.json");
    let stores = common::fixtures()
        .join("reference-stores")
        .display()
        .to_string();
    for (paths, keys) in [
        (stores.as_str(), keys.as_str()),
        ("assets/demo/evidence", "assets/demo/keys.json"),
    ] {
        for command in ["check", "findings"] {
            let args = [command, "--format", "json", "--keys", keys, paths];
            let (code, whole, err) = aeplens(&args);
            assert!(whole.contains("\"id\": \"F-"), "{command} {paths}: {err}");
            let mut batched = args.to_vec();
            batched.insert(1, "--no-index");
            let (batched_code, batched, _) = aeplens(&batched);
            assert_eq!((code, whole), (batched_code, batched), "{command} {paths}");
        }
    }
}

/// A lease file that cannot be read is a missing input, as a keyring is: every command
/// taking `--leases` exits 2 naming it, before any finding could go missing with it (a
/// lease finding dropped in silence let `findings --fail-on high` pass).
#[test]
fn an_unreadable_lease_file_exits_2() {
    let store = fixtures().join("reference-stores/reapproval_after_denial.ndjson");
    let store = store.to_str().unwrap();
    let leases = fixtures().join("reference-stores/reapproval_after_denial.leases.ndjson");
    let missing = fixtures().join("reference-stores/no-such.leases.ndjson");
    let directory = fixtures().join("reference-stores");
    for bad in [&missing, &directory] {
        let bad = bad.to_str().unwrap();
        for command in [
            &["check"][..],
            &["findings", "--fail-on", "high"],
            &["report"],
            &["chains"],
        ] {
            let mut args = command.to_vec();
            args.extend(["--leases", leases.to_str().unwrap(), "--leases", bad, store]);
            let (code, out, err) = aeplens(&args);
            assert_eq!(code, 2, "{command:?} --leases {bad}: {out}{err}");
            assert!(
                err.contains("--leases") && err.contains(bad),
                "{command:?}: {err}"
            );
        }
    }
    // The same lease file readable: the commands run.
    let (code, _, err) = aeplens(&["check", "--leases", leases.to_str().unwrap(), store]);
    assert_ne!(code, 2, "{err}");
}

/// `diff` names the record behind a change: one byte of a later snapshot's `tool_name`
/// changed after signing is credited to that record on each side (its ✗ verdict on B),
/// and the records only one side holds are counted and listed with their verdicts, never
/// left out of what "held by both" counts.
#[test]
fn diff_names_the_forged_copy_and_the_records_one_side_holds() {
    let store = fixtures().join("reference-stores/fork_resumed_checkpoint.ndjson");
    let keys = fixtures().join("reference-stores/keys.json");
    let text = std::fs::read_to_string(&store).unwrap();
    let lines: Vec<&str> = text.lines().take(4).collect();
    let scratch = common::run_dir("diff-forged");
    std::fs::create_dir_all(&scratch).unwrap();
    let (a, b) = (
        scratch.join("chain.ndjson"),
        scratch.join("tampered.ndjson"),
    );
    std::fs::write(&a, lines.join("\n") + "\n").unwrap();
    let mut tampered = lines.clone();
    let forged = lines[2].replacen(
        "\"tool_name\":\"load_invoice_batch\"",
        "\"tool_name\":\"load_invoice_batcH\"",
        1,
    );
    assert_ne!(forged, lines[2]);
    tampered[2] = &forged;
    std::fs::write(&b, tampered.join("\n") + "\n").unwrap();
    let (a, b, keys) = (
        a.display().to_string(),
        b.display().to_string(),
        keys.display().to_string(),
    );
    let (code, out, err) = aeplens(&[
        "diff",
        "--no-index",
        "--format",
        "json",
        "--keys",
        &keys,
        &a,
        &b,
    ]);
    assert_eq!(code, 1, "worse: {err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let changed = &doc["changed"][0];
    assert_eq!(changed["action_a"], "emb-0");
    assert_eq!(changed["fields"], serde_json::json!(["tool_name"]));
    assert_eq!(changed["records"][0]["record"], format!("{a}:3"));
    assert_eq!(changed["records"][0]["authenticity"], "valid");
    assert_eq!(
        changed["records"][1]["record"],
        format!("{b}:3"),
        "the forged copy"
    );
    assert_eq!(changed["records"][1]["authenticity"], "invalid");
    let v = &doc["verification"];
    assert_eq!(v["records_compared"], 3);
    assert_eq!(v["only_a"][0]["record"], format!("{a}:3"));
    assert_eq!(v["only_b"][0]["record"], format!("{b}:3"));
    assert_eq!(v["only_b"][0]["authenticity"], "invalid");
    let (_, text, _) = aeplens(&[
        "diff",
        "--no-index",
        "--format",
        "text",
        "--keys",
        &keys,
        &a,
        &b,
    ]);
    assert!(
        text.contains("~ emb-0 [id] tool_name · in ✓ valid")
            && text.contains("→ ✗ invalid (key fixture-key-3)"),
        "{text}"
    );
    assert!(text.contains("1 only in A · 1 only in B · worse"), "{text}");
    assert!(
        text.contains(&format!(
            "only in B: ✗ invalid (key fixture-key-3) · chain intact · semantic fail · {b}:3"
        )),
        "{text}"
    );
}

/// Lease files are inputs (issue: a report could not say which lease file decided a
/// window): `check` lists each in `inputs[]` with `kind: leases`, its SHA-256 and the
/// objects it held, the report's Inputs table names it, and a lease line that is no lease
/// object counts for `--strict` as an evidence load error does.
#[test]
fn lease_files_are_inputs() {
    let store = fixtures().join("reference-stores/reapproval_after_denial.ndjson");
    let leases = fixtures().join("reference-stores/reapproval_after_denial.leases.ndjson");
    let keys = fixtures().join("reference-stores/keys.json");
    let (store, leases_path, keys) = (
        store.display().to_string(),
        leases.display().to_string(),
        keys.display().to_string(),
    );
    let base = ["--no-index", "--keys", &keys, "--leases", &leases_path];
    let (code, out, err) =
        aeplens(&[&["check", "--format", "json"][..], &base, &[&store]].concat());
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let lease_input = &doc["inputs"][1];
    assert_eq!(lease_input["path"], leases_path);
    assert_eq!(lease_input["kind"], "leases");
    assert_eq!(lease_input["records"], 3, "two receipts and a lease");
    let digest = aeplens::canon::sha256_hex(&std::fs::read(&leases).unwrap());
    assert_eq!(lease_input["sha256"], digest);
    assert!(
        doc["inputs"][0].get("kind").is_none(),
        "evidence carries no kind"
    );
    let (_, md, _) = aeplens(&[&["report"][..], &base, &[&store]].concat());
    assert!(md.contains("leases.ndjson | ndjson (leases) | 3 |"), "{md}");
    // A lease line that is no lease object: named, and --strict fails on it.
    let scratch = common::run_dir("lease-inputs");
    std::fs::create_dir_all(&scratch).unwrap();
    let torn = scratch.join("torn.leases.ndjson");
    let text = std::fs::read_to_string(&leases).unwrap();
    std::fs::write(&torn, format!("{text}{{\"what\":\"no lease\"}}\n")).unwrap();
    let torn = torn.display().to_string();
    let strict = [
        "check",
        "--strict",
        "--format",
        "json",
        "--no-index",
        "--keys",
        &keys,
    ];
    let (code, out, err) = aeplens(&[&strict[..], &["--leases", &torn, &store]].concat());
    assert_eq!(code, 2, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["inputs"][1]["errors"][0]["line"], 4, "{out}");
    assert!(err.contains(&format!("{torn}:4")), "{err}");
}

#[test]
fn a_receipt_no_action_matches_is_said_as_used_for_nothing() {
    let dir = common::run_dir("receipts");
    std::fs::create_dir_all(&dir).unwrap();
    let unused = dir.join("unused.ndjson");
    std::fs::write(
        &unused,
        r#"{"receiptId":"00000000deadbeef","principalHash":"d6bfe6e92b32ce58","toolName":"drop_table","argsDigest":"aaaaaaaaaaaaaaaa","approvedAt":"2026-09-18T01:52:00.000Z"}
"#,
    )
    .unwrap();
    let store = "tests/fixtures/reference-stores/reapproval_after_denial.ndjson";
    let keys = "tests/fixtures/reference-stores/keys.json";
    let supplied = "tests/fixtures/reference-stores/reapproval_after_denial.leases.ndjson";
    for command in ["check", "findings"] {
        let (_, _, err) = common::aeplens(&[
            command,
            "--no-index",
            "--keys",
            keys,
            "--leases",
            supplied,
            "--leases",
            unused.to_str().unwrap(),
            store,
        ]);
        assert!(err.contains("unused.ndjson:1"), "{command}: {err}");
        assert!(
            err.contains("receipt 00000000deadbeef: drop_table"),
            "{command}: {err}"
        );
        assert!(err.contains("used for nothing"), "{command}: {err}");
        // The receipt the evidence does use is never said so.
        assert!(!err.contains("9b7ba9fcc37a431a"), "{command}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
