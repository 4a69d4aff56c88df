//! What every request carries before the conversation: the system prompt (OS, shell,
//! workspace, the tool's rules, the sandbox, the project's instructions) and the tools
//! offered, with their estimated size.

use super::{Config, shell_tool};
use crate::exec;
use crate::policy::{Mode, OsFamily};

/// The estimated tokens of what every request carries before the conversation: the system
/// prompt and the tool definitions (`agent config show` prints it; a server's context must
/// hold it with room to spare).
#[must_use]
pub fn fixed_prompt_tokens(config: &Config) -> u64 {
    crate::model::overflow::fixed_prompt_tokens(&system_prompt(config), &offered_tools(config))
}

/// The tools offered to the model: none in mode `off`, else `shell`, the file tools,
/// `web_fetch` when the network settings offer it, and the MCP servers' tools.
pub(super) fn offered_tools(config: &Config) -> Vec<crate::model::ToolSpec> {
    if config.mode == Mode::Off {
        return Vec::new();
    }
    let mut tools = vec![shell_tool(config.os, &config.shell)];
    tools.extend(crate::tools::specs());
    if crate::sandbox::HELPER_PASSES_SIGNALS {
        tools.push(super::background_call::processes_tool());
    }
    if config.web_fetch.is_some() {
        tools.push(crate::tools::web_fetch::spec());
    }
    if let Some(servers) = &config.mcp {
        tools.extend(servers.tools().iter().map(crate::mcp::OfferedTool::spec));
    }
    tools
}

/// Offers the tools again when an MCP server said its tools changed (it is listed again
/// before the next request).
pub(super) async fn refresh_tools(config: &Config, tools: &mut Vec<crate::model::ToolSpec>) {
    if let Some(mcp) = &config.mcp
        && mcp.refresh().await
    {
        *tools = offered_tools(config);
    }
}

/// Hosts named in the system prompt; past it, "and N more".
const MAX_HOSTS_TOLD: usize = 12;

/// What the network proxy lets commands reach (`[network] mode = "allowlist"`): the hosts,
/// bounded, and what to do about another one.
fn proxy_sentence(config: &Config) -> String {
    let reach = &config.network_reach;
    let mut named: Vec<String> = reach
        .iter()
        .take(MAX_HOSTS_TOLD)
        .map(|host| format!("`{host}`"))
        .collect();
    if reach.len() > MAX_HOSTS_TOLD {
        named.push(format!("and {} more", reach.len() - MAX_HOSTS_TOLD));
    }
    let hosts = if named.is_empty() {
        "no host at all".to_owned()
    } else {
        named.join(", ")
    };
    let auto = if config.mode == Mode::Auto {
        " (commands that run without the user's yes get no network)"
    } else {
        ""
    };
    let other = if config.network_questions.is_some() {
        "Any other host is asked about at the user's terminal while the command waits; one \
         they refuse"
    } else {
        "Any other host"
    };
    format!(
        " and reach the network only through the agent's proxy{auto}, to these hosts: {hosts}. \
         {other} is refused (`403` naming the setting that would allow it; the result lists it \
         under `network_refused`): do not retry it or work around the proxy; ask the user to \
         add the host to `[network] allow` in their settings"
    )
}

/// What the sandbox lets commands do, for the system prompt (empty when it is not active).
fn sandbox_sentence(config: &Config) -> String {
    use crate::sandbox::SandboxMode;
    let Some(policy) = config.sandbox.active_policy() else {
        return String::new();
    };
    let writes = match policy.mode {
        SandboxMode::ReadOnly => "cannot write any file".to_owned(),
        SandboxMode::WorkspaceWrite | SandboxMode::Off => format!(
            "can write only inside {}",
            policy
                .writable
                .iter()
                .map(|dir| dir.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let network = if policy.network {
        String::new()
    } else if policy.proxy.is_some() {
        proxy_sentence(config)
    } else {
        " and cannot use the network".to_owned()
    };
    format!(
        " Commands run in a sandbox: they can read files but {writes}{network}; a result with \
         `sandbox_denied` means the sandbox likely refused something. If the task needs more, \
         retry with `escalate` (`network`: hosts or true, or `outside_sandbox`: true, and a \
         `reason`): the user decides."
    )
}

/// How to run a dev server or a watcher, where background processes can start (the Linux
/// sandbox active: nothing they start outlives the run); empty elsewhere, where `background`
/// is refused.
fn background_sentence(config: &Config) -> &'static str {
    if crate::sandbox::HELPER_PASSES_SIGNALS && config.sandbox.active_policy().is_some() {
        " For a dev server or a watcher, call `shell` with `background: true`: it returns at once \
         with the process's id, has no timeout, and the process ends when this session ends; \
         read its output or stop it with the `processes` tool."
    } else {
        ""
    }
}

/// What the MCP servers' tools are, when any are offered.
fn mcp_sentence(config: &Config) -> &'static str {
    if config
        .mcp
        .as_ref()
        .is_some_and(|mcp| !mcp.tools().is_empty())
    {
        " Tools named `mcp__SERVER__TOOL` come from MCP servers the user configured: each call \
         needs the user's approval unless a rule allows it, and may be denied."
    } else {
        ""
    }
}

/// The system prompt: OS, shell, workspace and the rules of the tool.
#[must_use]
pub fn system_prompt(config: &Config) -> String {
    let os = match config.os {
        OsFamily::Unix => std::env::consts::OS,
        OsFamily::Windows => "windows",
    };
    let tool = if config.mode == Mode::Off {
        "No tools are available in this session: answer from what you know and what the user said."
            .to_owned()
    } else {
        format!(
            "You can run shell commands with the `shell` tool. Each command runs with `{shell}` as a \
             fresh process in {cwd} (or a `working_directory` inside it): no state carries over between \
             calls except files, stdin is closed, it is killed after {timeout}, and stdout plus stderr \
             are capped at {cap} characters. Every command passes a permission policy: read-only \
             commands and allow rules run at once, as does a pipeline or list (`|` `&&` `;`) whose \
             every part would; anything else needs the user's approval and may be denied. `$`, \
             backticks and redirections always do. Give every call a short `description` the user will read. When a call \
             is denied, do not repeat it unchanged: adapt, or explain what you need. To look at \
             code use `read_file`, `list_files` and `search` (free inside the workspace), not \
             `cat`, `ls`, `find` or `grep`; to change a file use `edit_file` or `write_file` (the \
             user approves a diff), not `sed -i`, `echo >` or a here-document.",
            shell = config.shell,
            cwd = config.workspace.display(),
            timeout = exec::describe_duration(config.limits.timeout),
            cap = config.limits.max_output_chars,
        ) + &sandbox_sentence(config)
            + background_sentence(config)
            + mcp_sentence(config)
    };
    format!(
        "You are agent, a coding assistant working in a terminal on {os}, in the directory {cwd}.\n\
         {tool}\nWhen you are done, reply with a short final answer grounded in what the commands showed.{instructions}",
        cwd = config.workspace.display(),
        instructions = config.instructions.prompt_section(),
    )
}
