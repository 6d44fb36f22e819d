//! What every operation runs with: [`OpContext`] (the caller's identity, the
//! main-thread executor with its 10 s deadline, the shared state of
//! `shared.rs`, re-exported here for the surfaces), and the lookups every
//! surface shares (the caller's project, a target node, a free spot beside
//! the caller).

use super::desktop::DesktopSource;
pub use super::shared::{KindTag, ToolShared};
use crate::model::placement::{free_spot, PLACEMENT_GAP};
use crate::model::{Node, NodeId, Point, Project, Rect};
use crate::runtime::{AppError, AppHandle, Runtime};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tool_server::{ToolError, ToolIdentity};

/// The message an agent gets when the main thread does not acknowledge in time.
pub const TIMEOUT_MESSAGE: &str =
    "the app did not answer within 10 s (its main thread is busy); nothing was changed, try again";

/// What a worker needs to run one operation.
#[derive(Clone)]
pub(crate) struct OpContext {
    pub(crate) app: AppHandle,
    pub(crate) shared: Arc<ToolShared>,
    pub(crate) data_dir: PathBuf,
    pub(crate) identity: ToolIdentity,
    /// The main thread's acknowledgement deadline ([`CALL_TIMEOUT`](crate::runtime::CALL_TIMEOUT); shorter only in tests).
    pub(crate) call_timeout: Duration,
    /// Where `terminal_external` reads the desktop's environment from.
    pub(crate) desktop: DesktopSource,
}

impl OpContext {
    /// Runs `f` on the main thread with the 10 s acknowledgement deadline.
    pub(crate) fn on_main<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Runtime) -> Result<R, ToolError> + Send + 'static,
    ) -> Result<R, ToolError> {
        match self.app.call(self.call_timeout, f) {
            Ok(r) => r,
            Err(AppError::Timeout(_)) => Err(ToolError::timeout(TIMEOUT_MESSAGE)),
            Err(AppError::Stopped) => Err(ToolError::interrupted("the app is shutting down")),
        }
    }

    /// The calling agent's node id.
    pub(crate) fn caller(&self) -> &str {
        &self.identity.node_id
    }
}

/// A model error (a refused command, an invalid URL…) as the agent sees it.
pub(crate) fn model_error(e: impl std::fmt::Display) -> ToolError {
    ToolError::failed(e.to_string())
}

/// The caller's project, which must be the visible one, and its agent node on it.
pub(crate) fn caller_project<'a>(rt: &'a Runtime, identity: &ToolIdentity) -> Result<&'a Project, ToolError> {
    let p = rt.project().ok_or_else(|| ToolError::refused("no project is open"))?;
    if p.id().as_str() != identity.project_id {
        return Err(ToolError::refused(format!(
            "this operation requires your project tab to be visible; the visible project is {}",
            p.name()
        )));
    }
    if !p.nodes().any(|n| n.id.as_str() == identity.node_id) {
        return Err(ToolError::refused("your agent node is no longer on the canvas"));
    }
    Ok(p)
}

/// Parses a node id argument and checks the node is on the caller's canvas.
pub(crate) fn target_node<'a>(p: &'a Project, id: &str) -> Result<&'a Node, ToolError> {
    let nid = NodeId::new(id).map_err(|_| ToolError::not_found(format!("no node {id:?} on this canvas")))?;
    p.node(&nid).ok_or_else(|| ToolError::not_found(format!("no node {id} on this canvas")))
}

/// A free spot for a new node of `size`: the one nearest the slot right of the
/// caller's node (explicit positions never come through here).
pub(crate) fn beside(p: &Project, caller: &str, size: (f64, f64)) -> (f64, f64) {
    let anchor = p
        .nodes()
        .find(|n| n.id.as_str() == caller)
        .map(|n| n.rect)
        .or_else(|| p.bounds())
        .unwrap_or(Rect::new(0.0, 0.0, 0.0, 0.0));
    // The canvas's one placement rule: the free spot nearest the slot right of the anchor.
    let wanted = Point::new(anchor.x + anchor.w + PLACEMENT_GAP, anchor.y);
    let taken: Vec<Rect> = p.nodes().map(|n| n.rect).collect();
    let spot = free_spot(&taken, size, wanted);
    (spot.x, spot.y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{NodeKind, ProjectId};

    #[test]
    fn new_nodes_go_beside_the_caller_without_overlap() {
        let a = Node::new(NodeKind::Sticky { text: "a".into() }, "a", Rect::new(0.0, 0.0, 100.0, 100.0));
        let b = Node::new(NodeKind::Sticky { text: "b".into() }, "b", Rect::new(140.0, 0.0, 100.0, 100.0));
        let caller = a.id.to_string();
        let (p, _) =
            Project::from_nodes(ProjectId::generate(), "p", "/tmp/p", crate::model::Camera::default(), vec![a, b], 0)
                .unwrap();
        let (x, y) = beside(&p, &caller, (100.0, 50.0));
        let r = Rect::new(x, y, 100.0, 50.0);
        for n in p.nodes() {
            let q = n.rect.expanded(39.0, 39.0, 39.0, 39.0);
            assert!(!r.intersects(&q), "{r:?} within the gap of {}", n.title);
        }
        assert_eq!(x, 140.0, "the free slot nearest the one right of the caller: in b's column");
        assert!(y.abs() <= 100.0, "{y}: next to b, not far away");
        let lone = beside(&p, "nobody", (100.0, 50.0));
        assert_eq!(lone, (280.0, 0.0), "no caller: right of everything");
    }

    #[test]
    fn a_stalled_main_thread_times_the_call_out_and_never_applies_it_later() {
        use crate::runtime::test_context::{tool, TestContext};
        let deadline = std::time::Duration::from_millis(40);
        let mut ctx = TestContext::with_call_timeout(deadline);
        let kind = NodeKind::Sticky { text: "s".into() };
        let s = ctx.add(kind, "s", (700.0, 0.0, 100.0, 80.0));
        let agent = ctx.agent.clone();
        let reply = ctx.submit(&agent, tool("canvas_move", serde_json::json!({"nodeId": s, "x": 1, "y": 2})));
        // The loop does not turn: the operation's job waits past its deadline.
        std::thread::sleep(deadline * 5);
        let e = ctx.finish(reply).unwrap_err();
        assert_eq!(e.code, tool_server::ErrorCode::Timeout);
        assert_eq!(e.message(), TIMEOUT_MESSAGE);
        for _ in 0..5 {
            ctx.rt.tick();
        }
        assert_eq!(ctx.node(s.as_str()).unwrap().rect, Rect::new(700.0, 0.0, 100.0, 80.0), "nothing was applied");
        // The loop turning again, the same call goes through.
        let v = ctx.call(&agent, tool("canvas_move", serde_json::json!({"nodeId": s, "x": 1, "y": 2}))).unwrap();
        assert_eq!(v["bounds"]["x"], 1.0);
    }
}
