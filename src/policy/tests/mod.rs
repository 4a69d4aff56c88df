//! The policy's tables: deny search, built-in lists, allow rules, Windows, review findings,
//! and the differential test against real `sh`.

mod differential;
use super::*;
use pretty_assertions::assert_eq;

use Verdict::{Allow, Ask, Deny};

fn rule(prefix: &str, source: Source) -> Rule {
    Rule {
        prefix: prefix.to_owned(),
        source,
    }
}

/// The rules most tables run under.
fn rules() -> Rules {
    Rules::new(
        vec![
            rule("git status", Source::User),
            rule("git log", Source::User),
            rule("cargo test", Source::Flag),
        ],
        vec![
            rule("rm -rf", Source::User),
            rule("git push", Source::Project),
            rule("sudo", Source::User),
            rule("del /s", Source::User),
        ],
    )
}

/// Runs a table of (command, expected verdict); reports every failing input at once.
fn table(os: OsFamily, cases: &[(&str, Verdict)]) {
    let rules = rules();
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(command, want)| {
            let got = decide(&rules, os, command);
            (got.decision != *want).then(|| {
                format!(
                    "{command:?}: want {want:?}, got {:?} ({})",
                    got.decision, got.reason
                )
            })
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{os:?} failures:\n{}",
        failures.join("\n")
    );
}

/// Bypasses found by the adversarial review, kept as regressions.
#[test]
fn review_findings_stay_fixed() {
    table(
        OsFamily::Unix,
        &[
            ("date -f .env", Ask),
            ("date --file=/etc/passwd", Ask),
            ("r\\\nm -rf y", Deny),
            ("gi\\\nt push", Deny),
            ("sh -c 'gi\\\nt push'", Deny),
            ("s\\\nudo ls", Deny),
            ("setpriv rm -rf y", Deny),
            ("prlimit --nofile=5 rm -rf y", Deny),
            ("git status", Allow),
        ],
    );
    table(
        OsFamily::Windows,
        &[
            ("@del /s x", Deny),
            ("del\u{b}/s x", Deny),
            ("del\u{c}/s x", Deny),
            ("git\u{c}push", Deny),
            ("@dir", Ask),
            ("whoami", Ask),
            ("dir \\\\host\\share", Ask),
            ("cd //host/share", Ask),
            ("dir /s,\\\\host\\share", Ask),
            ("dir /s;\\\\host\\share", Ask),
            ("dir x=\\\\host\\share", Ask),
            ("cd \\/host\\share", Ask),
            ("cd /\\host\\share", Ask),
            ("dir \\??\\UNC\\host\\share", Ask),
            ("dir /s\\\\host\\share", Ask),
            ("dir C:\\x", Allow),
            ("dir /s C:\\x", Allow),
        ],
    );
    let allow_all = |os, command| apply_mode(decide(&Rules::empty(), os, command), Mode::AllowAll);
    for (os, command) in [
        (OsFamily::Unix, "r\\\nm x"),
        (OsFamily::Unix, "echo hi\\\n#x; rm -rf y"),
        (OsFamily::Unix, "alias g=git\ng push"),
        (OsFamily::Unix, "hash -p /bin/rm r\nr -rf y"),
        (OsFamily::Unix, "git -c core.pager='rm -rf y' log"),
        (OsFamily::Windows, "@del /s x"),
        (OsFamily::Windows, "@format c:"),
    ] {
        assert_eq!(
            allow_all(os, command).decision,
            Ask,
            "allow-all allowed {command:?}"
        );
    }
    assert_eq!(allow_all(OsFamily::Unix, "touch F").decision, Allow);
}

/// Runs a table of (command, expected `destructive`).
fn destructive_table(os: OsFamily, cases: &[(&str, bool)]) {
    let rules = Rules::empty();
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(command, want)| {
            let got = decide(&rules, os, command);
            (got.destructive != *want)
                .then(|| format!("{command:?}: want destructive={want}, got {got:?}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{os:?} failures:\n{}",
        failures.join("\n")
    );
}

#[test]
fn unix_read_only_list_with_and_without_arguments() {
    table(
        OsFamily::Unix,
        &[
            ("pwd", Allow),
            ("pwd -P", Allow),
            ("whoami", Allow),
            ("true", Allow),
            ("true x", Allow),
            ("false", Allow),
            ("echo hi", Allow),
            ("echo", Ask),
            ("echo -n hi", Allow),
            ("echo 'a b' \"c d\"", Allow),
            ("echo *", Allow),
            ("printf '%s' x", Allow),
            ("printf", Ask),
            ("cd", Allow),
            ("cd /tmp", Allow),
            ("cd ..", Allow),
            ("cd -", Allow),
            ("cd ~", Allow),
            ("uname", Allow),
            ("uname -a", Allow),
            ("hostname", Allow),
            ("hostname -f", Allow),
            ("hostname --fqdn", Allow),
            ("hostname -s", Allow),
            ("hostname -I", Allow),
            ("hostname -A", Allow),
            ("hostname -d", Allow),
            ("hostname -i", Allow),
            ("hostname newname", Ask),
            ("hostname -F /etc/hostname", Ask),
            ("hostname --file x", Ask),
            ("hostname -b x", Ask),
            ("hostname -f name", Ask),
            ("hostname *", Ask),
            ("uptime", Allow),
            ("uptime -p", Allow),
            ("arch", Allow),
            ("which ls", Allow),
            ("which", Ask),
            ("id", Allow),
            ("id -u", Allow),
            ("logname", Allow),
            ("tty", Allow),
            ("cal", Allow),
            ("cal 2024", Allow),
            ("seq 3", Allow),
            ("seq 1 2 10", Allow),
            ("seq", Ask),
            ("getconf PATH_MAX /", Allow),
            ("getconf", Ask),
            ("pathchk x", Allow),
            ("pathchk", Ask),
            ("basename /a/b", Allow),
            ("basename", Ask),
            ("dirname /a/b", Allow),
            ("dirname", Ask),
            ("realpath .", Allow),
            ("realpath", Ask),
            ("ls", Allow),
            ("ls -la", Allow),
            ("ls -la /tmp", Allow),
            ("ls --color=always -R", Allow),
            ("ls -- -x", Allow),
            ("ls *.rs", Allow),
            ("ls '*.rs'", Allow),
            ("ls src/*/mod.rs", Allow),
            ("ls {a,b}", Allow),
            ("ls ?", Allow),
            ("ls [ab]", Allow),
            ("date", Allow),
            ("date +%s", Allow),
            ("date '+%Y-%m-%d %H:%M'", Allow),
            ("date -u", Allow),
            ("date --utc", Allow),
            ("date -uR", Allow),
            ("date -u +%Y", Allow),
            ("date -R", Allow),
            ("date -I", Allow),
            ("date -Iseconds", Allow),
            ("date --iso-8601", Allow),
            ("date --iso-8601=seconds", Allow),
            ("date --rfc-3339=ns", Allow),
            ("date -d yesterday", Allow),
            ("date -dyesterday", Allow),
            ("date -ud yesterday", Allow),
            ("date --date=yesterday", Allow),
            ("date --date 'next week'", Allow),
            ("date -d -s", Allow),
            ("date -r Cargo.toml", Allow),
            ("date --reference=Cargo.toml +%s", Allow),
            ("date -s 2020-01-01", Ask),
            ("date --set=2020-01-01", Ask),
            ("date --set 2020-01-01", Ask),
            ("date --se 2020", Ask),
            ("date -us x", Ask),
            ("date 0101000020", Ask),
            ("date +%s 0101", Ask),
            ("date -d", Ask),
            ("date --date", Ask),
            ("date --utc=x", Ask),
            ("date *", Ask),
            ("date -- -s", Ask),
        ],
    );
}

#[test]
fn unix_lookalikes_and_paths_ask() {
    table(
        OsFamily::Unix,
        &[
            ("lsblk", Ask),
            ("lsof", Ask),
            ("dates", Ask),
            ("echoo hi", Ask),
            ("ecHo hi", Ask),
            ("LS", Ask),
            ("Ls", Ask),
            ("ｌｓ", Ask),
            ("ｅｃｈｏ hi", Ask),
            ("ӏs", Ask),
            ("ls\u{200b}", Ask),
            ("ls\u{a0}-la", Ask),
            ("/bin/ls", Ask),
            ("./ls", Ask),
            ("/usr/bin/echo hi", Ask),
            ("l* x", Ask),
            ("l? x", Ask),
            ("[l]s", Ask),
            ("{ls,-la}", Ask),
            ("touch x", Ask),
            ("mkdir x", Ask),
            ("cat x", Ask),
            ("git", Ask),
            ("git diff", Ask),
            ("git statusx", Ask),
            ("gitstatus", Ask),
            ("cargo build", Ask),
            ("'ls'", Allow),
            ("\"ls\" -la", Allow),
            ("l's'", Allow),
            ("l\"s\"", Allow),
            ("\\ls", Allow),
            ("echo \\#x", Allow),
        ],
    );
}

#[test]
fn unix_allow_rules() {
    table(
        OsFamily::Unix,
        &[
            ("git status", Allow),
            ("git status -s", Allow),
            ("git status --porcelain=v2", Allow),
            ("git 'status'", Allow),
            ("git log --oneline -5", Allow),
            ("cargo test", Allow),
            ("cargo test --all -- --nocapture", Allow),
            ("git  status", Allow),
            ("\tgit status\t", Allow),
            ("git status #why", Allow),
            ("git statusx", Ask),
            ("git stat", Ask),
            ("/usr/bin/git status", Ask),
            ("FOO=1 git status", Ask),
            ("git status > x", Ask),
            ("git status | cat", Ask),
            ("git status; ls", Ask),
            ("git status && ls", Ask),
            ("git status $x", Ask),
            ("git status *.rs", Ask),
            ("git status `x`", Ask),
            ("git status\nls", Ask),
            ("git status &", Ask),
            ("git status 'a;b'", Ask),
            ("git status \"$(x)\"", Ask),
            ("(git status)", Ask),
            ("git status <<< x", Ask),
            ("cargo tests", Ask),
        ],
    );
}

#[test]
fn unix_operators_and_shapes_ask() {
    table(
        OsFamily::Unix,
        &[
            ("ls > out", Ask),
            ("ls >> out", Ask),
            ("ls 2>/dev/null", Ask),
            ("ls < in", Ask),
            ("ls | wc -l", Ask),
            ("ls || pwd", Ask),
            ("ls && pwd", Ask),
            ("ls; pwd", Ask),
            ("ls &", Ask),
            ("ls\npwd", Ask),
            ("ls\n", Ask),
            ("ls $HOME", Ask),
            ("ls ${HOME}", Ask),
            ("ls \"$HOME\"", Ask),
            ("ls '$HOME'", Ask),
            ("echo `pwd`", Ask),
            ("echo $(pwd)", Ask),
            ("echo '|'", Ask),
            ("echo 'a;b'", Ask),
            ("echo \\;", Ask),
            ("echo $'a'", Ask),
            ("echo $\"a\"", Ask),
            ("echo $((1+2))", Ask),
            ("ls <(pwd)", Ask),
            ("(ls)", Ask),
            ("( ls )", Ask),
            ("{ ls; }", Ask),
            ("! ls", Ask),
            ("[[ -f x ]]", Ask),
            ("[ -f x ]", Ask),
            ("((x=1))", Ask),
            ("x=1", Ask),
            ("FOO=1 ls", Ask),
            ("FOO= ls", Ask),
            ("a[0]=1 ls", Ask),
            ("export A=1", Ask),
            ("ls \\\n -la", Ask),
            ("# comment", Ask),
            ("ls #x", Allow),
            ("ls -la # list files", Allow),
            ("ls #x; rm -rf /", Ask),
            ("ls #x && pwd", Ask),
            ("ls foo#bar", Allow),
            ("ls @(a|b)", Ask),
            ("ls !(x)", Ask),
            ("echo 'unterminated", Ask),
            ("echo \"unterminated", Ask),
            ("ls -la\\", Ask),
            ("ls (", Ask),
            ("ls )", Ask),
            ("if true then ls fi", Ask),
            ("then ls", Ask),
            ("function", Ask),
            ("time ls", Ask),
            ("ls\r", Ask),
            ("ls\x1b[31m", Ask),
            ("echo \x07", Ask),
            ("ls\x0b-la", Ask),
            ("which\\\t ls", Ask),
            ("ls a\\\tb", Ask),
            ("ls a\\ b", Allow),
            ("", Ask),
            ("   ", Ask),
            ("\t \t", Ask),
            ("\n", Ask),
            (" ls", Allow),
            ("ls ", Allow),
            ("\tls\t-la\t", Allow),
            ("ls\0", Ask),
            ("\0", Ask),
        ],
    );
}

#[test]
fn unix_deny_rules_match_every_spelling() {
    table(
        OsFamily::Unix,
        &[
            ("rm -rf /", Deny),
            ("rm -rf /x", Deny),
            ("rm -fr x", Deny),
            ("rm -r -f x", Deny),
            ("rm -f -r x", Deny),
            ("rm -r x -f", Deny),
            ("rm -Rf x", Deny),
            ("rm -rfv x", Deny),
            ("rm -vrf x", Deny),
            ("rm --recursive --force x", Deny),
            ("rm --force -R x", Deny),
            ("rm --rec --fo x", Deny),
            ("rm -- -rf", Deny),
            ("rm '-rf' x", Deny),
            ("rm \"-rf\" x", Deny),
            ("rm -\\rf x", Deny),
            ("rm -r''f x", Deny),
            ("/bin/rm -rf x", Deny),
            ("./rm -rf x", Deny),
            ("../bin/rm -rf x", Deny),
            ("~/bin/rm -rf x", Deny),
            ("RM -rf x", Deny),
            ("r''m -rf x", Deny),
            ("r\"\"m -rf x", Deny),
            ("\\rm -rf x", Deny),
            ("\\r\\m -rf x", Deny),
            ("\"rm\" -rf x", Deny),
            ("'rm' -rf x", Deny),
            ("r\"m\" -rf x", Deny),
            ("$'rm' -rf x", Deny),
            ("$'\\x72\\x6d' -rf x", Deny),
            ("$'\\162m' -rf x", Deny),
            ("'/bin/rm' -rf x", Deny),
            ("rm -r x", Ask),
            ("rm x", Ask),
            ("rm -f x", Ask),
            ("rmdir -rf x", Ask),
            ("echo rm -rf x", Allow),
            ("echo 'rm -rf x'", Allow),
            ("ls rm -rf", Allow),
            ("git status rm -rf", Allow),
            ("git push", Deny),
            ("git push origin main", Deny),
            ("git push --force", Deny),
            ("git -C repo push", Deny),
            ("git --no-pager push", Deny),
            ("/usr/bin/git push", Deny),
            ("git pusher", Ask),
            ("git status push", Deny),
            ("sudo ls", Deny),
            ("sudo", Deny),
            ("sudo -i", Deny),
            ("/usr/bin/sudo ls", Deny),
            ("SUDO ls", Deny),
            ("sudoedit x", Ask),
        ],
    );
}

#[test]
fn unix_deny_rules_reach_nested_commands() {
    table(
        OsFamily::Unix,
        &[
            ("ls; rm -rf x", Deny),
            ("ls && rm -rf x", Deny),
            ("ls || rm -rf x", Deny),
            ("ls | rm -rf x", Deny),
            ("ls & rm -rf x", Deny),
            ("ls\nrm -rf x", Deny),
            ("ls\n\nrm -rf x", Deny),
            ("ls $(rm -rf x)", Deny),
            ("ls \"$(rm -rf x)\"", Deny),
            ("ls `rm -rf x`", Deny),
            ("ls <(rm -rf x)", Deny),
            ("ls >(rm -rf x)", Deny),
            ("ls > $(rm -rf x)", Deny),
            ("(rm -rf x)", Deny),
            ("( (rm -rf x) )", Deny),
            ("{ rm -rf x; }", Deny),
            ("! rm -rf x", Deny),
            ("if true; then rm -rf x; fi", Deny),
            ("if rm -rf x; then :; fi", Deny),
            ("if false; then :; else rm -rf x; fi", Deny),
            ("for i in 1; do rm -rf x; done", Deny),
            ("for i in $(rm -rf x); do :; done", Deny),
            ("while true; do rm -rf x; done", Deny),
            ("until false; do rm -rf x; done", Deny),
            ("case a in a) rm -rf x;; esac", Deny),
            ("f() { rm -rf x; }", Deny),
            ("function f { rm -rf x; }", Deny),
            ("[[ $(rm -rf x) ]]", Deny),
            ("echo ${x:-$(rm -rf x)}", Deny),
            ("x=$(rm -rf x)", Deny),
            ("export x=$(rm -rf x)", Deny),
            ("echo $((1 + $(rm -rf x)))", Deny),
            ("cat <<EOF\n$(rm -rf x)\nEOF", Deny),
            ("cat <<EOF\n`rm -rf x`\nEOF", Deny),
            ("cat <<'EOF'\n$(rm -rf x)\nEOF", Ask),
            ("time rm -rf x", Deny),
            ("coproc rm -rf x", Deny),
            ("ls; rm -rf x; ls", Deny),
            ("ls $(ls $(ls $(rm -rf x)))", Deny),
            ("echo \"a`rm -rf x`b\"", Deny),
            ("rm -rf x &", Deny),
            ("rm -rf x (", Deny),
            ("ls #\nrm -rf x", Deny),
            ("! { rm -rf x; }", Deny),
            ("! ! rm -rf x", Deny),
            ("while true; do ! { \\r\\m -rf x; }; break; done", Deny),
            ("ls\n\\rm -rf x", Deny),
            ("ls #c\n\\rm -rf x", Deny),
            ("ls\n\\\nrm -rf x", Deny),
            ("ls \\\nrm -rf x", Ask),
        ],
    );
}

#[test]
fn unix_deny_rules_see_through_wrappers() {
    table(
        OsFamily::Unix,
        &[
            ("env rm -rf x", Deny),
            ("env -i rm -rf x", Deny),
            ("env -u HOME rm -rf x", Deny),
            ("env FOO=1 rm -rf x", Deny),
            ("env -S 'rm -rf x'", Deny),
            ("env -S 'FOO=1 rm -rf x'", Deny),
            ("env -S'rm -rf x'", Deny),
            ("bash -c \"true\n\\\\rm -fr x\"", Deny),
            ("env --split-string='rm -rf x'", Deny),
            ("/usr/bin/env rm -rf x", Deny),
            ("env env rm -rf x", Deny),
            ("command rm -rf x", Deny),
            ("command -- rm -rf x", Deny),
            ("command -p rm -rf x", Deny),
            ("builtin rm -rf x", Deny),
            ("exec rm -rf x", Deny),
            ("exec -a name rm -rf x", Deny),
            ("nohup rm -rf x", Deny),
            ("time -p rm -rf x", Deny),
            ("nice rm -rf x", Deny),
            ("nice -n 10 rm -rf x", Deny),
            ("nice -10 rm -rf x", Deny),
            ("timeout 5 rm -rf x", Deny),
            ("timeout -s KILL 5s rm -rf x", Deny),
            ("timeout --signal=KILL 5 rm -rf x", Deny),
            ("stdbuf -oL rm -rf x", Deny),
            ("ionice -c 3 rm -rf x", Deny),
            ("chrt 10 rm -rf x", Deny),
            ("setsid rm -rf x", Deny),
            ("taskset 1 rm -rf x", Deny),
            ("strace -f rm -rf x", Deny),
            ("watch rm -rf x", Deny),
            ("watch -n 1 'rm -rf x'", Deny),
            ("flock /tmp/l rm -rf x", Deny),
            ("flock /tmp/l -c 'rm -rf x'", Deny),
            ("chroot / rm -rf x", Deny),
            ("unshare -r rm -rf x", Deny),
            ("busybox rm -rf x", Deny),
            ("doas rm -rf x", Deny),
            ("su -c 'rm -rf x'", Deny),
            ("runuser -u me -- rm -rf x", Deny),
            ("script -c 'rm -rf x'", Deny),
            ("systemd-run rm -rf x", Deny),
            ("xargs rm -rf", Deny),
            ("xargs -0 -n1 rm -rf", Deny),
            ("echo x | xargs rm -rf", Deny),
            ("xargs -I{} rm -rf {}", Deny),
            ("parallel rm -rf ::: a b", Deny),
            ("xargs rm", Ask),
            ("find . -exec rm -rf {} \\;", Deny),
            ("find . -exec rm -rf {} ';'", Deny),
            ("find . -execdir rm -rf {} +", Deny),
            ("find . -ok rm -rf {} \\;", Deny),
            ("find . -name x -exec env rm -rf {} \\;", Deny),
            ("nice timeout 5 env FOO=1 rm -rf x", Deny),
            ("sudo -u root rm -rf x", Deny),
            ("env sudo ls", Deny),
            ("nice -n 5 sudo ls", Deny),
            ("env git push", Deny),
            ("cmd.exe /c rm -rf x", Deny),
        ],
    );
}

#[test]
fn unix_deny_rules_reach_command_strings() {
    let nested = |levels: usize| {
        let mut command = "rm -rf x".to_owned();
        for _ in 0..levels {
            let quoted = command.replace('\\', "\\\\").replace('"', "\\\"");
            command = format!("sh -c \"{quoted}\"");
        }
        command
    };
    let three = nested(3);
    let eight = nested(8);
    let twelve = nested(12);
    let evals = format!("{}rm -rf x", "eval ".repeat(20));
    table(
        OsFamily::Unix,
        &[
            ("sh -c 'rm -rf x'", Deny),
            ("bash -c 'rm -rf x'", Deny),
            ("zsh -c 'rm -rf x'", Deny),
            ("dash -c 'rm -rf x'", Deny),
            ("ksh -c 'rm -rf x'", Deny),
            ("fish -c 'rm -rf x'", Deny),
            ("/bin/sh -c 'rm -rf x'", Deny),
            ("bash -lc 'rm -rf x'", Deny),
            ("bash -ec 'rm -rf x'", Deny),
            ("bash -e -c 'rm -rf x'", Deny),
            ("bash -o pipefail -c 'rm -rf x'", Deny),
            ("bash --norc -c 'rm -rf x'", Deny),
            ("bash -c rm\\ -rf\\ x", Deny),
            ("sh -c 'ls; rm -rf x'", Deny),
            ("sh -c 'r\"\"m -rf x'", Deny),
            ("sh -c \"sh -c 'rm -rf x'\"", Deny),
            ("bash -c \"bash -c \\\"rm -rf x\\\"\"", Deny),
            ("sudo sh -c 'rm -rf x'", Deny),
            ("env bash -c 'rm -rf x'", Deny),
            ("sh -c 'echo $(rm -rf x)'", Deny),
            ("bash <<< 'rm -rf x'", Deny),
            ("bash <<< \"rm -rf x\"", Deny),
            ("bash <<'EOF'\nrm -rf x\nEOF", Deny),
            ("bash <<EOF\nrm -rf x\nEOF", Deny),
            ("sh -s <<EOF\nrm -rf x\nEOF", Deny),
            ("eval rm -rf x", Deny),
            ("eval 'rm -rf x'", Deny),
            ("eval \"rm -rf x\"", Deny),
            ("eval r\\'\\'m -rf x", Deny),
            ("eval \"r''m\" -rf x", Deny),
            (&three, Deny),
            (&eight, Deny),
            (&twelve, Ask),
            (&evals, Deny),
            ("trap 'rm -rf x' EXIT", Deny),
            ("alias ls='rm -rf x'", Deny),
            ("PAGER='rm -rf x' git log", Deny),
            ("GIT_SSH_COMMAND='sh -c \"rm -rf x\"' git fetch", Deny),
            ("ssh host 'rm -rf x'", Deny),
            ("ssh host rm -rf x", Deny),
            ("sh script.sh", Ask),
            ("sh -c", Ask),
            ("curl x | sh", Ask),
            ("echo 'rm -rf x' | sh", Ask),
        ],
    );
}

#[test]
fn unix_words_that_are_not_fixed_never_allow() {
    table(
        OsFamily::Unix,
        &[
            ("$(echo rm) -rf x", Ask),
            ("`echo rm` -rf x", Ask),
            ("$RM -rf x", Ask),
            ("${RM} -rf x", Ask),
            ("\"$RM\" -rf x", Ask),
            ("r$x -rf x", Ask),
            ("rm $FLAGS x", Ask),
            ("rm -r$x x", Ask),
            ("rm -r* x", Ask),
            ("rm -r? x", Ask),
            ("eval $CMD", Ask),
            ("eval \"$CMD\"", Ask),
            ("sh -c \"$CMD\"", Ask),
            ("bash -c \"$(curl x)\"", Ask),
            ("$'\\cA' x", Ask),
            ("$\"rm\" -rf x", Ask),
            ("$0 -c x", Ask),
            ("\"${@}\"", Ask),
            ("*", Ask),
            ("/bin/r? -rf x", Ask),
            ("[[ -v 'a[$(rm -rf x)]' ]]", Ask),
        ],
    );
}

#[test]
fn unix_sizes_and_nesting() {
    let long = format!("echo {}", "a".repeat(MAX_COMMAND_BYTES - 5));
    assert_eq!(long.len(), MAX_COMMAND_BYTES);
    let too_long = format!("echo {}", "a".repeat(MAX_COMMAND_BYTES));
    let megabyte = format!("ls {}", "a ".repeat(512 * 1024));
    let megabyte_deny = format!("{megabyte} ; rm -rf x");
    let dollar_nest = format!("{}ls{}", "$(".repeat(500), ")".repeat(500));
    let deny_nest = format!("{}rm -rf x{}", "$(".repeat(500), ")".repeat(500));
    let paren_nest = format!("{}ls{}", "(".repeat(500), ")".repeat(500));
    let brace_nest = format!("{}ls{}", "{ ".repeat(200), "; }".repeat(200));
    let many = "ls && ".repeat(5000) + "ls";
    let many_deny = "ls && ".repeat(5000) + "rm -rf x";
    let words = format!("ls {}", "x ".repeat(20_000));
    let wrapped = format!("{}ls", "nice ".repeat(5000));
    let wrapped_deny = format!("{}rm -rf x", "nice ".repeat(5000));
    let strings = format!("sudo {}", "'a b' ".repeat(5000));
    table(
        OsFamily::Unix,
        &[
            (&long, Allow),
            (&too_long, Ask),
            (&megabyte, Ask),
            (&megabyte_deny, Ask),
            (&dollar_nest, Ask),
            (&deny_nest, Deny),
            (&paren_nest, Ask),
            (&brace_nest, Ask),
            (&many, Ask),
            (&many_deny, Deny),
            (&words, Allow),
            (&wrapped, Ask),
            (&wrapped_deny, Deny),
            (&strings, Deny),
        ],
    );
    let rules = rules();
    let decision = decide(&rules, OsFamily::Unix, &megabyte_deny);
    assert!(
        decision.destructive,
        "an unreadable command counts as destructive"
    );
    assert_eq!(decision.rule.as_deref(), Some("rm -rf"), "{decision:?}");
}

#[test]
fn windows_commands() {
    table(
        OsFamily::Windows,
        &[
            ("dir", Allow),
            ("DIR", Allow),
            ("Dir /w", Allow),
            ("dir *.rs", Allow),
            ("dir C:\\Users", Allow),
            ("ver", Allow),
            ("VER", Allow),
            ("ver x", Ask),
            ("vol", Allow),
            ("vol C:", Allow),
            ("date /t", Allow),
            ("DATE /T", Allow),
            ("date", Ask),
            ("date 01-01-2020", Ask),
            ("date /t x", Ask),
            ("time /t", Allow),
            ("time", Ask),
            ("time 12:00", Ask),
            ("echo hi", Allow),
            ("ECHO hi", Allow),
            ("echo", Ask),
            ("echo.", Ask),
            ("cd", Allow),
            ("cd C:\\x", Allow),
            ("cd ..", Allow),
            ("cd..", Ask),
            // Programs, not cmd built-ins: cmd.exe would run a `whoami.bat` from the
            // current directory first, so they are not on the list (see the asset).
            ("hostname", Ask),
            ("hostname x", Ask),
            ("whoami", Ask),
            ("WhoAmI /all", Ask),
            ("systeminfo", Ask),
            ("systeminfo /s x", Ask),
            ("pwd", Ask),
            ("which git", Ask),
            ("which", Ask),
            ("id", Ask),
            ("true", Ask),
            ("false", Ask),
            ("printf x", Ask),
            ("git status", Allow),
            ("git status -s", Allow),
            ("GIT status", Ask),
            ("dirx", Ask),
            ("dir.exe", Ask),
            ("C:\\Windows\\dir", Ask),
            ("ｄｉｒ", Ask),
            ("type x", Ask),
            ("del x", Ask),
            ("dir > x", Ask),
            ("dir >> x", Ask),
            ("dir < x", Ask),
            ("dir | more", Ask),
            ("dir & ver", Ask),
            ("dir && ver", Ask),
            ("dir || ver", Ask),
            ("dir ^& x", Ask),
            ("echo %PATH%", Ask),
            ("echo !x!", Ask),
            ("(dir)", Ask),
            ("dir \"a b\"", Ask),
            ("dir\nver", Ask),
            ("dir\r\n", Ask),
            ("dir $x", Ask),
            ("dir `x`", Ask),
            ("dir; ver", Ask),
            ("", Ask),
            ("  ", Ask),
            ("dir\0", Ask),
            (" dir ", Allow),
        ],
    );
}

#[test]
fn windows_deny_rules() {
    table(
        OsFamily::Windows,
        &[
            ("del /s x", Deny),
            ("DEL /S x", Deny),
            ("Del /q /s x", Deny),
            ("del /S/Q x", Deny),
            ("del x /s", Deny),
            ("del /q x", Ask),
            ("del.exe /s x", Deny),
            ("C:\\Windows\\System32\\del.exe /s x", Deny),
            ("\"del\" /s x", Deny),
            ("d^el /s x", Deny),
            ("del/s x", Deny),
            ("del,/s x", Deny),
            ("dir & del /s x", Deny),
            ("dir && del /s x", Deny),
            ("dir || del /s x", Deny),
            ("dir | del /s x", Deny),
            ("dir\ndel /s x", Deny),
            ("(del /s x)", Deny),
            ("(dir) & (del /s x)", Deny),
            (">nul del /s x", Deny),
            ("2>nul del /s x", Deny),
            ("echo x > del", Ask),
            ("if exist x del /s x", Deny),
            ("if not exist x (del /s x)", Deny),
            ("for %i in (*) do del /s %i", Deny),
            ("cmd /c del /s x", Deny),
            ("cmd /c \"del /s x\"", Deny),
            ("cmd /C\"del /s x\"", Deny),
            ("cmd /cdel /s x", Deny),
            ("cmd.exe /d /s /c \"dir & del /s x\"", Deny),
            ("C:\\Windows\\System32\\cmd.exe /c del /s x", Deny),
            ("start del /s x", Deny),
            ("start \"\" /b del /s x", Deny),
            ("call del /s x", Deny),
            ("forfiles /c \"cmd /c del /s @file\"", Deny),
            ("powershell -c \"del /s x\"", Deny),
            ("pwsh -Command del /s x", Deny),
            ("powershell -EncodedCommand ZABlAGwA", Ask),
            ("%COMSPEC% /c dir", Ask),
            ("rm -rf x", Deny),
            ("RM -RF x", Deny),
            ("rm.exe -rf x", Deny),
            ("bash -c 'rm -rf x'", Deny),
            ("wsl rm -rf x", Deny),
            ("git push", Deny),
            ("GIT PUSH", Deny),
            ("git.exe push", Deny),
            ("sudo dir", Deny),
            ("runas /user:admin \"cmd /c del /s x\"", Deny),
        ],
    );
}

#[test]
fn protected_programs_are_destructive() {
    destructive_table(
        OsFamily::Unix,
        &[
            ("rm x", true),
            ("rmdir x", true),
            ("mv a b", true),
            ("dd if=a of=b", true),
            ("mkfs /dev/x", true),
            ("mkfs.ext4 /dev/x", true),
            ("shutdown now", true),
            ("reboot", true),
            ("poweroff", true),
            ("halt", true),
            ("sudo ls", true),
            ("su", true),
            ("doas ls", true),
            ("/bin/rm x", true),
            ("\\rm x", true),
            ("ls; rm x", true),
            ("ls $(rm x)", true),
            ("env rm x", true),
            ("xargs rm", true),
            ("bash -c 'rm x'", true),
            ("find . -delete", true),
            ("find . -exec mv {} y \\;", true),
            ("echo x | sh", true),
            ("$CMD x", true),
            ("echo 'unterminated", true),
            ("[[ -v 'a[$(rm x)]' ]]", true),
            // A protected name anywhere in the text counts, even as data: the search
            // is for mode allow-all, where a miss would run it unasked.
            ("echo rm", true),
            ("echo 'rm -rf /'", true),
            ("git rm x", true),
            ("ls > rm", true),
            ("git commit -m 'mv files'", true),
            ("git -c core.pager='rm -rf y' log", true),
            ("awk 'BEGIN{system(\"rm -rf y\")}'", true),
            ("r\\\nm x", true),
            ("alias g=git\ng push", true),
            ("ls", false),
            ("touch x", false),
            ("mkdir x", false),
            ("rmx", false),
            ("git commit -m 'new files'", false),
            ("ls rmdir-notes.txt", false),
        ],
    );
    destructive_table(
        OsFamily::Windows,
        &[
            ("del x", true),
            ("erase x", true),
            ("rd x", true),
            ("rmdir /s x", true),
            ("move a b", true),
            ("format c:", true),
            ("shutdown /s", true),
            ("DEL x", true),
            ("dir & del x", true),
            ("cmd /c rd /s x", true),
            ("dir", false),
            ("echo del", true),
        ],
    );
}

#[test]
#[allow(clippy::too_many_lines)] // one table
fn decisions_in_full() {
    let rules = rules();
    let d = |command: &str| decide(&rules, OsFamily::Unix, command);
    let full = |decision, reason: &str, source, rule: Option<&str>, destructive| Decision {
        decision,
        reason: reason.to_owned(),
        source,
        rule: rule.map(str::to_owned),
        destructive,
    };
    let cases: Vec<(&str, Decision)> = vec![
        (
            "ls",
            full(
                Allow,
                "`ls` is on the built-in read-only list",
                Source::Builtin,
                Some("ls"),
                false,
            ),
        ),
        (
            "git status -s",
            full(
                Allow,
                "matches allow rule \"git status\"",
                Source::User,
                Some("git status"),
                false,
            ),
        ),
        (
            "cargo test",
            full(
                Allow,
                "matches allow rule \"cargo test\"",
                Source::Flag,
                Some("cargo test"),
                false,
            ),
        ),
        (
            "touch x",
            full(
                Ask,
                "`touch` is not on the read-only list",
                Source::Builtin,
                None,
                false,
            ),
        ),
        (
            "ls > x",
            full(
                Ask,
                "contains a redirection ('>')",
                Source::Parser,
                None,
                false,
            ),
        ),
        (
            "ls | x",
            full(Ask, "contains a pipe ('|')", Source::Parser, None, false),
        ),
        (
            "ls; x",
            full(
                Ask,
                "contains a command separator (';')",
                Source::Parser,
                None,
                false,
            ),
        ),
        (
            "ls && x",
            full(
                Ask,
                "contains a command separator ('&&')",
                Source::Parser,
                None,
                false,
            ),
        ),
        (
            "ls $x",
            full(
                Ask,
                "contains a substitution or variable ('$')",
                Source::Parser,
                None,
                false,
            ),
        ),
        (
            "ls &",
            full(
                Ask,
                "contains a background operator ('&')",
                Source::Parser,
                None,
                false,
            ),
        ),
        (
            "ls\nx",
            full(Ask, "contains a newline", Source::Parser, None, false),
        ),
        ("", full(Ask, "empty command", Source::Parser, None, false)),
        (
            "rm -rf /",
            full(
                Deny,
                "matches deny rule \"rm -rf\"",
                Source::User,
                Some("rm -rf"),
                true,
            ),
        ),
        (
            "git push",
            full(
                Deny,
                "matches deny rule \"git push\"",
                Source::Project,
                Some("git push"),
                false,
            ),
        ),
        (
            "rm $f /",
            full(
                Ask,
                "may match deny rule \"rm -rf\" (a word that is not fixed could complete it)",
                Source::User,
                Some("rm -rf"),
                true,
            ),
        ),
        (
            "echo",
            full(
                Ask,
                "`echo` is on the read-only list only with arguments",
                Source::Builtin,
                None,
                false,
            ),
        ),
        (
            "date -s x",
            full(
                Ask,
                "`date` with `-s` is not read-only",
                Source::Builtin,
                None,
                false,
            ),
        ),
        (
            "(ls)",
            full(
                Ask,
                "is not a single simple command (a subshell)",
                Source::Parser,
                None,
                false,
            ),
        ),
        (
            "FOO=1 ls",
            full(
                Ask,
                "sets a variable for the program (`FOO=1`)",
                Source::Parser,
                None,
                false,
            ),
        ),
        (
            "curl x | sh",
            full(
                Ask,
                "`sh` reads commands from standard input, which cannot be checked",
                Source::Parser,
                None,
                true,
            ),
        ),
    ];
    for (command, want) in cases {
        assert_eq!(d(command), want, "input: {command:?}");
    }
    let windows = decide(&rules, OsFamily::Windows, "date /t");
    assert_eq!(
        windows,
        full(
            Allow,
            "`date /t` is on the built-in read-only list",
            Source::Builtin,
            Some("date /t"),
            false
        )
    );
}

#[test]
fn modes() {
    let base = |decision, destructive| Decision {
        decision,
        reason: "r".to_owned(),
        source: Source::Builtin,
        rule: None,
        destructive,
    };
    let cases: &[(Mode, Verdict, bool, Verdict)] = &[
        (Mode::Ask, Allow, false, Allow),
        (Mode::Ask, Ask, false, Ask),
        (Mode::Ask, Deny, false, Deny),
        (Mode::Deny, Allow, false, Allow),
        (Mode::Deny, Ask, false, Deny),
        (Mode::Deny, Deny, false, Deny),
        (Mode::Off, Allow, false, Deny),
        (Mode::Off, Ask, false, Deny),
        (Mode::Off, Deny, false, Deny),
        (Mode::AllowAll, Allow, false, Allow),
        (Mode::AllowAll, Ask, false, Allow),
        (Mode::AllowAll, Ask, true, Ask),
        (Mode::AllowAll, Deny, false, Deny),
        (Mode::AllowAll, Deny, true, Deny),
    ];
    for (mode, from, destructive, want) in cases {
        let got = apply_mode(base(*from, *destructive), *mode);
        assert_eq!(
            got.decision, *want,
            "{mode:?} on {from:?} (destructive {destructive})"
        );
    }
    let denied = apply_mode(base(Ask, false), Mode::Deny);
    assert_eq!(denied.reason, "r (mode `deny` never asks)");
    let rules = rules();
    let rm = apply_mode(decide(&rules, OsFamily::Unix, "rm x"), Mode::AllowAll);
    assert_eq!(rm.decision, Ask, "protected program in allow-all: {rm:?}");
    let touch = apply_mode(decide(&rules, OsFamily::Unix, "touch x"), Mode::AllowAll);
    assert_eq!(touch.decision, Allow, "{touch:?}");
    let denied = apply_mode(decide(&rules, OsFamily::Unix, "sudo ls"), Mode::AllowAll);
    assert_eq!(denied.decision, Deny, "deny rules win in every mode");
    let order = [Mode::AllowAll, Mode::Ask, Mode::Deny, Mode::Off].map(Mode::strictness);
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert!(Allow < Ask && Ask < Deny);
}

#[test]
fn json_shape() {
    let rules = rules();
    let json = |command: &str| {
        serde_json::to_string(&decide(&rules, OsFamily::Unix, command)).unwrap_or_default()
    };
    assert_eq!(
        json("git push"),
        r#"{"decision":"deny","reason":"matches deny rule \"git push\"","source":"project","rule":"git push"}"#
    );
    assert_eq!(
        json("touch x"),
        r#"{"decision":"ask","reason":"`touch` is not on the read-only list","source":"builtin","rule":null}"#
    );
    let mode: Result<Mode, _> = serde_json::from_str(r#""allow-all""#);
    assert_eq!(mode.ok(), Some(Mode::AllowAll));
    let os: Result<OsFamily, _> = serde_json::from_str(r#""windows""#);
    assert_eq!(os.ok(), Some(OsFamily::Windows));
}

/// Commands that are allowed on their own, for the properties below.
const ALLOWED: &[&str] = &[
    "ls -la",
    "echo hi",
    "git status",
    "cargo test --all",
    "date +%s",
    "pwd",
    "which ls",
    "cd /tmp",
];

/// Every control operator of DESIGN.md rule 3, alone and in common combinations.
const OPERATORS: &[&str] = &[
    ";", "|", ">", "<", "`", "$", "&", "\n", "&&", "||", ">>", "$(", "<<<", "2>&1", "|&",
];

fn insert_at(base: &str, at: prop::sample::Index, text: &str) -> String {
    let chars: Vec<char> = base.chars().collect();
    let i = at.index(chars.len() + 1);
    let head: String = chars[..i].iter().collect();
    let tail: String = chars[i..].iter().collect();
    format!("{head}{text}{tail}")
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn no_control_operator_is_ever_allowed(
        base in prop::sample::select(ALLOWED),
        op in prop::sample::select(OPERATORS),
        at in any::<prop::sample::Index>(),
        rest in "[a-z \\-./'\"#*\\\\]{0,12}",
    ) {
        let command = insert_at(base, at, &format!("{op}{rest}"));
        let rules = rules();
        for os in [OsFamily::Unix, OsFamily::Windows] {
            let decision = decide(&rules, os, &command);
            prop_assert_ne!(decision.decision, Allow, "{:?} input: {:?}", os, command);
        }
    }

    #[test]
    fn no_printable_string_with_an_operator_is_allowed(
        text in "[ -~\t]{0,30}",
        op in prop::sample::select(OPERATORS),
        at in any::<prop::sample::Index>(),
    ) {
        let command = insert_at(&text, at, op);
        let rules = rules();
        for os in [OsFamily::Unix, OsFamily::Windows] {
            let decision = decide(&rules, os, &command);
            prop_assert_ne!(decision.decision, Allow, "{:?} input: {:?}", os, command);
        }
    }

    #[test]
    fn a_denied_command_after_an_operator_is_denied(
        program in prop::sample::select(&["ls", "echo", "git", "cat", "x", "foo"][..]),
        args in "( [a-z0-9./-]{1,6}){0,3}",
        op in prop::sample::select(&[
            ";", "&&", "||", "|", "&", "\n", "\n\n", "\n\t", " #c\n", ";\n", " &&\n",
            " $(", " `", " <(", "; (", "; { ", " \"$(", "\n\\\n",
            "; sh -c '", "; bash -c \"", "; eval ", "; env ", "; sudo -u x ", "; xargs ",
        ][..]),
        denied in prop::sample::select(&[
            "rm -rf /", "r''m -rf x", "\\rm -fr x", "/bin/rm -r -f x", "sudo ls",
            "env rm -rf x", "git push", "\"rm\" -Rf x", "nice -n 1 rm -rf x",
            "xargs rm -rf", "timeout 5 rm --recursive --force x", "command rm -rf x",
            "git -C . push origin",
        ][..]),
        suffix in "( [a-z0-9./]{1,6}){0,2}",
    ) {
        let close = match op {
            " $(" | " <(" | "; (" => ")",
            " `" => "`",
            "; { " => "; }",
            " \"$(" => ")\"",
            "; sh -c '" => "'",
            "; bash -c \"" => "\"",
            _ => "",
        };
        let command = format!("{program}{args}{op}{denied}{suffix}{close}");
        let decision = decide(&rules(), OsFamily::Unix, &command);
        prop_assert_eq!(decision.decision, Deny, "input: {:?} → {:?}", command, decision);
    }

    #[test]
    fn a_denied_command_after_a_cmd_operator_is_denied(
        program in prop::sample::select(&["dir", "echo", "git", "type", "ver"][..]),
        args in "( [a-z0-9.:/-]{1,6}){0,3}",
        op in prop::sample::select(&[
            "&", "&&", "|", "||", "\n", "\r\n", " & (", " && cmd /c \"", " & start ",
        ][..]),
        denied in prop::sample::select(&[
            "del /s x", "DEL /Q /S x", "d^el /s x", "del.exe /s x", "\"del\" /s x",
            "C:\\Windows\\del.exe /s x", "rm -rf x", "git push", "sudo dir",
        ][..]),
    ) {
        let close = match op {
            " & (" => ")",
            " && cmd /c \"" => "\"",
            _ => "",
        };
        let command = format!("{program}{args}{op}{denied}{close}");
        let decision = decide(&rules(), OsFamily::Windows, &command);
        prop_assert_eq!(decision.decision, Deny, "input: {:?} → {:?}", command, decision);
    }
}

/// A mixed corpus: allowed, asked and denied commands, plain and nested.
const CORPUS: &[&str] = &[
    "ls -la",
    "git status -s",
    "cargo test --all",
    "echo hello world",
    "date +%Y-%m-%d",
    "touch src/main.rs",
    "cargo build --release",
    "rm -rf target",
    "ls | wc -l",
    "git diff > /tmp/x.patch",
    "grep -rn 'fn main' src/",
    "cat README.md",
    "npm run build && npm test",
    "echo \"$(git rev-parse HEAD)\"",
    "sh -c 'ls; rm -rf /'",
    "find . -name '*.rs' -exec wc -l {} \\;",
    "FOO=1 cargo run",
    "sudo apt-get install x",
    "python3 -m pytest -q tests/",
    "for f in *.rs; do echo $f; done",
    "git push origin main",
    "ls *.rs",
    "mkdir -p build/out",
    "cd /tmp",
];

/// `cargo test --release -- --ignored --nocapture decisions_per_second`
#[test]
#[ignore = "benchmark; run in release with --nocapture"]
#[allow(clippy::cast_precision_loss)] // counts far below 2^52
fn decisions_per_second() {
    let rules = rules();
    let rounds = 20_000;
    for (os, corpus) in [
        (OsFamily::Unix, CORPUS),
        (
            OsFamily::Windows,
            &[
                "dir /w",
                "del /s x",
                "echo %PATH%",
                "git status",
                "dir & ver",
                "cmd /c \"del x\"",
            ][..],
        ),
    ] {
        let start = std::time::Instant::now();
        let mut allowed = 0usize;
        for _ in 0..rounds {
            for command in corpus {
                if decide(&rules, os, command).decision == Allow {
                    allowed += 1;
                }
            }
        }
        let elapsed = start.elapsed();
        let count = rounds * corpus.len();
        let per_second = count as f64 / elapsed.as_secs_f64();
        let micros = elapsed.as_secs_f64() * 1e6 / count as f64;
        println!(
            "{os:?}: {count} decisions in {elapsed:?}: {per_second:.0}/s ({micros:.2} µs each, {allowed} allowed)"
        );
        let mut slowest: Vec<(f64, &str)> = corpus
            .iter()
            .map(|command| {
                let start = std::time::Instant::now();
                for _ in 0..1000 {
                    let _ = decide(&rules, os, command);
                }
                (start.elapsed().as_secs_f64() * 1e3, *command)
            })
            .collect();
        slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (micros, command) in slowest.iter().take(4) {
            println!("  {micros:6.2} µs  {command:?}");
        }
    }
}

#[test]
fn allow_rules_do_not_cover_risky_options() {
    let rules = Rules::new(
        [
            "git log",
            "git diff",
            "cargo test",
            "make",
            "npm test",
            "python -m pytest",
            "git log --output=log.txt",
        ]
        .iter()
        .map(|p| rule(p, Source::User))
        .collect(),
        vec![],
    );
    let cases: &[(&str, Verdict, &str)] = &[
        ("git log --oneline", Allow, "matches allow rule \"git log\""),
        (
            "git log --output=/home/u/.bashrc",
            Ask,
            "`--output=/home/u/.bashrc` writes a file; allow rule \"git log\" covers the program, not this option (a rule that contains the option allows it)",
        ),
        (
            "git log --output=log.txt",
            Allow,
            "matches allow rule \"git log --output=log.txt\"",
        ),
        (
            "git log -p --ext-diff",
            Ask,
            "`--ext-diff` runs the external diff program from the configuration; allow rule \"git log\" covers the program, not this option (a rule that contains the option allows it)",
        ),
        (
            "git diff --no-index /home/u/.ssh/id_rsa /dev/null",
            Ask,
            "`--no-index` compares files outside the repository; allow rule \"git diff\" covers the program, not this option (a rule that contains the option allows it)",
        ),
        (
            "cargo test --config 'target.x.runner=\"/tmp/x\"'",
            Ask,
            "`--config` changes the configuration (`target.….runner` and `build.rustflags` run programs); allow rule \"cargo test\" covers the program, not this option (a rule that contains the option allows it)",
        ),
        (
            "make SHELL=/tmp/x",
            Ask,
            "`SHELL=/tmp/x` sets a make variable (`SHELL=…` or `.SHELLFLAGS=…` run any program); allow rule \"make\" covers the program, not this option (a rule that contains the option allows it)",
        ),
        (
            "npm test --node-options=--require=/tmp/x.js",
            Ask,
            "`--node-options=--require=/tmp/x.js` runs Node.js with chosen options (`--require` loads any code); allow rule \"npm test\" covers the program, not this option (a rule that contains the option allows it)",
        ),
        (
            "python -m pytest --basetemp=/home/u",
            Ask,
            "`--basetemp=/home/u` writes to (and empties) a chosen directory; allow rule \"python -m pytest\" covers the program, not this option (a rule that contains the option allows it)",
        ),
        (
            "python -m pytest -x tests",
            Allow,
            "matches allow rule \"python -m pytest\"",
        ),
    ];
    for (command, verdict, reason) in cases {
        let decision = decide(&rules, OsFamily::Unix, command);
        assert_eq!(
            (decision.decision, decision.reason.as_str()),
            (*verdict, *reason),
            "{command:?}"
        );
    }
    let decision = decide(&rules, OsFamily::Unix, "git log --output=x");
    assert_eq!(
        (decision.source, decision.rule.as_deref()),
        (Source::Builtin, Some("git --output"))
    );
}
