//! The command line: clap definitions and help text, nothing else. Converted
//! once into settings and requests; no other module sees clap types.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod mcp;
mod values;
pub use mcp::{McpArgs, McpCommand};

use crate::model::ProviderKind;
use crate::policy::{Mode, OsFamily};
use crate::sandbox::SandboxMode;

/// The first steps, under `agent --help`.
macro_rules! start_here {
    () => {
        "Start here:\n  agent                                             a session at the terminal: type, read, type again\n  agent run --provider demo 'list the files here'   the offline demo model, no key needed\n  agent check 'git push'                            what the policy would do with a command\n  agent config init                                 write a commented settings file\n\nEach command has its own --help (`agent run --help`); the guide is README.md and docs/."
    };
}

/// The one table of exit statuses (docs/ci.md has the same), under `agent --help`,
/// `agent run --help` and in the man page.
macro_rules! exit_status {
    () => {
        "Exit status:\n  0    done (run: also when --max-turns stopped it)\n  1    provider, network or I/O failure (exec: also when the command could not start)\n  2    usage or settings error\n  3    run --fail-on-deny: the run answered but a command was denied; check: ask\n  4    check: deny\n  5    run: the answer was printed but cut at the output limit (raise --max-output-tokens)\n  6    run: --max-tokens or --max-time stopped it\n  124  exec: the command timed out (otherwise exec exits with the command's status)\n  130  interrupted (Ctrl+C); 129, 131, 143: stopped by SIGHUP, SIGQUIT, SIGTERM (a running\n       command is ended first)"
    };
}

/// A terminal coding agent that never runs a command you did not allow.
///
/// The model asks to run shell commands; each one passes a permission policy
/// (built-in read-only list, your allow/deny rules) and, where the policy is
/// unsure, a prompt on your terminal. Without a terminal to ask, it denies.
#[derive(Debug, Parser)]
#[command(name = "agent", version = crate::VERSION, about, long_about = None)]
#[command(propagate_version = true, max_term_width = 100)]
#[command(
    after_help = start_here!(),
    after_long_help = concat!(start_here!(), "\n\n", exit_status!())
)]
pub struct Cli {
    /// What to do; none at a terminal opens an interactive session (as `agent run -i`).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// With no command: continue the latest run in this workspace in a session.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub continue_latest: bool,
    /// With no command: continue run ID in a session; without an ID, pick one of this
    /// workspace's recent runs.
    #[arg(long, value_name = "ID", num_args = 0..=1)]
    pub resume: Option<Option<String>>,
    /// Options shared by every command.
    #[command(flatten)]
    pub global: GlobalArgs,
}

/// Options every subcommand accepts.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Read this settings file instead of the user settings file.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Overlay the keys of `[profiles.NAME]` from the settings.
    #[arg(long, global = true, value_name = "NAME")]
    pub profile: Option<String>,
    /// Work in DIR instead of the current directory.
    #[arg(short = 'C', long = "cwd", global = true, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Print machine-readable JSON.
    #[arg(long, global = true)]
    pub json: bool,
    /// Print less (errors only).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print more detail.
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// When to use colour (NO_COLOR is respected).
    #[arg(long, global = true, value_enum, default_value_t = Color::Auto, value_name = "WHEN")]
    pub color: Color,
}

/// When to use colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Color {
    /// Colour on a terminal, unless NO_COLOR is set.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Drive the model loop on a task: PROMPT, or stdin when PROMPT is `-` or absent and stdin is piped;
    /// with PROMPT, piped stdin is sent with it as context (up to 256 KiB).
    ///
    /// The model's tools: `shell` runs a command (on Linux also one that runs
    /// on in the background until the run ends, which `processes` lists, reads
    /// and stops); `read_file`, `list_files` and `search` look at files;
    /// `edit_file` and `write_file` change them (you approve a diff). Each command passes the permission
    /// policy: read-only commands and your allow rules run at once — so does a
    /// pipeline or list (`|` `&&` `;`) whose every part does — deny rules never
    /// run, everything else is shown to you for a yes or no. Without a terminal to ask (pipes, CI, cron) it is denied, never
    /// waited for. With no provider configured and no API key set, the offline
    /// demo model runs.
    ///
    /// The final answer goes to stdout; progress to stderr (or the live pane on a
    /// terminal). Every run is recorded under `agent history`.
    #[command(
        after_help = concat!(
            "Examples:\n  agent run 'list the files here'\n  echo 'what OS is this' | agent run\n  agent run --provider ollama --model llama3.2 'show git status'\n  agent run --allow 'cargo test' --json 'run the tests' > events.ndjson\n  CI=true agent run --allow 'python3 -m pytest' --allow-edits 'fix the failing test'\n  agent run --continue 'now fix it'\n  agent run --max-tokens 200000 --max-time 10m 'fix the failing test'\n\n",
        exit_status!()
    )
    )]
    Run(RunArgs),

    /// Run COMMAND through the same runner the model uses (no policy: you typed it).
    ///
    /// Runs `sh -c COMMAND` (cmd.exe on Windows) in its own process group with
    /// stdin closed, the model API keys removed from the environment, a timeout
    /// and an output cap. Output streams through as it comes; the exit status is
    /// the command's (124 on timeout). With --json, prints one result object.
    #[command(
        after_help = "Examples:\n  agent exec 'ls -la'\n  agent exec --json --timeout 5 -- cargo test\n  agent exec -C /tmp -- 'du -sh .'"
    )]
    Exec(ExecArgs),

    /// Print the policy decision for COMMAND (or one per stdin line); runs nothing, ever.
    ///
    /// The decision is what `agent run` would do before asking anyone: allow
    /// (built-in read-only list or an allow rule), ask (a person must confirm;
    /// denied where there is no terminal) or deny (a deny rule matched). Uses
    /// your settings, the project file and the flags below.
    ///
    /// Exit status: 0 allow, 3 ask, 4 deny, 2 usage or settings error; with
    /// --stdin, the strictest decision seen.
    #[command(
        after_help = "Examples:\n  agent check 'git status'\n  agent check --json -- 'rm -rf build'\n  agent check --deny 'git push' -- 'git push --force'\n  agent check --stdin < commands.txt"
    )]
    Check(CheckArgs),

    /// List past runs, or show one, from their transcripts.
    #[command(
        after_help = "Transcripts live in $XDG_STATE_HOME/agent/runs (~/.local/state/agent/runs)."
    )]
    History(HistoryArgs),

    /// Where settings live, and the merged settings with the source of each value.
    #[command(subcommand)]
    Config(ConfigCommand),

    /// List every allow and deny rule with where it comes from, add one, or remove one.
    ///
    /// Rules come from your settings file (everywhere, or this workspace's
    /// `[projects."<path>"]` table that `3` at the prompt writes), a `--profile`, the
    /// project file `.agent/settings.toml` (deny only) and `--allow`/`--deny`.
    /// `agent rules add` writes one as `a`/`3` at the prompt would.
    #[command(
        after_help = "Examples:\n  agent rules\n  agent rules --json\n  agent rules add 'python3 -m pytest'\n  agent rules add --deny 'git push'\n  agent rules remove 'cargo test'"
    )]
    Rules(RulesArgs),

    /// MCP servers: list them with their tools, add or remove one, approve a project's.
    ///
    /// Servers come from your settings file (`[mcp.servers.NAME]`) or a `--profile`; a
    /// project file can only propose one, which starts after `agent mcp approve NAME`.
    /// Every call of a server's tool asks at the prompt unless a rule `mcp:SERVER` or
    /// `mcp:SERVER/TOOL` in your allow list allows it; a local server runs in the sandbox.
    #[command(
        after_help = "Examples:\n  agent mcp list\n  agent mcp add fs -- npx -y @modelcontextprotocol/server-filesystem .\n  agent mcp add github --url https://api.githubcopilot.com/mcp/\n  agent mcp approve docs\n  agent rules add mcp:fs/read_text_file"
    )]
    Mcp(McpArgs),

    /// Show what a run changed in this workspace (default: the newest run).
    ///
    /// Every run that changes files is snapshotted first, into the agent's own repository
    /// outside the project. A coloured unified diff on a terminal, plain text otherwise.
    #[command(
        after_help = "Examples:\n  agent diff\n  agent diff --stat\n  agent diff --json 20260101T120000-ab12"
    )]
    Diff(DiffArgs),

    /// Put back every file a run changed (default: the newest run), as it was before the run.
    ///
    /// Modified files are restored, created files removed, deleted files brought back. A file
    /// changed again since the run ended is not overwritten: it is named and nothing changes
    /// (exit 1) unless --force. At a terminal the list is shown and you are asked once;
    /// without one the command itself is the consent. An undo can itself be undone.
    #[command(
        after_help = "Examples:\n  agent undo --dry-run\n  agent undo\n  agent undo --force 20260101T120000-ab12"
    )]
    Undo(UndoArgs),

    /// Print a shell completion script.
    #[command(
        after_help = "Install, for example:\n  agent completions bash > ~/.local/share/bash-completion/completions/agent\n  agent completions zsh > ~/.zfunc/_agent\n  agent completions fish > ~/.config/fish/completions/agent.fish"
    )]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },

    /// Print the man page (roff) for `agent`, every subcommand and its flags on it.
    #[command(after_help = "Read it with: agent man | man -l -")]
    Man,
}

/// `agent diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The run (its id from `agent history`); default: the newest in this workspace.
    #[arg(value_name = "RUN")]
    pub run: Option<String>,
    /// Only the files and their counts of added and removed lines.
    #[arg(long)]
    pub stat: bool,
}

/// `agent undo`.
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// The run (its id from `agent history`); default: the newest in this workspace.
    #[arg(value_name = "RUN")]
    pub run: Option<String>,
    /// Overwrite files that changed since the run ended.
    #[arg(long)]
    pub force: bool,
    /// Only list what would be restored, removed and brought back.
    #[arg(long)]
    pub dry_run: bool,
}

/// `agent check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Decide as on this OS family (default: this machine's).
    #[arg(long, value_enum, value_name = "OS")]
    pub os: Option<OsFamily>,
    /// Also allow commands starting with PREFIX (repeatable).
    #[arg(long, value_name = "PREFIX")]
    pub allow: Vec<String>,
    /// Also deny commands containing a command starting with PREFIX (repeatable).
    #[arg(long, value_name = "PREFIX")]
    pub deny: Vec<String>,
    /// Decide in this permission mode instead of the settings' (`auto`: as where the
    /// sandbox is fully active and the snapshot whole, when it is so here).
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<Mode>,
    /// Read one command per line from stdin and print one decision per line.
    #[arg(long, conflicts_with = "command")]
    pub stdin: bool,
    /// Decide whether the file tools may read PATH (read_file, list_files, search) instead.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["command", "stdin", "write"])]
    pub read: Option<std::path::PathBuf>,
    /// Decide whether the file tools may write PATH (edit_file, write_file) instead.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["command", "stdin"])]
    pub write: Option<std::path::PathBuf>,
    /// Decide a call of an MCP server's tool instead (SERVER/TOOL).
    #[arg(long, value_name = "SERVER/TOOL", conflicts_with_all = ["command", "stdin", "read", "write"])]
    pub mcp: Option<String>,
    /// The command line; several words are joined with spaces.
    #[arg(value_name = "COMMAND", num_args = 0.., trailing_var_arg = true, required_unless_present_any = ["stdin", "read", "write", "mcp"])]
    pub command: Vec<String>,
}

/// `agent rules`.
#[derive(Debug, Args)]
pub struct RulesArgs {
    /// list (default), add or remove.
    #[command(subcommand)]
    pub command: Option<RulesCommand>,
    /// Also list PREFIX as an allow rule from a flag, as `run --allow` would (repeatable).
    #[arg(long, value_name = "PREFIX")]
    pub allow: Vec<String>,
    /// Also list PREFIX as a deny rule from a flag, as `run --deny` would (repeatable).
    #[arg(long, value_name = "PREFIX")]
    pub deny: Vec<String>,
}

/// `agent rules …`.
#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// List every rule that applies in this workspace, with its source.
    List,
    /// Write RULE into your settings file, as `a` (everywhere) or `3` (--project) at the
    /// prompt would: comments kept, checked first. An allow rule must be plain words and name
    /// more than a program that runs what it is given (`python3 -m pytest`, not `python`;
    /// `make test`, not `make`); a refused rule exits 2 with the reason.
    #[command(
        after_help = "Examples:\n  agent rules add 'python3 -m pytest'\n  agent rules add --project 'make test'\n  agent rules add --deny 'git push'"
    )]
    Add {
        /// The rule: words a command starts with (`cargo test`, `./run_tests.sh`).
        #[arg(value_name = "RULE")]
        rule: String,
        /// A deny rule: commands containing a command that starts with RULE never run.
        #[arg(long)]
        deny: bool,
        /// Only in this workspace: under `[projects."<workspace>".permissions.commands]`.
        #[arg(long)]
        project: bool,
    },
    /// Take RULE out of your settings file: its allow and deny lists, and this workspace's
    /// table (comments kept). Rules from a project file or a flag are not yours to remove here.
    /// Without RULE, at a terminal, pick the rules to remove from a list.
    Remove {
        /// The rule exactly as listed.
        #[arg(value_name = "RULE")]
        rule: Option<String>,
    },
}

/// `agent config …`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the path of the user settings file (it need not exist yet).
    Path,
    /// Print the merged settings and where each value came from.
    Show,
    /// Write a commented settings file to the user path (never overwrites); at a terminal it
    /// asks for the provider, model, base URL and the variable holding the key.
    Init,
}

/// `agent run`.
#[derive(Debug, Default, Args)]
pub struct RunArgs {
    /// Open an interactive session at the terminal: PROMPT, when given, is the first message;
    /// type the next ones below the answer (`/help` lists the session's commands).
    #[arg(short = 'i', long)]
    pub interactive: bool,
    /// The model provider (default: from settings; else openai/anthropic when their key is set; else demo).
    #[arg(long, value_enum, value_name = "PROVIDER")]
    pub provider: Option<ProviderKind>,
    /// The model name (default: the provider's; AGENT_MODEL is respected).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// The provider's base URL (any OpenAI-compatible server: Ollama, vLLM, LM Studio, llama.cpp …).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Longest model reply per turn, in tokens (default: Anthropic 8192, others the server's).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_output_tokens: Option<u32>,
    /// Send an HTTP header with every model request, as `NAME: VALUE` (repeatable; beats
    /// `[model] headers`). Values of names with key, token or authorization in them are never
    /// shown or recorded.
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = parse_header)]
    pub headers: Vec<(String, String)>,
    /// Also allow commands starting with PREFIX, for this run only (repeatable).
    #[arg(long, value_name = "PREFIX")]
    pub allow: Vec<String>,
    /// Also deny commands containing a command starting with PREFIX, for this run (repeatable).
    #[arg(long, value_name = "PREFIX")]
    pub deny: Vec<String>,
    /// Apply the file tools' edits inside the workspace without asking, for this run (as
    /// `[permissions.files] edits = "allow"` in your settings file); shell commands keep their
    /// rules, and `.git`, `.agent`, settings, secret files and paths outside are still never
    /// written.
    #[arg(long)]
    pub allow_edits: bool,
    /// ask: prompt for unsure commands; auto: run them in the sandbox without a prompt (ask
    /// where it is not fully active; sudo, dd, mkfs … and rm/mv leaving the workspace still
    /// ask); deny: never prompt; off: no shell tool; allow-all: run everything not denied
    /// except destructive programs (rm, mv, dd, sudo …), which still ask.
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<Mode>,
    /// Never prompt: every command that would need approval is denied.
    #[arg(long)]
    pub no_prompt: bool,
    /// Stop after N model turns (default 50).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,
    /// Kill each command after SECS seconds (default 30; the model may ask for less).
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub timeout: Option<std::time::Duration>,
    /// Plain line output even on a terminal (no live pane).
    #[arg(long)]
    pub plain: bool,
    /// Exit 3 when any command was denied, after the final answer (for CI; also
    /// `[ci] fail_on_deny = true`). The `done` event lists the denials.
    #[arg(long)]
    pub fail_on_deny: bool,
    /// Do not add AGENTS.md (workspace and git repository root) to the system prompt.
    #[arg(long)]
    pub no_project_instructions: bool,
    /// Stop the run (exit 6) once its model turns used N tokens, input + output as the server
    /// reports them; a continued run counts only this invocation's part.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tokens: Option<u64>,
    /// Stop the run (exit 6) after DURATION of wall time (`90s`, `10m`, `1h 30m`); a running
    /// command is stopped like a timeout. A continued run counts only this invocation.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub max_time: Option<std::time::Duration>,
    /// Continue the latest run in this workspace: its conversation is sent again (its
    /// commands are not re-run) and PROMPT is the next task.
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_latest: bool,
    /// Continue run ID (full or short, as `agent history` shows it), in any workspace; without
    /// an ID, at a terminal, pick one of this workspace's recent runs (then give PROMPT after
    /// `--`, or type it when asked).
    #[arg(long, value_name = "ID", num_args = 0..=1)]
    pub resume: Option<Option<String>>,
    /// The command sandbox.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    /// The task; several words are joined with spaces. `-` or absent: read it from stdin
    /// (when stdin is not a terminal).
    #[arg(value_name = "PROMPT", num_args = 0..)]
    pub prompt: Vec<String>,
}

/// The sandbox flags of `run` and `exec`.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Sandbox")]
pub struct SandboxArgs {
    /// What commands may write: workspace-write (default: the workspace, the temp dir and
    /// `writable` paths), read-only (nothing), off (no sandbox).
    #[arg(long = "sandbox", value_enum, value_name = "MODE")]
    pub sandbox_mode: Option<SandboxMode>,
    /// Let commands use the network inside the sandbox (off by default).
    #[arg(long)]
    pub network: bool,
    /// Refuse to run any command where the sandbox cannot apply.
    #[arg(long)]
    pub sandbox_required: bool,
}

/// `agent history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// list (default) or show.
    #[command(subcommand)]
    pub command: Option<HistoryCommand>,
    /// List the runs of every workspace (with a workspace column), not only this one's.
    #[arg(long, global = true)]
    pub all: bool,
}

/// `agent history …`.
#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// List past runs: time, prompt, turns, commands run and denied, outcome.
    List,
    /// Replay one run readably (--json: its raw events).
    Show {
        /// The run id, or its last characters (the short id).
        id: String,
    },
}

/// `agent exec`.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Kill the command after SECS seconds (default 30; fractions allowed).
    #[arg(long, value_name = "SECS", value_parser = parse_secs)]
    pub timeout: Option<std::time::Duration>,
    /// Keep at most N characters of stdout + stderr (head and tail) in --json output.
    #[arg(long, value_name = "N")]
    pub max_output_chars: Option<usize>,
    /// The command sandbox.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    /// The command line; several words are joined with spaces.
    #[arg(required = true, value_name = "COMMAND", num_args = 1.., trailing_var_arg = true)]
    pub command: Vec<String>,
}

/// Parses a positive duration written for people (`90s`, `10m`, `1h 30m`).
///
/// # Errors
/// When the value is not a duration or is zero.
pub fn parse_duration(value: &str) -> Result<std::time::Duration, String> {
    let duration = humantime::parse_duration(value.trim())
        .map_err(|error| format!("`{value}` is not a duration like `90s` or `10m`: {error}"))?;
    if duration.is_zero() {
        return Err(format!("`{value}` must be longer than zero"));
    }
    Ok(duration)
}

/// `NAME: VALUE` (spaces around the value trimmed) for `--header`.
///
/// # Errors
/// No colon, an empty name, or characters a header cannot carry.
pub fn parse_header(value: &str) -> Result<(String, String), String> {
    let (name, header_value) = value.split_once(':').ok_or_else(|| {
        "expected `NAME: VALUE`, e.g. `HTTP-Referer: https://example.com`".to_owned()
    })?;
    let (name, header_value) = (name.trim(), header_value.trim());
    if name.is_empty() || !crate::model::valid_header(name, header_value) {
        return Err(format!(
            "`{name}` is not a valid HTTP header (name: letters, digits and `-`; value: no \
             control characters)"
        ));
    }
    Ok((name.to_owned(), header_value.to_owned()))
}

/// Parses a positive number of seconds, fractions allowed.
///
/// # Errors
/// When the value is not a positive finite number.
pub fn parse_secs(value: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = value
        .parse()
        .map_err(|_| format!("`{value}` is not a number of seconds"))?;
    if !secs.is_finite() || secs <= 0.0 || secs > 86_400.0 * 365.0 {
        return Err(format!("`{value}` must be a positive number of seconds"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}
