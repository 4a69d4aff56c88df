//! cmd.exe decisions and deny rules.

use super::*;

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

/// The device names Win32 reserves, as the tests spell them (`windows_path` has its own).
fn device_names() -> Vec<String> {
    let mut names: Vec<String> = ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"]
        .iter()
        .map(|d| (*d).to_owned())
        .collect();
    for prefix in ["COM", "LPT"] {
        for digit in [
            '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '¹', '²', '³',
        ] {
            names.push(format!("{prefix}{digit}"));
        }
    }
    names
}

/// Every spelling of one device path: cases × extensions × directories.
fn device_paths() -> Vec<String> {
    let mut paths = Vec::new();
    for name in device_names() {
        let lower = name.to_lowercase();
        let mixed: String = name
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i % 2 == 0 {
                    c
                } else {
                    c.to_ascii_lowercase()
                }
            })
            .collect();
        for case in [name.clone(), lower, mixed] {
            for extension in ["", ".txt", ".rs", ".tar.gz", ".", ".."] {
                for directory in ["", "src\\", "src/", "a\\b\\", ".\\"] {
                    paths.push(format!("{directory}{case}{extension}"));
                }
            }
        }
    }
    paths
}

/// One name matching each secret pattern (`*` becomes `a1`).
fn secret_names() -> Vec<String> {
    include_str!("../../../assets/secret-files.txt")
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|pattern| pattern.replace('*', "a1"))
        .collect()
}

/// `type` and `dir` judge a path as Win32 opens it (issue 33): devices in any case,
/// extension and directory, 8.3 short names, and secret files with trailing dots ask.
#[test]
fn windows_paths_are_judged_as_win32_opens_them() {
    let mut cases: Vec<(String, Verdict)> = Vec::new();
    for path in device_paths() {
        cases.push((format!("type {path}"), Ask));
        cases.push((format!("type README.md,{path}"), Ask));
        cases.push((format!("dir {path}"), Ask));
        cases.push((format!("type {path}\\x.rs"), Ask));
    }
    for name in secret_names() {
        for trailing in [".", "..", "...", ". ."] {
            if trailing.contains(' ') {
                continue; // a blank splits the word in cmd.exe
            }
            cases.push((format!("type {name}{trailing}"), Ask));
            cases.push((format!("type src\\{name}{trailing}"), Ask));
            cases.push((format!("type {}{trailing}", name.to_uppercase()), Ask));
        }
    }
    for (command, want) in [
        ("type ENV~1", Ask),
        ("type src\\PROGRA~1\\x.rs", Ask),
        ("type a~9.txt", Ask),
        ("dir ENV~1", Ask),
        ("dir src\\nul", Ask),
        ("dir /w,con", Ask),
        ("type x/con.txt", Ask),
        ("type server.pem.", Ask),
        ("type .npmrc.", Ask),
        // Names that only look alike stay allowed.
        ("type README.md.", Allow),
        ("type src\\console.rs", Allow),
        ("type src\\com10.rs", Allow),
        ("type notes~.md", Allow),
        ("type auxiliary.txt", Allow),
        ("dir src", Allow),
        ("dir /w src", Allow),
        ("dir C:\\Users", Allow),
    ] {
        cases.push((command.to_owned(), want));
    }
    let cases: Vec<(&str, Verdict)> = cases.iter().map(|(c, v)| (c.as_str(), *v)).collect();
    inspect_table(OsFamily::Windows, &cases);
}

/// The file tools on Windows: the same rules for the path they were given (resolved), in
/// every mode short of `off` a device, short name or secret with trailing dots asks.
#[test]
fn windows_file_tools_judge_paths_as_win32_opens_them() {
    use super::files::{Access, Edits, FileRules, decide_on};
    let root = std::path::PathBuf::from("/w");
    let rules = FileRules::new(root, Vec::new(), &[], Edits::Allow, Vec::new()).unwrap();
    let mut failures = Vec::new();
    let mut check = |path: String, want: Verdict| {
        for access in [Access::Read, Access::Write] {
            let got = decide_on(
                OsFamily::Windows,
                &rules,
                access,
                std::path::Path::new(&path),
            );
            if got.verdict != want {
                failures.push(format!("{access:?} {path}: want {want:?}, got {got:?}"));
            }
        }
    };
    for path in device_paths() {
        check(format!("/w/{}", path.replace('\\', "/")), Ask);
    }
    for name in secret_names() {
        for trailing in ["", ".", " ", ". .", "  ..", "...."] {
            check(format!("/w/{name}{trailing}"), Ask);
            check(format!("/w/src/{name}{trailing}"), Ask);
        }
    }
    check("/w/ENV~1".to_owned(), Ask);
    check("/w/src/main.rs".to_owned(), Allow);
    check("/w/src/main.rs.".to_owned(), Allow);
    check("/w/src/console.rs".to_owned(), Allow);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Elsewhere those are ordinary names.
    let unix = decide_on(
        OsFamily::Unix,
        &rules,
        Access::Write,
        std::path::Path::new("/w/con.txt"),
    );
    assert!(unix.verdict == Allow, "{unix:?}");
}
