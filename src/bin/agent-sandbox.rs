//! `agent-sandbox`: the sandbox helper on its own. `agent` starts it for every sandboxed
//! command; it restricts itself (`agent::sandbox::helper_main`) and becomes the command.
//! It is the same code as `agent __sandbox`, in a binary without the async runtime, HTTP
//! and terminal code, so it starts in a fraction of the time. It takes only the arguments of
//! the `agent` of its own version (the first one says which).

fn main() -> std::process::ExitCode {
    agent::sandbox::helper_program_main(std::env::args_os().skip(1))
}
