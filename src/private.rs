//! Files only this user can read: the evidence index, reviews, reports and exports name
//! evidence files and what was found in them. The one home of the private files aeplens
//! writes, and of the check that a directory is not writable by others.

use std::path::Path;

/// True when users other than its owner may write to `dir` (group or others have write
/// permission): an index there is not read.
pub fn writable_by_others(dir: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o022 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        false
    }
}

/// Creates `dir` (and its parents) readable by its owner only (0700): the index, reviews
/// and reports name evidence files and what was found in them. The one home of the
/// private files aeplens writes.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// A new file at `path` readable by its owner only (0600).
pub fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::File::options();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Writes `bytes` to a private file at `path` ([`private_file`]), its missing parent
/// directories private too ([`private_dir`]). A file that exists keeps its mode.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    if let Some(dir) = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty() && !d.exists())
    {
        private_dir(dir)?;
    }
    private_file(path)?.write_all(bytes)
}

/// Replaces the file at `path` with `bytes` at once: written to a private sibling, synced,
/// renamed over it, and the directory synced, so a crash at any moment leaves either the
/// old file or the new one, never a torn one.
pub fn replace_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let written = (|| {
        let mut file = private_file(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        match path.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(dir) => std::fs::File::open(dir)?.sync_all(),
            None => Ok(()),
        }
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}
