//! What the runtime does with browser nodes beyond their live state: brings
//! them in line with the model after a change, and writes page events
//! (titles, addresses, crashes, new tabs, popups, pages closing themselves)
//! back into the model.

use super::Runtime;
use crate::model::{BrowserTab, Command, Node, NodeKind, Rect, TabAddress};
use cef_bridge::{BrowserEvent, BrowserId};

impl Runtime {
    /// Creates, resizes and closes browsers so they match the active project.
    pub fn sync_browsers(&mut self) {
        let zoom = if self.config.views_follow_zoom {
            self.project().map_or(1.0, |p| p.camera().zoom) * self.ui_scale
        } else {
            1.0
        };
        let told = self.browsers.sync(self.workspace.active(), zoom, &*self.engine);
        for text in told {
            self.notify(text, true);
        }
    }

    fn tab_for(&self, id: BrowserId) -> Option<TabAddress> {
        self.browsers.tab_of(id).cloned()
    }

    /// Applies a browser event to the model and the live state.
    pub(crate) fn on_browser_event(&mut self, ev: BrowserEvent) {
        if let BrowserEvent::LoadingStateChanged { id, .. }
        | BrowserEvent::LoadProgress { id, .. }
        | BrowserEvent::FindResult { id, .. } = &ev
        {
            if self.browsers.follow_nav(*id, &ev) {
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
                        .and_then(|t| self.browsers.get(&t))
                        .and_then(|b| b.last_frame())
                        .and_then(|f| f.rgba_at(f.width / 2, f.height / 2));
                    tracing::trace!(%id, ?centre, "frame");
                }
                if self.gfx.is_none() {
                    // Nothing uploads frames headless: keep the announcements coming.
                    if let Some(b) = self.tab_for(id).and_then(|t| self.browsers.get(&t)) {
                        b.acknowledge_frame();
                    }
                }
                self.browsers.painted(id);
                // A frame nobody sees waits, not uploaded, for the next frame that shows it.
                if self.tab_for(id).is_some_and(|t| self.frame_visible(&t)) {
                    self.redraw = true;
                }
            }
            BrowserEvent::LoadingStateChanged { id, loading: true, .. } => self.browsers.loading(id),
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
                if self.browsers.load_finished(id) {
                    self.redraw = true;
                }
            }
            BrowserEvent::RenderProcessTerminated { id, status, .. } => {
                if self.browsers.crashed(id, format!("{status:?}").to_lowercase()) {
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
                        .map(|tab| self.browsers.record_opener(tab, t, false))
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
                // Closed by the page (window.close) or by CEF rather than by the model:
                // the tab itself goes too when its node has others.
                if let Some(tab) = self.browsers.closed(id) {
                    if self.page_tabs(&tab.node).len() > 1 {
                        if let Err(e) = self.close_tab(tab) {
                            tracing::debug!(error = %e, "a tab whose page closed stays");
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
                let context = self.browsers.context_of_engine(handle.context());
                let kind = NodeKind::Browser { active_tab: tab.id.clone(), tabs: vec![tab.clone()], context };
                let size = (520.0, 640.0);
                let (x, y) = self.free_spot(size, None);
                let node = Node::new(kind, "Sign-in", Rect { x, y, w: size.0, h: size.1 });
                (node.id.clone(), Command::AddNode { node })
            }
        };
        let address = TabAddress::new(node, tab.id.clone());
        self.browsers.bind(address.clone(), handle.clone());
        match self.apply(command) {
            Ok(_) => {
                if let Some(opener) = self.tab_for(opener) {
                    self.browsers.record_opener(address, opener, true);
                }
            }
            Err(e) => {
                self.browsers.unbind(&address);
                let _ = handle.close();
                self.notify(format!("popup not opened: {e}"), true);
            }
        }
    }

    /// A download event of `tab`'s page: the node's strip and every listener.
    fn record_download(&mut self, tab: Option<TabAddress>, event: &BrowserEvent) {
        let Some(tab) = tab else { return };
        if matches!(event, BrowserEvent::DownloadStarted { .. }) {
            let workspace = &self.workspace;
            self.downloads.retain_nodes(|n| workspace.projects().iter().any(|p| p.node(n).is_some()));
        }
        if self.downloads.record(&tab, event) {
            self.request_redraw();
        }
    }

    /// Applies a command that reflects the page, not the user (not worth a notice on failure).
    fn apply_quiet(&mut self, cmd: Command) {
        if let Err(e) = self.apply(cmd) {
            tracing::debug!(error = %e, "browser state not recorded");
        }
    }
}
