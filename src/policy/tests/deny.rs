//! The deny search: every spelling, nested commands, wrappers, command strings, words that
//! are not fixed, protected programs.

use super::*;

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
            ("ls rm -rf", Deny),
            ("git status rm -rf", Deny),
            ("git push", Deny),
            ("git push origin main", Deny),
            ("git push --force", Deny),
            ("git -C repo push", Deny),
            ("git --no-pager push", Deny),
            ("/usr/bin/git push", Deny),
            ("git pusher", Ask),
            ("git status push", Allow),
            ("git stash push", Ask),
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
            // `ls rm -rf x` after the join: over-denied (any word may be the program).
            ("ls \\\nrm -rf x", Deny),
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

/// A deny rule's words are found however the line spells them around: a variable given on
/// the line before the subcommand (`make DEPLOY=1 deploy`), a file named with `./`.
#[test]
fn deny_rules_see_past_variables_and_dot_slash() {
    let deny = |prefixes: &[&str]| {
        Rules::new(
            Vec::new(),
            prefixes.iter().map(|p| rule(p, Source::User)).collect(),
        )
    };
    let rules = deny(&["make deploy", "python3 deploy.py", "npm run release"]);
    for command in [
        "make deploy",
        "make DEPLOY=1 deploy",
        "make -k CC=x deploy",
        "make deploy V=1",
        "python3 deploy.py",
        "python3 ./deploy.py",
        "python3 .//deploy.py --now",
        "python3 ././deploy.py",
        "npm run ./release",
        "npm X=1 run release",
    ] {
        let decision = decide(&rules, OsFamily::Unix, command);
        assert!(decision.verdict == Deny, "{command}: {}", decision.reason);
    }
    for command in [
        "make test",
        "make DEPLOY=1 test",
        "python3 ./other.py",
        "python3 deploy.pyc",
    ] {
        let decision = decide(&rules, OsFamily::Unix, command);
        assert!(decision.verdict != Deny, "{command}: {}", decision.reason);
    }
    let windows = deny(&["python deploy.py"]);
    for command in [
        "python .\\deploy.py",
        "python ./deploy.py",
        "python DEPLOY.PY",
    ] {
        let decision = decide(&windows, OsFamily::Windows, command);
        assert!(decision.verdict == Deny, "{command}: {}", decision.reason);
    }
}
