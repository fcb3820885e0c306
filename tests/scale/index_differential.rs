//! The evidence index answers only for the configuration it was made under: random
//! sequences of openings — keys by flag, by environment, none or wrong; another profile;
//! a lease file or none — between which the stores are appended to, edited, replaced or
//! truncated, give every command the same bytes on stdout (and the same exit code) with
//! the index as without it. The index persists across a sequence, as a user's cache does.

use crate::common;

use common::*;
use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// The stores a sequence starts from (reference-emitter stores: three emitters in one
/// file, sub-agents sharing a run and default ids, a fork, a lost append).
const STORES: &[&str] = &[
    "three_emitters_one_store.ndjson",
    "subagents_default_action_ids.ndjson",
    "fork_parallel_emit.ndjson",
    "append_lost_io_error.ndjson",
];

/// Where trusted keys come from in one opening.
#[derive(Clone, Copy, Debug)]
enum Keys {
    Flag,
    Environment,
    None,
    /// fixture-key-1 given with fixture-key-2's public key.
    Wrong,
}

#[derive(Clone, Copy, Debug)]
enum Command {
    Check,
    Findings,
    Chains,
    Show,
    Envelope,
}

/// One step of a sequence.
#[derive(Clone, Debug)]
enum Step {
    Open {
        keys: Keys,
        current_profile: bool,
        leases: bool,
        command: Command,
    },
    /// Appends store `from`'s line `line` to store `to`.
    Append { to: usize, from: usize, line: usize },
    /// Changes one byte inside line `line` of store `to` (a record edited after signing).
    Edit { to: usize, line: usize },
    /// Replaces store `to` with store `from`'s bytes.
    Replace { to: usize, from: usize },
    /// Keeps the first `lines` lines of store `to`.
    Truncate { to: usize, lines: usize },
}

fn step() -> impl Strategy<Value = Step> {
    let keys = prop_oneof![
        Just(Keys::Flag),
        Just(Keys::Environment),
        Just(Keys::None),
        Just(Keys::Wrong)
    ];
    let command = prop_oneof![
        Just(Command::Check),
        Just(Command::Findings),
        Just(Command::Chains),
        Just(Command::Show),
        Just(Command::Envelope)
    ];
    let store = 0..STORES.len();
    prop_oneof![
        4 => (keys, any::<bool>(), any::<bool>(), command).prop_map(|(keys, current_profile, leases, command)| {
            Step::Open { keys, current_profile, leases, command }
        }),
        1 => (store.clone(), store.clone(), 0usize..8).prop_map(|(to, from, line)| Step::Append { to, from, line }),
        1 => (store.clone(), 0usize..8).prop_map(|(to, line)| Step::Edit { to, line }),
        1 => (store.clone(), store.clone()).prop_map(|(to, from)| Step::Replace { to, from }),
        1 => (store, 0usize..8).prop_map(|(to, lines)| Step::Truncate { to, lines }),
    ]
}

fn reference(name: &str) -> PathBuf {
    fixtures().join("reference-stores").join(name)
}

/// The lines of a file, each with its line end.
fn lines_of(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.split_inclusive('\n').map(str::to_string).collect()
}

/// Applies a change to the stores in `dir`.
fn change(dir: &Path, step: &Step) {
    let path = |i: usize| dir.join(STORES[i]);
    match *step {
        Step::Append { to, from, line } => {
            let lines = lines_of(&path(from));
            let mut text = std::fs::read_to_string(path(to)).unwrap_or_default();
            if let Some(l) = lines.get(line % lines.len().max(1)) {
                text.push_str(l);
                if !l.ends_with('\n') {
                    text.push('\n');
                }
            }
            std::fs::write(path(to), text).unwrap();
        }
        Step::Edit { to, line } => {
            let mut lines = lines_of(&path(to));
            if lines.is_empty() {
                return;
            }
            let at = line % lines.len();
            // A digit of a timestamp, or else the first letter of a value, changed.
            lines[at] = match lines[at].find("_ms\":1") {
                Some(i) => {
                    let mut l = lines[at].clone();
                    let digit = i + 6;
                    let next = if &l[digit..=digit] == "9" { "0" } else { "9" };
                    l.replace_range(digit..=digit, next);
                    l
                }
                None => lines[at].replacen(":\"", ":\"X", 1),
            };
            std::fs::write(path(to), lines.concat()).unwrap();
        }
        Step::Replace { to, from } => {
            let bytes = std::fs::read(path(from)).unwrap();
            std::fs::write(path(to), bytes).unwrap();
        }
        Step::Truncate { to, lines } => {
            let kept: String = lines_of(&path(to)).into_iter().take(lines).collect();
            std::fs::write(path(to), kept).unwrap();
        }
        Step::Open { .. } => {}
    }
}

/// Runs the binary with `args` and environment `env`; its exit code and stdout.
fn run(args: &[String], env: &[(&str, &str)], scratch: &Path) -> (i32, String) {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_aeplens"));
    command
        .args(args)
        .env("XDG_DATA_HOME", scratch.join("data"))
        .env("XDG_CACHE_HOME", scratch.join("cache"))
        .env("XDG_CONFIG_HOME", scratch.join("config"));
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("WASMAGENT_AEP_PUBKEY_")) {
        command.env_remove(k);
    }
    command.envs(env.iter().copied());
    let out = command.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

const KEY_1: &str = "e2fdefe91550de51c255f4430b3c5cdf37f6ffb449e889fd59c884f2e6ddabd0";
const KEY_2: &str = "85fa36844413a79dc0f60271666b695dd922be436339a74b0c572798e4436448";
const KEY_3: &str = "84aa213a171e40a9991eff5ab9f7faa8c8e7edec8032bd5ffa300e153bf5b13b";

/// The arguments and environment of one opening of the stores in `dir`.
fn opening(
    dir: &Path,
    keys: Keys,
    current_profile: bool,
    leases: bool,
    command: Command,
) -> (Vec<String>, Vec<(&'static str, &'static str)>) {
    let mut args: Vec<String> = match command {
        Command::Check => vec!["check".into()],
        Command::Findings => vec!["findings".into()],
        Command::Chains => vec!["chains".into()],
        Command::Show => vec!["show".into(), "spl-2".into()],
        Command::Envelope => vec!["envelope".into()],
    };
    let mut env = Vec::new();
    match keys {
        Keys::Flag => {
            args.push("--keys".into());
            args.push(reference("keys.json").display().to_string());
        }
        Keys::Environment => {
            env.push(("WASMAGENT_AEP_PUBKEY_FIXTURE_KEY_1", KEY_1));
            env.push(("WASMAGENT_AEP_PUBKEY_FIXTURE_KEY_2", KEY_2));
            env.push(("WASMAGENT_AEP_PUBKEY_FIXTURE_KEY_3", KEY_3));
        }
        Keys::None => {}
        Keys::Wrong => args.push(format!("--key=fixture-key-1={KEY_2}")),
    }
    // `check` alone takes the profile; every command takes lease files.
    if current_profile && matches!(command, Command::Check) {
        args.push("--profile=current".into());
    }
    if leases {
        args.push("--leases".into());
        args.push(
            reference("reapproval_after_denial.leases.ndjson")
                .display()
                .to_string(),
        );
    }
    if !matches!(command, Command::Show | Command::Envelope) {
        args.push("--format=json".into());
    }
    args.push(dir.display().to_string());
    (args, env)
}

/// Runs `steps` over a fresh copy of the stores; every opening is answered with the
/// index (kept across the steps) and without, and the two must be the same.
fn differential(steps: &[Step], name: &str) -> Result<(), TestCaseError> {
    let scratch = run_dir(&format!("differential-{name}"));
    let _ = std::fs::remove_dir_all(&scratch);
    let dir = scratch.join("evidence");
    std::fs::create_dir_all(&dir).unwrap();
    for store in STORES {
        std::fs::copy(reference(store), dir.join(store)).unwrap();
    }
    let index = scratch.join("index");
    for (k, step) in steps.iter().enumerate() {
        let Step::Open {
            keys,
            current_profile,
            leases,
            command,
        } = *step
        else {
            change(&dir, step);
            continue;
        };
        let (args, env) = opening(&dir, keys, current_profile, leases, command);
        let with = [
            args.clone(),
            vec![format!("--index-dir={}", index.display())],
        ]
        .concat();
        let without = [args.clone(), vec!["--no-index".to_string()]].concat();
        let (code, out) = run(&with, &env, &scratch);
        let (want_code, want) = run(&without, &env, &scratch);
        // Where the outputs part, not the whole of both.
        let first_difference = (out.lines().zip(want.lines()))
            .position(|(a, b)| a != b)
            .map(|at| (at + 1, out.lines().nth(at), want.lines().nth(at)));
        prop_assert!(
            code == want_code && out == want,
            "step {} of {:?}: {:?}: exit {} with the index, {} without; first differing line (number, with, without): {:?}",
            k,
            steps,
            args,
            code,
            want_code,
            first_difference
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

/// The regression that made this test: a `check` with keys from the environment wrote
/// its verdicts under the configuration of "no keys", and a later `check` without keys
/// reported every record valid.
#[test]
fn keys_from_the_environment_do_not_answer_for_an_opening_without_keys() {
    let open = |keys, command| Step::Open {
        keys,
        current_profile: false,
        leases: false,
        command,
    };
    let steps = [
        open(Keys::Environment, Command::Check),
        open(Keys::None, Command::Check),
        open(Keys::Environment, Command::Show),
        open(Keys::None, Command::Show),
        open(Keys::Environment, Command::Findings),
        open(Keys::None, Command::Findings),
    ];
    differential(&steps, "environment").unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_command_says_the_same_with_and_without_the_index(steps in prop::collection::vec(step(), 1..9)) {
        differential(&steps, "random")?;
    }
}
