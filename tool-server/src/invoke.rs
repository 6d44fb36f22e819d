//! The invoke path: validate → recheck the identity → answer discovery
//! operations directly → gate browser operations → queue per project →
//! recheck the token at dequeue → hand the typed [`ToolCall`] to the app's [`ToolHost`].

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use thiserror::Error;

use crate::answer::{Answer, SessionInfo};
use crate::args::{AgentStatusArgs, GuideReadArgs, SessionInfoArgs};
use crate::endpoint::Endpoint;
use crate::error::{ErrorCode, ToolError};
use crate::guides::guide;
use crate::hook::HookReport;
use crate::operation::{CallError, Operation, ToolCall};
use crate::queue::ProjectQueues;
use crate::sessions::{IntegrationState, IntegrationStatus, SessionStore, ToolIdentity, ToolSession};
use crate::validate::{validate_tool_request, ValidationError};
use agent_vocab::AgentActivity;

/// What [`ToolHost::execute`] returns: the operation's JSON value, or why it failed.
pub type ExecuteFuture = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + 'static>>;

/// Adapters whose `session_info` call marks a session connected.
const CONNECTING_ADAPTERS: &[&str] = &["claude-mcp", "codex-mcp"];

/// The app side of the tool server: fulfils accepted operations against live
/// state. Called on the tool server's thread, so every method must return
/// promptly; `execute` does its work elsewhere (for example by posting a
/// command to the main thread) and resolves when that work replies.
pub trait ToolHost: Send + Sync + 'static {
    /// Runs an accepted, validated operation for `identity`. Operations of one
    /// project are never run concurrently: the next starts only when the
    /// returned future resolves, so it should carry its own deadline (the
    /// app's is 10 s). Error messages go to the agent verbatim and must not
    /// contain secrets.
    fn execute(&self, identity: &ToolIdentity, call: ToolCall) -> ExecuteFuture;

    /// Whether `identity` may still act: its project exists (and is local) and
    /// its agent node is active or still on that project's canvas.
    fn valid(&self, identity: &ToolIdentity) -> bool;

    /// Whether the user has enabled agent browser control.
    fn browser_enabled(&self) -> bool;

    /// The folder of an open project (what `session_info` names, so an agent
    /// can build the absolute paths `artifact_open` takes); `None` when the
    /// project is not open.
    fn project_folder(&self, project_id: &str) -> Option<PathBuf>;

    /// A session's integration status changed (provisioned, connected, …).
    fn on_status(&self, node_id: &str, status: &IntegrationStatus) {
        let _ = (node_id, status);
    }

    /// The agent CLI of `identity` reported a hook (`POST /hook`); must return
    /// at once (the CLI's turn waits for the hook command).
    fn on_hook(&self, identity: &ToolIdentity, report: HookReport) {
        let _ = (identity, report);
    }

    /// What an agent node is doing now, for `agent_status` (`None`: not known).
    fn activity(&self, node_id: &str) -> Option<AgentActivity> {
        let _ = node_id;
        None
    }
}

/// Why an invocation failed; `Display` is the message sent to the agent.
#[derive(Debug, Error)]
pub enum InvokeError {
    /// The request failed validation.
    #[error(transparent)]
    Invalid(#[from] ValidationError),
    /// The token is not (or no longer) the node's live token.
    #[error("Unknown or revoked session")]
    Unauthorized,
    /// The host says the identity may no longer act.
    #[error("This agent session is no longer valid: its project or node is gone")]
    InvalidSession,
    /// A browser operation while browser control is disabled.
    #[error("Enable agent browser control")]
    BrowserDisabled,
    /// A discovery operation could not be answered.
    #[error(transparent)]
    Refused(ToolError),
    /// The host's `execute` failed.
    #[error(transparent)]
    Failed(ToolError),
    /// A validated request did not fit its arguments type (a catalogue bug).
    #[error(transparent)]
    Untyped(#[from] CallError),
    /// The host's `execute` did not resolve within the operation timeout.
    #[error("{0} timed out")]
    TimedOut(Operation),
    /// The operation's task ended without a result (it panicked or the server stopped).
    #[error("The operation was interrupted")]
    Interrupted,
}

impl InvokeError {
    /// The HTTP status for this error: 401 for a bad session, else 400.
    pub fn http_status(&self) -> u16 {
        match self {
            InvokeError::Unauthorized => 401,
            _ => 400,
        }
    }

    /// The error body's stable `code`.
    pub fn code(&self) -> ErrorCode {
        match self {
            InvokeError::Invalid(e) => e.code(),
            InvokeError::Unauthorized => ErrorCode::Unauthorized,
            InvokeError::InvalidSession => ErrorCode::InvalidSession,
            InvokeError::BrowserDisabled => ErrorCode::BrowserDisabled,
            InvokeError::Refused(e) | InvokeError::Failed(e) => e.code,
            InvokeError::Untyped(_) => ErrorCode::Failed,
            InvokeError::TimedOut(_) => ErrorCode::Timeout,
            InvokeError::Interrupted => ErrorCode::Interrupted,
        }
    }
}

/// Everything the invoke path needs; shared by every connection.
pub(crate) struct Invoker {
    pub(crate) host: Arc<dyn ToolHost>,
    pub(crate) sessions: Arc<SessionStore>,
    pub(crate) queues: Arc<ProjectQueues>,
    pub(crate) endpoint: Endpoint,
    pub(crate) operation_timeout: Duration,
}

impl Invoker {
    /// Runs one request for an authenticated `session` (a snapshot taken at
    /// authentication; the live token is rechecked before any effect).
    pub(crate) async fn invoke(
        self: &Arc<Self>,
        session: &Arc<ToolSession>,
        raw: &Value,
    ) -> Result<Answer<'_>, InvokeError> {
        let request = validate_tool_request(raw)?;
        // The validator wrote every message; typing a checked request cannot
        // fail unless the catalogue and the types disagree (tested not to).
        let call = ToolCall::from_request(request).inspect_err(|e| tracing::error!(error = %e, "catalogue bug"))?;
        if !self.host.valid(&session.identity) {
            return Err(InvokeError::InvalidSession);
        }
        let operation = call.operation();
        tracing::debug!(node = %session.identity.node_id, %operation, "tool call");
        let call = match call {
            ToolCall::SessionInfo(args) => return self.session_info(session, &args).await.map(Answer::SessionInfo),
            ToolCall::GuideRead(args) => return Ok(Answer::Value(guide_read(&args))),
            ToolCall::AgentStatus(args) => return self.agent_status(session, &args).map(Answer::Value),
            call => call,
        };
        if operation.is_browser() && !self.host.browser_enabled() {
            return Err(InvokeError::BrowserDisabled);
        }

        // Take the place in line now, synchronously, so queue order is arrival
        // order; run the rest in its own task so a client that hangs up cannot
        // cancel an operation half-way or strand the queue.
        let mut ticket = self.queues.enqueue(&session.identity.project_id);
        let this = Arc::clone(self);
        let session = Arc::clone(session);
        let task = tokio::spawn(async move {
            ticket.wait_turn().await;
            if !this.sessions.is_current(&session.identity.node_id, &session.token) {
                return Err(InvokeError::Unauthorized);
            }
            if !this.host.valid(&session.identity) {
                return Err(InvokeError::InvalidSession);
            }
            let execution = this.host.execute(&session.identity, call);
            let result = match tokio::time::timeout(this.operation_timeout, execution).await {
                Ok(result) => result.map_err(InvokeError::Failed),
                Err(_) => {
                    tracing::warn!(%operation, "host did not finish the operation in time; abandoning it");
                    Err(InvokeError::TimedOut(operation))
                }
            };
            drop(ticket);
            result
        });
        match task.await {
            Ok(result) => result.map(Answer::Value),
            Err(e) => {
                tracing::error!(%operation, panicked = e.is_panic(), "tool operation task ended without a result");
                Err(InvokeError::Interrupted)
            }
        }
    }

    async fn session_info(
        &self,
        session: &ToolSession,
        args: &SessionInfoArgs,
    ) -> Result<SessionInfo<'_>, InvokeError> {
        let node_id = &session.identity.node_id;
        let mut current = self.sessions.current(node_id, &session.token).ok_or(InvokeError::Unauthorized)?;
        if let Some(adapter) = args.adapter.as_deref().filter(|a| CONNECTING_ADAPTERS.contains(a)) {
            let connected = IntegrationStatus {
                state: IntegrationState::Connected,
                adapter: Some(adapter.to_owned()),
                detail: None,
            };
            if current.status != connected {
                let sessions = Arc::clone(&self.sessions);
                let id = node_id.clone();
                let status = connected.clone();
                // The write fsyncs; keep it off the connection thread.
                let written = tokio::task::spawn_blocking(move || sessions.set_status(&id, status))
                    .await
                    .map_err(|_| InvokeError::Interrupted)?;
                match written {
                    Ok(updated) => {
                        self.host.on_status(node_id, &updated.status);
                        current = Arc::new(updated);
                    }
                    Err(e) => {
                        tracing::warn!(node = %node_id, error = %e, "could not record connected status");
                        return Err(InvokeError::Refused(ToolError::failed("Could not record the session status")));
                    }
                }
            }
        }
        let project_folder = self.host.project_folder(&current.identity.project_id);
        Ok(SessionInfo {
            session: current,
            endpoint_url: &self.endpoint.url,
            browser_control: self.host.browser_enabled(),
            project_folder,
        })
    }

    /// A hook report from an authenticated session whose node may still act.
    pub(crate) fn report_hook(&self, session: &ToolSession, report: HookReport) -> Result<(), InvokeError> {
        if !self.sessions.is_current(&session.identity.node_id, &session.token) {
            return Err(InvokeError::Unauthorized);
        }
        if !self.host.valid(&session.identity) {
            return Err(InvokeError::InvalidSession);
        }
        tracing::debug!(node = %session.identity.node_id, event = ?report.event, "agent hook");
        self.host.on_hook(&session.identity, report);
        Ok(())
    }

    fn agent_status(&self, session: &ToolSession, args: &AgentStatusArgs) -> Result<Value, InvokeError> {
        let wanted = args.node_id.as_deref();
        let agents: Vec<Value> = self
            .sessions
            .in_project(&session.identity.project_id)
            .into_iter()
            .filter(|s| wanted.is_none_or(|w| s.identity.node_id == w))
            .filter(|s| self.host.valid(&s.identity))
            .map(|s| {
                let mut entry = json!({"nodeId": s.identity.node_id, "status": s.status});
                // The state, stateSince, source (and exitCode, detail) of the agent, beside its integration status.
                if let (Some(Value::Object(activity)), Some(fields)) = (
                    self.host.activity(&s.identity.node_id).and_then(|a| serde_json::to_value(a).ok()),
                    entry.as_object_mut(),
                ) {
                    fields.extend(activity);
                }
                entry
            })
            .collect();
        if let (Some(node), true) = (wanted, agents.is_empty()) {
            let message = format!("No agent session for node {}", node.escape_debug());
            return Err(InvokeError::Refused(ToolError::not_found(message)));
        }
        Ok(json!({ "agents": agents }))
    }
}

fn guide_read(args: &GuideReadArgs) -> Value {
    json!({"topic": args.topic.name(), "text": guide(args.topic)})
}
