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

/// A node as agents see it: compact JSON; an agent node (or a terminal whose
/// program reported one) with its `state`, `stateSince`, `source` as `agent_status` has them.
pub(crate) fn node_json(n: &Node, group: Option<&NodeId>, activity: Option<agent_vocab::AgentActivity>) -> Value {
    let mut v = json!({
        "id": n.id, "kind": n.kind.name(), "title": n.title,
        "x": n.rect.x, "y": n.rect.y, "width": n.rect.w, "height": n.rect.h, "z": n.z,
    });
    match &n.kind {
        NodeKind::Browser { tabs, active_tab, context } => {
            if let Some(t) = tabs.iter().find(|t| &t.id == active_tab) {
                v["url"] = json!(t.url);
            }
            if let Some(c) = context {
                v["browserContextId"] = json!(c);
            }
        }
        NodeKind::Agent { agent, .. } => v["agent"] = json!(agent.as_str()),
        NodeKind::Sticky { text } => v["text"] = json!(text.chars().take(LIST_TEXT_CHARS).collect::<String>()),
        NodeKind::Group { members } => v["members"] = json!(members),
        NodeKind::Artifact { path, view, .. } => {
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
    if let (Some(Value::Object(activity)), Some(fields)) =
        (activity.and_then(|a| serde_json::to_value(a).ok()), v.as_object_mut())
    {
        fields.extend(activity);
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
        let listed = p.nodes_by_z().into_iter().map(|n| {
            let activity = rt.agent_activity(&n.id).and_then(|a| a.wire());
            node_json(n, p.group_of(&n.id), activity)
        });
        Ok(Value::Array(listed.collect()))
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

#[cfg(test)]
mod tests {
    use crate::model::{NodeKind, Rect};
    use crate::runtime::test_context::{tool, TestContext};
    use serde_json::json;
    use tool_server::{ErrorCode, ToolIdentity};

    fn sticky(text: &str) -> NodeKind {
        NodeKind::Sticky { text: text.into() }
    }

    #[test]
    fn list_gives_every_node_bottom_to_top() {
        let mut ctx = TestContext::new();
        let s = ctx.add(sticky("hello"), "Note", (700.0, 10.0, 200.0, 100.0));
        let agent = ctx.agent.node_id.clone();
        let z = |id: &str| ctx.node(id).map(|n| n.z).unwrap();
        let (za, zs) = (z(&agent), z(s.as_str()));
        assert!(za < zs, "the node added last is on top");
        assert_eq!(
            ctx.run("canvas_list", json!({})).unwrap(),
            json!([
                {"id": agent, "kind": "agent", "title": "Agent A", "x": 0.0, "y": 0.0, "width": 600.0, "height": 400.0, "z": za, "agent": "custom"},
                {"id": s, "kind": "sticky", "title": "Note", "x": 700.0, "y": 10.0, "width": 200.0, "height": 100.0, "z": zs, "text": "hello"},
            ])
        );
    }

    #[test]
    fn a_caller_off_the_visible_canvas_is_refused() {
        let mut ctx = TestContext::new();
        let other_project = ToolIdentity::new(ctx.agent.node_id.clone(), "p-elsewhere");
        let e = ctx.call(&other_project, tool("canvas_list", json!({}))).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused);
        assert_eq!(
            e.message(),
            "this operation requires your project tab to be visible; the visible project is project"
        );
        let gone = ToolIdentity::new("n-gone", ctx.agent.project_id.clone());
        let e = ctx.call(&gone, tool("sticky_open", json!({"text": "x"}))).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused);
        assert_eq!(e.message(), "your agent node is no longer on the canvas");
    }

    #[test]
    fn select_replaces_the_selection_and_refuses_unknown_nodes() {
        let mut ctx = TestContext::new();
        let a = ctx.add(sticky("a"), "a", (700.0, 0.0, 100.0, 100.0));
        let b = ctx.add(sticky("b"), "b", (900.0, 0.0, 100.0, 100.0));
        // The selection is a set: it answers in id order.
        let mut both = vec![a.clone(), b.clone()];
        both.sort();
        assert_eq!(ctx.run("canvas_select", json!({"nodeIds": [b, a]})).unwrap(), json!({"selected": both}));
        assert_eq!(ctx.rt.selection.to_vec(), both);
        let e = ctx.run("canvas_select", json!({"nodeIds": [b, "n-missing"]})).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        assert_eq!(e.message(), "no node n-missing on this canvas");
        assert_eq!(ctx.rt.selection.to_vec(), both, "a refused selection changes nothing");
    }

    #[test]
    fn move_puts_the_top_left_corner_and_reports_the_bounds() {
        let mut ctx = TestContext::new();
        let s = ctx.add(sticky("a"), "a", (700.0, 0.0, 100.0, 80.0));
        assert_eq!(
            ctx.run("canvas_move", json!({"nodeId": s, "x": 10.5, "y": -20.0})).unwrap(),
            json!({"nodeId": s, "bounds": {"x": 10.5, "y": -20.0, "width": 100.0, "height": 80.0}})
        );
        assert_eq!(ctx.node(s.as_str()).unwrap().rect, Rect::new(10.5, -20.0, 100.0, 80.0));
        let e = ctx.run("canvas_move", json!({"nodeId": "n-missing", "x": 0, "y": 0})).unwrap_err();
        assert_eq!((e.code, e.message()), (ErrorCode::NotFound, "no node n-missing on this canvas"));
    }

    #[test]
    fn resize_keeps_the_top_left_corner() {
        let mut ctx = TestContext::new();
        let s = ctx.add(sticky("a"), "a", (700.0, 30.0, 100.0, 80.0));
        assert_eq!(
            ctx.run("canvas_resize", json!({"nodeId": s, "width": 320, "height": 240})).unwrap(),
            json!({"nodeId": s, "bounds": {"x": 700.0, "y": 30.0, "width": 320.0, "height": 240.0}})
        );
        assert_eq!(ctx.node(s.as_str()).unwrap().rect, Rect::new(700.0, 30.0, 320.0, 240.0));
    }

    #[test]
    fn group_frames_the_nodes() {
        let mut ctx = TestContext::new();
        let a = ctx.add(sticky("a"), "a", (700.0, 0.0, 100.0, 100.0));
        let b = ctx.add(sticky("b"), "b", (900.0, 0.0, 100.0, 100.0));
        let v = ctx.run("canvas_group", json!({"nodeIds": [a, b], "title": "Pair"})).unwrap();
        let group = v["nodeId"].as_str().expect("a group id").to_owned();
        assert_eq!(v, json!({"nodeId": group}));
        let g = ctx.node(&group).unwrap();
        assert_eq!(g.title, "Pair");
        assert_eq!(g.kind, NodeKind::Group { members: vec![a, b] });
    }

    #[test]
    fn sticky_open_puts_a_note_beside_the_caller() {
        let mut ctx = TestContext::new();
        let v = ctx.run("sticky_open", json!({"text": "remember"})).unwrap();
        let id = v["nodeId"].as_str().expect("a node id").to_owned();
        assert_eq!(v, json!({"nodeId": id}));
        let n = ctx.node(&id).unwrap();
        assert_eq!(n.kind, sticky("remember"));
        assert_eq!(n.rect, Rect::new(640.0, 0.0, 260.0, 200.0), "right of the caller's node, 40 apart");
    }
}
