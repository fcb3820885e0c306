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
    /// Reads the config file (defaults when there is none). The error is ready to print.
    pub fn load() -> Result<Config, String> {
        let Some(path) = config_path() else {
            return Ok(Config::default());
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => Config::parse(&text, &path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(crate::load::LoadError::whole(
                &path.display().to_string(),
                format!("cannot read config: {e}"),
            )
            .render()),
        }
    }

    /// Parses config text. The error is ready to print (escaped): `path:line:column`, the
    /// message and the offending line with a caret under the place.
    pub fn parse(text: &str, path: &str) -> Result<Config, String> {
        let at = |offset: usize, message: String| {
            crate::load::LoadError::located(path, text, offset, message).render()
        };
        let mut c: Config = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            at(offset, e.message().trim_end().to_string())
        })?;
        if let Some(t) = &c.theme
            && crate::tui::theme::Theme::named(t).is_none()
        {
            let message = format!(
                "unknown theme {t:?} (one of: {})",
                crate::tui::theme::THEMES.join(", ")
            );
            return Err(at(setting_offset(text, "theme"), message));
        }
        if let Err(e) = crate::tui::keymap::Keymap::with_overrides(&c.keymap) {
            // The message names the binding (`keymap.NAME: …` or `… command "NAME"`).
            let offset = c
                .keymap
                .keys()
                .find(|name| e.contains(&format!("{name}:")) || e.contains(&format!("{name:?}")))
                .map_or(0, |name| setting_offset(text, name));
            return Err(at(offset, e));
        }
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

/// Byte offset of the value on the line that sets `key` (`key = value`), else 0.
fn setting_offset(text: &str, key: &str) -> usize {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix(key)
            && let Some(value) = rest.trim_start().strip_prefix('=')
        {
            return offset + line.len() - value.trim_start().len();
        }
        offset += line.len();
    }
    0
}
