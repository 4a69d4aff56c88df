//! The tools a run offers the model by default, in the order they are sent.

/// `shell`, the five file tools and, on Linux (where background processes run), `processes`.
pub fn offered() -> Vec<&'static str> {
    let mut tools = vec![
        "shell",
        "read_file",
        "list_files",
        "search",
        "edit_file",
        "write_file",
    ];
    if cfg!(target_os = "linux") {
        tools.push("processes");
    }
    tools
}
