//! Which live page an operation acts on: the caller's browser node, checked
//! on the main thread, and its page (waited for briefly while it starts).

use super::super::context::{caller_project, target_node, OpContext};
use crate::model::{NodeId, NodeKind};
use crate::runtime::engine::Browser;
use std::time::{Duration, Instant};
use tool_server::ToolError;

/// How long a browser node may take to get its live page (the seed's 60 × 50 ms).
const GUEST_WAIT: Duration = Duration::from_secs(3);

/// A node that is not a browser, named as the agent passed it.
pub(super) fn not_a_browser(id: &str, kind: &NodeKind) -> ToolError {
    ToolError::invalid_argument(format!("node {id} is a {} node, not a browser", kind.name()))
}

/// What the main thread hands a browser operation.
pub(super) struct Target {
    pub handle: Browser,
    pub node: NodeId,
}

/// Looks up a browser node of the caller's canvas and its live page, waiting
/// briefly for a page that is still being created: the wait sleeps on the live
/// browser list, which the main thread republishes whenever a browser comes
/// or goes, instead of asking the main thread again and again.
pub(super) fn target(ctx: &OpContext, node_id: &str) -> Result<Target, ToolError> {
    let end = Instant::now() + GUEST_WAIT;
    let lookup = || {
        let identity = ctx.identity.clone();
        let id = node_id.to_owned();
        ctx.on_main(move |rt| {
            let n = target_node(caller_project(rt, &identity)?, &id)?;
            if !matches!(n.kind, NodeKind::Browser { .. }) {
                return Err(not_a_browser(&id, &n.kind));
            }
            let nid = n.id.clone();
            let handle = rt.browsers.for_node(&nid).map(|(_, h)| h.clone()).filter(|h| !h.is_closed());
            Ok((nid, handle, rt.browsers.live()))
        })
    };
    let (node, handle, live) = lookup()?;
    if let Some(handle) = handle {
        // A background tab takes no input and paints no frame: show it for the operation.
        crate::runtime::on_screen::show_now(&handle);
        return Ok(Target { handle, node });
    }
    let started = live
        .wait_for(end, |tabs| tabs.iter().find(|(tab, h)| tab.node == node && !h.is_closed()).map(|(_, h)| h.clone()));
    if let Some(handle) = started {
        return Ok(Target { handle, node });
    }
    // Out of time: one last look, so a node removed meanwhile says so.
    match lookup()? {
        (node, Some(handle), _) => Ok(Target { handle, node }),
        (_, None, _) => Err(ToolError::not_found(format!(
            "browser {node_id} has no live page (it is still starting or was closed)"
        ))),
    }
}

/// Checks the node is a browser of the caller's canvas (without needing its page).
pub(super) fn check_browser_node(ctx: &OpContext, node_id: &str) -> Result<(), ToolError> {
    let identity = ctx.identity.clone();
    let id = node_id.to_owned();
    ctx.on_main(move |rt| {
        let n = target_node(caller_project(rt, &identity)?, &id)?;
        match n.kind {
            NodeKind::Browser { .. } => Ok(()),
            ref other => Err(not_a_browser(&id, other)),
        }
    })
}
