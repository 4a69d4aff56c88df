//! The `agent` binary: parse flags, run, exit. Everything else is in the library.

fn main() -> std::process::ExitCode {
    agent::main(std::env::args_os())
}
