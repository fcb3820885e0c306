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
pub mod sinks;
pub mod state;
mod window;

use crate::analysis::evidence::Evidence;
use crate::model::finding::Severity;
use crate::model::sha256::{Sha256Digest, hex};
use crate::model::text::sanitize;
use crate::open::{Need, Setting};
use crate::verify::Trees;
use alert::{Alert, AlertLog, CONDITIONS, Class, Signer, Subject, dedupe_key};
use judge::{Judging, Rule};
use rayon::prelude::*;
use state::{BLOCK, FileMark, State};
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
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

    /// Looks at store `s`: unchanged, waiting for a torn line, or ready to be judged.
    fn look_at(&mut self, s: usize) -> Looked {
        let store = self.watch.stores[s].clone();
        let mut infra_now = Vec::new();
        let mut alerts = Vec::new();
        if let Err(e) = std::fs::metadata(&store) {
            let key = dedupe_key(&["unreadable", &store, "", &store]);
            let what = format!("{}: {e}", sanitize(&store));
            infra_now.push(infra("unreadable", key, &store, Some((&store, None)), what));
            return Looked::Ready(Box::new(Ready {
                s,
                store,
                look: Vec::new(),
                readable: Vec::new(),
                torn_at: HashMap::new(),
                alerts,
                infra: infra_now,
                window: None,
            }));
        }
        let mut look: Look = Vec::new();
        let mut readable = Vec::new();
        for file in self.files_of(s) {
            let shown = file.display().to_string();
            match std::fs::File::open(&file).and_then(|f| f.metadata()) {
                Ok(m) => {
                    look.push((file.clone(), identity(&m), m.len(), m.modified().ok()));
                    readable.push(file);
                }
                Err(e) => {
                    let key = dedupe_key(&["unreadable", &store, "", &shown]);
                    let what = format!("{}: {e}", sanitize(&shown));
                    infra_now.push(infra("unreadable", key, &store, Some((&shown, None)), what));
                }
            }
        }
        let torn = readable.iter().any(|f| self.torn.contains_key(f));
        if self.looks[s].as_ref() == Some(&look) && !torn && !self.quiet_since_window(s) {
            return Looked::Same;
        }
        // A torn last line waits for `--settle` before the store is judged.
        let mut torn_at = HashMap::new();
        for (file, _, len, modified) in &look {
            match torn_tail(file, *len) {
                Some(start) => {
                    let since = match self.torn.get(file) {
                        Some(&(was, since)) if was == *len => since,
                        _ => Instant::now(),
                    };
                    self.torn.insert(file.clone(), (*len, since));
                    // Torn since it was last written, or since it was first seen so.
                    let written = modified.and_then(|m| m.elapsed().ok()).unwrap_or_default();
                    let waited = since.elapsed().max(written);
                    if waited < self.watch.settle {
                        return Looked::Wait(self.watch.settle.saturating_sub(waited));
                    }
                    torn_at.insert(file.clone(), start);
                }
                None => {
                    self.torn.remove(file);
                }
            }
        }
        // Each file against how far it was verified.
        let mut seen_ids = std::collections::HashSet::new();
        for (file, id, len, _) in &look {
            seen_ids.insert(id.clone());
            let shown = file.display().to_string();
            if let Some(key) = torn_at.get(file) {
                let offset = *key;
                let k = dedupe_key(&["partial-line", &store, id, &format!("{shown}@{offset}")]);
                let what = format!(
                    "{}: the last line (from byte {offset}) is still incomplete after {} s",
                    sanitize(&shown),
                    self.watch.settle.as_secs_f64()
                );
                let mut a = infra("partial-line", k, &store, Some((&shown, None)), what);
                if let Some(r) = a.record.as_mut() {
                    r.offset = Some(offset);
                }
                infra_now.push(a);
            }
            let Some(mark) = self.state.files.get(id) else {
                continue;
            };
            let changed = if *len < mark.verified {
                Some((
                    "file-shrunk",
                    format!(
                        "{} is {len} bytes, shorter than the {} bytes already verified",
                        sanitize(&shown),
                        mark.verified
                    ),
                ))
            } else if last_block(file, mark.verified).is_none_or(|b| b != mark.last_block) {
                Some((
                    "verified-bytes-changed",
                    format!(
                        "{}: bytes already verified (before byte {}) changed",
                        sanitize(&shown),
                        mark.verified
                    ),
                ))
            } else {
                None
            };
            if let Some((rule, what)) = changed {
                let subject = format!("{id}@{}:{}", mark.verified, mark.last_block);
                let key = dedupe_key(&[rule, &store, "", &subject]);
                alerts.push(tamper(rule, key, &store, &shown, what));
            }
        }
        for (id, mark) in &self.state.files {
            let here = look
                .iter()
                .any(|(p, ..)| p.display().to_string() == mark.path);
            if mark.store == store && !seen_ids.contains(id) && !here {
                let key =
                    dedupe_key(&["file-vanished", &store, "", &format!("{}@{id}", mark.path)]);
                let what = format!(
                    "{} is gone (it was verified up to byte {})",
                    sanitize(&mark.path),
                    mark.verified
                );
                alerts.push(infra(
                    "file-vanished",
                    key,
                    &store,
                    Some((&mark.path, None)),
                    what,
                ));
            }
        }
        let changed = self.looks[s].as_ref() != Some(&look);
        let window = self.window_of(s, &look, &torn_at, (alerts.is_empty(), changed));
        Looked::Ready(Box::new(Ready {
            s,
            store,
            look,
            readable,
            torn_at,
            alerts,
            infra: infra_now,
            window,
        }))
    }

    /// Reads the new whole lines of the store's files, and gives the window of each file
    /// to open — or `None`, to open the store whole: the first time, when bytes verified
    /// before changed (`clean` false), when the files `changed` but nothing was appended
    /// (an edit in place), with telemetry, for a file that is not NDJSON by name, when a
    /// file cannot be read; and, one store a pass, every [`WHOLE_EVERY`] and once quiet
    /// after a window.
    fn window_of(
        &mut self,
        s: usize,
        look: &Look,
        torn_at: &HashMap<PathBuf, u64>,
        (clean, changed): (bool, bool),
    ) -> Option<Vec<(String, Vec<u8>, usize)>> {
        let mut whole =
            !clean || self.whole_at[s].is_none() || !self.watch.setting.traces.files.is_empty();
        let complete = self.whole_at[s].is_some_and(|t| t.elapsed() >= WHOLE_EVERY)
            || self.quiet_since_window(s);
        let mut touched = std::collections::HashSet::new();
        let mut firsts = Vec::with_capacity(look.len());
        for (file, id, len, _) in look {
            let ndjson = file.extension().is_some_and(|e| {
                e.eq_ignore_ascii_case("ndjson") || e.eq_ignore_ascii_case("jsonl")
            });
            whole |= !ndjson;
            let end = torn_at.get(file).copied().unwrap_or(*len);
            let lines = self.lines.entry(id.clone()).or_default();
            if end < lines.end() {
                *lines = window::Lines::default();
                whole = true;
            }
            let first_new = lines.count();
            match lines.extend(file, end, &mut self.runs) {
                Ok(runs) => touched.extend(runs),
                Err(_) => whole = true,
            }
            firsts.push((file, id, first_new));
        }
        // A change that appended no line (an edit in place) is judged whole.
        let appended = firsts
            .iter()
            .any(|(_, id, first)| self.lines[*id].count() > *first);
        whole |= !appended && changed;
        if !whole && complete && self.whole_budget > 0 {
            self.whole_budget -= 1;
            whole = true;
        }
        if whole {
            return None;
        }
        let mut windows = Vec::new();
        for (file, id, first_new) in firsts {
            let lines = &self.lines[id];
            match lines.window(file, &touched, first_new) {
                Ok(Some(bytes)) => windows.push((file.display().to_string(), bytes, first_new)),
                Ok(None) => {}
                Err(_) => return None,
            }
        }
        Some(windows)
    }

    /// Opens and judges a store made ready by [`Monitor::look_at`]: its window, or whole.
    fn judge_store(&self, r: &Ready) -> Judged {
        let mut judged = Judged {
            alerts: Vec::new(),
            records: 0,
            marks: marks_of(&r.store, &r.look, &r.torn_at, &self.state.files),
        };
        let opened = match &r.window {
            Some(windows) => Some(self.open_window(windows)),
            None => self.open_whole(r),
        };
        let Some((ev, records)) = opened else {
            return judged;
        };
        judged.records = records;
        let how = Judging {
            store: &r.store,
            fail_on: self.watch.fail_on,
            keys_given: !self.watch.setting.trust.is_empty(),
            rules: &self.watch.rules,
        };
        for a in judge::judge(&ev, &how) {
            (judged.alerts).extend(self.place_load_error(a, &r.torn_at, &r.look));
        }
        judged
    }

    /// Opens the windows of a store's files: the evidence, and how many of its records
    /// are new.
    fn open_window(&self, windows: &[(String, Vec<u8>, usize)]) -> (Box<Evidence>, usize) {
        let inputs = (windows.iter())
            .map(|(path, bytes, _)| crate::load::parse_input(path.as_str().into(), bytes))
            .collect();
        let corpus = crate::load::Corpus::new(inputs);
        let ev = crate::open::open_corpus(&self.watch.setting, corpus);
        let new = (ev.report.records.iter())
            .filter(|rec| {
                let window = windows.iter().find(|w| *w.0 == *rec.source.path);
                window.is_some_and(|w| rec.source.line > w.2)
            })
            .count();
        (Box::new(ev), new)
    }

    /// Opens the store whole, the way every command opens evidence: the evidence, and
    /// how many records it holds.
    fn open_whole(&self, r: &Ready) -> Option<(Box<Evidence>, usize)> {
        let paths: Vec<String> = (r.readable.iter())
            .map(|p| p.display().to_string())
            .collect();
        if paths.is_empty() {
            return None;
        }
        let need = Need::Whole(Trees::OnDisk);
        let (opened, _) = crate::open::open(&self.watch.setting, &paths, need, &mut |_| {});
        let ev = opened.into_whole()?;
        let records = ev.report.records.len();
        Some((Box::new(ev), records))
    }

    /// A load error as the watch says it: none for the torn last line (said as
    /// `partial-line`), tamper for a line inside bytes already verified (it was edited),
    /// infra otherwise.
    fn place_load_error(
        &self,
        alert: Alert,
        torn_at: &HashMap<PathBuf, u64>,
        look: &Look,
    ) -> Option<Alert> {
        if alert.rule != "load-error" {
            return Some(alert);
        }
        let record = alert.record.clone()?;
        let file = PathBuf::from(&record.path);
        let line = record.line.unwrap_or(0) as u64;
        let id = look.iter().find(|l| l.0 == file).map(|l| l.1.clone());
        // Keyed by the file's identity, not its name: a rotated file's bad line is the
        // same bad line.
        let key = dedupe_key(&[
            "load-error",
            &alert.store,
            id.as_deref().unwrap_or(&record.path),
            &line.to_string(),
            &alert.message,
        ]);
        let alert = Alert {
            dedupe_key: key,
            ..alert
        };
        if self.state.issued.contains(&alert.dedupe_key) {
            return Some(alert);
        }
        let verified_lines = id
            .as_ref()
            .and_then(|id| self.state.files.get(id))
            .map_or(0, |m| m.lines);
        if torn_at.contains_key(&file) && line > verified_lines {
            let whole = count_lines(&file);
            if line > whole {
                return None;
            }
        }
        if line > 0 && line <= verified_lines {
            let what = format!(
                "line {line} was verified before and no longer reads: {}",
                alert.message
            );
            let key = dedupe_key(&[
                "verified-bytes-changed",
                &alert.store,
                "",
                &alert.dedupe_key,
            ]);
            return Some(tamper(
                "verified-bytes-changed",
                key,
                &alert.store,
                &record.path,
                what,
            ));
        }
        Some(alert)
    }
}

/// What looking at a store gave.
enum Looked {
    /// Nothing changed since it was judged.
    Same,
    /// A torn line: look again after this long.
    Wait(Duration),
    /// To be opened and judged.
    Ready(Box<Ready>),
}

/// A store to open and judge, and what looking at its files found.
struct Ready {
    s: usize,
    store: String,
    look: Look,
    /// The files that can be read.
    readable: Vec<PathBuf>,
    /// Files whose last line is torn past `--settle`: where that line starts.
    torn_at: HashMap<PathBuf, u64>,
    /// Bytes verified before that changed.
    alerts: Vec<Alert>,
    /// The store's infra conditions.
    infra: Vec<Alert>,
    /// What to open: each file's window (the runs an append touched, and the line
    /// number its new lines start after), or the whole store when `None`.
    window: Option<Vec<(String, Vec<u8>, usize)>>,
}

/// What opening and judging a store gave.
struct Judged {
    alerts: Vec<Alert>,
    /// Records verified: all of the store's when it was opened whole, else the new ones.
    records: usize,
    marks: Vec<(String, FileMark)>,
}

/// Each file's mark after it was judged: verified up to its last whole line.
fn marks_of(
    store: &str,
    look: &Look,
    torn_at: &HashMap<PathBuf, u64>,
    before: &BTreeMap<String, FileMark>,
) -> Vec<(String, FileMark)> {
    look.iter()
        .filter_map(|(file, id, len, _)| {
            let verified = torn_at.get(file).copied().unwrap_or(*len);
            let lines = match before.get(id) {
                Some(m) if m.verified <= verified => {
                    m.lines + count_between(file, m.verified, verified)?
                }
                _ => count_between(file, 0, verified)?,
            };
            Some((
                id.clone(),
                FileMark {
                    path: file.display().to_string(),
                    store: store.to_string(),
                    verified,
                    lines,
                    last_block: last_block(file, verified)?,
                },
            ))
        })
        .collect()
}

/// `DEVICE:INODE` of a file (its path where there are none).
fn identity(m: &std::fs::Metadata) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        format!("{}:{}", m.dev(), m.ino())
    }
    #[cfg(not(unix))]
    {
        format!("{:?}", m.created().ok())
    }
}

/// Where the torn last line of `file` (`len` bytes) starts, when its last byte is not a
/// newline.
fn torn_tail(file: &Path, len: u64) -> Option<u64> {
    if len == 0 {
        return None;
    }
    let from = len.saturating_sub(1 << 20);
    let mut f = std::fs::File::open(file).ok()?;
    f.seek(SeekFrom::Start(from)).ok()?;
    let mut tail = Vec::new();
    f.take(len - from).read_to_end(&mut tail).ok()?;
    if tail.last() == Some(&b'\n') {
        return None;
    }
    Some(
        tail.iter()
            .rposition(|&b| b == b'\n')
            .map_or(from, |i| from + i as u64 + 1),
    )
}

/// SHA-256 (hex) of the [`BLOCK`] bytes of `file` before `end`.
fn last_block(file: &Path, end: u64) -> Option<String> {
    let from = end.saturating_sub(BLOCK);
    let mut f = std::fs::File::open(file).ok()?;
    f.seek(SeekFrom::Start(from)).ok()?;
    let mut block = Vec::new();
    f.take(end - from).read_to_end(&mut block).ok()?;
    (block.len() as u64 == end - from).then(|| Sha256Digest::of(&block).to_string())
}

/// Newlines in `file` between bytes `from` and `to`.
fn count_between(file: &Path, from: u64, to: u64) -> Option<u64> {
    let mut f = std::fs::File::open(file).ok()?;
    f.seek(SeekFrom::Start(from)).ok()?;
    let mut bytes = Vec::new();
    f.take(to.saturating_sub(from))
        .read_to_end(&mut bytes)
        .ok()?;
    Some(memchr::memchr_iter(b'\n', &bytes).count() as u64)
}

/// Whole lines in `file`.
fn count_lines(file: &Path) -> u64 {
    sinks::count_lines(file).unwrap_or(0)
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
