//! The openssl timestamp authority of `tests/tsa/make_authority.sh`, asked to stamp a
//! digest as any RFC 3161 client asks: `openssl ts -query`, answered by `openssl ts
//! -reply` (the token tests and `examples/stamp_store`).

use std::path::Path;

/// The DER response of the authority in `dir`, configured by `config` (a file in `dir`),
/// for the SHA-256 digest `hex`; `name` names its query and reply files (removed after).
pub fn stamp(dir: &Path, config: &str, hex: &str, name: &str) -> Vec<u8> {
    let run = |args: &[&str]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl runs");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let (query, reply) = (format!("{name}.tsq"), format!("{name}.tsr"));
    run(&[
        "ts", "-query", "-digest", hex, "-sha256", "-cert", "-out", &query,
    ]);
    run(&[
        "ts",
        "-reply",
        "-queryfile",
        &query,
        "-config",
        config,
        "-section",
        "this",
        "-out",
        &reply,
    ]);
    let der = std::fs::read(dir.join(&reply)).expect("the reply");
    let _ = std::fs::remove_file(dir.join(&query));
    let _ = std::fs::remove_file(dir.join(&reply));
    der
}
