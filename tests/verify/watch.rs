//! `aeplens watch` (docs/watch.md) on live stores: every fault of the corpus alerted once
//! with its class, rule and subject; a clean store grown record by record raises nothing;
//! infrastructure faults are infra, never tamper; killed with SIGKILL and restarted, the
//! log holds the same alerts as a run without kills and verifies with `check`; an edited,
//! removed or reordered alert line fails `check`; a watch that has seen a store agrees
//! with `check` on it.

use crate::common;
use aeplens::model::json::Json;
use aeplens::model::sha256::hex;
use aeplens::open::{Setting, Traces};
use aeplens::verify::sign::{link_to, sign_dsse, sign_legacy, signing_key};
use aeplens::watch::alert::{Alert, Class};
use aeplens::watch::{Monitor, Watch};
use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

// ---------------------------------------------------------------------------------------
// Records as an emitter writes them.

/// One emitter: a key, a run, and its chain of cumulative snapshots.
#[derive(Clone)]
struct Emitter {
    key_id: String,
    key: SigningKey,
    run: String,
    actions: Vec<Value>,
    previous: Option<Json>,
    t: u64,
}

impl Emitter {
    fn new(key_id: &str, seed: u8, run: &str) -> Emitter {
        Emitter {
            key_id: key_id.into(),
            key: signing_key(&[seed; 32]),
            run: run.into(),
            actions: Vec::new(),
            previous: None,
            t: 1_780_000_000_000,
        }
    }

    /// An action: `tool`, its side-effect class, its decision (none: no
    /// `capability_decision`) and its outcome.
    fn action(&mut self, tool: &str, class: &str, decision: Option<&str>, outcome: &str) -> Value {
        self.t += 1000;
        let mut a = json!({
            "action_id": format!("action-{}", self.actions.len()),
            "tool_name": tool,
            "state_changing": class != "read",
            "evidence_refs": [],
            "timestamp_ms": self.t,
            "recording_mode": "validation",
            "side_effect_class": class,
            "arguments_digest": format!("sha256:{}", hex(&[self.actions.len() as u8; 32])),
            "outcome": outcome,
        });
        if let Some(d) = decision {
            a["capability_decision"] = json!({
                "capability": tool,
                "subject": format!("agent:{}", self.key_id),
                "resource": "res://watch/1",
                "decision": d,
                "reason_code": if d == "deny" { "DENY_POLICY" } else { "ALLOW_POLICY" },
                "approval_mode": if d == "deny" { "policy-deny-with-evidence" } else { "policy-allow-with-receipt" },
            });
        }
        a
    }

    /// A read the policy allowed: what a clean store holds.
    fn read(&mut self) -> Value {
        self.action("read_file", "read", Some("allow"), "success")
    }

    /// The next snapshot with `add` appended to the actions so far, not yet signed.
    fn draft(&mut self, add: Vec<Value>) -> Value {
        self.actions.extend(add);
        self.t += 10;
        json!({
            "schema_version": "aep/v0.5",
            "run_id": self.run,
            "user_id": "user:oncall",
            "policy_bundle_digest": format!("sha256:{}", hex(&[7; 32])),
            "input_refs": [],
            "output_refs": [],
            "capability_decisions": [],
            "actions": self.actions,
            "verifier_results": [],
            "created_at_ms": self.t,
        })
    }

    /// `draft` linked to this emitter's last record and signed (inline, or DSSE).
    fn seal(&mut self, draft: &Value, dsse: bool) -> Json {
        let mut record = Json::from_serde(draft);
        link_to(&mut record, self.previous.as_ref());
        if dsse {
            sign_dsse(&mut record, &self.key_id, &self.key);
        } else {
            sign_legacy(&mut record, &self.key_id, &self.key);
        }
        self.previous = Some(record.clone());
        record
    }

    /// The next clean snapshot (one more allowed read), as its line.
    fn next(&mut self) -> String {
        let read = self.read();
        self.next_with(read)
    }

    /// The next snapshot with `action` added, signed inline, as its line.
    fn next_with(&mut self, action: Value) -> String {
        let draft = self.draft(vec![action]);
        line(&self.seal(&draft, false))
    }

    /// The next clean snapshot signed (inline, or DSSE), then edited: its `user_id`
    /// changed after the signature was made.
    fn forged(&mut self, dsse: bool) -> String {
        let add = vec![self.read()];
        let draft = self.draft(add);
        let record = self.seal(&draft, dsse);
        edited(&record, |v| v["user_id"] = "user:mallory".into())
    }
}

fn line(record: &Json) -> String {
    serde_json::to_string(record).unwrap()
}

/// `record`'s line with `edit` applied to it after it was signed.
fn edited(record: &Json, edit: impl FnOnce(&mut Value)) -> String {
    let mut v = record.to_serde();
    edit(&mut v);
    serde_json::to_string(&v).unwrap()
}

fn keyring_json(emitters: &[&Emitter]) -> String {
    let map: BTreeMap<&str, String> = (emitters.iter())
        .map(|e| (e.key_id.as_str(), hex(e.key.verifying_key().as_bytes())))
        .collect();
    serde_json::to_string(&map).unwrap()
}

// ---------------------------------------------------------------------------------------
// A watch run in this process, a pass at a time.

struct Live {
    dir: tempfile::TempDir,
    monitor: Option<Monitor>,
    /// Every alert issued, in order.
    issued: Vec<Alert>,
    configure: Box<dyn Fn(&mut Watch)>,
}

impl Live {
    /// A watch over `dir/store` trusting `trusted`, configured further by `configure`.
    fn new(trusted: &[&Emitter], configure: impl Fn(&mut Watch) + 'static) -> Live {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("store")).unwrap();
        std::fs::write(dir.path().join("keys.json"), keyring_json(trusted)).unwrap();
        let mut live = Live {
            dir,
            monitor: None,
            issued: Vec::new(),
            configure: Box::new(configure),
        };
        live.restart();
        live
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Starts the monitor again from its state and log (as after a crash).
    fn restart(&mut self) {
        self.monitor = None;
        let keys = self.path("keys.json");
        let mut setting = Setting::default();
        if keys.exists() {
            setting.trust.add_file(keys.to_str().unwrap()).unwrap();
        }
        let mut watch = Watch {
            setting,
            stores: vec![self.path("store").display().to_string()],
            rules: Vec::new(),
            rules_text: String::new(),
            fail_on: aeplens::model::finding::Severity::High,
            settle: Duration::from_millis(100),
            state_dir: self.path("state"),
            alerts: Some(self.path("alerts.ndjson")),
            ocsf: Some(self.path("ocsf.ndjson")),
            exec: None,
            signer: None,
            inputs: vec![(keys.display().to_string(), "keyring-missing")],
        };
        (self.configure)(&mut watch);
        self.monitor = Some(Monitor::start(watch).unwrap().0);
    }

    fn monitor(&mut self) -> &mut Monitor {
        self.monitor.as_mut().unwrap()
    }

    /// One pass over every store (again while a torn line settles); what it issued.
    fn pass(&mut self) -> Vec<Alert> {
        let all: Vec<usize> = (0..self.monitor().store_count()).collect();
        let mut issued = Vec::new();
        for _ in 0..50 {
            let pass = self.monitor().pass(&all);
            issued.extend(pass.issued);
            match pass.again_in {
                Some(wait) => std::thread::sleep(wait.max(Duration::from_millis(10))),
                None => break,
            }
        }
        self.issued.extend(issued.iter().cloned());
        issued
    }

    /// One pass over every store, not waiting for anything: what it issued, and how many
    /// stores it judged by a window.
    fn pass_once(&mut self) -> (Vec<Alert>, usize) {
        let all: Vec<usize> = (0..self.monitor().store_count()).collect();
        let pass = self.monitor().pass(&all);
        self.issued.extend(pass.issued.iter().cloned());
        (pass.issued, pass.windowed)
    }

    /// A pass that must issue nothing.
    fn quiet(&mut self, when: &str) {
        let issued = self.pass();
        assert!(issued.is_empty(), "{when}: {}", said(&issued));
    }

    /// Appends `lines` to `store/name`.
    fn append(&self, name: &str, lines: &[String]) {
        let mut f = std::fs::File::options()
            .create(true)
            .append(true)
            .open(self.path("store").join(name))
            .unwrap();
        for l in lines {
            writeln!(f, "{l}").unwrap();
        }
    }

    fn append_bytes(&self, name: &str, bytes: &[u8]) {
        let mut f = std::fs::File::options()
            .create(true)
            .append(true)
            .open(self.path("store").join(name))
            .unwrap();
        f.write_all(bytes).unwrap();
    }
}

fn said(alerts: &[Alert]) -> String {
    (alerts.iter())
        .map(|a| format!("{} {} {}", a.class.name(), a.rule, a.message))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The alerts of `alerts` with this class and rule.
fn with<'a>(alerts: &'a [Alert], class: Class, rule: &str) -> Vec<&'a Alert> {
    alerts
        .iter()
        .filter(|a| a.class == class && a.rule == rule)
        .collect()
}

/// Asserts that `live` issued `class`/`rule` exactly once, about a record of `file`
/// (line `line` when given), each dedupe key once, and that a pass more issues nothing.
fn once(live: &mut Live, class: Class, rule: &str, file: &str, line: Option<usize>) {
    live.quiet("a pass with nothing new");
    let all = &live.issued;
    let hits = with(all, class, rule);
    assert_eq!(
        hits.len(),
        1,
        "{} {rule}: issued\n{}",
        class.name(),
        said(all)
    );
    match hits[0].record.as_ref() {
        Some(record) => {
            assert!(record.path.ends_with(file), "{rule}: about {}", record.path);
            if line.is_some() {
                assert_eq!(record.line, line, "{rule}: the line");
            }
        }
        // A finding on no record (a span no action records) names its run.
        None => assert!(
            hits[0].action.as_ref().is_some_and(|a| a.run_id.is_some()),
            "{rule}: no subject"
        ),
    }
    let keys: BTreeSet<&str> = all.iter().map(|a| a.dedupe_key.as_str()).collect();
    assert_eq!(
        keys.len(),
        all.len(),
        "a dedupe key issued twice:\n{}",
        said(all)
    );
}

// ---------------------------------------------------------------------------------------
// The fault corpus.

/// A clean store, two records of one emitter, judged: nothing.
fn clean_start() -> (Live, Emitter) {
    let mut e = Emitter::new("emitter-a", 1, "run-watch-1");
    let mut live = Live::new(&[&e], |_| {});
    live.append("a.ndjson", &[e.next(), e.next()]);
    live.quiet("a clean store");
    (live, e)
}

#[test]
fn a_signature_that_fails_is_tamper() {
    let (mut live, mut e) = clean_start();
    live.append("a.ndjson", &[e.forged(false)]);
    live.pass();
    once(
        &mut live,
        Class::Tamper,
        "signature-invalid",
        "a.ndjson",
        Some(3),
    );
}

#[test]
fn a_key_no_trusted_key_covers_is_tamper() {
    let (mut live, _) = clean_start();
    let mut rogue = Emitter::new("rogue-key", 9, "run-watch-1");
    live.append("a.ndjson", &[rogue.next()]);
    live.pass();
    once(&mut live, Class::Tamper, "key-unknown", "a.ndjson", Some(3));
}

#[test]
fn a_binding_mismatch_is_tamper() {
    let (mut live, mut e) = clean_start();
    live.append("a.ndjson", &[e.forged(true)]);
    live.pass();
    once(
        &mut live,
        Class::Tamper,
        "binding-mismatch",
        "a.ndjson",
        Some(3),
    );
}

#[test]
fn a_lost_append_is_a_chain_gap() {
    let (mut live, mut e) = clean_start();
    let _lost = e.next();
    live.append("a.ndjson", &[e.next()]);
    live.pass();
    once(&mut live, Class::Tamper, "F-CHAIN-GAP", "a.ndjson", Some(3));
}

#[test]
fn two_successors_are_a_fork() {
    let (mut live, mut e) = clean_start();
    let mut branch = e.clone();
    branch.t += 5;
    live.append("a.ndjson", &[e.next(), branch.next()]);
    live.pass();
    once(&mut live, Class::Tamper, "F-CHAIN-FORK", "a.ndjson", None);
}

#[test]
fn a_copy_with_other_bytes_is_tamper_and_a_retried_append_is_not() {
    let (mut live, mut e) = clean_start();
    let add = vec![e.read()];
    let draft = e.draft(add);
    let inline = e.seal(&draft, false);
    live.append("a.ndjson", &[line(&inline), line(&inline)]);
    live.quiet("a retried append (an identical copy)");
    let mut again = e.clone();
    again.previous = None;
    let mut record = Json::from_serde(&inline.to_serde());
    if let Json::Object(o) = &mut record {
        o.members.retain(|(k, _)| k.bytes() != b"signature");
    }
    sign_dsse(&mut record, &again.key_id, &again.key);
    live.append("a.ndjson", &[line(&record)]);
    live.pass();
    once(
        &mut live,
        Class::Tamper,
        "F-DUPLICATE-RECORD",
        "a.ndjson",
        Some(5),
    );
}

#[test]
fn a_rewritten_action_is_tamper() {
    let (mut live, mut e) = clean_start();
    e.actions[0]["tool_name"] = "delete_file".into();
    live.append("a.ndjson", &[e.next()]);
    live.pass();
    // Later snapshots carry the rewritten copy on: the same rewrite, not alerted again.
    live.append("a.ndjson", &[e.next(), e.next()]);
    live.pass();
    once(
        &mut live,
        Class::Tamper,
        "F-ACTION-REWRITTEN",
        "a.ndjson",
        None,
    );
}

#[test]
fn a_link_that_is_no_hash_breaks_the_chain() {
    let (mut live, mut e) = clean_start();
    let add = vec![e.read()];
    let draft = e.draft(add);
    let mut record = Json::from_serde(&draft);
    link_to(&mut record, e.previous.as_ref());
    let mut v = record.to_serde();
    v["prev_record_hash"] = json!(7);
    let mut record = Json::from_serde(&v);
    sign_legacy(&mut record, &e.key_id, &e.key);
    live.append("a.ndjson", &[line(&record)]);
    live.pass();
    once(
        &mut live,
        Class::Tamper,
        "chain-broken",
        "a.ndjson",
        Some(3),
    );
}

#[test]
fn a_file_cut_shorter_is_tamper() {
    let (mut live, mut e) = clean_start();
    live.append("a.ndjson", &[e.next()]);
    live.quiet("a third record");
    let file = live.path("store/a.ndjson");
    let text = std::fs::read_to_string(&file).unwrap();
    let cut = text[..=text.trim_end().rfind('\n').unwrap()].to_string();
    std::fs::write(&file, cut).unwrap();
    live.pass();
    once(&mut live, Class::Tamper, "file-shrunk", "a.ndjson", None);
}

#[test]
fn bytes_already_verified_edited_in_place_are_tamper() {
    let (mut live, _) = clean_start();
    let file = live.path("store/a.ndjson");
    let text = std::fs::read_to_string(&file).unwrap();
    // The same length: only the comparison with what was verified tells.
    let edited = text.replacen("user:oncall", "user:attack", 1);
    std::fs::write(&file, edited).unwrap();
    live.pass();
    once(
        &mut live,
        Class::Tamper,
        "verified-bytes-changed",
        "a.ndjson",
        None,
    );
}

#[test]
fn an_edit_far_from_the_end_is_found_by_its_signature() {
    let mut e = Emitter::new("emitter-a", 1, "run-watch-1");
    let mut live = Live::new(&[&e], |_| {});
    let lines: Vec<String> = (0..12).map(|_| e.next()).collect();
    live.append("a.ndjson", &lines);
    live.quiet("twelve clean records");
    let file = live.path("store/a.ndjson");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.len() > 3 * 4096,
        "the first line is outside the last block"
    );
    std::fs::write(&file, text.replacen("user:oncall", "user:attack", 1)).unwrap();
    live.pass();
    once(
        &mut live,
        Class::Tamper,
        "signature-invalid",
        "a.ndjson",
        Some(1),
    );
}

#[test]
fn a_gap_across_a_rotation_is_found_and_the_rotation_is_not_a_fault() {
    let (mut live, mut e) = clean_start();
    std::fs::rename(live.path("store/a.ndjson"), live.path("store/a.1.ndjson")).unwrap();
    live.append("a.ndjson", &[e.next()]);
    live.quiet("a rotation (renamed, a new file created)");
    let _lost = e.next();
    live.append("a.ndjson", &[e.next()]);
    live.pass();
    once(&mut live, Class::Tamper, "F-CHAIN-GAP", "a.ndjson", Some(2));
    assert!(with(&live.issued, Class::Infra, "file-vanished").is_empty());
}

#[test]
fn a_fork_in_an_interleaved_store_is_tamper() {
    let mut a = Emitter::new("emitter-a", 1, "run-watch-1");
    let mut b = Emitter::new("emitter-b", 2, "run-watch-1");
    let mut live = Live::new(&[&a, &b], |_| {});
    for _ in 0..3 {
        live.append("shared.ndjson", &[a.next(), b.next()]);
        live.quiet("two emitters interleaved in one file");
    }
    let mut branch = b.clone();
    branch.t += 5;
    live.append("shared.ndjson", &[a.next(), b.next(), branch.next()]);
    live.pass();
    once(
        &mut live,
        Class::Tamper,
        "F-CHAIN-FORK",
        "shared.ndjson",
        None,
    );
}

/// Appends the lines of a fixture file one pass at a time; every alert issued.
fn replay(live: &mut Live, fixture: &Path, name: &str) {
    let text = std::fs::read_to_string(fixture).unwrap();
    for l in text.lines() {
        live.append(name, &[l.to_string()]);
        live.pass();
    }
}

/// A watch under the RFC 3161 fixtures' keys, root and anchors.
fn stamped_watch() -> Live {
    let tsa = common::fixtures().join("tsa");
    let mut live = Live::new(&[], move |w| {
        let ring = &mut w.setting.trust;
        ring.add_file(tsa.join("keys.json").to_str().unwrap())
            .unwrap();
        ring.add_tsa_certs(tsa.join("root.pem").to_str().unwrap())
            .unwrap();
        ring.add_anchors(tsa.join("anchors.ndjson").to_str().unwrap())
            .unwrap();
    });
    live.restart();
    live
}

/// The lines of the RFC 3161 fixture `fixture` appended one at a time: `rule` alerted once.
fn stamped_fault(fixture: &str, rule: &str) {
    let mut live = stamped_watch();
    replay(
        &mut live,
        &common::fixtures().join("tsa").join(fixture),
        "t.ndjson",
    );
    once(&mut live, Class::Tamper, rule, "t.ndjson", None);
}

#[test]
fn a_tail_cut_behind_an_anchor_is_tamper() {
    stamped_fault("truncated.ndjson", "F-TAIL-TRUNCATED");
}

#[test]
fn a_timestamp_token_that_fails_is_tamper() {
    stamped_fault("expired.ndjson", "F-TIMESTAMP-INVALID");
}

#[test]
fn a_token_over_other_bytes_is_tamper() {
    stamped_fault("moved.ndjson", "F-TIMESTAMP-IMPRINT");
}

#[test]
fn a_rule_alerts_once_per_action_when_it_first_lands() {
    let mut e = Emitter::new("emitter-a", 1, "run-watch-1");
    let mut live = Live::new(&[&e], |w| {
        w.rules_text = "pushes high: tool == \"git_push\"\n".into();
        w.rules = aeplens::watch::judge::read_rules("rules.txt", &w.rules_text).unwrap();
    });
    live.append("a.ndjson", &[e.next()]);
    live.quiet("no push yet");
    let push = e.action("git_push", "read", Some("allow"), "success");
    live.append("a.ndjson", &[e.next_with(push)]);
    live.pass();
    // Later snapshots repeat the action: it is not alerted again.
    live.append("a.ndjson", &[e.next(), e.next()]);
    live.pass();
    once(&mut live, Class::Policy, "pushes", "a.ndjson", Some(2));
    let hit = &with(&live.issued, Class::Policy, "pushes")[0];
    let action = hit.action.as_ref().unwrap();
    assert_eq!(action.action_id.as_deref(), Some("action-1"));
}

#[test]
fn an_action_executed_after_a_deny_is_policy() {
    let (mut live, mut e) = clean_start();
    let action = e.action("exec_command", "mutate-local", Some("deny"), "success");
    live.append("a.ndjson", &[e.next_with(action)]);
    live.pass();
    // Later snapshots repeat the action: the same finding, not alerted again.
    live.append("a.ndjson", &[e.next(), e.next()]);
    live.pass();
    once(
        &mut live,
        Class::Policy,
        "F-EXEC-AFTER-DENY",
        "a.ndjson",
        Some(3),
    );
}

#[test]
fn a_mutation_with_no_decision_is_policy() {
    let (mut live, mut e) = clean_start();
    let action = e.action("write_file", "mutate-local", None, "success");
    live.append("a.ndjson", &[e.next_with(action)]);
    live.pass();
    live.append("a.ndjson", &[e.next(), e.next()]);
    live.pass();
    once(
        &mut live,
        Class::Policy,
        "F-UNAPPROVED-MUTATION",
        "a.ndjson",
        Some(3),
    );
}

#[test]
fn a_malformed_record_is_policy() {
    let (mut live, mut e) = clean_start();
    let add = vec![e.read()];
    let mut draft = e.draft(add);
    draft["actions"] = "none".into();
    live.append("a.ndjson", &[line(&e.seal(&draft, false))]);
    live.pass();
    once(
        &mut live,
        Class::Policy,
        "record-malformed",
        "a.ndjson",
        Some(3),
    );
}

#[test]
fn an_action_outside_its_lease_is_policy() {
    let stores = common::fixtures().join("reference-stores");
    let leases = stores.join("reapproval_after_denial.leases.ndjson");
    let keys = stores.join("keys.json");
    let mut live = Live::new(&[], move |w| {
        w.setting.trust.add_file(keys.to_str().unwrap()).unwrap();
        let files = vec![leases.display().to_string()];
        w.setting.leases = aeplens::analysis::lease::SuppliedLeases::from_files(&files)
            .unwrap()
            .0;
    });
    live.restart();
    replay(
        &mut live,
        &stores.join("reapproval_after_denial.ndjson"),
        "r.ndjson",
    );
    once(
        &mut live,
        Class::Policy,
        "F-LEASE-OUTSIDE",
        "r.ndjson",
        None,
    );
}

#[test]
fn a_capture_gap_is_raised_when_the_spans_arrive() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("traces.jsonl");
    std::fs::write(&traces, "").unwrap();
    let t = traces.display().to_string();
    let keys = demo.join("keys.json");
    let mut live = Live::new(&[], move |w| {
        w.setting.trust.add_file(keys.to_str().unwrap()).unwrap();
        w.setting.traces = Traces {
            files: vec![t.clone()],
            tolerance_ms: 5000.0,
        };
    });
    live.restart();
    let evidence = std::fs::read_to_string(demo.join("evidence/incident.ndjson")).unwrap();
    live.append("incident.ndjson", &[evidence.trim_end().to_string()]);
    live.pass();
    assert!(
        with(&live.issued, Class::Policy, "F-CAPTURE-GAP").is_empty(),
        "no spans yet"
    );
    std::fs::copy(demo.join("traces.jsonl"), &traces).unwrap();
    live.pass();
    once(
        &mut live,
        Class::Policy,
        "F-CAPTURE-GAP",
        "incident.ndjson",
        None,
    );
}

// ---------------------------------------------------------------------------------------
// No false alarm, and infrastructure apart.

#[test]
fn a_clean_store_grown_record_by_record_raises_nothing() {
    let mut a = Emitter::new("emitter-a", 1, "run-watch-1");
    let mut b = Emitter::new("emitter-b", 2, "run-watch-2");
    let mut live = Live::new(&[&a, &b], |_| {});
    for i in 0..40 {
        let l = if i % 3 == 0 { b.next() } else { a.next() };
        // Half a line first: a write in progress, completed within --settle.
        let (head, tail) = l.split_at(l.len() / 2);
        live.append_bytes("a.ndjson", head.as_bytes());
        let all: Vec<usize> = vec![0];
        let pass = live.monitor().pass(&all);
        assert!(pass.issued.is_empty(), "{}", said(&pass.issued));
        assert!(pass.again_in.is_some(), "a torn line waits for --settle");
        live.append_bytes("a.ndjson", format!("{tail}\n").as_bytes());
        live.quiet("a record appended");
    }
}

#[test]
fn infrastructure_faults_are_infra_and_clear_once() {
    let (mut live, mut e) = clean_start();
    // A line left torn past --settle, then completed.
    let l = e.next();
    live.append_bytes("a.ndjson", &l.as_bytes()[..40]);
    live.pass();
    assert_eq!(with(&live.issued, Class::Infra, "partial-line").len(), 1);
    live.append_bytes("a.ndjson", format!("{}\n", &l[40..]).as_bytes());
    let cleared = live.pass();
    assert_eq!(cleared.len(), 1, "{}", said(&cleared));
    assert_eq!(cleared[0].status, "resolved");
    // A line that is no JSON.
    live.append_bytes("a.ndjson", b"{\"run_id\": oops\n");
    live.pass();
    assert_eq!(with(&live.issued, Class::Infra, "load-error").len(), 1);
    // The keyring removed, then put back.
    let keys = std::fs::read(live.path("keys.json")).unwrap();
    std::fs::remove_file(live.path("keys.json")).unwrap();
    live.pass();
    assert_eq!(with(&live.issued, Class::Infra, "keyring-missing").len(), 1);
    std::fs::write(live.path("keys.json"), keys).unwrap();
    let cleared = live.pass();
    assert_eq!(cleared.iter().filter(|a| a.status == "resolved").count(), 1);
    // A file gone.
    live.append(
        "b.ndjson",
        &[Emitter::new("emitter-a", 1, "run-watch-9").next()],
    );
    live.pass();
    std::fs::remove_file(live.path("store/b.ndjson")).unwrap();
    live.append("a.ndjson", &[e.next()]);
    live.pass();
    assert_eq!(with(&live.issued, Class::Infra, "file-vanished").len(), 1);
    // The state cannot be written: the disk is full.
    std::os::unix::fs::symlink("/dev/full", live.path("state/state.json.tmp")).unwrap();
    live.append("a.ndjson", &[e.next()]);
    live.pass();
    let full: Vec<&Alert> = (with(&live.issued, Class::Infra, "state-write-failed").into_iter())
        .filter(|a| a.status == "open")
        .collect();
    assert_eq!(full.len(), 1, "{}", said(&live.issued));
    assert!(
        full[0].message.contains("No space left"),
        "{}",
        full[0].message
    );
    // Nothing of this is tamper or policy.
    let not_infra: Vec<Alert> = (live.issued.iter())
        .filter(|a| a.class != Class::Infra)
        .cloned()
        .collect();
    assert!(not_infra.is_empty(), "{}", said(&not_infra));
}

#[test]
fn a_failing_sink_is_infra_and_the_alert_stays_in_the_log() {
    let mut e = Emitter::new("emitter-a", 1, "run-watch-1");
    let mut live = Live::new(&[&e], |w| w.exec = Some("cat > /dev/null; exit 3".into()));
    live.append("a.ndjson", &[e.next()]);
    let action = e.action("exec_command", "mutate-local", Some("deny"), "success");
    live.append("a.ndjson", &[e.next_with(action)]);
    live.pass();
    assert_eq!(
        with(&live.issued, Class::Policy, "F-EXEC-AFTER-DENY").len(),
        1
    );
    let failed = with(&live.issued, Class::Infra, "sink-failed");
    assert_eq!(failed.len(), 1, "{}", said(&live.issued));
    assert!(
        failed[0].message.contains("exited with"),
        "{}",
        failed[0].message
    );
    let log = std::fs::read_to_string(live.path("alerts.ndjson")).unwrap();
    assert!(log.contains("F-EXEC-AFTER-DENY"));
}

#[test]
fn a_leases_file_gone_is_infra() {
    let stores = common::fixtures().join("reference-stores");
    let dir = tempfile::tempdir().unwrap();
    let leases = dir.path().join("leases.ndjson");
    std::fs::copy(
        stores.join("reapproval_after_denial.leases.ndjson"),
        &leases,
    )
    .unwrap();
    let l = leases.display().to_string();
    let mut live = Live::new(&[], move |w| w.inputs.push((l.clone(), "leases-missing")));
    live.pass();
    std::fs::remove_file(&leases).unwrap();
    live.pass();
    assert_eq!(with(&live.issued, Class::Infra, "leases-missing").len(), 1);
    assert!(live.issued.iter().all(|a| a.class == Class::Infra));
}

#[test]
fn a_restart_repeats_nothing_and_continues_the_chain() {
    let (mut live, mut e) = clean_start();
    let action = e.action("exec_command", "mutate-local", Some("deny"), "success");
    live.append("a.ndjson", &[e.next_with(action)]);
    live.pass();
    assert_eq!(live.issued.len(), 1);
    // The state lost (as when killed before it was written): the log says what was issued.
    std::fs::remove_file(live.path("state/state.json")).unwrap();
    live.restart();
    live.quiet("after a restart with the state lost");
    // A torn alert line (killed while writing it) is cut, and the chain goes on.
    let log = live.path("alerts.ndjson");
    let mut f = std::fs::File::options().append(true).open(&log).unwrap();
    f.write_all(b"{\"schema_version\":\"aeplens-alert/1\",\"cla")
        .unwrap();
    live.restart();
    let action = e.action("write_file", "mutate-local", None, "success");
    live.append("a.ndjson", &[e.next_with(action)]);
    live.pass();
    assert_eq!(live.issued.len(), 2);
    let (code, out, _) = common::aeplens(&["check", "--format", "json", log.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let kinds: Vec<&str> = (report["records"].as_array().unwrap().iter())
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["aeplens-alert", "aeplens-alert"]);
    assert_eq!(report["chains"][0]["status"], "intact");
}

// ---------------------------------------------------------------------------------------
// The command, as a process.

fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_aeplens"))
}

/// Alert lines of a log file.
fn log_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `aeplens check --format json` of `args`: its exit code and report.
fn check_json(args: &[&str]) -> (i32, Value) {
    let out = bin()
        .arg("check")
        .arg("--format")
        .arg("json")
        .args(args)
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), report)
}

/// A monitor's signing seed and the keyring that verifies what it signs.
fn monitor_keys(dir: &Path) -> (PathBuf, PathBuf) {
    let seed = dir.join("monitor.seed");
    std::fs::write(&seed, hex(&[42; 32])).unwrap();
    let out = bin()
        .args(["watch", "--sign-key", seed.to_str().unwrap(), "--print-key"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let keys = dir.join("monitor-keys.json");
    std::fs::write(&keys, &out.stdout).unwrap();
    (seed, keys)
}

/// A store of faults for the process tests: clean records of two emitters interleaved,
/// then a denied action executed, a lost append and a signature that fails.
fn faulty_lines() -> (Vec<String>, String) {
    let mut a = Emitter::new("emitter-a", 1, "run-watch-1");
    let mut b = Emitter::new("emitter-b", 2, "run-watch-2");
    let mut lines = vec![a.next(), b.next(), a.next(), b.next()];
    let denied = a.action("exec_command", "mutate-local", Some("deny"), "success");
    lines.push(a.next_with(denied));
    let _lost = b.next();
    lines.push(b.next());
    lines.push(a.forged(false));
    lines.push(a.next());
    (lines, keyring_json(&[&a, &b]))
}

#[test]
fn the_signed_log_verifies_and_an_edited_removed_or_reordered_line_fails_check() {
    let dir = tempfile::tempdir().unwrap();
    let (seed, monitor) = monitor_keys(dir.path());
    let store = dir.path().join("store");
    std::fs::create_dir(&store).unwrap();
    let (lines, keys) = faulty_lines();
    std::fs::write(store.join("a.ndjson"), lines.join("\n") + "\n").unwrap();
    std::fs::write(dir.path().join("keys.json"), keys).unwrap();
    let alerts = dir.path().join("alerts.ndjson");
    let status = bin()
        .args(["watch", "--once", "--keys"])
        .arg(dir.path().join("keys.json"))
        .arg("--sign-key")
        .arg(&seed)
        .arg("--alerts")
        .arg(&alerts)
        .arg("--state")
        .arg(dir.path().join("state"))
        .arg(&store)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1), "an alert at or above --fail-on");
    let text = std::fs::read_to_string(&alerts).unwrap();
    let n = text.lines().count();
    assert!(n >= 4, "{text}");
    let m = monitor.to_str().unwrap();
    let (code, report) = check_json(&["--keys", m, alerts.to_str().unwrap()]);
    assert_eq!(code, 0, "{report}");
    for r in report["records"].as_array().unwrap() {
        assert_eq!(r["kind"], "aeplens-alert");
        assert_eq!(r["authenticity"]["status"], "valid");
    }
    // Each change to the log, and the line check must name.
    let original: Vec<&str> = text.lines().collect();
    let edit = |i: usize| {
        let mut l = original.clone();
        let changed = l[i].replace("\"severity\":\"high\"", "\"severity\":\"low\"");
        assert_ne!(changed, l[i]);
        l[i] = Box::leak(changed.into_boxed_str());
        l
    };
    let remove = |i: usize| {
        let mut l = original.clone();
        l.remove(i);
        l
    };
    let reorder = |i: usize| {
        let mut l = original.clone();
        l.swap(i, i + 1);
        l
    };
    for (what, changed, line) in [
        ("edited", edit(2), 3),
        ("removed", remove(2), 3),
        ("reordered", reorder(1), 2),
    ] {
        let path = dir.path().join(format!("{what}.ndjson"));
        std::fs::write(&path, changed.join("\n") + "\n").unwrap();
        let (code, report) = check_json(&["--keys", m, path.to_str().unwrap()]);
        assert_eq!(code, 1, "a log with a line {what} fails check");
        let record = &report["records"][line - 1];
        let failing = record["authenticity"]["status"] != "valid"
            || record["chain"]["link"] == "mismatch"
            || (report["findings"].as_array().unwrap().iter())
                .any(|f| f["locations"][0]["line"] == line && f["severity"] == "high");
        let broken = (report["chain_paths"].as_array().into_iter().flatten())
            .any(|p| p["status"] != "intact");
        assert!(
            failing || broken,
            "{what}: check names line {line}:\n{report}"
        );
        assert!(failing, "{what}: line {line} itself is named:\n{record}");
    }
}

/// Runs `aeplens watch` (following) under `setpriv` when root, so that file permissions
/// hold for it as for any user.
fn as_a_user(cmd: &mut std::process::Command) -> std::process::Command {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .unwrap()
        .stdout
        == b"0\n";
    if !root {
        return std::mem::replace(cmd, bin());
    }
    let mut wrapped = std::process::Command::new("setpriv");
    wrapped
        .args(["--bounding-set", "-dac_override,-dac_read_search"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    wrapped
}

#[test]
fn permission_denied_is_infra_and_the_rest_is_verified() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    std::fs::create_dir(&store).unwrap();
    let (lines, keys) = faulty_lines();
    std::fs::write(store.join("a.ndjson"), lines[..5].join("\n") + "\n").unwrap();
    std::fs::write(store.join("secret.ndjson"), lines[5..].join("\n") + "\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        store.join("secret.ndjson"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    std::fs::write(dir.path().join("keys.json"), keys).unwrap();
    let alerts = dir.path().join("alerts.ndjson");
    let mut cmd = bin();
    cmd.args(["watch", "--once", "--keys"])
        .arg(dir.path().join("keys.json"))
        .arg("--alerts")
        .arg(&alerts)
        .arg("--state")
        .arg(dir.path().join("state"))
        .arg(&store);
    let out = as_a_user(&mut cmd).output().unwrap();
    assert!(
        out.status.code() == Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = log_lines(&alerts);
    let unreadable: Vec<&Value> = log.iter().filter(|a| a["rule"] == "unreadable").collect();
    assert_eq!(unreadable.len(), 1, "{log:?}");
    assert_eq!(unreadable[0]["class"], "infra");
    assert!(
        unreadable[0]["message"]
            .as_str()
            .unwrap()
            .contains("Permission denied")
    );
    assert!(
        log.iter().any(|a| a["rule"] == "F-EXEC-AFTER-DENY"),
        "the readable file is verified"
    );
    assert!(log.iter().all(|a| a["class"] != "tamper"), "{log:?}");
}

/// A running `aeplens watch` over `dir/store`, alerts in `dir/alerts.ndjson`.
struct Running {
    child: std::process::Child,
}

impl Running {
    /// Starts it, and waits until it says it is watching (its signal handlers are set).
    fn start(dir: &Path, seed: &Path, settle: &str) -> Running {
        Running::start_with(dir, seed, settle, &[])
    }

    /// [`Running::start`] with more arguments.
    fn start_with(dir: &Path, seed: &Path, settle: &str, more: &[&str]) -> Running {
        // Paths relative to `dir`: the store is named the same in every run, and so are
        // the dedupe keys.
        let mut child = bin()
            .current_dir(dir)
            .args([
                "watch",
                "--settle",
                settle,
                "--keys",
                "keys.json",
                "--sign-key",
            ])
            .arg(seed)
            .args(["--alerts", "alerts.ndjson", "--state", "state"])
            .args(more)
            .arg("store")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let (ready, is_ready) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for l in stderr.lines().map_while(Result::ok) {
                if l.contains("watching") {
                    let _ = ready.send(());
                }
            }
        });
        is_ready
            .recv_timeout(Duration::from_secs(20))
            .expect("the watch starts");
        Running { child }
    }

    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    fn stop(self) {
        let pid = self.child.id().to_string();
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        let mut child = self.child;
        let status = child.wait().unwrap();
        assert!(status.success(), "SIGTERM ends the watch with 0: {status}");
    }
}

/// Waits until the watch's state says every whole line of every file under `dir/store`
/// was verified.
fn settled(dir: &Path) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let state: Value = std::fs::read(dir.join("state/state.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null);
        let marks = state["files"].as_object().cloned().unwrap_or_default();
        let done = std::fs::read_dir(dir.join("store")).unwrap().all(|f| {
            let path = f.unwrap().path();
            let text = std::fs::read(&path).unwrap();
            let whole = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let name = path.file_name().unwrap().to_str().unwrap();
            (marks.values()).any(|m| {
                let at = m["path"].as_str().unwrap_or("");
                Path::new(at).file_name().is_some_and(|n| n == name) && m["verified"] == whole
            })
        });
        if done {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the watch did not catch up: {state}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Appends the fault store's lines to two stores a step at a time under a running
/// watch, killing it with SIGKILL at `kills` (step, delay in ms) and starting it again;
/// the log's lines at the end.
fn run_with_kills(kills: &[(usize, u64)]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let (seed, monitor) = monitor_keys(dir.path());
    std::fs::create_dir(dir.path().join("store")).unwrap();
    let (lines, keys) = faulty_lines();
    std::fs::write(dir.path().join("keys.json"), keys).unwrap();
    let alerts = dir.path().join("alerts.ndjson");
    let mut running = Running::start(dir.path(), &seed, "0.2");
    let steps: Vec<(&str, &String)> = (lines.iter())
        .flat_map(|l| [("a.ndjson", l), ("b.ndjson", l)])
        .collect();
    for (i, (file, l)) in steps.iter().enumerate() {
        let mut f = std::fs::File::options()
            .create(true)
            .append(true)
            .open(dir.path().join("store").join(file))
            .unwrap();
        writeln!(f, "{l}").unwrap();
        drop(f);
        for &(_, delay) in kills.iter().filter(|(at, _)| *at == i) {
            std::thread::sleep(Duration::from_millis(delay));
            running.kill();
            if !alerts.exists() {
                running = Running::start(dir.path(), &seed, "0.2");
                continue;
            }
            let (code, report) = check_json(&[
                "--keys",
                monitor.to_str().unwrap(),
                alerts.to_str().unwrap(),
            ]);
            let empty = report["records"].as_array().is_none_or(Vec::is_empty);
            assert!(
                code == 0 || (code == 3 && empty),
                "the log verifies after a kill:\n{report}"
            );
            running = Running::start(dir.path(), &seed, "0.2");
        }
        settled(dir.path());
    }
    running.stop();
    let (code, report) = check_json(&[
        "--keys",
        monitor.to_str().unwrap(),
        alerts.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{report}");
    log_lines(&alerts)
}

#[test]
fn killed_at_ten_random_moments_the_log_holds_what_a_run_without_kills_holds() {
    let quiet = run_with_kills(&[]);
    // Ten moments: a step, and a delay after it (a xorshift from a fixed seed).
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let kills: Vec<(usize, u64)> = (0..10)
        .map(|_| ((next() % 16) as usize, next() % 25))
        .collect();
    let killed = run_with_kills(&kills);
    let keys = |log: &[Value]| -> Vec<String> {
        let mut k: Vec<String> = log
            .iter()
            .map(|a| a["dedupe_key"].as_str().unwrap().to_string())
            .collect();
        k.sort();
        k
    };
    let (quiet_keys, killed_keys) = (keys(&quiet), keys(&killed));
    let unique: BTreeSet<&String> = killed_keys.iter().collect();
    assert_eq!(
        unique.len(),
        killed_keys.len(),
        "no alert repeated (kills at {kills:?})"
    );
    assert_eq!(
        quiet_keys, killed_keys,
        "none lost, none added (kills at {kills:?})"
    );
    assert!(
        quiet.iter().any(|a| a["class"] == "tamper")
            && quiet.iter().any(|a| a["class"] == "policy")
    );
}

#[test]
fn ten_stores_appended_at_once_with_torn_writes_raise_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (seed, _) = monitor_keys(dir.path());
    let store = dir.path().join("store");
    std::fs::create_dir(&store).unwrap();
    let emitters: Vec<Emitter> = (0..10)
        .map(|i| Emitter::new(&format!("emitter-{i}"), 10 + i as u8, &format!("run-{i}")))
        .collect();
    std::fs::write(
        dir.path().join("keys.json"),
        keyring_json(&emitters.iter().collect::<Vec<_>>()),
    )
    .unwrap();
    let running = Running::start(dir.path(), &seed, "2");
    let writers: Vec<_> = (emitters.into_iter().enumerate())
        .map(|(i, mut e)| {
            let file = store.join(format!("agent-{i}.ndjson"));
            std::thread::spawn(move || {
                for _ in 0..15 {
                    let l = e.next() + "\n";
                    let (head, tail) = l.split_at(l.len() / 3);
                    let mut f = std::fs::File::options()
                        .create(true)
                        .append(true)
                        .open(&file)
                        .unwrap();
                    f.write_all(head.as_bytes()).unwrap();
                    f.flush().unwrap();
                    std::thread::sleep(Duration::from_millis(30));
                    f.write_all(tail.as_bytes()).unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    settled(dir.path());
    running.stop();
    let log = log_lines(&dir.path().join("alerts.ndjson"));
    assert!(log.is_empty(), "no alert: {log:?}");
}

#[test]
fn a_watch_that_has_seen_a_store_agrees_with_check_on_it() {
    let stores = common::fixtures().join("reference-stores");
    let keys = stores.join("keys.json");
    let mut files: Vec<PathBuf> = (std::fs::read_dir(&stores).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "ndjson") && !p.to_str().unwrap().contains("leases")
        })
        .collect();
    files.sort();
    assert!(files.len() >= 25);
    let tamper: BTreeSet<&str> = aeplens::watch::judge::TAMPER_FINDINGS
        .iter()
        .copied()
        .collect();
    for file in files {
        let dir = tempfile::tempdir().unwrap();
        let alerts = dir.path().join("alerts.ndjson");
        let out = bin()
            .args([
                "watch",
                "--once",
                "--keys",
                keys.to_str().unwrap(),
                "--state",
            ])
            .arg(dir.path().join("state"))
            .arg("--alerts")
            .arg(&alerts)
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.code().is_some_and(|c| c < 2),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let log = log_lines(&alerts);
        let (_, report) = check_json(&["--keys", keys.to_str().unwrap(), file.to_str().unwrap()]);
        // Findings: each tamper or high finding of check is an alert on its run and action.
        let of_check: BTreeSet<(String, String, String)> =
            (report["findings"].as_array().unwrap().iter())
                .filter(|f| {
                    let id = f["id"].as_str().unwrap();
                    f["severity"] == "high" || (tamper.contains(id) && id != "F-DUPLICATE-RECORD")
                })
                .map(|f| {
                    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
                    (s(&f["id"]), s(&f["run_id"]), s(&f["action_ids"][0]))
                })
                .collect();
        let of_watch: BTreeSet<(String, String, String)> = (log.iter())
            .filter(|a| a["rule"].as_str().unwrap().starts_with("F-"))
            .map(|a| {
                let s = |v: &Value| v.as_str().unwrap_or("").to_string();
                (
                    s(&a["rule"]),
                    s(&a["action"]["run_id"]),
                    s(&a["action"]["action_id"]),
                )
            })
            .collect();
        assert_eq!(of_watch, of_check, "{}: the findings", file.display());
        // Signatures: the records check does not find valid, and no other.
        let bad: BTreeSet<u64> = (report["records"].as_array().unwrap().iter())
            .filter(|r| {
                let status = &r["authenticity"]["status"];
                status == "invalid"
                    || status == "binding-mismatch"
                    || (status.is_null()
                        && r["authenticity"]["reason"]
                            .as_str()
                            .is_some_and(|s| s.starts_with("unknown key")))
            })
            .map(|r| r["source"]["line"].as_u64().unwrap())
            .collect();
        let alerted: BTreeSet<u64> = (log.iter())
            .filter(|a| {
                ["signature-invalid", "binding-mismatch", "key-unknown"]
                    .contains(&a["rule"].as_str().unwrap())
            })
            .map(|a| a["record"]["line"].as_u64().unwrap())
            .collect();
        assert_eq!(alerted, bad, "{}: the signatures", file.display());
    }
}

#[test]
fn a_condition_that_clears_and_comes_back_is_alerted_again_across_a_restart() {
    let (mut live, _) = clean_start();
    let keys = std::fs::read(live.path("keys.json")).unwrap();
    std::fs::remove_file(live.path("keys.json")).unwrap();
    live.pass();
    // Killed while the keyring is missing, its state lost: the log says it is open.
    std::fs::remove_file(live.path("state/state.json")).unwrap();
    std::fs::write(live.path("keys.json"), &keys).unwrap();
    live.restart();
    let cleared = live.pass();
    assert_eq!(cleared.len(), 1, "{}", said(&cleared));
    assert_eq!(cleared[0].status, "resolved");
    live.restart();
    std::fs::remove_file(live.path("keys.json")).unwrap();
    live.pass();
    let missing: Vec<&Alert> = (with(&live.issued, Class::Infra, "keyring-missing").into_iter())
        .filter(|a| a.status == "open")
        .collect();
    assert_eq!(missing.len(), 2, "{}", said(&live.issued));
    assert_eq!(missing[0].dedupe_key, missing[1].dedupe_key);
    // The resolved line's own key is new each time too: still one open, one resolved.
    std::fs::write(live.path("keys.json"), &keys).unwrap();
    live.pass();
    let log = log_lines(&live.path("alerts.ndjson"));
    let statuses: Vec<&str> = log.iter().map(|a| a["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["open", "resolved", "open", "resolved"]);
}

#[test]
fn every_ocsf_event_is_a_detection_finding_of_its_alert() {
    let schema =
        common::read_json(&common::fixtures().join("ocsf/detection_finding-1.3.0.schema.json"));
    let validator = jsonschema::validator_for(&schema).unwrap();
    let stores = common::fixtures().join("reference-stores");
    let dir = tempfile::tempdir().unwrap();
    let (alerts, ocsf) = (
        dir.path().join("alerts.ndjson"),
        dir.path().join("ocsf.ndjson"),
    );
    let out = bin()
        .args(["watch", "--once", "--fail-on", "medium", "--keys"])
        .arg(stores.join("keys.json"))
        .arg("--state")
        .arg(dir.path().join("state"))
        .arg("--alerts")
        .arg(&alerts)
        .arg("--ocsf")
        .arg(&ocsf)
        .arg(&stores)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (log, events) = (log_lines(&alerts), log_lines(&ocsf));
    assert!(log.len() > 100, "{}", log.len());
    assert_eq!(events.len(), log.len(), "one event per alert");
    let classes: BTreeSet<&str> = log.iter().map(|a| a["class"].as_str().unwrap()).collect();
    assert_eq!(
        classes.len(),
        3,
        "tamper, policy and infra alerts: {classes:?}"
    );
    for (alert, event) in log.iter().zip(&events) {
        let errors: Vec<String> = validator
            .iter_errors(event)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}\n{event}");
        assert_eq!(event["finding_info"]["uid"], alert["dedupe_key"]);
        assert_eq!(event["finding_info"]["title"], alert["rule"]);
        assert_eq!(event["finding_info"]["types"][0], alert["class"]);
        assert_eq!(event["time"], alert["seen_at_ms"]);
        assert_eq!(event["unmapped"]["record"], alert["record"]);
        let severity = ["info", "low", "medium", "high"]
            .iter()
            .position(|s| alert["severity"] == *s);
        assert_eq!(
            event["severity_id"].as_u64(),
            severity.map(|p| p as u64 + 1)
        );
    }
}

/// The findings `check` gives at or above high on `store`, and those `live` alerted, as
/// (id, run, first action).
fn high_findings(live: &Live, keys: &Path, store: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let (_, report) = check_json(&["--keys", keys.to_str().unwrap(), store.to_str().unwrap()]);
    let of_check: BTreeSet<String> = (report["findings"].as_array().unwrap().iter())
        .filter(|f| f["severity"] == "high")
        .map(|f| format!("{} {} {}", f["id"], f["run_id"], f["action_ids"][0]))
        .collect();
    let of_watch: BTreeSet<String> = (live.issued.iter())
        .map(|a| {
            let action = a.action.as_ref().unwrap();
            let q = |s: &Option<String>| s.as_ref().map_or("null".into(), |s| format!("{s:?}"));
            format!(
                "{:?} {} {}",
                a.rule,
                q(&action.run_id),
                q(&action.action_id)
            )
        })
        .collect();
    (of_check, of_watch)
}

/// A watch trusting the reference-shaped generator's keys (in the returned directory,
/// with `settle` when given), and `records` of its records to append.
fn reference_live(
    records: usize,
    settle: Option<Duration>,
) -> (Live, String, PathBuf, tempfile::TempDir) {
    let mut bytes = Vec::new();
    crate::reference::generate(records, &mut bytes).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("reference-keys.json");
    std::fs::write(&keys, crate::reference::keys_json()).unwrap();
    let k = keys.clone();
    let mut live = Live::new(&[], move |w| {
        w.setting.trust.add_file(k.to_str().unwrap()).unwrap();
        if let Some(settle) = settle {
            w.settle = settle;
        }
    });
    live.restart();
    (live, String::from_utf8(bytes).unwrap(), keys, dir)
}

#[test]
fn judged_by_windows_alone_a_growing_store_raises_what_check_finds_once() {
    // No opening whole after the first: --settle far away.
    let (mut live, text, keys, _dir) = reference_live(80, Some(Duration::from_secs(3600)));
    let mut windowed = 0;
    for l in text.lines() {
        live.append("fleet.ndjson", &[l.to_string()]);
        windowed += live.pass_once().1;
    }
    assert!(
        windowed >= 70,
        "the appends were judged by windows: {windowed}"
    );
    assert!(
        live.issued.iter().all(|a| a.class == Class::Policy),
        "{}",
        said(&live.issued)
    );
    let keys_issued: BTreeSet<&str> = live.issued.iter().map(|a| a.dedupe_key.as_str()).collect();
    assert_eq!(
        keys_issued.len(),
        live.issued.len(),
        "nothing alerted twice"
    );
    let store = live.path("store/fleet.ndjson");
    let (of_check, of_watch) = high_findings(&live, &keys, &store);
    assert!(!of_check.is_empty());
    assert_eq!(of_watch, of_check);
    // Opened whole after a restart (its state lost), it finds nothing the windows did not.
    std::fs::remove_file(live.path("state/state.json")).unwrap();
    live.restart();
    live.quiet("the same store opened whole");
}

#[test]
fn a_reference_shaped_store_grown_record_by_record_raises_only_what_check_finds() {
    let (mut live, text, keys, _dir) = reference_live(60, None);
    for l in text.lines() {
        live.append("fleet.ndjson", &[l.to_string()]);
        live.pass();
    }
    live.quiet("the whole store seen");
    let tamper = with(&live.issued, Class::Tamper, "");
    assert!(
        live.issued.iter().all(|a| a.class != Class::Tamper),
        "{}",
        said(&live.issued)
    );
    assert!(tamper.is_empty());
    // Each policy alert is a high finding `check` gives on the whole store, and each of
    // those is alerted: its retried appends and its findings below high raise nothing.
    let store = live.path("store/fleet.ndjson");
    let (of_check, of_watch) = high_findings(&live, &keys, &store);
    assert!(!of_check.is_empty());
    assert_eq!(of_watch, of_check);
    assert!(live.issued.iter().all(|a| a.class == Class::Policy));
}

#[test]
fn polling_hears_appends_new_files_and_rotations() {
    let dir = tempfile::tempdir().unwrap();
    let (seed, _) = monitor_keys(dir.path());
    std::fs::create_dir(dir.path().join("store")).unwrap();
    let (lines, keys) = faulty_lines();
    std::fs::write(dir.path().join("keys.json"), keys).unwrap();
    let running = Running::start_with(dir.path(), &seed, "0.2", &["--poll"]);
    let store = dir.path().join("store");
    std::fs::write(store.join("a.ndjson"), lines[..3].join("\n") + "\n").unwrap();
    settled(dir.path());
    // Rotated: renamed, and the chain goes on in a new file.
    std::fs::rename(store.join("a.ndjson"), store.join("a.1.ndjson")).unwrap();
    std::fs::write(store.join("a.ndjson"), lines[3..5].join("\n") + "\n").unwrap();
    settled(dir.path());
    running.stop();
    let log = log_lines(&dir.path().join("alerts.ndjson"));
    let rules: Vec<&str> = log.iter().map(|a| a["rule"].as_str().unwrap()).collect();
    assert_eq!(rules, ["F-EXEC-AFTER-DENY"], "{log:?}");
}
