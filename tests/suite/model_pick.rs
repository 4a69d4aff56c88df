//! `/model` without a name in a session (issue 36): the server's models (`GET /models`,
//! Anthropic's `/v1/models` with its headers) in a picker, the well-known ones where the
//! server lists none, the list printed where no one can pick; the one chosen answers the
//! next message. Names from the server are shown escaped.

use serde_json::json;

use super::fake_model::{FakeModel, Reply, turn_text};
use super::harness::Sandbox;
use super::session::{READY, session};
use super::tty::{Tmux, agent_bin, shell_quote};

/// A `/v1/models` answer listing `names`.
fn model_list(names: &[&str]) -> Reply {
    let data: Vec<_> = names.iter().map(|id| json!({"id": id})).collect();
    Reply::body(
        200,
        "application/json",
        json!({"object": "list", "data": data}).to_string(),
    )
}

const NAMED: &str = "model = \"model-a\"\n";

#[test]
fn model_alone_picks_from_the_servers_list_and_the_next_message_goes_to_it() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("b answers")]).route(
        "/v1/models",
        model_list(&["model-a", "model-b", "evil\u{1b}[31mred"]),
    );
    let tmux = session(&sandbox, &server, NAMED, "");
    tmux.wait_for(READY);
    tmux.keys(&["/model", "Enter"]);
    tmux.wait_for("Talk to which model? (the server's list)");
    // The list is drawn after its question: wait for its last row.
    let screen = tmux.wait_on_screen("evil\\u{1b}[31mred");
    assert!(screen.contains("model-a   (current)"), "{screen}");
    let a = screen.find("model-a   (current)");
    let b = screen.find("model-b");
    assert!(a < b, "the server's order:\n{screen}");
    tmux.keys(&["Down"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("model openai/model-b from the next message");
    tmux.wait_on_screen(READY);
    tmux.keys(&["hello b", "Enter"]);
    tmux.wait_for("b answers");
    assert_eq!(server.request(0).body["model"], "model-b");
    let gets = server.get_requests();
    let listed = gets
        .iter()
        .find(|get| get.path == "/v1/models")
        .expect("GET /v1/models");
    assert_eq!(
        listed.header("authorization"),
        Some("Bearer sk-session-test-0000")
    );
}

#[test]
fn model_alone_offers_the_well_known_models_where_the_server_lists_none() {
    let sandbox = Sandbox::new();
    // No route: the server answers the GET 404.
    let server = FakeModel::openai_turns([turn_text("unused")]);
    let tmux = session(&sandbox, &server, NAMED, "");
    tmux.wait_for(READY);
    tmux.keys(&["/model", "Enter"]);
    tmux.wait_for("the server does not list its models: well-known ones");
    let screen = tmux.wait_on_screen("gpt-4.1-mini");
    assert!(screen.contains("model-a   (current)"), "{screen}");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the model stays openai/model-a");
    assert_eq!(server.gets(), vec!["/v1/models".to_owned()]);
    assert_eq!(server.requests().len(), 0);
}

#[test]
fn model_alone_asks_anthropic_with_its_headers() {
    let sandbox = Sandbox::new();
    let server = FakeModel::anthropic_turns([turn_text("sonnet here")]).route(
        "/v1/models?limit=1000",
        model_list(&["claude-one", "claude-two"]),
    );
    sandbox.settings(&format!(
        "[model]\nprovider = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"claude-one\"\n",
        server.url()
    ));
    let script = shell_quote(&agent_bin());
    let tmux = Tmux::start(
        &sandbox,
        &[("ANTHROPIC_API_KEY", "sk-ant-pick-0000")],
        &script,
    );
    tmux.wait_for(READY);
    tmux.keys(&["/model", "Enter"]);
    tmux.wait_for("Talk to which model? (the server's list)");
    tmux.wait_on_screen("claude-two");
    tmux.keys(&["Down"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("model anthropic/claude-two from the next message");
    tmux.wait_on_screen(READY);
    tmux.keys(&["hello", "Enter"]);
    tmux.wait_for("sonnet here");
    assert_eq!(server.request(0).body["model"], "claude-two");
    let gets = server.get_requests();
    assert_eq!(gets.len(), 1, "{gets:?}");
    assert_eq!(gets[0].header("x-api-key"), Some("sk-ant-pick-0000"));
    assert_eq!(gets[0].header("anthropic-version"), Some("2023-06-01"));
}

#[test]
fn model_alone_prints_the_list_where_no_one_can_pick() {
    let sandbox = Sandbox::new();
    let server = FakeModel::openai_turns([turn_text("unused")])
        .route("/v1/models", model_list(&["model-a", "model-z"]));
    let tmux = session(&sandbox, &server, NAMED, "run -i --no-prompt");
    tmux.wait_for(READY);
    tmux.keys(&["/model", "Enter"]);
    let screen = tmux.wait_for("/model NAME switches to one");
    assert!(screen.contains("models the server serves:"), "{screen}");
    assert!(screen.contains("  model-a   (current)"), "{screen}");
    assert!(screen.contains("  model-z"), "{screen}");
    assert!(!screen.contains("Talk to which model?"), "{screen}");
}

/// The wait for a server that never answers `GET /models` stops at Esc: the composer is back
/// and nothing changed (the next message goes to the same model); no picker is shown.
#[test]
fn esc_stops_waiting_for_a_server_that_never_lists_its_models() {
    let sandbox = Sandbox::new();
    let never = model_list(&["model-b"]).slow(std::time::Duration::from_secs(3600));
    let server = FakeModel::openai_turns([turn_text("a answers")]).route("/v1/models", never);
    let tmux = session(&sandbox, &server, NAMED, "");
    tmux.wait_for(READY);
    tmux.keys(&["/model", "Enter"]);
    tmux.wait_for("asking the server which models it serves");
    tmux.keys(&["Escape"]);
    tmux.wait_for("stopped asking the server; the model stays openai/model-a");
    tmux.wait_on_screen(READY);
    tmux.keys(&["hello", "Enter"]);
    let screen = tmux.wait_for("a answers");
    assert!(!screen.contains("Talk to which model?"), "{screen}");
    assert_eq!(server.request(0).body["model"], "model-a");
}
