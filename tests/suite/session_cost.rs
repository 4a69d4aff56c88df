//! `/usage` in a session (issue 36): what the tokens cost, estimated from the dated price
//! table for well-known models, at the `[model] price_in` / `price_out` settings when set,
//! and said to be unknown for other models — each request priced at the model that
//! answered it.

use super::fake_model::FakeModel;
use super::harness::Sandbox;
use super::session::{READY, session, text_with_usage};

#[test]
fn usage_estimates_the_cost_of_a_well_known_model_and_says_when_a_model_has_no_price() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([
        text_with_usage("first answer", 1_000_000, 100_000),
        text_with_usage("second answer", 4_000, 50),
    ]);
    let tmux = session(&sandbox, &server, "model = \"gpt-4.1\"\n", "");
    tmux.wait_for(READY);
    tmux.keys(&["/usage", "Enter"]);
    // Nothing spent yet: $0 at the table's price.
    tmux.wait_for("0 in · 0 out (0 model requests) · about $0.0000 (estimate, prices of 20");
    tmux.keys(&["one", "Enter"]);
    tmux.wait_for("first answer");
    tmux.wait_on_screen(READY);
    tmux.keys(&["/usage", "Enter"]);
    // 1M in at $2 and 0.1M out at $8 per million.
    let screen = tmux.wait_for("1.0M in · 100.0k out (1 model request) · about $2.8000");
    assert!(
        screen.contains("(estimate, prices of 2026-10-01 for gpt-4.1; [model] price_in/price_out"),
        "{screen}"
    );
    tmux.keys(&["/model local-thing", "Enter"]);
    tmux.wait_for("model openai/local-thing from the next message");
    tmux.wait_on_screen(READY);
    tmux.keys(&["two", "Enter"]);
    tmux.wait_for("second answer");
    tmux.wait_on_screen(READY);
    tmux.keys(&["/usage", "Enter"]);
    // The first request keeps its price; the second has none, and that is said.
    tmux.wait_for("(2 model requests) · about $2.8000");
    tmux.wait_for(
        "no price known for openai/local-thing: its 4.0k in · 50 out are not in the cost",
    );
}

#[test]
fn price_settings_override_the_table() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([text_with_usage("answer", 1_000_000, 100_000)]);
    let tmux = session(
        &sandbox,
        &server,
        "model = \"gpt-4.1\"\nprice_in = 1.0\nprice_out = 1.0\n",
        "",
    );
    tmux.wait_for(READY);
    tmux.keys(&["one", "Enter"]);
    tmux.wait_for("answer");
    tmux.wait_on_screen(READY);
    tmux.keys(&["/usage", "Enter"]);
    let screen = tmux.wait_for("about $1.1000 (at your [model] price_in/price_out)");
    assert!(!screen.contains("estimate"), "{screen}");
}

#[test]
fn an_unknown_model_has_no_cost_and_says_how_to_set_one() {
    let sandbox = Sandbox::new();
    let server = FakeModel::new([]);
    let tmux = session(&sandbox, &server, "model = \"qwen2.5-coder\"\n", "");
    tmux.wait_for(READY);
    tmux.keys(&["/usage", "Enter"]);
    let screen = tmux
        .wait_for("no price known for openai/qwen2.5-coder: set [model] price_in and price_out");
    assert!(!screen.contains("about $"), "{screen}");
}
