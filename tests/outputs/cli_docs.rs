//! Shell completions and the man page come from the clap definition; snapshots keep
//! them reviewable.

use crate::common;

fn aeplens(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aeplens"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish", "nushell"] {
        let script = aeplens(&["completions", shell]);
        assert!(
            script.contains("findings") && script.contains("leases"),
            "{shell}"
        );
        insta::assert_snapshot!(format!("completions_{shell}"), script);
    }
    let man = aeplens(&["man"]);
    assert!(man.starts_with(".ie") && man.contains(".TH aeplens 1"));
    insta::assert_snapshot!("man", man);
    // A page per command, and one on the explorer's keys and glyphs.
    for command in ["check", "findings", "show", "chains", "envelope", "config"] {
        let page = aeplens(&["man", command]);
        assert!(
            page.contains(&format!(".TH aeplens-{command} 1")),
            "{command}"
        );
    }
    let check = aeplens(&["man", "check"]);
    assert!(
        check.contains("\\-\\-timings") && check.contains("\\-\\-strict"),
        "{check}"
    );
    let explorer = aeplens(&["man", "explorer"]);
    assert!(explorer.contains(".TH aeplens-explorer 1"));
    for needle in [
        "GLYPHS",
        "⊘  denied",
        "F2: focus the navigator",
        "q/C\\-c: quit",
    ] {
        assert!(explorer.contains(needle), "{needle} in {explorer}");
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aeplens"))
        .args(["man", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn config_print_and_errors() {
    let dir = common::run_dir("config");
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.toml");
    std::fs::write(
        &good,
        "theme = \"light\"\n[keymap]\nparent = [\"u\", \"alt-up\"]\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aeplens"))
        .args(["config", "--print"])
        .env("AEPLENS_CONFIG", &good)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("theme = \"light\""), "{text}");
    assert!(text.contains("parent = [\"u\", \"alt-up\"]"), "{text}");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("warning"),
        "the default keymap binds no key twice"
    );
    // A key bound to two commands runs only the first: --print says so.
    let twice = dir.join("twice.toml");
    std::fs::write(&twice, "[keymap]\nzoom_in = [\"j\"]\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aeplens"))
        .args(["config", "--print"])
        .env("AEPLENS_CONFIG", &twice)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: key j is bound to down and zoom_in: only down runs"),
        "{err}"
    );
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "theme = \"dark\"\n[keymap]\nparent = [\"u\"\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aeplens"))
        .args(["config", "--print"])
        .env("AEPLENS_CONFIG", &bad)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("bad.toml:3:14: unclosed array"),
        "line and column: {err}"
    );
    std::fs::write(&bad, "# colours\ntheme = \"neon\"\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aeplens"))
        .args(["config"])
        .env("AEPLENS_CONFIG", &bad)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // The place, the line itself and a caret under the value.
    assert!(
        err.contains("bad.toml:2:9: unknown theme \"neon\""),
        "{err}"
    );
    assert!(err.contains("2 | theme = \"neon\""), "{err}");
    assert!(err.contains("  |         ^"), "{err}");
    std::fs::write(&bad, "[keymap]\nfly = [\"x\"]\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aeplens"))
        .args(["config", "--print"])
        .env("AEPLENS_CONFIG", &bad)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.toml:2:7: keymap: unknown command \"fly\""),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
