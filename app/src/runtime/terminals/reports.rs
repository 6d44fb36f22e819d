//! The runtime side of what programs and agent CLIs report: terminal
//! signals and exits from a node's [`TerminalHost`](terminal::TerminalHost),
//! hook reports from the tool server, and the notifications they raise.

use super::super::Runtime;
use super::activity::NodeNotification;
use super::traces::{exit_line, AgentProbe};
use crate::model::NodeId;
use std::time::SystemTime;
use terminal::signals::Progress;
use terminal::{ExitStatus, TerminalSignal};
use tool_server::HookReport;

impl Runtime {
    /// A node's program exited.
    pub(crate) fn terminal_exited(&mut self, id: &NodeId, status: ExitStatus) {
        if let Some(t) = self.terminals.live_mut(id) {
            // The output stays; a dim line under it says how it ended (and, for
            // an agent, what the probe found).
            let probe = t.agent.zip(t.agent_executable.as_deref()).map(|(a, exe)| AgentProbe::of(a, exe));
            let line = exit_line(&status, probe.as_ref(), crate::model::persist::home_dir().as_deref());
            t.term.with_screen(|s| s.write_exit_line(&line));
            t.activity.on_exit(SystemTime::now());
            t.exited = Some(status);
        }
        self.terminals.publish_activity();
        // Who needs the person changes with it, at once (not at the next tick).
        self.refresh_attention();
        self.request_redraw();
    }

    /// A node's program signalled something (a notification, progress, a mark, a status).
    pub(crate) fn terminal_signal(&mut self, id: &NodeId, signal: TerminalSignal) {
        let Some(t) = self.terminals.live_mut(id) else { return };
        if let TerminalSignal::Progress(p) = signal {
            t.progress = (p != Progress::Cleared).then_some(p);
        }
        if let Some(n) = t.activity.on_signal(&signal, SystemTime::now()) {
            // It calls the person until they look at the node (see attention).
            t.notice = Some(n.clone());
            self.terminals.queue_notification(id, n);
        }
        self.terminals.publish_activity();
        // Who needs the person changes with it, at once (not at the next tick).
        self.refresh_attention();
        self.request_redraw();
    }

    /// An agent CLI's hook report for node `id` (from `termsprawl-ctl hook` through the tool server).
    pub fn agent_hook(&mut self, id: &NodeId, report: HookReport) {
        let Some(t) = self.terminals.live_mut(id) else {
            tracing::debug!(node = %id, "hook report for a node without a live terminal");
            return;
        };
        if let Some(n) = t.activity.on_hook(&report, SystemTime::now()) {
            self.terminals.queue_notification(id, n);
        }
        self.terminals.publish_activity();
        // Who needs the person changes with it, at once (not at the next tick).
        self.refresh_attention();
        self.request_redraw();
    }

    /// The notifications node `id`'s program raised that are still kept, oldest first.
    pub fn node_notifications(&self, id: &NodeId) -> Vec<NodeNotification> {
        self.terminals.get(id).map(|t| t.activity.notifications().cloned().collect()).unwrap_or_default()
    }

    /// Notifications raised since the last call, oldest first, with their nodes
    /// (for whoever shows them; at most the last hundred wait).
    pub fn take_new_notifications(&mut self) -> Vec<(NodeId, NodeNotification)> {
        self.terminals.new_notifications.drain(..).collect()
    }

    /// A terminal node's last OSC 9;4 progress, until cleared.
    pub fn terminal_progress(&self, id: &NodeId) -> Option<Progress> {
        self.terminals.get(id).and_then(|t| t.progress)
    }
}

#[cfg(test)]
mod tests {
    use super::super::AgentNodeStatus;
    use crate::model::NodeId;
    use crate::runtime::test_context::TestContext;
    use crate::runtime::tools::ToolPhase;
    use agent_vocab::{AgentState, StateSource};
    use serde_json::{json, Value};
    use terminal::signals::Progress;
    use terminal::ExitStatus;
    use tool_server::{HookAgent, HookEvent, HookReport, ToolHost};

    fn status_of(ctx: &TestContext, id: &NodeId) -> (AgentNodeStatus, StateSource, Option<String>) {
        let a = ctx.rt.agent_activity(id).expect("an activity");
        (a.status, a.source, a.detail)
    }

    fn listed(ctx: &mut TestContext, id: &str) -> Value {
        let list = ctx.run("canvas_list", json!({})).unwrap();
        list.as_array().unwrap().iter().find(|n| n["id"] == id).cloned().expect("the node is listed")
    }

    #[test]
    fn a_scripted_program_signals_states_progress_and_notifications() {
        let mut ctx = TestContext::with_terminals();
        let id = ctx.run("terminal_open", json!({})).unwrap()["nodeId"].as_str().unwrap().to_owned();
        let node = NodeId::new(&id).unwrap();
        let fake = ctx.spawner.terminal(&id).expect("the terminal started");
        assert_eq!(ctx.rt.agent_activity(&node), None, "a terminal that reported nothing has no state");
        assert!(listed(&mut ctx, &id).get("state").is_none());

        let step = |ctx: &mut TestContext, output: &str| {
            fake.show(output);
            ctx.rt.tick();
        };
        step(&mut ctx, "\x1b]133;A\x07$ \x1b]133;B\x07make\r\n\x1b]133;C\x07");
        assert_eq!(status_of(&ctx, &node), (AgentNodeStatus::Live(AgentState::Working), StateSource::Terminal, None));
        let entry = listed(&mut ctx, &id);
        assert_eq!((entry["state"].as_str(), entry["source"].as_str()), (Some("working"), Some("terminal")));
        assert!(entry["stateSince"].as_u64().is_some_and(|ms| ms > 1_600_000_000_000), "{entry}");
        step(&mut ctx, "\x1b]9;4;1;50\x07");
        assert_eq!(ctx.rt.terminal_progress(&node), Some(Progress::Normal(50)));
        step(&mut ctx, "error\r\n\x1b]133;D;2\x07");
        assert_eq!(
            status_of(&ctx, &node),
            (AgentNodeStatus::Live(AgentState::Error), StateSource::Terminal, Some("exit 2".into()))
        );
        step(&mut ctx, "\x1b]9;4;0\x07\x1b]133;A\x07");
        assert_eq!(
            (ctx.rt.terminal_progress(&node), status_of(&ctx, &node).0),
            (None, AgentNodeStatus::Live(AgentState::WaitingForInput))
        );
        // msg: "Apply the migration?"
        step(&mut ctx, "\x1b]7501;state=blocked:kind=permission:app=deploy:msg=QXBwbHkgdGhlIG1pZ3JhdGlvbj8=\x1b\\");
        assert_eq!(
            status_of(&ctx, &node),
            (
                AgentNodeStatus::Live(AgentState::NeedsPermission),
                StateSource::Terminal,
                Some("Apply the migration?".into())
            )
        );

        step(&mut ctx, "\x1b]9;Build finished\x07\x1b]777;notify;CI;green\x07\x1b]99;i=1:d=0;Deploy\x1b\\\x1b]99;i=1:p=body;done\x1b\\");
        let bodies = |v: Vec<(Option<String>, String)>| v;
        let kept: Vec<(Option<String>, String)> =
            ctx.rt.node_notifications(&node).into_iter().map(|n| (n.title, n.body)).collect();
        let expected = bodies(vec![
            (None, "Build finished".into()),
            (Some("CI".into()), "green".into()),
            (Some("Deploy".into()), "done".into()),
        ]);
        assert_eq!(kept, expected);
        let new: Vec<(NodeId, String)> =
            ctx.rt.take_new_notifications().into_iter().map(|(n, x)| (n, x.body)).collect();
        assert_eq!(new.len(), 3);
        assert!(new.iter().all(|(n, _)| n == &node));
        assert!(ctx.rt.take_new_notifications().is_empty(), "taken once");

        // BEL rings the node (it is not focused).
        ctx.rt.focus = None;
        step(&mut ctx, "\x07");
        assert!(ctx.rt.terminals.get(&node).unwrap().bell);

        // Malformed and oversized sequences change nothing.
        let before = (status_of(&ctx, &node), ctx.rt.node_notifications(&node).len());
        let long = format!("\x1b]9;{}\x07", "x".repeat(5000));
        step(&mut ctx, &long);
        step(
            &mut ctx,
            "\x1b]7501;state=sleeping\x07\x1b]133;D;zz\x07\x1b]777;notify\x07\x1b]9;4;9;1\x07\x1b]99;e=1;%%%\x07",
        );
        assert_eq!((status_of(&ctx, &node), ctx.rt.node_notifications(&node).len()), before);
        assert!(ctx.rt.take_new_notifications().is_empty());
    }

    #[test]
    fn hook_reports_drive_an_agent_node_and_what_agent_status_reads() {
        let mut ctx = TestContext::with_terminals();
        // A configured custom agent launches (without tool credentials: the server is off here).
        let exe = ctx.root().join("my-agent");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let prefs = crate::paths::agent_tools(ctx.rt.data_dir()).join("preferences.json");
        std::fs::write(&prefs, json!({"custom": {"executable": exe}}).to_string()).unwrap();
        ctx.rt.tools.phase = ToolPhase::Off;
        ctx.rt.retry_agent_launches();
        let identity = ctx.agent.clone();
        let node = NodeId::new(&identity.node_id).unwrap();
        let fake = ctx.spawner.terminal(&identity.node_id).expect("the agent started");
        let board = ctx.rt.tools.shared.activity.clone();
        let wire = |board: &crate::runtime::terminals::ActivityBoard| board.get(node.as_str()).expect("published");
        assert_eq!((wire(&board).state.as_str(), wire(&board).source), ("starting", agent_vocab::StateSource::Process));

        // Output alone: the quiet-time guess, labelled as such.
        fake.show("thinking...\r\n");
        ctx.rt.terminals_tick();
        assert_eq!(status_of(&ctx, &node).1, StateSource::QuietTime);
        assert_eq!(ctx.rt.node_badge(&node).unwrap().text, "working (guess)");

        let report = |event, detail: Option<&str>, message: Option<&str>| {
            let mut r = HookReport::new(HookAgent::Claude, event);
            r.detail = detail.map(str::to_owned);
            r.message = message.map(str::to_owned);
            r
        };
        ctx.host().on_hook(&identity, report(HookEvent::PromptSubmitted, None, None));
        ctx.rt.tick();
        assert_eq!(status_of(&ctx, &node), (AgentNodeStatus::Live(AgentState::Working), StateSource::Hooks, None));
        ctx.host().on_hook(
            &identity,
            report(HookEvent::PermissionRequested, None, Some("Claude needs your permission to use Bash")),
        );
        ctx.rt.tick();
        assert_eq!(ctx.rt.node_badge(&node).unwrap().text, "needs permission");
        let on_board = wire(&board);
        assert_eq!((on_board.state.as_str(), on_board.source), ("needs-permission", agent_vocab::StateSource::Hooks));
        assert_eq!(ctx.host().activity(node.as_str()), Some(on_board), "agent_status reads the same board");
        let entry = listed(&mut ctx, node.as_str());
        assert_eq!(
            (entry["state"].as_str(), entry["detail"].as_str()),
            (Some("needs-permission"), Some("Claude needs your permission to use Bash"))
        );
        let raised = ctx.rt.take_new_notifications();
        assert_eq!(raised.len(), 1);
        assert_eq!(raised[0].1.body, "Claude needs your permission to use Bash");

        ctx.host().on_hook(&identity, report(HookEvent::TurnComplete, None, None));
        ctx.rt.tick();
        assert_eq!(ctx.rt.node_badge(&node).unwrap().text, "done");
        // Later quiet time does not override what the hooks said.
        ctx.rt.terminals_tick();
        assert_eq!(status_of(&ctx, &node).0, AgentNodeStatus::Live(AgentState::Done));

        fake.exit(ExitStatus { code: 3, signal: None });
        ctx.rt.tick();
        let exited = wire(&board);
        assert_eq!((exited.state.as_str(), exited.exit_code), ("exited", Some(3)));
        assert_eq!(ctx.rt.node_badge(&node).unwrap().text, "exited 3");
    }
}
