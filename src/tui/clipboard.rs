//! Clipboard output: a native clipboard tool when there is one, else OSC 52 (wrapped for
//! tmux). Nothing from a record reaches the terminal raw: OSC 52 carries base64.

use std::io::Write;

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
pub fn copy_native(text: &str) -> bool {
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
