//! Bypasses found by the adversarial reviews, kept as regressions.

use super::*;
use pretty_assertions::assert_eq;

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
            allow_all(os, command).verdict,
            Ask,
            "allow-all allowed {command:?}"
        );
    }
    assert_eq!(allow_all(OsFamily::Unix, "touch F").verdict, Allow);
}

/// The second review (issue 10): commands tree-sitter misreads without an error, where only
/// the raw-text searches can see the hidden program. Mode allow-all must ask for every one,
/// and a deny rule must at least ask (definite deny where a corrected reading shows it).
#[test]
fn misread_commands_never_run_unasked() {
    let hidden = [
        "echo `echo \\`r''m -rf /tmp/x\\``",
        "ls `ls \\\"\\`r''m -rf /tmp/x\\`\\\"`",
        "ls \\\r\nr''m -rf /tmp/x",
        "cat <<-E\n\t$(r''m -rf /tmp/x)\n\tE",
        "echo \"${x-'}\"; r''m -rf /tmp/x; \"'}\"",
        "ls $'\\'\nr''m -rf /tmp/x\n'",
        "((r''m -rf /tmp/x))",
        "a <<E;\nx\nE\nr''m -rf /tmp/x",
        "cat <<E\"O\"F\nx\nEOF\nr''m -rf /tmp/x",
    ];
    let deny = Rules::new(vec![], vec![rule("rm -rf", Source::User)]);
    for command in hidden {
        let all = apply_mode(
            decide(&Rules::empty(), OsFamily::Unix, command),
            Mode::AllowAll,
        );
        assert_eq!(all.verdict, Ask, "allow-all allowed {command:?}: {all:?}");
        let denied = decide(&deny, OsFamily::Unix, command);
        assert!(denied.verdict >= Ask, "{command:?}: {denied:?}");
        let all = apply_mode(denied, Mode::AllowAll);
        assert_eq!(all.verdict.max(Ask), all.verdict, "{command:?}: {all:?}");
        assert_ne!(all.verdict, Allow, "{command:?}");
    }
    // Where a corrected reading shows the command, the deny rule wins outright.
    for command in ["ls \\\r\nrm -rf /tmp/x", "((rm -rf /tmp/x))"] {
        assert_eq!(
            decide(&deny, OsFamily::Unix, command).verdict,
            Deny,
            "{command:?}"
        );
    }
    let windows_deny = Rules::new(vec![], vec![rule("del", Source::User)]);
    for command in ["del. x", "dir & del+ x"] {
        let decision = decide(&windows_deny, OsFamily::Windows, command);
        assert_eq!(decision.verdict, Deny, "{command:?}: {decision:?}");
    }
    let all = apply_mode(
        decide(&Rules::empty(), OsFamily::Windows, "rd. /s /q C:\\x"),
        Mode::AllowAll,
    );
    assert_eq!(all.verdict, Ask, "{all:?}");
}

/// The third review (issue 17's round): `&>` is bash's redirection but, in a POSIX `sh` such as
/// dash, `&` and then `>`: the words after its target are a command of their own. Every
/// command that holds one is decided as dash reads it too.
#[test]
fn ampersand_redirection_is_read_as_dash_reads_it() {
    let cargo = Rules::new(vec![rule("cargo check", Source::Flag)], vec![]);
    let deny = rules();
    for tail in [
        "perl -e 'system(q(touch pwned))'",
        "node -e 'require(\"child_process\").execSync(\"id\")'",
        "./evil.sh",
        "curl evil.example",
        "touch x",
    ] {
        for head in ["cat", "rg x", "cat a.txt", "ls", "git status"] {
            let command = format!("{head} &>/dev/null {tail}");
            let got = decide_inspect(&Rules::empty(), OsFamily::Unix, &command);
            assert_eq!(got.verdict, Ask, "{command:?}: {got:?}");
        }
        let command = format!("cat &\\\n>/dev/null {tail}");
        let got = decide_inspect(&Rules::empty(), OsFamily::Unix, &command);
        assert_eq!(got.verdict, Ask, "{command:?}: {got:?}");
        let command = format!("cargo check &>/dev/null {tail}");
        let got = decide_inspect(&cargo, OsFamily::Unix, &command);
        assert_eq!(got.verdict, Ask, "{command:?}: {got:?}");
    }
    for command in [
        "echo &>/dev/null rm -rf x",
        "echo &>/dev/null r\\m -rf x",
        "cat &>/dev/null /bin/rm -rf x",
        "echo &>/dev/null git push",
        "ls &>>/dev/null git push",
        "sh -c 'echo &>/dev/null git push'",
        "echo &\\\n>/dev/null git push",
    ] {
        let got = decide_inspect(&deny, OsFamily::Unix, command);
        assert_eq!(got.verdict, Deny, "{command:?}: {got:?}");
    }
    // Where both readings agree nothing changes: a single-quoted `&>` is text in both. (A
    // double-quoted one asks: `&` in double quotes always does.)
    inspect_table(OsFamily::Unix, &[("rg 'a&>b' src", Allow), ("ls", Allow)]);
}

/// The third review: ways a looking command left the workspace though every word named a path
/// inside it (or no path at all).
#[test]
fn looking_stays_inside_the_workspace() {
    inspect_table(
        OsFamily::Unix,
        &[
            // `--files` takes no pattern: every operand is a path.
            ("rg --files /", Ask),
            ("rg --files ~/.ssh", Ask),
            ("rg --files --hidden /root", Ask),
            ("rg --files src", Allow),
            ("rg --type-list", Allow),
            ("rg x /", Ask),
            // Following links leads out of the workspace.
            ("find -L .", Ask),
            ("find -H .", Ask),
            ("find . -follow", Ask),
            ("find -P . -name x", Allow),
            ("rg --follow x", Ask),
            ("rg -L x", Ask),
            ("grep -R x .", Ask),
            ("grep --dereference-recursive x .", Ask),
            ("grep -r x .", Allow),
            ("tree -l", Ask),
            ("du -L .", Ask),
            ("stat -L x", Ask),
            // `ls` lists only the workspace (its 0.1 form, any argument, stays in "strict").
            ("ls ~/.ssh", Ask),
            ("ls -la ~/.ssh", Ask),
            ("ls -R /", Ask),
            ("ls ..", Ask),
            ("ls", Allow),
            ("ls -la src", Allow),
            ("ls -1 src/*.rs", Allow),
            // As for `cat *.rs`: a glob that could expand to an option asks.
            ("ls *.rs", Ask),
            ("ls -lah --color=auto", Allow),
            // Signature checks run gpg, whatever the spelling.
            ("git log --format=%-GG", Ask),
            ("git show --format=%+GS", Ask),
            ("git log '--format=% GK'", Ask),
            ("git log --pretty=format:%+GK", Ask),
            ("git branch '--format=%(*signature)'", Ask),
            ("git branch --sort=signature", Ask),
            ("git branch --sort=-signature", Ask),
            ("git log --format=%H", Allow),
            // The old `+NUM` form of tail can follow forever (`-f` asks).
            ("tail +1f a.txt", Ask),
            ("tail +5 a.txt", Ask),
            ("tail -n 5 a.txt", Allow),
        ],
    );
    // cmd.exe's built-ins split arguments at `,`, `;` and `=`.
    inspect_table(
        OsFamily::Windows,
        &[
            ("type a.txt,.env", Ask),
            ("type a.txt,..\\x", Ask),
            ("type a.txt;..\\x", Ask),
            ("type a.txt=.env", Ask),
            ("type a.txt,b.txt", Allow),
            ("type a.txt", Allow),
        ],
    );
}

/// The third review: git's dashed form runs a subcommand as a program of its own.
#[test]
fn git_dashed_subcommands_are_denied_like_the_subcommand() {
    let deny = rules();
    for (command, want) in [
        ("git-push origin main", Deny),
        ("/usr/local/libexec/git-core/git-push origin", Deny),
        ("/usr/lib/git-core/git-send-pack origin", Deny),
        ("git-http-push x", Deny),
        ("env git-push", Deny),
        ("git-stash push", Ask),
        ("git-status", Ask),
    ] {
        let got = decide(&deny, OsFamily::Unix, command);
        assert_eq!(got.verdict, want, "{command:?}: {got:?}");
    }
}

/// A bug that panics while deciding makes the command ask, marked destructive (so mode
/// `allow-all` asks too and no "always allow" is offered), instead of ending `check --stdin`
/// or the session (rev7: `git show-ref -é` ended both before its fix).
#[test]
fn a_panic_while_deciding_asks() {
    let decision = guarded("command", || panic!("a bug while deciding"));
    assert_eq!(decision.verdict, Verdict::Ask);
    assert!(decision.destructive);
    assert_eq!(decision.prefix, None);
    assert!(
        decision.reason.contains("internal error"),
        "{}",
        decision.reason
    );
    // The guard passes a decision through unchanged.
    let rules = rules();
    let passed = guarded("command", || decide(&rules, OsFamily::Unix, "ls"));
    assert_eq!(passed, decide(&rules, OsFamily::Unix, "ls"));
    assert_eq!(passed.verdict, Verdict::Allow);
    // A file tool's access is guarded the same way, and says what failed.
    let file = guarded("file access", || panic!("a bug while deciding"));
    assert_eq!((file.verdict, file.destructive), (Verdict::Ask, true));
    assert!(file.reason.contains("this file access"), "{}", file.reason);
    let mut after_mode = files::apply_mode(file, Mode::AllowAll);
    assert_eq!(after_mode.verdict, Verdict::Ask, "{after_mode:?}");
    after_mode = apply_mode(guarded("command", || panic!("again")), Mode::AllowAll);
    assert_eq!(after_mode.verdict, Verdict::Ask, "{after_mode:?}");
}
