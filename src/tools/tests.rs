use std::path::Path;
use std::sync::Arc;

use pretty_assertions::assert_eq;

use super::*;

fn scope(root: &Path) -> Scope<'_> {
    Scope {
        root,
        skipped: Arc::new(|path: &Path| crate::workspace::SecretFiles::defaults().is_secret(path)),
        max_chars: 100_000,
    }
}

fn workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

fn read_args(path: &str, offset: Option<u64>, limit: Option<u64>) -> ReadArgs {
    ReadArgs {
        path: path.into(),
        offset,
        limit,
    }
}

#[test]
fn read_numbers_lines_and_says_how_to_read_on() {
    let (_dir, root) = workspace();
    let text: String = (1..=5).map(|i| format!("line {i}\n")).collect();
    std::fs::write(root.join("a.txt"), text).unwrap();
    let scope = scope(&root);
    let whole = read(&scope, &root.join("a.txt"), &read_args("a.txt", None, None)).unwrap();
    assert_eq!(whole.summary, "5 lines");
    assert!(
        whole.content.starts_with("     1\tline 1\n"),
        "{}",
        whole.content
    );
    let part = read(
        &scope,
        &root.join("a.txt"),
        &read_args("a.txt", Some(2), Some(2)),
    )
    .unwrap();
    assert_eq!(
        part.content,
        "     2\tline 2\n     3\tline 3\n[showing lines 2-3 of 5 lines; read on with offset=4]"
    );
    let past = read(
        &scope,
        &root.join("a.txt"),
        &read_args("a.txt", Some(9), None),
    )
    .unwrap();
    assert_eq!(
        past.content,
        "`a.txt` has 5 lines; offset 9 is past the end"
    );
}

#[test]
fn read_refuses_what_is_not_a_text_file() {
    let (_dir, root) = workspace();
    std::fs::write(root.join("bin"), b"\x7fELF\0\0\x01").unwrap();
    std::fs::create_dir(root.join("dir")).unwrap();
    let scope = scope(&root);
    let binary = read(&scope, &root.join("bin"), &read_args("bin", None, None)).unwrap();
    assert_eq!(
        binary.content,
        "`bin` is a binary file (7 bytes): not shown"
    );
    let dir = read(&scope, &root.join("dir"), &read_args("dir", None, None)).unwrap_err();
    assert!(dir.message.contains("use list_files"), "{}", dir.message);
    let missing = read(&scope, &root.join("no"), &read_args("no", None, None)).unwrap_err();
    assert_eq!(missing.code, ToolErrorCode::Exec(ErrorCode::NotFound));
    #[cfg(unix)]
    {
        let fifo = root.join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let error = read(&scope, &fifo, &read_args("fifo", None, None)).unwrap_err();
        assert!(
            error.message.contains("not a regular file"),
            "{}",
            error.message
        );
        let error = read(
            &scope,
            Path::new("/dev/zero"),
            &read_args("/dev/zero", None, None),
        )
        .unwrap_err();
        assert!(
            error.message.contains("not a regular file"),
            "{}",
            error.message
        );
    }
}

#[test]
fn a_long_line_is_cut_and_the_output_cap_holds() {
    let (_dir, root) = workspace();
    std::fs::write(root.join("long"), "x".repeat(1_000_000) + "\nend\n").unwrap();
    let scope = scope(&root);
    let out = read(&scope, &root.join("long"), &read_args("long", None, None)).unwrap();
    assert!(out.content.len() < 10_000, "{}", out.content.len());
    assert!(
        out.content.contains("more characters]"),
        "{}",
        &out.content[..100]
    );
    assert!(out.content.contains("     2\tend"), "{}", out.content);
    let many: String = (0..1_000).map(|i| format!("{i:0>90}\n")).collect();
    std::fs::write(root.join("many"), many).unwrap();
    let small = Scope {
        max_chars: 5_000,
        ..scope.clone()
    };
    let out = read(&small, &root.join("many"), &read_args("many", None, None)).unwrap();
    assert!(out.content.len() < 6_000, "{}", out.content.len());
    assert!(
        out.content.contains("the output cap was reached"),
        "{}",
        out.content
    );
}

fn edit_args(old: &str, new: &str, all: bool) -> EditArgs {
    EditArgs {
        path: "f".into(),
        old_string: old.into(),
        new_string: new.into(),
        replace_all: all.then_some(true),
    }
}

#[test]
fn an_edit_must_match_exactly_once_unless_replace_all() {
    let (_dir, root) = workspace();
    let path = root.join("f");
    std::fs::write(&path, "a b a\n").unwrap();
    let scope = scope(&root);
    let none = prepare_edit(&scope, &path, &edit_args("zz", "y", false)).unwrap_err();
    assert!(none.message.contains("(0 matches)"), "{}", none.message);
    let twice = prepare_edit(&scope, &path, &edit_args("a", "y", false)).unwrap_err();
    assert!(twice.message.contains("found 2 times"), "{}", twice.message);
    let all = prepare_edit(&scope, &path, &edit_args("a", "y", true)).unwrap();
    assert_eq!(all.new, "y b y\n");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "a b a\n");
    let out = apply(&all).unwrap();
    assert_eq!(out.summary, "+1 \u{2212}1");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "y b y\n");
}

#[test]
fn an_edit_of_a_file_changed_on_disk_writes_nothing() {
    let (_dir, root) = workspace();
    let path = root.join("f");
    std::fs::write(&path, "one\n").unwrap();
    let scope = scope(&root);
    let change = prepare_edit(&scope, &path, &edit_args("one", "two", false)).unwrap();
    std::fs::write(&path, "one, changed\n").unwrap();
    let error = apply(&change).unwrap_err();
    assert!(
        error.message.contains("changed on disk"),
        "{}",
        error.message
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one, changed\n");
    // A file that appeared after a write_file of a new one was prepared.
    let new = root.join("new");
    let args = WriteArgs {
        path: "new".into(),
        content: "mine\n".into(),
    };
    let change = prepare_write(&scope, &new, &args).unwrap();
    std::fs::write(&new, "theirs\n").unwrap();
    assert!(apply(&change).is_err());
    assert_eq!(std::fs::read_to_string(&new).unwrap(), "theirs\n");
}

#[test]
fn edits_refuse_binary_and_special_files() {
    let (_dir, root) = workspace();
    let scope = scope(&root);
    std::fs::write(root.join("latin1"), b"caf\xe9\n").unwrap();
    let error =
        prepare_edit(&scope, &root.join("latin1"), &edit_args("caf", "x", false)).unwrap_err();
    assert!(
        error.message.contains("not valid UTF-8"),
        "{}",
        error.message
    );
    std::fs::create_dir(root.join("d")).unwrap();
    let args = WriteArgs {
        path: "d".into(),
        content: "x".into(),
    };
    let error = prepare_write(&scope, &root.join("d"), &args).unwrap_err();
    assert!(
        error.message.contains("is a directory"),
        "{}",
        error.message
    );
}

#[cfg(unix)]
#[test]
fn a_write_is_atomic_and_keeps_the_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let (_dir, root) = workspace();
    let scope = scope(&root);
    let path = root.join("run.sh");
    std::fs::write(&path, "echo a\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
    let args = WriteArgs {
        path: "run.sh".into(),
        content: "echo b\n".into(),
    };
    apply(&prepare_write(&scope, &path, &args).unwrap()).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo b\n");
    let leftovers: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, vec![std::ffi::OsString::from("run.sh")]);
    // A new file in new directories.
    let deep = root.join("a/b/c.txt");
    let args = WriteArgs {
        path: "a/b/c.txt".into(),
        content: "x\n".into(),
    };
    let out = apply(&prepare_write(&scope, &deep, &args).unwrap()).unwrap();
    assert_eq!(out.content, "created `a/b/c.txt` (1 line)");
}

#[test]
fn list_and_search_follow_ignore_rules_and_skip_secrets() {
    let (_dir, root) = workspace();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::create_dir_all(root.join(".hidden")).unwrap();
    std::fs::write(root.join(".ignore"), "target/\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn add() {}\nfn sub() {}\n").unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() { add() }\n").unwrap();
    std::fs::write(root.join("target/out.rs"), "fn add() {}\n").unwrap();
    std::fs::write(root.join(".hidden/x.rs"), "fn add() {}\n").unwrap();
    std::fs::write(root.join(".env"), "fn add = SECRET\n").unwrap();
    let scope = scope(&root);
    let all = ListArgs {
        path: None,
        pattern: None,
    };
    let listed = list(&scope, &root, &all).unwrap();
    assert_eq!(listed.content, "src/lib.rs\nsrc/main.rs\n");
    let rs = ListArgs {
        path: None,
        pattern: Some("**/main.rs".into()),
    };
    assert_eq!(list(&scope, &root, &rs).unwrap().content, "src/main.rs\n");
    let args = SearchArgs {
        pattern: "fn add".into(),
        path: None,
        glob: None,
        ignore_case: None,
        context: None,
    };
    let found = search(&scope, &root, &args).unwrap();
    assert_eq!(found.content, "src/lib.rs:1: fn add() {}\n");
    assert_eq!(found.summary, "1 match");
    let args = SearchArgs {
        pattern: "ADD".into(),
        ignore_case: Some(true),
        context: Some(1),
        glob: Some("*.rs".into()),
        ..args
    };
    let found = search(&scope, &root, &args).unwrap();
    assert_eq!(
        found.content,
        "src/lib.rs:1: fn add() {}\nsrc/lib.rs-2- fn sub() {}\nsrc/main.rs:1: fn main() { add() }\n"
    );
    assert_eq!(found.summary, "2 matches");
    let bad = SearchArgs {
        pattern: "(".into(),
        ..args
    };
    assert!(
        search(&scope, &root, &bad)
            .unwrap_err()
            .message
            .contains("not a valid regular")
    );
}

#[test]
fn arguments_are_checked() {
    for (name, args, needle) in [
        (READ_FILE, "{}", "missing field `path`"),
        (READ_FILE, r#"{"path":""}"#, "`path` is empty"),
        (READ_FILE, r#"{"path":"a","x":1}"#, "unknown field `x`"),
        (SEARCH, r#"{"path":"a"}"#, "missing field `pattern`"),
        (
            EDIT_FILE,
            r#"{"path":"a","old_string":"x"}"#,
            "missing field `new_string`",
        ),
        (WRITE_FILE, "[1]", "must be a JSON object"),
        (LIST_FILES, "{nope", "not valid JSON"),
    ] {
        let error = FileCall::parse(name, args).unwrap_err();
        assert_eq!(error.code, ToolErrorCode::InvalidArguments);
        assert!(
            error.message.contains(needle),
            "{name} {args}: {}",
            error.message
        );
    }
    let call = FileCall::parse(LIST_FILES, "").unwrap();
    assert_eq!(call.path(), None);
    assert_eq!(call.label("."), "list .");
    let call = FileCall::parse(SEARCH, r#"{"pattern":"fn add"}"#).unwrap();
    assert_eq!(call.label("."), "search \"fn add\"");
}

#[test]
fn the_specs_are_short() {
    let bytes: usize = specs()
        .iter()
        .map(|spec| spec.description.len() + spec.parameters.to_string().len())
        .sum();
    assert!(bytes < 2_500, "{bytes}");
}

#[test]
fn a_file_opened_elsewhere_than_decided_is_refused() {
    let decided = Path::new("/w/src/main.rs");
    assert!(same_as_decided(decided, decided, "src/main.rs").is_ok());
    // Win32 opened `ENV~1` as `.env`, or the file was swapped for a link in between.
    let error = same_as_decided(Path::new("/w/ENV~1"), Path::new("/w/.env"), "ENV~1").unwrap_err();
    assert!(
        error.message.contains("`/w/.env` on disk"),
        "{}",
        error.message
    );
}
