//! `ToolServer`: the lifecycle of one tool server — lock, sessions, the HTTP
//! listener on its own thread and runtime, `endpoint.json`, and shutdown.

use std::net::{Ipv4Addr, SocketAddrV4, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use thiserror::Error;
use tokio::sync::watch;

use crate::config::ServerConfig;
use crate::endpoint::{Endpoint, ENDPOINT_FILE};
use crate::http::{self, HttpState};
use crate::invoke::{Invoker, ToolHost};
use crate::lock::{LockError, ServerLock};
use crate::mcp_http::McpEndpoint;
use crate::queue::ProjectQueues;
use crate::sessions::{IntegrationStatus, SessionError, SessionStore, ToolIdentity, ToolSession};
use local_guard::files::{self, FileError};
use local_guard::RandomError;

/// A failure starting or stopping the server.
#[derive(Debug, Error)]
pub enum ServerError {
    /// The data directory could not be prepared, or a file written.
    #[error(transparent)]
    File(#[from] FileError),
    /// The lock is held by another instance, or could not be taken.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The session store could not be opened.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// Binding the listener, or starting the runtime or thread, failed.
    #[error("{action}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The OS random source failed.
    #[error("OS random source failed: {0}")]
    Random(#[source] RandomError),
}

/// A running tool server. Dropping it closes it.
pub struct ToolServer {
    dir: PathBuf,
    endpoint: Endpoint,
    port: u16,
    invoker: Arc<Invoker>,
    mcp: Arc<McpEndpoint>,
    /// The server thread's runtime, for work started from the app's side.
    runtime: tokio::runtime::Handle,
    shutdown: watch::Sender<bool>,
    thread: Option<JoinHandle<()>>,
    lock: Option<ServerLock>,
}

impl std::fmt::Debug for ToolServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolServer").field("dir", &self.dir).field("endpoint", &self.endpoint).finish_non_exhaustive()
    }
}

impl ToolServer {
    /// Starts a server for `data_dir` (state lives in `data_dir/agent-tools`)
    /// with the contract's default limits.
    pub fn start(data_dir: &Path, host: Arc<dyn ToolHost>) -> Result<ToolServer, ServerError> {
        Self::start_with_config(data_dir, host, ServerConfig::default())
    }

    /// Starts a server with explicit limits: takes `server.lock` (failing if
    /// another live instance holds it), binds `127.0.0.1:0`, serves on a
    /// dedicated thread, and writes `endpoint.json`.
    pub fn start_with_config(
        data_dir: &Path,
        host: Arc<dyn ToolHost>,
        config: ServerConfig,
    ) -> Result<ToolServer, ServerError> {
        std::fs::create_dir_all(data_dir)
            .map_err(|source| ServerError::Io { action: "create data directory", source })?;
        let dir = data_dir.join("agent-tools");
        files::ensure_private_dir(&dir)?;

        let mut id = [0u8; 16];
        local_guard::fill_random(&mut id).map_err(ServerError::Random)?;
        let instance_id = local_guard::hex::encode(&id);
        let lock = ServerLock::acquire(&dir, &instance_id)?;
        let sessions = Arc::new(SessionStore::open(&dir)?);

        let listener = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))
            .map_err(|source| ServerError::Io { action: "bind 127.0.0.1:0", source })?;
        listener.set_nonblocking(true).map_err(|source| ServerError::Io { action: "configure listener", source })?;
        let port =
            listener.local_addr().map_err(|source| ServerError::Io { action: "read local address", source })?.port();
        let endpoint = Endpoint { url: format!("http://127.0.0.1:{port}"), instance_id };

        let invoker = Arc::new(Invoker {
            host,
            sessions,
            queues: Arc::new(ProjectQueues::default()),
            endpoint: endpoint.clone(),
            operation_timeout: config.operation_timeout,
        });
        let mcp = Arc::new(McpEndpoint::new(Arc::clone(&invoker), config.max_body_bytes));
        let state = Arc::new(HttpState { invoker: Arc::clone(&invoker), port, config, mcp: Arc::clone(&mcp) });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|source| ServerError::Io { action: "start runtime", source })?;
        let handle = runtime.handle().clone();
        let (shutdown, shutdown_rx) = watch::channel(false);
        let thread = std::thread::Builder::new()
            .name("tool-server".into())
            .spawn(move || runtime.block_on(http::serve(listener, state, shutdown_rx)))
            .map_err(|source| ServerError::Io { action: "spawn server thread", source })?;

        // From here an early return drops `server`, whose close() stops the
        // thread and releases the lock.
        let server = ToolServer {
            dir,
            endpoint,
            port,
            invoker,
            mcp,
            runtime: handle,
            shutdown,
            thread: Some(thread),
            lock: Some(lock),
        };
        files::write_private_json(&server.dir, ENDPOINT_FILE, &server.endpoint)?;
        tracing::info!(url = %server.endpoint.url, "agent tool server listening");
        Ok(server)
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.endpoint.url
    }

    /// The listening port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// This instance's random id (also in `endpoint.json` and `server.lock`).
    pub fn instance_id(&self) -> &str {
        &self.endpoint.instance_id
    }

    /// The endpoint as written to `endpoint.json`.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The private `agent-tools` directory (for sibling state such as
    /// `browser-owners.json`, `preferences.json`, `launch/`).
    pub fn directory(&self) -> &Path {
        &self.dir
    }

    /// Creates or refreshes a node's session (see [`SessionStore::provision`])
    /// and reports its status to the host.
    pub fn provision(
        &self,
        identity: ToolIdentity,
        status: IntegrationStatus,
        reuse: bool,
    ) -> Result<ToolSession, SessionError> {
        let session = self.invoker.sessions.provision(identity, status, reuse)?;
        self.invoker.host.on_status(&session.identity.node_id, &session.status);
        Ok(session)
    }

    /// Updates a live session's status and reports it to the host.
    pub fn set_status(&self, node_id: &str, status: IntegrationStatus) -> Result<ToolSession, SessionError> {
        let session = self.invoker.sessions.set_status(node_id, status)?;
        self.invoker.host.on_status(node_id, &session.status);
        Ok(session)
    }

    /// Deletes a node's session file and forgets it; its queued operations
    /// fail with "Unknown or revoked session" and its MCP sessions over HTTP
    /// are closed. Returns whether it was live.
    pub fn revoke(&self, node_id: &str) -> Result<bool, SessionError> {
        let revoked = self.invoker.sessions.revoke(node_id)?;
        if revoked && self.thread.is_some() {
            let mcp = Arc::clone(&self.mcp);
            self.runtime.spawn(async move { mcp.close_orphans().await });
        }
        Ok(revoked)
    }

    /// The status in a node's session file, live or saved by an earlier run.
    pub fn persisted_status(&self, node_id: &str) -> Option<IntegrationStatus> {
        self.invoker.sessions.persisted_status(node_id)
    }

    /// A node's live session.
    pub fn session(&self, node_id: &str) -> Option<ToolSession> {
        self.invoker.sessions.get(node_id)
    }

    /// Operations of a project that are queued or running.
    pub fn pending_operations(&self, project_id: &str) -> usize {
        self.invoker.queues.pending(project_id)
    }

    /// Stops serving (closing every connection and dropping unfinished
    /// operations), removes `endpoint.json` if it is still ours, and releases
    /// the lock. Idempotent; also run on drop.
    pub fn close(&mut self) -> Result<(), ServerError> {
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        let _ = self.shutdown.send(true);
        if thread.join().is_err() {
            tracing::error!("tool server thread panicked");
        }
        let ours = files::read_private(&self.dir, ENDPOINT_FILE, 64 * 1024)
            .ok()
            .flatten()
            .and_then(|bytes| serde_json::from_slice::<Endpoint>(&bytes).ok())
            .is_some_and(|e| e.instance_id == self.endpoint.instance_id);
        let removed = if ours { files::remove_private(&self.dir, ENDPOINT_FILE).map(|_| ()) } else { Ok(()) };
        let released = self.lock.take().map_or(Ok(()), ServerLock::release);
        tracing::info!(url = %self.endpoint.url, "agent tool server closed");
        removed?;
        released?;
        Ok(())
    }
}

impl Drop for ToolServer {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            tracing::warn!(error = %e, "closing agent tool server");
        }
    }
}
