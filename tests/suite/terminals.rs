//! A sandboxed command cannot reach the person's terminals (issue 34's review, B3): not the
//! agent's own (`/dev/tty`: drawing over a question, taking keys) and not any other of the
//! user's (`/dev/pts/N`). Each case has a control run without the sandbox that shows the test
//! can fail. A pseudo-terminal made by the test (through `python3`) stands for the person's.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Child, ChildStdout, Command, Stdio};

use super::harness::Sandbox;
use super::sandbox::available;
use super::support::require_program;
use super::tty::agent_bin;

/// Holds a pseudo-terminal, says its slave's path, and reads what reaches it until the test
/// writes `END` there: then says `GOT` if `MARK` came first, `CLEAN` if not.
const HOLDER: &str = r"
import os
m, s = os.openpty()
print(os.ttyname(s), flush=True)
seen = b''
while b'END' not in seen:
    seen += os.read(m, 4096)
print('GOT' if b'MARK' in seen.split(b'END')[0] else 'CLEAN', flush=True)
";

struct Holder {
    child: Child,
    out: BufReader<ChildStdout>,
    path: String,
}

impl Holder {
    fn start() -> Self {
        let mut child = Command::new("python3")
            .args(["-c", HOLDER])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut path = String::new();
        out.read_line(&mut path).unwrap();
        Self {
            child,
            out,
            path: path.trim().to_owned(),
        }
    }

    /// Ends the reading (the test's own `END`, written after the command has ended) and
    /// says whether the command's `MARK` reached the terminal.
    fn reached(mut self) -> bool {
        let mut slave = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.path)
            .unwrap();
        slave.write_all(b"END\n").unwrap();
        let mut answer = String::new();
        self.out.read_line(&mut answer).unwrap();
        let _ = self.child.wait();
        match answer.trim() {
            "GOT" => true,
            "CLEAN" => false,
            other => panic!("the holder said {other:?}"),
        }
    }
}

fn agent(sandbox: &Sandbox) -> Command {
    let mut command = Command::new(agent_bin());
    command.env_clear().envs(sandbox.environment());
    command.current_dir(sandbox.work());
    command
}

/// `printf MARK` spelled so that the command's own text holds no `MARK`.
const PRINT_MARK: &str = r"printf '\115ARK'";

#[test]
fn a_command_cannot_write_to_another_terminal_of_the_user() {
    if !available() || !require_program("python3") {
        return;
    }
    let sandbox = Sandbox::new();
    let mut outcome = Vec::new();
    for sandboxed in [false, true] {
        let holder = Holder::start();
        let command = format!("{PRINT_MARK} > {}", holder.path);
        let mut exec = agent(&sandbox);
        exec.args(["exec", "--json"]);
        if !sandboxed {
            exec.args(["--sandbox", "off"]);
        }
        let output = exec.arg(&command).output().unwrap();
        outcome.push((
            sandboxed,
            holder.reached(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        ));
    }
    assert!(
        outcome[0].1,
        "the control run did not reach the terminal: {outcome:?}"
    );
    assert!(
        !outcome[1].1,
        "the sandboxed command reached it: {outcome:?}"
    );
}

/// The agent runs at a terminal (its controlling one): a command writing to `/dev/tty` would
/// draw over the agent's screen.
#[test]
fn a_command_cannot_write_to_the_agents_own_terminal() {
    if !available() || !require_program("python3") {
        return;
    }
    let sandbox = Sandbox::new();
    // `pty.fork`: the agent gets the pseudo-terminal as its controlling terminal (and its
    // output); the parent reads everything until the agent ends.
    let script = r"
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
seen = b''
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
os.waitpid(pid, 0)
sys.stdout.write('GOT' if b'MARK' in seen else 'CLEAN')
";
    let mut outcome = Vec::new();
    for sandboxed in [false, true] {
        let mut args = vec![agent_bin(), "exec".to_owned(), "--json".to_owned()];
        if !sandboxed {
            args.extend(["--sandbox".to_owned(), "off".to_owned()]);
        }
        args.push(format!("{PRINT_MARK} > /dev/tty"));
        let mut child = Command::new("python3")
            .arg("-c")
            .arg(script)
            .args(&args)
            .env_clear()
            .envs(sandbox.environment())
            .current_dir(sandbox.work())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut said = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut said)
            .unwrap();
        let _ = child.wait();
        outcome.push((sandboxed, said));
    }
    assert_eq!(outcome[0].1, "GOT", "the control run: {outcome:?}");
    assert_eq!(outcome[1].1, "CLEAN", "the sandboxed run: {outcome:?}");
}

/// The command still has pseudo-terminals of its own (`script`, `expect`, a test runner's
/// pty): it makes one and writes through it.
#[test]
fn a_command_still_makes_terminals_of_its_own() {
    if !available() || !require_program("python3") {
        return;
    }
    let sandbox = Sandbox::new();
    let command = "python3 -c 'import os; m, s = os.openpty(); os.write(s, b\"own\\n\"); print(os.read(m, 64))'";
    let output = agent(&sandbox).args(["exec", command]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("own"),
        "{stdout} {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
