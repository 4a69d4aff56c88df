# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_agent_global_optspecs
    string join \n c/continue resume= config= profile= C/cwd= json q/quiet v/verbose color= h/help V/version
end

function __fish_agent_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_agent_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_agent_using_subcommand
    set -l cmd (__fish_agent_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c agent -n "__fish_agent_needs_command" -l resume -d 'With no command: continue run ID in a session; without an ID, pick one of this workspace\'s recent runs' -r
complete -c agent -n "__fish_agent_needs_command" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_needs_command" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_needs_command" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_needs_command" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_needs_command" -s c -l continue -d 'With no command: continue the latest run in this workspace in a session'
complete -c agent -n "__fish_agent_needs_command" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_needs_command" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_needs_command" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_needs_command" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_needs_command" -f -a "run" -d 'Drive the model loop on a task: PROMPT, or stdin when PROMPT is `-` or absent and stdin is piped; with PROMPT, piped stdin is sent with it as context (up to 256 KiB)'
complete -c agent -n "__fish_agent_needs_command" -f -a "exec" -d 'Run COMMAND through the same runner the model uses (no policy: you typed it)'
complete -c agent -n "__fish_agent_needs_command" -f -a "check" -d 'Print the policy decision for COMMAND (or one per stdin line); runs nothing, ever'
complete -c agent -n "__fish_agent_needs_command" -f -a "history" -d 'List past runs, or show one, from their transcripts'
complete -c agent -n "__fish_agent_needs_command" -f -a "config" -d 'Where settings live, and the merged settings with the source of each value'
complete -c agent -n "__fish_agent_needs_command" -f -a "rules" -d 'List every allow and deny rule with where it comes from, add one, or remove one'
complete -c agent -n "__fish_agent_needs_command" -f -a "mcp" -d 'MCP servers: list them with their tools, add or remove one, approve a project\'s'
complete -c agent -n "__fish_agent_needs_command" -f -a "diff" -d 'Show what a run changed in this workspace (default: the newest run)'
complete -c agent -n "__fish_agent_needs_command" -f -a "undo" -d 'Put back every file a run changed (default: the newest run), as it was before the run'
complete -c agent -n "__fish_agent_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c agent -n "__fish_agent_needs_command" -f -a "man" -d 'Print the man page (roff) for `agent`, every subcommand and its flags on it'
complete -c agent -n "__fish_agent_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c agent -n "__fish_agent_using_subcommand run" -l provider -d 'The model provider (default: from settings; else openai/anthropic when their key is set; else demo)' -r -f -a "openai\t'OpenAI Chat Completions, or any compatible server with --base-url'
anthropic\t'Anthropic Messages'
ollama\t'A local Ollama server (http://127.0.0.1:11434/v1, no key)'
demo\t'The offline demo model: no key, no network'"
complete -c agent -n "__fish_agent_using_subcommand run" -l model -d 'The model name (default: the provider\'s; AGENT_MODEL is respected)' -r
complete -c agent -n "__fish_agent_using_subcommand run" -l base-url -d 'The provider\'s base URL (any OpenAI-compatible server: Ollama, vLLM, LM Studio, llama.cpp …)' -r
complete -c agent -n "__fish_agent_using_subcommand run" -l max-output-tokens -d 'Longest model reply per turn, in tokens (default: Anthropic 8192, others the server\'s)' -r
complete -c agent -n "__fish_agent_using_subcommand run" -l header -d 'Send an HTTP header with every model request, as `NAME: VALUE` (repeatable; beats `[model] headers`). Values of names with key, token or authorization in them are never shown or recorded' -r
complete -c agent -n "__fish_agent_using_subcommand run" -l allow -d 'Also allow commands starting with PREFIX, for this run only (repeatable)' -r
complete -c agent -n "__fish_agent_using_subcommand run" -l deny -d 'Also deny commands containing a command starting with PREFIX, for this run (repeatable)' -r
complete -c agent -n "__fish_agent_using_subcommand run" -l mode -d 'ask: prompt for unsure commands; auto: run them in the sandbox without a prompt (ask where it is not fully active; sudo, dd, mkfs … and rm/mv leaving the workspace still ask); deny: never prompt; off: no shell tool; allow-all: run everything not denied except destructive programs (rm, mv, dd, sudo …), which still ask' -r -f -a "ask\t'Prompt for commands the policy is unsure about'
auto\t'Run them in the sandbox without prompting (ask where the sandbox is not fully active; protected programs still ask)'
deny\t'Deny them instead of prompting'
off\t'Offer the model no shell tool at all'
allow-all\t'Allow them, except destructive programs, which still ask'"
complete -c agent -n "__fish_agent_using_subcommand run" -l max-turns -d 'Stop after N model turns (default 50)' -r
complete -c agent -n "__fish_agent_using_subcommand run" -l timeout -d 'Kill each command after SECS seconds (default 30; the model may ask for less)' -r
complete -c agent -n "__fish_agent_using_subcommand run" -l max-tokens -d 'Stop the run (exit 6) once its model turns used N tokens, input + output as the server reports them; a continued run counts only this invocation\'s part' -r
complete -c agent -n "__fish_agent_using_subcommand run" -l max-time -d 'Stop the run (exit 6) after DURATION of wall time (`90s`, `10m`, `1h 30m`); a running command is stopped like a timeout. A continued run counts only this invocation' -r
complete -c agent -n "__fish_agent_using_subcommand run" -l resume -d 'Continue run ID (full or short, as `agent history` shows it), in any workspace; without an ID, at a terminal, pick one of this workspace\'s recent runs (then give PROMPT after `--`, or type it when asked)' -r
complete -c agent -n "__fish_agent_using_subcommand run" -l sandbox -d 'What commands may write: workspace-write (default: the workspace, the temp dir and `writable` paths), read-only (nothing), off (no sandbox)' -r -f -a "workspace-write\t'Write only inside the workspace, the temp dir and the `writable` paths'
read-only\t'Write nothing (but /dev/null and the like)'
off\t'No sandbox: commands may do what you may'"
complete -c agent -n "__fish_agent_using_subcommand run" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand run" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand run" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand run" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand run" -s i -l interactive -d 'Open an interactive session at the terminal: PROMPT, when given, is the first message; type the next ones below the answer (`/help` lists the session\'s commands)'
complete -c agent -n "__fish_agent_using_subcommand run" -l allow-edits -d 'Apply the file tools\' edits inside the workspace without asking, for this run (as `[permissions.files] edits = "allow"` in your settings file); shell commands keep their rules, and `.git`, `.agent`, settings, secret files and paths outside are still never written'
complete -c agent -n "__fish_agent_using_subcommand run" -l no-prompt -d 'Never prompt: every command that would need approval is denied'
complete -c agent -n "__fish_agent_using_subcommand run" -l plain -d 'Plain line output even on a terminal (no live pane)'
complete -c agent -n "__fish_agent_using_subcommand run" -l fail-on-deny -d 'Exit 3 when any command was denied, after the final answer (for CI; also `[ci] fail_on_deny = true`). The `done` event lists the denials'
complete -c agent -n "__fish_agent_using_subcommand run" -l no-project-instructions -d 'Do not add AGENTS.md (workspace and git repository root) to the system prompt'
complete -c agent -n "__fish_agent_using_subcommand run" -l continue -d 'Continue the latest run in this workspace: its conversation is sent again (its commands are not re-run) and PROMPT is the next task'
complete -c agent -n "__fish_agent_using_subcommand run" -l network -d 'Let commands use the network inside the sandbox (off by default)'
complete -c agent -n "__fish_agent_using_subcommand run" -l sandbox-required -d 'Refuse to run any command where the sandbox cannot apply'
complete -c agent -n "__fish_agent_using_subcommand run" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand run" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand run" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand run" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand exec" -l timeout -d 'Kill the command after SECS seconds (default 30; fractions allowed)' -r
complete -c agent -n "__fish_agent_using_subcommand exec" -l max-output-chars -d 'Keep at most N characters of stdout + stderr (head and tail) in --json output' -r
complete -c agent -n "__fish_agent_using_subcommand exec" -l sandbox -d 'What commands may write: workspace-write (default: the workspace, the temp dir and `writable` paths), read-only (nothing), off (no sandbox)' -r -f -a "workspace-write\t'Write only inside the workspace, the temp dir and the `writable` paths'
read-only\t'Write nothing (but /dev/null and the like)'
off\t'No sandbox: commands may do what you may'"
complete -c agent -n "__fish_agent_using_subcommand exec" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand exec" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand exec" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand exec" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand exec" -l network -d 'Let commands use the network inside the sandbox (off by default)'
complete -c agent -n "__fish_agent_using_subcommand exec" -l sandbox-required -d 'Refuse to run any command where the sandbox cannot apply'
complete -c agent -n "__fish_agent_using_subcommand exec" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand exec" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand exec" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand exec" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand exec" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand check" -l os -d 'Decide as on this OS family (default: this machine\'s)' -r -f -a "unix\t'POSIX sh rules and the Unix read-only list'
windows\t'cmd.exe rules and the Windows read-only list'"
complete -c agent -n "__fish_agent_using_subcommand check" -l allow -d 'Also allow commands starting with PREFIX (repeatable)' -r
complete -c agent -n "__fish_agent_using_subcommand check" -l deny -d 'Also deny commands containing a command starting with PREFIX (repeatable)' -r
complete -c agent -n "__fish_agent_using_subcommand check" -l mode -d 'Decide in this permission mode instead of the settings\' (`auto`: as where the sandbox is fully active and the snapshot whole, when it is so here)' -r -f -a "ask\t'Prompt for commands the policy is unsure about'
auto\t'Run them in the sandbox without prompting (ask where the sandbox is not fully active; protected programs still ask)'
deny\t'Deny them instead of prompting'
off\t'Offer the model no shell tool at all'
allow-all\t'Allow them, except destructive programs, which still ask'"
complete -c agent -n "__fish_agent_using_subcommand check" -l read -d 'Decide whether the file tools may read PATH (read_file, list_files, search) instead' -r -F
complete -c agent -n "__fish_agent_using_subcommand check" -l write -d 'Decide whether the file tools may write PATH (edit_file, write_file) instead' -r -F
complete -c agent -n "__fish_agent_using_subcommand check" -l mcp -d 'Decide a call of an MCP server\'s tool instead (SERVER/TOOL)' -r
complete -c agent -n "__fish_agent_using_subcommand check" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand check" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand check" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand check" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand check" -l stdin -d 'Read one command per line from stdin and print one decision per line'
complete -c agent -n "__fish_agent_using_subcommand check" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand check" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand check" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand check" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand history; and not __fish_seen_subcommand_from list show help" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand history; and not __fish_seen_subcommand_from list show help" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand history; and not __fish_seen_subcommand_from list show help" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand history; and not __fish_seen_subcommand_from list show help" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand history; and not __fish_seen_subcommand_from list show help" -l all -d 'List the runs of every workspace (with a workspace column), not only this one\'s'
complete -c agent -n "__fish_agent_using_subcommand history; and not __fish_seen_subcommand_from list show help" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand history; and not __fish_seen_subcommand_from list show help" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand history; and not __fish_seen_subcommand_from list show help" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand history; and not __fish_seen_subcommand_from list show help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand history; and not __fish_seen_subcommand_from list show help" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand history; and not __fish_seen_subcommand_from list show help" -f -a "list" -d 'List past runs: time, prompt, turns, commands run and denied, outcome'
complete -c agent -n "__fish_agent_using_subcommand history; and not __fish_seen_subcommand_from list show help" -f -a "show" -d 'Replay one run readably (--json: its raw events)'
complete -c agent -n "__fish_agent_using_subcommand history; and not __fish_seen_subcommand_from list show help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from list" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from list" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from list" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from list" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from list" -l all -d 'List the runs of every workspace (with a workspace column), not only this one\'s'
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from list" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from list" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from show" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from show" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from show" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from show" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from show" -l all -d 'List the runs of every workspace (with a workspace column), not only this one\'s'
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from show" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from show" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "list" -d 'List past runs: time, prompt, turns, commands run and denied, outcome'
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "show" -d 'Replay one run readably (--json: its raw events)'
complete -c agent -n "__fish_agent_using_subcommand history; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c agent -n "__fish_agent_using_subcommand config; and not __fish_seen_subcommand_from path show init help" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand config; and not __fish_seen_subcommand_from path show init help" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand config; and not __fish_seen_subcommand_from path show init help" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand config; and not __fish_seen_subcommand_from path show init help" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand config; and not __fish_seen_subcommand_from path show init help" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand config; and not __fish_seen_subcommand_from path show init help" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand config; and not __fish_seen_subcommand_from path show init help" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand config; and not __fish_seen_subcommand_from path show init help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand config; and not __fish_seen_subcommand_from path show init help" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand config; and not __fish_seen_subcommand_from path show init help" -f -a "path" -d 'Print the path of the user settings file (it need not exist yet)'
complete -c agent -n "__fish_agent_using_subcommand config; and not __fish_seen_subcommand_from path show init help" -f -a "show" -d 'Print the merged settings and where each value came from'
complete -c agent -n "__fish_agent_using_subcommand config; and not __fish_seen_subcommand_from path show init help" -f -a "init" -d 'Write a commented settings file to the user path (never overwrites); at a terminal it asks for the provider, model, base URL and the variable holding the key'
complete -c agent -n "__fish_agent_using_subcommand config; and not __fish_seen_subcommand_from path show init help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from path" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from path" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from path" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from path" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from path" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from path" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from path" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from path" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from path" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from show" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from show" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from show" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from show" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from show" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from show" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from init" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from init" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from init" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from init" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from init" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from init" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from init" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from init" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "path" -d 'Print the path of the user settings file (it need not exist yet)'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "show" -d 'Print the merged settings and where each value came from'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "init" -d 'Write a commented settings file to the user path (never overwrites); at a terminal it asks for the provider, model, base URL and the variable holding the key'
complete -c agent -n "__fish_agent_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c agent -n "__fish_agent_using_subcommand rules; and not __fish_seen_subcommand_from list add remove help" -l allow -d 'Also list PREFIX as an allow rule from a flag, as `run --allow` would (repeatable)' -r
complete -c agent -n "__fish_agent_using_subcommand rules; and not __fish_seen_subcommand_from list add remove help" -l deny -d 'Also list PREFIX as a deny rule from a flag, as `run --deny` would (repeatable)' -r
complete -c agent -n "__fish_agent_using_subcommand rules; and not __fish_seen_subcommand_from list add remove help" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand rules; and not __fish_seen_subcommand_from list add remove help" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand rules; and not __fish_seen_subcommand_from list add remove help" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand rules; and not __fish_seen_subcommand_from list add remove help" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand rules; and not __fish_seen_subcommand_from list add remove help" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand rules; and not __fish_seen_subcommand_from list add remove help" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand rules; and not __fish_seen_subcommand_from list add remove help" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand rules; and not __fish_seen_subcommand_from list add remove help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand rules; and not __fish_seen_subcommand_from list add remove help" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand rules; and not __fish_seen_subcommand_from list add remove help" -f -a "list" -d 'List every rule that applies in this workspace, with its source'
complete -c agent -n "__fish_agent_using_subcommand rules; and not __fish_seen_subcommand_from list add remove help" -f -a "add" -d 'Write RULE into your settings file, as `a` (everywhere) or `3` (--project) at the prompt would: comments kept, checked first. An allow rule must be plain words and name more than a program that runs what it is given (`python3 -m pytest`, not `python`; `make test`, not `make`); a refused rule exits 2 with the reason'
complete -c agent -n "__fish_agent_using_subcommand rules; and not __fish_seen_subcommand_from list add remove help" -f -a "remove" -d 'Take RULE out of your settings file: its allow and deny lists, and this workspace\'s table (comments kept). Rules from a project file or a flag are not yours to remove here. Without RULE, at a terminal, pick the rules to remove from a list'
complete -c agent -n "__fish_agent_using_subcommand rules; and not __fish_seen_subcommand_from list add remove help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from list" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from list" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from list" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from list" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from list" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from list" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from add" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from add" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from add" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from add" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from add" -l deny -d 'A deny rule: commands containing a command that starts with RULE never run'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from add" -l project -d 'Only in this workspace: under `[projects."<workspace>".permissions.commands]`'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from add" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from add" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from add" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from remove" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from remove" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from remove" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from remove" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from remove" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from remove" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from remove" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from remove" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from help" -f -a "list" -d 'List every rule that applies in this workspace, with its source'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from help" -f -a "add" -d 'Write RULE into your settings file, as `a` (everywhere) or `3` (--project) at the prompt would: comments kept, checked first. An allow rule must be plain words and name more than a program that runs what it is given (`python3 -m pytest`, not `python`; `make test`, not `make`); a refused rule exits 2 with the reason'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Take RULE out of your settings file: its allow and deny lists, and this workspace\'s table (comments kept). Rules from a project file or a flag are not yours to remove here. Without RULE, at a terminal, pick the rules to remove from a list'
complete -c agent -n "__fish_agent_using_subcommand rules; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c agent -n "__fish_agent_using_subcommand mcp; and not __fish_seen_subcommand_from list add remove approve help" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand mcp; and not __fish_seen_subcommand_from list add remove approve help" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand mcp; and not __fish_seen_subcommand_from list add remove approve help" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand mcp; and not __fish_seen_subcommand_from list add remove approve help" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand mcp; and not __fish_seen_subcommand_from list add remove approve help" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand mcp; and not __fish_seen_subcommand_from list add remove approve help" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand mcp; and not __fish_seen_subcommand_from list add remove approve help" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand mcp; and not __fish_seen_subcommand_from list add remove approve help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand mcp; and not __fish_seen_subcommand_from list add remove approve help" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand mcp; and not __fish_seen_subcommand_from list add remove approve help" -f -a "list" -d 'List the servers of this workspace: where each comes from, whether it may start, and its tools with what they add to every request (servers that may start are started, fenced as in a run, and ended)'
complete -c agent -n "__fish_agent_using_subcommand mcp; and not __fish_seen_subcommand_from list add remove approve help" -f -a "add" -d 'Write `[mcp.servers.NAME]` into your settings file: a local server (`-- COMMAND ARGS…`) or a remote one (`--url`)'
complete -c agent -n "__fish_agent_using_subcommand mcp; and not __fish_seen_subcommand_from list add remove approve help" -f -a "remove" -d 'Take `[mcp.servers.NAME]` out of your settings file'
complete -c agent -n "__fish_agent_using_subcommand mcp; and not __fish_seen_subcommand_from list add remove approve help" -f -a "approve" -d 'Trust a server this project\'s `.agent/settings.toml` proposes, as it is proposed now (kept for this workspace in your settings file; a changed proposal asks again)'
complete -c agent -n "__fish_agent_using_subcommand mcp; and not __fish_seen_subcommand_from list add remove approve help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from list" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from list" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from list" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from list" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from list" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from list" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from add" -l env -d 'An environment variable the server gets, NAME=VALUE (repeatable); it gets no other besides PATH, HOME and LANG' -r
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from add" -l url -d 'A streamable-HTTP server\'s URL instead of a command' -r
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from add" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from add" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from add" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from add" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from add" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from add" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from add" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from remove" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from remove" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from remove" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from remove" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from remove" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from remove" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from remove" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from remove" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from approve" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from approve" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from approve" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from approve" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from approve" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from approve" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from approve" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from approve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from approve" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the servers of this workspace: where each comes from, whether it may start, and its tools with what they add to every request (servers that may start are started, fenced as in a run, and ended)'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "add" -d 'Write `[mcp.servers.NAME]` into your settings file: a local server (`-- COMMAND ARGS…`) or a remote one (`--url`)'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Take `[mcp.servers.NAME]` out of your settings file'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "approve" -d 'Trust a server this project\'s `.agent/settings.toml` proposes, as it is proposed now (kept for this workspace in your settings file; a changed proposal asks again)'
complete -c agent -n "__fish_agent_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c agent -n "__fish_agent_using_subcommand diff" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand diff" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand diff" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand diff" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand diff" -l stat -d 'Only the files and their counts of added and removed lines'
complete -c agent -n "__fish_agent_using_subcommand diff" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand diff" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand diff" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand diff" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand diff" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand undo" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand undo" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand undo" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand undo" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand undo" -l force -d 'Overwrite files that changed since the run ended'
complete -c agent -n "__fish_agent_using_subcommand undo" -l dry-run -d 'Only list what would be restored, removed and brought back'
complete -c agent -n "__fish_agent_using_subcommand undo" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand undo" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand undo" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand undo" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand undo" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand completions" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand completions" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand completions" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand completions" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand completions" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand completions" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand completions" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand completions" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand man" -l config -d 'Read this settings file instead of the user settings file' -r -F
complete -c agent -n "__fish_agent_using_subcommand man" -l profile -d 'Overlay the keys of `[profiles.NAME]` from the settings' -r
complete -c agent -n "__fish_agent_using_subcommand man" -s C -l cwd -d 'Work in DIR instead of the current directory' -r -F
complete -c agent -n "__fish_agent_using_subcommand man" -l color -d 'When to use colour (NO_COLOR is respected)' -r -f -a "auto\t'Colour on a terminal, unless NO_COLOR is set'
always\t'Always colour'
never\t'Never colour'"
complete -c agent -n "__fish_agent_using_subcommand man" -l json -d 'Print machine-readable JSON'
complete -c agent -n "__fish_agent_using_subcommand man" -s q -l quiet -d 'Print less (errors only)'
complete -c agent -n "__fish_agent_using_subcommand man" -s v -l verbose -d 'Print more detail'
complete -c agent -n "__fish_agent_using_subcommand man" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c agent -n "__fish_agent_using_subcommand man" -s V -l version -d 'Print version'
complete -c agent -n "__fish_agent_using_subcommand help; and not __fish_seen_subcommand_from run exec check history config rules mcp diff undo completions man help" -f -a "run" -d 'Drive the model loop on a task: PROMPT, or stdin when PROMPT is `-` or absent and stdin is piped; with PROMPT, piped stdin is sent with it as context (up to 256 KiB)'
complete -c agent -n "__fish_agent_using_subcommand help; and not __fish_seen_subcommand_from run exec check history config rules mcp diff undo completions man help" -f -a "exec" -d 'Run COMMAND through the same runner the model uses (no policy: you typed it)'
complete -c agent -n "__fish_agent_using_subcommand help; and not __fish_seen_subcommand_from run exec check history config rules mcp diff undo completions man help" -f -a "check" -d 'Print the policy decision for COMMAND (or one per stdin line); runs nothing, ever'
complete -c agent -n "__fish_agent_using_subcommand help; and not __fish_seen_subcommand_from run exec check history config rules mcp diff undo completions man help" -f -a "history" -d 'List past runs, or show one, from their transcripts'
complete -c agent -n "__fish_agent_using_subcommand help; and not __fish_seen_subcommand_from run exec check history config rules mcp diff undo completions man help" -f -a "config" -d 'Where settings live, and the merged settings with the source of each value'
complete -c agent -n "__fish_agent_using_subcommand help; and not __fish_seen_subcommand_from run exec check history config rules mcp diff undo completions man help" -f -a "rules" -d 'List every allow and deny rule with where it comes from, add one, or remove one'
complete -c agent -n "__fish_agent_using_subcommand help; and not __fish_seen_subcommand_from run exec check history config rules mcp diff undo completions man help" -f -a "mcp" -d 'MCP servers: list them with their tools, add or remove one, approve a project\'s'
complete -c agent -n "__fish_agent_using_subcommand help; and not __fish_seen_subcommand_from run exec check history config rules mcp diff undo completions man help" -f -a "diff" -d 'Show what a run changed in this workspace (default: the newest run)'
complete -c agent -n "__fish_agent_using_subcommand help; and not __fish_seen_subcommand_from run exec check history config rules mcp diff undo completions man help" -f -a "undo" -d 'Put back every file a run changed (default: the newest run), as it was before the run'
complete -c agent -n "__fish_agent_using_subcommand help; and not __fish_seen_subcommand_from run exec check history config rules mcp diff undo completions man help" -f -a "completions" -d 'Print a shell completion script'
complete -c agent -n "__fish_agent_using_subcommand help; and not __fish_seen_subcommand_from run exec check history config rules mcp diff undo completions man help" -f -a "man" -d 'Print the man page (roff) for `agent`, every subcommand and its flags on it'
complete -c agent -n "__fish_agent_using_subcommand help; and not __fish_seen_subcommand_from run exec check history config rules mcp diff undo completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c agent -n "__fish_agent_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "list" -d 'List past runs: time, prompt, turns, commands run and denied, outcome'
complete -c agent -n "__fish_agent_using_subcommand help; and __fish_seen_subcommand_from history" -f -a "show" -d 'Replay one run readably (--json: its raw events)'
complete -c agent -n "__fish_agent_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "path" -d 'Print the path of the user settings file (it need not exist yet)'
complete -c agent -n "__fish_agent_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "show" -d 'Print the merged settings and where each value came from'
complete -c agent -n "__fish_agent_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "init" -d 'Write a commented settings file to the user path (never overwrites); at a terminal it asks for the provider, model, base URL and the variable holding the key'
complete -c agent -n "__fish_agent_using_subcommand help; and __fish_seen_subcommand_from rules" -f -a "list" -d 'List every rule that applies in this workspace, with its source'
complete -c agent -n "__fish_agent_using_subcommand help; and __fish_seen_subcommand_from rules" -f -a "add" -d 'Write RULE into your settings file, as `a` (everywhere) or `3` (--project) at the prompt would: comments kept, checked first. An allow rule must be plain words and name more than a program that runs what it is given (`python3 -m pytest`, not `python`; `make test`, not `make`); a refused rule exits 2 with the reason'
complete -c agent -n "__fish_agent_using_subcommand help; and __fish_seen_subcommand_from rules" -f -a "remove" -d 'Take RULE out of your settings file: its allow and deny lists, and this workspace\'s table (comments kept). Rules from a project file or a flag are not yours to remove here. Without RULE, at a terminal, pick the rules to remove from a list'
complete -c agent -n "__fish_agent_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "list" -d 'List the servers of this workspace: where each comes from, whether it may start, and its tools with what they add to every request (servers that may start are started, fenced as in a run, and ended)'
complete -c agent -n "__fish_agent_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "add" -d 'Write `[mcp.servers.NAME]` into your settings file: a local server (`-- COMMAND ARGS…`) or a remote one (`--url`)'
complete -c agent -n "__fish_agent_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "remove" -d 'Take `[mcp.servers.NAME]` out of your settings file'
complete -c agent -n "__fish_agent_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "approve" -d 'Trust a server this project\'s `.agent/settings.toml` proposes, as it is proposed now (kept for this workspace in your settings file; a changed proposal asks again)'
