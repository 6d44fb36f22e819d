//! The agent tool runtime: [`RuntimeToolHost`], the `tool_server::ToolHost`
//! that fulfils every accepted [`ToolCall`] against the live app, and the
//! main-thread bookkeeping it needs ([`ToolLink`], a field of the runtime).
//!
//! Threads: the tool server calls `valid`/`browser_enabled` on its own thread,
//! so they read a snapshot ([`ToolShared`]) the main thread republishes after
//! every model change and never wait on the main thread. `execute` runs each
//! operation on a bounded worker pool (`pool`): model work is sent to the main
//! thread with `AppHandle::call` (10 s deadline), while slow waits (DevTools
//! replies, page loads) happen on the worker — waiting on a DevTools reply on
//! the main thread would deadlock, since the main thread pumps CEF.
//!
//! Layout: `desktop` (the environment `terminal_external` reads, as a
//! value; leaf), `shared` (what the server's thread reads: the node index,
//! ownership), `context` (what every operation runs with), `link` (the
//! runtime's field, over `shared`), `launch` (agent PTY preparation),
//! and one file per surface — `canvas`, `artifacts`, `browser`, `terminal`,
//! `agents` — each depending on `context` (and `launch`), never on each other
//! or on this file.

mod agents;
mod artifacts;
mod browser;
mod canvas;
mod context;
mod desktop;
mod launch;
mod link;
mod pool;
mod shared;
mod terminal;

pub use agents::CONTEXT_CHARS;
pub use context::TIMEOUT_MESSAGE;
#[cfg(test)]
pub(crate) use desktop::DesktopEnv;
pub use launch::{ctl_path, launch_hook, pty_launch_hook, CTL_ENV};
pub use link::{ToolLink, ToolPhase};
pub use shared::{KindTag, Owners, ToolShared, OWNERS_FILE};

use super::{AppHandle, CALL_TIMEOUT};
use agent_vocab::AgentActivity;
use context::OpContext;
use desktop::DesktopSource;
use pool::{Pool, PoolError};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tool_server::{ExecuteFuture, HookReport, IntegrationStatus, ToolCall, ToolError, ToolHost, ToolIdentity};

/// The `ToolHost` the tool server calls: every operation against the live app.
pub struct RuntimeToolHost {
    app: AppHandle,
    shared: Arc<ToolShared>,
    data_dir: PathBuf,
    pool: Pool,
    call_timeout: Duration,
    desktop: DesktopSource,
}

impl RuntimeToolHost {
    /// A host for the runtime behind `app`, with its worker pool started.
    pub fn new(app: AppHandle, shared: Arc<ToolShared>, data_dir: PathBuf) -> Self {
        let pool = Pool::new("tool-worker", pool::WORKERS, pool::QUEUE);
        Self { app, shared, data_dir, pool, call_timeout: CALL_TIMEOUT, desktop: DesktopSource::Process }
    }

    /// The same host with a shorter main-thread deadline, so a test can
    /// stall the loop past it in milliseconds (the product keeps [`CALL_TIMEOUT`]).
    #[cfg(test)]
    pub(crate) fn with_call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// The same host with `terminal_external` seeing `desktop` instead of the
    /// process's environment (which parallel tests cannot set).
    #[cfg(test)]
    pub(crate) fn with_desktop(mut self, desktop: desktop::DesktopEnv) -> Self {
        self.desktop = DesktopSource::Fixed(Arc::new(desktop));
        self
    }
}

impl ToolHost for RuntimeToolHost {
    fn execute(&self, identity: &ToolIdentity, call: ToolCall) -> ExecuteFuture {
        let ctx = OpContext {
            app: self.app.clone(),
            shared: self.shared.clone(),
            data_dir: self.data_dir.clone(),
            identity: identity.clone(),
            call_timeout: self.call_timeout,
            desktop: self.desktop.clone(),
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        let operation = call.operation();
        let submitted = self.pool.submit(move || {
            let _ = tx.send(dispatch(&ctx, call));
        });
        if let Err(e) = submitted {
            tracing::warn!(%operation, error = %e, "tool operation refused");
            let error = match e {
                PoolError::Busy => ToolError::busy(e.to_string()),
                PoolError::Stopped => ToolError::interrupted(format!("cannot start {operation}: {e}")),
            };
            return Box::pin(std::future::ready(Err(error)));
        }
        Box::pin(async move {
            rx.await.unwrap_or_else(|_| Err(ToolError::interrupted(format!("{operation} ended without a result"))))
        })
    }

    fn valid(&self, identity: &ToolIdentity) -> bool {
        // Projects here are always local folders; a project that is not open, or
        // an agent node no longer on its canvas, can no longer act.
        self.shared.kind_of(&identity.project_id, &identity.node_id) == Some(KindTag::Agent)
    }

    fn browser_enabled(&self) -> bool {
        self.shared.browser_control()
    }

    fn project_folder(&self, project_id: &str) -> Option<PathBuf> {
        self.shared.folder_of(project_id)
    }

    fn on_status(&self, node_id: &str, status: &IntegrationStatus) {
        tracing::info!(node = %node_id, state = ?status.state, "agent tool status");
        self.shared.statuses.lock().insert(node_id.to_owned(), status.clone());
        let _ = self.app.post(|rt| rt.request_redraw());
    }

    fn on_hook(&self, identity: &ToolIdentity, report: HookReport) {
        let Ok(node) = crate::model::NodeId::new(&identity.node_id) else { return };
        let _ = self.app.post(move |rt| rt.agent_hook(&node, report));
    }

    fn activity(&self, node_id: &str) -> Option<AgentActivity> {
        self.shared.activity.get(node_id)
    }
}

/// Runs one accepted operation (on a worker thread).
fn dispatch(ctx: &OpContext, call: ToolCall) -> Result<Value, ToolError> {
    match call {
        ToolCall::CanvasList(_) => canvas::list(ctx),
        ToolCall::CanvasSelect(args) => canvas::select(ctx, args),
        ToolCall::CanvasMove(args) => canvas::move_node(ctx, args),
        ToolCall::CanvasResize(args) => canvas::resize(ctx, args),
        ToolCall::CanvasGroup(args) => canvas::group(ctx, args),
        ToolCall::StickyOpen(args) => canvas::sticky_open(ctx, args),
        ToolCall::ArtifactOpen(args) => artifacts::artifact_open(ctx, args),
        ToolCall::BrowserOpen(args) => browser::open(ctx, args),
        ToolCall::BrowserList(_) => browser::list(ctx),
        ToolCall::BrowserClaim(args) => browser::claim(ctx, args),
        ToolCall::BrowserTransfer(args) => browser::transfer(ctx, args),
        ToolCall::BrowserNavigate(args) => browser::navigate(ctx, args),
        ToolCall::BrowserInspect(args) => browser::inspect(ctx, args),
        ToolCall::BrowserClick(args) => browser::click(ctx, args),
        ToolCall::BrowserType(args) => browser::type_text(ctx, args),
        ToolCall::BrowserScreenshot(args) => browser::screenshot(ctx, args),
        ToolCall::TerminalOpen(args) => terminal::open(ctx, args),
        ToolCall::TerminalRead(args) => terminal::read(ctx, args),
        ToolCall::TerminalSubmit(args) => terminal::submit(ctx, args),
        ToolCall::TerminalInput(args) => terminal::input(ctx, args),
        ToolCall::TerminalInterrupt(args) => terminal::interrupt(ctx, args),
        ToolCall::TerminalExternal(args) => terminal::external(ctx, args),
        ToolCall::TerminalClose(args) => terminal::close(ctx, args),
        ToolCall::AgentLaunch(args) => agents::launch(ctx, args),
        ToolCall::ContextRead(_) => agents::context_read(ctx),
        // The server answers these itself and never queues them.
        call @ (ToolCall::SessionInfo(_) | ToolCall::GuideRead(_) | ToolCall::AgentStatus(_)) => {
            Err(ToolError::unsupported(format!("{} is answered by the tool server", call.operation())))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::runtime::test_context::TestContext;
    use tool_server::ToolHost;

    #[test]
    fn the_server_learns_each_open_projects_folder() {
        let ctx = TestContext::new();
        assert_eq!(ctx.host().project_folder(&ctx.agent.project_id), Some(ctx.folder()));
        assert_eq!(ctx.host().project_folder("no-such-project"), None);
    }
}
