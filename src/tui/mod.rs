//! The interactive explorer (ratatui + crossterm live only here). One `update(state,
//! action)` in [`state`], views that are pure functions of the state in [`view`], and
//! this loop: terminal set-up and restore (also on panic), a background worker that
//! loads, analyses and verifies, key and mouse input, and clipboard output.

pub mod action;
pub mod clipboard;
pub mod data;
pub mod input;
pub mod keymap;
pub mod state;
pub mod theme;
pub mod view;
pub mod worker;

use crate::verify::Keyring;
use clipboard::{copy_native, osc52};
use keymap::Keymap;
use ratatui::crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event};
use ratatui::crossterm::execute;
use state::{Action, State, update};
use std::io::Write;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};
use theme::Theme;
use view::{Screen, layout};
use worker::{file_stamps, spawn_worker};

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
    state.banner.clone_from(&options.banner);
    let result = event_loop(&mut terminal, &mut state, &rx, &tx, options);
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
        assert!(
            !(std::env::var_os("AEPLENS_DEBUG_PANIC").is_some() && state.data.is_some()),
            "forced by AEPLENS_DEBUG_PANIC (debug builds only)"
        );
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
        // An all-runs search on large evidence runs beside the loop (Esc cancels it).
        if let Some(job) = state.search.job_to_start() {
            let tx = tx.clone();
            std::thread::spawn(move || {
                if let Some(result) =
                    state::matches_all(&job.haystacks, &job.query, &job.done, &job.cancel)
                {
                    let _ = tx.send(Action::SearchDone(job.query, result));
                }
            });
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
        let action = match event::read()? {
            Event::Key(k) => input::key_action(state, &k),
            Event::Mouse(m) if options.mouse => input::mouse_action(state, &areas, &m),
            Event::Resize(w, h) => Some(Action::Resize(w, h)),
            _ => None,
        };
        if let Some(a) = action {
            update(state, a);
        }
    }
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
        .and_then(|d| d.analysis.graph.find(run, id))
    {
        state::select(state, n, false);
    }
}
