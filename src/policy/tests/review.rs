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
            allow_all(os, command).decision,
            Ask,
            "allow-all allowed {command:?}"
        );
    }
    assert_eq!(allow_all(OsFamily::Unix, "touch F").decision, Allow);
}
