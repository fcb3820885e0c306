//! The interactive explorer (ratatui + crossterm live only here). One `update(state,
//! action)` in [`state`], views that are pure functions of the state in [`view`], and
//! this loop: terminal set-up and restore (also on panic), a background worker that
//! loads, analyses and verifies, key and mouse input, and clipboard output.

pub mod data;
pub mod keymap;
pub mod state;
pub mod theme;
pub mod view;

use crate::analysis::Analysis;
use crate::analysis::evidence::complete;
use crate::analysis::findings;
use crate::analysis::lease::SuppliedLeases;
use crate::load::{Corpus, load_paths};
use crate::verify::{Keyring, Options, verify_inputs};
use data::Data;
use keymap::Keymap;
use ratatui::crossterm::event::{
    self, DisableMouseCapture, EnableMouseCapture, Event, KeyCode, KeyEventKind, MouseButton,
    MouseEventKind,
};
use ratatui::crossterm::execute;
use ratatui::layout::Position;
use state::{Action, Pane, Progress, State, update};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant, SystemTime};
use theme::Theme;
use view::{Screen, layout, window};

/// What to open and how.
#[derive(Clone, Debug)]
pub struct ExplorerOptions {
    pub paths: Vec<String>,
    pub keys: Keyring,
    pub leases: Vec<String>,
    pub theme: Theme,
    pub keymap: Keymap,
    pub mouse: bool,
    pub follow: bool,
    /// A line shown in the header (the demo says it is the demo).
    pub banner: Option<String>,
}

/// How much of a large store the first frame shows while the rest loads.
pub const QUICK_LOOK_BYTES: u64 = 4 * 1024 * 1024;

/// Loads, analyses (first frame) and verifies in the background, reporting by `tx`.
pub fn spawn_worker(paths: Vec<String>, keys: Keyring, leases: Vec<String>, tx: Sender<Action>) {
    std::thread::spawn(move || {
        let send = |a: Action| tx.send(a).is_ok();
        send(Action::Progress(Progress {
            phase: "loading".into(),
            ..Progress::default()
        }));
        let mut supplied = SuppliedLeases::default();
        let mut errors: Vec<String> = Vec::new();
        for file in &leases {
            errors.extend(
                supplied
                    .add_file(std::path::Path::new(file))
                    .iter()
                    .map(|e| e.to_string()),
            );
        }
        // Large evidence: show the first records at once, then the whole.
        if let Some(head) = crate::load::load_prefix(&paths, QUICK_LOOK_BYTES) {
            let corpus = Arc::new(Corpus::new(head));
            let analysis = Arc::new(Analysis::build(&corpus, &supplied));
            let early = findings::dedupe_and_sort(findings::analyse(&corpus, &analysis));
            send(Action::Progress(Progress {
                phase: format!(
                    "loading everything (showing the first {} records)",
                    corpus.len()
                ),
                ..Progress::default()
            }));
            if !send(Action::Loaded(Box::new(Data::new(corpus, analysis, early)))) {
                return;
            }
        }
        let corpus = Arc::new(Corpus::new(load_paths(&paths)));
        errors.extend(corpus.errors().map(|e| e.to_string()));
        if !errors.is_empty() {
            send(Action::Errors(errors));
        }
        send(Action::Progress(Progress {
            phase: "analysing".into(),
            ..Progress::default()
        }));
        let analysis = Arc::new(Analysis::build(&corpus, &supplied));
        let early = findings::dedupe_and_sort(findings::analyse(&corpus, &analysis));
        if !send(Action::Loaded(Box::new(Data::new(
            corpus.clone(),
            analysis.clone(),
            early,
        )))) {
            return;
        }
        let done = Arc::new(AtomicUsize::new(0));
        let total = corpus.len();
        let report = std::thread::scope(|scope| {
            let watcher = {
                let done = done.clone();
                let tx = tx.clone();
                scope.spawn(move || {
                    while done.load(Ordering::Relaxed) < total {
                        let p = Progress {
                            phase: "verifying".into(),
                            done: done.load(Ordering::Relaxed),
                            total,
                            finished: false,
                        };
                        if tx.send(Action::Progress(p)).is_err() {
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(100));
                    }
                })
            };
            let r = verify_inputs(&corpus.inputs, &keys, &Options::default(), Some(&done));
            done.store(total, Ordering::Relaxed);
            let _ = watcher.join();
            r
        });
        let (report, all) = complete(&corpus, &analysis, report);
        send(Action::Verified(Arc::new(report), all));
    });
}

/// Runs the explorer until the user quits; returns the exit code.
pub fn run(options: ExplorerOptions) -> i32 {
    let (tx, rx) = channel();
    spawn_worker(
        options.paths.clone(),
        options.keys.clone(),
        options.leases.clone(),
        tx.clone(),
    );
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        eprintln!(
            "aeplens: internal error: {info}\nThe terminal has been restored; your evidence files were only read. \
             Please report this with the command line you used."
        );
        previous(info);
    }));
    let mut terminal = match ratatui::try_init() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("aeplens: cannot open the terminal: {e}");
            return 2;
        }
    };
    if options.mouse {
        let _ = execute!(std::io::stdout(), EnableMouseCapture);
    }
    let mut state = State::new(options.keymap.clone(), options.theme.clone());
    state.banner = options.banner.clone();
    let result = event_loop(&mut terminal, &mut state, &rx, &tx, &options);
    if options.mouse {
        let _ = execute!(std::io::stdout(), DisableMouseCapture);
    }
    ratatui::restore();
    let printed = std::mem::take(&mut state.clipboard);
    for text in printed {
        println!("{}", crate::model::text::sanitize(&text));
    }
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("aeplens: {e}");
            1
        }
    }
}

fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    state: &mut State,
    rx: &Receiver<Action>,
    tx: &Sender<Action>,
    options: &ExplorerOptions,
) -> std::io::Result<()> {
    let mut stamps = file_stamps(&options.paths);
    let mut last_poll = Instant::now();
    let clipboard_mode = std::env::var("AEPLENS_CLIPBOARD").unwrap_or_default();
    loop {
        let size = terminal.size()?;
        state.size = (size.width, size.height);
        let areas = layout(
            ratatui::layout::Rect::new(0, 0, size.width, size.height),
            state,
        );
        state.page = areas
            .timeline
            .height
            .max(areas.detail.height)
            .saturating_sub(3) as usize;
        terminal.draw(|f| f.render_widget(&Screen(state), f.area()))?;
        #[cfg(debug_assertions)]
        if std::env::var_os("AEPLENS_DEBUG_PANIC").is_some() && state.data.is_some() {
            panic!("forced by AEPLENS_DEBUG_PANIC (debug builds only)");
        }
        if state.quit {
            return Ok(());
        }
        // Clipboard: native, else OSC 52 (tmux-wrapped); "print" keeps texts for exit.
        if clipboard_mode != "print" {
            for text in std::mem::take(&mut state.clipboard) {
                if !(clipboard_mode != "osc52" && copy_native(&text)) {
                    let seq = osc52(&text, std::env::var_os("TMUX").is_some());
                    let out = terminal.backend_mut();
                    out.write_all(seq.as_bytes())?;
                    out.flush()?;
                }
            }
        }
        let mut worked = false;
        while let Ok(a) = rx.try_recv() {
            let reload = matches!(a, Action::Loaded(_)) && state.data.is_some();
            let keep = reload.then(|| current_key(state)).flatten();
            update(state, a);
            if let Some((run, id)) = keep {
                reselect(state, &run, &id);
            }
            worked = true;
        }
        if worked {
            continue;
        }
        if options.follow && last_poll.elapsed() > Duration::from_secs(1) {
            last_poll = Instant::now();
            let now = file_stamps(&options.paths);
            if now != stamps {
                stamps = now;
                spawn_worker(
                    options.paths.clone(),
                    options.keys.clone(),
                    options.leases.clone(),
                    tx.clone(),
                );
            }
        }
        if !event::poll(Duration::from_millis(50))? {
            continue;
        }
        match event::read()? {
            Event::Key(k) if k.kind != KeyEventKind::Release => {
                let editing = state.search.active || state.filter.active;
                let action = if editing {
                    match k.code {
                        KeyCode::Char(c) if !k.modifiers.contains(event::KeyModifiers::CONTROL) => {
                            Some(Action::Char(c))
                        }
                        KeyCode::Backspace => Some(Action::Backspace),
                        KeyCode::Enter => Some(Action::Submit),
                        _ => state.keymap.lookup(&k).map(Action::Command),
                    }
                } else {
                    state.keymap.lookup(&k).map(Action::Command)
                };
                if let Some(a) = action {
                    update(state, a);
                }
            }
            Event::Mouse(m) if options.mouse => {
                let pos = Position::new(m.column, m.row);
                let hit = |r: ratatui::layout::Rect| r.contains(pos);
                let pane = if areas.navigator.is_some_and(hit) {
                    Some(Pane::Navigator)
                } else if hit(areas.timeline) {
                    Some(Pane::Timeline)
                } else if hit(areas.detail) {
                    Some(Pane::Detail)
                } else {
                    None
                };
                let Some(pane) = pane else { continue };
                match m.kind {
                    MouseEventKind::Down(MouseButton::Left) => {
                        let row = match pane {
                            Pane::Navigator => {
                                let r = areas.navigator.unwrap_or_default();
                                let h = r.height.saturating_sub(2) as usize;
                                let off = window(state.nav_cursor, state.nav_items.len(), h);
                                (m.row.saturating_sub(r.y + 1)) as usize + off
                            }
                            Pane::Timeline => {
                                let r = areas.timeline;
                                let h = r.height.saturating_sub(3) as usize;
                                let off =
                                    window(state.cursor_row().unwrap_or(0), state.rows.len(), h);
                                (m.row.saturating_sub(r.y + 2)) as usize + off
                            }
                            Pane::Detail => 0,
                        };
                        update(state, Action::Click(pane, row));
                    }
                    MouseEventKind::ScrollUp => update(state, Action::Scroll(pane, -3)),
                    MouseEventKind::ScrollDown => update(state, Action::Scroll(pane, 3)),
                    _ => {}
                }
            }
            Event::Resize(w, h) => update(state, Action::Resize(w, h)),
            _ => {}
        }
    }
}

fn current_key(state: &State) -> Option<(String, String)> {
    let d = state.data.as_ref()?;
    let n = state.node?;
    let (_, a) = d.analysis.graph.action(&d.corpus, n)?;
    Some((
        d.analysis.graph.runs[d.run_of(n)].id.clone(),
        a.id()?.to_string(),
    ))
}

fn reselect(state: &mut State, run: &str, id: &str) {
    if let Some(n) = state
        .data
        .as_ref()
        .and_then(|d| d.analysis.graph.find(run, id))
    {
        state::select(state, n, false);
    }
}

fn file_stamps(paths: &[String]) -> Vec<(u64, Option<SystemTime>)> {
    paths
        .iter()
        .map(|p| {
            std::fs::metadata(p)
                .map(|m| (m.len(), m.modified().ok()))
                .unwrap_or((0, None))
        })
        .collect()
}

/// The OSC 52 sequence setting the clipboard (wrapped for tmux passthrough). The text is
/// base64-encoded, so nothing from a record reaches the terminal raw; payloads are capped.
pub fn osc52(text: &str, tmux: bool) -> String {
    const CAP: usize = 100_000;
    let bytes = &text.as_bytes()[..text.len().min(CAP)];
    let b64 = crate::verify::encoding::encode_base64(bytes);
    if tmux {
        format!("\x1bPtmux;\x1b\x1b]52;c;{b64}\x07\x1b\\")
    } else {
        format!("\x1b]52;c;{b64}\x07")
    }
}

/// Copies with a native clipboard tool when one is available.
fn copy_native(text: &str) -> bool {
    let candidates: &[(&str, &[&str])] = if std::env::var_os("WAYLAND_DISPLAY").is_some() {
        &[("wl-copy", &[])]
    } else if std::env::var_os("DISPLAY").is_some() {
        &[
            ("xclip", &["-selection", "clipboard"]),
            ("xsel", &["--clipboard", "--input"]),
        ]
    } else if cfg!(target_os = "macos") {
        &[("pbcopy", &[])]
    } else {
        &[]
    };
    for (cmd, args) in candidates {
        let child = std::process::Command::new(cmd)
            .args(*args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if let Ok(mut child) = child {
            let ok = child
                .stdin
                .take()
                .is_some_and(|mut s| s.write_all(text.as_bytes()).is_ok());
            if ok && child.wait().is_ok_and(|s| s.success()) {
                return true;
            }
        }
    }
    false
}
