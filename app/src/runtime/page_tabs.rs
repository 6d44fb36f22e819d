//! A browser node's tabs as a person and the page use them: open one (the
//! new-tab button, Ctrl+T, a link the page opens in a new tab, an allowed
//! popup), switch, close. Every tab has its own live page (history, forms and
//! scroll survive a switch); the node shows the active one.

use super::Runtime;
use crate::model::{BrowserTab, Command, NodeId, NodeKind, TabAddress};

/// Why a tab operation could not be done.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TabError {
    /// No browser node has this id in the active project.
    #[error("{0} is not a browser node")]
    NotABrowser(NodeId),
    /// The node has no tab at this position.
    #[error("{node} has no tab {index}")]
    NoSuchTab {
        /// The node.
        node: NodeId,
        /// The position asked for.
        index: usize,
    },
    /// The model refused the change (a refused URL, the last tab).
    #[error("{0}")]
    Refused(String),
}

/// One tab of a node, as its chip shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabView {
    /// Where the tab is.
    pub tab: TabAddress,
    /// Its page's title (or URL while it has none).
    pub title: String,
    /// The node shows it.
    pub active: bool,
}

impl Runtime {
    /// A browser node's tabs in order; empty for any other node.
    pub fn page_tabs(&self, node: &NodeId) -> Vec<TabView> {
        let Some(NodeKind::Browser { tabs, active_tab, .. }) =
            self.project().and_then(|p| p.node(node)).map(|n| &n.kind)
        else {
            return vec![];
        };
        tabs.iter()
            .map(|t| TabView {
                tab: TabAddress::new(node.clone(), t.id.clone()),
                title: if t.title.is_empty() && t.url != cef_bridge::url_policy::ABOUT_BLANK {
                    t.url.clone()
                } else {
                    t.title.clone()
                },
                active: &t.id == active_tab,
            })
            .collect()
    }

    /// Opens `url` (normalised by the URL policy) in a new tab of `node`;
    /// `activate` shows it at once (a background tab otherwise).
    pub fn new_tab(&mut self, node: &NodeId, url: &str, activate: bool) -> Result<TabAddress, TabError> {
        if self.page_tabs(node).is_empty() {
            return Err(TabError::NotABrowser(node.clone()));
        }
        let url = cef_bridge::url_policy::normalize_address(url).map_err(|e| TabError::Refused(e.to_string()))?;
        let tab = BrowserTab::new(&url).map_err(|e| TabError::Refused(e.to_string()))?;
        let address = TabAddress::new(node.clone(), tab.id.clone());
        self.apply(Command::AddTab { node: node.clone(), tab, activate })
            .map_err(|e| TabError::Refused(e.to_string()))?;
        Ok(address)
    }

    /// Shows the tab at `index` of `node`.
    pub fn switch_tab(&mut self, node: &NodeId, index: usize) -> Result<(), TabError> {
        let tab = self.tab_at(node, index)?;
        self.activate_tab(tab.tab)
    }

    /// Shows the next (or with `back` the previous) tab of `node`, wrapping around.
    pub fn step_tab(&mut self, node: &NodeId, back: bool) -> Result<(), TabError> {
        let tabs = self.page_tabs(node);
        let n = tabs.len();
        let Some(at) = tabs.iter().position(|t| t.active) else { return Err(TabError::NotABrowser(node.clone())) };
        if n < 2 {
            return Ok(());
        }
        self.switch_tab(node, if back { (at + n - 1) % n } else { (at + 1) % n })
    }

    /// Closes the tab at `index` of `node` (never the last one: a node keeps a page).
    pub fn close_tab_at(&mut self, node: &NodeId, index: usize) -> Result<(), TabError> {
        let tab = self.tab_at(node, index)?;
        self.close_tab(tab.tab)
    }

    /// Closes a tab; its neighbour is shown if it was the one on show.
    pub fn close_tab(&mut self, tab: TabAddress) -> Result<(), TabError> {
        self.apply(Command::CloseTab { tab }).map(|_| ()).map_err(|e| TabError::Refused(e.to_string()))?;
        self.title_from_active_tab();
        Ok(())
    }

    /// Shows a tab, and its page's title becomes the node's.
    pub fn activate_tab(&mut self, tab: TabAddress) -> Result<(), TabError> {
        self.apply(Command::ActivateTab { tab }).map(|_| ()).map_err(|e| TabError::Refused(e.to_string()))?;
        self.title_from_active_tab();
        self.request_redraw();
        Ok(())
    }

    fn tab_at(&self, node: &NodeId, index: usize) -> Result<TabView, TabError> {
        let tabs = self.page_tabs(node);
        if tabs.is_empty() {
            return Err(TabError::NotABrowser(node.clone()));
        }
        tabs.into_iter().nth(index).ok_or(TabError::NoSuchTab { node: node.clone(), index })
    }

    /// Every browser node's title follows its shown tab's page title.
    fn title_from_active_tab(&mut self) {
        let Some(p) = self.project() else { return };
        let wanted: Vec<(NodeId, String)> = p
            .nodes()
            .filter_map(|n| match &n.kind {
                NodeKind::Browser { tabs, active_tab, .. } => tabs
                    .iter()
                    .find(|t| &t.id == active_tab)
                    .filter(|t| !t.title.is_empty() && t.title != n.title)
                    .map(|t| (n.id.clone(), t.title.clone())),
                _ => None,
            })
            .collect();
        for (id, title) in wanted {
            if let Err(e) = self.apply(Command::SetTitle { id, title }) {
                tracing::debug!(error = %e, "node title not set from its tab");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::test_context::TestContext;

    fn browser_node(ctx: &mut TestContext, url: &str) -> NodeId {
        ctx.rt.open_browser(url, None).expect("browser node")
    }

    #[test]
    fn every_tab_has_its_own_live_page_and_the_node_shows_the_active_one() {
        let mut ctx = TestContext::new();
        let node = browser_node(&mut ctx, "http://127.0.0.1:9/a");
        let first = ctx.rt.browsers.for_node(&node).map(|(_, b)| b.id()).expect("a page");
        let second = ctx.rt.new_tab(&node, "127.0.0.1:9/b", true).expect("a new tab");
        assert_eq!(ctx.rt.browsers.iter().filter(|(t, _)| t.node == node).count(), 2, "both tabs are live");
        let shown = ctx.rt.browsers.for_node(&node).map(|(t, b)| (t.clone(), b.id()));
        assert_eq!(shown.as_ref().map(|(t, _)| t), Some(&second), "the new tab is shown");
        assert_ne!(shown.map(|(_, b)| b), Some(first));
        let tabs = ctx.rt.page_tabs(&node);
        assert_eq!(tabs.iter().map(|t| t.active).collect::<Vec<_>>(), [false, true]);
        assert_eq!(tabs[1].title, "http://127.0.0.1:9/b", "an untitled tab shows its URL");

        // Switching keeps the first page: the same browser is shown again, none is created.
        ctx.rt.switch_tab(&node, 0).expect("switch");
        assert_eq!(ctx.rt.browsers.for_node(&node).map(|(_, b)| b.id()), Some(first));
        ctx.rt.step_tab(&node, false).expect("next");
        assert_eq!(ctx.rt.browsers.for_node(&node).map(|(t, _)| t.clone()), Some(second.clone()));
        ctx.rt.step_tab(&node, false).expect("next wraps");
        assert_eq!(ctx.rt.browsers.for_node(&node).map(|(_, b)| b.id()), Some(first));

        // A background tab opens without being shown.
        ctx.rt.new_tab(&node, "http://127.0.0.1:9/c", false).expect("background tab");
        assert_eq!(ctx.rt.browsers.for_node(&node).map(|(_, b)| b.id()), Some(first));
        assert_eq!(ctx.rt.page_tabs(&node).len(), 3);

        // Closing a tab closes its page; the last tab stays.
        ctx.rt.close_tab(second).expect("close");
        assert_eq!(ctx.rt.browsers.iter().filter(|(t, _)| t.node == node).count(), 2);
        ctx.rt.close_tab_at(&node, 1).expect("close the background tab");
        let err = ctx.rt.close_tab_at(&node, 0).expect_err("the last tab stays");
        assert!(matches!(err, TabError::Refused(_)), "{err:?}");
        assert_eq!(ctx.rt.close_tab_at(&node, 5), Err(TabError::NoSuchTab { node: node.clone(), index: 5 }));
    }

    #[test]
    fn a_refused_address_or_a_node_that_is_no_browser_loses_nothing() {
        let mut ctx = TestContext::new();
        let node = browser_node(&mut ctx, "http://127.0.0.1:9/a");
        let err = ctx.rt.new_tab(&node, "data:text/html,hi", true).expect_err("refused scheme");
        assert!(matches!(err, TabError::Refused(_)), "{err:?}");
        assert_eq!(ctx.rt.page_tabs(&node).len(), 1);
        let sticky = ctx.rt.add_node(NodeKind::Sticky { text: "x".into() }, "x", (100.0, 100.0), None).expect("sticky");
        assert_eq!(ctx.rt.new_tab(&sticky, "http://127.0.0.1:9/", true), Err(TabError::NotABrowser(sticky.clone())));
        assert!(ctx.rt.page_tabs(&sticky).is_empty());
    }

    #[test]
    fn a_tab_a_page_opens_names_that_page_as_its_opener_while_both_live() {
        use crate::runtime::browsers::PageOpener;
        let mut ctx = TestContext::new();
        let node = browser_node(&mut ctx, "http://127.0.0.1:9/a");
        let (clicker, id) = ctx.rt.browsers.for_node(&node).map(|(t, b)| (t.clone(), b.id())).expect("a page");
        let url = "http://127.0.0.1:9/b".to_string();
        ctx.rt.on_browser_event(cef_bridge::BrowserEvent::NewTabRequested { opener: id, url, background: false });
        assert_eq!(ctx.rt.page_tabs(&node).len(), 2, "a tab of the clicker's node");
        let opened = ctx.rt.browsers.for_node(&node).map(|(t, _)| t.clone()).expect("shown");
        assert_ne!(opened, clicker);
        let live = ctx.rt.browsers.live();
        assert_eq!(live.opener_of(&opened), Some(PageOpener { tab: clicker.clone(), can_access: false }));
        assert_eq!(live.opener_of(&clicker), None);
        ctx.rt.close_tab(clicker).expect("close the opener");
        assert_eq!(live.opener_of(&opened), None, "a closed opener is named no more");
    }
}
