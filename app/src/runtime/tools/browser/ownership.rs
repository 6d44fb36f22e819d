//! The project's browsers and who drives them: `browser_list`,
//! `browser_claim` and `browser_transfer` (no page is touched).

use super::super::context::{caller_project, KindTag, OpContext};
use super::target::check_browser_node;
use crate::model::NodeKind;
use serde_json::{json, Value};
use tool_server::{NodeArgs, ToolError, TransferArgs};

/// `browser_list`: the project's browsers with their owners.
pub(crate) fn list(ctx: &OpContext) -> Result<Value, ToolError> {
    let identity = ctx.identity.clone();
    let owners = ctx.shared.owners();
    ctx.on_main(move |rt| {
        let p = caller_project(rt, &identity)?;
        let list = p
            .nodes_by_z()
            .into_iter()
            .filter_map(|n| match &n.kind {
                NodeKind::Browser { tabs, active_tab, .. } => {
                    let tab = tabs.iter().find(|t| &t.id == active_tab);
                    Some(json!({"nodeId": n.id, "url": tab.map(|t| t.url.as_str()), "title": tab.map_or(n.title.as_str(), |t| t.title.as_str()), "owner": owners.owner(n.id.as_str())}))
                }
                _ => None,
            })
            .collect();
        Ok(Value::Array(list))
    })
}

/// `browser_claim`: takes an unowned browser.
pub(crate) fn claim(ctx: &OpContext, args: NodeArgs) -> Result<Value, ToolError> {
    let id = args.node_id.as_str();
    check_browser_node(ctx, id)?;
    ctx.shared.with_owners(|o| o.claim(id, ctx.caller()))?;
    Ok(json!({"nodeId": id, "owner": ctx.caller()}))
}

/// `browser_transfer`: hands an owned browser to another agent node of the project.
pub(crate) fn transfer(ctx: &OpContext, args: TransferArgs) -> Result<Value, ToolError> {
    let (id, to) = (args.node_id.as_str(), args.agent_node_id.as_str());
    check_browser_node(ctx, id)?;
    if ctx.shared.kind_of(&ctx.identity.project_id, to) != Some(KindTag::Agent) {
        return Err(ToolError::not_found(format!("{to} is not an agent node of this project")));
    }
    ctx.shared.with_owners(|o| o.transfer(id, ctx.caller(), to))?;
    Ok(json!({"nodeId": id, "owner": to}))
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{owned_browser, unowned_browser};
    use crate::model::NodeKind;
    use crate::runtime::test_context::tool;
    use crate::runtime::test_context::TestContext;
    use serde_json::json;
    use tool_server::ErrorCode;

    #[test]
    fn browser_list_names_each_owner() {
        let mut ctx = TestContext::new();
        let agent = ctx.agent.node_id.clone();
        let unowned = unowned_browser(&mut ctx);
        let owned = ctx.run("browser_open", json!({"url": "https://example.org/"})).unwrap()["nodeId"].clone();
        let list = ctx.run("browser_list", json!({})).unwrap();
        assert_eq!(
            list,
            json!([
                {"nodeId": unowned, "url": "https://example.com/", "title": "", "owner": null},
                {"nodeId": owned, "url": "https://example.org/", "title": "", "owner": agent},
            ])
        );
    }

    #[test]
    fn browser_claim_takes_an_unowned_browser_once() {
        let mut ctx = TestContext::new();
        let b = unowned_browser(&mut ctx);
        let other = ctx.add_agent("Agent B");
        let v = ctx.call(&other, tool("browser_claim", json!({"nodeId": b}))).unwrap();
        assert_eq!(v, json!({"nodeId": b, "owner": other.node_id}));
        let e = ctx.run("browser_claim", json!({"nodeId": b})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused);
        assert_eq!(
            e.message(),
            format!("browser {b} is owned by agent {}; ask it to transfer it with browser_transfer", other.node_id)
        );
        let sticky = ctx.add(NodeKind::Sticky { text: "s".into() }, "s", (2000.0, 0.0, 100.0, 80.0));
        let e = ctx.run("browser_claim", json!({"nodeId": sticky})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert_eq!(e.message(), format!("node {sticky} is a sticky node, not a browser"));
    }

    #[test]
    fn browser_transfer_hands_an_owned_browser_to_another_agent() {
        let mut ctx = TestContext::new();
        let b = owned_browser(&mut ctx);
        let other = ctx.add_agent("Agent B");
        let sticky = ctx.add(NodeKind::Sticky { text: "s".into() }, "s", (2000.0, 0.0, 100.0, 80.0));
        let e = ctx.run("browser_transfer", json!({"nodeId": b, "agentNodeId": sticky})).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        assert_eq!(e.message(), format!("{sticky} is not an agent node of this project"));
        let v = ctx.run("browser_transfer", json!({"nodeId": b, "agentNodeId": other.node_id})).unwrap();
        assert_eq!(v, json!({"nodeId": b, "owner": other.node_id}));
        assert_eq!(ctx.rt.tools.shared.owners().owner(&b), Some(other.node_id.as_str()));
        let e = ctx.run("browser_transfer", json!({"nodeId": b, "agentNodeId": ctx.agent.node_id})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused);
        assert_eq!(e.message(), format!("browser {b} is owned by agent {}, not by you", other.node_id));
        let unowned = unowned_browser(&mut ctx);
        let e = ctx.run("browser_transfer", json!({"nodeId": unowned, "agentNodeId": other.node_id})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused);
        assert_eq!(e.message(), format!("browser {unowned} has no owner; claim it with browser_claim first"));
    }
}
