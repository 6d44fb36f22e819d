//! The CDP facade and the browser agent server, wired to the live app.
//!
//! [`AppGuests`] is cdp-facade's view of the browser nodes: it lists them
//! from the main thread's published [`LiveBrowsers`] (never waiting on the
//! main thread, since the facade polls it every 500 ms), hands out each
//! browser's DevTools channel, and opens, closes and focuses nodes through
//! the [`AppHandle`] — all waiting happens on the caller's (blocking worker)
//! thread, never on the main thread. [`CdpServers`] starts both servers with
//! one per-boot token.

use super::agent_settings;
use super::browsers::LiveBrowsers;
use super::downloads::DownloadNews;
use super::engine::Browser;
use super::facade_channel::FacadeChannel;
use super::on_screen::{show_now, PaintWants};
use super::{AppError, AppHandle, CALL_TIMEOUT};
use crate::model::{BrowserContextId, Command, TabAddress};
use crate::page_transport::cdp_page;
use cdp_facade::{
    AgentServer, AgentServerConfig, BrowserVersion, ContextId, DownloadEvent, DownloadNotice, DownloadNotifier, Facade,
    FacadeConfig, FacadeError, GuestChannel, GuestError, GuestId, GuestOpener, Guests, PermissionSetting,
    PermissionType, WindowBounds,
};
use cef_bridge::{
    BrowserId, DevToolsChannel, DownloadBehavior, DownloadPolicy, DownloadState, SitePermission, SiteSetting,
};
use local_guard::{RandomError, Token};
use page_driver::{DriveError, Page};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long opening a node may take until its browser exists (CEF creates it asynchronously).
pub const OPEN_TIMEOUT: Duration = Duration::from_secs(15);
/// How long closing a node may take until its browser is gone.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);
/// Deadline for learning the version from a guest.
const VERSION_TIMEOUT: Duration = Duration::from_secs(5);

/// What CEF 131 reports before any browser could be asked (Browser.getVersion
/// needs a live guest); replaced by the real answer once one exists.
pub fn fallback_version() -> BrowserVersion {
    BrowserVersion {
        product: "Chrome/131.0.6778.205".into(),
        revision: String::new(),
        user_agent:
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
                .into(),
        js_version: String::new(),
    }
}

/// The app's browser nodes, as cdp-facade's [`Guests`].
pub struct AppGuests {
    app: AppHandle,
    live: LiveBrowsers,
    /// One channel object per browser, so the facade sees the same `Arc` every time.
    channels: Mutex<HashMap<BrowserId, Arc<dyn GuestChannel>>>,
    version: Arc<Mutex<Option<BrowserVersion>>>,
    learning: Arc<AtomicBool>,
    /// Where the engine saves downloads.
    downloads: DownloadPolicy,
    /// Pages clients need painted (shared with the runtime's pacing).
    wants: PaintWants,
}

impl AppGuests {
    /// Guests over the app behind `app`, listed from `live`, saving downloads
    /// by `downloads`, telling the runtime's pacing through `wants`.
    pub fn new(app: AppHandle, live: LiveBrowsers, downloads: DownloadPolicy, wants: PaintWants) -> Self {
        Self {
            app,
            live,
            downloads,
            wants,
            channels: Mutex::new(HashMap::new()),
            version: Arc::new(Mutex::new(None)),
            learning: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Live, created browsers in a stable order (oldest first).
    fn usable(&self) -> Vec<(TabAddress, Browser)> {
        self.live.snapshot().into_iter().filter(|(_, b)| b.is_created() && !b.is_closed()).collect()
    }

    fn find(&self, id: &GuestId) -> Option<(TabAddress, Browser)> {
        self.live.snapshot().into_iter().find(|(t, _)| t.to_string() == id.as_str())
    }

    /// Asks a guest for the real version once, on a helper thread (callers must not wait).
    fn learn_version_in_background(&self, devtools: Arc<DevToolsChannel>) {
        if self.version.lock().is_some() || self.learning.swap(true, Ordering::AcqRel) {
            return;
        }
        let (version, learning) = (self.version.clone(), self.learning.clone());
        let spawned = std::thread::Builder::new().name("cdp-version".into()).spawn(move || {
            match learn_version(devtools) {
                Ok(v) => *version.lock() = Some(v),
                Err(e) => tracing::debug!(error = %e, "Browser.getVersion not learned yet"),
            }
            learning.store(false, Ordering::Release);
        });
        if spawned.is_err() {
            self.learning.store(false, Ordering::Release);
        }
    }
}

/// Reads product, revision, user agent and V8 version from a guest.
fn learn_version(devtools: Arc<DevToolsChannel>) -> Result<BrowserVersion, DriveError> {
    let v = cdp_page(devtools).with_timeout(VERSION_TIMEOUT).browser_version()?;
    let fallback = fallback_version();
    let or = |s: String, d: String| if s.is_empty() { d } else { s };
    Ok(BrowserVersion {
        product: or(v.product, fallback.product),
        revision: v.revision,
        user_agent: or(v.user_agent, fallback.user_agent),
        js_version: v.js_version,
    })
}

/// The model's id of a context the facade names.
fn model_context(id: &ContextId) -> Result<BrowserContextId, GuestError> {
    BrowserContextId::new(id.as_str()).map_err(|e| GuestError::new(e.to_string()))
}

/// The engine's name for a permission CDP names (the same list: one Chromium content setting each).
fn site_permission(p: PermissionType) -> SitePermission {
    use PermissionType as P;
    use SitePermission as S;
    match p {
        P::Ar => S::Ar,
        P::AudioCapture => S::AudioCapture,
        P::AutomaticFullscreen => S::AutomaticFullscreen,
        P::BackgroundFetch => S::BackgroundFetch,
        P::BackgroundSync => S::BackgroundSync,
        P::CameraPanTiltZoom => S::CameraPanTiltZoom,
        P::CapturedSurfaceControl => S::CapturedSurfaceControl,
        P::ClipboardReadWrite => S::ClipboardReadWrite,
        P::ClipboardSanitizedWrite => S::ClipboardSanitizedWrite,
        P::DisplayCapture => S::DisplayCapture,
        P::DurableStorage => S::DurableStorage,
        P::Geolocation => S::Geolocation,
        P::HandTracking => S::HandTracking,
        P::IdleDetection => S::IdleDetection,
        P::KeyboardLock => S::KeyboardLock,
        P::LocalFonts => S::LocalFonts,
        P::Midi => S::Midi,
        P::MidiSysex => S::MidiSysex,
        P::Nfc => S::Nfc,
        P::Notifications => S::Notifications,
        P::PaymentHandler => S::PaymentHandler,
        P::PeriodicBackgroundSync => S::PeriodicBackgroundSync,
        P::PointerLock => S::PointerLock,
        P::ProtectedMediaIdentifier => S::ProtectedMediaIdentifier,
        P::Sensors => S::Sensors,
        P::SpeakerSelection => S::SpeakerSelection,
        P::StorageAccess => S::StorageAccess,
        P::TopLevelStorageAccess => S::TopLevelStorageAccess,
        P::VideoCapture => S::VideoCapture,
        P::Vr => S::Vr,
        P::WakeLockScreen => S::WakeLockScreen,
        P::WakeLockSystem => S::WakeLockSystem,
        P::WebAppInstallation => S::WebAppInstallation,
        P::WebPrinting => S::WebPrinting,
        P::WindowManagement => S::WindowManagement,
    }
}

fn app_error(e: AppError) -> GuestError {
    GuestError::new(e.to_string())
}

impl Guests for AppGuests {
    fn answer_dialog(&self, id: &GuestId, accept: bool, prompt_text: Option<&str>) -> Result<(), GuestError> {
        let (_, browser) = self.find(id).ok_or_else(|| GuestError::new("no such browser node"))?;
        browser.answer_dialog(accept, prompt_text).map(|_| ()).map_err(|e| GuestError::new(e.to_string()))
    }

    fn set_permissions(
        &self,
        context: &ContextId,
        origin: Option<&str>,
        permissions: &[PermissionType],
        setting: PermissionSetting,
    ) -> Result<(), GuestError> {
        let context = model_context(context)?;
        let origin = origin.map(str::to_string);
        let permissions: Vec<SitePermission> = permissions.iter().copied().map(site_permission).collect();
        let setting = match setting {
            PermissionSetting::Granted => SiteSetting::Granted,
            PermissionSetting::Denied => SiteSetting::Denied,
            PermissionSetting::Prompt => SiteSetting::Prompt,
        };
        self.app
            .call(CALL_TIMEOUT, move |rt| {
                rt.set_context_permissions(&context, origin.as_deref(), &permissions, setting)
            })
            .map_err(app_error)?
            .map_err(|e| GuestError::new(e.to_string()))
    }

    fn reset_permissions(&self, context: &ContextId) -> Result<(), GuestError> {
        let context = model_context(context)?;
        self.app
            .call(CALL_TIMEOUT, move |rt| rt.reset_context_permissions(&context))
            .map_err(app_error)?
            .map_err(|e| GuestError::new(e.to_string()))
    }

    fn set_download_behavior(
        &self,
        context: Option<&ContextId>,
        behavior: cdp_facade::DownloadBehavior,
    ) -> Result<(), GuestError> {
        use cdp_facade::DownloadBehavior as Asked;
        let engine_context = match context {
            None => None,
            Some(c) => {
                let engine = self.live.engine_context(&model_context(c)?);
                Some(engine.ok_or_else(|| GuestError::new(format!("no browser context {c}")))?)
            }
        };
        self.downloads.set_for(
            engine_context,
            match behavior {
                Asked::Default => DownloadBehavior::Default,
                Asked::Allow(dir) => DownloadBehavior::Allow(dir),
                Asked::AllowAndName(dir) => DownloadBehavior::AllowAndName(dir),
                Asked::Deny => DownloadBehavior::Deny,
            },
        );
        Ok(())
    }

    fn window_bounds(&self, id: &GuestId) -> Option<WindowBounds> {
        let (_, browser) = self.find(id).filter(|(_, b)| !b.is_closed())?;
        let (width, height) = browser.view_size();
        // A node has no place on a screen; the canvas is not one, so the origin is reported.
        Some(WindowBounds { left: 0, top: 0, width, height })
    }

    fn resize_window(&self, id: &GuestId, width: u32, height: u32) -> Result<(), GuestError> {
        let (tab, _) = self.find(id).ok_or_else(|| GuestError::new("no such browser node"))?;
        let node = tab.node.clone();
        self.app
            .call(CALL_TIMEOUT, move |rt| {
                let rect = rt
                    .project()
                    .and_then(|p| p.node(&node).map(|n| super::browsers::rect_for_view(&n.rect, width, height)))
                    .ok_or_else(|| "the browser node is gone".to_string())?;
                rt.apply(Command::SetRect { id: node, rect }).map(|_| ()).map_err(|e| e.to_string())
            })
            .map_err(app_error)?
            .map_err(GuestError::new)?;
        // apply() synced the browsers: the view has its new size (or the model's minimum) already.
        Ok(())
    }

    fn list(&self) -> Vec<GuestId> {
        let usable = self.usable();
        if let Some((_, b)) = usable.first() {
            self.learn_version_in_background(b.devtools());
        }
        usable.into_iter().map(|(t, _)| GuestId::new(t.to_string())).collect()
    }

    fn channel(&self, id: &GuestId) -> Option<Arc<dyn GuestChannel>> {
        let usable = self.usable();
        let mut channels = self.channels.lock();
        // Forget browsers that are gone, so a reused id never gets a stale channel.
        channels.retain(|bid, _| usable.iter().any(|(_, b)| b.id() == *bid));
        let (_, browser) = usable.into_iter().find(|(t, _)| t.to_string() == id.as_str())?;
        let channel = channels
            .entry(browser.id())
            .or_insert_with(|| Arc::new(FacadeChannel::new(browser.devtools())) as Arc<dyn GuestChannel>);
        Some(channel.clone())
    }

    fn create_context(&self) -> Result<ContextId, GuestError> {
        let id = self
            .app
            .call(CALL_TIMEOUT, |rt| rt.create_browser_context())
            .map_err(app_error)?
            .map_err(|e| GuestError::new(e.to_string()))?;
        Ok(ContextId::new(id.as_str()))
    }

    fn dispose_context(&self, id: &ContextId) -> Result<(), GuestError> {
        let context = model_context(id)?;
        let closing: Vec<Browser> = self
            .live
            .snapshot()
            .into_iter()
            .filter(|(t, _)| self.live.context_of(&t.node).as_ref() == Some(&context))
            .map(|(_, b)| b)
            .collect();
        let c = context.clone();
        self.app
            .call(CALL_TIMEOUT, move |rt| rt.dispose_browser_context(&c))
            .map_err(app_error)?
            .map_err(|e| GuestError::new(e.to_string()))?;
        let all_closed = || closing.iter().all(|b| b.is_closed()).then_some(());
        match self.live.wait_for(Instant::now() + CLOSE_TIMEOUT, |_| all_closed()) {
            Some(()) => Ok(()),
            None => Err(GuestError::new(format!("the context's pages did not close within {CLOSE_TIMEOUT:?}"))),
        }
    }

    fn contexts(&self) -> Vec<ContextId> {
        self.live.contexts().iter().map(|c| ContextId::new(c.as_str())).collect()
    }

    fn opener(&self, id: &GuestId) -> Option<GuestOpener> {
        let (tab, _) = self.find(id)?;
        let opener = self.live.opener_of(&tab)?;
        Some(GuestOpener { guest: GuestId::new(opener.tab.to_string()), can_access: opener.can_access })
    }

    fn context_of(&self, id: &GuestId) -> Option<ContextId> {
        let (tab, _) = self.find(id)?;
        self.live.context_of(&tab.node).map(|c| ContextId::new(c.as_str()))
    }

    fn open(&self, url: &str, context: Option<&ContextId>) -> Result<GuestId, GuestError> {
        let target = url.to_string();
        let context = context.map(model_context).transpose()?;
        let node = self
            .app
            .call(CALL_TIMEOUT, move |rt| rt.open_browser_in(&target, None, context.as_ref()))
            .map_err(app_error)?
            .map_err(GuestError::new)?;
        // sync_browsers ran inside open_browser: no browser bound now means CEF refused to create one.
        let bound = |all: &[(TabAddress, Browser)]| all.iter().any(|(t, _)| t.node == node);
        if !bound(&self.live.snapshot()) {
            return Err(GuestError::new("the browser for the new node could not be created"));
        }
        let created = self.live.wait_for(Instant::now() + OPEN_TIMEOUT, |all| {
            all.iter()
                .find(|(t, b)| t.node == node && (b.is_created() || b.is_closed()))
                .map(|(t, b)| (t.clone(), b.clone()))
        });
        match created {
            Some((tab, browser)) if browser.is_created() && !browser.is_closed() => {
                self.learn_version_in_background(browser.devtools());
                Ok(GuestId::new(tab.to_string()))
            }
            Some(_) => Err(GuestError::new("the new browser closed while starting")),
            None => Err(GuestError::new(format!("the new browser did not start within {OPEN_TIMEOUT:?}"))),
        }
    }

    fn close(&self, id: &GuestId) -> Result<(), GuestError> {
        let (tab, browser) = self.find(id).ok_or_else(|| GuestError::new("no such browser node"))?;
        // A page is a tab: it closes alone, and its node goes with its last tab.
        let removed = self
            .app
            .call(CALL_TIMEOUT, move |rt| match rt.page_tabs(&tab.node).len() {
                0 | 1 => rt.apply(Command::RemoveNodes { ids: vec![tab.node] }).map(|_| ()).map_err(|e| e.to_string()),
                _ => rt.close_tab(tab).map_err(|e| e.to_string()),
            })
            .map_err(app_error)?;
        removed.map_err(GuestError::new)?;
        match self.live.wait_for(Instant::now() + CLOSE_TIMEOUT, |_| browser.is_closed().then_some(())) {
            Some(()) => Ok(()),
            None => Err(GuestError::new(format!("the browser did not close within {CLOSE_TIMEOUT:?}"))),
        }
    }

    fn activate(&self, id: &GuestId) {
        let Some((tab, browser)) = self.find(id) else {
            return;
        };
        let node = tab.node.clone();
        let result = self.app.call(CALL_TIMEOUT, move |rt| {
            if !rt.browsers.is_shown(&tab) {
                if let Err(e) = rt.activate_tab(tab) {
                    tracing::debug!(error = %e, "Target.activateTarget: the tab was not shown");
                }
            }
            let camera = rt.project().and_then(|p| p.node(&node).map(|n| p.camera().centred_on(&n.rect, rt.viewport)));
            if let Some(camera) = camera {
                if let Err(e) = rt.apply(Command::SetCamera { camera }) {
                    tracing::debug!(error = %e, "camera not moved to the activated node");
                }
            }
            rt.focus = Some(node.clone());
            rt.bring_to_front(node);
            let _ = browser.set_focus(true);
            rt.request_redraw();
        });
        if let Err(e) = result {
            tracing::warn!(error = %e, "Target.activateTarget: the app did not focus the node");
        }
    }

    fn focus_page(&self, id: &GuestId) {
        let Some((tab, browser)) = self.find(id) else { return };
        if let Err(e) = browser.set_focus(true) {
            tracing::debug!(error = %e, "the new page was not given focus");
        }
        // A new foreground tab is the front one (headless the others hide, as tabs do).
        if let Err(e) = self.app.call(CALL_TIMEOUT, move |rt| rt.bring_to_front(tab.node)) {
            tracing::debug!(error = %e, "the new page was not brought to front");
        }
    }

    fn paint_for_client(&self, id: &GuestId) {
        let Some((_, browser)) = self.find(id) else { return };
        self.wants.paint_for(browser.id());
        show_now(&browser);
    }

    fn emulate_focus(&self, id: &GuestId, on: bool) {
        let Some((_, browser)) = self.find(id) else { return };
        self.wants.emulate_focus(browser.id(), on);
        if on {
            show_now(&browser);
        }
    }

    fn normalize_url(&self, raw: &str) -> Result<String, GuestError> {
        cef_bridge::url_policy::normalize_address(raw).map_err(|e| GuestError::new(e.to_string()))
    }

    fn version(&self) -> BrowserVersion {
        if let Some(v) = self.version.lock().clone() {
            return v;
        }
        if let Some((_, b)) = self.usable().first() {
            self.learn_version_in_background(b.devtools());
        }
        fallback_version()
    }
}

/// Why the control planes did not start.
#[derive(Debug, thiserror::Error)]
pub enum CdpServersError {
    /// No per-boot token.
    #[error("no token for the browser agent server: {0}")]
    Token(#[from] RandomError),
    /// The CDP facade did not start.
    #[error("the CDP facade did not start: {0}")]
    Facade(#[source] FacadeError),
    /// The browser agent server did not start.
    #[error("the browser agent server did not start: {0}")]
    Agent(#[source] FacadeError),
}

/// A tab's download news as the facade tells its client (the guest id is the tab's address).
pub fn facade_download_notice(tab: &TabAddress, news: &DownloadNews<'_>) -> DownloadNotice {
    use cdp_facade::DownloadState as Told;
    let (guid, event) = match news {
        DownloadNews::Began { guid, url, suggested_name } => {
            (guid, DownloadEvent::Began { url: url.to_string(), suggested_filename: suggested_name.to_string() })
        }
        DownloadNews::Progress { guid, received, total, state } => {
            let state = match state {
                DownloadState::InProgress => Told::InProgress,
                DownloadState::Completed => Told::Completed,
                DownloadState::Canceled => Told::Canceled,
            };
            (guid, DownloadEvent::Progress { received: *received, total: *total, state })
        }
    };
    DownloadNotice { guest: GuestId::new(tab.to_string()), guid: guid.to_string(), event }
}

/// The browser agent server and (when enabled) the CDP facade, sharing one token.
pub struct CdpServers {
    facade: Option<Facade>,
    agent: AgentServer,
}

impl CdpServers {
    /// Starts the agent server (writing `<data_dir>/browser-agent.json`) and, when `facade` is true, the CDP facade.
    pub fn start(
        app: AppHandle,
        live: LiveBrowsers,
        downloads: DownloadPolicy,
        wants: PaintWants,
        data_dir: &Path,
        facade: bool,
    ) -> Result<Self, CdpServersError> {
        let token = Token::generate()?;
        let guests: Arc<dyn Guests> = Arc::new(AppGuests::new(app, live.clone(), downloads, wants));
        let facade = match facade {
            true => Some(
                Facade::start(FacadeConfig::from_env(), token.clone(), guests.clone())
                    .map_err(CdpServersError::Facade)?,
            ),
            false => None,
        };
        if let Some(f) = &facade {
            // A page opened any other way (tool server, the person, POST /open) reaches the client at once.
            let changed = f.guests_changed_notifier();
            live.watch(move || changed.notify());
        }
        let cdp_url = facade.as_ref().map(Facade::http_url);
        let agent = AgentServer::start(AgentServerConfig::default(), token, guests, data_dir, cdp_url)
            .map_err(CdpServersError::Agent)?;
        Ok(Self { facade, agent })
    }

    /// Whether the facade should run: `--cdp`, or the persisted setting in `agent_tools` (the tool server's directory).
    pub fn facade_wanted(cli_flag: bool, agent_tools: &Path) -> bool {
        cli_flag || agent_settings::facade_enabled(agent_tools)
    }

    /// Prints the endpoints on stdout: URLs and the discovery file only, never the token.
    pub fn announce(&self) {
        if let Some(url) = self.facade_url() {
            println!("termsprawl: CDP facade {url} (token in {})", self.discovery_file().display());
        }
        println!(
            "termsprawl: browser agent server {} (discovery file {})",
            self.agent_url(),
            self.discovery_file().display()
        );
    }

    /// The handle that tells the facade's client of downloads, if the facade runs.
    pub fn download_notifier(&self) -> Option<DownloadNotifier> {
        self.facade.as_ref().map(Facade::download_notifier)
    }

    /// The facade's `http://127.0.0.1:<port>` (discovery needs the token), if it runs.
    pub fn facade_url(&self) -> Option<String> {
        self.facade.as_ref().map(Facade::http_url)
    }

    /// The agent server's `http://127.0.0.1:<port>`.
    pub fn agent_url(&self) -> String {
        self.agent.url()
    }

    /// Where `browser-agent.json` (port, token, cdp URL) was written.
    pub fn discovery_file(&self) -> PathBuf {
        self.agent.discovery_file().to_path_buf()
    }

    /// Disconnects the CDP client, stops both servers and removes `browser-agent.json`.
    pub fn close(self) {
        if let Some(f) = self.facade {
            f.close();
        }
        self.agent.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fallback_version_is_cef_131() {
        let v = fallback_version();
        assert_eq!(v.product.split('/').nth(1), Some("131.0.6778.205"));
        assert!(!v.user_agent.contains("Headless"));
    }
}
