//! Canvas and sticky operations of the agent tool runtime: each becomes a
//! model [`Command`] applied on the main thread.

use super::context::{beside, caller_project, model_error, target_node, OpContext};
use crate::model::{Command, Node, NodeId, NodeKind, Project, Rect};
use serde_json::{json, Value};
use tool_server::{GroupArgs, MoveArgs, NodesArgs, ResizeArgs, StickyArgs, ToolError};

/// Size of a new sticky note.
const STICKY_SIZE: (f64, f64) = (260.0, 200.0);
/// Longest sticky text echoed back by canvas_list.
const LIST_TEXT_CHARS: usize = 200;

/// A node as agents see it: compact JSON.
pub(crate) fn node_json(n: &Node, group: Option<&NodeId>) -> Value {
    let mut v = json!({
        "id": n.id, "kind": n.kind.name(), "title": n.title,
        "x": n.rect.x, "y": n.rect.y, "width": n.rect.w, "height": n.rect.h, "z": n.z,
    });
    match &n.kind {
        NodeKind::Browser { tabs, active_tab } => {
            if let Some(t) = tabs.iter().find(|t| &t.id == active_tab) {
                v["url"] = json!(t.url);
            }
        }
        NodeKind::Agent { agent, .. } => v["agent"] = json!(agent.as_str()),
        NodeKind::Sticky { text } => v["text"] = json!(text.chars().take(LIST_TEXT_CHARS).collect::<String>()),
        NodeKind::Group { members } => v["members"] = json!(members),
        NodeKind::Artifact { path, view } => {
            v["path"] = json!(path.display().to_string());
            v["view"] = json!(view);
        }
        NodeKind::Terminal { .. } => {}
    }
    if let Some(g) = group {
        v["group"] = json!(g);
    }
    if !n.links.is_empty() {
        v["links"] = json!(n.links);
    }
    v
}

fn bounds(r: &Rect) -> Value {
    json!({"x": r.x, "y": r.y, "width": r.w, "height": r.h})
}

/// `canvas_list`: every node of the caller's canvas, bottom to top.
pub(crate) fn list(ctx: &OpContext) -> Result<Value, ToolError> {
    let identity = ctx.identity.clone();
    ctx.on_main(move |rt| {
        let p = caller_project(rt, &identity)?;
        Ok(Value::Array(p.nodes_by_z().into_iter().map(|n| node_json(n, p.group_of(&n.id))).collect()))
    })
}

fn node_ids(p: &Project, ids: &[String]) -> Result<Vec<NodeId>, ToolError> {
    ids.iter().map(|id| target_node(p, id).map(|n| n.id.clone())).collect()
}

/// A node's bounds after a command changed them.
fn bounds_of(rt: &crate::runtime::Runtime, id: &NodeId) -> Result<Rect, ToolError> {
    rt.project().and_then(|p| p.node(id)).map(|n| n.rect).ok_or_else(|| ToolError::not_found("the node vanished"))
}

/// `canvas_select`: replaces the selection.
pub(crate) fn select(ctx: &OpContext, args: NodesArgs) -> Result<Value, ToolError> {
    let identity = ctx.identity.clone();
    ctx.on_main(move |rt| {
        let ids = node_ids(caller_project(rt, &identity)?, &args.node_ids)?;
        rt.selection.clear();
        for id in &ids {
            rt.selection.shift_click(id.clone());
        }
        rt.request_redraw();
        Ok(json!({"selected": rt.selection.to_vec()}))
    })
}

/// `canvas_move`: puts a node's top-left corner at (x, y) (a group brings its members).
pub(crate) fn move_node(ctx: &OpContext, args: MoveArgs) -> Result<Value, ToolError> {
    let identity = ctx.identity.clone();
    let MoveArgs { node_id, x, y } = args;
    ctx.on_main(move |rt| {
        let n = target_node(caller_project(rt, &identity)?, &node_id)?;
        let (nid, r) = (n.id.clone(), n.rect);
        rt.apply(Command::MoveNodes { ids: vec![nid.clone()], dx: x - r.x, dy: y - r.y }).map_err(model_error)?;
        let r = bounds_of(rt, &nid)?;
        Ok(json!({"nodeId": nid, "bounds": bounds(&r)}))
    })
}

/// `canvas_resize`: sets a node's size, keeping its top-left corner.
pub(crate) fn resize(ctx: &OpContext, args: ResizeArgs) -> Result<Value, ToolError> {
    let identity = ctx.identity.clone();
    let ResizeArgs { node_id, width: w, height: h } = args;
    ctx.on_main(move |rt| {
        let n = target_node(caller_project(rt, &identity)?, &node_id)?;
        let (nid, r) = (n.id.clone(), n.rect);
        rt.apply(Command::SetRect { id: nid.clone(), rect: Rect::new(r.x, r.y, w, h) }).map_err(model_error)?;
        let r = bounds_of(rt, &nid)?;
        Ok(json!({"nodeId": nid, "bounds": bounds(&r)}))
    })
}

/// `canvas_group`: a new group frame around the nodes.
pub(crate) fn group(ctx: &OpContext, args: GroupArgs) -> Result<Value, ToolError> {
    let identity = ctx.identity.clone();
    ctx.on_main(move |rt| {
        let ids = node_ids(caller_project(rt, &identity)?, &args.node_ids)?;
        let applied = rt.apply(Command::GroupNodes { ids, title: args.title }).map_err(model_error)?;
        let group = applied.created.first().ok_or_else(|| ToolError::failed("no group was created"))?;
        Ok(json!({"nodeId": group}))
    })
}

/// `sticky_open`: a note beside the caller's node.
pub(crate) fn sticky_open(ctx: &OpContext, args: StickyArgs) -> Result<Value, ToolError> {
    let identity = ctx.identity.clone();
    let text = args.text;
    ctx.on_main(move |rt| {
        let at = beside(caller_project(rt, &identity)?, &identity.node_id, STICKY_SIZE);
        let id = rt.add_node(NodeKind::Sticky { text }, "Note", STICKY_SIZE, Some(at)).map_err(model_error)?;
        Ok(json!({"nodeId": id}))
    })
}
