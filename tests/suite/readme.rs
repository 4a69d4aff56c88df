//! Doc drift: every `agent` command in README.md and docs/*.md is run. Lines
//! in ```console blocks (`$ agent …`) run for real in a sandbox, and the lines
//! printed under one, if any, are what it must print; `agent …` lines in ```sh
//! blocks (they need a real model server or key) are checked by clap with
//! `--help` appended, so a renamed flag or value fails here. Every relative
//! link must name a file that exists, and its `#anchor` a heading there. The
//! `cargo` commands are run by `.ci/run`.

use std::path::{Path, PathBuf};

use super::harness::Sandbox;

fn blocks(markdown: &str) -> Vec<(String, Vec<String>)> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, Vec<String>)> = None;
    for line in markdown.lines() {
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

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every docs/*.md, with their text.
fn documents() -> Vec<(PathBuf, String)> {
    let mut paths = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    assert!(docs.len() >= 6, "docs/ holds only {docs:?}");
    paths.extend(docs);
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path, text)
        })
        .collect()
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

/// A console block's commands, each with the lines printed under it.
fn console_commands(lines: &[String]) -> Vec<(String, Vec<String>)> {
    let mut commands: Vec<(String, Vec<String>)> = Vec::new();
    for line in lines {
        match (line.strip_prefix("$ "), commands.last_mut()) {
            (Some(command), _) => commands.push((command.to_owned(), Vec::new())),
            (None, Some((_, printed))) => printed.push(line.clone()),
            (None, None) => panic!("a console block starts with output, not `$ `: {line}"),
        }
    }
    commands
}

#[test]
fn console_examples_run() {
    let mut ran = 0;
    for (path, text) in documents() {
        for (lang, lines) in blocks(&text) {
            if lang != "console" {
                continue;
            }
            for (line, printed) in console_commands(&lines) {
                let sandbox = Sandbox::new();
                std::fs::write(sandbox.work().join("notes.txt"), "x").unwrap();
                let piped = line
                    .split_once(" | ")
                    .filter(|(_, command)| command.starts_with("agent "));
                let (stdin, command) = match piped {
                    Some((producer, command)) => {
                        let text = producer
                            .strip_prefix("echo ")
                            .unwrap_or(producer)
                            .trim_matches('\'');
                        (Some(format!("{text}\n")), command)
                    }
                    None => (None, line.as_str()),
                };
                let words = words(command);
                assert_eq!(words[0], "agent", "{}: {line}", path.display());
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
                    "{}: command failed ({code:?}): {line}\n{}",
                    path.display(),
                    String::from_utf8_lossy(&output.stderr)
                );
                if !printed.is_empty() {
                    pretty_assertions::assert_eq!(
                        String::from_utf8_lossy(&output.stdout).trim_end(),
                        printed.join("\n"),
                        "{}: what `{line}` prints",
                        path.display()
                    );
                }
                ran += 1;
            }
        }
    }
    assert!(ran >= 10, "only {ran} console examples found");
}

#[test]
fn sh_examples_parse() {
    let mut checked = 0;
    for (path, text) in documents() {
        for (lang, lines) in blocks(&text) {
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
                    "{}: example does not parse: {line}\n{}",
                    path.display(),
                    String::from_utf8_lossy(&output.stderr)
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 4, "only {checked} sh examples found");
}

/// Where `needle` first occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len())
        .position(|window| window == needle)
}

/// The targets of `[text](target)` links outside code spans and blocks.
fn links(markdown: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'`' {
                // A code span ends at the next run of exactly as many backticks;
                // an unclosed run is literal.
                let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
                let mut j = i + run;
                i += run;
                while let Some(k) = find(&bytes[j..], &bytes[i - run..i]) {
                    let at = j + k;
                    let len = bytes[at..].iter().take_while(|&&b| b == b'`').count();
                    if len == run {
                        i = at + run;
                        break;
                    }
                    j = at + len;
                }
            } else if bytes[i..].starts_with(b"](") {
                if let Some(close) = find(&bytes[i + 2..], b")") {
                    targets.push(line[i + 2..i + 2 + close].to_owned());
                }
                i += 2;
            } else {
                i += 1;
            }
        }
    }
    targets
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(markdown: &str) -> Vec<String> {
    let mut fenced = false;
    let mut found = Vec::new();
    for line in markdown.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            found.push(anchor(line.trim_start_matches('#')));
        }
    }
    found
}

/// Why `target`, linked from `from`, does not resolve, if it does not.
fn broken(from: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (file, fragment) = match target.split_once('#') {
        Some((file, fragment)) => (file, Some(fragment)),
        None => (target, None),
    };
    let path = if file.is_empty() {
        from.to_path_buf()
    } else {
        from.parent().unwrap().join(file)
    };
    if !path.exists() {
        return Some(format!("{} does not exist", path.display()));
    }
    let fragment = fragment?;
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    if anchors(&text).iter().any(|a| a == fragment) {
        None
    } else {
        Some(format!("{} has no heading #{fragment}", path.display()))
    }
}

#[test]
fn relative_links_resolve() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (path, text) in documents() {
        for target in links(&text) {
            if let Some(why) = broken(&path, &target) {
                failures.push(format!("{}: ({target}): {why}", path.display()));
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "broken links:\n{}",
        failures.join("\n")
    );
    assert!(checked >= 20, "only {checked} links found");
}

#[test]
fn the_link_check_finds_what_is_broken() {
    let readme = root().join("README.md");
    assert_eq!(
        anchor(" Auditing rules with `agent check`"),
        "auditing-rules-with-agent-check"
    );
    assert_eq!(
        anchor(" Project instructions (AGENTS.md)"),
        "project-instructions-agentsmd"
    );
    assert_eq!(
        anchor(" What a run changed: `diff` and `undo`"),
        "what-a-run-changed-diff-and-undo"
    );
    for good in [
        "docs/guide.md",
        "docs/guide.md#transcripts",
        "#install",
        "assets/",
        "https://example.com/x.md",
    ] {
        assert_eq!(broken(&readme, good), None, "{good}");
    }
    for bad in [
        "docs/gide.md",
        "docs/guide.md#transcript",
        "#instal",
        "docs/missing.md",
    ] {
        assert!(broken(&readme, bad).is_some(), "{bad} passed");
    }
    assert_eq!(
        links(
            "See [a](docs/a.md) and [`b`](b.txt), not `[c](c.md)` or `` `[e](e.md)` ``.\n```\n[d](d.md)\n```\n[f](f.md)"
        ),
        ["docs/a.md", "b.txt", "f.md"]
    );
}

#[test]
fn ci_runs_the_readme_commands() {
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let readme = readme();
    for command in [
        "cargo test --locked",
        "cargo run --release -- run --provider demo 'list the files here'",
    ] {
        assert!(readme.contains(command), "README lost `{command}`");
        assert!(ci.contains(command), ".ci/run does not run `{command}`");
    }
}

/// The statuses named in the first column of the table after `marker` in
/// `text`: its lines are the first run of lines starting with `prefix`.
fn statuses_after(text: &str, marker: &str, prefix: &str) -> Vec<u32> {
    let table = text.split_once(marker).map_or("", |(_, table)| table);
    table
        .lines()
        .skip_while(|line| !line.starts_with(prefix))
        .take_while(|line| line.starts_with(prefix))
        .filter_map(|line| {
            let first = line.trim_start_matches(['|', ' ', '`']);
            let digits: String = first.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect()
}

#[test]
fn the_exit_statuses_in_docs_are_the_ones_help_prints() {
    let output = Sandbox::new().agent().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&output.stdout);
    let in_help = statuses_after(&help, "Exit status:\n", "  ");
    let ci = std::fs::read_to_string(root().join("docs/ci.md")).unwrap();
    let in_docs = statuses_after(&ci, "## Exit status\n", "|");
    assert!(in_help.len() >= 9, "{help}");
    assert_eq!(
        in_docs, in_help,
        "docs/ci.md's exit statuses differ from `agent --help`'s"
    );
}
