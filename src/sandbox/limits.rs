//! The resource limits of a sandboxed command: CPU time and memory, for the commands that run
//! without a person's yes (the read-only list's), so that a look (`seq inf`, `jq -n
//! 'last(range(1e18))'`, `sort -S 100%`) cannot keep a core busy or fill the memory until its
//! timeout. On Linux the stage sets them just before it becomes the command, and every process
//! the command starts inherits them; nothing in the sandbox can raise them again (the hard
//! limits are lowered too). Commands a person said yes to get none of this. Elsewhere (macOS,
//! no sandbox) they are not applied.
//!
//! The memory limit is `RLIMIT_DATA`, not `RLIMIT_AS`: it counts what a program writes (heap,
//! private writable mappings), not address space it only reserves or files it maps to read, so
//! `git` with large packs, `rg` on big files and JIT runtimes that reserve address space keep
//! working while a buffer that grows without end fails its allocation.

use std::ffi::OsString;

/// Default CPU time of a command the read-only list allowed — a look at code (`rg`, `git
/// log`, `jq`) takes a fraction of it; a runaway one is stopped long before the 30 s timeout.
pub const DEFAULT_INSPECT_CPU_SECS: u64 = 10;

/// Default memory of a command the read-only list allowed, in MiB — room for `sort` of a big
/// file or `jq` of a large document, far below what would push a laptop into swap.
pub const DEFAULT_INSPECT_MEMORY_MB: u64 = 2048;

/// Seconds between the CPU limit's SIGXCPU and its SIGKILL, for a program that ignores the
/// first.
#[cfg(target_os = "linux")]
const CPU_GRACE_SECS: u64 = 1;

/// The signal the CPU limit sends first (`SIGXCPU` on Linux).
const SIGXCPU: i32 = 24;

/// Words in stderr that say an allocation failed (C's `strerror(ENOMEM)`, GNU's "memory
/// exhausted", Rust's and Python's messages).
const OUT_OF_MEMORY_WORDS: &[&str] = &[
    "allocate memory",
    "memory exhausted",
    "out of memory",
    "Out of memory",
    "memory allocation",
    "MemoryError",
];

/// The helper's arguments that carry the limits.
const CPU_ARG: &str = "--cpu-secs";
const MEMORY_ARG: &str = "--memory-bytes";

/// Per-process limits of a sandboxed command; `None`: as the agent has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResourceLimits {
    /// CPU seconds (`RLIMIT_CPU`): SIGXCPU after this many, SIGKILL a second later.
    pub cpu_secs: Option<u64>,
    /// Bytes of data (`RLIMIT_DATA`): allocations past it fail.
    pub memory_bytes: Option<u64>,
}

impl ResourceLimits {
    /// The limits of a look: `cpu_secs` of CPU time and `memory_mb` MiB of memory.
    #[must_use]
    pub fn inspection(cpu_secs: u64, memory_mb: u64) -> Self {
        Self {
            cpu_secs: Some(cpu_secs),
            memory_bytes: Some(memory_mb.saturating_mul(1024 * 1024)),
        }
    }

    /// The helper's arguments for these limits.
    pub(super) fn helper_args(self) -> Vec<OsString> {
        let mut args = Vec::new();
        for (flag, value) in [(CPU_ARG, self.cpu_secs), (MEMORY_ARG, self.memory_bytes)] {
            if let Some(value) = value {
                args.push(flag.into());
                args.push(value.to_string().into());
            }
        }
        args
    }

    /// Takes the helper's argument `flag` with its value when it is one of the limits';
    /// `Ok(false)`: not a limit's argument.
    ///
    /// # Errors
    /// A limit's argument without a number.
    pub(super) fn parse_arg(
        &mut self,
        flag: &str,
        value: impl FnOnce() -> Option<OsString>,
    ) -> Result<bool, String> {
        let slot = match flag {
            CPU_ARG => &mut self.cpu_secs,
            MEMORY_ARG => &mut self.memory_bytes,
            _ => return Ok(false),
        };
        let number = value()
            .and_then(|value| value.to_str()?.parse().ok())
            .ok_or_else(|| format!("`{flag}` needs a number"))?;
        *slot = Some(number);
        Ok(true)
    }

    /// When a command ended the way one of these limits ends it (SIGXCPU, or an allocation
    /// that failed with the memory limit set), a note for the model saying so; `None`
    /// otherwise. A guess from the status and the command's own stderr: the note says
    /// "likely".
    #[must_use]
    pub fn note(self, exit_code: Option<i32>, signal: Option<i32>, stderr: &str) -> Option<String> {
        let what = if let Some(secs) = self.cpu_secs
            && (signal == Some(SIGXCPU) || exit_code == Some(128 + SIGXCPU))
        {
            format!("CPU-time limit ({secs} s per process)")
        } else if let Some(bytes) = self.memory_bytes
            && exit_code != Some(0)
            && OUT_OF_MEMORY_WORDS.iter().any(|word| stderr.contains(word))
        {
            format!("memory limit ({} MiB per process)", bytes >> 20)
        } else {
            return None;
        };
        Some(format!(
            "likely stopped by the sandbox's {what} for commands that run without the user's \
             yes: narrow the command (a smaller input, a path, fewer revisions), or ask the user \
             to run it"
        ))
    }

    /// Sets the limits on this process (the stage, just before it becomes the command), soft
    /// and hard alike, and turns core dumps off where a CPU limit may end the command (a
    /// SIGXCPU dumps core by default).
    ///
    /// # Errors
    /// Which limit could not be set, and why.
    #[cfg(target_os = "linux")]
    pub(super) fn apply(self) -> Result<(), String> {
        use rustix::process::{Resource, Rlimit, setrlimit};
        let set = |resource: Resource, current: u64, maximum: u64, name: &str| {
            // Never above what this process already has: only ever lowered.
            let hard = rustix::process::getrlimit(resource).maximum;
            let cap = |value: u64| Some(hard.map_or(value, |hard| value.min(hard)));
            setrlimit(
                resource,
                Rlimit {
                    current: cap(current),
                    maximum: cap(maximum),
                },
            )
            .map_err(|error| format!("cannot limit the command's {name}: {error}"))
        };
        if let Some(secs) = self.cpu_secs {
            set(Resource::Core, 0, 0, "core dumps")?;
            set(
                Resource::Cpu,
                secs,
                secs.saturating_add(CPU_GRACE_SECS),
                "CPU time",
            )?;
        }
        if let Some(bytes) = self.memory_bytes {
            set(Resource::Data, bytes, bytes, "memory")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn limits_go_through_the_helper_arguments_and_back() {
        for limits in [
            ResourceLimits::default(),
            ResourceLimits::inspection(10, 2048),
            ResourceLimits {
                cpu_secs: Some(2),
                memory_bytes: None,
            },
        ] {
            let mut args = limits.helper_args().into_iter();
            let mut parsed = ResourceLimits::default();
            while let Some(flag) = args.next() {
                let flag = flag.to_string_lossy().into_owned();
                assert_eq!(parsed.parse_arg(&flag, || args.next()), Ok(true), "{flag}");
            }
            assert_eq!(parsed, limits);
        }
        assert_eq!(
            ResourceLimits::inspection(10, 2048).memory_bytes,
            Some(2 << 30)
        );
    }

    #[test]
    fn a_stop_by_a_limit_is_noted_and_nothing_else_is() {
        let limits = ResourceLimits::inspection(10, 2048);
        let cpu = limits.note(None, Some(SIGXCPU), "").unwrap();
        assert!(cpu.contains("CPU-time limit (10 s per process)"), "{cpu}");
        assert_eq!(limits.note(Some(152), None, ""), Some(cpu));
        let memory = limits
            .note(Some(5), None, "jq: error: cannot allocate memory\n")
            .unwrap();
        assert!(
            memory.contains("memory limit (2048 MiB per process)"),
            "{memory}"
        );
        for (exit_code, signal, stderr) in [
            (Some(1), None, "no such file\n"),
            (Some(0), None, "out of memory\n"),
            (None, Some(9), ""),
        ] {
            assert_eq!(limits.note(exit_code, signal, stderr), None, "{stderr}");
        }
        let none = ResourceLimits::default();
        assert_eq!(none.note(None, Some(SIGXCPU), "out of memory"), None);
    }

    #[test]
    fn a_limit_without_a_number_is_refused_and_other_flags_are_left_alone() {
        let mut limits = ResourceLimits::default();
        assert_eq!(limits.parse_arg("--write", || None), Ok(false));
        assert!(limits.parse_arg(CPU_ARG, || None).is_err());
        assert!(
            limits
                .parse_arg(MEMORY_ARG, || Some("lots".into()))
                .is_err()
        );
        assert_eq!(limits, ResourceLimits::default());
    }
}
