//! The footprint of `aeplens watch` (release build): STORES stores appended at a combined
//! RATE records a second for SECONDS seconds, one record in twenty an action executed
//! after a deny (a policy alert), watched by the release binary:
//!
//! ```text
//! cargo build --release && cargo run --release --example bench_watch -- [STORES [RATE [SECONDS]]]
//! ```
//! (defaults 100, 1000, 60). Each store is a directory with one file, written as an
//! emitter writes it: a chain of cumulative snapshots, a new run every five records.
//! Prints, from each alert's `seen_at_ms` and the moment its record was appended, the
//! append-to-alert latency (median, p95, max; every faulty record must be alerted), the
//! watch's peak resident memory (`VmHWM`) and the CPU it used (user + system, in cores).

use aeplens::model::json::Json;
use aeplens::verify::sign::{link_to, sign_legacy, signing_key};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let stores = args.first().copied().unwrap_or(100) as usize;
    let rate = args.get(1).copied().unwrap_or(1000);
    let seconds = args.get(2).copied().unwrap_or(60);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let key = signing_key(&[5; 32]);
    let public = aeplens::model::sha256::hex(key.verifying_key().as_bytes());
    std::fs::write(
        dir.path().join("keys.json"),
        format!("{{\"bench-key\":\"{public}\"}}"),
    )
    .unwrap();
    let paths: Vec<PathBuf> = (0..stores)
        .map(|i| dir.path().join(format!("agent-{i:03}")))
        .collect();
    for p in &paths {
        std::fs::create_dir(p).unwrap();
    }
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/aeplens");
    let mut child = std::process::Command::new(&bin)
        .current_dir(dir.path())
        .args([
            "watch",
            "--keys",
            "keys.json",
            "--alerts",
            "alerts.ndjson",
            "--state",
            "state",
        ])
        .args(paths.iter().map(|p| p.file_name().unwrap()))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e} (cargo build --release first)", bin.display()));
    wait_until_watching(&mut child);
    let pid = child.id();
    let (cpu_before, started) = (cpu_ticks(pid), Instant::now());
    let mut emitters: Vec<Emitter> = (0..stores).map(|i| Emitter::new(i, &key)).collect();
    // (store, line) → when it was appended, for the records that must raise an alert.
    let mut appended: HashMap<(usize, usize), u64> = HashMap::new();
    let every = Duration::from_secs_f64(1.0 / rate as f64);
    let total = rate * seconds;
    for n in 0..total {
        let due = started + every * u32::try_from(n).unwrap();
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let s = (n as usize) % stores;
        let faulty = n % 20 == 19;
        let line = emitters[s].next(faulty);
        let file = paths[s].join("agent.ndjson");
        let mut f = std::fs::File::options()
            .create(true)
            .append(true)
            .open(&file)
            .unwrap();
        f.write_all(line.as_bytes()).unwrap();
        if faulty {
            appended.insert((s, emitters[s].lines), now_ms());
        }
    }
    let writing = started.elapsed();
    // Every faulty record alerted, or 30 s more.
    let alerts = dir.path().join("alerts.ndjson");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut latencies = Vec::new();
    while Instant::now() < deadline {
        latencies = latency(&alerts, &appended);
        if latencies.len() >= appended.len() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let cpu = cpu_ticks(pid) - cpu_before;
    let elapsed = started.elapsed();
    let peak_kb = peak_rss_kb(pid);
    std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    child.wait().unwrap();
    latencies.sort_unstable();
    let at = |q: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(0)
    };
    let ticks = 100.0; // sysconf(_SC_CLK_TCK) on Linux
    println!(
        "stores {stores} · {total} records at {rate}/s over {:.1} s · {} faulty records, {} alerted",
        writing.as_secs_f64(),
        appended.len(),
        latencies.len()
    );
    println!(
        "append-to-alert latency: median {} ms, p95 {} ms, max {} ms",
        at(0.5),
        at(0.95),
        latencies.last().copied().unwrap_or(0)
    );
    println!(
        "watch: peak RSS {:.1} MB, CPU {:.2} cores over {:.1} s",
        peak_kb as f64 / 1024.0,
        cpu as f64 / ticks / elapsed.as_secs_f64(),
        elapsed.as_secs_f64()
    );
}

/// One emitter per store: cumulative snapshots, a new run every five records.
struct Emitter<'k> {
    store: usize,
    key: &'k ed25519_dalek::SigningKey,
    run: usize,
    actions: Vec<serde_json::Value>,
    previous: Option<Json>,
    /// Lines written.
    lines: usize,
}

impl<'k> Emitter<'k> {
    fn new(store: usize, key: &'k ed25519_dalek::SigningKey) -> Emitter<'k> {
        Emitter {
            store,
            key,
            run: 0,
            actions: Vec::new(),
            previous: None,
            lines: 0,
        }
    }

    /// The next record's line; `faulty`: its new action ran although denied.
    fn next(&mut self, faulty: bool) -> String {
        if self.lines.is_multiple_of(5) {
            self.run += 1;
            self.actions.clear();
            self.previous = None;
        }
        let t = now_ms();
        let decision = if faulty { "deny" } else { "allow" };
        self.actions.push(serde_json::json!({
            "action_id": format!("action-{}", self.actions.len()),
            "tool_name": if faulty { "exec_command" } else { "read_file" },
            "state_changing": faulty,
            "evidence_refs": [],
            "timestamp_ms": t,
            "recording_mode": "validation",
            "side_effect_class": if faulty { "mutate-local" } else { "read" },
            "arguments_digest": format!("sha256:{:064x}", self.lines),
            "outcome": "success",
            "capability_decision": {
                "capability": "tools", "subject": "agent:bench", "resource": "res://bench",
                "decision": decision, "reason_code": "POLICY", "approval_mode": "policy",
            },
        }));
        let record = serde_json::json!({
            "schema_version": "aep/v0.5",
            "run_id": format!("run-{:03}-{:05}", self.store, self.run),
            "user_id": "user:bench",
            "policy_bundle_digest": format!("sha256:{:064x}", 7),
            "input_refs": [], "output_refs": [], "capability_decisions": [],
            "actions": self.actions,
            "verifier_results": [],
            "created_at_ms": t,
        });
        let mut record = Json::from_serde(&record);
        link_to(&mut record, self.previous.as_ref());
        sign_legacy(&mut record, "bench-key", self.key);
        self.previous = Some(record.clone());
        self.lines += 1;
        serde_json::to_string(&record).unwrap() + "\n"
    }
}

/// Latencies (ms) of the alerts about the records in `appended`.
fn latency(alerts: &Path, appended: &HashMap<(usize, usize), u64>) -> Vec<u64> {
    let text = std::fs::read_to_string(alerts).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|a| a["rule"] == "F-EXEC-AFTER-DENY")
        .filter_map(|a| {
            let path = a["record"]["path"].as_str()?;
            let store: usize = path.split("agent-").nth(1)?.get(..3)?.parse().ok()?;
            let line = usize::try_from(a["record"]["line"].as_u64()?).ok()?;
            let at = appended.get(&(store, line))?;
            Some(a["seen_at_ms"].as_u64()?.saturating_sub(*at))
        })
        .collect()
}

fn wait_until_watching(child: &mut std::process::Child) {
    use std::io::BufRead;
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let (ready, is_ready) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in stderr.lines().map_while(Result::ok) {
            if l.contains("watching") {
                let _ = ready.send(());
            }
        }
    });
    is_ready
        .recv_timeout(Duration::from_secs(30))
        .expect("the watch starts");
}

fn now_ms() -> u64 {
    aeplens::watch::now_ms()
}

/// utime + stime of `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    fields
        .get(11)
        .and_then(|u| u.parse::<u64>().ok())
        .unwrap_or(0)
        + fields
            .get(12)
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0)
}

/// `VmHWM` of `pid` in KiB.
fn peak_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    (status.lines())
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
