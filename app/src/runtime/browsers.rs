//! Browser nodes ↔ live CEF browsers.
//!
//! The model says which browser tabs exist; this module makes the engine
//! agree: one off-screen browser per tab of every browser node in the active
//! project (the node shows its active tab; the others keep their pages),
//! created, resized and closed as the model changes ([`BrowserNodes::sync`]),
//! with what each page said of its loads, crashes and openers. The page events
//! that change the model are the runtime's to apply (`browser_events.rs`).

use super::engine::{Browser, BrowserEngine};
use super::page_nav::PageNav;
use crate::model::{BrowserContextId, NodeId, NodeKind, Project, Rect, TabAddress};
use cef_bridge::{BrowserEvent, BrowserId, BrowserOptions, RequestContextId};
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// Live browsers of the active project's browser nodes.
#[derive(Default)]
pub struct BrowserNodes {
    by_tab: HashMap<TabAddress, Browser>,
    by_browser: HashMap<BrowserId, TabAddress>,
    /// Each browser node's shown tab, as the model said at the last sync.
    active: HashMap<NodeId, crate::model::TabId>,
    /// Nodes whose renderer died and was not reloaded yet.
    crashed: HashMap<NodeId, String>,
    /// Browsers whose last load finished, and whether they painted since.
    loaded: HashMap<BrowserId, (std::time::Instant, bool)>,
    /// What each page's engine said about its loading, history and find results.
    nav: HashMap<BrowserId, PageNav>,
    /// The text each page's open find-in-page search looks for.
    finding: HashMap<BrowserId, String>,
    /// Live isolated browser contexts and the engine's context behind each.
    contexts: HashMap<BrowserContextId, RequestContextId>,
    /// The isolated context of each browser node in one, as the model said at the last sync.
    node_contexts: HashMap<NodeId, BrowserContextId>,
    /// Nodes of a context that ended (told once).
    ended: std::collections::HashSet<NodeId>,
    /// The page that opened each tab a page asked for (a `target=_blank` link,
    /// `window.open`), for the CDP facade's `openerId`.
    openers: HashMap<TabAddress, PageOpener>,
    /// What other threads see of `by_tab` (republished after every change).
    live: LiveBrowsers,
}

/// The page that opened a tab, as Chromium's target info reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageOpener {
    /// The opener's tab.
    pub tab: TabAddress,
    /// Whether the opened page holds `window.opener` (a popup: yes; a link opened as a tab: no, as with `noopener`).
    pub can_access: bool,
}

/// A thread-safe snapshot of the live browsers, for control planes on other
/// threads (the CDP facade) that must not wait on the main thread to list them.
#[derive(Clone, Default)]
pub struct LiveBrowsers(Arc<LiveInner>);

/// The isolated browser contexts as other threads see them.
#[derive(Clone, Default)]
struct LiveContexts {
    /// Each live context and the engine's context behind it.
    engine: HashMap<BrowserContextId, RequestContextId>,
    /// The context of each browser node in one.
    of_node: HashMap<NodeId, BrowserContextId>,
    /// The opener of each tab a page opened.
    openers: HashMap<TabAddress, PageOpener>,
}

/// A change watcher: called on the main thread after every publish.
type Watcher = Box<dyn Fn() + Send + Sync>;

#[derive(Default)]
struct LiveInner {
    tabs: Mutex<Vec<(TabAddress, Browser)>>,
    contexts: Mutex<LiveContexts>,
    changed: Condvar,
    watchers: Mutex<Vec<Watcher>>,
}

impl LiveBrowsers {
    /// Every live tab and its browser, oldest browser first.
    pub fn snapshot(&self) -> Vec<(TabAddress, Browser)> {
        self.0.tabs.lock().clone()
    }

    /// Calls `watcher` after every change (keep it quick: it runs on the main thread).
    pub fn watch(&self, watcher: impl Fn() + Send + Sync + 'static) {
        self.0.watchers.lock().push(Box::new(watcher));
    }

    /// Waits until `found` returns `Some` for the snapshot (re-checked after
    /// every change the main thread publishes) or `deadline` passes.
    pub fn wait_for<R>(
        &self,
        deadline: Instant,
        mut found: impl FnMut(&[(TabAddress, Browser)]) -> Option<R>,
    ) -> Option<R> {
        let mut g = self.0.tabs.lock();
        loop {
            if let Some(r) = found(&g) {
                return Some(r);
            }
            if self.0.changed.wait_until(&mut g, deadline).timed_out() {
                return found(&g);
            }
        }
    }

    /// The live isolated browser contexts, in a stable order.
    pub fn contexts(&self) -> Vec<BrowserContextId> {
        let mut all: Vec<BrowserContextId> = self.0.contexts.lock().engine.keys().cloned().collect();
        all.sort();
        all
    }

    /// The isolated context a browser node's pages live in (`None`: the person's profile).
    pub fn context_of(&self, node: &NodeId) -> Option<BrowserContextId> {
        self.0.contexts.lock().of_node.get(node).cloned()
    }

    /// The page that opened `tab`, while both are live.
    pub fn opener_of(&self, tab: &TabAddress) -> Option<PageOpener> {
        self.0.contexts.lock().openers.get(tab).cloned()
    }

    /// The engine's context behind an isolated context, while it is live.
    pub fn engine_context(&self, id: &BrowserContextId) -> Option<RequestContextId> {
        self.0.contexts.lock().engine.get(id).copied()
    }

    fn publish(&self, nodes: &BrowserNodes) {
        let mut all: Vec<(TabAddress, Browser)> = nodes.by_tab.iter().map(|(t, b)| (t.clone(), b.clone())).collect();
        all.sort_by_key(|(_, b)| b.id());
        // Contexts first: a thread that sees a new tab finds its context.
        let openers = nodes
            .openers
            .iter()
            .filter(|(tab, o)| nodes.both_live(tab, o))
            .map(|(tab, o)| (tab.clone(), o.clone()))
            .collect();
        *self.0.contexts.lock() =
            LiveContexts { engine: nodes.contexts.clone(), of_node: nodes.node_contexts.clone(), openers };
        *self.0.tabs.lock() = all;
        self.0.changed.notify_all();
        for watcher in self.0.watchers.lock().iter() {
            watcher();
        }
    }
}

impl BrowserNodes {
    /// Whether a tab and the page that opened it are both still live.
    fn both_live(&self, tab: &TabAddress, opener: &PageOpener) -> bool {
        self.by_tab.contains_key(tab) && self.by_tab.contains_key(&opener.tab)
    }

    /// Tells other threads what is live now.
    pub(crate) fn publish(&self) {
        self.live.publish(self);
    }

    /// A view of the live browsers that other threads can read and wait on.
    pub fn live(&self) -> LiveBrowsers {
        self.live.clone()
    }

    /// The browser showing a tab.
    pub fn get(&self, tab: &TabAddress) -> Option<&Browser> {
        self.by_tab.get(tab)
    }

    /// The browser showing a node's active tab.
    pub fn for_node(&self, node: &NodeId) -> Option<(&TabAddress, &Browser)> {
        let tab = self.active.get(node)?;
        self.by_tab.get_key_value(&TabAddress::new(node.clone(), tab.clone()))
    }

    /// Whether `tab` is the one its node shows.
    pub fn is_shown(&self, tab: &TabAddress) -> bool {
        self.active.get(&tab.node) == Some(&tab.tab)
    }

    /// The tab a browser shows.
    pub fn tab_of(&self, id: BrowserId) -> Option<&TabAddress> {
        self.by_browser.get(&id)
    }

    /// Every live tab and its browser.
    pub fn iter(&self) -> impl Iterator<Item = (&TabAddress, &Browser)> {
        self.by_tab.iter()
    }

    /// True when every browser finished loading and, unless hidden (a
    /// background tab paints nothing), painted after that and had `quiet` to
    /// commit its first frames (a load ends before the page's first paint lands).
    pub fn settled(&self, quiet: std::time::Duration) -> bool {
        self.by_tab.values().all(|b| {
            !b.is_loading()
                && self
                    .loaded
                    .get(&b.id())
                    .is_some_and(|(at, painted)| b.is_hidden() || (*painted && at.elapsed() >= quiet))
        })
    }

    /// What a page's engine last said about its loading and history (nothing yet: all off).
    pub fn nav(&self, id: BrowserId) -> PageNav {
        self.nav.get(&id).copied().unwrap_or_default()
    }

    pub(crate) fn nav_mut(&mut self, id: BrowserId) -> &mut PageNav {
        self.nav.entry(id).or_default()
    }

    /// The text a page's open find-in-page search looks for.
    pub(crate) fn last_find(&self, id: BrowserId) -> Option<&str> {
        self.finding.get(&id).map(String::as_str)
    }

    pub(crate) fn set_last_find(&mut self, id: BrowserId, text: Option<String>) {
        match text {
            Some(t) => self.finding.insert(id, t),
            None => self.finding.remove(&id),
        };
    }

    /// Why a node's page is down, if it is.
    pub fn crash_of(&self, node: &NodeId) -> Option<&str> {
        self.crashed.get(node).map(String::as_str)
    }

    pub(crate) fn close_all(&mut self) {
        for b in self.by_tab.values() {
            let _ = b.close();
        }
    }
}

/// A browser view's size in CSS pixels and the scale it paints at.
pub type ViewGeometry = ((u32, u32), f32);

/// A node's page view: its size in CSS pixels (the renderer's body rect, below
/// the title bar and inside the border, in world units) and the device scale
/// factor that paints it at the given zoom, so a page keeps its layout at every
/// zoom and is painted at the pixels it takes on screen (within the engine's
/// scale range and largest view).
pub fn view_geometry(rect: &Rect, zoom: f64) -> ViewGeometry {
    let body = canvas_render::body_rect(super::gfx::render_rect(rect), &canvas_render::Theme::default());
    let edge = f64::from(cef_bridge::MAX_VIEW_EDGE);
    let w = f64::from(body.w).round().clamp(1.0, edge);
    let h = f64::from(body.h).round().clamp(1.0, edge);
    let (min, max) = cef_bridge::SCALE_RANGE;
    // w and h are at most the edge, so this is at least 1: above the smallest scale.
    let fits = (edge / w.max(h)) as f32;
    let scale = (zoom as f32).clamp(min, max).min(fits);
    ((w as u32, h as u32), scale)
}

/// The frame a browser node needs for its page to be `width` x `height` CSS
/// pixels, its top-left corner kept (the inverse of [`view_geometry`]'s size).
pub fn rect_for_view(rect: &Rect, width: u32, height: u32) -> Rect {
    let body = canvas_render::body_rect(super::gfx::render_rect(rect), &canvas_render::Theme::default());
    Rect {
        x: rect.x,
        y: rect.y,
        w: f64::from(width) + (rect.w - f64::from(body.w)),
        h: f64::from(height) + (rect.h - f64::from(body.h)),
    }
}

impl BrowserNodes {
    /// Creates, resizes and closes browsers so they match `project`'s browser
    /// nodes, views painted at `zoom`; returns what the person must be told.
    pub(crate) fn sync(&mut self, project: Option<&Project>, zoom: f64, engine: &dyn BrowserEngine) -> Vec<String> {
        let mut told = Vec::new();
        let mut wanted: Vec<(TabAddress, String, ViewGeometry, Option<RequestContextId>)> = vec![];
        let mut active = HashMap::new();
        let mut node_contexts = HashMap::new();
        let mut ended = vec![];
        if let Some(p) = project {
            for node in p.nodes() {
                if let NodeKind::Browser { tabs, active_tab, context } = &node.kind {
                    active.insert(node.id.clone(), active_tab.clone());
                    let engine_context = match context {
                        None => None,
                        Some(c) => match self.contexts.get(c) {
                            Some(e) => Some(*e),
                            None => {
                                // Its context was disposed (an undone close brought the node back):
                                // its pages are not opened in the person's profile instead.
                                ended.push(node.id.clone());
                                continue;
                            }
                        },
                    };
                    if let Some(c) = context {
                        node_contexts.insert(node.id.clone(), c.clone());
                    }
                    for tab in tabs {
                        wanted.push((
                            TabAddress::new(node.id.clone(), tab.id.clone()),
                            tab.url.clone(),
                            view_geometry(&node.rect, zoom),
                            engine_context,
                        ));
                    }
                }
            }
        }
        self.ended.retain(|n| ended.contains(n));
        for node in ended {
            if self.ended.insert(node.clone()) {
                told.push(format!("{node}: its isolated browser context has ended; its pages stay closed"));
            }
        }
        self.active = active;
        self.node_contexts = node_contexts;
        let stale: Vec<TabAddress> =
            self.by_tab.keys().filter(|t| !wanted.iter().any(|(w, ..)| w == *t)).cloned().collect();
        for tab in stale {
            if let Some(b) = self.by_tab.remove(&tab) {
                self.by_browser.remove(&b.id());
                let _ = b.close();
            }
        }
        for (tab, url, ((w, h), scale), context) in wanted {
            match self.by_tab.get(&tab) {
                Some(b) => {
                    if b.view_size() != (w, h) {
                        let _ = b.resize(w, h);
                    }
                    // A no-op when unchanged.
                    if let Err(e) = b.set_scale(scale) {
                        tracing::debug!(%tab, error = %e, "view scale not changed");
                    }
                }
                None => {
                    let url = if cef_bridge::url_policy::is_allowed_nav_url(&url) {
                        url
                    } else {
                        cef_bridge::url_policy::ABOUT_BLANK.to_string()
                    };
                    let options = BrowserOptions { context, ..BrowserOptions::new(url, w, h) };
                    match engine.create_browser(&options) {
                        Ok(b) => {
                            if let Err(e) = b.set_scale(scale) {
                                tracing::debug!(%tab, error = %e, "view scale not set");
                            }
                            self.by_browser.insert(b.id(), tab.clone());
                            self.by_tab.insert(tab, b);
                        }
                        Err(e) => told.push(format!("browser for {tab} not created: {e}")),
                    }
                }
            }
        }
        self.publish();
        told
    }

    /// The isolated context behind an engine's context.
    pub(crate) fn context_of_engine(&self, engine: Option<RequestContextId>) -> Option<BrowserContextId> {
        let engine = engine?;
        self.contexts.iter().find(|(_, e)| **e == engine).map(|(c, _)| c.clone())
    }

    /// The engine's context behind a live isolated context.
    pub(crate) fn engine_context(&self, id: &BrowserContextId) -> Option<RequestContextId> {
        self.contexts.get(id).copied()
    }

    /// Whether an isolated context is live.
    pub(crate) fn has_context(&self, id: &BrowserContextId) -> bool {
        self.contexts.contains_key(id)
    }

    /// Records a new isolated context and the engine's context behind it.
    pub(crate) fn add_context(&mut self, id: BrowserContextId, engine: RequestContextId) {
        self.contexts.insert(id, engine);
    }

    /// Forgets an isolated context; the engine's context behind it, if it was live.
    pub(crate) fn remove_context(&mut self, id: &BrowserContextId) -> Option<RequestContextId> {
        self.contexts.remove(id)
    }

    /// Follows a page's loading, history and find events; true when what
    /// its title bar shows changed.
    pub(crate) fn follow_nav(&mut self, id: BrowserId, ev: &BrowserEvent) -> bool {
        self.by_browser.contains_key(&id) && self.nav_mut(id).follow(ev)
    }

    /// A page painted a frame (after its load, "painted" is reached).
    pub(crate) fn painted(&mut self, id: BrowserId) {
        if let Some((_, painted)) = self.loaded.get_mut(&id) {
            *painted = true;
        }
    }

    /// A page started loading again.
    pub(crate) fn loading(&mut self, id: BrowserId) {
        self.loaded.remove(&id);
    }

    /// A page finished loading: asks it for a fresh paint (so "painted after
    /// load" is reached even on a static page); true when that ended a crash
    /// its node showed.
    pub(crate) fn load_finished(&mut self, id: BrowserId) -> bool {
        self.loaded.insert(id, (Instant::now(), false));
        let Some(tab) = self.by_browser.get(&id) else { return false };
        if let Some(b) = self.by_tab.get(tab) {
            let _ = b.invalidate();
        }
        self.crashed.remove(&tab.node).is_some()
    }

    /// A page's renderer died; false when the page is not one of ours.
    pub(crate) fn crashed(&mut self, id: BrowserId, why: String) -> bool {
        let Some(tab) = self.by_browser.get(&id) else { return false };
        self.crashed.insert(tab.node.clone(), why);
        true
    }

    /// A browser closed (by its page, or by CEF rather than by the model):
    /// forgets it; the tab it was bound to, when that binding was its own.
    pub(crate) fn closed(&mut self, id: BrowserId) -> Option<TabAddress> {
        self.loaded.remove(&id);
        self.nav.remove(&id);
        self.finding.remove(&id);
        let tab = self.by_browser.remove(&id)?;
        if self.by_tab.get(&tab).is_some_and(|b| b.id() == id) {
            self.by_tab.remove(&tab);
            return Some(tab);
        }
        None
    }

    /// Binds an existing browser (a popup) to a tab, so the next sync keeps it
    /// instead of creating another.
    pub(crate) fn bind(&mut self, tab: TabAddress, browser: Browser) {
        self.by_browser.insert(browser.id(), tab.clone());
        self.by_tab.insert(tab, browser);
    }

    /// Undoes [`BrowserNodes::bind`].
    pub(crate) fn unbind(&mut self, tab: &TabAddress) {
        if let Some(b) = self.by_tab.remove(tab) {
            self.by_browser.remove(&b.id());
        }
    }

    /// Remembers which page opened `tab` and tells other threads. The
    /// facade announces the new target only after asking its page for its
    /// target info, which the main thread answers after this, so it is never
    /// announced without its opener.
    pub(crate) fn record_opener(&mut self, tab: TabAddress, opener: TabAddress, can_access: bool) {
        let mut openers = std::mem::take(&mut self.openers);
        openers.retain(|t, o| self.both_live(t, o));
        openers.insert(tab, PageOpener { tab: opener, can_access });
        self.openers = openers;
        self.publish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Command;

    #[test]
    fn a_node_sized_for_a_view_gets_exactly_that_view() {
        let r = Rect { x: 30.0, y: -40.0, w: 500.0, h: 400.0 };
        for (w, h) in [(640, 480), (1024, 700), (333, 211)] {
            let sized = rect_for_view(&r, w, h);
            assert_eq!((sized.x, sized.y), (r.x, r.y), "the corner stays");
            assert_eq!(view_geometry(&sized, 1.0).0, (w, h));
        }
    }

    #[test]
    fn views_keep_their_layout_and_scale_with_the_zoom_within_bounds() {
        let theme = canvas_render::Theme::default();
        let r = Rect { x: 0.0, y: 0.0, w: 802.0, h: 601.0 + f64::from(theme.title_height) };
        assert_eq!(view_geometry(&r, 1.0), ((800, 600), 1.0));
        assert_eq!(view_geometry(&r, 0.5), ((800, 600), 0.5), "zoomed out: the same layout, fewer pixels");
        assert_eq!(view_geometry(&r, 2.5), ((800, 600), 2.5));
        assert_eq!(view_geometry(&r, 0.1), ((800, 600), cef_bridge::SCALE_RANGE.0), "scale bounded below");
        assert_eq!(view_geometry(&r, 9.0), ((800, 600), cef_bridge::SCALE_RANGE.1), "and above");
        let tiny = Rect { x: 0.0, y: 0.0, w: 1.0, h: 1.0 };
        assert_eq!(view_geometry(&tiny, 1.0).0, (1, 1));
        // A view whose pixels would pass the engine's largest edge gets a smaller scale.
        let wide = Rect { x: 0.0, y: 0.0, w: 8194.0, h: 400.0 };
        let ((w, _), scale) = view_geometry(&wide, 4.0);
        assert_eq!(w, 8192);
        assert!((w as f32 * scale).round() as u32 <= cef_bridge::MAX_VIEW_EDGE && scale >= 1.99, "{scale}");
        let huge = Rect { x: 0.0, y: 0.0, w: 1e6, h: 1e6 };
        assert_eq!(view_geometry(&huge, 4.0).0, (cef_bridge::MAX_VIEW_EDGE, cef_bridge::MAX_VIEW_EDGE));
    }

    #[test]
    fn live_browsers_follow_the_model_through_the_engine() {
        use crate::runtime::engine::LiveBrowser;
        let mut ctx = crate::runtime::test_context::TestContext::new();
        let rect = Rect { x: 0.0, y: 900.0, w: 802.0, h: 640.0 };
        let kind = NodeKind::browser("https://example.com/").unwrap();
        let id = ctx.add(kind, "Example", (rect.x, rect.y, rect.w, rect.h));
        let page = ctx.page_of(id.as_str()).expect("a browser was created for the node");
        assert_eq!(page.current_url(), "https://example.com/");
        assert_eq!(page.view_size(), view_geometry(&rect, 1.0).0);
        assert_eq!(ctx.rt.browsers.live().snapshot().len(), 1, "published for other threads");
        let bigger = Rect { w: 1002.0, h: 740.0, ..rect };
        ctx.rt.apply(Command::SetRect { id: id.clone(), rect: bigger }).unwrap();
        assert_eq!(page.view_size(), view_geometry(&bigger, 1.0).0, "resized with its node");
        ctx.rt.apply(Command::RemoveNodes { ids: vec![id.clone()] }).unwrap();
        assert!(page.is_closed(), "closed with its node");
        assert!(ctx.rt.browsers.for_node(&id).is_none());
        assert!(ctx.rt.browsers.live().snapshot().is_empty());
    }
}
