//! What `agent` printed, read as JSON: `--json` event lines, transcripts, one object.

/// Every line of `text` (stdout of `--json`, or a transcript) as a JSON value.
pub fn events(text: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(text)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// Parses stdout as one JSON object.
pub fn json(output: &std::process::Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|error| panic!("stdout is not one JSON object ({error}):\n{text}"))
}
