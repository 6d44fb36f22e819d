//! What a person does to a browser node's page from its title bar: type an
//! address (through the one URL policy), go back or forward in its history,
//! reload or stop, find text in it.

use super::engine::Browser;
use super::page_nav::{FindMatches, NavError, PageAction, PageNav};
use super::Runtime;
use crate::model::NodeId;
use cef_bridge::url_policy;

impl Runtime {
    /// What the engine last said about a browser node's page.
    pub fn page_nav(&self, node: &NodeId) -> Option<PageNav> {
        let (_, b) = self.browsers.for_node(node)?;
        Some(self.browsers.nav(b.id()))
    }

    /// The URL a browser node's page shows (its model tab's until the page reports one).
    pub fn page_url(&self, node: &NodeId) -> Option<String> {
        let n = self.project()?.node(node)?;
        let crate::model::NodeKind::Browser { tabs, active_tab, .. } = &n.kind else { return None };
        let live = self.browsers.for_node(node).map(|(_, b)| b.url()).filter(|u| !u.is_empty());
        live.or_else(|| tabs.iter().find(|t| &t.id == active_tab).map(|t| t.url.clone()))
    }

    fn page_of(&self, node: &NodeId) -> Result<Browser, NavError> {
        self.browsers.for_node(node).map(|(_, b)| b.clone()).ok_or_else(|| NavError::NoPage(node.clone()))
    }

    /// Navigates a browser node to what the person typed, normalised by the URL
    /// policy (a refused address loses nothing: the page stays); returns the URL.
    pub fn navigate_node(&mut self, node: &NodeId, address: &str) -> Result<String, NavError> {
        let page = self.page_of(node)?;
        let url = url_policy::normalize_address(address)?;
        page.navigate(&url)?;
        tracing::info!(%node, "navigated from the address field");
        Ok(url)
    }

    /// Runs a title-bar button on a browser node's page; back and forward only
    /// when its history has an entry that way.
    pub fn page_action(&mut self, node: &NodeId, action: PageAction) -> Result<(), NavError> {
        let page = self.page_of(node)?;
        let nav = self.browsers.nav(page.id());
        match action {
            PageAction::Back if !nav.can_go_back => Err(NavError::NoHistory("back")),
            PageAction::Forward if !nav.can_go_forward => Err(NavError::NoHistory("forward")),
            PageAction::Back => Ok(page.go_back()?),
            PageAction::Forward => Ok(page.go_forward()?),
            PageAction::Reload => {
                // A crashed renderer comes back by reloading: the badge goes with the next load.
                Ok(page.reload()?)
            }
            PageAction::Stop => Ok(page.stop()?),
        }
    }

    /// Finds `text` in a browser node's page: the next match (`forward`) or the
    /// previous one; an empty text clears the search's highlights.
    pub fn find_in_page(&mut self, node: &NodeId, text: &str, forward: bool) -> Result<(), NavError> {
        let page = self.page_of(node)?;
        let nav = self.browsers.nav_mut(page.id());
        if text.is_empty() {
            nav.matches = Some(FindMatches::default());
            self.browsers.set_last_find(page.id(), None);
            page.stop_finding()?;
            self.request_redraw();
            return Ok(());
        }
        // The same text again steps through the matches; a new one starts over.
        let again = self.browsers.last_find(page.id()).is_some_and(|t| t == text);
        let nav = self.browsers.nav_mut(page.id());
        if nav.matches.is_none() || !again {
            nav.matches = Some(FindMatches::default());
        }
        self.browsers.set_last_find(page.id(), Some(text.to_string()));
        page.find(text, forward, again)?;
        self.request_redraw();
        Ok(())
    }

    /// Closes a browser node's find-in-page search and clears its highlights.
    pub fn end_find(&mut self, node: &NodeId) {
        let Ok(page) = self.page_of(node) else { return };
        self.browsers.nav_mut(page.id()).matches = None;
        self.browsers.set_last_find(page.id(), None);
        if let Err(e) = page.stop_finding() {
            tracing::debug!(%node, error = %e, "find not stopped");
        }
        self.request_redraw();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NodeKind;
    use crate::runtime::test_context::TestContext;
    use cef_bridge::url_policy::UrlPolicyError;
    use cef_bridge::{BrowserEvent, BrowserId};

    fn browser_node(ctx: &mut TestContext) -> NodeId {
        let kind = NodeKind::browser("https://example.com/").expect("browser kind");
        ctx.add(kind, "Example", (0.0, 900.0, 802.0, 640.0))
    }

    fn state(id: BrowserId, loading: bool, back: bool, forward: bool) -> BrowserEvent {
        BrowserEvent::LoadingStateChanged { id, loading, can_go_back: back, can_go_forward: forward }
    }

    #[test]
    fn the_address_goes_through_the_url_policy_and_a_refusal_keeps_the_page() {
        let mut ctx = TestContext::new();
        let node = browser_node(&mut ctx);
        let page = ctx.page_of(node.as_str()).expect("a page");
        assert_eq!(ctx.rt.navigate_node(&node, "127.0.0.1:8080/a").as_deref(), Ok("http://127.0.0.1:8080/a"));
        assert_eq!(page.current_url(), "http://127.0.0.1:8080/a");
        for refused in ["data:text/html,hi", "file:///etc/passwd", "javascript:alert(1)"] {
            let err = ctx.rt.navigate_node(&node, refused).expect_err(refused);
            let scheme = refused.split(':').next().unwrap_or_default();
            assert!(matches!(&err, NavError::Refused(UrlPolicyError::RefusedScheme(s)) if s == scheme), "{err:?}");
            assert!(err.to_string().contains("only http, https"), "says why: {err}");
        }
        assert_eq!(ctx.rt.navigate_node(&node, "  ").unwrap_err(), NavError::Refused(UrlPolicyError::Empty));
        assert_eq!(*page.navigations.lock(), vec!["http://127.0.0.1:8080/a".to_string()], "nothing refused reached it");
        let sticky = ctx.add(NodeKind::Sticky { text: String::new() }, "Note", (0.0, 0.0, 100.0, 100.0));
        assert_eq!(ctx.rt.navigate_node(&sticky, "example.com"), Err(NavError::NoPage(sticky.clone())));
    }

    #[test]
    fn back_and_forward_follow_the_engines_history_and_reload_and_stop_reach_the_page() {
        let mut ctx = TestContext::new();
        let node = browser_node(&mut ctx);
        let page = ctx.page_of(node.as_str()).expect("a page");
        assert_eq!(ctx.rt.page_nav(&node), Some(PageNav::default()));
        assert_eq!(ctx.rt.page_action(&node, PageAction::Back), Err(NavError::NoHistory("back")));
        assert_eq!(ctx.rt.page_action(&node, PageAction::Forward), Err(NavError::NoHistory("forward")));
        let id = page.browser_id();
        page.report(state(id, true, false, false));
        page.report(BrowserEvent::LoadProgress { id, progress: 0.4 });
        ctx.rt.tick();
        let nav = ctx.rt.page_nav(&node).expect("nav");
        assert!(nav.loading && (nav.progress - 0.4).abs() < 1e-9, "{nav:?}");
        page.report(state(id, false, true, false));
        page.report(BrowserEvent::LoadProgress { id, progress: 0.7 });
        ctx.rt.tick();
        let nav = ctx.rt.page_nav(&node).expect("nav");
        assert_eq!((nav.loading, nav.can_go_back, nav.can_go_forward, nav.progress), (false, true, false, 1.0));
        ctx.rt.page_action(&node, PageAction::Back).expect("back");
        page.report(state(id, false, false, true));
        ctx.rt.tick();
        assert_eq!(ctx.rt.page_action(&node, PageAction::Back), Err(NavError::NoHistory("back")));
        ctx.rt.page_action(&node, PageAction::Forward).expect("forward");
        ctx.rt.page_action(&node, PageAction::Reload).expect("reload");
        ctx.rt.page_action(&node, PageAction::Stop).expect("stop");
        assert_eq!(*page.history.lock(), vec!["back", "forward", "reload", "stop"]);
    }

    #[test]
    fn the_scene_draws_the_bar_from_what_the_page_reported() {
        let mut ctx = TestContext::new();
        let node = browser_node(&mut ctx);
        let page = ctx.page_of(node.as_str()).expect("a page");
        let bar_of = |ctx: &TestContext| {
            let key = crate::runtime::scene::stable_key(node.as_str());
            ctx.rt.scene().nodes.into_iter().find(|v| v.id == key).and_then(|v| v.bar)
        };
        let bar = bar_of(&ctx).expect("a browser node has a bar");
        assert_eq!((bar.address.as_str(), bar.can_go_back, bar.loading), ("https://example.com/", false, false));
        page.report(state(page.browser_id(), true, true, false));
        page.report(BrowserEvent::LoadProgress { id: page.browser_id(), progress: 0.25 });
        ctx.rt.tick();
        let bar = bar_of(&ctx).expect("bar");
        assert_eq!((bar.can_go_back, bar.can_go_forward, bar.loading, bar.progress), (true, false, true, 250));
        let sticky = ctx.add(NodeKind::Sticky { text: String::new() }, "Note", (0.0, 0.0, 100.0, 100.0));
        let key = crate::runtime::scene::stable_key(sticky.as_str());
        assert!(ctx.rt.scene().nodes.iter().any(|v| v.id == key && v.bar.is_none()), "only browsers have one");
    }

    #[test]
    fn find_steps_through_matches_and_reports_the_count_until_closed() {
        let mut ctx = TestContext::new();
        let node = browser_node(&mut ctx);
        let page = ctx.page_of(node.as_str()).expect("a page");
        let id = page.browser_id();
        // A result with no search open is stale: ignored.
        page.report(BrowserEvent::FindResult { id, count: 9, active: 1, final_update: true });
        ctx.rt.tick();
        assert_eq!(ctx.rt.page_nav(&node).and_then(|n| n.matches), None);
        ctx.rt.find_in_page(&node, "hello", true).expect("find");
        assert_eq!(ctx.rt.page_nav(&node).and_then(|n| n.matches), Some(FindMatches::default()));
        page.report(BrowserEvent::FindResult { id, count: 3, active: 1, final_update: true });
        ctx.rt.tick();
        assert_eq!(ctx.rt.page_nav(&node).and_then(|n| n.matches), Some(FindMatches { count: 3, active: 1 }));
        ctx.rt.find_in_page(&node, "hello", true).expect("next");
        ctx.rt.find_in_page(&node, "hello", false).expect("previous");
        ctx.rt.find_in_page(&node, "world", true).expect("new text");
        ctx.rt.end_find(&node);
        assert_eq!(ctx.rt.page_nav(&node).and_then(|n| n.matches), None);
        let s = |t: &str, f, n| Some((t.to_string(), f, n));
        assert_eq!(
            *page.finds.lock(),
            vec![
                s("hello", true, false),
                s("hello", true, true),
                s("hello", false, true),
                s("world", true, false),
                None
            ]
        );
    }
}
