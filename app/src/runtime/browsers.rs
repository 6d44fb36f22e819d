//! Browser nodes ↔ live CEF browsers.
//!
//! The model says which browser tabs exist; this module makes the engine
//! agree: one off-screen browser per tab of every browser node in the active
//! project (the node shows its active tab; the others keep their pages),
//! created, resized and closed as the model changes, and page events (title,
//! URL, crashes, new tabs, popups, pages closing themselves) written back into
//! the model.

use super::engine::Browser;
use super::page_nav::PageNav;
use super::Runtime;
use crate::model::{BrowserContextId, BrowserTab, Command, NodeId, NodeKind, Rect, TabAddress};
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
    pub(crate) contexts: HashMap<BrowserContextId, RequestContextId>,
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
    let body = canvas_render::body_rect(super::scene::render_rect(rect), &canvas_render::Theme::default());
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
    let body = canvas_render::body_rect(super::scene::render_rect(rect), &canvas_render::Theme::default());
    Rect {
        x: rect.x,
        y: rect.y,
        w: f64::from(width) + (rect.w - f64::from(body.w)),
        h: f64::from(height) + (rect.h - f64::from(body.h)),
    }
}

impl Runtime {
    /// Creates, resizes and closes browsers so they match the active project.
    pub fn sync_browsers(&mut self) {
        let zoom = if self.config.views_follow_zoom {
            self.project().map_or(1.0, |p| p.camera().zoom) * self.ui_scale
        } else {
            1.0
        };
        let mut wanted: Vec<(TabAddress, String, ViewGeometry, Option<RequestContextId>)> = vec![];
        let mut active = HashMap::new();
        let mut node_contexts = HashMap::new();
        let mut ended = vec![];
        if let Some(p) = self.project() {
            for node in p.nodes() {
                if let NodeKind::Browser { tabs, active_tab, context } = &node.kind {
                    active.insert(node.id.clone(), active_tab.clone());
                    let engine_context = match context {
                        None => None,
                        Some(c) => match self.browsers.contexts.get(c) {
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
        self.browsers.ended.retain(|n| ended.contains(n));
        for node in ended {
            if self.browsers.ended.insert(node.clone()) {
                self.notify(format!("{node}: its isolated browser context has ended; its pages stay closed"), true);
            }
        }
        self.browsers.active = active;
        self.browsers.node_contexts = node_contexts;
        let stale: Vec<TabAddress> =
            self.browsers.by_tab.keys().filter(|t| !wanted.iter().any(|(w, ..)| w == *t)).cloned().collect();
        for tab in stale {
            if let Some(b) = self.browsers.by_tab.remove(&tab) {
                self.browsers.by_browser.remove(&b.id());
                let _ = b.close();
            }
        }
        for (tab, url, ((w, h), scale), context) in wanted {
            match self.browsers.by_tab.get(&tab) {
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
                    match self.engine.create_browser(&options) {
                        Ok(b) => {
                            if let Err(e) = b.set_scale(scale) {
                                tracing::debug!(%tab, error = %e, "view scale not set");
                            }
                            self.browsers.by_browser.insert(b.id(), tab.clone());
                            self.browsers.by_tab.insert(tab, b);
                        }
                        Err(e) => self.notify(format!("browser for {tab} not created: {e}"), true),
                    }
                }
            }
        }
        self.browsers.publish();
    }

    /// The isolated context behind an engine's context.
    fn context_of_engine(&self, engine: Option<RequestContextId>) -> Option<BrowserContextId> {
        let engine = engine?;
        self.browsers.contexts.iter().find(|(_, e)| **e == engine).map(|(c, _)| c.clone())
    }

    fn tab_for(&self, id: BrowserId) -> Option<TabAddress> {
        self.browsers.by_browser.get(&id).cloned()
    }

    /// Applies a browser event to the model and the live state.
    pub(crate) fn on_browser_event(&mut self, ev: BrowserEvent) {
        if let BrowserEvent::LoadingStateChanged { id, .. }
        | BrowserEvent::LoadProgress { id, .. }
        | BrowserEvent::FindResult { id, .. } = &ev
        {
            if self.browsers.by_browser.contains_key(id) && self.browsers.nav_mut(*id).follow(&ev) {
                self.redraw = true;
            }
        }
        if let BrowserEvent::DownloadStarted { id, .. } | BrowserEvent::DownloadProgress { id, .. } = &ev {
            let tab = self.tab_for(*id);
            self.record_download(tab, &ev);
        }
        match ev {
            BrowserEvent::FrameReady { id } => {
                if tracing::enabled!(tracing::Level::TRACE) {
                    let centre = self
                        .tab_for(id)
                        .and_then(|t| self.browsers.by_tab.get(&t))
                        .and_then(|b| b.last_frame())
                        .and_then(|f| f.rgba_at(f.width / 2, f.height / 2));
                    tracing::trace!(%id, ?centre, "frame");
                }
                if self.gfx.is_none() {
                    // Nothing uploads frames headless: keep the announcements coming.
                    if let Some(b) = self.tab_for(id).and_then(|t| self.browsers.by_tab.get(&t)) {
                        b.acknowledge_frame();
                    }
                }
                if let Some((_, painted)) = self.browsers.loaded.get_mut(&id) {
                    *painted = true;
                }
                // A frame nobody sees waits, not uploaded, for the next frame that shows it.
                if self.tab_for(id).is_some_and(|t| self.frame_visible(&t)) {
                    self.redraw = true;
                }
            }
            BrowserEvent::LoadingStateChanged { id, loading: true, .. } => {
                self.browsers.loaded.remove(&id);
            }
            BrowserEvent::TitleChanged { id, title } => {
                if let Some(tab) = self.tab_for(id) {
                    let node = tab.node.clone();
                    let shown = self.browsers.is_shown(&tab);
                    self.apply_quiet(Command::SetBrowserTitle { tab, title: title.clone() });
                    if shown && !title.is_empty() {
                        self.apply_quiet(Command::SetTitle { id: node, title });
                    }
                }
            }
            BrowserEvent::AddressChanged { id, url } => {
                if let Some(tab) = self.tab_for(id) {
                    if cef_bridge::url_policy::is_allowed_nav_url(&url) {
                        self.apply_quiet(Command::SetBrowserUrl { tab, url });
                    }
                }
            }
            BrowserEvent::LoadFinished { id, .. } => {
                self.browsers.loaded.insert(id, (std::time::Instant::now(), false));
                if let Some(b) = self.tab_for(id).and_then(|t| self.browsers.by_tab.get(&t)) {
                    // Ask for a fresh paint so "painted after load" is reached even on a static page.
                    let _ = b.invalidate();
                }
                if let Some(tab) = self.tab_for(id) {
                    if self.browsers.crashed.remove(&tab.node).is_some() {
                        self.redraw = true;
                    }
                }
            }
            BrowserEvent::RenderProcessTerminated { id, status, .. } => {
                if let Some(tab) = self.tab_for(id) {
                    self.browsers.crashed.insert(tab.node.clone(), format!("{status:?}").to_lowercase());
                    self.redraw = true;
                }
            }
            BrowserEvent::LoadFailed { id, error_text, url, .. } => {
                if let Some(tab) = self.tab_for(id) {
                    tracing::info!(node = %tab.node, %url, %error_text, "page failed to load");
                }
            }
            BrowserEvent::NavigationBlocked { id, url } => {
                if let Some(tab) = self.tab_for(id) {
                    let scheme = url.split(':').next().unwrap_or("").to_string();
                    self.notify(format!("{}: navigation to a {scheme}: URL was refused", tab.node), true);
                }
            }
            BrowserEvent::NewTabRequested { opener, url, background } => {
                // A link the page opens in a new tab: a tab of the opener's node
                // (shown at once unless a background tab was asked for).
                let result = match self.tab_for(opener) {
                    Some(t) => self
                        .new_tab(&t.node, &url, !background)
                        .map(|tab| self.record_opener(tab, t, false))
                        .map_err(|e| e.to_string()),
                    None => NodeKind::browser(&url)
                        .map_err(|e| e.to_string())
                        .and_then(|kind| self.add_node(kind, &url, (960.0, 640.0), None).map_err(|e| e.to_string()))
                        .map(|_| ()),
                };
                if let Err(e) = result {
                    self.notify(format!("cannot open {url}: {e}"), true);
                }
            }
            BrowserEvent::PopupOpened { id, opener } => self.adopt_popup(id, opener),
            BrowserEvent::Closed { id } => {
                self.browsers.loaded.remove(&id);
                self.browsers.nav.remove(&id);
                self.browsers.finding.remove(&id);
                if let Some(tab) = self.browsers.by_browser.remove(&id) {
                    // Closed by the page (window.close) or by CEF rather than by the model:
                    // drop the tab binding, and the tab itself when its node has others.
                    if self.browsers.by_tab.get(&tab).is_some_and(|b| b.id() == id) {
                        self.browsers.by_tab.remove(&tab);
                        if self.page_tabs(&tab.node).len() > 1 {
                            if let Err(e) = self.close_tab(tab) {
                                tracing::debug!(error = %e, "a tab whose page closed stays");
                            }
                        }
                    }
                }
                self.browsers.publish();
            }
            BrowserEvent::DownloadFinished { path, complete, .. } => {
                if complete {
                    self.notify(format!("downloaded {}", path.display()), false);
                }
            }
            // Waiters on the live view re-check `is_created`.
            BrowserEvent::DialogOpened { id, dialog } => {
                tracing::info!(browser = %id, kind = dialog.kind.cdp_name(), "page waits on a JavaScript dialog");
                self.request_redraw();
            }
            BrowserEvent::DialogClosed { .. } | BrowserEvent::ContextMenuClosed { .. } => self.request_redraw(),
            BrowserEvent::ContextMenuOpened { id, .. } => self.context_menu_opened(id),
            BrowserEvent::FileChooserOpened { id, chooser } => {
                tracing::info!(browser = %id, mode = ?chooser.mode, "page waits on a file chooser");
                self.request_redraw();
            }
            BrowserEvent::Created { .. } => self.browsers.publish(),
            BrowserEvent::LoadingStateChanged { .. }
            | BrowserEvent::LoadProgress { .. }
            | BrowserEvent::FindResult { .. }
            | BrowserEvent::DownloadStarted { .. }
            | BrowserEvent::DownloadProgress { .. } => {}
        }
    }

    /// A sign-in popup: a new tab of its opener's node (a node of its own when
    /// the opener is gone), bound to the already existing popup browser.
    fn adopt_popup(&mut self, id: BrowserId, opener: BrowserId) {
        let Some(handle) = self.engine.browser(id) else { return };
        let url = handle.url();
        let tab = match BrowserTab::new(if url.is_empty() { cef_bridge::url_policy::ABOUT_BLANK } else { &url }) {
            Ok(t) => t,
            Err(e) => {
                let _ = handle.close();
                self.notify(format!("popup refused: {e}"), true);
                return;
            }
        };
        let (node, command) = match self.tab_for(opener) {
            Some(t) => (t.node.clone(), Command::AddTab { node: t.node, tab: tab.clone(), activate: true }),
            None => {
                let context = self.context_of_engine(handle.context());
                let kind = NodeKind::Browser { active_tab: tab.id.clone(), tabs: vec![tab.clone()], context };
                let size = (520.0, 640.0);
                let (x, y) = self.free_spot(size, None);
                let node = crate::model::Node::new(kind, "Sign-in", Rect { x, y, w: size.0, h: size.1 });
                (node.id.clone(), Command::AddNode { node })
            }
        };
        let address = TabAddress::new(node, tab.id.clone());
        // Bind first so sync_browsers() keeps this browser instead of creating another.
        self.browsers.by_browser.insert(id, address.clone());
        self.browsers.by_tab.insert(address.clone(), handle.clone());
        match self.apply(command) {
            Ok(_) => {
                if let Some(opener) = self.tab_for(opener) {
                    self.record_opener(address, opener, true);
                }
            }
            Err(e) => {
                self.browsers.by_browser.remove(&id);
                self.browsers.by_tab.remove(&address);
                let _ = handle.close();
                self.notify(format!("popup not opened: {e}"), true);
            }
        }
    }

    /// Remembers which page opened `tab` and tells other threads. The
    /// facade announces the new target only after asking its page for its
    /// target info, which the main thread answers after this, so it is never
    /// announced without its opener.
    fn record_opener(&mut self, tab: TabAddress, opener: TabAddress, can_access: bool) {
        let mut openers = std::mem::take(&mut self.browsers.openers);
        openers.retain(|t, o| self.browsers.both_live(t, o));
        openers.insert(tab, PageOpener { tab: opener, can_access });
        self.browsers.openers = openers;
        self.browsers.publish();
    }

    /// Applies a command that reflects the page, not the user (not worth a notice on failure).
    fn apply_quiet(&mut self, cmd: Command) {
        if let Err(e) = self.apply(cmd) {
            tracing::debug!(error = %e, "browser state not recorded");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
