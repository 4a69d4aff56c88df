//! Doc drift: every `agent` command in README.md is run. Lines in ```console
//! blocks (`$ agent …`) run for real in a sandbox; `agent …` lines in ```sh
//! blocks (they need a real model server or key) are checked by clap with
//! `--help` appended, so a renamed flag or value fails here. The `cargo`
//! commands are run by `.ci/run`.

use super::harness::Sandbox;

fn blocks(readme: &str) -> Vec<(String, Vec<String>)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, Vec<String>)> = None;
    for line in readme.lines() {
        if let Some(fence) = line.strip_prefix("```") {
            match current.take() {
                Some(block) => blocks.push(block),
                None => current = Some((fence.trim().to_owned(), Vec::new())),
            }
        } else if let Some((_, lines)) = &mut current {
            lines.push(line.to_owned());
        }
    }
    blocks
}

/// Splits a README command line into words the way sh would for these simple lines.
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut in_word = false;
    for c in line.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, ' ') => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (_, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

fn readme() -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .unwrap()
}

#[test]
fn console_examples_run() {
    let mut ran = 0;
    for (lang, lines) in blocks(&readme()) {
        if lang != "console" {
            continue;
        }
        for line in lines.iter().filter_map(|l| l.strip_prefix("$ ")) {
            let sandbox = Sandbox::new();
            std::fs::write(sandbox.work().join("notes.txt"), "x").unwrap();
            let (stdin, command) = match line.split_once(" | ") {
                Some((producer, command)) => {
                    let text = producer
                        .strip_prefix("echo ")
                        .unwrap_or(producer)
                        .trim_matches('\'');
                    (Some(format!("{text}\n")), command)
                }
                None => (None, line),
            };
            let words = words(command);
            assert_eq!(words[0], "agent", "{line}");
            let mut cmd = sandbox.agent();
            cmd.args(&words[1..]);
            if let Some(stdin) = stdin {
                cmd.write_stdin(stdin);
            }
            let output = cmd.output().unwrap();
            let code = output.status.code();
            let ok = if words[1] == "check" {
                matches!(code, Some(0 | 3 | 4))
            } else {
                code == Some(0)
            };
            assert!(
                ok,
                "README command failed ({code:?}): {line}\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            ran += 1;
        }
    }
    assert!(ran >= 10, "only {ran} console examples found");
}

#[test]
fn sh_examples_parse() {
    let mut checked = 0;
    for (lang, lines) in blocks(&readme()) {
        if lang != "sh" {
            continue;
        }
        for line in &lines {
            let line = line.split(" #").next().unwrap_or_default().trim();
            let line = line.split(" > ").next().unwrap_or_default();
            if !line.starts_with("agent ") {
                continue;
            }
            let words = words(line);
            let output = Sandbox::new()
                .agent()
                .args(&words[1..])
                .arg("--help")
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "README example does not parse: {line}\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            checked += 1;
        }
    }
    assert!(checked >= 4, "only {checked} sh examples found");
}

#[test]
fn ci_runs_the_readme_commands() {
    let ci =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run"))
            .unwrap();
    let readme = readme();
    for command in [
        "cargo test --locked",
        "cargo run --release -- run --provider demo 'list the files here'",
    ] {
        assert!(readme.contains(command), "README lost `{command}`");
        assert!(ci.contains(command), ".ci/run does not run `{command}`");
    }
}
