//! termsprawl (the app): the CLI, the main loop, the workspace model, input
//! routing, persistence and the tool runtime. It wires the library crates
//! together — cef-bridge (browsers), canvas-render (wgpu), terminal (PTYs),
//! tool-server and cdp-facade (the agent control planes) — and is the only
//! crate that knows all of them. It must not know the wire formats of HTTP or
//! CDP: those belong to tool-server, cdp-facade and page-driver (which every
//! part of the app drives a page through, over `page_transport`).

pub mod allocator;
pub mod canvas_shot;
pub mod junit;
pub mod model;
pub mod page_transport;
pub mod paths;
pub mod runtime;
pub mod shot;
pub mod visual_diff;
pub mod window;
pub mod worktree;
