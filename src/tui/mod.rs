//! The interactive explorer (ratatui + crossterm live only here). One `update(state,
//! action)` in [`state`], views that are pure functions of the state in [`view`], and
//! this loop: terminal set-up and restore (also on panic), a background worker that
//! loads, analyses and verifies, key and mouse input, and clipboard output.

pub mod clipboard;
pub mod data;
pub mod input;
pub mod keymap;
pub mod state;
pub mod theme;
pub mod view;
pub mod worker;

use crate::open::Setting;
use crate::review::file::{EvidenceSet, KeyRef, Review, default_path};
use crate::verify::Keyring;
use clipboard::{copy_native, osc52};
use keymap::Keymap;
use ratatui::crossterm::event::{
    self, DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    Event,
};
use ratatui::crossterm::execute;
use state::{Action, ReviewSettings, State, update};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};
use theme::Theme;
use view::{Screen, layout};
use worker::{file_stamps, spawn_worker};

/// What to open and how.
#[derive(Clone, Debug)]
pub struct ExplorerOptions {
    pub paths: Vec<String>,
    /// What the evidence is opened with: the trust, lease files, telemetry and index.
    pub setting: Arc<Setting>,
    pub theme: Theme,
    pub keymap: Keymap,
    pub mouse: bool,
    pub follow: bool,
    /// A line shown in the header (the demo says it is the demo).
    pub banner: Option<String>,
    /// The review file (`--review`); else the evidence set's under `$XDG_DATA_HOME`.
    pub review: Option<PathBuf>,
    /// Do not restore the session (`--fresh`).
    pub fresh: bool,
    /// `$VISUAL` / `$EDITOR`, when set: notes are edited there.
    pub editor: Option<String>,
    /// The arguments naming the evidence, for a report's Reproduce line.
    pub evidence_args: Vec<String>,
    /// `--goto RUN/ACTION`: the action to open at.
    pub goto: Option<String>,
}

/// Opens the review of the loaded evidence (`path`, else the evidence set's default
/// file) and hands it to the state. Done once, when the evidence first arrives.
pub fn open_review(state: &mut State, path: Option<PathBuf>) {
    let Some(d) = state.data.as_ref() else {
        return;
    };
    let path = path.or_else(|| default_path(&EvidenceSet::of(&d.corpus)));
    let result = match &path {
        Some(p) => Review::read(p)
            .map(|r| r.map(Box::new))
            .map_err(|e| e.render()),
        None => Ok(None),
    };
    let path = if result.is_ok() { path } else { None };
    update(state, Action::ReviewOpened(path, result));
}

/// Saves the review with the current session (when it has somewhere to go); returns
/// where it went. Never over an unreadable review file: that one has no path.
pub fn save_review(state: &mut State, keys: &Keyring) -> Result<Option<PathBuf>, String> {
    let session = state::session(state);
    let (Some(d), Some(review), Some(path)) = (
        state.data.as_ref(),
        state.review.review.as_mut(),
        state.review.path.clone(),
    ) else {
        return Ok(None);
    };
    review.evidence = EvidenceSet::of(&d.corpus);
    review.keyring = KeyRef::all(keys);
    review.aeplens_version = env!("CARGO_PKG_VERSION").into();
    review.session = session;
    review
        .write(&path)
        .map_err(|e| format!("cannot save the review to {}: {e}", path.display()))?;
    state.review.dirty = false;
    Ok(Some(path))
}

/// Writes the report `request` asks for — the reviewer's marks first, limited to the
/// explorer's filter when one is applied — and returns where it went. Its Reproduce line
/// is the `aeplens report` command that writes it again from the same evidence.
pub fn write_report(
    state: &State,
    keys: &Keyring,
    request: &state::ReportPrompt,
) -> Result<PathBuf, String> {
    use crate::analysis::evidence::EvidenceRef;
    use crate::model::text::shell_word;
    use crate::review::report::{IncidentReport, render};
    let d = state.data.as_ref().ok_or("no evidence loaded")?;
    let report = d.report.as_ref().ok_or("verification has not finished")?;
    let ev = EvidenceRef {
        corpus: &d.corpus,
        report,
        analysis: &d.analysis,
        findings: &d.findings,
        capture: d.capture.as_deref(),
    };
    let out = PathBuf::from(request.path.trim());
    if out.as_os_str().is_empty() {
        return Err("no report written: no file named".into());
    }
    let inputs: Vec<String> = d.corpus.inputs.iter().map(|i| i.path.to_string()).collect();
    if crate::load::is_evidence_file(&inputs, &out) {
        return Err(format!(
            "refusing to write {}: it is an evidence file",
            out.display()
        ));
    }
    let same = |a: &std::path::Path, b: &std::path::Path| {
        std::path::absolute(a)
            .ok()
            .is_some_and(|a| std::path::absolute(b).ok() == Some(a))
    };
    if let Some(review) = &state.review.path
        && (same(&out, review) || same(&out, &review.with_extension("json.bak")))
    {
        return Err(format!(
            "refusing to write {}: it is the review file (or its backup)",
            out.display()
        ));
    }
    let passes = |n| state.passes(n);
    // The filter as the expression `--where` takes (the old terms translated), so the
    // Reproduce line writes the same report.
    let filter = state.filter.applied().map(state::expression);
    let scope = (filter.clone()).map(|f| (f, &passes as &dyn Fn(_) -> bool));
    let review = state.review.review.as_ref().map(|r| {
        (
            r,
            state.review.path.as_ref().map(|p| p.display().to_string()),
        )
    });
    let absolute = |p: &std::path::Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut command = vec![
        "aeplens".to_string(),
        "report".into(),
        "--format".into(),
        request.format.name().into(),
        "--output".into(),
        shell_word(&absolute(&out).display().to_string()),
    ];
    // The review as saved (the event loop saves it first): the marks the report leads with.
    match state.review.path.as_ref().filter(|p| p.exists()) {
        Some(p) => command.extend([
            "--review".into(),
            shell_word(&absolute(p).display().to_string()),
        ]),
        None => command.push("--no-review".into()),
    }
    if let Some(f) = &filter {
        command.extend(["--where".into(), shell_word(f)]);
    }
    command.extend(
        state
            .review
            .settings
            .evidence_args
            .iter()
            .map(|a| shell_word(a)),
    );
    let report = IncidentReport::of(ev, keys, command.join(" "), review, scope.as_ref());
    let text = render(request.format, &report, ev);
    crate::private::write_private(&out, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(out)
}

/// The terminal's width in columns, when stdout is one (for CLI tables that fit it).
pub fn terminal_width() -> Option<usize> {
    ratatui::crossterm::terminal::size()
        .ok()
        .map(|(w, _)| usize::from(w))
        .filter(|w| *w > 0)
}

/// Runs the explorer until the user quits; returns the exit code.
pub fn run(options: &ExplorerOptions) -> i32 {
    let (tx, rx) = channel();
    spawn_worker(options.paths.clone(), options.setting.clone(), tx.clone());
    let previous = std::panic::take_hook();
    let mouse = options.mouse;
    std::panic::set_hook(Box::new(move |info| {
        set_capture(false, mouse);
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
    set_capture(true, options.mouse);
    let mut state = State::new(options.keymap.clone(), options.theme.clone());
    state.banner.clone_from(&options.banner);
    state.keys_given = !options.setting.trust.is_empty();
    state.review.settings = ReviewSettings {
        external_editor: options.editor.is_some(),
        fresh: options.fresh,
        evidence_args: options.evidence_args.clone(),
    };
    let result = event_loop(&mut terminal, &mut state, &rx, &tx, options);
    set_capture(false, options.mouse);
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
        assert!(
            !(std::env::var_os("AEPLENS_DEBUG_PANIC").is_some() && state.data.is_some()),
            "forced by AEPLENS_DEBUG_PANIC (debug builds only)"
        );
        if state.quit {
            if let Err(e) = save_review(state, &options.setting.trust) {
                // Said after the terminal is restored.
                state.errors.push(e.clone());
                eprintln!("aeplens: {e}");
            }
            return Ok(());
        }
        review_work(terminal, state, options)?;
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
        // An all-runs search on large evidence runs beside the loop (Esc cancels it).
        if let Some(job) = state.search.job_to_start() {
            let tx = tx.clone();
            std::thread::spawn(move || {
                if let Some(result) = state::matches_all(
                    job.haystacks.len(),
                    &|n, buf| job.haystacks.write(n, buf),
                    &job.query,
                    &job.done,
                    &job.cancel,
                ) {
                    let _ = tx.send(Action::SearchDone(job.query, result));
                }
            });
        }
        let mut worked = false;
        while let Ok(a) = rx.try_recv() {
            let reload = matches!(a, Action::Loaded(_)) && state.data.is_some();
            let keep = reload.then(|| current_key(state)).flatten();
            let loaded = matches!(a, Action::Loaded(_));
            update(state, a);
            if let Some((run, id)) = keep {
                reselect(state, &run, &id);
            }
            if loaded && state.review.review.is_none() {
                open_review(state, options.review.clone());
                if let Some(spec) = &options.goto {
                    state::goto(state, spec);
                }
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
                spawn_worker(options.paths.clone(), options.setting.clone(), tx.clone());
            }
        }
        if !event::poll(Duration::from_millis(50))? {
            continue;
        }
        let action = match event::read()? {
            Event::Key(k) => input::key_action(state, &k),
            Event::Mouse(m) if options.mouse => input::mouse_action(state, &areas, &m),
            Event::Resize(w, h) => Some(Action::Resize(w, h)),
            Event::Paste(text) => Some(Action::Paste(text)),
            _ => None,
        };
        if let Some(a) = action {
            update(state, a);
        }
    }
}

/// Asks the terminal for pasted text as one event (bracketed paste) and, with `mouse`,
/// for mouse events; `on: false` gives both back.
fn set_capture(on: bool, mouse: bool) {
    let mut out = std::io::stdout();
    if on {
        let _ = execute!(out, EnableBracketedPaste);
        if mouse {
            let _ = execute!(out, EnableMouseCapture);
        }
    } else {
        if mouse {
            let _ = execute!(out, DisableMouseCapture);
        }
        let _ = execute!(out, DisableBracketedPaste);
    }
}

/// What the review asks of the loop: saving, a note in `$EDITOR`, a report.
fn review_work(
    terminal: &mut ratatui::DefaultTerminal,
    state: &mut State,
    options: &ExplorerOptions,
) -> std::io::Result<()> {
    if state.review.dirty
        && state.review.path.is_some()
        && let Err(e) = save_review(state, &options.setting.trust)
    {
        state.review.dirty = false;
        state.review.problem = Some(e.clone());
        state.message = Some(e);
    }
    if let Some((target, text)) = state.review.external_edit.take()
        && let Some(editor) = &options.editor
    {
        let edited = edit_externally(terminal, editor, &text, options.mouse)?;
        match edited {
            Ok(text) => update(state, Action::NoteEdited(target, text)),
            Err(e) => state.message = Some(e),
        }
    }
    if let Some(request) = state.review.report_requested.take() {
        // Saved first, so that the report's Reproduce line finds the marks it shows.
        if let Err(e) = save_review(state, &options.setting.trust) {
            state.review.problem = Some(e);
        }
        state.message = Some(
            match write_report(state, &options.setting.trust, &request) {
                Ok(path) => format!(
                    "{} report written: {}",
                    request.format.name(),
                    crate::model::text::sanitize(&path.display().to_string())
                ),
                Err(e) => e,
            },
        );
    }
    Ok(())
}

/// Leaves the explorer's screen, runs `editor` on a temporary file holding `text`, and
/// comes back; the edited text, or why there is none.
fn edit_externally(
    terminal: &mut ratatui::DefaultTerminal,
    editor: &str,
    text: &str,
    mouse: bool,
) -> std::io::Result<Result<String, String>> {
    let file = std::env::temp_dir().join(format!("aeplens-note-{}.md", std::process::id()));
    let _ = std::fs::remove_file(&file);
    if let Err(e) = crate::private::write_private(&file, text.as_bytes()) {
        return Ok(Err(format!("cannot write the note for the editor: {e}")));
    }
    set_capture(false, mouse);
    ratatui::restore();
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&file)
        .status();
    *terminal = ratatui::try_init()?;
    set_capture(true, mouse);
    terminal.clear()?;
    let result = match status {
        Ok(s) if s.success() => {
            std::fs::read_to_string(&file).map_err(|e| format!("cannot read the note back: {e}"))
        }
        Ok(s) => Err(format!("the editor exited with {s}; note not changed")),
        Err(e) => Err(format!("cannot run the editor {editor:?}: {e}")),
    };
    let _ = std::fs::remove_file(&file);
    Ok(result)
}

fn current_key(state: &State) -> Option<(String, String)> {
    let d = state.data.as_ref()?;
    let n = state.timeline.node()?;
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
        .and_then(|d| d.analysis.graph.find(&d.corpus, run, id))
    {
        state::select(state, n, false);
    }
}
