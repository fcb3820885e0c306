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

    /// Dark text on a light terminal: every colour is an explicit RGB value at least
    /// 4.5:1 against white (WCAG AA), borders and dim text included.
    pub fn light() -> Theme {
        let s = |r, g, b| Style::default().fg(Color::Rgb(r, g, b));
        let accent = s(0, 70, 170);
        Theme {
            name: "light",
            base: s(20, 20, 20),
            dim: s(90, 90, 90),
            title: accent.add_modifier(Modifier::BOLD),
            focus_border: accent.add_modifier(Modifier::BOLD),
            border: s(105, 105, 105),
            selected: Style::default()
                .bg(Color::Rgb(210, 220, 240))
                .add_modifier(Modifier::BOLD),
            good: s(0, 115, 0),
            bad: s(180, 0, 0).add_modifier(Modifier::BOLD),
            warn: s(140, 80, 0),
            info: s(0, 100, 140),
            accent,
            matched: s(150, 0, 150).add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            hint_key: accent.add_modifier(Modifier::BOLD),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// WCAG relative luminance of an sRGB colour.
    fn luminance(r: u8, g: u8, b: u8) -> f64 {
        let c = |v: u8| {
            let v = f64::from(v) / 255.0;
            if v <= 0.03928 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * c(r) + 0.7152 * c(g) + 0.0722 * c(b)
    }

    #[test]
    fn the_light_theme_is_readable_on_white() {
        let t = Theme::light();
        for (name, style) in [
            ("base", t.base),
            ("dim", t.dim),
            ("border", t.border),
            ("title", t.title),
            ("good", t.good),
            ("bad", t.bad),
            ("warn", t.warn),
            ("info", t.info),
            ("accent", t.accent),
            ("matched", t.matched),
            ("hint_key", t.hint_key),
        ] {
            let Some(Color::Rgb(r, g, b)) = style.fg else {
                panic!("{name}: not an explicit RGB colour: {:?}", style.fg);
            };
            let contrast = (1.0 + 0.05) / (luminance(r, g, b) + 0.05);
            assert!(contrast >= 4.5, "{name}: {contrast:.2}:1 against white");
        }
    }
}
