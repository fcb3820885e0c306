//! Where alerts go besides the log (docs/watch.md §4): a command given each alert on its
//! stdin (`--exec`), and a file of OCSF Detection Findings (`--ocsf`). Each is given the
//! log's lines in order and remembers how many it was given (in the state), so a restart
//! gives it what it missed.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The OCSF version the events are written for.
pub const OCSF_VERSION: &str = "1.3.0";

/// The OCSF Detection Finding (class 2004) of one alert line: the alert's fields mapped
/// (`finding_info.uid` is the dedupe key, `title` the rule, `types` the class; severity,
/// time, message and status), the rest under `unmapped`.
pub fn ocsf_event(line: &serde_json::Value) -> serde_json::Value {
    let text = |k: &str| {
        line.get(k)
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
    };
    let (severity_id, severity) = match text("severity") {
        "high" => (4, "High"),
        "medium" => (3, "Medium"),
        "low" => (2, "Low"),
        _ => (1, "Informational"),
    };
    let resolved = text("status") == "resolved";
    let (activity_id, activity) = if resolved {
        (3, "Close")
    } else {
        (1, "Create")
    };
    let (status_id, status) = if resolved {
        (4, "Resolved")
    } else {
        (1, "New")
    };
    let time = line.get("seen_at_ms").cloned().unwrap_or(0.into());
    let mut unmapped = serde_json::Map::new();
    for key in [
        "schema_version",
        "store",
        "record",
        "action",
        "resolves",
        "prev_record_hash",
        "signature",
    ] {
        if let Some(v) = line.get(key) {
            unmapped.insert(key.into(), v.clone());
        }
    }
    serde_json::json!({
        "activity_id": activity_id,
        "activity_name": activity,
        "category_uid": 2,
        "category_name": "Findings",
        "class_uid": 2004,
        "class_name": "Detection Finding",
        "type_uid": 200_400 + activity_id,
        "type_name": format!("Detection Finding: {activity}"),
        "severity_id": severity_id,
        "severity": severity,
        "status_id": status_id,
        "status": status,
        "time": time,
        "message": text("message"),
        "finding_info": {
            "uid": text("dedupe_key"),
            "title": text("rule"),
            "desc": text("message"),
            "types": [text("class")],
            "created_time": time,
        },
        "metadata": {
            "version": OCSF_VERSION,
            "product": {
                "name": "aeplens",
                "vendor_name": "aeplens",
                "version": env!("CARGO_PKG_VERSION"),
            },
            "log_name": "aeplens-alert",
        },
        "unmapped": unmapped,
    })
}

/// The `--ocsf` file: appended, one event a line.
pub struct Ocsf {
    pub path: PathBuf,
}

impl Ocsf {
    /// Appends the events of `lines` (alert lines as written) and syncs.
    pub fn write(&self, lines: &[String]) -> std::io::Result<()> {
        let mut text = String::new();
        for line in lines {
            let value: serde_json::Value =
                serde_json::from_str(line).map_err(std::io::Error::other)?;
            text.push_str(&ocsf_event(&value).to_string());
            text.push('\n');
        }
        let mut file = std::fs::File::options()
            .create(true)
            .append(true)
            .open(&self.path)?;
        file.write_all(text.as_bytes())?;
        file.sync_data()
    }
}

/// The `--exec` command, run by `sh -c` once per alert with its line on stdin.
pub struct Exec {
    pub command: String,
}

impl Exec {
    /// Runs the command on `line`; the error says how it failed.
    pub fn send(&self, line: &str) -> Result<(), String> {
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run: {e}"))?;
        if let Some(mut stdin) = child.stdin.take() {
            // A command that exits without reading is judged by its status.
            let _ = stdin
                .write_all(line.as_bytes())
                .and_then(|()| stdin.write_all(b"\n"));
        }
        match child.wait() {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => Err(format!("exited with {status}")),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// Cuts what follows the last newline of the file at `path` (a line whose write was cut
/// short by a kill), when there is one.
pub fn cut_torn_tail(path: &Path) -> std::io::Result<()> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if whole < bytes.len() {
        let file = std::fs::File::options().write(true).open(path)?;
        file.set_len(whole as u64)?;
        file.sync_all()?;
    }
    Ok(())
}

/// Lines in the file at `path` (0 when there is none).
pub fn count_lines(path: &Path) -> std::io::Result<u64> {
    match std::fs::read(path) {
        Ok(b) => Ok(bytecount(&b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e),
    }
}

fn bytecount(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}
