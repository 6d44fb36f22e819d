//! The app's localhost services: the agent tool server, the browser agent
//! server and the opt-in CDP facade, started after the runtime and closed
//! before it shuts down.

use super::agent_settings;
use super::facade::{facade_download_notice, CdpServers, CdpServersError};
use super::tools::{RuntimeToolHost, ToolPhase};
use super::Runtime;
use crate::model::{AgentKind, Command, Node, NodeId, NodeKind, Rect};
use std::sync::Arc;
use thiserror::Error;
use tool_server::{IntegrationState, IntegrationStatus, ToolIdentity, ToolServer};

/// Size of an external agent's node.
const EXTERNAL_AGENT_SIZE: (f64, f64) = (360.0, 160.0);

/// What to start.
#[derive(Debug, Clone, Default)]
pub struct ServiceOptions {
    /// External agent node ids to put on the canvas with a provisioned session (`--agent`).
    pub agents: Vec<String>,
    /// Turn agent browser control on (and persist it); off leaves the saved setting as it is.
    pub enable_browser_control: bool,
    /// Serve the CDP facade (`--cdp`); off still serves it when the persisted setting asks.
    pub cdp: bool,
}

/// Why the services did not start.
#[derive(Debug, Error)]
pub enum ServiceError {
    /// The tool server did not start (another instance holds the data dir, a file failed…).
    #[error("agent tool server: {0}")]
    ToolServer(#[from] tool_server::ServerError),
    /// A settings file could not be read or written.
    #[error("settings: {0}")]
    Settings(#[from] local_guard::FileError),
    /// `--agent` named an unusable node.
    #[error("--agent {name}: {reason}")]
    Agent {
        /// The id given.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// No project is open to put agents in.
    #[error("no project is open")]
    NoProject,
    /// The browser agent server or the CDP facade did not start.
    #[error("{0}")]
    Cdp(#[from] CdpServersError),
}

/// The running services.
pub struct Services {
    /// The agent tool server.
    pub tool_server: Arc<ToolServer>,
    /// The browser agent server and the CDP facade.
    pub cdp: CdpServers,
}

impl Services {
    /// The tool server's endpoint URL.
    pub fn tool_url(&self) -> &str {
        self.tool_server.url()
    }

    /// Stops the servers (before `Runtime::shutdown`); sessions stay on disk for the next start.
    pub fn close(self, rt: &mut Runtime) {
        self.cdp.close();
        rt.tools.server = None;
        rt.tools.phase = ToolPhase::Off;
        match Arc::try_unwrap(self.tool_server) {
            Ok(mut server) => {
                if let Err(e) = server.close() {
                    tracing::warn!(error = %e, "agent tool server did not close cleanly");
                }
            }
            // Someone still holds it; it closes when the last holder drops it.
            Err(_) => tracing::warn!("agent tool server still referenced at exit"),
        }
    }
}

impl Runtime {
    /// Turns "Enable agent browser control" on or off, persists it, and says so.
    /// Off refuses browser operations from the next call on. (Here, beside the
    /// setting's file, so the tool runtime never imports the services.)
    pub fn set_agent_browser_control(&mut self, on: bool) {
        let dir = crate::paths::agent_tools(self.data_dir());
        self.tools.shared.set_browser_control(on);
        match agent_settings::save_browser_control(&dir, on) {
            Ok(()) => self.notify(format!("agent browser control {}", if on { "enabled" } else { "disabled" }), false),
            Err(e) => self.notify(
                format!(
                    "agent browser control {} for now, but not saved: {e}",
                    if on { "enabled" } else { "disabled" }
                ),
                true,
            ),
        }
    }
}

/// Starts the tool server against the runtime, provisions `--agent` nodes,
/// and lets agent PTYs start with their credentials.
pub fn start_services(rt: &mut Runtime, opts: &ServiceOptions) -> Result<Services, ServiceError> {
    let data_dir = rt.data_dir().to_path_buf();
    let host = Arc::new(RuntimeToolHost::new(rt.handle(), rt.tools.shared.clone(), data_dir.clone()));
    let server = match ToolServer::start(&data_dir, host) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            // Agents still run, without tools.
            rt.tools.phase = ToolPhase::Off;
            rt.sync_terminals();
            return Err(e.into());
        }
    };
    let dir = server.directory().to_path_buf();
    let browser_control = if opts.enable_browser_control {
        agent_settings::save_browser_control(&dir, true)?;
        true
    } else {
        agent_settings::load(&dir)?.browser_control()
    };
    rt.tools.shared.set_browser_control(browser_control);
    rt.tools.shared.attach_state_dir(&dir);
    rt.tools.server = Some(server.clone());
    rt.tools.phase = ToolPhase::Running;
    for name in &opts.agents {
        add_external_agent(rt, &server, name)?;
    }
    rt.publish_tool_state();
    // Agent nodes restored with the workspace waited for this moment.
    rt.sync_terminals();
    let cdp = CdpServers::start(
        rt.handle(),
        rt.browsers.live(),
        rt.download_policy(),
        rt.paint_wants(),
        &data_dir,
        CdpServers::facade_wanted(opts.cdp, &dir),
    )?;
    if let Some(notifier) = cdp.download_notifier() {
        rt.downloads.listen(move |tab, news| notifier.notify(facade_download_notice(tab, news)));
    }
    Ok(Services { tool_server: server, cdp })
}

/// Puts (or keeps) an external agent node `name` on the canvas and provisions its session.
fn add_external_agent(rt: &mut Runtime, server: &ToolServer, name: &str) -> Result<(), ServiceError> {
    let bad = |reason: String| ServiceError::Agent { name: name.to_owned(), reason };
    if !tool_server::valid_node_id(name) {
        return Err(bad("must match ^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$".into()));
    }
    let id = NodeId::new(name).map_err(|e| bad(e.to_string()))?;
    let p = rt.project().ok_or(ServiceError::NoProject)?;
    let project = p.id().to_string();
    match p.node(&id).map(|n| &n.kind) {
        Some(NodeKind::Agent { agent: AgentKind::External, .. }) => {}
        Some(other) => return Err(bad(format!("a {} node with this id is already on the canvas", other.name()))),
        None => {
            // Like every new node: free space near the view's centre (never at the
            // origin, under the window's tab strip, nor on another node).
            let (x, y) = rt.free_spot(EXTERNAL_AGENT_SIZE, None);
            let mut node = Node::new(
                NodeKind::Agent { agent: AgentKind::External, cwd: p.folder().to_path_buf(), worktree: None },
                name,
                Rect::new(x, y, EXTERNAL_AGENT_SIZE.0, EXTERNAL_AGENT_SIZE.1),
            );
            node.id = id;
            rt.apply(Command::AddNode { node }).map_err(|e| bad(e.to_string()))?;
        }
    }
    let status = IntegrationStatus::with_detail(IntegrationState::Ready, "external agent (termsprawl-ctl)");
    server.provision(ToolIdentity::new(name, project), status, true).map_err(|e| bad(e.to_string()))?;
    Ok(())
}
