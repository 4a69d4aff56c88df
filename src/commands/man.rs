//! `agent man`: one self-contained page, agent(1), with every subcommand's synopsis,
//! description and flags in a section of its own (`AGENT RUN`, `AGENT HISTORY SHOW` …), so
//! that `agent man | man -l -` shows them all and the page names no `agent-run(1)` page that
//! is not installed. Each part is rendered by `clap_mangen` and joined here: the subcommand
//! pages lose their title, NAME and VERSION, and their sections become subsections.

use clap::Command;

/// The page for `root` (the `agent` command), roff.
///
/// # Errors
/// Rendering failed (a bug: it writes to memory).
pub(crate) fn page(root: Command) -> std::io::Result<String> {
    let root = root.disable_help_subcommand(true);
    let main = render(root.clone())?;
    let mut commands = String::new();
    for sub in visible(&root) {
        commands.push_str(&section(&sub, root.get_name())?);
    }
    // The commands take the place of clap_mangen's list of `agent-…(1)` pages.
    let (before, list_and_after) = main
        .split_once(".SH SUBCOMMANDS\n")
        .unwrap_or((main.as_str(), ""));
    let after = list_and_after
        .find("\n.SH ")
        .map_or("", |at| &list_and_after[at + 1..]);
    Ok(format!("{before}{commands}{after}"))
}

/// The visible subcommands of `command`, without clap's `help`.
fn visible(command: &Command) -> Vec<Command> {
    command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
        .cloned()
        .map(|sub| sub.disable_help_subcommand(true))
        .collect()
}

/// `.SH "AGENT RUN"`, its about line, then its synopsis, description and options as
/// subsections; then its own subcommands' sections.
fn section(command: &Command, parent: &str) -> std::io::Result<String> {
    let name = format!("{parent} {}", command.get_name());
    let page = render(command.clone().bin_name(&name))?;
    let mut out = format!(".SH \"{}\"\n", name.to_uppercase());
    let mut skipping = false;
    for line in page.lines() {
        if line.starts_with(".ie ") || line.starts_with(".el ") || line.starts_with(".TH ") {
            continue;
        }
        if let Some(heading) = line.strip_prefix(".SH ") {
            // NAME repeats the heading; VERSION is the page's; SUBCOMMANDS follow as sections.
            skipping = matches!(heading, "NAME" | "VERSION" | "SUBCOMMANDS");
            if !skipping {
                out.push_str(&format!(".SS {heading}\n"));
            }
            continue;
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    for sub in visible(command) {
        out.push_str(&section(&sub, &name)?);
    }
    Ok(out)
}

fn render(command: Command) -> std::io::Result<String> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command).render(&mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roff(text: &str) -> String {
        text.replace('-', "\\-")
    }

    /// Every subcommand, at any depth, has its section, and every flag it takes is in it;
    /// no page is referred to that does not exist.
    #[test]
    fn every_subcommand_s_flags_are_on_the_one_page() {
        let root = <crate::cli::Cli as clap::CommandFactory>::command();
        let page = page(root.clone()).unwrap_or_default();
        assert!(!page.contains("(1)"), "a page is referred to:\n{page}");
        let mut stack: Vec<(String, Command)> = visible(&root)
            .into_iter()
            .map(|sub| (format!("agent {}", sub.get_name()), sub))
            .collect();
        let mut seen = 0;
        while let Some((name, command)) = stack.pop() {
            seen += 1;
            let heading = format!(".SH \"{}\"\n", name.to_uppercase());
            let start = page
                .find(&heading)
                .unwrap_or_else(|| panic!("no section for `{name}`"));
            let body = &page[start + heading.len()..];
            let body = &body[..body.find("\n.SH ").unwrap_or(body.len())];
            for arg in command.get_arguments().filter(|arg| !arg.is_hide_set()) {
                if let Some(long) = arg.get_long() {
                    assert!(
                        body.contains(&roff(&format!("--{long}"))),
                        "`{name}` lacks --{long}:\n{body}"
                    );
                }
            }
            stack.extend(
                visible(&command)
                    .into_iter()
                    .map(|sub| (format!("{name} {}", sub.get_name()), sub)),
            );
        }
        assert!(seen > 10, "{seen} subcommands");
        assert!(page.contains(".SH VERSION"), "{page}");
        assert_eq!(page.matches(".TH ").count(), 1, "{page}");
    }
}
