//! Themes: dark (default), light, high-contrast, and monochrome for `NO_COLOR`.
//!
//! Colour only reinforces: every state also has a glyph. The monochrome theme keeps every
//! colour at `Color::Reset`, so no colour command is ever queued — crossterm turns colour
//! commands into bare SGR resets under `NO_COLOR`, which would also clear bold/reverse.

use ratatui::style::{Color, Modifier, Style};

/// Styles for every role the views use.
#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    pub name: &'static str,
    pub base: Style,
    pub dim: Style,
    pub title: Style,
    pub focus_border: Style,
    pub border: Style,
    pub selected: Style,
    pub good: Style,
    pub bad: Style,
    pub warn: Style,
    pub info: Style,
    pub accent: Style,
    pub matched: Style,
    pub hint_key: Style,
}

/// Theme names accepted by `--theme` and the config.
pub const THEMES: [&str; 4] = ["dark", "light", "high-contrast", "monochrome"];

impl Theme {
    /// A theme by name.
    pub fn named(name: &str) -> Option<Theme> {
        match name {
            "dark" => Some(Theme::dark()),
            "light" => Some(Theme::light()),
            "high-contrast" => Some(Theme::high_contrast()),
            "monochrome" | "mono" | "none" => Some(Theme::monochrome()),
            _ => None,
        }
    }

    /// The theme to start with: monochrome when `NO_COLOR` is set and non-empty,
    /// else the requested one, else dark.
    pub fn pick(requested: Option<&str>, no_color: bool) -> Result<Theme, String> {
        if no_color {
            return Ok(Theme::monochrome());
        }
        match requested {
            None => Ok(Theme::dark()),
            Some(n) => Theme::named(n)
                .ok_or_else(|| format!("unknown theme {n:?} (one of: {})", THEMES.join(", "))),
        }
    }

    fn colored(name: &'static str, fg: Color, dim: Color, accent: Color, sel_bg: Color) -> Theme {
        let s = |c: Color| Style::default().fg(c);
        Theme {
            name,
            base: s(fg),
            dim: s(dim),
            title: s(accent).add_modifier(Modifier::BOLD),
            focus_border: s(accent).add_modifier(Modifier::BOLD),
            border: s(dim),
            selected: Style::default().bg(sel_bg).add_modifier(Modifier::BOLD),
            good: s(Color::Green),
            bad: s(Color::Red).add_modifier(Modifier::BOLD),
            warn: s(Color::Yellow),
            info: s(Color::Cyan),
            accent: s(accent),
            matched: s(Color::Magenta).add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            hint_key: s(accent).add_modifier(Modifier::BOLD),
        }
    }

    /// Light text on a dark terminal.
    pub fn dark() -> Theme {
        Theme::colored(
            "dark",
            Color::Gray,
            Color::DarkGray,
            Color::Cyan,
            Color::Rgb(40, 44, 60),
        )
    }

    /// Dark text on a light terminal.
    pub fn light() -> Theme {
        let mut t = Theme::colored(
            "light",
            Color::Black,
            Color::Gray,
            Color::Blue,
            Color::Rgb(210, 220, 240),
        );
        t.warn = Style::default().fg(Color::Rgb(160, 100, 0));
        t
    }

    /// Maximum contrast: white on black, bright states, reverse selection.
    pub fn high_contrast() -> Theme {
        let mut t = Theme::colored(
            "high-contrast",
            Color::White,
            Color::Gray,
            Color::LightCyan,
            Color::Reset,
        );
        t.selected = Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD);
        t.good = Style::default()
            .fg(Color::LightGreen)
            .add_modifier(Modifier::BOLD);
        t.bad = Style::default()
            .fg(Color::LightRed)
            .add_modifier(Modifier::BOLD);
        t.warn = Style::default()
            .fg(Color::LightYellow)
            .add_modifier(Modifier::BOLD);
        t
    }

    /// No colour at all: states carried by glyphs, bold, underline and reverse.
    pub fn monochrome() -> Theme {
        let plain = Style::default().fg(Color::Reset).bg(Color::Reset);
        Theme {
            name: "monochrome",
            base: plain,
            dim: plain.add_modifier(Modifier::DIM),
            title: plain.add_modifier(Modifier::BOLD),
            focus_border: plain.add_modifier(Modifier::BOLD),
            border: plain,
            selected: plain.add_modifier(Modifier::REVERSED),
            good: plain,
            bad: plain.add_modifier(Modifier::BOLD),
            warn: plain.add_modifier(Modifier::UNDERLINED),
            info: plain,
            accent: plain,
            matched: plain.add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            hint_key: plain.add_modifier(Modifier::BOLD),
        }
    }
}
