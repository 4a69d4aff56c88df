//! `[network] mode = "allowlist"` for the commands that run commands (`exec`, `run`,
//! `session`): whether commands get a network namespace of their own behind the proxy here
//! (and, once, why not), starting the proxy for a run, and what it decided, told after each
//! command.

#[cfg(unix)]
use crate::error::{Error, Result};
use crate::net::NetworkMode;
use crate::sandbox::Sandbox;
use crate::settings::Settings;

/// Whether commands reach the network only through the proxy: `Ok(true)` in mode `allowlist`
/// with an active sandbox that can hold them to it (Linux: a network namespace of their own
/// where one can be made; macOS: a Seatbelt profile that opens only the proxy's door),
/// `Ok(false)` when not asked for (or no sandbox applies: the notice says commands run
/// without it), `Err(why)` when asked for but impossible here.
fn own_network(settings: &Settings, sandbox: &Sandbox) -> std::result::Result<bool, String> {
    if settings.net.mode.value != NetworkMode::Allowlist || sandbox.active_policy().is_none() {
        return Ok(false);
    }
    if cfg!(target_os = "macos") {
        return Ok(true);
    }
    crate::sandbox::network_namespace_possible().map(|()| true)
}

/// Where `allowlist` cannot be enforced, the sandbox's limitation says so (once: on stderr,
/// in `config show` and the `start` event); its commands then get no network at all.
pub(super) fn say_when_impossible(settings: &Settings, sandbox: &mut Sandbox) {
    if settings.net.mode.value == NetworkMode::Allowlist && sandbox.active_policy().is_none() {
        // Without the sandbox a command has the machine's network: refuse rather than run
        // with every host open.
        let why = match &sandbox.state {
            crate::sandbox::State::Unavailable(_) => "the sandbox is not available here",
            _ => "the sandbox is off",
        };
        sandbox.refused = Some(format!(
            "`[network] mode = \"allowlist\"` needs the sandbox, and {why}: no command runs \
             (commands would reach every host); turn the sandbox on, or choose `[network] mode` \
             \"full\" or \"off\""
        ));
        return;
    }
    if let Err(why) = own_network(settings, sandbox) {
        let limit = format!(
            "`[network] mode = \"allowlist\"` cannot be enforced here ({why}): commands get no \
             network at all (allow unprivileged user namespaces, or choose mode \"full\" or \
             \"off\")"
        );
        sandbox.limitation = Some(match sandbox.limitation.take() {
            Some(before) => format!("{before}; {limit}"),
            None => limit,
        });
    }
}

/// Starts the network proxy when commands go through it and points the sandbox's policy at
/// it; keep the proxy for as long as commands run (it serves in `runtime`).
///
/// # Errors
/// The proxy's socket cannot be made.
#[cfg(unix)]
pub(crate) fn start(
    runtime: &tokio::runtime::Runtime,
    settings: &Settings,
    sandbox: &mut Sandbox,
) -> Result<Option<crate::net::proxy::Proxy>> {
    start_asking(runtime, settings, sandbox, None)
}

/// [`start`], asking a person through `asking` about hosts no rule decides.
#[cfg(unix)]
fn start_asking(
    runtime: &tokio::runtime::Runtime,
    settings: &Settings,
    sandbox: &mut Sandbox,
    asking: Option<std::sync::Arc<crate::net::ask::Asking>>,
) -> Result<Option<crate::net::proxy::Proxy>> {
    if own_network(settings, sandbox) != Ok(true) {
        return Ok(None);
    }
    let _inside = runtime.enter();
    #[cfg_attr(not(target_os = "macos"), allow(unused_mut))]
    let mut proxy = crate::net::proxy::Proxy::start_asking(
        settings.net.rules(),
        &sandbox.policy.temp,
        asking,
    )
    .map_err(|error| {
        Error::Runtime(format!(
            "cannot start the network proxy in {}: {error}: set `[network] mode` to \"off\" \
                 or \"full\"",
            sandbox.policy.temp.display()
        ))
    })?;
    // No namespace holds a bridge on macOS: the proxy opens a door on the loopback, the only
    // port the command's Seatbelt profile lets it reach.
    #[cfg(target_os = "macos")]
    {
        sandbox.policy.proxy_door = Some(proxy.open_door().map_err(|error| {
            Error::Runtime(format!(
                "cannot open the network proxy's port on 127.0.0.1: {error}: set `[network] \
                 mode` to \"off\" or \"full\""
            ))
        })?);
    }
    sandbox.policy.proxy = Some(proxy.dir().to_path_buf());
    Ok(Some(proxy))
}

/// [`start`] for a run or session in `runtime`: its commands' decisions go to the loop through
/// `config.network`; with `ask` (a person can answer), hosts no rule decides are asked about
/// while the command waits. Keep the proxy for as long as the loop runs.
///
/// # Errors
/// The proxy's socket cannot be made.
#[cfg(unix)]
pub(crate) fn start_for_loop(
    runtime: &tokio::runtime::Runtime,
    settings: &Settings,
    config: &mut crate::agent::Config,
    ask: bool,
) -> Result<Option<crate::net::proxy::Proxy>> {
    let (asking, questions) = if ask {
        let (asking, questions) = crate::net::ask::Asking::new();
        (Some(std::sync::Arc::new(asking)), Some(questions))
    } else {
        (None, None)
    };
    let proxy = start_asking(runtime, settings, &mut config.sandbox, asking.clone())?;
    // `web_fetch` asks through the same person, with the same answers for the run.
    if config.web_fetch.is_some() {
        config.web_fetch = Some(std::sync::Arc::new(crate::net::fetch::Fetcher::new(
            settings.net.rules(),
            asking,
        )));
    }
    if proxy.is_some() || config.web_fetch.is_some() {
        config.network_questions = questions;
    }
    config.network = proxy.as_ref().map(crate::net::proxy::Proxy::log);
    if proxy.is_some() {
        config.network_reach = settings.net.rules().reachable();
    }
    Ok(proxy)
}

/// The decisions of `agent exec`'s command, each refusal told on stderr (unless `--json`,
/// whose result carries them).
#[cfg(unix)]
pub(crate) fn told(log: &crate::net::Log, json: bool) -> Vec<crate::net::NetworkEvent> {
    use std::io::Write as _;
    let decisions = log.take().0;
    let mut blocked = crate::ui::network::Blocked::default();
    for line in decisions.iter().filter_map(|event| blocked.see(event)) {
        if !json {
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }
    decisions
}
