//! Paths as strings, and stand-in programs first on `PATH`.

use std::path::Path;

pub fn path_str(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Writes an executable script `name` holding `script` into `dir` (made when missing), and
/// returns a `PATH` that finds it before anything of the same name: a stand-in for a program.
#[cfg(unix)]
pub fn first_on_path(dir: &Path, name: &str, script: &str) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let program = dir.join(name);
    std::fs::write(&program, script).unwrap();
    let mut permissions = std::fs::metadata(&program).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&program, permissions).unwrap();
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}
