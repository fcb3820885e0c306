//! `$XDG_CONFIG_HOME/aeplens/config.toml` (or `$AEPLENS_CONFIG`): theme, keymap and
//! default keyrings. A missing file means defaults; a broken one is an error naming
//! file, line and column.

use serde::Deserialize;
use std::collections::BTreeMap;

/// The user's configuration.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `dark`, `light`, `high-contrast` or `monochrome`.
    pub theme: Option<String>,
    /// Keyring files always loaded.
    #[serde(default)]
    pub keyrings: Vec<String>,
    /// Command name → keys, e.g. `parent = ["u", "alt-up"]`.
    #[serde(default)]
    pub keymap: BTreeMap<String, Vec<String>>,
    /// Where it was read from.
    #[serde(skip)]
    pub path: Option<String>,
}

/// The config file's path: `$AEPLENS_CONFIG`, else `$XDG_CONFIG_HOME/aeplens/config.toml`,
/// else `~/.config/aeplens/config.toml`.
pub fn config_path() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("AEPLENS_CONFIG") {
        return Some(p.into());
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".config"))
        })?;
    Some(base.join("aeplens").join("config.toml"))
}

impl Config {
    /// Reads the config file (defaults when there is none).
    pub fn load() -> Result<Config, String> {
        let Some(path) = config_path() else {
            return Ok(Config::default());
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => Config::parse(&text, &path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(format!("{}: cannot read config: {e}", path.display())),
        }
    }

    /// Parses config text; errors read `path:line:column: message`.
    pub fn parse(text: &str, path: &str) -> Result<Config, String> {
        let mut c: Config = toml::from_str(text).map_err(|e| {
            let (line, col) = e
                .span()
                .map(|s| {
                    let before = &text[..s.start.min(text.len())];
                    let line = before.matches('\n').count() + 1;
                    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                    (line, col)
                })
                .unwrap_or((1, 1));
            format!("{path}:{line}:{col}: {}", e.message())
        })?;
        if let Some(t) = &c.theme
            && crate::tui::theme::Theme::named(t).is_none()
        {
            return Err(format!(
                "{path}: unknown theme {t:?} (one of: {})",
                crate::tui::theme::THEMES.join(", ")
            ));
        }
        crate::tui::keymap::Keymap::with_overrides(&c.keymap)
            .map_err(|e| format!("{path}: {e}"))?;
        c.path = Some(path.to_string());
        Ok(c)
    }

    /// The effective configuration as TOML (every command with its keys).
    pub fn effective(&self) -> String {
        use std::fmt::Write as _;
        let keymap = crate::tui::keymap::Keymap::with_overrides(&self.keymap).unwrap_or_default();
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# aeplens effective configuration (from {})",
            self.path.as_deref().unwrap_or("defaults; no config file")
        );
        let _ = writeln!(s, "theme = {:?}", self.theme.as_deref().unwrap_or("dark"));
        let _ = writeln!(s, "keyrings = {:?}", self.keyrings);
        let _ = writeln!(s, "\n[keymap]");
        for b in &keymap.bindings {
            let keys: Vec<String> = b
                .keys
                .iter()
                .map(|(c, m)| crate::tui::keymap::key_config_name(*c, *m))
                .collect();
            let _ = writeln!(s, "{} = {:?}  # {}", b.name, keys, b.help);
        }
        s
    }
}
