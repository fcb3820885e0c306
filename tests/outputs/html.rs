//! The HTML report: a golden for the demo, then the real thing in headless Chromium —
//! it renders, a screenshot is not empty, no script runs, no request leaves the file, and
//! hostile evidence stays inert text. `scripts/test` installs Debian's chromium when it is
//! missing; without it these tests fail in CI (`CI` set) and are skipped elsewhere.

use crate::common;

use common::{DEMO, aeplens};
use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;

fn html(args: &[&str]) -> String {
    let mut all = vec!["report", "--format", "html"];
    all.extend_from_slice(args);
    let (code, out, err) = aeplens(&all);
    assert_eq!(code, 0, "{err}");
    out
}

fn scratch(name: &str) -> PathBuf {
    let dir = common::run_dir(&format!("html-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn demo_golden_is_one_self_contained_file() {
    let page = html(&DEMO);
    for expected in [
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'",
        "script-src 'none'",
        "<svg xmlns=\"http://www.w3.org/2000/svg\"",
        "Denied → re-approved chains",
        "F-LEASE-OUTSIDE",
        "Reproduce: <code>aeplens report --format html",
    ] {
        assert!(page.contains(expected), "{expected}");
    }
    // Nothing to fetch: no script, no external reference of any kind.
    for banned in [
        "<script", "<link", "<img", "<iframe", "src=", "@import", "url(",
    ] {
        assert!(!page.contains(banned), "{banned}");
    }
    let href_free = page.replace("href=\"#", "");
    assert!(!href_free.contains("href="), "only in-page links");
    insta::assert_snapshot!(
        "demo_html",
        page.replace(env!("CARGO_PKG_VERSION"), "[version]")
    );
}

#[test]
fn the_report_renders_in_chromium_and_hostile_evidence_stays_inert() {
    let Some(bin) = common::chromium() else {
        return;
    };
    let dir = scratch("browser");
    // A listener every hostile reference points at: nothing may ever connect to it.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let hostile = format!(
        "x\"><img src=\"{base}/img\" onerror=\"document.title='pwned'\"><script src=\"{base}/js\"></script>\
         <script>document.title='pwned'</script><link rel=stylesheet href=\"{base}/css\">\
         <style>@import url({base}/import);</style><a href=\"{base}/a\">a</a> \u{202e}txt.exe \u{200b}\u{1b}[2J"
    );
    let record = serde_json::json!({
        "schema_version": "aep/v0.3",
        "run_id": hostile,
        "actions": [{"action_id": hostile, "tool_name": hostile, "state_changing": true,
                     "side_effect_class": "mutate-external", "timestamp_ms": 1_780_000_000_000u64,
                     "capability_decision": {"decision": "deny", "reason": hostile}},
                    {"action_id": "b", "parent_action_id": hostile, "tool_name": hostile,
                     "state_changing": true, "timestamp_ms": 1_780_000_001_000u64,
                     "capability_decision": {"decision": "allow"}}],
    });
    let store = dir.join("evil.ndjson");
    std::fs::write(&store, format!("{record}\n")).unwrap();
    let evil = dir.join("evil.html");
    let page = html(&[store.to_str().unwrap()]);
    assert!(!page.contains('\u{202e}') && !page.contains('\u{1b}') && !page.contains('\u{200b}'));
    assert!(
        page.contains("\\u{202E}txt.exe"),
        "bidi override shown as an escape"
    );
    std::fs::write(&evil, &page).unwrap();
    let demo = dir.join("demo.html");
    std::fs::write(&demo, html(&DEMO)).unwrap();

    // The demo renders: a title, and a screenshot that is a real picture.
    let dom = common::run_chromium(&bin, &dir.join("p1"), &["--dump-dom"], &demo);
    assert!(
        dom.contains("<title>aeplens incident report</title>"),
        "{dom}"
    );
    assert!(dom.contains("<svg"), "{dom}");
    let shot = dir.join("demo.png");
    common::run_chromium(
        &bin,
        &dir.join("p2"),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,1600",
        ],
        &demo,
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    assert!(
        png.len() > 20_000,
        "a page, not a blank: {} bytes",
        png.len()
    );

    // The hostile page: no script ran (the title is ours), no element came from the
    // evidence, and no request reached the listener.
    let dom = common::run_chromium(&bin, &dir.join("p3"), &["--dump-dom"], &evil);
    assert!(
        dom.contains("<title>aeplens incident report</title>"),
        "a script ran"
    );
    assert!(
        !dom.contains("pwned\">") && !dom.contains("<title>pwned"),
        "{dom}"
    );
    for element in ["<img", "<script", "<link", "<iframe", "<a href=\"http"] {
        assert!(!dom.contains(element), "{element} in the DOM");
    }
    assert!(dom.contains("&lt;script"), "the markup shows as text");
    common::run_chromium(
        &bin,
        &dir.join("p4"),
        &[&format!("--screenshot={}", dir.join("evil.png").display())],
        &evil,
    );
    std::thread::sleep(Duration::from_millis(200));
    match listener.accept() {
        Ok((mut conn, _)) => {
            let mut request = String::new();
            let _ = conn.read_to_string(&mut request);
            panic!("the report made a request: {request}");
        }
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
