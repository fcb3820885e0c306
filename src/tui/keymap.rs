//! The keymap: every command with its default keys and help text. The help overlay and
//! the hint bar are generated from it, and the config file may rebind any command.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::collections::BTreeMap;

/// What a key asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Home,
    End,
    FocusNext,
    FocusPrev,
    FocusNavigator,
    FocusTimeline,
    FocusDetail,
    Toggle,
    Parent,
    Child,
    NextSibling,
    PrevSibling,
    Back,
    Forward,
    NextProblem,
    PrevProblem,
    Search,
    SearchNext,
    SearchPrev,
    Filter,
    ZoomIn,
    ZoomOut,
    NarrowNavigator,
    WidenNavigator,
    JumpToViolation,
    Tab(u8),
    NextList,
    Canonical,
    Copy,
    Compare,
    Fork,
    ProblemsOnly,
    MarkedOnly,
    Mark,
    CycleVerdict,
    Undo,
    Note,
    NextMark,
    PrevMark,
    CompareTarget,
    Report,
    Inputs,
    Palette,
    Help,
    Quit,
    Cancel,
}

/// Where a binding is offered in the hint bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Everywhere,
    Navigator,
    Timeline,
    Detail,
}

/// One command, its keys and what it does.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    pub command: Command,
    /// The name used in the config file's `[keymap]` table.
    pub name: &'static str,
    pub keys: Vec<(KeyCode, KeyModifiers)>,
    pub help: &'static str,
    pub scope: Scope,
    /// Shown in the hint bar (the rest only in the help overlay).
    pub hint: bool,
}

/// All bindings.
#[derive(Clone, Debug, PartialEq)]
pub struct Keymap {
    pub bindings: Vec<Binding>,
}

const DEFAULTS: &[(Command, &str, &str, &str, Scope, bool)] = &[
    (
        Command::Up,
        "up",
        "up k",
        "move up",
        Scope::Everywhere,
        true,
    ),
    (
        Command::Down,
        "down",
        "down j",
        "move down",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Left,
        "left",
        "left h",
        "pan left / previous list / fold",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Right,
        "right",
        "right l",
        "pan right / next list / unfold",
        Scope::Everywhere,
        false,
    ),
    (
        Command::PageUp,
        "page_up",
        "pageup ctrl-u",
        "page up",
        Scope::Everywhere,
        false,
    ),
    (
        Command::PageDown,
        "page_down",
        "pagedown ctrl-d",
        "page down",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Home,
        "top",
        "home g",
        "first row",
        Scope::Everywhere,
        false,
    ),
    (
        Command::End,
        "bottom",
        "end G",
        "last row",
        Scope::Everywhere,
        false,
    ),
    (
        Command::FocusNext,
        "focus_next",
        "tab",
        "next pane",
        Scope::Everywhere,
        true,
    ),
    (
        Command::FocusPrev,
        "focus_prev",
        "backtab",
        "previous pane",
        Scope::Everywhere,
        false,
    ),
    (
        Command::FocusNavigator,
        "focus_navigator",
        "f2",
        "focus the navigator",
        Scope::Everywhere,
        false,
    ),
    (
        Command::FocusTimeline,
        "focus_timeline",
        "f3",
        "focus the timeline",
        Scope::Everywhere,
        false,
    ),
    (
        Command::FocusDetail,
        "focus_detail",
        "f4",
        "focus the detail pane",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Toggle,
        "toggle",
        "enter space",
        "open / fold",
        Scope::Everywhere,
        true,
    ),
    (
        Command::Parent,
        "parent",
        "u",
        "go to parent",
        Scope::Timeline,
        true,
    ),
    (
        Command::Child,
        "child",
        "c",
        "go to child (cycles)",
        Scope::Timeline,
        true,
    ),
    (
        Command::NextSibling,
        "next_sibling",
        "J",
        "next sibling",
        Scope::Timeline,
        false,
    ),
    (
        Command::PrevSibling,
        "prev_sibling",
        "K",
        "previous sibling",
        Scope::Timeline,
        false,
    ),
    (
        Command::Back,
        "back",
        "[",
        "back in history",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Forward,
        "forward",
        "]",
        "forward in history",
        Scope::Everywhere,
        false,
    ),
    (
        Command::NextProblem,
        "next_problem",
        "e",
        "next problem (deny, drift, lease, invalid, high)",
        Scope::Everywhere,
        true,
    ),
    (
        Command::PrevProblem,
        "prev_problem",
        "E",
        "previous problem",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Search,
        "search",
        "/",
        "fuzzy search actions",
        Scope::Everywhere,
        true,
    ),
    (
        Command::SearchNext,
        "search_next",
        "n",
        "next match",
        Scope::Everywhere,
        false,
    ),
    (
        Command::SearchPrev,
        "search_prev",
        "N",
        "previous match",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Filter,
        "filter",
        "f",
        "filter by an expression (docs/query.md: decision == \"deny\" and not verified; Tab completes; tool:x is:marked still work)",
        Scope::Everywhere,
        true,
    ),
    (
        Command::ZoomIn,
        "zoom_in",
        "z",
        "zoom in",
        Scope::Timeline,
        true,
    ),
    (
        Command::ZoomOut,
        "zoom_out",
        "x",
        "zoom out",
        Scope::Timeline,
        false,
    ),
    (
        Command::JumpToViolation,
        "jump_to_violation",
        "o",
        "go to the action a record-level violation names",
        Scope::Everywhere,
        false,
    ),
    (
        Command::NarrowNavigator,
        "narrow_navigator",
        "<",
        "narrow the navigator",
        Scope::Everywhere,
        false,
    ),
    (
        Command::WidenNavigator,
        "widen_navigator",
        ">",
        "widen the navigator",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Tab(1),
        "tab_authority",
        "1",
        "Authority tab",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Tab(2),
        "tab_drift",
        "2",
        "Drift tab",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Tab(3),
        "tab_lease",
        "3",
        "Lease tab",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Tab(4),
        "tab_digests",
        "4",
        "Digests tab",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Tab(5),
        "tab_record",
        "5",
        "Record tab",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Tab(6),
        "tab_raw",
        "6",
        "Raw tab",
        Scope::Everywhere,
        true,
    ),
    (
        Command::NextList,
        "next_list",
        "L",
        "next navigator list (Runs, Chains, Findings, Leases)",
        Scope::Navigator,
        true,
    ),
    (
        Command::Canonical,
        "canonical",
        "C",
        "Raw tab: stored JSON / canonical bytes",
        Scope::Detail,
        true,
    ),
    (
        Command::Copy,
        "copy",
        "y",
        "copy menu",
        Scope::Everywhere,
        true,
    ),
    (
        Command::ProblemsOnly,
        "problems_only",
        "P",
        "only actions with a problem (filter is:problem; again: all)",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Mark,
        "mark",
        "m",
        "mark / unmark (action; finding in the navigator; record on tabs 5-6)",
        Scope::Everywhere,
        true,
    ),
    (
        Command::CycleVerdict,
        "verdict",
        "M",
        "next verdict: suspicious, root-cause, follow-up, benign",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Undo,
        "undo",
        "ctrl-z",
        "put the last mark taken off back, with its note",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Note,
        "note",
        "a",
        "add or edit the mark's note ($EDITOR when set; inline: Ctrl-S saves)",
        Scope::Everywhere,
        false,
    ),
    (
        Command::NextMark,
        "next_mark",
        "'",
        "next mark — actions, records, findings (mark k of n)",
        Scope::Everywhere,
        false,
    ),
    (
        Command::PrevMark,
        "prev_mark",
        "\"",
        "previous mark",
        Scope::Everywhere,
        false,
    ),
    (
        Command::MarkedOnly,
        "marked_only",
        "*",
        "only marked actions (filter is:marked; again: all)",
        Scope::Everywhere,
        false,
    ),
    (
        Command::CompareTarget,
        "compare_target",
        "v",
        "choose this action as the other side of = (again: clear)",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Report,
        "report",
        "R",
        "write the report (current filter and marks): asks for the format and the file",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Compare,
        "compare",
        "=",
        "compare with its counterpart (denied parent, re-approving child, twin on a fork's other branch, rewritten copy)",
        Scope::Everywhere,
        true,
    ),
    (
        Command::Fork,
        "fork",
        "b",
        "fork view: both branches of the selected action's fork side by side, from where they part",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Inputs,
        "inputs",
        "I",
        "inputs: files, records, sizes, SHA-256, load errors",
        Scope::Everywhere,
        false,
    ),
    (
        Command::Palette,
        "palette",
        ":",
        "command line: goto ACTION|TIME, marks, report FORMAT [FILE], filter TERMS (Tab completes)",
        Scope::Everywhere,
        true,
    ),
    (
        Command::Help,
        "help",
        "? f1",
        "help",
        Scope::Everywhere,
        false, // pinned at the right of the hint bar instead
    ),
    (
        Command::Quit,
        "quit",
        "q ctrl-c",
        "quit",
        Scope::Everywhere,
        false, // pinned at the right of the hint bar instead
    ),
    (
        Command::Cancel,
        "cancel",
        "esc",
        "close / clear",
        Scope::Everywhere,
        false,
    ),
];

/// Parses one key name: `q`, `Q`, `?`, `ctrl-c`, `shift-tab`, `enter`, `f1`, `pagedown`….
pub fn parse_key(text: &str) -> Result<(KeyCode, KeyModifiers), String> {
    let mut mods = KeyModifiers::NONE;
    let mut rest = text;
    loop {
        if let Some(r) = rest.strip_prefix("ctrl-") {
            mods |= KeyModifiers::CONTROL;
            rest = r;
        } else if let Some(r) = rest.strip_prefix("alt-") {
            mods |= KeyModifiers::ALT;
            rest = r;
        } else {
            break;
        }
    }
    let code = match rest {
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "pageup" => KeyCode::PageUp,
        "pagedown" => KeyCode::PageDown,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "tab" => KeyCode::Tab,
        "backtab" | "shift-tab" => KeyCode::BackTab,
        "enter" => KeyCode::Enter,
        "esc" => KeyCode::Esc,
        "space" => KeyCode::Char(' '),
        "backspace" => KeyCode::Backspace,
        f if f.len() >= 2 && f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
            KeyCode::F(f[1..].parse().unwrap_or(1))
        }
        c if c.chars().count() == 1 => KeyCode::Char(c.chars().next().unwrap_or(' ')),
        _ => return Err(format!("unknown key {text:?}")),
    };
    Ok((code, mods))
}

/// The config-file name of a key (what [`parse_key`] reads back).
pub fn key_config_name(code: KeyCode, mods: KeyModifiers) -> String {
    let base = match code {
        KeyCode::Up => "up".to_string(),
        KeyCode::Down => "down".to_string(),
        KeyCode::Left => "left".to_string(),
        KeyCode::Right => "right".to_string(),
        KeyCode::PageUp => "pageup".to_string(),
        KeyCode::PageDown => "pagedown".to_string(),
        KeyCode::Home => "home".to_string(),
        KeyCode::End => "end".to_string(),
        KeyCode::Tab => "tab".to_string(),
        KeyCode::BackTab => "backtab".to_string(),
        KeyCode::Enter => "enter".to_string(),
        KeyCode::Esc => "esc".to_string(),
        KeyCode::Backspace => "backspace".to_string(),
        KeyCode::Char(' ') => "space".to_string(),
        KeyCode::F(n) => format!("f{n}"),
        KeyCode::Char(c) => c.to_string(),
        other => format!("{other:?}").to_lowercase(),
    };
    let mut out = String::new();
    if mods.contains(KeyModifiers::CONTROL) {
        out.push_str("ctrl-");
    }
    if mods.contains(KeyModifiers::ALT) {
        out.push_str("alt-");
    }
    out + &base
}

/// The display name of a key.
pub fn key_name(code: KeyCode, mods: KeyModifiers) -> String {
    let base = match code {
        KeyCode::Up => "↑".to_string(),
        KeyCode::Down => "↓".to_string(),
        KeyCode::Left => "←".to_string(),
        KeyCode::Right => "→".to_string(),
        KeyCode::PageUp => "PgUp".to_string(),
        KeyCode::PageDown => "PgDn".to_string(),
        KeyCode::Home => "Home".to_string(),
        KeyCode::End => "End".to_string(),
        KeyCode::Tab => "Tab".to_string(),
        KeyCode::BackTab => "S-Tab".to_string(),
        KeyCode::Enter => "Enter".to_string(),
        KeyCode::Esc => "Esc".to_string(),
        KeyCode::Char(' ') => "Space".to_string(),
        KeyCode::F(n) => format!("F{n}"),
        KeyCode::Char(c) => c.to_string(),
        other => format!("{other:?}"),
    };
    if mods.contains(KeyModifiers::CONTROL) {
        format!("C-{base}")
    } else if mods.contains(KeyModifiers::ALT) {
        format!("M-{base}")
    } else {
        base
    }
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap {
            bindings: DEFAULTS
                .iter()
                .map(|(command, name, keys, help, scope, hint)| Binding {
                    command: *command,
                    name,
                    keys: keys.split(' ').filter_map(|k| parse_key(k).ok()).collect(),
                    help,
                    scope: *scope,
                    hint: *hint,
                })
                .collect(),
        }
    }
}

impl Keymap {
    /// Rebinds commands from the config's `[keymap]` table (`name = ["key", …]`).
    pub fn with_overrides(overrides: &BTreeMap<String, Vec<String>>) -> Result<Keymap, String> {
        let mut map = Keymap::default();
        for (name, keys) in overrides {
            let binding = map
                .bindings
                .iter_mut()
                .find(|b| b.name == name)
                .ok_or_else(|| format!("keymap: unknown command {name:?}"))?;
            binding.keys = keys
                .iter()
                .map(|k| parse_key(k).map_err(|e| format!("keymap.{name}: {e}")))
                .collect::<Result<_, _>>()?;
        }
        Ok(map)
    }

    /// Keys bound to more than one command, each said with the command it runs and those
    /// it hides ([`Keymap::lookup`] takes the first binding listed).
    pub fn bound_twice(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, b) in self.bindings.iter().enumerate() {
            for key in &b.keys {
                if (self.bindings[..i].iter()).any(|earlier| earlier.keys.contains(key)) {
                    continue;
                }
                let hidden: Vec<&str> = (self.bindings[i + 1..].iter())
                    .filter(|later| later.keys.contains(key))
                    .map(|later| later.name)
                    .collect();
                if !hidden.is_empty() {
                    out.push(format!(
                        "key {} is bound to {} and {}: only {} runs",
                        key_name(key.0, key.1),
                        b.name,
                        hidden.join(", "),
                        b.name
                    ));
                }
            }
        }
        out
    }

    /// The command bound to a key press.
    pub fn lookup(&self, key: &KeyEvent) -> Option<Command> {
        let mods = key.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT);
        self.bindings
            .iter()
            .find(|b| {
                b.keys.iter().any(|(code, m)| {
                    *code == key.code && *m == mods
                        || matches!(key.code, KeyCode::BackTab) && *code == KeyCode::BackTab
                })
            })
            .map(|b| b.command)
    }

    /// The keys of a binding, for display (`k/↑`).
    pub fn keys_of(&self, b: &Binding) -> String {
        b.keys
            .iter()
            .map(|(c, m)| key_name(*c, *m))
            .collect::<Vec<_>>()
            .join("/")
    }

    /// The first key bound to a command, for display (`?`), if any.
    pub fn key_for(&self, command: Command) -> Option<String> {
        let b = self.bindings.iter().find(|b| b.command == command)?;
        b.keys.first().map(|(c, m)| key_name(*c, *m))
    }

    /// Hint-bar entries for a pane: (keys, help).
    pub fn hints(&self, scope: Scope) -> Vec<(String, &'static str)> {
        self.bindings
            .iter()
            .filter(|b| b.hint && (b.scope == Scope::Everywhere || b.scope == scope))
            .filter(|b| !b.keys.is_empty())
            .map(|b| {
                let first = b.keys[0];
                (key_name(first.0, first.1), short_help(b.help))
            })
            .collect()
    }
}

/// The first words of a help text, for the hint bar.
fn short_help(help: &'static str) -> &'static str {
    help.split(" (").next().unwrap_or(help)
}
