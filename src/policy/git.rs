//! git's command line as the deny search needs it: where the subcommand is (after the global
//! options and their values), and the aliases a command defines for itself (`git -c
//! alias.p=push p` pushes). Checked against git 2.47: `-c` takes its `name=value` as the next
//! word only, alias names ignore case, `--config-env name=VAR` reads the value from the
//! environment, and `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_PARAMETERS` set
//! configuration too. Owns the reading; the search is `scan`'s.

use std::sync::OnceLock;

use super::split;
use super::word::Word;

const COMMANDS: &str = include_str!("../../assets/git-commands.txt");

/// Global options whose value may be the next word (`git -C dir status`).
const VALUE_OPTIONS: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
    "--attr-source",
];

/// What the subcommand of a git command line turns into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Expansion {
    /// Not an alias defined on this line.
    None,
    /// An alias for other git words: the argv with the alias replaced.
    Words(Vec<Word>),
    /// An alias for a shell command (`!…`), with the arguments git appends.
    Shell(String),
    /// May be an alias whose value cannot be known (`--config-env`, a configuration file
    /// included from the command line, the environment).
    Unknown,
}

/// Whether `name` is one of git's own commands (an alias cannot replace one).
fn is_command(name: &str) -> bool {
    static SET: OnceLock<Vec<&'static str>> = OnceLock::new();
    SET.get_or_init(|| {
        COMMANDS
            .lines()
            .filter(|l| !l.starts_with('#'))
            .flat_map(str::split_whitespace)
            .collect()
    })
    .contains(&name)
}

/// The index of the subcommand in a git argv (`argv[0]` is git), if there is one.
pub(super) fn subcommand_at(argv: &[Word]) -> Option<usize> {
    let mut i = 1;
    while i < argv.len() {
        let text = argv[i].text.as_str();
        if !text.starts_with('-') {
            return Some(i);
        }
        if VALUE_OPTIONS.contains(&text) {
            i += 1;
        }
        i += 1;
    }
    None
}

/// Expands the subcommand of a git argv when this line defines it as an alias. `env_config`:
/// the environment of the command sets git configuration (`GIT_CONFIG_…=`).
pub(super) fn expand(argv: &[Word], env_config: bool) -> Expansion {
    let Some(at) = subcommand_at(argv) else {
        return Expansion::None;
    };
    let mut config_given = env_config;
    let mut alias: Option<Option<&str>> = None;
    let Some(sub) = argv[at].known() else {
        return Expansion::None;
    };
    let mut i = 1;
    while i < at {
        let text = argv[i].text.as_str();
        let setting = match text {
            "-c" | "--config-env" => {
                i += 1;
                argv.get(i).map(|w| (text == "-c", w.text.as_str()))
            }
            _ => text
                .strip_prefix("--config-env=")
                .map(|setting| (false, setting)),
        };
        i += 1;
        let Some((literal, setting)) = setting else {
            continue;
        };
        let (key, value) = setting.split_once('=').unwrap_or((setting, ""));
        let key = key.to_ascii_lowercase();
        if key.starts_with("alias.") || key.starts_with("include") {
            config_given = true;
        }
        if key.strip_prefix("alias.") == Some(&sub.to_ascii_lowercase()) {
            // The last definition wins, as in git.
            alias = Some(literal.then_some(value));
        }
    }
    match alias {
        Some(Some(value)) => {
            if let Some(shell) = value.strip_prefix('!') {
                let mut text = shell.to_owned();
                for word in &argv[at + 1..] {
                    text.push(' ');
                    text.push_str(&word.text);
                }
                return Expansion::Shell(text);
            }
            let Some(words) = split::split(value).filter(|w| !w.is_empty()) else {
                return Expansion::Unknown;
            };
            let mut expanded = argv[..at].to_vec();
            expanded.extend(words);
            expanded.extend_from_slice(&argv[at + 1..]);
            Expansion::Words(expanded)
        }
        Some(None) => Expansion::Unknown,
        None if config_given && !is_command(sub) => Expansion::Unknown,
        None => Expansion::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn argv(command: &str) -> Vec<Word> {
        command.split(' ').map(Word::literal).collect()
    }

    fn expanded(command: &str) -> Option<String> {
        match expand(&argv(command), false) {
            Expansion::Words(words) => Some(
                words
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Expansion::Shell(text) => Some(format!("!{text}")),
            Expansion::Unknown => Some("?".to_owned()),
            Expansion::None => None,
        }
    }

    #[test]
    fn subcommands() {
        let cases: &[(&str, Option<usize>)] = &[
            ("git push", Some(1)),
            ("git -C x push", Some(3)),
            ("git -c a=b --no-pager push", Some(4)),
            ("git --git-dir=x push", Some(2)),
            ("git --git-dir x push", Some(3)),
            ("git --version", None),
        ];
        for (command, want) in cases {
            assert_eq!(subcommand_at(&argv(command)), *want, "input: {command:?}");
        }
    }

    #[test]
    fn aliases_expand() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                "git -c alias.p=push p origin",
                Some("git -c alias.p=push push origin"),
            ),
            ("git -c alias.P=push p", Some("git -c alias.P=push push")),
            ("git -c alias.p=push P", Some("git -c alias.p=push push")),
            ("git -c alias.p=!sh p x", Some("!sh x")),
            ("git --config-env=alias.p=X p", Some("?")),
            ("git --config-env alias.p=X p", Some("?")),
            ("git -c alias.q=push p", Some("?")),
            ("git -c include.path=x p", Some("?")),
            ("git -c alias.q=push status", None),
            ("git -c alias.q=push send-pack", None),
            ("git -c core.pager=x p", None),
            ("git p", None),
            ("git -calias.p=push p", None),
        ];
        for (command, want) in cases {
            assert_eq!(expanded(command).as_deref(), *want, "input: {command:?}");
        }
        assert_eq!(expand(&argv("git p"), true), Expansion::Unknown);
        assert!(is_command("send-pack") && is_command("push") && !is_command("p"));
    }
}
