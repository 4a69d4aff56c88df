//! Issue 33, precision: what asked for no reason. Operators inside `"…"` are text, pure
//! builtins (`test`, `[`, `[[`, `sleep`, `:`) and `if … fi` compose, read-only git plumbing
//! and listings, package listings and version queries — and what still asks in each class.

use super::*;
use pretty_assertions::assert_eq;

/// Operator, comment and glob characters that are text inside double quotes.
const QUOTED_TEXT: &[&str] = &[
    "|", "||", "&", "&&", ";", "<", ">", "<<", ">>", "(", ")", "{", "}", "#", "*", "?", "[", "]",
    "!", "<<<<<<", "a\\|b", "(a|b)", "2>&1", "a;b&c",
];

#[test]
fn operators_inside_double_quotes_are_text() {
    let mut cases: Vec<(String, Verdict)> = Vec::new();
    for text in QUOTED_TEXT {
        for template in [
            "grep -n \"{}\" src/main.rs",
            "rg \"x{}y\" src",
            "grep -rE \"{}\" src",
            "rg -n \"{}\" src | head -5",
            "grep -c \"{}\" README.md && echo ok",
        ] {
            cases.push((template.replace("{}", text), Allow));
        }
        // A `$` or backtick inside "…" still asks, and so does a newline.
        for template in [
            "grep \"{}$HOME\" x",
            "grep \"{}`id`\" x",
            "grep \"{}$(id)\" x",
            "grep \"a\n{}\" x",
        ] {
            cases.push((template.replace("{}", text), Ask));
        }
    }
    cases.extend(
        [
            ("rg -n \"thumb|feedback|rating\" web/app", Allow),
            ("grep -E \"(hugo|config)\" x", Allow),
            ("grep -n \"a\\|b\" f", Allow),
            ("grep -r \"<<<<<<\" src", Allow),
            ("grep \"a\\\"|b\" f", Allow),
            // A quoted glob is a literal name, judged as written.
            ("cat \"*.pem\"", Ask),
            ("cat \".env\"", Ask),
            ("cat \"src/*.rs\"", Allow),
            ("grep x \"/etc/passwd\"", Ask),
            // Unquoted operators are still operators.
            ("grep \"a\"|sh", Ask),
            ("grep \"a\" > out", Ask),
            ("grep \"a\";rm x", Ask),
        ]
        .map(|(c, v)| (c.to_owned(), v)),
    );
    let cases: Vec<(&str, Verdict)> = cases.iter().map(|(c, v)| (c.as_str(), *v)).collect();
    inspect_table(OsFamily::Unix, &cases);
}

#[test]
fn double_quoted_operators_are_text_only_on_the_inspect_list() {
    // Strict keeps 0.1's rule 3: these characters ask wherever they are.
    let decision = decide(&rules(), OsFamily::Unix, "grep \"a|b\" x");
    assert_eq!(decision.verdict, Ask, "{decision:?}");
}

/// Each command is denied under the deny rule `rm -rf`, with the inspect list.
fn assert_denied(commands: &[&str]) {
    let rules = Rules::new(Vec::new(), vec![rule("rm -rf", Source::User)]);
    for command in commands {
        let decision = decide_inspect(&rules, OsFamily::Unix, command);
        assert_eq!(decision.verdict, Deny, "{command:?}: {decision:?}");
    }
}

#[test]
fn double_quoted_operators_never_hide_a_deny() {
    assert_denied(&[
        "grep \"a\" x; rm -rf /",
        "grep \"a|\" x | rm -rf /",
        "sh -c \"grep a | rm -rf /\"",
        "grep \"$(rm -rf /)\" x",
    ]);
}

#[test]
fn tests_and_waits() {
    inspect_table(
        OsFamily::Unix,
        &[
            ("test -f x", Allow),
            ("test -d src", Allow),
            ("test ! -e build", Allow),
            ("test -n abc", Allow),
            ("test -z \"\"", Allow),
            ("test a = b", Allow),
            ("test a != \"b c\"", Allow),
            ("test 1 -eq 2", Allow),
            ("test x -nt y", Allow),
            ("test", Allow),
            ("[ -f package.json ]", Allow),
            ("[ ! -d node_modules ]", Allow),
            ("[ -s src/main.rs ]", Allow),
            ("[ \"a\" = \"a\" ]", Allow),
            ("[[ -f x ]]", Allow),
            ("[[ ! -d src ]]", Allow),
            ("[[ a == b ]]", Allow),
            ("[[ 3 -gt 2 ]]", Allow),
            ("sleep 1", Allow),
            ("sleep 0.5", Allow),
            ("sleep 2s", Allow),
            ("sleep 1m", Allow),
            (":", Allow),
            (": ok", Allow),
            ("true", Allow),
            // Outside the workspace, secrets, code in arithmetic or subscripts, options.
            ("test -f /etc/passwd", Ask),
            ("[ -f ~/.ssh/id_rsa ]", Ask),
            ("[ -f .env ]", Ask),
            ("test x -ef /etc/passwd", Ask),
            ("test -v x", Ask),
            ("test -R x", Ask),
            ("test -o errexit", Ask),
            ("test -t 1", Ask),
            ("[[ -v 'a[0]' ]]", Ask),
            ("[[ a -eq 1 ]]", Ask),
            ("[[ 'a[0]' -eq 1 ]]", Ask),
            ("[[ 1+1 -eq 2 ]]", Ask),
            ("test a -eq 1", Ask),
            ("[ -f x -a -f y ]", Ask),
            ("[ -f x -o -f y ]", Ask),
            ("[ -f x ] ]", Ask),
            ("[ -f x", Ask),
            ("[ -f *.rs ]", Ask),
            ("[[ -f x && -f y ]]", Ask),
            ("[[ $x == y ]]", Ask),
            ("[ -f \"$HOME\" ]", Ask),
            ("[ a > b ]", Ask),
            ("sleep", Ask),
            ("sleep infinity", Ask),
            ("sleep inf", Ask),
            ("sleep 1e9", Ask),
            ("sleep 11m", Ask),
            ("sleep 1h", Ask),
            ("sleep 600 1", Ask),
            ("sleep --help", Ask),
            (": > x", Ask),
        ],
    );
}

#[test]
fn tests_stay_on_the_strict_side_with_the_strict_list() {
    for command in ["test -f x", "[ -f x ]", "[[ -f x ]]", "sleep 1", ":"] {
        let decision = decide(&rules(), OsFamily::Unix, command);
        assert_eq!(decision.verdict, Ask, "{command:?}: {decision:?}");
    }
}

#[test]
fn if_statements_and_lists_of_tests_compose() {
    inspect_table(
        OsFamily::Unix,
        &[
            ("if [ -f package.json ]; then cat package.json; fi", Allow),
            ("if test -f x; then cat x; else echo none; fi", Allow),
            (
                "if [[ -d src ]]; then ls src; elif [ -d lib ]; then ls lib; fi",
                Allow,
            ),
            ("if ! test -f x; then echo missing; fi", Allow),
            ("if [ -f x ]; then cat x | head -5; fi 2>/dev/null", Allow),
            ("test -f x && cat x || echo none", Allow),
            ("[ -f x ] && cat x", Allow),
            ("[[ -f x ]] && cat x || true", Allow),
            ("sleep 2; git status", Allow),
            // A part that is not allowed, an unread structure, or a keyword that is a word.
            ("if [ -f x ]; then rm x; fi", Ask),
            ("if [ -f x ]; then cat /etc/passwd; fi", Ask),
            ("if [ -f x ]; then cat x; fi > out", Ask),
            ("if [ -f x ]; then if [ -f y ]; then cat y; fi; fi", Ask),
            ("if [ -f x ]; then cat x", Ask),
            ("if [ -f x ]; then cat x; 2>/dev/null else cat y; fi", Ask),
            ("if [ -f x ] && then cat x; fi", Ask),
            ("for f in a b; do cat $f; done", Ask),
            ("while true; do sleep 1; done", Ask),
            ("if [ -f x ]\nthen cat x\nfi", Ask),
        ],
    );
}

#[test]
fn if_statements_never_hide_a_deny() {
    assert_denied(&[
        "if [ -f x ]; then rm -rf x; fi",
        "if rm -rf x; then :; fi",
        "if [ -f x ]; then cat x; else rm -rf /; fi",
    ]);
}

#[test]
fn git_plumbing_and_listings() {
    inspect_table(
        OsFamily::Unix,
        &[
            ("git merge-base main HEAD", Allow),
            ("git merge-base --is-ancestor a b", Allow),
            ("git rev-list --count HEAD", Allow),
            ("git rev-list -n5 HEAD", Allow),
            ("git rev-list --oneline main..HEAD", Allow),
            ("git ls-tree -r --name-only HEAD", Allow),
            ("git ls-tree HEAD src", Allow),
            ("git for-each-ref --sort=-committerdate refs/heads/", Allow),
            (
                "git for-each-ref --format='%(refname:short)' refs/tags",
                Allow,
            ),
            ("git show-ref --tags", Allow),
            ("git name-rev HEAD", Allow),
            ("git reflog", Allow),
            ("git reflog -10", Allow),
            ("git reflog show main", Allow),
            ("git reflog list", Allow),
            ("git stash list", Allow),
            ("git stash show --stat", Allow),
            ("git stash show --name-only 'stash@{1}'", Allow),
            ("git worktree list", Allow),
            ("git worktree list --porcelain", Allow),
            ("git remote", Allow),
            ("git config user.name", Allow),
            ("git config --get core.editor", Allow),
            ("git config --global --get init.defaultBranch", Allow),
            ("git version", Allow),
            ("git log --graph --oneline", Allow),
            ("git diff --stat", Allow),
            ("git -C src log -1", Allow),
            ("cd src && git log -1", Allow),
            // Writes, content, credentials, network, gpg, outside the workspace.
            ("git reflog expire --all", Ask),
            ("git reflog delete 'HEAD@{1}'", Ask),
            ("git reflog drop", Ask),
            ("git reflog main", Ask),
            ("git stash", Ask),
            ("git stash show", Ask),
            ("git stash show -p", Ask),
            ("git stash show --stat -p", Ask),
            ("git stash list -p", Ask),
            ("git stash drop", Ask),
            ("git stash pop", Ask),
            ("git worktree add x", Ask),
            ("git worktree remove x", Ask),
            ("git worktree list x", Ask),
            ("git remote -v", Ask),
            ("git remote get-url origin", Ask),
            ("git remote show origin", Ask),
            ("git remote add x y", Ask),
            ("git config --list", Ask),
            ("git config -l", Ask),
            ("git config --get remote.origin.url", Ask),
            ("git config http.extraHeader", Ask),
            ("git config --get-regexp url", Ask),
            ("git config credential.helper", Ask),
            ("git config github.token", Ask),
            ("git config user.name x", Ask),
            ("git config --unset user.name", Ask),
            ("git config --file /etc/gitconfig user.name", Ask),
            ("git rev-list --format=%GG HEAD", Ask),
            ("git for-each-ref --format='%(signature)'", Ask),
            ("git ls-tree HEAD .env", Ask),
            ("git -C /etc rev-list HEAD", Ask),
            ("git merge-base --output=x a b", Ask),
            ("git show-ref --exclude-existing", Ask),
            ("git version x", Ask),
        ],
    );
}

#[test]
fn package_listings_and_version_queries() {
    inspect_table(
        OsFamily::Unix,
        &[
            ("npm ls", Allow),
            ("npm ls --depth=0", Allow),
            ("npm list --all --json", Allow),
            ("npm ls react", Allow),
            ("npm ls --omit dev", Allow),
            ("pip list", Allow),
            ("pip3 list --format=json", Allow),
            ("pip freeze", Allow),
            ("pip show requests", Allow),
            ("pip3.12 show -f requests", Allow),
            ("go version", Allow),
            ("node --version", Allow),
            ("node -v", Allow),
            ("python3 --version", Allow),
            ("python --version", Allow),
            ("python3.12 -V", Allow),
            ("perl -v", Allow),
            ("ruby --version", Allow),
            ("npm --version", Allow),
            ("npm ls | head", Allow),
            // Other forms, network, project code, workspace-chosen programs.
            ("npm ls -g", Ask),
            ("npm ls --prefix /x", Ask),
            ("npm ls --userconfig x", Ask),
            ("npm install", Ask),
            ("npm ls ../x", Ask),
            ("pnpm list", Ask),
            ("pnpm ls", Ask),
            ("yarn list", Ask),
            ("yarn why x", Ask),
            ("pip list --outdated", Ask),
            ("pip list -o", Ask),
            ("pip show", Ask),
            ("pip install x", Ask),
            ("pip freeze -r requirements.txt", Ask),
            ("python3 -m pip list", Ask),
            ("cargo tree --offline", Ask),
            ("cargo metadata --offline --no-deps", Ask),
            ("rustc --version", Ask),
            ("go version -m ./bin/x", Ask),
            ("go env", Ask),
            ("node --version x", Ask),
            ("node -e 1", Ask),
            ("python3 -V -c 1", Ask),
            ("python3 -v", Ask),
            ("ruby -v", Ask),
            ("python2 --version", Ask),
        ],
    );
}

/// Every class above stays off the list when the program is written as a path or the words
/// are glued differently: the list names programs as written.
#[test]
fn new_entries_match_the_program_as_written() {
    for command in [
        "/usr/bin/test -f x",
        "/bin/sleep 1",
        "./node --version",
        "/usr/bin/npm ls",
    ] {
        let decision = decide_inspect(&rules(), OsFamily::Unix, command);
        assert_eq!(decision.verdict, Ask, "{command:?}: {decision:?}");
    }
}

/// A short option glued to a character of more than one byte (`-é`) asks, in every git
/// listing and in every position, and never panics: the option table is looked up by whole
/// characters (found by review rev7: `git show-ref -é` ended `agent check` with an internal
/// error).
#[test]
fn git_listings_ask_for_short_options_of_any_character() {
    let listings = [
        "merge-base a",
        "rev-list HEAD",
        "ls-tree HEAD",
        "for-each-ref",
        "show-ref",
        "name-rev HEAD",
        "reflog show",
        "reflog",
        "stash list",
        "stash show",
        "worktree list",
        "remote",
        "config --get x",
    ];
    let characters = ['é', 'µ', 'ſ', '€', '𝔵', '\u{300}', 'K', 'ß'];
    let mut cases = Vec::new();
    for listing in listings {
        for c in characters {
            for word in [
                format!("-{c}"),
                format!("-n{c}"),
                format!("-{c}5"),
                format!("-{c}-t"),
            ] {
                cases.push(format!("git {listing} {word}"));
                cases.push(format!("git {word} {listing}"));
            }
        }
    }
    let table: Vec<(&str, Verdict)> = cases.iter().map(|case| (case.as_str(), Ask)).collect();
    inspect_table(OsFamily::Unix, &table);
}
