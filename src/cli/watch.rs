//! `aeplens watch`: the command line of [`crate::watch`] — its arguments, the status line
//! on a terminal, the signals that end it, and its exit code.

use super::{KeyArgs, ProfileArg, SeverityArg, TraceArgs};
use crate::model::text::sanitize;
use crate::watch::alert::{Class, Signer};
use crate::watch::judge::read_rules;
use crate::watch::{Monitor, Watch};
use clap::Args;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Arguments of `watch`.
#[derive(Args, Debug)]
pub struct WatchArgs {
    #[command(flatten)]
    pub keys: KeyArgs,
    /// Lease file (ScopeLease / ApprovalReceipt JSON) to check lease windows against. Repeatable.
    #[arg(long = "leases", value_name = "FILE")]
    pub leases: Vec<String>,
    #[command(flatten)]
    pub traces: TraceArgs,
    /// Verification profile.
    #[arg(long, value_enum, default_value = "forensic")]
    pub profile: ProfileArg,
    /// Rules, one a line: `NAME SEVERITY: EXPRESSION` in the filter language of
    /// `aeplens query` (`#` comments). A rule alerts once per action it matches, when the
    /// action first lands.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<String>,
    /// Findings at least this severe are policy alerts; with --once, an alert at least
    /// this severe makes the exit code 1.
    #[arg(long, value_enum, default_value = "high")]
    pub fail_on: SeverityArg,
    /// Sign each alert with this Ed25519 seed (32 bytes: 64 hex digits or raw), as an
    /// AEP v0.3 record: `aeplens check --keys MONITOR-KEYS ALERTS` verifies the log.
    #[arg(long, value_name = "FILE")]
    pub sign_key: Option<PathBuf>,
    /// The key id alerts are signed under.
    #[arg(
        long,
        value_name = "ID",
        default_value = "aeplens-watch",
        requires = "sign_key"
    )]
    pub sign_key_id: String,
    /// Print the keyring (`{"ID": "PUBLIC KEY"}`) that verifies the alerts --sign-key
    /// signs, and exit: the MONITOR-KEYS of `aeplens check`.
    #[arg(long, requires = "sign_key")]
    pub print_key: bool,
    /// Append alerts to FILE (the record of what was issued) [default: stdout].
    #[arg(long, value_name = "FILE")]
    pub alerts: Option<PathBuf>,
    /// Run CMD (with `sh -c`) for each alert, its JSON line on stdin. A failing command
    /// is an infra alert; the alert stays in the log.
    #[arg(long, value_name = "CMD")]
    pub exec: Option<String>,
    /// Append each alert to FILE as an OCSF 1.3 Detection Finding (class 2004), one a line.
    #[arg(long, value_name = "FILE")]
    pub ocsf: Option<PathBuf>,
    /// Keep the watch's state in DIR (how far each file was verified, the alerts issued,
    /// the evidence index) [default: $XDG_STATE_HOME/aeplens/watch/KEY].
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,
    /// Seconds a torn last line may stay torn (a write in progress) before it is an infra
    /// alert.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    pub settle: f64,
    /// Follow the files by polling them (every 0.5 s) instead of the system's watcher:
    /// for network filesystems (NFS, SMB), where the system's watcher hears nothing.
    #[arg(long)]
    pub poll: bool,
    /// Look at what is there now, alert, and exit: 0 no alert, 1 an alert at or above
    /// --fail-on, 2 usage (for cron and CI).
    #[arg(long)]
    pub once: bool,
    /// Evidence files or directories to watch; each is a store.
    #[arg(required_unless_present = "print_key", value_name = "PATH")]
    pub paths: Vec<String>,
}

/// Runs `watch`; returns the exit code.
pub fn run(args: &WatchArgs) -> i32 {
    match start(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("aeplens: watch: {e}");
            2
        }
    }
}

fn start(args: &WatchArgs) -> Result<i32, String> {
    // Registered first: a signal while it starts still ends it after a flush.
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop)).map_err(|e| e.to_string())?;
    }
    let signer = match &args.sign_key {
        Some(path) => Some(Signer::read(path, &args.sign_key_id)?),
        None => None,
    };
    if args.print_key {
        println!(
            "{}",
            signer
                .as_ref()
                .map(Signer::keyring_json)
                .unwrap_or_default()
        );
        return Ok(0);
    }
    if !(args.settle.is_finite() && args.settle >= 0.0) {
        return Err(format!("--settle {}: not a number of seconds", args.settle));
    }
    let options = crate::verify::Options {
        profile: args.profile.profile(),
    };
    let no_index = super::IndexArgs {
        no_index: true,
        ..super::IndexArgs::default()
    };
    let setting = super::setting(
        &args.paths,
        &args.keys,
        &args.leases,
        options,
        &args.traces,
        &no_index,
    )?;
    for e in &setting.lease_errors {
        super::note(&e.render());
    }
    let rules_text = match &args.rules {
        Some(path) => {
            std::fs::read_to_string(path).map_err(|e| format!("--rules {}: {e}", sanitize(path)))?
        }
        None => String::new(),
    };
    let rules = read_rules(args.rules.as_deref().unwrap_or(""), &rules_text)?;
    let state_dir = match &args.state {
        Some(dir) => dir.clone(),
        None => crate::watch::state::default_dir(&args.paths)
            .ok_or("no --state given and neither XDG_STATE_HOME nor HOME is set")?,
    };
    let inputs = (args
        .keys
        .keys
        .iter()
        .map(|k| (k.clone(), "keyring-missing")))
    .chain(
        args.keys
            .tsa_certs
            .iter()
            .map(|k| (k.clone(), "keyring-missing")),
    )
    .chain(
        args.keys
            .anchors
            .iter()
            .map(|k| (k.clone(), "keyring-missing")),
    )
    .chain(args.leases.iter().map(|l| (l.clone(), "leases-missing")))
    .collect();
    if setting.trust.is_empty() {
        super::note("no keys given: signatures are not checked, and no signature alert is raised");
    }
    let shown_state = state_dir.display().to_string();
    let watch = Watch {
        setting,
        stores: args.paths.clone(),
        rules,
        rules_text,
        fail_on: args.fail_on.severity(),
        settle: Duration::from_secs_f64(args.settle),
        state_dir,
        alerts: args.alerts.clone(),
        ocsf: args.ocsf.clone(),
        exec: args.exec.clone(),
        signer,
        inputs,
    };
    let (mut monitor, said) = Monitor::start(watch)?;
    for s in &said {
        super::note(s);
    }
    let all: Vec<usize> = (0..monitor.store_count()).collect();
    let fail_on = args.fail_on.severity();
    if args.once {
        let mut status = Status::new();
        let mut pass = monitor.pass(&all);
        // Torn lines get their `--settle` to complete, then are judged.
        while let Some(wait) = pass.again_in {
            std::thread::sleep(wait.max(Duration::from_millis(20)));
            pass = monitor.pass(&all);
        }
        status.show(&monitor, true);
        let alerted = monitor.worst.is_some_and(|w| w <= fail_on);
        return Ok(i32::from(alerted));
    }
    let followed: Vec<String> = args
        .paths
        .iter()
        .chain(&args.traces.traces)
        .cloned()
        .collect();
    let follow = crate::watch::follow::Follow::start(&followed, args.poll)?;
    super::note(&format!(
        "watching {} store(s) with the {} watcher; state in {}",
        monitor.store_count(),
        follow.kind,
        sanitize(&shown_state)
    ));
    let mut status = Status::new();
    let mut pass = monitor.pass(&all);
    status.show(&monitor, false);
    while !stop.load(Ordering::Relaxed) {
        let wait = pass
            .again_in
            .unwrap_or(Duration::from_millis(500))
            .min(Duration::from_millis(500));
        let (changed, failed) = follow.wait(wait);
        for why in failed {
            super::note(&format!("watcher: {why}"));
        }
        let which = monitor.stores_of(&changed);
        if which.is_empty() {
            continue;
        }
        pass = monitor.pass(&which);
        status.show(&monitor, false);
    }
    status.show(&monitor, true);
    Ok(0)
}

/// The one status line on a terminal: stores, records verified, alerts by class, lag.
struct Status {
    terminal: bool,
    last: Option<Instant>,
}

impl Status {
    fn new() -> Status {
        Status {
            terminal: std::io::stderr().is_terminal(),
            last: None,
        }
    }

    fn show(&mut self, m: &Monitor, last: bool) {
        if !self.terminal {
            return;
        }
        let now = Instant::now();
        if !last
            && self
                .last
                .is_some_and(|t| now - t < Duration::from_millis(200))
        {
            return;
        }
        self.last = Some(now);
        let by = |c: Class| m.raised.get(&c).copied().unwrap_or(0);
        let lag = m
            .lag
            .map_or_else(|| "-".into(), |d| format!("{:.1} s", d.as_secs_f64()));
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[2Kwatch: {} store(s) · {} records verified · tamper {} · policy {} · infra {} · lag {lag}",
            m.store_count(),
            m.records(),
            by(Class::Tamper),
            by(Class::Policy),
            by(Class::Infra),
        );
        if last {
            let _ = writeln!(err);
        }
        let _ = err.flush();
    }
}
