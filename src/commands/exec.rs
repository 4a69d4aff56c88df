//! `agent exec`: run one command through the runner, no policy (the user typed it).

use std::io::Write as _;
use std::process::ExitCode;

use crate::cli::{ExecArgs, GlobalArgs};
use crate::error::{Error, Result, Status};
use crate::exec::{self, ErrorCode, ExecRequest, Stream};

use super::signals::{Signals, Stop};

/// Runs `agent exec`.
pub(crate) fn run(global: &GlobalArgs, args: ExecArgs) -> Result<ExitCode> {
    let cwd = super::workspace(global.cwd.as_deref())?;
    let command = args.command.join(" ");
    if command.trim().is_empty() {
        return Err(Error::Usage(
            "the command is empty: say what to run (`agent exec 'ls -la'`)".to_owned(),
        ));
    }
    let overrides = super::with_sandbox_flags(super::overrides(global), &args.sandbox);
    let settings = super::load_settings(global, &overrides, &cwd)?;
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut sandbox = super::sandbox(&settings, &cwd);
    super::sandbox_notice(&sandbox, global.quiet);
    if sandbox.refusal().is_some() {
        // The notice above said why on stderr; nothing runs.
        return Ok(Status::Failure.into());
    }
    let runtime = super::runtime()?;
    #[cfg(unix)]
    let proxy = super::network::start(&runtime, &settings, &mut sandbox)?;
    let mut request = ExecRequest::new(command, cwd);
    request.sandbox = sandbox.active_policy().cloned();
    if let Some(timeout) = args.timeout {
        request.limits.timeout = timeout;
    }
    if let Some(max) = args.max_output_chars {
        request.limits.max_output_chars = max;
    }
    let json = global.json;
    let mut sink = |chunk: exec::Chunk<'_>| {
        if json {
            return;
        }
        // Pass bytes through untouched; a closed pipe just stops the echo.
        let _ = match chunk.stream {
            Stream::Stdout => std::io::stdout().lock().write_all(chunk.bytes),
            Stream::Stderr => std::io::stderr().lock().write_all(chunk.bytes),
        };
    };
    let result = runtime.block_on(async {
        let mut signals = Signals::listen();
        let run = exec::run(&request, &mut sink);
        tokio::pin!(run);
        tokio::select! {
            result = &mut run => Ok(result),
            stop = signals.recv() => {
                // End the command's group (TERM, then KILL) before its call is dropped.
                exec::stop_running().await;
                Err(stop)
            }
        }
    });
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut result = match result {
        Ok(result) => result,
        Err(Stop::Interrupt) => return Err(Error::Interrupted),
        Err(stop) => {
            return Err(Error::Stopped {
                signal: stop.name(),
                status: stop.status(),
            });
        }
    };
    #[cfg(unix)]
    if let Some(proxy) = &proxy {
        result.network = super::network::told(&proxy.log(), json);
    }
    if json {
        let line = serde_json::to_string(&result).map_err(|error| {
            Error::Runtime(format!("cannot encode the result (a bug): {error}"))
        })?;
        super::print_stdout(&format!("{line}\n"))?;
        return Ok(match result.error.as_ref().map(|error| error.code) {
            Some(ErrorCode::Cwd) => Status::Usage.into(),
            Some(ErrorCode::Io) if result.exit_code.is_none() => Status::Failure.into(),
            _ => ExitCode::from(u8::try_from(result.shell_status() & 0xff).unwrap_or(u8::MAX)),
        });
    }
    if let Some(error) = result.error.clone() {
        match error.code {
            ErrorCode::Cwd => return Err(Error::Usage(error.message)),
            ErrorCode::Io if result.exit_code.is_none() => {
                return Err(Error::Runtime(error.message));
            }
            _ => {
                let _ = writeln!(std::io::stderr(), "agent: {}", error.message);
            }
        }
    }
    if let Some(note) = &result.sandbox_note {
        let _ = writeln!(std::io::stderr(), "agent: {note}");
    }
    for what in &result.sandbox_undone {
        let _ = writeln!(
            std::io::stderr(),
            "agent: sandbox: {}",
            crate::ui::sanitize::escape(what)
        );
    }
    Ok(ExitCode::from(
        u8::try_from(result.shell_status() & 0xff).unwrap_or(u8::MAX),
    ))
}
