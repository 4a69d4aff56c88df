#compdef agent

autoload -U is-at-least

_agent() {
    typeset -A opt_args
    typeset -a _arguments_options
    local ret=1

    if is-at-least 5.2; then
        _arguments_options=(-s -S -C)
    else
        _arguments_options=(-s -C)
    fi

    local context curcontext="$curcontext" state line
    _arguments "${_arguments_options[@]}" : \
'--resume=[With no command\: continue run ID in a session; without an ID, pick one of this workspace'\''s recent runs]::ID:_default' \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'(--resume)-c[With no command\: continue the latest run in this workspace in a session]' \
'(--resume)--continue[With no command\: continue the latest run in this workspace in a session]' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_agent_commands" \
"*::: :->agent" \
&& ret=0
    case $state in
    (agent)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:agent-command-$line[1]:"
        case $line[1] in
            (run)
_arguments "${_arguments_options[@]}" : \
'--provider=[The model provider (default\: from settings; else openai/anthropic when their key is set; else demo)]:PROVIDER:((openai\:"OpenAI Chat Completions, or any compatible server with --base-url"
anthropic\:"Anthropic Messages"
ollama\:"A local Ollama server (http\://127.0.0.1\:11434/v1, no key)"
demo\:"The offline demo model\: no key, no network"))' \
'--model=[The model name (default\: the provider'\''s; AGENT_MODEL is respected)]:MODEL:_default' \
'--base-url=[The provider'\''s base URL (any OpenAI-compatible server\: Ollama, vLLM, LM Studio, llama.cpp …)]:URL:_default' \
'--max-output-tokens=[Longest model reply per turn, in tokens (default\: Anthropic 8192, others the server'\''s)]:N:_default' \
'*--header=[Send an HTTP header with every model request, as \`NAME\: VALUE\` (repeatable; beats \`\[model\] headers\`). Values of names with key, token or authorization in them are never shown or recorded]:NAME: VALUE:_default' \
'*--allow=[Also allow commands starting with PREFIX, for this run only (repeatable)]:PREFIX:_default' \
'*--deny=[Also deny commands containing a command starting with PREFIX, for this run (repeatable)]:PREFIX:_default' \
'--mode=[ask\: prompt for unsure commands; auto\: run them in the sandbox without a prompt (ask where it is not fully active; sudo, dd, mkfs … and rm/mv leaving the workspace still ask); deny\: never prompt; off\: no shell tool; allow-all\: run everything not denied except destructive programs (rm, mv, dd, sudo …), which still ask]:MODE:((ask\:"Prompt for commands the policy is unsure about"
auto\:"Run them in the sandbox without prompting (ask where the sandbox is not fully active; protected programs still ask)"
deny\:"Deny them instead of prompting"
off\:"Offer the model no shell tool at all"
allow-all\:"Allow them, except destructive programs, which still ask"))' \
'--max-turns=[Stop after N model turns (default 50)]:N:_default' \
'--timeout=[Kill each command after SECS seconds (default 30; the model may ask for less)]:SECS:_default' \
'--max-tokens=[Stop the run (exit 6) once its model turns used N tokens, input + output as the server reports them; a continued run counts only this invocation'\''s part]:N:_default' \
'--max-time=[Stop the run (exit 6) after DURATION of wall time (\`90s\`, \`10m\`, \`1h 30m\`); a running command is stopped like a timeout. A continued run counts only this invocation]:DURATION:_default' \
'--resume=[Continue run ID (full or short, as \`agent history\` shows it), in any workspace; without an ID, at a terminal, pick one of this workspace'\''s recent runs (then give PROMPT after \`--\`, or type it when asked)]::ID:_default' \
'--sandbox=[What commands may write\: workspace-write (default\: the workspace, the temp dir and \`writable\` paths), read-only (nothing), off (no sandbox)]:MODE:((workspace-write\:"Write only inside the workspace, the temp dir and the \`writable\` paths"
read-only\:"Write nothing (but /dev/null and the like)"
off\:"No sandbox\: commands may do what you may"))' \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'-i[Open an interactive session at the terminal\: PROMPT, when given, is the first message; type the next ones below the answer (\`/help\` lists the session'\''s commands)]' \
'--interactive[Open an interactive session at the terminal\: PROMPT, when given, is the first message; type the next ones below the answer (\`/help\` lists the session'\''s commands)]' \
'--allow-edits[Apply the file tools'\'' edits inside the workspace without asking, for this run (as \`\[permissions.files\] edits = "allow"\` in your settings file); shell commands keep their rules, and \`.git\`, \`.agent\`, settings, secret files and paths outside are still never written]' \
'--no-prompt[Never prompt\: every command that would need approval is denied]' \
'--plain[Plain line output even on a terminal (no live pane)]' \
'--fail-on-deny[Exit 3 when any command was denied, after the final answer (for CI; also \`\[ci\] fail_on_deny = true\`). The \`done\` event lists the denials]' \
'--no-project-instructions[Do not add AGENTS.md (workspace and git repository root) to the system prompt]' \
'(--resume)--continue[Continue the latest run in this workspace\: its conversation is sent again (its commands are not re-run) and PROMPT is the next task]' \
'--network[Let commands use the network inside the sandbox (off by default)]' \
'--sandbox-required[Refuse to run any command where the sandbox cannot apply]' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'*::prompt -- The task; several words are joined with spaces. `-` or absent\: read it from stdin (when stdin is not a terminal):_default' \
&& ret=0
;;
(exec)
_arguments "${_arguments_options[@]}" : \
'--timeout=[Kill the command after SECS seconds (default 30; fractions allowed)]:SECS:_default' \
'--max-output-chars=[Keep at most N characters of stdout + stderr (head and tail) in --json output]:N:_default' \
'--sandbox=[What commands may write\: workspace-write (default\: the workspace, the temp dir and \`writable\` paths), read-only (nothing), off (no sandbox)]:MODE:((workspace-write\:"Write only inside the workspace, the temp dir and the \`writable\` paths"
read-only\:"Write nothing (but /dev/null and the like)"
off\:"No sandbox\: commands may do what you may"))' \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--network[Let commands use the network inside the sandbox (off by default)]' \
'--sandbox-required[Refuse to run any command where the sandbox cannot apply]' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'*::command -- The command line; several words are joined with spaces:_default' \
&& ret=0
;;
(check)
_arguments "${_arguments_options[@]}" : \
'--os=[Decide as on this OS family (default\: this machine'\''s)]:OS:((unix\:"POSIX sh rules and the Unix read-only list"
windows\:"cmd.exe rules and the Windows read-only list"))' \
'*--allow=[Also allow commands starting with PREFIX (repeatable)]:PREFIX:_default' \
'*--deny=[Also deny commands containing a command starting with PREFIX (repeatable)]:PREFIX:_default' \
'--mode=[Decide in this permission mode instead of the settings'\'' (\`auto\`\: as where the sandbox is fully active and the snapshot whole, when it is so here)]:MODE:((ask\:"Prompt for commands the policy is unsure about"
auto\:"Run them in the sandbox without prompting (ask where the sandbox is not fully active; protected programs still ask)"
deny\:"Deny them instead of prompting"
off\:"Offer the model no shell tool at all"
allow-all\:"Allow them, except destructive programs, which still ask"))' \
'(--stdin --write)--read=[Decide whether the file tools may read PATH (read_file, list_files, search) instead]:PATH:_files' \
'(--stdin)--write=[Decide whether the file tools may write PATH (edit_file, write_file) instead]:PATH:_files' \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'()--stdin[Read one command per line from stdin and print one decision per line]' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'*::command -- The command line; several words are joined with spaces:_default' \
&& ret=0
;;
(history)
_arguments "${_arguments_options[@]}" : \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--all[List the runs of every workspace (with a workspace column), not only this one'\''s]' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_agent__subcmd__history_commands" \
"*::: :->history" \
&& ret=0

    case $state in
    (history)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:agent-history-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--all[List the runs of every workspace (with a workspace column), not only this one'\''s]' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--all[List the runs of every workspace (with a workspace column), not only this one'\''s]' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
':id -- The run id, or its last characters (the short id):_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_agent__subcmd__history__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:agent-history-help-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(config)
_arguments "${_arguments_options[@]}" : \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_agent__subcmd__config_commands" \
"*::: :->config" \
&& ret=0

    case $state in
    (config)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:agent-config-command-$line[1]:"
        case $line[1] in
            (path)
_arguments "${_arguments_options[@]}" : \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(init)
_arguments "${_arguments_options[@]}" : \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_agent__subcmd__config__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:agent-config-help-command-$line[1]:"
        case $line[1] in
            (path)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(init)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(rules)
_arguments "${_arguments_options[@]}" : \
'*--allow=[Also list PREFIX as an allow rule from a flag, as \`run --allow\` would (repeatable)]:PREFIX:_default' \
'*--deny=[Also list PREFIX as a deny rule from a flag, as \`run --deny\` would (repeatable)]:PREFIX:_default' \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_agent__subcmd__rules_commands" \
"*::: :->rules" \
&& ret=0

    case $state in
    (rules)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:agent-rules-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(add)
_arguments "${_arguments_options[@]}" : \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--deny[A deny rule\: commands containing a command that starts with RULE never run]' \
'--project[Only in this workspace\: under \`\[projects."<workspace>".permissions.commands\]\`]' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
':rule -- The rule\: words a command starts with (`cargo test`, `./run_tests.sh`):_default' \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'::rule -- The rule exactly as listed:_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_agent__subcmd__rules__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:agent-rules-help-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(add)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(diff)
_arguments "${_arguments_options[@]}" : \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--stat[Only the files and their counts of added and removed lines]' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'::run -- The run (its id from `agent history`); default\: the newest in this workspace:_default' \
&& ret=0
;;
(undo)
_arguments "${_arguments_options[@]}" : \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--force[Overwrite files that changed since the run ended]' \
'--dry-run[Only list what would be restored, removed and brought back]' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'::run -- The run (its id from `agent history`); default\: the newest in this workspace:_default' \
&& ret=0
;;
(completions)
_arguments "${_arguments_options[@]}" : \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
':shell -- The shell:(bash elvish fish powershell zsh)' \
&& ret=0
;;
(man)
_arguments "${_arguments_options[@]}" : \
'--config=[Read this settings file instead of the user settings file]:FILE:_files' \
'--profile=[Overlay the keys of \`\[profiles.NAME\]\` from the settings]:NAME:_default' \
'-C+[Work in DIR instead of the current directory]:DIR:_files' \
'--cwd=[Work in DIR instead of the current directory]:DIR:_files' \
'--color=[When to use colour (NO_COLOR is respected)]:WHEN:((auto\:"Colour on a terminal, unless NO_COLOR is set"
always\:"Always colour"
never\:"Never colour"))' \
'--json[Print machine-readable JSON]' \
'(-v --verbose)-q[Print less (errors only)]' \
'(-v --verbose)--quiet[Print less (errors only)]' \
'-v[Print more detail]' \
'--verbose[Print more detail]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_agent__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:agent-help-command-$line[1]:"
        case $line[1] in
            (run)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(exec)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(check)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(history)
_arguments "${_arguments_options[@]}" : \
":: :_agent__subcmd__help__subcmd__history_commands" \
"*::: :->history" \
&& ret=0

    case $state in
    (history)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:agent-help-history-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(config)
_arguments "${_arguments_options[@]}" : \
":: :_agent__subcmd__help__subcmd__config_commands" \
"*::: :->config" \
&& ret=0

    case $state in
    (config)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:agent-help-config-command-$line[1]:"
        case $line[1] in
            (path)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(init)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(rules)
_arguments "${_arguments_options[@]}" : \
":: :_agent__subcmd__help__subcmd__rules_commands" \
"*::: :->rules" \
&& ret=0

    case $state in
    (rules)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:agent-help-rules-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(add)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(remove)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(diff)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(undo)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(completions)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(man)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
}

(( $+functions[_agent_commands] )) ||
_agent_commands() {
    local commands; commands=(
'run:Drive the model loop on a task\: PROMPT, or stdin when PROMPT is \`-\` or absent and stdin is piped; with PROMPT, piped stdin is sent with it as context (up to 256 KiB)' \
'exec:Run COMMAND through the same runner the model uses (no policy\: you typed it)' \
'check:Print the policy decision for COMMAND (or one per stdin line); runs nothing, ever' \
'history:List past runs, or show one, from their transcripts' \
'config:Where settings live, and the merged settings with the source of each value' \
'rules:List every allow and deny rule with where it comes from, add one, or remove one' \
'diff:Show what a run changed in this workspace (default\: the newest run)' \
'undo:Put back every file a run changed (default\: the newest run), as it was before the run' \
'completions:Print a shell completion script' \
'man:Print the man page (roff) for \`agent\`, every subcommand and its flags on it' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'agent commands' commands "$@"
}
(( $+functions[_agent__subcmd__check_commands] )) ||
_agent__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'agent check commands' commands "$@"
}
(( $+functions[_agent__subcmd__completions_commands] )) ||
_agent__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'agent completions commands' commands "$@"
}
(( $+functions[_agent__subcmd__config_commands] )) ||
_agent__subcmd__config_commands() {
    local commands; commands=(
'path:Print the path of the user settings file (it need not exist yet)' \
'show:Print the merged settings and where each value came from' \
'init:Write a commented settings file to the user path (never overwrites); at a terminal it asks for the provider, model, base URL and the variable holding the key' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'agent config commands' commands "$@"
}
(( $+functions[_agent__subcmd__config__subcmd__help_commands] )) ||
_agent__subcmd__config__subcmd__help_commands() {
    local commands; commands=(
'path:Print the path of the user settings file (it need not exist yet)' \
'show:Print the merged settings and where each value came from' \
'init:Write a commented settings file to the user path (never overwrites); at a terminal it asks for the provider, model, base URL and the variable holding the key' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'agent config help commands' commands "$@"
}
(( $+functions[_agent__subcmd__config__subcmd__help__subcmd__help_commands] )) ||
_agent__subcmd__config__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'agent config help help commands' commands "$@"
}
(( $+functions[_agent__subcmd__config__subcmd__help__subcmd__init_commands] )) ||
_agent__subcmd__config__subcmd__help__subcmd__init_commands() {
    local commands; commands=()
    _describe -t commands 'agent config help init commands' commands "$@"
}
(( $+functions[_agent__subcmd__config__subcmd__help__subcmd__path_commands] )) ||
_agent__subcmd__config__subcmd__help__subcmd__path_commands() {
    local commands; commands=()
    _describe -t commands 'agent config help path commands' commands "$@"
}
(( $+functions[_agent__subcmd__config__subcmd__help__subcmd__show_commands] )) ||
_agent__subcmd__config__subcmd__help__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'agent config help show commands' commands "$@"
}
(( $+functions[_agent__subcmd__config__subcmd__init_commands] )) ||
_agent__subcmd__config__subcmd__init_commands() {
    local commands; commands=()
    _describe -t commands 'agent config init commands' commands "$@"
}
(( $+functions[_agent__subcmd__config__subcmd__path_commands] )) ||
_agent__subcmd__config__subcmd__path_commands() {
    local commands; commands=()
    _describe -t commands 'agent config path commands' commands "$@"
}
(( $+functions[_agent__subcmd__config__subcmd__show_commands] )) ||
_agent__subcmd__config__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'agent config show commands' commands "$@"
}
(( $+functions[_agent__subcmd__diff_commands] )) ||
_agent__subcmd__diff_commands() {
    local commands; commands=()
    _describe -t commands 'agent diff commands' commands "$@"
}
(( $+functions[_agent__subcmd__exec_commands] )) ||
_agent__subcmd__exec_commands() {
    local commands; commands=()
    _describe -t commands 'agent exec commands' commands "$@"
}
(( $+functions[_agent__subcmd__help_commands] )) ||
_agent__subcmd__help_commands() {
    local commands; commands=(
'run:Drive the model loop on a task\: PROMPT, or stdin when PROMPT is \`-\` or absent and stdin is piped; with PROMPT, piped stdin is sent with it as context (up to 256 KiB)' \
'exec:Run COMMAND through the same runner the model uses (no policy\: you typed it)' \
'check:Print the policy decision for COMMAND (or one per stdin line); runs nothing, ever' \
'history:List past runs, or show one, from their transcripts' \
'config:Where settings live, and the merged settings with the source of each value' \
'rules:List every allow and deny rule with where it comes from, add one, or remove one' \
'diff:Show what a run changed in this workspace (default\: the newest run)' \
'undo:Put back every file a run changed (default\: the newest run), as it was before the run' \
'completions:Print a shell completion script' \
'man:Print the man page (roff) for \`agent\`, every subcommand and its flags on it' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'agent help commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__check_commands] )) ||
_agent__subcmd__help__subcmd__check_commands() {
    local commands; commands=()
    _describe -t commands 'agent help check commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__completions_commands] )) ||
_agent__subcmd__help__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'agent help completions commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__config_commands] )) ||
_agent__subcmd__help__subcmd__config_commands() {
    local commands; commands=(
'path:Print the path of the user settings file (it need not exist yet)' \
'show:Print the merged settings and where each value came from' \
'init:Write a commented settings file to the user path (never overwrites); at a terminal it asks for the provider, model, base URL and the variable holding the key' \
    )
    _describe -t commands 'agent help config commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__config__subcmd__init_commands] )) ||
_agent__subcmd__help__subcmd__config__subcmd__init_commands() {
    local commands; commands=()
    _describe -t commands 'agent help config init commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__config__subcmd__path_commands] )) ||
_agent__subcmd__help__subcmd__config__subcmd__path_commands() {
    local commands; commands=()
    _describe -t commands 'agent help config path commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__config__subcmd__show_commands] )) ||
_agent__subcmd__help__subcmd__config__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'agent help config show commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__diff_commands] )) ||
_agent__subcmd__help__subcmd__diff_commands() {
    local commands; commands=()
    _describe -t commands 'agent help diff commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__exec_commands] )) ||
_agent__subcmd__help__subcmd__exec_commands() {
    local commands; commands=()
    _describe -t commands 'agent help exec commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__help_commands] )) ||
_agent__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'agent help help commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__history_commands] )) ||
_agent__subcmd__help__subcmd__history_commands() {
    local commands; commands=(
'list:List past runs\: time, prompt, turns, commands run and denied, outcome' \
'show:Replay one run readably (--json\: its raw events)' \
    )
    _describe -t commands 'agent help history commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__history__subcmd__list_commands] )) ||
_agent__subcmd__help__subcmd__history__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'agent help history list commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__history__subcmd__show_commands] )) ||
_agent__subcmd__help__subcmd__history__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'agent help history show commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__man_commands] )) ||
_agent__subcmd__help__subcmd__man_commands() {
    local commands; commands=()
    _describe -t commands 'agent help man commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__rules_commands] )) ||
_agent__subcmd__help__subcmd__rules_commands() {
    local commands; commands=(
'list:List every rule that applies in this workspace, with its source' \
'add:Write RULE into your settings file, as \`a\` (everywhere) or \`3\` (--project) at the prompt would\: comments kept, checked first. An allow rule must be plain words and name more than a program that runs what it is given (\`python3 -m pytest\`, not \`python\`; \`make test\`, not \`make\`); a refused rule exits 2 with the reason' \
'remove:Take RULE out of your settings file\: its allow and deny lists, and this workspace'\''s table (comments kept). Rules from a project file or a flag are not yours to remove here. Without RULE, at a terminal, pick the rules to remove from a list' \
    )
    _describe -t commands 'agent help rules commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__rules__subcmd__add_commands] )) ||
_agent__subcmd__help__subcmd__rules__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'agent help rules add commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__rules__subcmd__list_commands] )) ||
_agent__subcmd__help__subcmd__rules__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'agent help rules list commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__rules__subcmd__remove_commands] )) ||
_agent__subcmd__help__subcmd__rules__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'agent help rules remove commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__run_commands] )) ||
_agent__subcmd__help__subcmd__run_commands() {
    local commands; commands=()
    _describe -t commands 'agent help run commands' commands "$@"
}
(( $+functions[_agent__subcmd__help__subcmd__undo_commands] )) ||
_agent__subcmd__help__subcmd__undo_commands() {
    local commands; commands=()
    _describe -t commands 'agent help undo commands' commands "$@"
}
(( $+functions[_agent__subcmd__history_commands] )) ||
_agent__subcmd__history_commands() {
    local commands; commands=(
'list:List past runs\: time, prompt, turns, commands run and denied, outcome' \
'show:Replay one run readably (--json\: its raw events)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'agent history commands' commands "$@"
}
(( $+functions[_agent__subcmd__history__subcmd__help_commands] )) ||
_agent__subcmd__history__subcmd__help_commands() {
    local commands; commands=(
'list:List past runs\: time, prompt, turns, commands run and denied, outcome' \
'show:Replay one run readably (--json\: its raw events)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'agent history help commands' commands "$@"
}
(( $+functions[_agent__subcmd__history__subcmd__help__subcmd__help_commands] )) ||
_agent__subcmd__history__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'agent history help help commands' commands "$@"
}
(( $+functions[_agent__subcmd__history__subcmd__help__subcmd__list_commands] )) ||
_agent__subcmd__history__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'agent history help list commands' commands "$@"
}
(( $+functions[_agent__subcmd__history__subcmd__help__subcmd__show_commands] )) ||
_agent__subcmd__history__subcmd__help__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'agent history help show commands' commands "$@"
}
(( $+functions[_agent__subcmd__history__subcmd__list_commands] )) ||
_agent__subcmd__history__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'agent history list commands' commands "$@"
}
(( $+functions[_agent__subcmd__history__subcmd__show_commands] )) ||
_agent__subcmd__history__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'agent history show commands' commands "$@"
}
(( $+functions[_agent__subcmd__man_commands] )) ||
_agent__subcmd__man_commands() {
    local commands; commands=()
    _describe -t commands 'agent man commands' commands "$@"
}
(( $+functions[_agent__subcmd__rules_commands] )) ||
_agent__subcmd__rules_commands() {
    local commands; commands=(
'list:List every rule that applies in this workspace, with its source' \
'add:Write RULE into your settings file, as \`a\` (everywhere) or \`3\` (--project) at the prompt would\: comments kept, checked first. An allow rule must be plain words and name more than a program that runs what it is given (\`python3 -m pytest\`, not \`python\`; \`make test\`, not \`make\`); a refused rule exits 2 with the reason' \
'remove:Take RULE out of your settings file\: its allow and deny lists, and this workspace'\''s table (comments kept). Rules from a project file or a flag are not yours to remove here. Without RULE, at a terminal, pick the rules to remove from a list' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'agent rules commands' commands "$@"
}
(( $+functions[_agent__subcmd__rules__subcmd__add_commands] )) ||
_agent__subcmd__rules__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'agent rules add commands' commands "$@"
}
(( $+functions[_agent__subcmd__rules__subcmd__help_commands] )) ||
_agent__subcmd__rules__subcmd__help_commands() {
    local commands; commands=(
'list:List every rule that applies in this workspace, with its source' \
'add:Write RULE into your settings file, as \`a\` (everywhere) or \`3\` (--project) at the prompt would\: comments kept, checked first. An allow rule must be plain words and name more than a program that runs what it is given (\`python3 -m pytest\`, not \`python\`; \`make test\`, not \`make\`); a refused rule exits 2 with the reason' \
'remove:Take RULE out of your settings file\: its allow and deny lists, and this workspace'\''s table (comments kept). Rules from a project file or a flag are not yours to remove here. Without RULE, at a terminal, pick the rules to remove from a list' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'agent rules help commands' commands "$@"
}
(( $+functions[_agent__subcmd__rules__subcmd__help__subcmd__add_commands] )) ||
_agent__subcmd__rules__subcmd__help__subcmd__add_commands() {
    local commands; commands=()
    _describe -t commands 'agent rules help add commands' commands "$@"
}
(( $+functions[_agent__subcmd__rules__subcmd__help__subcmd__help_commands] )) ||
_agent__subcmd__rules__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'agent rules help help commands' commands "$@"
}
(( $+functions[_agent__subcmd__rules__subcmd__help__subcmd__list_commands] )) ||
_agent__subcmd__rules__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'agent rules help list commands' commands "$@"
}
(( $+functions[_agent__subcmd__rules__subcmd__help__subcmd__remove_commands] )) ||
_agent__subcmd__rules__subcmd__help__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'agent rules help remove commands' commands "$@"
}
(( $+functions[_agent__subcmd__rules__subcmd__list_commands] )) ||
_agent__subcmd__rules__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'agent rules list commands' commands "$@"
}
(( $+functions[_agent__subcmd__rules__subcmd__remove_commands] )) ||
_agent__subcmd__rules__subcmd__remove_commands() {
    local commands; commands=()
    _describe -t commands 'agent rules remove commands' commands "$@"
}
(( $+functions[_agent__subcmd__run_commands] )) ||
_agent__subcmd__run_commands() {
    local commands; commands=()
    _describe -t commands 'agent run commands' commands "$@"
}
(( $+functions[_agent__subcmd__undo_commands] )) ||
_agent__subcmd__undo_commands() {
    local commands; commands=()
    _describe -t commands 'agent undo commands' commands "$@"
}

if [ "$funcstack[1]" = "_agent" ]; then
    _agent "$@"
else
    compdef _agent agent
fi
