//! The agent tool server: the fixed catalogue of operations an AI agent may
//! call ([`AGENT_TOOLS`] with JSON input schemas), the per-surface usage guides
//! ([`TOOL_GUIDES`]), the request validator ([`validate_tool_request`]), session
//! provisioning with bearer tokens persisted as private files, the
//! authenticated localhost HTTP transport (`POST /call` on `127.0.0.1`, and
//! `POST /hook` for agent CLIs' hook reports, [`HookReport`], and MCP over
//! streamable HTTP at `/mcp`), and
//! per-project FIFO queues that serialize accepted operations before handing
//! them to the app, plus the client side `termsprawl-ctl` needs (a blocking
//! loopback [`ToolClient`] and the [`McpServer`] stdio adapter). It owns
//! transport, authentication, validation and serialization only: it must NOT know about CEF, PTYs, the canvas model or
//! rendering — every accepted operation is fulfilled by the app through the
//! [`ToolHost`] trait, so the whole crate is testable with a fake host.
//!
//! Modules and what each imports of the crate (no loops; the leaves import
//! nothing of it):
//!
//! ```text
//! server    → config, endpoint, http, invoke, lock, mcp_http, queue, sessions  (lifecycle, endpoint.json)
//! http      → answer, config, error, hook, invoke, mcp_http, sessions  (the loopback transport, bearer check)
//! mcp_http  → error, invoke, mcp, operation, sessions  (`/mcp`: rmcp's streamable HTTP, sessions bound to tokens)
//! invoke    → answer, args, endpoint, error, guides, hook, operation, queue, sessions, validate  (ToolHost, dispatch)
//! answer    → guides, operation, sessions       (a call's value and its 200 body, session_info written directly)
//! mcp       → catalogue, client, operation     (the MCP handler both transports serve; the stdio adapter)
//! client    → endpoint, hook, sessions         (the blocking loopback ToolClient)
//! validate  → catalogue, error, operation      (the request gate and its messages)
//! catalogue → operation                         (AGENT_TOOLS: descriptions, generated schemas, shared bounds)
//! operation → args                              (one row per operation: Operation, ToolRequest, ToolCall)
//! args      → guides                            (the arguments structs: serde and JSON Schema in one)
//! config                                        (ServerConfig)
//! endpoint                                      (Endpoint, endpoint.json's content)
//! hook                                          (HookReport and each CLI's hook input)
//! leaves:     config, endpoint, error, guides, hook, lock, queue, sessions
//! ```

#![warn(missing_docs)]

mod answer;
mod args;
mod catalogue;
mod client;
mod config;
mod endpoint;
mod error;
mod guides;
mod hook;
mod http;
mod invoke;
mod lock;
mod mcp;
mod mcp_http;
mod operation;
mod queue;
mod server;
mod sessions;
mod validate;

pub use args::{
    AgentLaunchArgs, AgentStatusArgs, ArtifactArgs, ArtifactChoice, ClickArgs, ExternalArgs, GroupArgs, GuideReadArgs,
    InspectArgs, MoveArgs, NavigateArgs, NoArgs, NodeArgs, NodeTextArgs, NodesArgs, ReadArgs, ResizeArgs,
    SessionInfoArgs, StickyArgs, TerminalOpenArgs, TransferArgs, TypeArgs, UrlArgs,
};
pub use catalogue::{tool_spec, ToolSpec, AGENT_TOOLS, MAX_ARRAY_ITEMS, MAX_ITEM_CHARS, MAX_NUMBER, MAX_STRING_CHARS};
pub use client::{ClientError, ToolClient, HOOK_CONNECT_TIMEOUT, HOOK_TIMEOUT};
pub use config::ServerConfig;
pub use endpoint::Endpoint;
pub use error::{ErrorCode, ToolError};
pub use guides::{guide, GuideTopic, TOOL_GUIDES};
pub use hook::{HookAgent, HookEvent, HookReport, MAX_HOOK_TEXT};
pub use invoke::{ExecuteFuture, InvokeError, ToolHost};
pub use lock::{LockError, ServerLock};
pub use mcp::{McpServer, ToolCaller};
pub use operation::{CallError, Operation, ToolCall, ToolRequest};
pub use server::{ServerError, ToolServer};
pub use sessions::{
    valid_node_id, IntegrationState, IntegrationStatus, SessionError, SessionStore, ToolIdentity, ToolSession,
};
pub use validate::{validate_tool_request, ValidationError};
