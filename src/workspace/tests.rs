use std::path::{Path, PathBuf};

use super::*;

#[test]
fn normalize_applies_dots_lexically_and_stops_at_the_root() {
    let base = Path::new("/w/src");
    let cases = [
        ("a", "/w/src/a"),
        ("./a/./b", "/w/src/a/b"),
        ("../x", "/w/x"),
        ("../../../../x", "/x"),
        ("/etc/../etc/passwd", "/etc/passwd"),
        ("a/../../..", "/"),
        ("", "/w/src"),
    ];
    for (path, want) in cases {
        assert_eq!(
            normalize(base, Path::new(path)),
            PathBuf::from(want),
            "{path}"
        );
    }
}

#[test]
fn inside_is_lexical_and_every_way_out_is_outside() {
    let root = Path::new("/w");
    let cwd = Path::new("/w/src");
    for inside in [
        "a.rs",
        ".",
        "..",
        "../tests/x",
        "/w",
        "/w/a/../b",
        "./",
        "a/b/../../c",
    ] {
        assert!(
            lexically_inside(root, cwd, inside),
            "{inside} should be inside"
        );
    }
    for outside in [
        "../..",
        "../../etc/passwd",
        "/etc/passwd",
        "/",
        "~",
        "~/x",
        "~root/x",
        "/w2/x",
        "/wx",
        "a/../../../w2",
    ] {
        assert!(
            !lexically_inside(root, cwd, outside),
            "{outside} should be outside"
        );
    }
    // A working directory outside the workspace makes relative paths outside.
    assert!(!lexically_inside(root, Path::new("/tmp"), "a"));
}

#[test]
fn generated_paths_climb_out_exactly_when_their_dots_do() {
    // For `depth` directories of cwd below the root `/w`, a path of `ups` `..` then `downs`
    // names (`w`, then `x`…) is inside exactly when it does not climb above `/w`, or climbs to
    // `/` (`..` stops there) and comes back down through `w`.
    let root = Path::new("/w");
    for depth in 0..4 {
        let mut cwd = PathBuf::from("/w");
        for level in 0..depth {
            cwd.push(format!("d{level}"));
        }
        for ups in 0..6 {
            for downs in 0..3 {
                let mut path = vec![".."; ups].join("/");
                for down in 0..downs {
                    if !path.is_empty() {
                        path.push('/');
                    }
                    path.push_str(if down == 0 { "w" } else { "x" });
                }
                let want = ups <= depth || downs > 0;
                assert_eq!(
                    lexically_inside(root, &cwd, &path),
                    want,
                    "cwd {cwd:?} path {path}"
                );
            }
        }
    }
}

#[test]
fn resolve_follows_symlinks_of_existing_ancestors() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("ws")).unwrap();
    let ws = root.join("ws");
    let new_file = resolve(&ws, Path::new("new/dir/file.txt")).unwrap();
    assert_eq!(new_file, ws.join("new/dir/file.txt"));
    assert!(resolved_inside(&ws, &new_file));
    #[cfg(unix)]
    {
        let outside = tempfile::tempdir().unwrap();
        let outside_real = outside.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(&outside_real, root.join("ws/link")).unwrap();
        let through_link = resolve(&ws, Path::new("link/new.txt")).unwrap();
        assert_eq!(through_link, outside_real.join("new.txt"));
        assert!(!resolved_inside(&ws, &through_link));
    }
    let climbing = resolve(&ws, Path::new("../x")).unwrap();
    assert!(!resolved_inside(&ws, &climbing));
}

#[test]
fn the_built_in_secret_list_parses_and_matches_by_component() {
    let secrets = SecretFiles::defaults();
    for secret in [
        ".env",
        ".env.local",
        "config/.ENV.production",
        "certs/server.pem",
        "tls.key",
        "home/.ssh/id_rsa",
        "id_ed25519.pub",
        ".netrc",
        ".npmrc",
        ".pypirc",
        ".git-credentials",
        "credentials",
        "aws/credentials.json",
        "credentials/aws",
        "/etc/ssl/private/x.key",
    ] {
        assert!(
            secrets.is_secret(Path::new(secret)),
            "{secret} should be secret"
        );
    }
    for plain in [
        "src/env.rs",
        "environment.md",
        "keyboard.rs",
        "src/key.rs",
        "monkey.txt",
        "Cargo.toml",
        "README.md",
        "docs/pem-format.md",
    ] {
        assert!(
            !secrets.is_secret(Path::new(plain)),
            "{plain} should not be secret"
        );
    }
    assert_eq!(secrets.matching(Path::new("a/.env")), Some(".env*"));
}

#[test]
fn extra_patterns_with_a_slash_match_the_relative_path() {
    let secrets = SecretFiles::with_extra(["secrets/**", "*.sqlite"]).unwrap();
    assert!(secrets.is_secret(Path::new("secrets/prod/db.txt")));
    assert!(secrets.is_secret(Path::new("data/app.SQLITE")));
    assert!(!secrets.is_secret(Path::new("src/secrets/x")));
    assert!(secrets.is_secret(Path::new(".env")), "defaults stay");
    let error = SecretFiles::with_extra(["a[b"]).unwrap_err();
    assert!(error.contains("`a[b`"), "{error}");
}

proptest::proptest! {
    /// The one-pass reading of a plain relative path answers as its components do, for
    /// generated texts of names, dots, separators, `~`, `:` and non-ASCII characters.
    #[test]
    fn plain_relative_paths_are_read_in_one_pass(text in "[a.~/:\\\\\u{e9}]{0,8}") {
        let want = !text.starts_with(['/', '~'])
            && !text.contains(['\\', ':'])
            && text.split('/').all(|part| !matches!(part, "" | "." | ".."));
        proptest::prop_assert_eq!(is_plain_relative(&text), want, "{:?}", text);
        if want {
            let parts: Vec<&str> = text.split('/').collect();
            let components: Vec<String> = Path::new(&text)
                .components()
                .map(|c| match c {
                    Component::Normal(name) => name.to_string_lossy().into_owned(),
                    other => format!("{other:?}"),
                })
                .collect();
            proptest::prop_assert_eq!(components, parts, "{:?}", text);
        }
    }
}
