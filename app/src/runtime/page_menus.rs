//! A page's context menu as the runtime carries it out: the window draws the
//! menu CEF handed over and the person picks an entry; what the page does
//! itself (back, reload, cut, copy, paste, select all) goes back to the page,
//! and what the app does (a link or image in a new tab of the node, its
//! address on the clipboard) is done here, through the one URL policy.
//!
//! Without a window nobody can pick: a headless app answers every menu with
//! none at once, as headless Chromium shows none (the page's `contextmenu`
//! event has fired either way).

use super::Runtime;
use crate::model::NodeId;
use cef_bridge::{BrowserError, BrowserId, ContextMenu, MenuCommand};
use thiserror::Error;

/// Why a context menu entry was not carried out.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MenuError {
    /// The node has no live page.
    #[error("node {0} shows no page")]
    NoPage(NodeId),
    /// The page refused the answer (no menu open, or not one of its entries).
    #[error("{0}")]
    Browser(#[from] BrowserError),
    /// The new tab was not opened (a refused URL says why).
    #[error("cannot open {url}: {why}")]
    Tab {
        /// The link or image address.
        url: String,
        /// Why.
        why: String,
    },
}

impl Runtime {
    /// The context menu a browser node's page waits on, if any.
    pub fn page_menu(&self, node: &NodeId) -> Option<ContextMenu> {
        self.browsers.for_node(node).and_then(|(_, b)| b.context_menu())
    }

    /// Answers a browser node's open context menu with the entry the person
    /// picked (`None`: closed without one) and carries it out.
    pub fn answer_page_menu(&mut self, node: &NodeId, command: Option<MenuCommand>) -> Result<(), MenuError> {
        let page =
            self.browsers.for_node(node).map(|(_, b)| b.clone()).ok_or_else(|| MenuError::NoPage(node.clone()))?;
        let menu = page.answer_context_menu(command)?;
        let Some(command) = command else { return Ok(()) };
        tracing::info!(%node, ?command, "context menu entry picked");
        let Some(url) = menu.address_for(command).map(str::to_string) else { return Ok(()) };
        match command {
            MenuCommand::OpenLinkInNewTab | MenuCommand::OpenImageInNewTab => {
                // As in Chromium: a background tab, the page the person is reading stays.
                self.new_tab(node, &url, false).map_err(|e| MenuError::Tab { url, why: e.to_string() })?;
            }
            MenuCommand::CopyLinkAddress | MenuCommand::CopyImageAddress => self.clipboard = Some(url),
            _ => {}
        }
        self.request_redraw();
        Ok(())
    }

    /// A page opened its context menu: the window draws it; without one it is answered with none.
    pub(super) fn context_menu_opened(&mut self, id: BrowserId) {
        if self.config.views_follow_zoom {
            self.request_redraw();
            return;
        }
        let Some(page) = self.engine.browser(id) else { return };
        if let Err(e) = page.answer_context_menu(None) {
            tracing::debug!(browser = %id, error = %e, "headless context menu already gone");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NodeKind;
    use crate::runtime::test_context::TestContext;
    use cef_bridge::MenuTarget;

    fn browser_node(ctx: &mut TestContext) -> NodeId {
        let kind = NodeKind::browser("https://example.com/").expect("browser kind");
        ctx.add(kind, "Example", (0.0, 900.0, 802.0, 640.0))
    }

    fn on_link(url: &str) -> ContextMenu {
        ContextMenu::new(10, 20, MenuTarget { link_url: Some(url.into()), ..Default::default() })
    }

    #[test]
    fn the_pages_own_entries_go_back_to_the_page() {
        let mut ctx = TestContext::windowed();
        let node = browser_node(&mut ctx);
        let page = ctx.page_of(node.as_str()).expect("a page");
        page.open_context_menu(ContextMenu::new(1, 2, MenuTarget { can_go_back: true, ..Default::default() }));
        ctx.rt.tick();
        assert_eq!(ctx.rt.page_menu(&node).map(|m| (m.x, m.y)), Some((1, 2)), "waits for the person");
        let err = ctx.rt.answer_page_menu(&node, Some(MenuCommand::Forward)).expect_err("disabled");
        assert_eq!(err, MenuError::Browser(BrowserError::NotInMenu(MenuCommand::Forward)));
        assert!(err.to_string().contains("\"Forward\" is not an entry"), "{err}");
        assert!(ctx.rt.page_menu(&node).is_some(), "a refused answer keeps the menu open");
        ctx.rt.answer_page_menu(&node, Some(MenuCommand::Back)).expect("back");
        assert_eq!(*page.menu_answers.lock(), vec![Some(MenuCommand::Back)]);
        assert_eq!(ctx.rt.page_menu(&node), None);
        let again = ctx.rt.answer_page_menu(&node, None).expect_err("none open");
        assert_eq!(again, MenuError::Browser(BrowserError::NoContextMenu));
    }

    #[test]
    fn a_link_opens_in_a_background_tab_through_the_url_policy_or_goes_on_the_clipboard() {
        let mut ctx = TestContext::windowed();
        let node = browser_node(&mut ctx);
        let page = ctx.page_of(node.as_str()).expect("a page");
        page.open_context_menu(on_link("http://127.0.0.1:9/next"));
        ctx.rt.answer_page_menu(&node, Some(MenuCommand::OpenLinkInNewTab)).expect("new tab");
        let tabs = ctx.rt.page_tabs(&node);
        assert_eq!(tabs.len(), 2);
        assert!(tabs[0].active && !tabs[1].active, "the page being read stays in front: {tabs:?}");
        let Some(NodeKind::Browser { tabs: model_tabs, .. }) = ctx.node(node.as_str()).map(|n| n.kind) else {
            panic!("not a browser node")
        };
        assert_eq!(model_tabs[1].url, "http://127.0.0.1:9/next");
        assert_eq!(*page.menu_answers.lock(), vec![None], "the page itself does nothing");

        page.open_context_menu(on_link("http://127.0.0.1:9/copied"));
        ctx.rt.answer_page_menu(&node, Some(MenuCommand::CopyLinkAddress)).expect("copy");
        assert_eq!(ctx.rt.clipboard.take().as_deref(), Some("http://127.0.0.1:9/copied"));

        page.open_context_menu(on_link("javascript:alert(1)"));
        let err = ctx.rt.answer_page_menu(&node, Some(MenuCommand::OpenLinkInNewTab)).expect_err("refused");
        assert!(matches!(&err, MenuError::Tab { url, .. } if url == "javascript:alert(1)"), "{err:?}");
        assert!(err.to_string().contains("only http, https"), "says why: {err}");
        assert_eq!(ctx.rt.page_tabs(&node).len(), 2, "nothing opened, nothing lost");
        let sticky = ctx.add(NodeKind::Sticky { text: String::new() }, "Note", (0.0, 0.0, 100.0, 100.0));
        assert_eq!(ctx.rt.answer_page_menu(&sticky, None), Err(MenuError::NoPage(sticky)));
    }

    #[test]
    fn headless_nobody_can_pick_so_every_menu_is_answered_with_none() {
        let mut ctx = TestContext::new();
        let node = browser_node(&mut ctx);
        let page = ctx.page_of(node.as_str()).expect("a page");
        page.open_context_menu(on_link("http://127.0.0.1:9/"));
        ctx.rt.tick();
        assert_eq!(ctx.rt.page_menu(&node), None);
        assert_eq!(*page.menu_answers.lock(), vec![None]);
    }
}
