//! `agent check`: print policy decisions; runs nothing, ever.

use std::io::{BufRead as _, BufWriter, Write as _};
use std::process::ExitCode;

use serde::Serialize;

use crate::cli::{CheckArgs, GlobalArgs};
use crate::error::{Error, Result, Status};
use crate::policy::files::{self, Access};
use crate::policy::{self, Decision, OsFamily, Rules, Verdict};
use crate::settings::Overrides;

/// Runs `agent check`.
pub(crate) fn run(global: &GlobalArgs, args: CheckArgs) -> Result<ExitCode> {
    let overrides = Overrides {
        allow: args.allow,
        deny: args.deny,
        mode: args.mode,
        ..super::overrides(global)
    };
    let workspace = super::workspace(global.cwd.as_deref())?;
    let settings = super::load_settings(global, &overrides, &workspace)?;
    if let Some(call) = &args.mcp {
        return check_mcp(global, &settings, &workspace, call);
    }
    if let Some((access, path)) = args
        .read
        .as_ref()
        .map(|path| (Access::Read, path))
        .or_else(|| args.write.as_ref().map(|path| (Access::Write, path)))
    {
        return check_file(global, &settings, &workspace, access, path);
    }
    let rules = Rules::new(settings.allow.clone(), settings.deny.clone());
    let os = args.os.unwrap_or_else(OsFamily::current);
    // `agent check` judges a command as if it ran in the workspace (the current directory or
    // `-C`), which is also its working directory. Without `ask_read` the context's built-in
    // list is the list (not built a second time).
    let mut context = policy::Context::new(os, &workspace, &workspace, settings.read_only.value);
    if !settings.files.ask_read.is_empty() {
        let secrets = crate::workspace::SecretFiles::with_extra(
            settings.files.ask_read.iter().map(String::as_str),
        )
        .map_err(|error| Error::Usage(format!("{error}: fix [permissions.files] ask_read")))?;
        context = context.with_secrets(secrets.into());
    }
    let mode = settings.mode.value;
    // Whether what runs would run inside the sandbox (`--json` says it per line).
    let sandbox =
        (global.json || mode == policy::Mode::Auto).then(|| super::sandbox(&settings, &workspace));
    let sandboxed = sandbox
        .as_ref()
        .is_some_and(|sandbox| sandbox.active_policy().is_some());
    let auto = mode == policy::Mode::Auto && {
        let sandbox = sandbox.unwrap_or_else(|| super::sandbox(&settings, &workspace));
        let fallback =
            crate::agent::auto_fallback(mode, &sandbox, settings.snapshots.enabled.value);
        if let (Some(note), false) = (&fallback, global.quiet) {
            let _ = writeln!(std::io::stderr(), "agent: warning: {note}");
        }
        fallback.is_none()
    };
    // Nothing runs, so no snapshot is taken: a removal is judged as if it were whole.
    let decide = |command: &str| {
        let decision = policy::decide(&rules, &context, command);
        if auto {
            policy::apply_auto(decision, &context, command, |_| true)
        } else {
            policy::apply_mode(decision, mode)
        }
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut strictest = Verdict::Allow;
    if args.stdin {
        let mut input = std::io::stdin().lock();
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = input
                .read_until(b'\n', &mut line)
                .map_err(|error| Error::Runtime(format!("cannot read stdin: {error}")))?;
            if read == 0 {
                break;
            }
            if line.ends_with(b"\n") {
                line.pop();
                if line.ends_with(b"\r") {
                    line.pop();
                }
            }
            let (command, decision) = match std::str::from_utf8(&line) {
                Ok(command) => (std::borrow::Cow::Borrowed(command), decide(command)),
                Err(_) => (String::from_utf8_lossy(&line), not_utf8()),
            };
            strictest = strictest.max(decision.verdict);
            let json = global.json.then_some(sandboxed);
            write_decision(&mut out, json, Some(&command), &decision)?;
        }
    } else {
        let command = args.command.join(" ");
        let decision = decide(&command);
        strictest = decision.verdict;
        write_decision(&mut out, global.json.then_some(sandboxed), None, &decision)?;
    }
    finish(out)?;
    Ok(verdict_status(strictest))
}

/// `agent check --read PATH` / `--write PATH`: the file tools' decision on PATH.
/// `agent check --mcp SERVER/TOOL`: the decision on one MCP tool's calls.
fn check_mcp(
    global: &GlobalArgs,
    settings: &crate::settings::Settings,
    workspace: &std::path::Path,
    call: &str,
) -> Result<ExitCode> {
    let Some((server, tool)) = call
        .split_once('/')
        .filter(|(s, t)| !s.is_empty() && !t.is_empty())
    else {
        return Err(Error::Usage(format!(
            "--mcp `{call}`: write SERVER/TOOL (`agent mcp list` names them)"
        )));
    };
    // Only allow-all asks whether the server runs in the sandbox.
    let fenced = settings.mode.value == policy::Mode::AllowAll && {
        let catalogue = super::mcp::catalogue(global, settings, workspace)?;
        let sandbox = super::sandbox(settings, workspace);
        let launch = super::mcp_launch(&sandbox, workspace);
        crate::mcp::Servers::new(&catalogue, launch, &super::env_var).fenced(server)
    };
    let decision = crate::mcp::rules::decide(
        &settings.allow,
        &settings.deny,
        settings.mode.value,
        (server, tool),
        fenced,
    );
    let mut out = BufWriter::new(std::io::stdout().lock());
    if global.json {
        #[derive(Serialize)]
        struct McpLine<'a> {
            server: &'a str,
            tool: &'a str,
            #[serde(flatten)]
            decision: &'a Decision,
        }
        let line = McpLine {
            server,
            tool,
            decision: &decision,
        };
        json_line(&mut out, &line)?;
    } else {
        write_decision(&mut out, None, None, &decision)?;
    }
    finish(out)?;
    Ok(verdict_status(decision.verdict))
}

/// Writes `line` as one line of JSON (a closed pipe is a quiet end).
fn json_line(out: &mut impl std::io::Write, line: &impl Serialize) -> Result<()> {
    serde_json::to_writer(&mut *out, line)
        .map_err(std::io::Error::other)
        .and_then(|()| out.write_all(b"\n"))
        .or_else(quiet_broken_pipe)?;
    Ok(())
}

/// The exit status of a decision: 0 allow, 3 ask, 4 deny.
fn verdict_status(verdict: Verdict) -> ExitCode {
    match verdict {
        Verdict::Allow => Status::Success,
        Verdict::Ask => Status::Ask,
        Verdict::Deny => Status::Deny,
    }
    .into()
}

fn check_file(
    global: &GlobalArgs,
    settings: &crate::settings::Settings,
    workspace: &std::path::Path,
    access: Access,
    path: &std::path::Path,
) -> Result<ExitCode> {
    let rules = settings
        .file_rules(workspace)
        .map_err(|error| Error::Usage(format!("{error}: fix [permissions.files]")))?;
    let resolved = crate::workspace::resolve(workspace, path)
        .map_err(|error| Error::Runtime(format!("cannot resolve `{}`: {error}", path.display())))?;
    let decision = files::apply_mode(
        files::decide(&rules, access, &resolved),
        settings.mode.value,
    );
    let mut out = BufWriter::new(std::io::stdout().lock());
    let shown = rules.display(&resolved);
    if global.json {
        #[derive(Serialize)]
        struct FileLine<'a> {
            path: &'a str,
            access: Access,
            #[serde(flatten)]
            decision: &'a Decision,
        }
        let line = FileLine {
            path: &shown,
            access,
            decision: &decision,
        };
        json_line(&mut out, &line)?;
    } else {
        write_decision(&mut out, None, None, &decision)?;
    }
    finish(out)?;
    Ok(verdict_status(decision.verdict))
}

fn not_utf8() -> Decision {
    Decision {
        verdict: Verdict::Ask,
        reason: "the line is not valid UTF-8".to_owned(),
        source: policy::Source::Parser,
        rule: None,
        destructive: true,
        prefix: None,
        parts: Vec::new(),
    }
}

#[derive(Serialize)]
struct Line<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<&'a str>,
    #[serde(flatten)]
    decision: &'a Decision,
    /// The allow rule a person would be offered at the prompt ("always allow"), or null.
    prefix: Option<&'a str>,
    /// Whether the command, where it runs, runs inside the sandbox (a call's `escalate` may
    /// still ask a person for more).
    sandboxed: bool,
}

/// One decision on stdout: JSON when `json` is given (with whether it runs sandboxed), else
/// a line of text.
fn write_decision(
    out: &mut impl std::io::Write,
    json: Option<bool>,
    command: Option<&str>,
    decision: &Decision,
) -> Result<()> {
    let written = if let Some(sandboxed) = json {
        let prefix = decision.prefix.as_deref();
        serde_json::to_writer(
            &mut *out,
            &Line {
                command,
                decision,
                prefix,
                sandboxed,
            },
        )
        .map_err(std::io::Error::other)
        .and_then(|()| out.write_all(b"\n"))
    } else {
        let verdict = match decision.verdict {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        };
        let source = match decision.source {
            policy::Source::Builtin => "builtin",
            policy::Source::User => "user",
            policy::Source::Project => "project",
            policy::Source::Flag => "flag",
            policy::Source::Parser => "parser",
        };
        // Piece by piece: no formatting machinery for a line per command.
        let reason = decision.reason.as_str();
        let pieces: &[&str] = match &decision.rule {
            Some(rule) => &[
                verdict,
                ": ",
                reason,
                " (source: ",
                source,
                ", rule: \"",
                rule,
                "\")\n",
            ],
            None => &[verdict, ": ", reason, " (source: ", source, ")\n"],
        };
        pieces
            .iter()
            .try_for_each(|piece| out.write_all(piece.as_bytes()))
    };
    written.or_else(quiet_broken_pipe)
}

fn finish(mut out: impl std::io::Write) -> Result<()> {
    out.flush().or_else(quiet_broken_pipe)
}

fn quiet_broken_pipe(error: std::io::Error) -> Result<()> {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(Error::Runtime(format!("cannot write to stdout: {error}")))
    }
}
