//! Isolated browser contexts: what a CDP client's
//! `Target.createBrowserContext` makes (Puppeteer's `createBrowserContext`,
//! Playwright's `browser.newContext()`, `playwright-mcp --isolated`), so
//! parallel agents get separate cookies, storage and cache.
//!
//! Each context is an in-memory request context of the engine. Its pages are
//! browser nodes marked with it (`NodeKind::Browser::context`); their new tabs
//! and popups stay in it. Such nodes are never saved, so a restart, which
//! ends every context, leaves none behind. Disposing a context closes its
//! nodes, then drops the engine's context; a node brought back afterwards
//! (an undone close) opens no page rather than one in the person's profile.

use super::Runtime;
use crate::model::{BrowserContextId, Command, NodeId, NodeKind, ProjectId};
use cef_bridge::{SitePermission, SiteSetting};

/// Why a browser context operation failed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ContextError {
    /// No live context has this id.
    #[error("Failed to find browser context with id {0}")]
    NotFound(BrowserContextId),
    /// The engine could not make one.
    #[error("the browser engine could not create a browser context: {0}")]
    Engine(String),
    /// Its nodes could not be closed.
    #[error("the browser context's nodes could not be closed: {0}")]
    Close(String),
    /// The engine refused a permission change.
    #[error("the browser engine could not set the permissions: {0}")]
    Permissions(String),
}

impl Runtime {
    /// Creates an isolated browser context.
    pub fn create_browser_context(&mut self) -> Result<BrowserContextId, ContextError> {
        let engine = self.engine.create_context().map_err(|e| ContextError::Engine(e.to_string()))?;
        let id = BrowserContextId::generate();
        self.browsers.add_context(id.clone(), engine);
        self.browsers.publish();
        tracing::info!(context = %id, "isolated browser context created");
        Ok(id)
    }

    /// Closes every node of the context, in every open project (a client's
    /// pages may sit in a project tab the person has since left), then ends
    /// the context; returns the nodes closed.
    pub fn dispose_browser_context(&mut self, id: &BrowserContextId) -> Result<Vec<NodeId>, ContextError> {
        if !self.browsers.has_context(id) {
            return Err(ContextError::NotFound(id.clone()));
        }
        let per_project: Vec<(ProjectId, Vec<NodeId>)> = self
            .workspace
            .projects()
            .iter()
            .map(|p| {
                let nodes = p
                    .nodes()
                    .filter(|n| matches!(&n.kind, NodeKind::Browser { context: Some(c), .. } if c == id))
                    .map(|n| n.id.clone())
                    .collect::<Vec<_>>();
                (p.id().clone(), nodes)
            })
            .filter(|(_, nodes)| !nodes.is_empty())
            .collect();
        let mut nodes = vec![];
        for (project, ids) in per_project {
            self.apply_in(&project, Command::RemoveNodes { ids: ids.clone() })
                .map_err(|e| ContextError::Close(e.to_string()))?;
            nodes.extend(ids);
        }
        if let Some(engine) = self.browsers.remove_context(id) {
            // The closing browsers hold the engine's context until they are gone.
            self.engine.dispose_context(engine);
        }
        self.browsers.publish();
        tracing::info!(context = %id, closed = nodes.len(), "isolated browser context disposed");
        Ok(nodes)
    }

    /// Sets `permissions` of `site` (an origin; `None`: every site) to
    /// `setting` for the pages of the context (a CDP client's grant). The
    /// person's profile is never reached from here.
    pub fn set_context_permissions(
        &mut self,
        id: &BrowserContextId,
        site: Option<&str>,
        permissions: &[SitePermission],
        setting: SiteSetting,
    ) -> Result<(), ContextError> {
        let engine = self.browsers.engine_context(id).ok_or_else(|| ContextError::NotFound(id.clone()))?;
        self.engine
            .set_site_permissions(engine, site, permissions, setting)
            .map_err(|e| ContextError::Permissions(e.to_string()))?;
        tracing::info!(context = %id, ?site, ?permissions, ?setting, "browser context permissions set");
        Ok(())
    }

    /// Puts every permission set in the context back to the default.
    pub fn reset_context_permissions(&mut self, id: &BrowserContextId) -> Result<(), ContextError> {
        let engine = self.browsers.engine_context(id).ok_or_else(|| ContextError::NotFound(id.clone()))?;
        self.engine.reset_site_permissions(engine).map_err(|e| ContextError::Permissions(e.to_string()))
    }

    /// Opens a browser node at `url` (normalised by the URL policy), in the
    /// isolated `context` when given.
    pub fn open_browser_in(
        &mut self,
        url: &str,
        size: Option<(f64, f64)>,
        context: Option<&BrowserContextId>,
    ) -> Result<NodeId, String> {
        if let Some(c) = context.filter(|c| !self.browsers.has_context(c)) {
            return Err(ContextError::NotFound(c.clone()).to_string());
        }
        let url = cef_bridge::url_policy::normalize_address(url).map_err(|e| e.to_string())?;
        let mut kind = NodeKind::browser(&url).map_err(|e| e.to_string())?;
        if let NodeKind::Browser { context: slot, .. } = &mut kind {
            *slot = context.cloned();
        }
        self.add_node(kind, &url, size.unwrap_or((960.0, 640.0)), None).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::engine::LiveBrowser;
    use crate::runtime::test_context::TestContext;

    #[test]
    fn a_context_page_lives_in_its_engine_context_and_ends_with_it() {
        let mut ctx = TestContext::new();
        let one = ctx.rt.create_browser_context().unwrap();
        let two = ctx.rt.create_browser_context().unwrap();
        assert_ne!(one, two);
        assert_eq!(ctx.rt.browsers.live().contexts().len(), 2, "published for the facade");

        let plain = ctx.rt.open_browser_in("https://example.com/", None, None).unwrap();
        let isolated = ctx.rt.open_browser_in("https://example.com/a", None, Some(&one)).unwrap();
        let engine_one = ctx.rt.browsers.live().engine_context(&one).unwrap();
        assert_eq!(ctx.page_of(plain.as_str()).unwrap().context, None);
        assert_eq!(ctx.page_of(isolated.as_str()).unwrap().context, Some(engine_one));
        assert_eq!(ctx.rt.browsers.live().context_of(&isolated), Some(one.clone()));
        assert_eq!(ctx.rt.browsers.live().context_of(&plain), None);

        // A new tab of the node stays in its context.
        let tab = ctx.rt.new_tab(&isolated, "https://example.com/b", true).unwrap();
        let b = ctx.rt.browsers.get(&tab).unwrap().clone();
        assert_eq!(b.context(), Some(engine_one));

        let page = ctx.page_of(isolated.as_str()).unwrap();
        assert_eq!(ctx.rt.dispose_browser_context(&one).unwrap(), vec![isolated.clone()]);
        assert!(page.is_closed(), "its pages close with it");
        assert!(ctx.node(isolated.as_str()).is_none());
        assert!(ctx.node(plain.as_str()).is_some(), "other pages stay");
        assert_eq!(ctx.rt.browsers.live().contexts(), vec![two.clone()]);
        assert_eq!(ctx.rt.dispose_browser_context(&one), Err(ContextError::NotFound(one.clone())));
        let err = ctx.rt.open_browser_in("https://example.com/", None, Some(&one)).unwrap_err();
        assert!(err.contains("Failed to find browser context"), "{err}");
    }

    #[test]
    fn disposing_a_context_closes_its_nodes_in_a_project_tab_left_behind() {
        let mut ctx = TestContext::new();
        let c = ctx.rt.create_browser_context().unwrap();
        let first = ctx.rt.project_id().unwrap();
        let left_behind = ctx.rt.open_browser_in("https://example.com/", None, Some(&c)).unwrap();
        let other = tempfile::tempdir().unwrap();
        ctx.rt.open_project(other.path());
        assert_ne!(ctx.rt.project_id().unwrap(), first, "another tab is active");
        let here = ctx.rt.open_browser_in("https://example.com/b", None, Some(&c)).unwrap();

        let mut closed = ctx.rt.dispose_browser_context(&c).unwrap();
        closed.sort();
        let mut want = vec![left_behind.clone(), here.clone()];
        want.sort();
        assert_eq!(closed, want);
        let first = ctx.rt.workspace.projects().iter().find(|p| p.id() == &first).unwrap();
        assert!(first.node(&left_behind).is_none(), "closed in the tab left behind too");
        assert!(ctx.node(here.as_str()).is_none());
        assert!(ctx.rt.browsers.live().contexts().is_empty());
    }

    #[test]
    fn a_node_brought_back_after_its_context_ended_opens_no_page() {
        let mut ctx = TestContext::new();
        let c = ctx.rt.create_browser_context().unwrap();
        let node = ctx.rt.open_browser_in("https://example.com/", None, Some(&c)).unwrap();
        ctx.rt.dispose_browser_context(&c).unwrap();
        assert!(ctx.rt.undo().unwrap());
        assert!(ctx.node(node.as_str()).is_some(), "the close was undone");
        assert!(ctx.rt.browsers.for_node(&node).is_none(), "no page in the person's profile instead");
    }

    #[test]
    fn context_pages_are_never_saved() {
        let mut ctx = TestContext::new();
        let c = ctx.rt.create_browser_context().unwrap();
        let plain = ctx.rt.open_browser_in("https://example.com/", None, None).unwrap();
        let isolated = ctx.rt.open_browser_in("https://example.com/secret", None, Some(&c)).unwrap();
        let project = ctx.rt.project().unwrap().clone();
        let bytes = crate::model::persist::encode_layout(&project, None).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.contains(plain.as_str()));
        assert!(!text.contains(isolated.as_str()) && !text.contains("secret"), "{text}");
    }

    #[test]
    fn context_permissions_reach_its_engine_context_and_no_other() {
        use crate::runtime::test_context::SitePermissionCall;
        let mut ctx = TestContext::new();
        let c = ctx.rt.create_browser_context().unwrap();
        let engine = ctx.rt.browsers.live().engine_context(&c).unwrap();
        ctx.rt
            .set_context_permissions(&c, Some("https://a.test"), &[SitePermission::Geolocation], SiteSetting::Granted)
            .unwrap();
        ctx.rt.reset_context_permissions(&c).unwrap();
        let calls = ctx.pages.site_permissions.lock().clone();
        assert_eq!(
            calls,
            vec![
                SitePermissionCall {
                    context: engine,
                    site: Some("https://a.test".into()),
                    permissions: vec![SitePermission::Geolocation],
                    setting: Some(SiteSetting::Granted),
                },
                SitePermissionCall { context: engine, site: None, permissions: vec![], setting: None },
            ]
        );
        ctx.rt.dispose_browser_context(&c).unwrap();
        let err = ctx.rt.set_context_permissions(&c, None, &[SitePermission::Geolocation], SiteSetting::Granted);
        assert_eq!(err, Err(ContextError::NotFound(c.clone())));
        assert_eq!(ctx.rt.reset_context_permissions(&c), Err(ContextError::NotFound(c)));
        assert_eq!(ctx.pages.site_permissions.lock().len(), 2, "an ended context is not reached");
    }

    #[test]
    fn a_context_node_wears_a_badge_that_says_it_is_isolated() {
        let mut ctx = TestContext::new();
        let c = ctx.rt.create_browser_context().unwrap();
        let plain = ctx.rt.open_browser_in("https://example.com/", None, None).unwrap();
        let isolated = ctx.rt.open_browser_in("https://example.com/a", None, Some(&c)).unwrap();
        let badge_of = |ctx: &TestContext, id: &NodeId| {
            let key = crate::runtime::scene::stable_key(id.as_str());
            ctx.rt.scene().nodes.into_iter().find(|v| v.id == key).and_then(|v| v.badge).map(|b| b.text)
        };
        assert_eq!(badge_of(&ctx, &isolated).as_deref(), Some("isolated"));
        assert_eq!(badge_of(&ctx, &plain), None);
    }
}
