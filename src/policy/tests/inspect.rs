//! The inspect list (issue 18): inspection programs with their option allowlists, paths inside
//! the workspace, secret files, harmless composition and bad input. The workspace is
//! [`WORKSPACE`], judged lexically (nothing is read from disk).

use super::*;
use pretty_assertions::assert_eq;

#[test]
fn inspection_programs_and_their_options() {
    inspect_table(
        OsFamily::Unix,
        &[
            ("cat package.json", Allow),
            ("cat -n src/main.rs", Allow),
            ("head -n 50 src/x.py", Allow),
            ("head -20 README.md", Allow),
            ("head -n5 x", Allow),
            ("head --lines=5 x", Allow),
            ("head --lines 5 x", Allow),
            ("head --lines=five x", Ask),
            ("head --li=5 x", Ask),
            ("tail -n 20 log.txt", Allow),
            ("tail -f log", Ask),
            ("tail -fn5 log", Ask),
            ("tail -n5f log", Ask),
            ("tail --follow log", Ask),
            ("tail -F log", Ask),
            ("nl -ba src/main.rs", Allow),
            ("wc -l src/main.rs", Allow),
            ("wc --files0-from=list", Ask),
            ("cut -d: -f1 x", Allow),
            ("tr a-z A-Z", Allow),
            ("tr [a-z] x", Ask),
            ("sort -u x", Allow),
            ("sort -n -k2 -t, x", Allow),
            ("sort -o out x", Ask),
            ("sort -uo out x", Ask),
            ("sort --output=out x", Ask),
            ("sort --out=out x", Ask),
            ("sort --compress-program=sh x", Ask),
            ("sort -T /tmp x", Ask),
            ("uniq -c x", Allow),
            ("uniq x y", Ask),
            ("diff -u a b", Allow),
            ("diff a /etc/passwd", Ask),
            ("stat -c %s x", Allow),
            ("file x", Allow),
            ("file -C -m magic", Ask),
            ("file -f list", Ask),
            ("file -z x.gz", Ask),
            ("du -sh .", Allow),
            ("df -h .", Allow),
            ("tree -L 2", Allow),
            ("tree -o out", Ask),
            ("readlink -f x", Allow),
            ("sha256sum x", Allow),
            ("md5sum -c sums", Ask),
            ("sha256sum --check sums", Ask),
            ("base64 x", Allow),
            ("base64 -o out x", Ask),
            ("od -c x", Allow),
            ("xxd x", Allow),
            ("xxd -ps x", Allow),
            ("xxd -r x", Ask),
            ("xxd x out", Ask),
            ("xxd -s /etc/passwd", Ask),
            ("strings x", Allow),
            ("strings @opts", Ask),
            ("jq .name package.json", Allow),
            ("jq -r '.a | .b' x.json", Allow),
            ("jq --arg n v '.[$n]' x", Allow),
            ("jq --rawfile k /etc/passwd . x", Ask),
            ("jq --slurpfile k data.json . x", Allow),
            ("jq env x", Ask),
            ("jq '$ENV.HOME' x", Ask),
            ("jq 'import \"a\" as a; .' x", Ask),
            ("jq -L /tmp . x", Ask),
        ],
    );
}

#[test]
fn searchers_and_their_options() {
    inspect_table(
        OsFamily::Unix,
        &[
            ("grep -rn foo .", Allow),
            ("grep -n foo src/main.rs", Allow),
            ("grep -f patterns x", Allow),
            ("grep -f /etc/passwd x", Ask),
            ("grep --file=../x y", Ask),
            ("grep -e foo -e bar x", Allow),
            ("egrep 'a' x", Allow),
            ("fgrep a x", Allow),
            ("grep foo .env", Ask),
            ("grep foo /etc", Ask),
            ("rg -n name src", Allow),
            ("rg -n name", Allow),
            ("rg --pre cat x", Ask),
            ("rg --pre=cat x", Ask),
            ("rg --pr x", Ask),
            ("rg --hostname-bin=x y", Ask),
            ("rg -z x", Ask),
            ("rg -nz x", Ask),
            ("rg --search-zip x", Ask),
            ("rg -g '*.rs' fn", Allow),
            ("rg --files", Allow),
            ("rg x /", Ask),
            ("rg x ~", Ask),
            ("find . -name '*.ts'", Allow),
            ("find src -type f -name '*.rs' -print", Allow),
            ("find . -exec rm {} +", Ask),
            ("find . -execdir ls {} +", Ask),
            ("find . -ok rm {} +", Ask),
            ("find . -okdir rm {} +", Ask),
            ("find . -delete", Ask),
            ("find . -fls out", Ask),
            ("find . -fprint out", Ask),
            ("find . -fprintf out %p", Ask),
            ("find / -name x", Ask),
            ("find . -name *.ts", Ask),
            ("find . -newer /etc/passwd", Ask),
        ],
    );
}

#[test]
fn sed_prints_only() {
    inspect_table(
        OsFamily::Unix,
        &[
            ("sed -n 120,240p src/x.py", Allow),
            ("sed -n '1p;5,10p' x", Allow),
            ("sed -n '/fn main/,/^}/p' src/main.rs", Allow),
            ("sed -n -e 1p -e 3p x", Allow),
            ("sed -ne 1p x", Allow),
            ("sed -n '$=' x", Allow),
            ("sed 1p x", Ask),
            ("sed -n 1d x", Ask),
            ("sed -n '1w out' x", Ask),
            ("sed -n 's/a/b/w out' x", Ask),
            ("sed -n '1r /etc/passwd' x", Ask),
            ("sed -n 1e x", Ask),
            ("sed -ni 1p x", Ask),
            ("sed -n -i 1p x", Ask),
            ("sed -n --in-place 1p x", Ask),
            ("sed -n -f script x", Ask),
            ("sed -n 1p /etc/passwd", Ask),
            ("sed -n 1p .env", Ask),
        ],
    );
}

#[test]
fn read_only_git() {
    inspect_table(
        OsFamily::Unix,
        &[
            ("git status", Allow),
            ("git status -s", Allow),
            ("git log --oneline -n 5", Allow),
            ("git show HEAD~1 --stat", Allow),
            ("git diff --stat", Allow),
            ("git diff HEAD -- src", Allow),
            ("git blame src/main.rs", Allow),
            ("git ls-files", Allow),
            ("git rev-parse --show-toplevel", Allow),
            ("git grep -n foo", Allow),
            ("git describe --tags", Allow),
            ("git shortlog -sn", Allow),
            ("git branch", Allow),
            ("git branch -a", Allow),
            ("git branch --list 'feat*'", Allow),
            ("git cat-file -p HEAD", Allow),
            ("git -C src log", Allow),
            ("git --no-pager log", Allow),
            ("git -c core.pager=sh log", Ask),
            ("git -C /tmp log", Ask),
            ("git -C .. log", Ask),
            ("git --git-dir=/tmp/x log", Ask),
            // A bare repository a project carries brings its own configuration.
            ("git --git-dir=evil.git log", Ask),
            ("git --git-dir evil.git diff", Ask),
            ("git --work-tree=. diff", Ask),
            ("git --bare log", Ask),
            ("git -C evil.git --bare diff", Ask),
            ("git -p log", Ask),
            ("git --paginate log", Ask),
            ("git log --output=x", Ask),
            ("git log --out=x", Ask),
            ("git diff --ext-diff", Ask),
            ("git diff --textconv", Ask),
            ("git show --show-signature", Ask),
            ("git log --format=%G?", Ask),
            ("git grep -O foo", Ask),
            ("git grep --open-files-in-pager foo", Ask),
            ("git diff /etc/passwd /etc/shadow", Ask),
            ("git diff --no-index a b", Ask),
            ("git blame --contents=/etc/passwd x", Ask),
            ("git show HEAD:.env", Ask),
            ("git branch new", Ask),
            ("git branch -d x", Ask),
            ("git branch -m a b", Ask),
            ("git branch --set-upstream-to=x", Ask),
            ("git cat-file --batch", Ask),
            ("git cat-file -p", Ask),
            ("git push", Deny),
            ("git commit -m x", Ask),
            ("git checkout x", Ask),
            ("git log *", Ask),
            ("touch x", Ask),
            ("curl https://example.com", Ask),
            ("python3 x.py", Ask),
        ],
    );
}

#[test]
fn paths_stay_inside_the_workspace_and_secrets_ask() {
    inspect_table(
        OsFamily::Unix,
        &[
            ("cat src/../README.md", Allow),
            ("cat ../x", Ask),
            ("cat src/../../x", Ask),
            ("cat /work/project/README.md", Allow),
            ("cat /work/projectx/README.md", Ask),
            ("cat /etc/passwd", Ask),
            ("cat ~/.ssh/id_rsa", Ask),
            ("cat ~", Ask),
            ("cat .env", Ask),
            ("cat .env.local", Ask),
            ("cat config/server.pem", Ask),
            ("cat ID_RSA", Ask),
            ("cat .npmrc", Ask),
            ("cat credentials/aws", Ask),
            ("head -n 5 .git-credentials", Ask),
            ("cat src/*.rs", Ask),
            ("cat README.?d", Allow),
            ("cat *.md", Ask),
            ("cat -- *.md", Ask),
            ("cat s*/../../x", Ask),
            ("cat src/.*", Ask),
            ("wc -l src/*.rs", Allow),
            ("wc -l *.rs", Ask),
            // grep prints the lines of the files it is given, as cat does (issue 33).
            ("grep -n foo src/*.rs", Ask),
            ("rg -n foo -- -x", Allow),
            ("cat @x", Ask),
        ],
    );
}

#[test]
fn harmless_compositions_of_allowed_parts() {
    inspect_table(
        OsFamily::Unix,
        &[
            ("rg -n \"name\" src | head -n 50", Allow),
            ("rg -n x || true", Allow),
            ("rg -n x || :", Allow),
            ("rg -n x || echo none", Allow),
            ("git status 2>/dev/null", Allow),
            ("git status >/dev/null 2>&1 && git diff --stat", Allow),
            ("ls &>/dev/null; pwd", Allow),
            ("wc -l < Cargo.toml", Allow),
            ("cat x | sort | uniq -c | sort -rn | head", Allow),
            ("cargo test 2>&1 | tail -n 50", Allow),
            ("cd src && cat main.rs", Allow),
            ("cd src && cat ../../x", Ask),
            ("cd /tmp && cat x", Ask),
            ("cd && cat x", Ask),
            ("cd - && ls", Ask),
            ("ls;", Allow),
            ("ls | sh", Ask),
            ("cat x | bash", Ask),
            ("ls | xargs cat", Ask),
            ("ls > out", Ask),
            ("ls >> /dev/null", Ask),
            ("ls 2>out", Ask),
            ("ls 2>>/dev/null", Ask),
            ("ls >/dev/null2", Ask),
            ("ls>/dev/null", Ask),
            ("ls 3>/dev/null", Ask),
            ("ls >&2", Ask),
            ("ls 1>&2", Ask),
            ("cat < .env", Ask),
            ("cat < /etc/passwd", Ask),
            ("cat <<EOF\nx\nEOF", Ask),
            ("cat <<< x", Ask),
            ("ls & pwd", Ask),
            ("ls |& cat", Ask),
            ("(ls) | cat", Ask),
            ("{ ls; } | cat", Ask),
            ("f() { ls; }; f", Ask),
            ("ls | cat $HOME", Ask),
            ("ls | cat `pwd`", Ask),
            ("ls | cat $(pwd)", Ask),
            ("X=1 ls | cat", Ask),
            ("ls | X=1 cat", Ask),
            ("ls | cat\nrm x", Ask),
            ("ls | cat\r", Ask),
            // Issue 33: an `if` of allowed parts composes, and `:` is allowed anywhere.
            ("if true; then ls; fi", Allow),
            ("ls && touch x", Ask),
            ("ls | tee out", Ask),
            ("git status && git push", Deny),
            ("cat x | rm -rf /", Deny),
            ("ls ||", Ask),
            ("| ls", Ask),
            ("ls && && pwd", Ask),
            ("rg 'a|b' src | head", Allow),
            ("sed -n '1p;$p' x | head", Allow),
            ("rg 'a|b' src | sh", Ask),
            ("ls || : x", Allow),
            ("ls && :", Allow),
        ],
    );
}

#[test]
fn bad_input_keeps_asking() {
    let rules = rules();
    let long = vec!["ls"; 300].join(" | ");
    let nested = format!("{}ls{}", "(".repeat(200), ")".repeat(200));
    let deep_list = vec!["ls"; 200].join(" && ");
    let cases = [
        long.as_str(),
        nested.as_str(),
        deep_list.as_str(),
        "cat x\0 | head",
        "cat x |\u{0} head",
        "ls\r\n| head",
        "ls |\u{2028} head",
        "c\u{430}t x | head",
        "ls | he\u{200b}ad",
        "cat /*/*/*/*",
        "cat */*/*",
        "rg x **/*",
    ];
    for command in cases {
        let got = decide_inspect(&rules, OsFamily::Unix, command);
        assert_ne!(got.verdict, Allow, "{command:?}: {got:?}");
    }
}

#[test]
fn strict_keeps_today() {
    let rules = rules();
    let strict =
        |c: &str| super::super::decide(&rules, &context(OsFamily::Unix, ReadOnly::Strict), c);
    for command in [
        "cat x",
        "git diff",
        "ls | wc -l",
        "ls 2>/dev/null",
        "rg x",
        "sed -n 1p x",
    ] {
        assert_eq!(strict(command).verdict, Ask, "{command}");
    }
    assert_eq!(strict("ls -la").verdict, Allow);
}

#[test]
fn windows_type_reads_workspace_files() {
    inspect_table(
        OsFamily::Windows,
        &[
            ("type README.md", Allow),
            ("type src\\main.rs", Allow),
            ("type ..\\x", Ask),
            ("type C:\\Windows\\win.ini", Ask),
            ("type \\x", Ask),
            ("type *.txt", Ask),
            ("type .env", Ask),
            ("type", Ask),
        ],
    );
}

#[test]
fn the_source_says_which_list_decided() {
    let rules = rules();
    let got = decide_inspect(&rules, OsFamily::Unix, "rg -n x src");
    assert_eq!(
        (got.source, got.rule.as_deref()),
        (Source::Builtin, Some("rg"))
    );
    let got = decide_inspect(&rules, OsFamily::Unix, "cargo test 2>&1 | tail -n 5");
    assert_eq!(got.verdict, Allow);
    assert_eq!(got.source, Source::Flag, "a rule decided a part: {got:?}");
    assert_eq!(got.parts.len(), 2);
    let got = decide_inspect(&rules, OsFamily::Unix, "ls | head");
    assert_eq!(got.source, Source::Builtin);
    assert_eq!(
        got.parts.iter().map(|p| p.decision).collect::<Vec<_>>(),
        [Allow, Allow]
    );
    let got = decide_inspect(&rules, OsFamily::Unix, "ls | touch x");
    assert_eq!(got.verdict, Ask);
    assert_eq!(
        got.parts.iter().map(|p| p.decision).collect::<Vec<_>>(),
        [Allow, Ask]
    );
    assert_eq!(
        got.prefix, None,
        "no prefix is offered for a composed command"
    );
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// A composition with one part that is not allowed is never allowed.
    #[test]
    fn a_composition_is_allowed_only_when_every_part_is(
        before in prop::collection::vec(prop::sample::select(&[
            "ls", "cat x", "rg -n a src", "git status", "head -n 5", "wc -l",
        ][..]), 0..3),
        bad in prop::sample::select(&[
            "touch x", "sh", "cat /etc/passwd", "cat .env", "sed -i 1p x", "sort -o o x",
            "rg --pre sh x", "find . -delete", "git commit", "tail -f x", "python3", "x=1",
            "cd / && ls", "cat ../x", "curl x", "cat `x`", "cat $x", "(ls)", "cat > x",
        ][..]),
        after in prop::collection::vec(prop::sample::select(&["ls", "head", "true"][..]), 0..3),
        joint in prop::sample::select(&[" | ", " && ", " || ", "; ", " 2>/dev/null | "][..]),
    ) {
        let mut parts = before.clone();
        parts.push(bad);
        parts.extend(after.iter().copied());
        let command = parts.join(joint);
        let got = decide_inspect(&rules(), OsFamily::Unix, &command);
        prop_assert_ne!(got.verdict, Allow, "input: {:?}: {:?}", command, got);
    }
}
