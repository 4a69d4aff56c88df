//! `agent rules [list|add RULE|remove [RULE]]`: every allow and deny rule that applies in
//! this workspace with where it was written, writing one into the user settings file as `a`
//! or `3` at the prompt would (checked by the same `policy::allow_rule_problem`), and taking
//! rules out of it — one named, or those the person marks in a list at a terminal.

use std::process::ExitCode;

use serde_json::json;

use crate::approve;
use crate::cli::{GlobalArgs, RulesArgs, RulesCommand};
use crate::error::{Error, Result, Status};
use crate::settings::{ListedRule, Origin, RuleKind, Settings};

/// Runs `agent rules …`.
pub(crate) fn run(global: &GlobalArgs, args: &RulesArgs) -> Result<ExitCode> {
    let workspace = super::workspace(global.cwd.as_deref())?;
    let overrides = crate::settings::Overrides {
        allow: args.allow.clone(),
        deny: args.deny.clone(),
        ..super::overrides(global)
    };
    let settings = super::load_settings(global, &overrides, &workspace)?;
    match &args.command {
        None | Some(RulesCommand::List) => {
            super::print_stdout(&render(&settings, global.json))?;
        }
        Some(RulesCommand::Add {
            rule,
            deny,
            project,
        }) => {
            add(global, &settings, &workspace, rule, *deny, *project)?;
        }
        Some(RulesCommand::Remove { rule: Some(rule) }) => {
            remove(global, &settings, &workspace, rule)?;
        }
        Some(RulesCommand::Remove { rule: None }) => {
            if let Err(why) = approve::terminal_reachable(false) {
                return Err(Error::Usage(format!(
                    "`agent rules remove` needs a RULE here ({why}, so no list to pick from): \
                     `agent rules` lists them"
                )));
            }
            for rule in pick(&settings, super::use_color(global))? {
                remove(global, &settings, &workspace, &rule)?;
            }
        }
    }
    Ok(Status::Success.into())
}

/// `user`, `user-project`, `profile`, `project` or `flag`.
fn source(origin: &Origin) -> &'static str {
    match origin {
        Origin::User(..) => "user",
        Origin::UserProject(..) => "user-project",
        Origin::Profile(..) => "profile",
        Origin::Project(..) => "project",
        Origin::Flag(_) => "flag",
        Origin::Env(_) | Origin::Default(_) => "default",
    }
}

fn kind_name(kind: RuleKind) -> &'static str {
    match kind {
        RuleKind::Allow => "allow",
        RuleKind::Deny => "deny",
    }
}

/// One rule per line (`allow  git status  # user ~/.config/agent/settings.toml:7`), or JSON.
fn render(settings: &Settings, as_json: bool) -> String {
    if as_json {
        let rules: Vec<_> = settings
            .rules
            .iter()
            .map(|rule| {
                let (file, line, workspace) = match &rule.origin {
                    Origin::User(file, line)
                    | Origin::Profile(_, file, line)
                    | Origin::Project(file, line) => {
                        (Some(file.display().to_string()), Some(*line), None)
                    }
                    Origin::UserProject(file, line, workspace) => (
                        Some(file.display().to_string()),
                        Some(*line),
                        Some(workspace.clone()),
                    ),
                    Origin::Flag(_) | Origin::Env(_) | Origin::Default(_) => (None, None, None),
                };
                let mut value = json!({
                    "kind": kind_name(rule.kind),
                    "rule": rule.prefix,
                    "source": source(&rule.origin),
                    "origin": rule.origin.to_string(),
                    "file": file,
                    "line": line,
                });
                if let Some(workspace) = workspace {
                    value["workspace"] = json!(workspace);
                }
                if let Origin::Profile(name, ..) = &rule.origin {
                    value["profile"] = json!(name);
                }
                value
            })
            .collect();
        return format!(
            "{}\n",
            json!({
                "user_file": settings.user_file.display().to_string(),
                "project_file": settings.project_file.as_ref().map(|p| p.display().to_string()),
                "rules": rules,
            })
        );
    }
    if settings.rules.is_empty() {
        return format!(
            "no allow or deny rules: commands off the built-in read-only list ask (allow one \
             with `3` or `a` at the prompt, or `agent rules add RULE`, into {})\n",
            settings.user_file.display()
        );
    }
    let shown: Vec<(String, &ListedRule)> = settings
        .rules
        .iter()
        .map(|rule| {
            let prefix = crate::ui::sanitize::escape_command(&rule.prefix).replace('\n', "⏎");
            (format!("{:<5}  {prefix}", kind_name(rule.kind)), rule)
        })
        .collect();
    let width = shown
        .iter()
        .map(|(left, _)| left.chars().count())
        .max()
        .unwrap_or(0);
    shown
        .iter()
        .map(|(left, rule)| format!("{left:width$}  # {}\n", rule.origin))
        .collect()
}

/// The rules of the user file that apply here, for the person to mark; the marked ones
/// (each prefix once, however many lists hold it).
fn pick(settings: &Settings, color: bool) -> Result<Vec<String>> {
    let mut removable: Vec<(String, &str)> = Vec::new();
    for rule in &settings.rules {
        let yours = match &rule.origin {
            Origin::User(file, _) | Origin::UserProject(file, ..) => *file == settings.user_file,
            Origin::Profile(..)
            | Origin::Project(..)
            | Origin::Flag(_)
            | Origin::Env(_)
            | Origin::Default(_) => false,
        };
        if yours && !removable.iter().any(|(_, prefix)| *prefix == rule.prefix) {
            let label = format!(
                "{:<5}  {}  # {}",
                kind_name(rule.kind),
                rule.prefix,
                rule.origin
            );
            removable.push((label, &rule.prefix));
        }
    }
    if removable.is_empty() {
        return Err(Error::Usage(format!(
            "no rules of yours apply here to remove: `agent rules` lists every rule and where \
             it comes from ({})",
            settings.user_file.display()
        )));
    }
    let labels: Vec<String> = removable.iter().map(|(label, _)| label.clone()).collect();
    let marked = crate::ui::pick::several("Remove which rules?", &labels, color)
        .map_err(super::resume::picker_error)?;
    if marked.is_empty() {
        super::print_stdout("no rule marked (Space marks one): nothing removed\n")?;
    }
    Ok(marked
        .into_iter()
        .map(|at| removable[at].1.to_owned())
        .collect())
}

/// Writes `rule` into the user file's allow (or deny) list, everywhere or for this
/// workspace, after the checks the prompt's offer passes; says where, or that it was there.
fn add(
    global: &GlobalArgs,
    settings: &Settings,
    workspace: &std::path::Path,
    rule: &str,
    deny: bool,
    project: bool,
) -> Result<()> {
    let (list, kind) = if deny {
        (approve::List::Deny, "deny")
    } else {
        (approve::List::Allow, "allow")
    };
    let shown = crate::ui::sanitize::escape_command(rule).replace('\n', "⏎");
    let refuse = |why: String| {
        Error::Usage(format!(
            "cannot add {kind} rule `{shown}`: {why} (nothing written)"
        ))
    };
    if rule.chars().any(char::is_control) {
        return Err(refuse(
            "it holds a control character (a tab or newline): write the words separated by \
             spaces"
                .to_owned(),
        ));
    }
    let rule = rule
        .split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let problem = if deny {
        (rule.is_empty() || rule.starts_with('-')).then(|| {
            "a deny rule starts with the program it denies (`git push`, `rm -rf`)".to_owned()
        })
    } else {
        crate::policy::allow_rule_problem(crate::policy::OsFamily::current(), &rule)
    };
    if let Some(why) = problem {
        return Err(refuse(why));
    }
    let scope = if project {
        approve::Scope::Project(workspace)
    } else {
        approve::Scope::Everywhere
    };
    let file = &settings.user_file;
    let added = approve::add_rule(file, scope, list, &rule).map_err(Error::Runtime)?;
    let table = scope.table();
    if global.json {
        return super::print_stdout(&format!(
            "{}\n",
            json!({
                "added": rule,
                "kind": kind,
                "table": table,
                "file": file.display().to_string(),
                "changed": added,
            })
        ));
    }
    let rule = crate::ui::sanitize::escape_command(&rule);
    let text = if added {
        format!(
            "added {kind} rule \"{rule}\" to {table} in {}\n",
            file.display()
        )
    } else {
        format!(
            "{kind} rule \"{rule}\" is already in {table} in {}: nothing changed\n",
            file.display()
        )
    };
    super::print_stdout(&text)
}

/// Takes `rule` out of the user file; says where it was, or where it lives instead.
fn remove(
    global: &GlobalArgs,
    settings: &Settings,
    workspace: &std::path::Path,
    rule: &str,
) -> Result<()> {
    let file = &settings.user_file;
    let removed = approve::remove_rule(file, workspace, rule).map_err(Error::Runtime)?;
    if removed.is_empty() {
        let elsewhere: Vec<String> = settings
            .rules
            .iter()
            .filter(|listed| listed.prefix == rule.trim())
            .map(|listed| listed.origin.to_string())
            .collect();
        let hint = if elsewhere.is_empty() {
            "`agent rules` lists the rules there are".to_owned()
        } else {
            format!("it comes from {}: edit that instead", elsewhere.join(", "))
        };
        return Err(Error::Usage(format!(
            "rule `{rule}` is not in `{}`: {hint}",
            file.display()
        )));
    }
    if global.json {
        super::print_stdout(&format!(
            "{}\n",
            json!({ "removed": rule, "file": file.display().to_string(), "from": removed })
        ))
    } else {
        super::print_stdout(&format!(
            "removed \"{rule}\" from {} ({})\n",
            file.display(),
            removed.join(", ")
        ))
    }
}
