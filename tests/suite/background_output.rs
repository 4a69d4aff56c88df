//! A background process's output reaches the transcript and `--json` as it is read
//! (`background_output` events), through the real binary (Linux with the sandbox): secrets
//! redacted as in a command's output, bounded per process (its first 64 KiB, the last piece
//! marked `capped`).

use super::background::{available, background_turn, last_result, processes_turn};
use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::{KEY, Sandbox, events};
use super::support::process::kill_left;
use serde_json::{Value, json as j};

/// What the transcript keeps of one background process: 64 KiB.
const STREAMED_BYTES: usize = 64 * 1024;

/// The `background_output` events of `id` in `events`.
fn background_output<'a>(events: &'a [Value], id: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|event| event["type"] == "background_output" && event["id"] == id)
        .collect()
}

#[test]
fn background_output_is_recorded_as_it_comes_redacted_and_bounded() {
    let sandbox = Sandbox::new();
    if !available(&sandbox) {
        return;
    }
    let work = sandbox.work();
    let (first, second) = KEY.split_at(8);
    std::fs::write(work.join("first.txt"), first).unwrap();
    std::fs::write(work.join("second.txt"), second).unwrap();
    // The key in two reads; then far more than the bound; then a file saying it printed all.
    std::fs::write(
        work.join("chatty.sh"),
        "echo ready-marker; cat first.txt; sleep 0.2; cat second.txt; echo\n\
         head -c 200000 /dev/zero | tr '\\0' x; echo; echo >&2 end-marker\n\
         touch printed; exec sleep 60\n",
    )
    .unwrap();
    let server = FakeModel::openai_turns([
        background_turn("sh chatty.sh"),
        turn_tool_call(
            "for _ in $(seq 600); do [ -e printed ] && break; sleep 0.05; done; ls printed",
            "wait until it printed",
        ),
        processes_turn(&j!({"action": "output", "id": "bg1", "tail": 100})),
        turn_text("done"),
    ]);
    let output = sandbox
        .openai_run(&server)
        .args(["--mode", "allow-all", "--json", "serve"])
        .output()
        .unwrap();
    kill_left(&work);
    assert!(output.status.success(), "{output:?}");
    assert!(
        last_result(&server, 3).contains("end-marker"),
        "{}",
        last_result(&server, 3)
    );
    let path = sandbox.transcript_paths().into_iter().next().unwrap();
    let recorded = events(&std::fs::read(path).unwrap());
    for (source, events) in [("--json", events(&output.stdout)), ("transcript", recorded)] {
        let pieces = background_output(&events, "bg1");
        let stdout: String = pieces
            .iter()
            .filter(|piece| piece["stream"] == "stdout")
            .filter_map(|piece| piece["text"].as_str())
            .collect();
        assert!(
            stdout.starts_with("ready-marker\n[REDACTED]\n"),
            "{source}: {stdout:.200}"
        );
        assert!(
            !stdout.contains(first) && !stdout.contains(second),
            "{source}"
        );
        let all: usize = pieces
            .iter()
            .filter_map(|piece| piece["text"].as_str())
            .map(str::len)
            .sum();
        assert_eq!(all, STREAMED_BYTES, "{source}");
        let last = pieces.last().unwrap();
        assert_eq!(last["capped"], true, "{source}: {last}");
        assert!(
            pieces
                .iter()
                .rev()
                .skip(1)
                .all(|piece| piece.get("capped").is_none()),
            "{source}"
        );
        // Among the run's events in the order it came: before the call that waited for it
        // ended.
        let first_piece = events
            .iter()
            .position(|event| event["type"] == "background_output")
            .unwrap();
        let waited = events
            .iter()
            .rposition(|event| event["type"] == "tool_result")
            .unwrap();
        assert!(first_piece < waited, "{source}");
        let stderr = pieces
            .iter()
            .filter(|piece| piece["stream"] == "stderr")
            .count();
        assert_eq!(stderr, 0, "{source}: past the bound");
    }
}
