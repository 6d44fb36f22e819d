//! The agent tool server: the fixed catalogue of operations an AI agent may
//! call ([`AGENT_TOOLS`] with JSON input schemas), the per-surface usage guides
//! ([`TOOL_GUIDES`]), the request validator ([`validate_tool_request`]), session
//! provisioning with bearer tokens persisted as private files, the
//! authenticated localhost HTTP transport (`POST /call` on `127.0.0.1`), and
//! per-project FIFO queues that serialize accepted operations before handing
//! them to the app, plus the client side `termsprawl-ctl` needs (a blocking
//! loopback [`ToolClient`] and the [`McpServer`] stdio adapter). It owns
//! transport, authentication, validation and serialization only: it must NOT know about CEF, PTYs, the canvas model or
//! rendering — every accepted operation is fulfilled by the app through the
//! [`ToolHost`] trait, so the whole crate is testable with a fake host.

#![warn(missing_docs)]

mod answer;
mod call;
mod catalogue;
mod client;
mod error;
mod guides;
mod http;
mod invoke;
mod lock;
mod mcp;
mod queue;
mod server;
mod sessions;
mod validate;

pub use call::{
    AgentChoice, AgentLaunchArgs, AgentStatusArgs, ArtifactArgs, ArtifactChoice, CallError, ClickArgs, ExternalArgs,
    GroupArgs, GuideReadArgs, InspectArgs, MoveArgs, NavigateArgs, NoArgs, NodeArgs, NodeTextArgs, NodesArgs, ReadArgs,
    ResizeArgs, SessionInfoArgs, StickyArgs, TerminalOpenArgs, ToolArgs, ToolCall, TransferArgs, TypeArgs, UrlArgs,
};
pub use catalogue::{
    tool_spec, Operation, ToolSpec, AGENT_TOOLS, MAX_ARRAY_ITEMS, MAX_ITEM_CHARS, MAX_NUMBER, MAX_STRING_CHARS,
};
pub use client::{ClientError, ToolClient};
pub use error::{ErrorCode, ToolError};
pub use guides::{guide, GuideTopic, TOOL_GUIDES};
pub use invoke::{ExecuteFuture, InvokeError, ToolHost};
pub use lock::{LockError, ServerLock};
pub use mcp::{McpServer, ToolCaller};
pub use server::{Endpoint, ServerConfig, ServerError, ToolServer};
pub use sessions::{
    valid_node_id, IntegrationState, IntegrationStatus, SessionError, SessionStore, ToolIdentity, ToolSession,
};
pub use validate::{validate_tool_request, ToolRequest, ValidationError};
