//! The line a terminal/agent node shows under its program's output once the
//! program ended: how it ended, for an agent what the launch probe found
//! (its executable and version), and how to run it again.

use super::badges::exit_text;
use crate::model::title::tilde;
use crate::model::AgentKind;
use std::path::{Path, PathBuf};
use terminal::ExitStatus;

/// How to run the program again, as the exit line says it.
pub const RESTART_HINT: &str = "Enter or R to restart";

/// What an agent node's launch probe knew about its CLI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentProbe {
    /// Which agent.
    pub agent: AgentKind,
    /// The executable that ran.
    pub executable: PathBuf,
    /// Its version, when its package says.
    pub version: Option<String>,
}

impl AgentProbe {
    /// What the probe found for `agent` at `executable` (the version read from
    /// the npm package the executable belongs to, if it is one).
    pub fn of(agent: AgentKind, executable: &Path) -> Self {
        Self { agent, executable: executable.to_path_buf(), version: package_version(executable) }
    }
}

/// `— exited 3 · Enter or R to restart —`; for an agent also what ran:
/// `— claude exited 1 · ~/.npm/bin/claude 2.1.332 · Enter or R to restart —`.
pub fn exit_line(status: &ExitStatus, probe: Option<&AgentProbe>, home: Option<&Path>) -> String {
    let ended = exit_text(status);
    match probe {
        Some(p) => {
            let version = p.version.as_deref().map(|v| format!(" {v}")).unwrap_or_default();
            format!("— {} {ended} · {}{version} · {RESTART_HINT} —", p.agent, tilde(&p.executable, home))
        }
        None => format!("— {ended} · {RESTART_HINT} —"),
    }
}

/// The `version` of the npm package an executable is a bin link of
/// (`…/node_modules/<pkg>/cli.js` and the like): the nearest `package.json`
/// above the resolved file, at most four folders up. Reading one small file
/// is all it costs; running the CLI for its version could hang.
fn package_version(executable: &Path) -> Option<String> {
    let real = std::fs::canonicalize(executable).ok()?;
    for dir in real.ancestors().skip(1).take(4) {
        let Ok(text) = std::fs::read_to_string(dir.join("package.json")) else { continue };
        let value: serde_json::Value = serde_json::from_str(&text).ok()?;
        return value.get("version")?.as_str().map(|v| v.chars().take(40).collect());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NodeId;
    use crate::runtime::test_context::TestContext;
    use serde_json::json;

    fn exit(code: u32) -> ExitStatus {
        ExitStatus { code, signal: None }
    }

    #[test]
    fn the_exit_line_says_how_it_ended_and_how_to_restart() {
        assert_eq!(exit_line(&exit(3), None, None), "— exited 3 · Enter or R to restart —");
        let killed = ExitStatus { code: 1, signal: Some("Killed".into()) };
        assert_eq!(exit_line(&killed, None, None), "— exited (Killed) · Enter or R to restart —");
        let probe = AgentProbe {
            agent: AgentKind::Claude,
            executable: "/home/ann/bin/claude".into(),
            version: Some("2.1.3".into()),
        };
        assert_eq!(
            exit_line(&exit(1), Some(&probe), Some(Path::new("/home/ann"))),
            "— claude exited 1 · ~/bin/claude 2.1.3 · Enter or R to restart —"
        );
    }

    /// A context whose terminals are fakes, with one terminal node open; its id.
    fn terminal() -> (TestContext, NodeId, std::sync::Arc<super::super::FakeSession>) {
        let mut ctx = TestContext::with_terminals();
        let id = ctx.run("terminal_open", json!({})).unwrap()["nodeId"].as_str().unwrap().to_owned();
        let fake = ctx.spawner.terminal(&id).expect("the terminal started");
        (ctx, NodeId::new(&id).unwrap(), fake)
    }

    fn rows(ctx: &TestContext, id: &NodeId) -> Vec<String> {
        let snap = ctx.rt.terminals.get(id).expect("live").term.snapshot();
        (0..snap.rows).map(|r| snap.row_text(r)).collect()
    }

    #[test]
    fn an_ended_terminal_keeps_its_output_under_an_exit_line_and_restarts_fresh() {
        let (mut ctx, id, fake) = terminal();
        fake.show("echo about to fail; exit 3\r\nabout to fail\r\n");
        fake.exit(exit(3));
        ctx.rt.tick();
        let shown = rows(&ctx, &id);
        assert_eq!(shown[1], "about to fail", "{shown:?}");
        assert_eq!(shown[3], "— exited 3 · Enter or R to restart —", "{shown:?}");
        let read = ctx.run("terminal_read", json!({"nodeId": id})).unwrap();
        assert_eq!(read["text"], "echo about to fail; exit 3\nabout to fail", "the output, not the hint");
        assert!(ctx.rt.terminal_ended(&id));
        assert!(ctx.rt.node_badge(&id).is_some_and(|b| b.text == "exited 3"));

        ctx.rt.restart_terminal(&id).unwrap();
        let again = ctx.spawner.terminal(id.as_str()).expect("started again");
        assert!(!std::sync::Arc::ptr_eq(&again, &fake), "a new program, not the old one");
        assert_eq!(ctx.spawner.specs().len(), 2);
        assert!(!ctx.rt.terminal_ended(&id));
        assert!(rows(&ctx, &id).iter().all(String::is_empty), "the new run starts on a blank screen");
        let e = ctx.rt.restart_terminal(&id).unwrap_err();
        assert!(e.contains("still running"), "{e}");
    }

    #[test]
    fn the_title_bar_reads_the_programs_title_until_the_person_renames_the_node() {
        let (mut ctx, id, fake) = terminal();
        let title = |ctx: &TestContext| {
            let node = ctx.rt.project().and_then(|p| p.node(&id)).cloned().expect("node");
            ctx.rt.node_title(&node)
        };
        let folder = tilde(&ctx.folder(), crate::model::persist::home_dir().as_deref());
        assert!(title(&ctx).ends_with(&format!(" — {folder}")), "{}", title(&ctx));
        fake.title(Some("vim notes.md"));
        ctx.rt.tick();
        assert_eq!(title(&ctx), "vim notes.md");
        let node = ctx.rt.project().and_then(|p| p.node(&id)).cloned().unwrap();
        assert_eq!(node.title, crate::model::title::DEFAULT_TERMINAL_TITLE, "a program's title is not an edit");
        ctx.rt.apply(crate::model::Command::RenameNode { id: id.clone(), name: Some("logs".into()) }).unwrap();
        fake.title(Some("htop"));
        ctx.rt.tick();
        assert_eq!(title(&ctx), "logs", "the person's name wins");
        ctx.rt.undo().unwrap();
        assert_eq!(title(&ctx), "htop", "undoing the rename shows the program's title again");
        fake.title(None);
        ctx.rt.tick();
        assert!(title(&ctx).ends_with(&format!(" — {folder}")), "a reset title: {}", title(&ctx));
    }

    #[test]
    fn an_npm_bin_link_reports_its_package_version() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("node_modules/@anthropic-ai/claude-code");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(pkg.join("package.json"), r#"{"name":"@anthropic-ai/claude-code","version":"2.1.332"}"#)
            .unwrap();
        std::fs::write(pkg.join("cli.js"), "#!/usr/bin/env node\n").unwrap();
        let bin = dir.path().join("node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(pkg.join("cli.js"), bin.join("claude")).unwrap();
        let probe = AgentProbe::of(AgentKind::Claude, &bin.join("claude"));
        assert_eq!(probe.version.as_deref(), Some("2.1.332"));
        assert_eq!(AgentProbe::of(AgentKind::Codex, Path::new("/nonexistent/codex")).version, None);
    }
}
