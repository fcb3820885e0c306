//! `aeplens watch` (docs/watch.md): stores verified as they grow, alerts classed tamper /
//! policy / infra, each issued once across restarts, written as a chained (and signed)
//! log that `check` verifies.
//!
//! A [`Monitor`] makes passes over the stores a change was heard in ([`follow`]). A pass
//! looks at each changed store's files against how far they were verified ([`state`]),
//! opens what the change needs — the `window` of the runs an append touched, or the
//! store whole the way every command opens evidence ([`crate::open::open`], with the
//! evidence index in the state directory) — side by side, judges it ([`judge`]), appends
//! what was not issued to the log ([`alert`]), gives it to the sinks ([`sinks`]) and then
//! writes the state. The log is the record of what was issued: a monitor killed at any
//! moment and started again repeats nothing and loses nothing.

pub mod alert;
pub mod follow;
pub mod judge;
mod look;
pub mod sinks;
pub mod state;
mod window;

use crate::model::finding::Severity;
use crate::model::sha256::{Sha256Digest, hex};
use crate::model::text::sanitize;
use crate::open::Setting;
use alert::{Alert, AlertLog, CONDITIONS, Class, Signer, Subject, dedupe_key};
use judge::Rule;
use look::{Judged, Looked};
use rayon::prelude::*;
use state::State;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

/// What a watch is run with.
pub struct Watch {
    /// Trust, leases, telemetry; its cache is set to the state directory's index.
    pub setting: Setting,
    /// The watched PATHs, as given: each a store.
    pub stores: Vec<String>,
    pub rules: Vec<Rule>,
    /// The rules file's text (part of the state's configuration).
    pub rules_text: String,
    pub fail_on: Severity,
    /// How long a torn last line may stay torn before it is an infra alert, and how long a
    /// store judged by a window stays quiet before it is opened whole.
    pub settle: Duration,
    pub state_dir: PathBuf,
    /// The alert log (stdout when `None`).
    pub alerts: Option<PathBuf>,
    pub ocsf: Option<PathBuf>,
    pub exec: Option<String>,
    pub signer: Option<Signer>,
    /// The trust and lease files, watched for going missing: (path, rule).
    pub inputs: Vec<(String, &'static str)>,
}

/// A running watch.
pub struct Monitor {
    watch: Watch,
    log: AlertLog,
    state: State,
    /// Per store: how its files looked when it was last judged.
    looks: Vec<Option<Look>>,
    /// Per store: its infra conditions when it was last looked at.
    infra: Vec<Vec<Alert>>,
    /// Conditions of no store (inputs missing, the state not written, a sink failing).
    global_infra: BTreeMap<String, Alert>,
    /// Files whose last line is torn: its length then, and since when.
    torn: HashMap<PathBuf, (u64, Instant)>,
    /// Records verified in each store, as last opened.
    records: Vec<usize>,
    /// Each file's whole lines and the runs they name, by `DEVICE:INODE`: what a window
    /// is cut from.
    lines: HashMap<String, window::Lines>,
    runs: window::Runs,
    /// Per store: when it was last opened whole.
    whole_at: Vec<Option<Instant>>,
    /// Openings whole that only completeness asks for (every [`WHOLE_EVERY`], or quiet
    /// after a window) left in this pass: one, so that a pass takes one store's opening
    /// whole at most beside the windows.
    whole_budget: usize,
    /// Per store: when it was last judged by a window; it is opened whole once it has been
    /// quiet for `--settle` after that.
    windowed_at: Vec<Option<Instant>>,
    /// How the telemetry files looked at the last pass: when they change, every store is
    /// judged again (a capture gap is decided when the spans land).
    traces_look: Vec<(u64, Option<SystemTime>)>,
    /// Alerts issued by class, since start.
    pub raised: BTreeMap<Class, usize>,
    /// The worst severity issued since start.
    pub worst: Option<Severity>,
    /// How long ago the change judged last was written, when the last pass judged one.
    pub lag: Option<Duration>,
    exec: Option<sinks::Exec>,
    ocsf: Option<sinks::Ocsf>,
}

/// How often a store that keeps changing is opened whole (what a window leaves out: what
/// spans runs).
const WHOLE_EVERY: Duration = Duration::from_secs(30);

/// One file of a store as it was seen: path, `DEVICE:INODE`, length, modification time.
type Look = Vec<(PathBuf, String, u64, Option<SystemTime>)>;

/// What a pass did.
#[derive(Debug, Default)]
pub struct Pass {
    /// The alerts it issued, in the order written.
    pub issued: Vec<Alert>,
    /// Some store waits for a torn line to complete, or for its opening whole: look again
    /// after this long.
    pub again_in: Option<Duration>,
    /// Stores judged by a window (the runs an append touched) rather than whole.
    pub windowed: usize,
}

impl Monitor {
    /// Starts a watch: reads the state (said when it is not reused) and the alert log
    /// (cut after its last whole line), and gives every sink what it missed.
    pub fn start(mut watch: Watch) -> Result<(Monitor, Vec<String>), String> {
        let mut said = Vec::new();
        let config = config_of(&watch);
        let (mut state, note) = State::load(&watch.state_dir, &config);
        said.extend(note);
        watch.setting.cache = crate::open::Cache::Dir(watch.state_dir.join("index"));
        let mut log = AlertLog::open(watch.alerts.as_deref(), watch.signer.take())?;
        if log.to_stdout() {
            for key in &state.issued {
                log.remember(key.clone());
            }
            log.continue_from(state.last_alert.as_deref().and_then(Sha256Digest::from_hex));
        } else {
            // The log is the record of what was issued and what is still open.
            state.issued = log.keys().cloned().collect();
            state.open_infra.clone_from(log.open_conditions());
        }
        let exec = watch.exec.clone().map(|command| sinks::Exec { command });
        let ocsf = watch.ocsf.clone().map(|path| sinks::Ocsf { path });
        let n = watch.stores.len();
        let mut monitor = Monitor {
            watch,
            log,
            state,
            looks: vec![None; n],
            infra: vec![Vec::new(); n],
            global_infra: BTreeMap::new(),
            torn: HashMap::new(),
            records: vec![0; n],
            traces_look: Vec::new(),
            lines: HashMap::new(),
            runs: window::Runs::default(),
            whole_at: vec![None; n],
            whole_budget: 0,
            windowed_at: vec![None; n],
            raised: BTreeMap::new(),
            worst: None,
            lag: None,
            exec,
            ocsf,
        };
        monitor.catch_up_sinks()?;
        Ok((monitor, said))
    }

    /// The stores `changed` paths are in; every store when the telemetry changed.
    pub fn stores_of(&self, changed: &[PathBuf]) -> Vec<usize> {
        let traces: Vec<PathBuf> = (self.watch.setting.traces.files.iter())
            .filter_map(|t| std::fs::canonicalize(t).ok())
            .collect();
        let telemetry = changed.iter().any(|c| {
            let c = std::fs::canonicalize(c).unwrap_or_else(|_| c.clone());
            traces.contains(&c)
        });
        if telemetry {
            return (0..self.watch.stores.len()).collect();
        }
        let roots: Vec<PathBuf> = (self.watch.stores.iter())
            .map(|s| std::fs::canonicalize(s).unwrap_or_else(|_| PathBuf::from(s)))
            .collect();
        let mut out: Vec<usize> = (0..roots.len())
            .filter(|&i| {
                changed.iter().any(|c| {
                    let c = std::fs::canonicalize(c).unwrap_or_else(|_| c.clone());
                    let root = &roots[i];
                    c.starts_with(root)
                        || (root.is_file() || !root.exists()) && c.parent() == root.parent()
                })
            })
            .collect();
        out.extend(self.torn_stores());
        out.extend((0..self.windowed_at.len()).filter(|&s| self.quiet_since_window(s)));
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The store was judged by a window and has been quiet for `--settle` since: it is
    /// due to be opened whole.
    fn quiet_since_window(&self, s: usize) -> bool {
        self.windowed_at[s].is_some_and(|t| t.elapsed() >= self.watch.settle)
    }

    /// Stores with a torn line waiting to settle.
    fn torn_stores(&self) -> Vec<usize> {
        (0..self.watch.stores.len())
            .filter(|&i| {
                let files = self.files_of(i);
                files.iter().any(|f| self.torn.contains_key(f))
            })
            .collect()
    }

    /// Records verified over every store, as last opened.
    pub fn records(&self) -> usize {
        self.records.iter().sum()
    }

    pub fn store_count(&self) -> usize {
        self.watch.stores.len()
    }

    /// Looks at stores `which` (each one whose files changed since it was last judged),
    /// and issues what they raise.
    pub fn pass(&mut self, which: &[usize]) -> Pass {
        let mut pass = Pass::default();
        let traces_look: Vec<(u64, Option<SystemTime>)> = (self.watch.setting.traces.files.iter())
            .map(|t| std::fs::metadata(t).map_or((0, None), |m| (m.len(), m.modified().ok())))
            .collect();
        let all: Vec<usize>;
        let which = if traces_look == self.traces_look {
            which
        } else {
            self.traces_look = traces_look;
            self.looks.iter_mut().for_each(|l| *l = None);
            all = (0..self.watch.stores.len()).collect();
            &all
        };
        let mut found = Vec::new();
        let mut judged_stores = Vec::new();
        let mut ready = Vec::new();
        // The store opened whole longest ago first: it takes this pass's opening whole.
        let mut which = which.to_vec();
        which.sort_by_key(|&s| self.whole_at[s]);
        self.whole_budget = 1;
        for &s in &which {
            match self.look_at(s) {
                Looked::Same => {}
                Looked::Wait(d) => {
                    pass.again_in = Some(pass.again_in.map_or(d, |a: Duration| a.min(d)));
                }
                Looked::Ready(r) => ready.push(*r),
            }
        }
        // The stores are opened and judged side by side: nothing of the monitor changes
        // while they are.
        let this = &*self;
        let judged: Vec<Judged> = ready.par_iter().map(|r| this.judge_store(r)).collect();
        for (r, j) in ready.into_iter().zip(judged) {
            if r.window.is_some() {
                pass.windowed += 1;
                self.records[r.s] += j.records;
                self.windowed_at[r.s] = Some(Instant::now());
            } else {
                self.records[r.s] = j.records;
                self.whole_at[r.s] = Some(Instant::now());
                self.windowed_at[r.s] = None;
            }
            self.infra[r.s].clone_from(&r.infra);
            found.extend(r.alerts);
            found.extend(j.alerts);
            found.extend(r.infra);
            let newest = r.look.iter().filter_map(|l| l.3).max();
            self.lag = newest.and_then(|t| t.elapsed().ok());
            judged_stores.push((r.s, r.look, j.marks));
        }
        for at in self.windowed_at.iter().flatten() {
            let wait = self.watch.settle.saturating_sub(at.elapsed());
            pass.again_in = Some(pass.again_in.map_or(wait, |a: Duration| a.min(wait)));
        }
        self.check_inputs();
        found.extend(self.resolutions());
        found.extend(self.global_infra.values().cloned());
        let new: Vec<Alert> = found
            .into_iter()
            .filter(|a| a.status == "resolved" || !self.state.issued.contains(&a.dedupe_key))
            .collect();
        let new = unique(new);
        if let Err(e) = self.issue(&new, &mut pass) {
            // Nothing was issued: the state stays as it was, and the next pass tries again,
            // opening those stores whole (their new lines were read).
            eprintln!("aeplens: watch: cannot write the alert log: {e}");
            for (s, ..) in judged_stores {
                self.whole_at[s] = None;
            }
            return pass;
        }
        // A sink that failed on them is said at once.
        let failed: Vec<Alert> = (self.global_infra.values())
            .filter(|a| !self.state.issued.contains(&a.dedupe_key))
            .cloned()
            .collect();
        if let Err(e) = self.issue(&failed, &mut pass) {
            eprintln!("aeplens: watch: cannot write the alert log: {e}");
        }
        for (s, look, marks) in judged_stores {
            self.state
                .files
                .retain(|_, m| m.store != self.watch.stores[s]);
            self.state.files.extend(marks);
            self.looks[s] = Some(look);
        }
        self.save(&mut pass);
        pass
    }

    /// Writes `alerts` to the log, then to the sinks; counts them.
    fn issue(&mut self, alerts: &[Alert], pass: &mut Pass) -> std::io::Result<()> {
        if alerts.is_empty() {
            return Ok(());
        }
        let lines = self.log.append(alerts, now_ms())?;
        for a in alerts {
            if a.status == "resolved" {
                self.state
                    .issued
                    .remove(a.resolves.as_deref().unwrap_or(""));
                self.state
                    .open_infra
                    .remove(a.resolves.as_deref().unwrap_or(""));
                continue;
            }
            self.state.issued.insert(a.dedupe_key.clone());
            if CONDITIONS.contains(&a.rule.as_str()) {
                self.state
                    .open_infra
                    .insert(a.dedupe_key.clone(), a.clone());
            }
            *self.raised.entry(a.class).or_default() += 1;
            self.worst = Some(self.worst.map_or(a.severity, |w| w.min(a.severity)));
        }
        self.state.last_alert = self.log.last().map(|h| h.to_string());
        pass.issued.extend(alerts.iter().cloned());
        self.deliver(&lines);
        Ok(())
    }

    /// Gives `lines` (just written to the log) to the sinks; a failing sink is an infra
    /// condition, resolved when it delivers again.
    fn deliver(&mut self, lines: &[String]) {
        if let Some(ocsf) = &self.ocsf {
            let rule = "sink-failed";
            let key = dedupe_key(&[rule, "", "", &ocsf.path.display().to_string()]);
            match ocsf.write(lines) {
                Ok(()) => {
                    *self.state.delivered.entry("ocsf".into()).or_default() += lines.len() as u64;
                    self.global_infra.remove(&key);
                }
                Err(e) => {
                    let what = format!("--ocsf {}: {e}", ocsf.path.display());
                    self.global_infra
                        .insert(key.clone(), infra(rule, key, "", None, what));
                }
            }
        }
        if let Some(exec) = &self.exec {
            let rule = "sink-failed";
            let key = dedupe_key(&[rule, "", "", &exec.command]);
            let mut failed = None;
            for line in lines {
                if let Err(e) = exec.send(line) {
                    failed = Some(e);
                }
                *self.state.delivered.entry("exec".into()).or_default() += 1;
            }
            match failed {
                None => {
                    self.global_infra.remove(&key);
                }
                Some(e) => {
                    let what = format!(
                        "--exec {:?}: {e} (the alert stays in the log)",
                        exec.command
                    );
                    self.global_infra
                        .insert(key.clone(), infra(rule, key, "", None, what));
                }
            }
        }
    }

    /// Gives each sink the log's lines it has not had (a restart after a kill between
    /// the log and the sink).
    fn catch_up_sinks(&mut self) -> Result<(), String> {
        if self.log.to_stdout() {
            return Ok(());
        }
        if let Some(ocsf) = &self.ocsf {
            sinks::cut_torn_tail(&ocsf.path).map_err(|e| format!("--ocsf: {e}"))?;
            let had = sinks::count_lines(&ocsf.path).map_err(|e| format!("--ocsf: {e}"))?;
            self.state.delivered.insert("ocsf".into(), had);
        }
        let lines = self.log.lines();
        let missed: BTreeMap<&str, u64> = (["ocsf", "exec"].into_iter())
            .filter(|k| {
                (*k == "ocsf" && self.ocsf.is_some()) || (*k == "exec" && self.exec.is_some())
            })
            .map(|k| (k, self.state.delivered.get(k).copied().unwrap_or(0)))
            .filter(|&(_, had)| had < lines)
            .collect();
        for (sink, had) in missed {
            let lines = self
                .log
                .lines_from(had)
                .map_err(|e| format!("alert log: {e}"))?;
            match sink {
                "ocsf" => {
                    if let Some(ocsf) = &self.ocsf {
                        ocsf.write(&lines).map_err(|e| format!("--ocsf: {e}"))?;
                    }
                }
                _ => {
                    if let Some(exec) = &self.exec {
                        for line in &lines {
                            let _ = exec.send(line);
                        }
                    }
                }
            }
            self.state
                .delivered
                .insert(sink.into(), had + lines.len() as u64);
        }
        Ok(())
    }

    /// Writes the state; a failure is an infra condition (the alerts are in the log).
    fn save(&mut self, pass: &mut Pass) {
        let rule = "state-write-failed";
        let key = dedupe_key(&[rule, "", "", &self.watch.state_dir.display().to_string()]);
        match self.state.save(&self.watch.state_dir) {
            Ok(()) => {
                self.global_infra.remove(&key);
            }
            Err(e) => {
                let what = format!("state {}: {e}", self.watch.state_dir.display());
                let alert = infra(rule, key.clone(), "", None, what);
                self.global_infra.insert(key.clone(), alert.clone());
                if !self.state.issued.contains(&key) {
                    let _ = self.issue(&[alert], pass);
                }
            }
        }
    }

    /// Infra conditions alerted that no longer hold: each resolved once.
    fn resolutions(&self) -> Vec<Alert> {
        let now: std::collections::HashSet<&str> = (self.infra.iter().flatten())
            .chain(self.global_infra.values())
            .map(|a| a.dedupe_key.as_str())
            .collect();
        (self.state.open_infra.values())
            .filter(|a| !now.contains(a.dedupe_key.as_str()))
            .filter(|a| a.store.is_empty() || self.watch.stores.contains(&a.store))
            .map(Alert::resolved)
            .collect()
    }

    /// The trust and lease files still there and readable.
    fn check_inputs(&mut self) {
        for (path, rule) in &self.watch.inputs {
            let key = dedupe_key(&[rule, "", "", path]);
            match std::fs::File::open(path) {
                Ok(_) => {
                    self.global_infra.remove(&key);
                }
                Err(e) => {
                    let what = format!(
                        "{} {}: {e} (verification goes on with what was read at start)",
                        if *rule == "keyring-missing" {
                            "keyring"
                        } else {
                            "lease file"
                        },
                        sanitize(path)
                    );
                    let subject = Some((path.as_str(), None));
                    let alert = infra(rule, key.clone(), "", subject, what);
                    self.global_infra.insert(key, alert);
                }
            }
        }
    }

    /// The evidence files of store `s`, without the watch's own outputs.
    fn files_of(&self, s: usize) -> Vec<PathBuf> {
        let own: Vec<PathBuf> = (self.watch.alerts.iter())
            .chain(self.watch.ocsf.iter())
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
        let state = std::fs::canonicalize(&self.watch.state_dir).ok();
        crate::load::evidence_files(std::slice::from_ref(&self.watch.stores[s]))
            .into_iter()
            .filter(|f| {
                let real = std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
                !own.contains(&real) && !state.as_ref().is_some_and(|d| real.starts_with(d))
            })
            .collect()
    }
}

/// Alerts with one line per dedupe key, in the order found.
fn unique(alerts: Vec<Alert>) -> Vec<Alert> {
    let mut seen = std::collections::HashSet::new();
    alerts
        .into_iter()
        .filter(|a| seen.insert(a.dedupe_key.clone()))
        .collect()
}

fn infra(
    rule: &str,
    key: String,
    store: &str,
    subject: Option<(&str, Option<usize>)>,
    message: String,
) -> Alert {
    Alert {
        class: Class::Infra,
        severity: Severity::Medium,
        rule: rule.into(),
        dedupe_key: key,
        resolves: None,
        store: store.into(),
        record: subject.map(|(path, line)| Subject {
            path: path.into(),
            line,
            offset: None,
            record_sha256: None,
        }),
        action: None,
        message,
        status: "open".into(),
    }
}

fn tamper(rule: &str, key: String, store: &str, path: &str, message: String) -> Alert {
    Alert {
        class: Class::Tamper,
        severity: Severity::High,
        ..infra(rule, key, store, Some((path, None)), message)
    }
}

/// What the verdicts and alerts depend on, as a digest: a state made under another is
/// not reused.
fn config_of(watch: &Watch) -> String {
    let setting = &watch.setting;
    let parts = serde_json::json!({
        "keys": setting.trust.fingerprints(),
        "leases": setting.leases.digests,
        "profile": format!("{:?}", setting.options.profile),
        "rules": watch.rules_text,
        "fail_on": watch.fail_on.name(),
        "traces": setting.traces.files,
    });
    hex(&Sha256Digest::of(parts.to_string().as_bytes()).0)
}

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
