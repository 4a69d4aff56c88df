//! The environment that points a sandboxed command's tools at the proxy's bridge
//! (`127.0.0.1:PORT` inside the command's network namespace, HTTP and SOCKS5 on one port): the
//! variables curl, wget,
//! Python, Node, Go and Rust read, and the ones npm, pip, git, the JVM, Gradle and Cargo read
//! instead. `localhost` stays direct: inside the namespace it is the command's own. Pure.

/// The addresses that never go through the proxy: the namespace's own loopback.
pub const NO_PROXY: &str = "localhost,127.0.0.1,::1";

/// The variables for a proxy bridge on `127.0.0.1:port`. `git_config_count`: how many
/// `GIT_CONFIG_KEY_n` entries the command already gets (git's `http.proxy` is added after
/// them).
#[must_use]
pub fn proxy_env(port: u16, git_config_count: usize) -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{port}");
    let java = format!(
        "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort={port} -Dhttps.proxyHost=127.0.0.1 \
         -Dhttps.proxyPort={port} -Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]"
    );
    let mut env: Vec<(String, String)> = [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "http_proxy",
        "https_proxy",
        "npm_config_proxy",
        "npm_config_https_proxy",
        "PIP_PROXY",
        "CARGO_HTTP_PROXY",
    ]
    .into_iter()
    .map(|name| (name.to_owned(), url.clone()))
    .collect();
    // The same port speaks SOCKS5; `socks5h` leaves the name to the proxy.
    for name in ["ALL_PROXY", "all_proxy"] {
        env.push((name.to_owned(), format!("socks5h://127.0.0.1:{port}")));
    }
    for name in ["NO_PROXY", "no_proxy", "npm_config_noproxy"] {
        env.push((name.to_owned(), NO_PROXY.to_owned()));
    }
    for name in ["JAVA_TOOL_OPTIONS", "GRADLE_OPTS"] {
        let before = std::env::var(name).unwrap_or_default();
        let value = if before.trim().is_empty() {
            java.clone()
        } else {
            format!("{before} {java}")
        };
        env.push((name.to_owned(), value));
    }
    let index = git_config_count;
    env.push(("GIT_CONFIG_COUNT".to_owned(), (index + 1).to_string()));
    env.push((format!("GIT_CONFIG_KEY_{index}"), "http.proxy".to_owned()));
    env.push((format!("GIT_CONFIG_VALUE_{index}"), url));
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_family_is_pointed_at_the_bridge() {
        let env = proxy_env(3128, 2);
        let get = |name: &str| {
            env.iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.as_str())
        };
        for name in [
            "HTTP_PROXY",
            "https_proxy",
            "npm_config_https_proxy",
            "PIP_PROXY",
            "CARGO_HTTP_PROXY",
            "GIT_CONFIG_VALUE_2",
        ] {
            assert_eq!(get(name), Some("http://127.0.0.1:3128"), "{name}");
        }
        assert_eq!(get("NO_PROXY"), Some("localhost,127.0.0.1,::1"));
        assert_eq!(get("all_proxy"), Some("socks5h://127.0.0.1:3128"));
        assert_eq!(get("GIT_CONFIG_COUNT"), Some("3"));
        assert_eq!(get("GIT_CONFIG_KEY_2"), Some("http.proxy"));
        assert!(
            get("JAVA_TOOL_OPTIONS")
                .unwrap()
                .contains("-Dhttps.proxyPort=3128")
        );
        assert!(
            get("GRADLE_OPTS")
                .unwrap()
                .contains("-Dhttp.proxyHost=127.0.0.1")
        );
    }
}
