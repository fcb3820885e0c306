//! The build's identity for the evidence index (`AEPLENS_BUILD`): a digest of the sources
//! and the lock file, so that what one build of aeplens kept in the index (verdicts,
//! findings, answers) is never taken by another build with the same version number but
//! other code — a local change, a patched rule, other dependency versions.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut files = vec![root.join("Cargo.lock")];
    walk(&root.join("src"), &mut files);
    files.sort();
    // SipHash with fixed keys: the same sources give the same identity on every build.
    let mut digest = DefaultHasher::new();
    for file in &files {
        file.strip_prefix(&root).unwrap_or(file).hash(&mut digest);
        std::fs::read(file).unwrap_or_default().hash(&mut digest);
    }
    println!("cargo:rustc-env=AEPLENS_BUILD={:016x}", digest.finish());
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.lock");
}

/// Every file under `dir`.
fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, files);
        } else {
            files.push(path);
        }
    }
}
