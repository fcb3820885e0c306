//! Hearing that watched files changed, through the `notify` crate: the system's watcher
//! (inotify on Linux) and, where it cannot start (no inotify, too many watches), `notify`'s
//! own polling watcher. A file PATH is followed through its directory, so a rotation
//! (renamed, a new one created) is heard; a directory PATH recursively, so new files are.

use notify::{RecursiveMode, Watcher};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

/// How often the polling watcher looks, when it is the one used.
const POLL: Duration = Duration::from_millis(500);

/// The watcher and what it heard.
pub struct Follow {
    _watcher: Box<dyn Watcher + Send>,
    heard: Receiver<Heard>,
    /// Which watcher is used (said at start).
    pub kind: &'static str,
}

/// What a watcher says.
pub enum Heard {
    /// These paths changed.
    Changed(Vec<PathBuf>),
    /// The watcher failed (said as an infra alert; the loop still looks on its own).
    Failed(String),
}

impl Follow {
    /// Follows `paths` (files through their directory, directories recursively) with
    /// the system's watcher, or polling when it cannot follow them all or `poll` asks for
    /// it (a network filesystem, where the system's watcher hears nothing).
    pub fn start(paths: &[String], poll: bool) -> Result<Follow, String> {
        let (send, heard) = channel();
        let handler = |send: Sender<Heard>| {
            move |event: notify::Result<notify::Event>| {
                let _ = send.send(match event {
                    Ok(event) => Heard::Changed(event.paths),
                    Err(e) => Heard::Failed(e.to_string()),
                });
            }
        };
        let watch_all = |w: &mut dyn Watcher| -> Result<(), String> {
            for p in paths {
                let (target, mode) = target(Path::new(p));
                w.watch(&target, mode)
                    .map_err(|e| format!("cannot follow {}: {e}", target.display()))?;
            }
            Ok(())
        };
        let system =
            notify::RecommendedWatcher::new(handler(send.clone()), notify::Config::default());
        if !poll
            && let Ok(mut w) = system
            && watch_all(&mut w).is_ok()
        {
            return Ok(Follow {
                _watcher: Box::new(w),
                heard,
                kind: "system",
            });
        }
        let config = notify::Config::default().with_poll_interval(POLL);
        let mut poller = notify::PollWatcher::new(handler(send), config)
            .map_err(|e| format!("cannot follow files: {e}"))?;
        watch_all(&mut poller)?;
        Ok(Follow {
            _watcher: Box::new(poller),
            heard,
            kind: "polling",
        })
    }

    /// Waits up to `timeout` for changes; gives every changed path heard (none on time
    /// out) and the failures.
    pub fn wait(&self, timeout: Duration) -> (Vec<PathBuf>, Vec<String>) {
        let (mut changed, mut failed) = (Vec::new(), Vec::new());
        let mut take = |h: Heard| match h {
            Heard::Changed(paths) => changed.extend(paths),
            Heard::Failed(why) => failed.push(why),
        };
        match self.heard.recv_timeout(timeout) {
            Ok(h) => take(h),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                return (changed, failed);
            }
        }
        while let Ok(h) = self.heard.try_recv() {
            take(h);
        }
        (changed, failed)
    }
}

/// What to watch for `path`: a directory recursively, a file through its directory.
fn target(path: &Path) -> (PathBuf, RecursiveMode) {
    if path.is_dir() {
        (path.to_path_buf(), RecursiveMode::Recursive)
    } else {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        (
            dir.unwrap_or(Path::new(".")).to_path_buf(),
            RecursiveMode::NonRecursive,
        )
    }
}
