//! Approvals that stick: the commands people approve most (test runners, type checkers,
//! linters, project scripts) get a prefix to allow (`3`/`a`, `check --json`'s `prefix`), and
//! a rule with that prefix allows the runner with any ordinary arguments while every option
//! that runs other code or leaves the workspace still asks.

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::harness::Sandbox;

/// Each runner form: the spellings of its program, the words after it that the prefix keeps,
/// ordinary arguments a rule covers, and options that must keep asking under the rule.
struct Runner {
    programs: &'static [&'static str],
    form: &'static str,
    ordinary: &'static [&'static str],
    dangerous: &'static [&'static str],
}

const RUNNERS: &[Runner] = &[
    Runner {
        programs: &["python3", "python", "python3.12", ".venv/bin/python"],
        form: "-m pytest",
        ordinary: &["", "-x tests/", "-k slow -q", "tests/test_a.py::test_b -vv"],
        dangerous: &[
            "-p evil",
            "-pevil",
            "--rootdir=/",
            "--rootdir /",
            "-c /tmp/x.ini",
            "--confcutdir=/",
            "--pyargs pkg",
            "--basetemp=/home",
            "-o addopts=-pevil",
            "--tx popen//python=/tmp/x",
            "/tmp/test_x.py",
            "@args.txt",
        ],
    },
    Runner {
        programs: &["pytest", "py.test"],
        form: "",
        ordinary: &["", "-x", "tests -q"],
        dangerous: &["-p evil", "--rootdir=/", "-c /etc/x.ini", "../other/tests"],
    },
    Runner {
        programs: &["uv", "poetry"],
        form: "run pytest",
        ordinary: &["", "-x tests/"],
        dangerous: &["-p evil", "--rootdir=/"],
    },
    Runner {
        programs: &["npx"],
        form: "jest",
        ordinary: &["", "--ci", "src/a.test.ts --coverage", "-t name"],
        dangerous: &[
            "--config=/tmp/x.js",
            "-c x.js",
            "--rootDir=/",
            "--root-dir /",
            "--setupFiles=/tmp/x.js",
            "--testEnvironment=x",
            "--node-options=--require=/tmp/x.js",
        ],
    },
    Runner {
        programs: &["npx"],
        form: "vitest",
        ordinary: &["", "run", "run src/a.test.ts"],
        dangerous: &["--config=/tmp/x.ts", "--root=/", "--api", "--inspect-brk"],
    },
    Runner {
        programs: &["npx"],
        form: "playwright test",
        ordinary: &["", "--project=chromium", "tests/e2e.spec.ts"],
        dangerous: &["-c /tmp/x.ts", "--ui", "--output=/tmp/out"],
    },
    Runner {
        programs: &["npx"],
        form: "tsc",
        ordinary: &["", "--noEmit", "--noEmit -p tsconfig.json"],
        dangerous: &["--outDir /tmp/x", "-p /tmp/tsconfig.json"],
    },
    Runner {
        programs: &["npx"],
        form: "eslint",
        ordinary: &["", ".", "src --max-warnings=0", "-f json src"],
        dangerous: &["--fix .", "--rulesdir x", "--plugin x", "-o out.txt"],
    },
    Runner {
        programs: &["npm"],
        form: "test",
        ordinary: &["", "-- --ci"],
        dangerous: &["--node-options=--require=x", "--script-shell=/tmp/x"],
    },
    Runner {
        programs: &["npm"],
        form: "run test",
        ordinary: &[""],
        dangerous: &["--script-shell=/tmp/x"],
    },
    Runner {
        programs: &["pnpm", "yarn"],
        form: "test",
        ordinary: &[""],
        dangerous: &["--node-options=x"],
    },
    Runner {
        programs: &["bun"],
        form: "test",
        ordinary: &["", "src/a.test.ts", "-t name"],
        dangerous: &["--preload ./x.ts", "-r x", "--cwd /tmp", "--install=force"],
    },
    Runner {
        programs: &["go"],
        form: "test",
        ordinary: &["", "./...", "-run TestX -count=1 ./pkg/..."],
        dangerous: &[
            "-exec evil ./...",
            "-toolexec=evil ./...",
            "-ldflags=-extld=evil",
            "-o /tmp/x",
        ],
    },
    Runner {
        programs: &["dotnet"],
        form: "test",
        ordinary: &["", "--no-build", "--filter Category=Unit"],
        dangerous: &[
            "--settings x.runsettings",
            "--logger x",
            "--test-adapter-path /tmp",
            "-p:PostBuildEvent=x",
            "/p:PostBuildEvent=x",
            "-- RunConfiguration.TestAdaptersPaths=/tmp",
            "-e DOTNET_STARTUP_HOOKS=/tmp/x.dll",
        ],
    },
    Runner {
        programs: &["mvn", "./mvnw"],
        form: "test",
        ordinary: &["", "-q", "-pl core -am"],
        dangerous: &[
            "-Djvm=/tmp/x",
            "-DargLine=-javaagent:/tmp/x.jar",
            "exec:exec",
            "deploy",
            "-f /tmp/pom.xml",
            "-s /tmp/settings.xml",
        ],
    },
    Runner {
        programs: &["./gradlew", "gradle"],
        form: "test",
        ordinary: &["", "--tests com.x.FooTest", "-x lint --info"],
        dangerous: &[
            "--init-script /tmp/x.gradle",
            "-I x.gradle",
            "-Dorg.gradle.jvmargs=x",
            "publish",
            "--scan",
        ],
    },
    Runner {
        programs: &["make", "gmake"],
        form: "test",
        ordinary: &["", "-j4", "-j 4 -k"],
        dangerous: &[
            "SHELL=/tmp/x",
            "-f /tmp/x.mk",
            "--eval=x",
            "-C /tmp",
            "install",
        ],
    },
    Runner {
        programs: &["./run_tests.sh", "scripts/test.sh"],
        form: "",
        ordinary: &["", "-k slow"],
        dangerous: &[],
    },
];

/// `agent check --json --stdin` over `commands`, with extra arguments: one decision each.
fn decisions(sandbox: &Sandbox, extra: &[&str], commands: &[String]) -> Vec<Value> {
    if commands.is_empty() {
        return Vec::new();
    }
    let output = sandbox
        .agent()
        .args(["check", "--json", "--stdin"])
        .args(extra)
        .write_stdin(commands.join("\n") + "\n")
        .output()
        .unwrap();
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), commands.len(), "{output:?}");
    lines
}

fn join(words: &[&str]) -> String {
    words
        .iter()
        .filter(|w| !w.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn each_runner_form_is_offered_its_prefix() {
    let sandbox = Sandbox::new();
    let mut commands = Vec::new();
    let mut wanted = Vec::new();
    for runner in RUNNERS {
        for program in runner.programs {
            let prefix = join(&[program, runner.form]);
            for arguments in runner.ordinary.iter().chain(runner.dangerous) {
                commands.push(join(&[&prefix, arguments]));
                wanted.push(prefix.clone());
            }
        }
    }
    for ((command, want), got) in
        commands
            .iter()
            .zip(&wanted)
            .zip(decisions(&sandbox, &[], &commands))
    {
        assert_eq!(got["decision"], "ask", "{command}: {got}");
        assert_eq!(got["prefix"], want.as_str(), "{command}: {got}");
    }
}

#[test]
fn a_rule_with_the_prefix_allows_the_runner_and_its_dangerous_options_still_ask() {
    let sandbox = Sandbox::new();
    for runner in RUNNERS {
        for program in runner.programs {
            let prefix = join(&[program, runner.form]);
            for (arguments, want) in [(runner.ordinary, "allow"), (runner.dangerous, "ask")] {
                let commands: Vec<String> = arguments
                    .iter()
                    .map(|arguments| join(&[&prefix, arguments]))
                    .collect();
                for (command, got) in
                    commands
                        .iter()
                        .zip(decisions(&sandbox, &["--allow", &prefix], &commands))
                {
                    assert_eq!(got["decision"], want, "{command} under {prefix}: {got}");
                }
            }
        }
    }
}

#[test]
fn a_runner_rule_never_covers_another_use_of_the_program() {
    let sandbox = Sandbox::new();
    let cases: &[(&str, &str)] = &[
        ("python3 -m pytest", "python3 -c 'import os'"),
        ("python3 -m pytest", "python3 -m pip install x"),
        ("python3 -m pytest", "python3 -X importtime -m pytest"),
        ("python3 -m pytest", "python3 x.py"),
        ("npx jest", "npx --package=evil jest"),
        ("npx jest", "npx -p evil jest"),
        ("npx jest", "npx -c 'sh x'"),
        ("npx jest", "npx cowsay"),
        ("uv run pytest", "uv run --with evil pytest"),
        ("make test", "make"),
        ("make test", "make deploy"),
        ("./run_tests.sh", "bash -c x"),
        ("./run_tests.sh", "./other.sh"),
    ];
    for (rule, command) in cases {
        let got = decisions(&sandbox, &["--allow", rule], &[(*command).to_owned()]);
        assert_eq!(
            got[0]["decision"], "ask",
            "{command} under {rule}: {}",
            got[0]
        );
    }
    // Shells, interpreters and make alone are never offered.
    let alone = [
        "bash run_tests.sh",
        "sh ./run_tests.sh",
        "python3 x.py",
        "make",
        "npx cowsay",
    ];
    let commands: Vec<String> = alone.iter().map(|c| (*c).to_owned()).collect();
    for (command, got) in alone.iter().zip(decisions(&sandbox, &[], &commands)) {
        assert_eq!(got["prefix"], Value::Null, "{command}: {got}");
    }
}
