//! The real binary in a real terminal: tmux starts it on the demo, keys are sent with
//! `send-keys`, the screen is read with `capture-pane`. Also: hostile strings neither
//! set the clipboard nor clear the screen, and a forced panic restores the terminal.
//! `scripts/test` installs tmux when it is missing; without tmux these tests fail in CI
//! (`CI` set) and are skipped with a message elsewhere.

use std::process::Command;
use std::time::{Duration, Instant};

struct Tmux {
    socket: String,
    home: std::path::PathBuf,
}

impl Tmux {
    fn start(name: &str, command: &str) -> Option<Tmux> {
        Tmux::start_sized(name, command, 160, 48)
    }

    fn start_sized(name: &str, command: &str, width: u16, height: u16) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            assert!(std::env::var_os("CI").is_none(), "tmux is required in CI");
            eprintln!("tmux not installed: skipping {name}");
            return None;
        }
        let socket = format!("aeplens-{name}-{}", std::process::id());
        let home = std::env::temp_dir().join(&socket);
        std::fs::create_dir_all(&home).unwrap();
        let t = Tmux { socket, home };
        // A clean environment: no user config, a known TERM, OSC 52 would reach tmux.
        let shell = format!(
            "env -i PATH=\"$PATH\" HOME={home} TERM=xterm-256color LANG=C.UTF-8 {command}; \
             echo AEPLENS-EXIT=$?; if stty -a | grep -q ' icanon'; then echo TTY-COOKED; else echo TTY-RAW; fi; sleep 60",
            home = t.home.display()
        );
        t.tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "sh",
            "-c",
            &shell,
        ]);
        t.tmux(&["set-option", "-g", "set-clipboard", "on"]);
        Some(t)
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "0"])
    }

    fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.tmux(&["send-keys", "-t", "0", k]);
            std::thread::sleep(Duration::from_millis(150));
        }
    }

    fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(needle) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "waited 30 s for {needle:?}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
        let _ = std::fs::remove_dir_all(&self.home);
    }
}

const BIN: &str = env!("CARGO_BIN_EXE_aeplens");

#[test]
fn demo_in_a_real_terminal() {
    let Some(t) = Tmux::start("demo", BIN) else {
        return;
    };
    let s = t.wait_for("demo incident");
    assert!(s.contains("Timeline"), "{s}");
    t.wait_for(" ✓1 ○2");
    // Next problem: the drift denial that starts the chain.
    t.keys(&["e"]);
    let s = t.wait_for("⊘");
    assert!(s.contains("act-002"), "{s}");
    // The chain in the navigator.
    t.keys(&["BTab", "L"]);
    let s = t.wait_for("⊘→ act-002 → act-003");
    assert!(s.contains("Chains"), "{s}");
    // Search for the last write, then its digest badge.
    t.keys(&["/", "act-007", "Enter", "4"]);
    let s = t.wait_for("not-comparable");
    assert!(
        s.contains("mixed durable/scratch without mixed_partition"),
        "{s}"
    );
    // The help overlay, generated from the keymap.
    t.keys(&["?"]);
    let s = t.wait_for("KEYS");
    assert!(s.contains("go to parent"), "{s}");
    t.keys(&["Escape", "q"]);
    let s = t.wait_for("TTY-");
    assert!(s.contains("AEPLENS-EXIT=0"), "{s}");
    assert!(s.contains("TTY-COOKED"), "the shell is usable again:\n{s}");
    assert!(
        !s.contains("Timeline"),
        "the alternate screen is gone:\n{s}"
    );
}

#[test]
fn hostile_tool_name_neither_sets_the_clipboard_nor_clears_the_screen() {
    let dir = std::env::temp_dir().join(format!("aeplens-tmux-evil-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("evil.ndjson");
    std::fs::write(
        &file,
        "{\"schema_version\":\"aep/v0.3\",\"run_id\":\"evil-run\",\"created_at_ms\":1780000000000,\"actions\":[{\"action_id\":\"a1\",\"tool_name\":\"x\\u001b]52;c;cHduZWQ=\\u0007\\u001b[2J\",\"state_changing\":true,\"timestamp_ms\":1780000000000}]}\n",
    )
    .unwrap();
    let Some(t) = Tmux::start("evil", &format!("{BIN} {}", file.display())) else {
        return;
    };
    let s = t.wait_for("evil-run");
    assert!(s.contains("\\e]52"), "the escape is shown visibly:\n{s}");
    assert!(
        s.contains("aeplens ·"),
        "the header survived (no clear):\n{s}"
    );
    let buffers = t.tmux(&["list-buffers"]);
    assert!(buffers.trim().is_empty(), "clipboard set: {buffers}");
    t.keys(&["q"]);
    t.wait_for("AEPLENS-EXIT=0");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_panic_restores_the_terminal_and_says_what_happened() {
    let Some(t) = Tmux::start("panic", &format!("env AEPLENS_DEBUG_PANIC=1 {BIN}")) else {
        return;
    };
    let s = t.wait_for("TTY-");
    assert!(s.contains("internal error"), "{s}");
    assert!(s.contains("terminal has been restored"), "{s}");
    assert!(s.contains("TTY-COOKED"), "{s}");
}

#[test]
fn the_explorer_leaves_its_inputs_untouched() {
    let dir = std::env::temp_dir().join(format!("aeplens-tmux-ro-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("incident.ndjson");
    std::fs::copy("assets/demo/evidence/incident.ndjson", &file).unwrap();
    let before = (
        std::fs::read(&file).unwrap(),
        std::fs::metadata(&file).unwrap().modified().unwrap(),
    );
    let Some(t) = Tmux::start(
        "ro",
        &format!(
            "{BIN} --keys {} {}",
            std::fs::canonicalize("assets/demo/keys.json")
                .unwrap()
                .display(),
            file.display()
        ),
    ) else {
        return;
    };
    t.wait_for(" ✓1 ○2");
    // Walk every tab and list, copy something, then quit.
    t.keys(&[
        "e", "1", "2", "3", "4", "5", "6", "C", "y", "Escape", "BTab", "L", "L", "L", "q",
    ]);
    t.wait_for("AEPLENS-EXIT=0");
    let after = (
        std::fs::read(&file).unwrap(),
        std::fs::metadata(&file).unwrap().modified().unwrap(),
    );
    assert!(before == after, "the explorer changed its input");
    let _ = std::fs::remove_dir_all(&dir);
}

/// On an 80-column terminal every text report wraps at the width with a hanging indent,
/// counted in display cells (`⌛` is two), broken only between words: no verdict cut, no
/// word broken by the terminal (`capture-pane -J` joins what the terminal wrapped, so a
/// line of it past 80 cells is one the program let the terminal break), and every word of
/// the piped output there, in order. JSON is never cut either.
#[test]
fn on_a_terminal_text_wraps_whole_and_json_is_never_cut() {
    use unicode_width::UnicodeWidthStr;
    let demo = std::fs::canonicalize("assets/demo").unwrap();
    let index = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("aeplens-tmux-fit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&index);
    let keys = demo.join("keys.json").display().to_string();
    let leases = demo.join("leases.ndjson").display().to_string();
    let evidence = demo.join("evidence").display().to_string();
    let incident = demo.join("evidence/incident.ndjson").display().to_string();
    let index_dir = index.display().to_string();
    let with = |command: &[&str]| -> Vec<String> {
        let mut args: Vec<&str> = command.to_vec();
        args.extend([
            "--index-dir",
            &index_dir,
            "--keys",
            &keys,
            "--leases",
            &leases,
        ]);
        args.extend(["--format", "text"]);
        args.into_iter().map(String::from).collect()
    };
    // A copy of the incident whose later snapshot's tool name was changed after signing.
    std::fs::create_dir_all(&index).unwrap();
    let tampered = index.join("tampered.ndjson");
    let text = std::fs::read_to_string(&incident).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let edited = lines[2].replacen(
        "\"tool_name\":\"write_file\"",
        "\"tool_name\":\"write_filf\"",
        1,
    );
    assert_ne!(edited, lines[2]);
    lines[2] = &edited;
    std::fs::write(&tampered, lines.join("\n") + "\n").unwrap();
    let tampered = tampered.display().to_string();
    // Chains twice: the first run keeps its answer in the index, the second answers from
    // there.
    let commands = [
        [with(&["chains"]), vec![evidence.clone()]].concat(),
        [with(&["chains"]), vec![evidence.clone()]].concat(),
        [with(&["check"]), vec![evidence.clone()]].concat(),
        [
            with(&["findings", "--min-severity", "info"]),
            vec![evidence.clone()],
        ]
        .concat(),
        [
            with(&["show", "act-007", "--run", "run-deploy-0042"]),
            vec![evidence.clone()],
        ]
        .concat(),
        [with(&["diff"]), vec![incident.clone(), tampered]].concat(),
    ];
    for (i, args) in commands.iter().enumerate() {
        let cmd = format!("{BIN} {}", args.join(" "));
        let Some(t) = Tmux::start_sized(&format!("fit-{i}"), &cmd, 80, 200) else {
            return;
        };
        t.wait_for("AEPLENS-EXIT=");
        let screen = t.tmux(&["capture-pane", "-p", "-J", "-t", "0"]);
        let shown = screen.split("AEPLENS-EXIT=").next().unwrap();
        for line in shown.lines() {
            assert!(
                line.trim_end().width() <= 80,
                "{args:?}: {line:?} broken by the terminal"
            );
        }
        assert!(!shown.contains('…'), "{args:?}: cut:\n{shown}");
        let piped = Command::new(BIN).args(args).output().unwrap();
        let piped = String::from_utf8_lossy(&piped.stdout);
        let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(
            words(shown),
            words(&piped),
            "{args:?}: the same words, in order"
        );
    }
    let cmd =
        format!("{BIN} chains --format json --index-dir {index_dir} --keys {keys} {evidence}");
    let Some(t) = Tmux::start_sized("fit-json", &cmd, 30, 50) else {
        return;
    };
    let s = t.wait_for("AEPLENS-EXIT=");
    assert!(s.contains("AEPLENS-EXIT=0"), "{s}");
    // Long lines wrap, whole: no member is cut.
    assert!(
        s.contains("\"drift\": \"absent\"") && !s.contains('…'),
        "{s}"
    );
    let _ = std::fs::remove_dir_all(&index);
}

#[test]
fn a_newcomer_at_80x24() {
    let dir = std::env::temp_dir().join(format!("aeplens-tmux-80-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let demo = std::fs::canonicalize("assets/demo").unwrap();
    let keys = demo.join("keys.json");
    let evidence = demo.join("evidence");

    // A path that cannot be read: exit 2 with check's message, no empty explorer.
    let missing = dir.join("missing.ndjson");
    let Some(t) = Tmux::start_sized("missing", &format!("{BIN} {}", missing.display()), 80, 24)
    else {
        return;
    };
    let s = t.wait_for("AEPLENS-EXIT=");
    assert!(s.contains("AEPLENS-EXIT=2"), "{s}");
    assert!(s.contains("cannot read file"), "{s}");
    drop(t);

    // A directory where one file fails to load: counted in the header, listed.
    let mixed = dir.join("mixed");
    std::fs::create_dir_all(&mixed).unwrap();
    std::fs::copy(evidence.join("incident.ndjson"), mixed.join("a.ndjson")).unwrap();
    std::fs::write(mixed.join("b.ndjson"), "{not json\n").unwrap();
    let cmd = format!("{BIN} --keys {} {}", keys.display(), mixed.display());
    let Some(t) = Tmux::start_sized("mixed", &cmd, 80, 24) else {
        return;
    };
    let s = t.wait_for("load error");
    assert!(s.contains("⚠ 1 load error"), "{s}");
    // The narrow layout shows the navigator when it has the focus.
    t.keys(&["BTab"]);
    let s = t.wait_for("b.ndjson:1");
    assert!(s.contains("⚠"), "{s}");
    t.keys(&["q"]);
    t.wait_for("AEPLENS-EXIT=0");
    drop(t);

    // Evidence without its keys: said in the header.
    let cmd = format!("{BIN} {}", evidence.display());
    let Some(t) = Tmux::start_sized("nokeys", &cmd, 80, 24) else {
        return;
    };
    let s = t.wait_for("unknown key");
    assert!(s.contains("○5 (5 unknown key — pass --keys)"), "{s}");
    t.keys(&["q"]);
    t.wait_for("AEPLENS-EXIT=0");
    drop(t);

    // The demo: help scrolled to its end and back, the tampered record, quit.
    let Some(t) = Tmux::start_sized("newcomer", BIN, 80, 24) else {
        return;
    };
    let s = t.wait_for("? help · q quit");
    assert!(
        s.lines().any(|l| l.trim_end().ends_with("? help · q quit")),
        "{s}"
    );
    // Help opens on the keys (what a newcomer looks for first); the glyph legend is last.
    t.keys(&["?"]);
    let s = t.wait_for("KEYS");
    assert!(s.contains("move down") && !s.contains("GLYPHS"), "{s}");
    t.keys(&["End"]);
    let s = t.wait_for("marked by you");
    assert!(!s.contains("KEYS"), "scrolled to the legend:\n{s}");
    t.keys(&["Home"]);
    t.wait_for("KEYS");
    t.keys(&["Escape", "/", "act-003", "Enter", "5"]);
    let s = t.wait_for("authenticity");
    assert!(s.contains("✗ invalid"), "{s}");
    t.keys(&["q"]);
    let s = t.wait_for("AEPLENS-EXIT=");
    assert!(
        s.contains("AEPLENS-EXIT=0") && s.contains("TTY-COOKED"),
        "{s}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The review journey on the real binary: mark act-003 of the demo as the root cause
/// with a note, quit, reopen (mark, note and selection back), write the report with `R`;
/// the evidence's bytes and times unchanged and nothing written beside it.
#[test]
fn journey_mark_quit_reopen_report() {
    let dir = std::env::temp_dir().join(format!("aeplens-tmux-review-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let review = dir.join("INC-7.json");
    let evidence = std::path::Path::new("assets/demo/evidence");
    let listing = |d: &std::path::Path| {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                let m = std::fs::metadata(&p).unwrap().modified().unwrap();
                (p.clone(), std::fs::read(&p).unwrap(), m)
            })
            .collect();
        v.sort();
        v
    };
    let before = listing(evidence);
    let cmd = format!("{BIN} --review {}", review.display());
    let Some(t) = Tmux::start("review1", &cmd) else {
        return;
    };
    t.wait_for(" ✓1 ○2");
    t.keys(&["/", "act-003", "Enter", "m", "M", "a"]);
    t.wait_for("Note on run-deploy-0042/act-003");
    t.keys(&[
        "Root cause: re-approved with drifted arguments",
        "Enter",
        "See INC-7",
        "C-s",
    ]);
    let s = t.wait_for("⚑ ROOT-CAUSE");
    assert!(
        s.contains("Root cause: re-approved with drifted arguments (+1 lines: a)"),
        "{s}"
    );
    t.keys(&["q"]);
    let s = t.wait_for("AEPLENS-EXIT=");
    assert!(s.contains("AEPLENS-EXIT=0"), "{s}");
    drop(t);
    let saved = std::fs::read_to_string(&review).unwrap();
    assert!(saved.contains("\"verdict\": \"root-cause\""), "{saved}");
    assert!(saved.contains("See INC-7"), "{saved}");

    // Reopen: the mark and its note on act-003, which is selected again.
    let Some(t) = Tmux::start("review2", &cmd) else {
        return;
    };
    let s = t.wait_for("⚑ ROOT-CAUSE · Root cause: re-approved");
    assert!(
        s.contains("act-003 sql_exec · run-deploy-0042"),
        "selection restored:\n{s}"
    );
    assert!(s.contains("⚑ act-003"), "{s}");
    t.wait_for(" ✓1 ○2");
    t.keys(&["R"]);
    t.wait_for("Write the report");
    t.keys(&["Enter"]);
    let s = t.wait_for("html report written");
    assert!(s.contains("INC-7.report.html"), "{s}");
    // R again, ← to Markdown: its Reproduce line, run as printed, writes it again.
    t.keys(&["R", "Left", "Enter"]);
    t.wait_for("md report written");
    t.keys(&["q"]);
    t.wait_for("AEPLENS-EXIT=0");
    let html = std::fs::read_to_string(dir.join("INC-7.report.html")).unwrap();
    assert!(html.contains("Root cause: re-approved with drifted arguments"));
    assert!(html.contains("root-cause"));
    let md_file = dir.join("INC-7.report.md");
    let md = std::fs::read_to_string(&md_file).unwrap();
    let line = (md.lines())
        .find_map(|l| l.split("Reproduce: `").nth(1))
        .map(|l| l.trim_end_matches('`').to_string())
        .expect("a Reproduce line");
    std::fs::remove_file(&md_file).unwrap();
    let bin = std::path::Path::new(BIN).parent().unwrap();
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(&line)
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .current_dir(std::env::temp_dir())
        .status()
        .unwrap();
    assert!(status.code().is_some_and(|c| c < 2), "{line}");
    assert_eq!(std::fs::read_to_string(&md_file).unwrap(), md, "{line}");
    assert_eq!(listing(evidence), before, "the evidence was written to");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `a` with `$EDITOR` set leaves the explorer for the editor and comes back to it with the
/// note (the "editor" here writes its note into the file it is given).
#[test]
fn a_note_in_the_editor() {
    let dir = std::env::temp_dir().join(format!("aeplens-tmux-editor-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let review = dir.join("r.json");
    let cmd = format!(
        "env EDITOR=\"printf 'Written in the editor' >\" {BIN} --review {}",
        review.display()
    );
    let Some(t) = Tmux::start("editor", &cmd) else {
        return;
    };
    t.wait_for(" ✓1 ○2");
    t.keys(&["/", "act-004", "Enter", "a"]);
    let s = t.wait_for("⚑ FOLLOW-UP · Written in the editor");
    assert!(s.contains("Timeline"), "back in the explorer:\n{s}");
    t.keys(&["q"]);
    t.wait_for("AEPLENS-EXIT=0");
    let saved = std::fs::read_to_string(&review).unwrap();
    assert!(
        saved.contains("\"note\": \"Written in the editor\""),
        "{saved}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The explorer's round-3 journeys on the real binary, on a store with a fork (a wire
/// transfer made twice): the fork view, the note editor's cursor motions, the `:` command
/// line opening the marks list, unmark and undo, a finding marked, and a reopen that finds
/// every mark where it was, without a warning.
#[test]
fn journey_fork_note_motions_marks_undo_reopen() {
    let dir = std::env::temp_dir().join(format!("aeplens-tmux-fork-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let stores = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/reference-stores"
    );
    let cmd = format!(
        "{BIN} --keys {stores}/keys.json --review {} {stores}/fork_branches_assembled.ndjson",
        dir.join("r.json").display()
    );
    let Some(t) = Tmux::start_sized("fork", &cmd, 120, 40) else {
        return;
    };
    t.wait_for("⋎1 (fork_branches_assembled:2)");
    // The fork view from the first emb-2: where the branches part, and how.
    t.keys(&["/", "emb-2", "Enter", "b"]);
    let s = t.wait_for("forked at fork_branches_assembled.ndjson:2");
    assert!(
        s.contains("branch from fork_branches_assembled.ndjson:3"),
        "{s}"
    );
    assert!(
        s.contains("branch from fork_branches_assembled.ndjson:4"),
        "{s}"
    );
    assert!(s.contains("Δ emb-2"), "{s}");
    assert!(s.contains("differs: timestamp_ms"), "{s}");
    t.keys(&["Escape", "="]);
    t.wait_for("the same action on the other branch of a fork");
    t.keys(&["Escape"]);
    // A note written with cursor motions: Home, End, Ctrl-W, ←, Ctrl-K, Ctrl-Z.
    t.keys(&["a"]);
    t.wait_for("Note on run-pub-ember/emb-2");
    t.keys(&[
        "transfer made twice",
        "Home",
        "wire ",
        "End",
        " again",
        "C-w",
    ]);
    t.wait_for("│wire transfer made twice ");
    t.keys(&["Left", "Left", "Left", "Left", "Left", "Left", "C-k"]);
    let s = t.wait_for("│wire transfer made ");
    assert!(!s.contains("made twice"), "{s}");
    t.keys(&["C-z", "C-s"]);
    t.wait_for("⚑ FOLLOW-UP · wire transfer made twice");
    // `:marks`: the marks list; `m` on the noted mark asks, `m` unmarks, Ctrl-Z puts back.
    t.keys(&[":", "marks", "Enter"]);
    t.wait_for("⚑ FOLLOW-UP run-pub-ember/emb-2 · wi");
    t.keys(&["F3", "m"]);
    t.wait_for("has a note: m again to unmark it");
    t.keys(&["m"]);
    t.wait_for("unmarked run-pub-ember/emb-2");
    t.keys(&["C-z"]);
    t.wait_for("mark on run-pub-ember/emb-2 put back");
    // A finding marked from the Findings list.
    t.keys(&["F2", "L", "L", "Enter", "Down", "m"]);
    t.wait_for("marked F-CHAIN-FORK");
    t.keys(&["q"]);
    t.wait_for("AEPLENS-EXIT=0");
    drop(t);
    // Reopened on the same evidence: both marks, neither said to have moved or changed.
    let Some(t) = Tmux::start_sized("fork2", &cmd, 120, 40) else {
        return;
    };
    t.wait_for("⚑2");
    t.wait_for("▲1 ■0");
    t.keys(&[":", "marks", "Enter"]);
    let s = t.wait_for("⚑ SUSPICIOUS F-CHAIN-FORK");
    assert!(s.contains("⚑ FOLLOW-UP run-pub-ember/emb-2 · wi"), "{s}");
    for warning in ["no longer", "⚑!", "moved", "changed since"] {
        assert!(!s.contains(warning), "{warning}:\n{s}");
    }
    t.keys(&["q"]);
    t.wait_for("AEPLENS-EXIT=0");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The demo opens with its agent's telemetry: the run's telemetry lane shows one call the
/// evidence never recorded, `e` goes to it and the detail pane describes the span; the
/// Record tab of an action shows the span joined to it.
#[test]
fn journey_to_a_capture_gap() {
    let Some(t) = Tmux::start_sized("capture", BIN, 120, 40) else {
        return;
    };
    t.wait_for("demo incident");
    let s = t.wait_for("✚1 not in evidence");
    assert!(s.contains("telemetry 8 spans"), "{s}");
    let mut s = String::new();
    for _ in 0..12 {
        t.keys(&["e"]);
        s = t.screen();
        if s.contains("Capture gap") {
            break;
        }
    }
    assert!(
        s.contains("F-CAPTURE-GAP") && s.contains("shell_exec"),
        "{s}"
    );
    assert!(s.contains("no action: a capture gap"), "{s}");
    // The action before the gap, on the Record tab: its span and how it was joined.
    t.keys(&["5"]);
    let s = t.wait_for("TELEMETRY");
    assert!(s.contains("same run and tool"), "{s}");
    assert!(s.contains("capture           ✗ gaps"), "{s}");
    t.keys(&["q"]);
    let s = t.wait_for("TTY-");
    assert!(s.contains("AEPLENS-EXIT=0"), "{s}");
}
