//! Every ```console block of the README and of `docs/*.md` is run against the real
//! binary: the first line is `$ aeplens ARGS`, the rest is exactly what it prints
//! (trailing spaces aside).

#[test]
fn readme_examples_print_what_the_readme_says() {
    let mut pages = vec![std::path::PathBuf::from("README.md")];
    for entry in std::fs::read_dir("docs").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let text: String = (pages.iter())
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let mut checked = 0;
    for block in text.split("```console\n").skip(1) {
        let block = block.split("\n```").next().unwrap();
        let mut lines = block.lines();
        let command = lines.next().unwrap();
        let args: Vec<&str> = command
            .strip_prefix("$ aeplens ")
            .unwrap_or_else(|| panic!("console block must start with `$ aeplens`: {command}"))
            .split_whitespace()
            .collect();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_aeplens"))
            .args(&args)
            .env(
                "XDG_DATA_HOME",
                std::env::temp_dir().join("aeplens-test-no-reviews"),
            )
            .output()
            .unwrap();
        let actual: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim_end().to_string())
            .collect();
        let expected: Vec<String> = lines.map(|l| l.trim_end().to_string()).collect();
        assert_eq!(
            actual, expected,
            "documented example `{command}` prints something else"
        );
        checked += 1;
    }
    assert!(checked >= 4, "console examples found: {checked}");
}
