//! Files that hold secrets, read through git objects, search operands and options read by
//! the wrong parser (issue 33, security items 1, 4 and 5). Cases are generated from the
//! secret list itself, so a pattern added there is covered here too.

use super::*;

const SECRET_FILES: &str = include_str!("../../../assets/secret-files.txt");

/// One file name matching each pattern of the secret list (`*` becomes `a1`), in the case
/// written and upper-cased (the list matches without regard to case).
fn secret_names() -> Vec<String> {
    SECRET_FILES
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .flat_map(|pattern| {
            let name = pattern.replace('*', "a1");
            [name.clone(), name.to_uppercase()]
        })
        .collect()
}

/// A glob that matches `name` and could match nothing but names like it: its last character
/// replaced by `?`.
fn glob_of(name: &str) -> String {
    let mut glob: String = name.chars().take(name.chars().count() - 1).collect();
    glob.push('?');
    glob
}

fn generated_table(forms: &[&str], want: Verdict) -> Vec<(String, Verdict)> {
    let mut cases = Vec::new();
    for name in secret_names() {
        let glob = glob_of(&name);
        for form in forms {
            let command = form
                .replace("{file}", &name)
                .replace("{glob}", &glob)
                .replace("{upper}", &name.to_uppercase());
            cases.push((command, want));
        }
    }
    cases
}

fn run(cases: &[(String, Verdict)]) {
    let cases: Vec<(&str, Verdict)> = cases.iter().map(|(c, v)| (c.as_str(), *v)).collect();
    table_without_rules(&cases);
}

/// A table under the inspect list with no rules at all (the review's setting: the shared
/// tables' `git log` allow rule would decide the git cases).
fn table_without_rules(cases: &[(&str, Verdict)]) {
    inspect_table_under(&Rules::new(Vec::new(), Vec::new()), OsFamily::Unix, cases);
}

/// Every git reader form that can print a named file's committed content asks for every
/// name on the list.
#[test]
fn git_readers_ask_for_every_secret_name() {
    run(&generated_table(
        &[
            "git show HEAD~1:{file}",
            "git show HEAD:{file}",
            "git show HEAD:./{file}",
            "git show 'HEAD:config/{file}'",
            "git show :{file}",
            "git show :0:{file}",
            "git show --stat HEAD:{file}",
            "git cat-file -p HEAD:{file}",
            "git cat-file -p :{file}",
            "git log -p -- {file}",
            "git log -p -- config/{file}",
            "git log -p -- '{glob}'",
            "git log -p -- ':(glob){glob}'",
            "git log -p -- ':(icase){upper}'",
            "git log -p -- ':(glob,icase)**/{glob}'",
            "git log -p -- ':/{file}'",
            "git log -p -- ':(top)config/{file}'",
            "git log --patch -- {file}",
            "git log -L 1,5:{file}",
            "git log -L1,5:{file}",
            "git log -L :main:{file}",
            "git log --stat -- {file}",
            "git diff HEAD~3 HEAD -- {file}",
            "git diff HEAD~3..HEAD -- '{glob}'",
            "git diff -- {file}",
            "git diff -- '{glob}'",
            "git diff --cached -- {file}",
            "git diff HEAD:{file} HEAD~1:{file}",
            "git grep -h '' HEAD -- {file}",
            "git grep -h '' HEAD -- '{glob}'",
            "git grep -h '' HEAD -- ':(icase){upper}'",
            "git grep x -- '{glob}'",
            "git grep x '{glob}'",
            "git grep --untracked x -- '{glob}'",
            "git grep --cached x -- '{glob}'",
            "git grep -e x -- '{glob}'",
            "git blame {file}",
            "git blame HEAD~1 -- {file}",
            "git blame --contents {file} Cargo.toml",
            "git blame --contents={file} Cargo.toml",
            "git ls-files {file}",
        ],
        Ask,
    ));
}

/// The same forms with a file that holds no secret are allowed: the asks above are the
/// secret's, not the form's.
#[test]
fn git_readers_allow_the_same_forms_for_other_files() {
    table_without_rules(&[
        ("git show HEAD~1:src/main.rs", Allow),
        ("git show HEAD:./src/main.rs", Allow),
        ("git show :src/main.rs", Allow),
        ("git show :0:src/main.rs", Allow),
        ("git cat-file -p HEAD:src/main.rs", Allow),
        ("git log -p -- src/main.rs", Allow),
        ("git log -p -- 'docs/READM?.md'", Allow),
        ("git log -p -- ':(icase)SRC/MAIN.RS'", Allow),
        ("git log -L 1,5:src/main.rs", Allow),
        ("git diff HEAD~3 HEAD -- src/main.rs", Allow),
        ("git diff -- src/main.rs", Allow),
        ("git diff --cached -- src/main.rs", Allow),
        ("git grep -h '' HEAD -- src/main.rs", Allow),
        ("git grep x -- src", Allow),
        ("git blame src/main.rs", Allow),
        ("git blame --contents src/main.rs Cargo.toml", Allow),
        ("git ls-files src", Allow),
    ]);
}

/// Forms that print committed content without a path that limits them ask; forms that print
/// names and counts only stay allowed (the README's choice).
#[test]
fn git_history_content_asks_names_and_counts_do_not() {
    table_without_rules(&[
        // The cases of the issue.
        ("git show HEAD~1:deploy.pem", Ask),
        ("git show HEAD:id_rsa", Ask),
        ("git log -p -- '*.key'", Ask),
        ("git grep -h '' HEAD -- '*.pem'", Ask),
        ("git show HEAD", Ask),
        ("git log -p", Ask),
        ("git diff HEAD~3 HEAD", Ask),
        ("git show 'HEAD:config/.env.production'", Ask),
        ("git cat-file -p HEAD:id_rsa", Ask),
        // Every spelling of a patch.
        ("git show", Ask),
        ("git show abc1234", Ask),
        ("git show HEAD~1 HEAD", Ask),
        ("git log --patch", Ask),
        ("git log -u", Ask),
        ("git log -U3", Ask),
        ("git log --unified=1", Ask),
        ("git log --cc", Ask),
        ("git log -c", Ask),
        ("git log --dd", Ask),
        ("git log --binary", Ask),
        ("git log --remerge-diff", Ask),
        ("git log --patch-with-stat", Ask),
        ("git log -sp", Ask),
        ("git log -p -n 5", Ask),
        ("git log -p main", Ask),
        ("git log -p v1.2.0", Ask),
        ("git log -p --stat", Ask),
        ("git show --stat -p HEAD", Ask),
        ("git diff HEAD", Ask),
        ("git diff HEAD~1", Ask),
        ("git diff HEAD~1..HEAD", Ask),
        ("git diff main...feature", Ask),
        ("git diff --cached", Ask),
        ("git diff --staged", Ask),
        ("git diff -C HEAD~1", Ask),
        ("git grep x HEAD", Ask),
        ("git grep -e x HEAD", Ask),
        ("git grep -n -C 3 x HEAD~2", Ask),
        ("git grep --cached x", Ask),
        // A path that does not limit: the whole tree, an exclusion, `--full-diff`.
        ("git log -p -- .", Ask),
        ("git log -p -- :/", Ask),
        ("git log -p -- ':(top)'", Ask),
        ("git log -p -- ':!src/main.rs'", Ask),
        ("git log -p --full-diff -- src/main.rs", Ask),
        ("git diff HEAD -- ':(attr:x)src'", Ask),
        ("git show HEAD -- .", Ask),
        // A hash may be a blob: it prints whatever the options.
        ("git show --stat abc1234", Ask),
        (
            "git show --name-only 0123456789abcdef0123456789abcdef01234567",
            Ask,
        ),
        ("git cat-file -p abc1234", Ask),
        // Names and counts only.
        ("git log", Allow),
        ("git log --oneline", Allow),
        ("git log --oneline -n 20", Allow),
        ("git log --stat", Allow),
        ("git log --name-only", Allow),
        ("git log --name-status", Allow),
        ("git log --shortstat", Allow),
        ("git log --numstat", Allow),
        ("git log --summary", Allow),
        ("git log --raw", Allow),
        ("git log -Sneedle --oneline", Allow),
        ("git log --format=%H%x09%s", Allow),
        ("git show --stat HEAD", Allow),
        ("git show HEAD --stat", Allow),
        ("git show -s HEAD", Allow),
        ("git show --no-patch HEAD", Allow),
        ("git show --name-only HEAD~2", Allow),
        ("git show HEAD:src/main.rs", Allow),
        ("git show HEAD:src", Allow),
        ("git diff --stat HEAD~3 HEAD", Allow),
        ("git diff --name-only HEAD~1", Allow),
        ("git diff --name-status main...HEAD", Allow),
        ("git diff --shortstat --cached", Allow),
        ("git diff --numstat HEAD", Allow),
        ("git shortlog -sn", Allow),
        ("git cat-file -t abc1234", Allow),
        ("git cat-file -p HEAD", Allow),
        // Limited by a path, or reading the working tree (the sandbox's business).
        ("git log -p -- src", Allow),
        ("git log -p src/main.rs", Allow),
        ("git log -p -n 3 -- src/main.rs", Allow),
        ("git show HEAD -- src/main.rs", Allow),
        ("git show HEAD~2 src/lib.rs", Allow),
        ("git diff HEAD -- src", Allow),
        ("git diff HEAD~1 src/main.rs", Allow),
        ("git diff HEAD:a.rs HEAD~1:a.rs", Allow),
        ("git diff", Allow),
        ("git diff -- src", Allow),
        ("git diff src/main.rs", Allow),
        ("git grep -n foo", Allow),
        ("git grep -n foo -- src", Allow),
        ("git grep -n foo src/", Allow),
        ("git grep foo HEAD -- src/main.rs", Allow),
        ("git grep --untracked foo", Allow),
    ]);
}

/// Search operands are content paths: a glob that could match a secret asks, for every name
/// on the list and every searcher; a directory does not.
#[test]
fn search_operands_are_content_paths() {
    let mut cases = generated_table(
        &[
            "grep '' {glob}",
            "grep -h '' {glob}",
            "grep -rn x src {glob}",
            "egrep x {glob}",
            "fgrep x {glob}",
            "grep -e x {glob}",
            "rg x {glob}",
            "rg -uu x {glob}",
            "rg --files {glob}",
            "rg -e x -- {glob}",
        ],
        Ask,
    );
    for (command, want) in [
        ("grep '' .en?", Ask),
        ("grep -h '' .e*", Ask),
        ("rg -uu x .en?", Ask),
        ("grep x id_rs?", Ask),
        ("git grep --untracked x -- '*.pem'", Ask),
        ("git blame --contents id_rsa Cargo.toml", Ask),
        ("grep -rn x src", Allow),
        ("grep -rn x .", Allow),
        ("rg x src tests", Allow),
        ("rg -uu x", Allow),
        ("grep -n x README.md", Allow),
        ("grep -n x README.?d", Allow),
        ("grep -rn foo . --include=*.py", Allow),
        ("grep -rn foo . --include='*.py'", Allow),
    ] {
        cases.push((command.to_owned(), want));
    }
    run(&cases);
}

/// Each program is read by its own option model (`assets/builtin-inspect.txt`).
#[test]
fn options_are_read_by_each_programs_model() {
    table_without_rules(&[
        // first: options end at the first operand; xxd's second operand is its output.
        ("xxd Cargo.toml -p", Ask),
        ("xxd Cargo.toml -c 4", Ask),
        ("xxd Cargo.toml -", Ask),
        ("xxd -p Cargo.toml", Allow),
        ("xxd -c 4 -p Cargo.toml", Allow),
        ("find src -name '*.rs'", Allow),
        // gnu: both readings. GNU permutes (`cat a -n` numbers lines); BSD, macOS and
        // POSIXLY_CORRECT read every later word as an operand.
        ("cat Cargo.toml -n", Allow),
        ("head Cargo.toml -n 5", Allow),
        ("grep -n foo src -i", Allow),
        ("sort Cargo.toml -r", Allow),
        ("uniq Cargo.toml -c", Ask),
        ("uniq -c Cargo.toml", Allow),
        ("grep foo Cargo.toml -e .env", Ask),
        ("grep foo Cargo.toml -e /etc/passwd", Ask),
        ("grep foo src -e id_rs?", Ask),
        ("cut -d : Cargo.toml -f 1", Allow),
        ("cut Cargo.toml -d : -f .npmrc", Ask),
        ("ls src -la", Allow),
        ("wc Cargo.toml -l", Allow),
        ("sed -n 1p Cargo.toml -e 1p", Allow),
        ("sed -n 1p Cargo.toml -s", Allow),
        ("cat Cargo.toml -- .env", Ask),
        // anywhere: rg, jq and tree read options anywhere on every system.
        ("rg foo src -n", Allow),
        ("rg foo src -g '*.rs'", Allow),
        ("rg foo src -e .env", Allow),
        ("jq . package.json -r", Allow),
        ("tree src -L 2", Allow),
    ]);
}
