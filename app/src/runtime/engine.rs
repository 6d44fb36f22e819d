//! The runtime's only way to the browser engine: [`BrowserEngine`] (pump,
//! create and find browsers, shut down) and [`LiveBrowser`] (one page: its
//! view, input, navigation, DevTools channel and typed page driving).
//!
//! The app passes cef-bridge's [`Engine`] (and its [`BrowserHandle`]s), which
//! implement both here; tests pass fakes (`test_context`), so every browser
//! operation runs without Chromium. The methods are exactly what the runtime,
//! the window, the tool operations, the CDP facade and the canvas benchmark call, nothing more.

use cef_bridge::input::{ButtonsHeld, KeyInput, Modifiers, MouseButton};
use cef_bridge::{
    BrowserError, BrowserHandle, BrowserId, BrowserOptions, ContextMenu, DevToolsChannel, DownloadPolicy, Engine,
    EngineError, FileChooser, Frame, JsDialog, MenuCommand, RequestContextId, SitePermission, SiteSetting,
};
use page_driver::Page;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A live browser as the runtime holds it: shared, usable from any thread.
pub type Browser = Arc<dyn LiveBrowser>;

/// The browser engine the runtime drives on the main thread.
pub trait BrowserEngine {
    /// Runs the engine's pending work (CEF's message loop work).
    fn pump(&self);
    /// The longest the loop may go without pumping now.
    fn pump_interval(&self) -> Duration;
    /// When the next pump is due.
    fn next_pump_deadline(&self) -> Instant;
    /// Creates an off-screen browser (the URL must pass the policy).
    fn create_browser(&self, options: &BrowserOptions) -> Result<Browser, EngineError>;
    /// A live browser by id (a popup announced by an event).
    fn browser(&self, id: BrowserId) -> Option<Browser>;
    /// Creates an isolated request context (an in-memory profile of its own).
    fn create_context(&self) -> Result<RequestContextId, EngineError>;
    /// Drops an isolated context once its browsers were closed; false when it was not live.
    fn dispose_context(&self, id: RequestContextId) -> bool;
    /// Sets site permissions for the pages of an isolated context (`site`: an origin; `None`: every site).
    fn set_site_permissions(
        &self,
        context: RequestContextId,
        site: Option<&str>,
        permissions: &[SitePermission],
        setting: SiteSetting,
    ) -> Result<(), EngineError>;
    /// Puts every site permission of an isolated context back to Chromium's default.
    fn reset_site_permissions(&self, context: RequestContextId) -> Result<(), EngineError>;
    /// Where downloads go (settable from any thread: the CDP facade's `Browser.setDownloadBehavior`).
    fn download_policy(&self) -> DownloadPolicy;
    /// Closes every browser and stops the engine.
    fn shutdown(self: Box<Self>);
}

/// One off-screen page.
pub trait LiveBrowser: Send + Sync {
    /// This browser's id.
    fn id(&self) -> BrowserId;
    /// The isolated request context it lives in (`None`: the person's profile).
    fn context(&self) -> Option<RequestContextId>;
    /// The page's DevTools channel (raw: the CDP facade relays a client's text on it).
    fn devtools(&self) -> Arc<DevToolsChannel>;
    /// The page, driven by typed operations: over [`devtools`](Self::devtools),
    /// unless a fake page answers them itself.
    fn page(&self) -> Arc<dyn Page> {
        Arc::new(crate::page_transport::cdp_page(self.devtools()))
    }
    /// The current URL.
    fn url(&self) -> String;
    /// Whether the page is loading.
    fn is_loading(&self) -> bool;
    /// Whether the engine created the browser yet.
    fn is_created(&self) -> bool;
    /// Whether the browser closed.
    fn is_closed(&self) -> bool;
    /// The view size in CSS pixels.
    fn view_size(&self) -> (u32, u32);
    /// The frame painted since the last take, if any.
    fn take_frame(&self) -> Option<Frame>;
    /// The last painted frame, whole.
    fn last_frame(&self) -> Option<Frame>;
    /// Asks for the next frame announcement (nothing uploaded this one).
    fn acknowledge_frame(&self);
    /// The device scale factor (device pixels per CSS pixel).
    fn scale(&self) -> f32;
    /// Sets the device scale factor.
    fn set_scale(&self, scale: f32) -> Result<(), BrowserError>;
    /// Changes the view size in CSS pixels.
    fn resize(&self, width: u32, height: u32) -> Result<(), BrowserError>;
    /// Navigates the main frame; returns the normalised URL.
    fn navigate(&self, address: &str) -> Result<String, BrowserError>;
    /// Goes back one entry in the page's history.
    fn go_back(&self) -> Result<(), BrowserError>;
    /// Goes forward one entry in the page's history.
    fn go_forward(&self) -> Result<(), BrowserError>;
    /// Reloads the page.
    fn reload(&self) -> Result<(), BrowserError>;
    /// Stops loading.
    fn stop(&self) -> Result<(), BrowserError>;
    /// Finds `text` in the page (next match, or the previous one when not `forward`;
    /// `find_next` continues the same search); `FindResult` events report the count.
    fn find(&self, text: &str, forward: bool, find_next: bool) -> Result<(), BrowserError>;
    /// Ends find-in-page and clears its highlights.
    fn stop_finding(&self) -> Result<(), BrowserError>;
    /// Closes the browser; a `Closed` event follows.
    fn close(&self) -> Result<(), BrowserError>;
    /// Asks for a full repaint.
    fn invalidate(&self) -> Result<(), BrowserError>;
    /// Sets how often the page paints (1..=60 frames a second).
    fn set_frame_rate(&self, fps: u32) -> Result<(), BrowserError>;
    /// The paint rate last set.
    fn frame_rate(&self) -> u32;
    /// Hides the page as a background tab (no painting, `visibilityState` "hidden") or shows it.
    fn set_hidden(&self, hidden: bool) -> Result<(), BrowserError>;
    /// Whether the page was last hidden.
    fn is_hidden(&self) -> bool;
    /// Gives or takes keyboard focus.
    fn set_focus(&self, focused: bool) -> Result<(), BrowserError>;
    /// Mouse moved to view coordinates (or left the view).
    fn send_mouse_move(
        &self,
        x: i32,
        y: i32,
        modifiers: Modifiers,
        buttons: ButtonsHeld,
        leave: bool,
    ) -> Result<(), BrowserError>;
    /// A mouse button went down or up at view coordinates.
    fn send_mouse_click(
        &self,
        x: i32,
        y: i32,
        button: MouseButton,
        up: bool,
        click_count: u32,
        modifiers: Modifiers,
    ) -> Result<(), BrowserError>;
    /// Wheel scrolled at view coordinates.
    fn send_mouse_wheel(&self, x: i32, y: i32, dx: i32, dy: i32, modifiers: Modifiers) -> Result<(), BrowserError>;
    /// A key press or release.
    fn send_key(&self, key: &KeyInput) -> Result<(), BrowserError>;
    /// The file chooser the page waits on, if any.
    fn file_chooser(&self) -> Option<FileChooser>;
    /// Answers the open file chooser with the chosen paths, or cancels it (`None`).
    fn answer_file_chooser(&self, paths: Option<Vec<PathBuf>>) -> Result<(), BrowserError>;
    /// The JavaScript dialog the page waits on, if any.
    fn dialog(&self) -> Option<JsDialog>;
    /// Answers the open dialog (OK or Cancel; a prompt's text, its default when `None`).
    fn answer_dialog(&self, accept: bool, prompt_text: Option<&str>) -> Result<JsDialog, BrowserError>;
    /// The context menu the page waits on, if any.
    fn context_menu(&self) -> Option<ContextMenu>;
    /// Answers the open context menu with an entry (the page's own are done by it) or none.
    fn answer_context_menu(&self, command: Option<MenuCommand>) -> Result<ContextMenu, BrowserError>;
}

impl BrowserEngine for Engine {
    fn pump(&self) {
        Engine::pump(self);
    }
    fn pump_interval(&self) -> Duration {
        Engine::pump_interval(self)
    }
    fn next_pump_deadline(&self) -> Instant {
        Engine::next_pump_deadline(self)
    }
    fn create_browser(&self, options: &BrowserOptions) -> Result<Browser, EngineError> {
        Engine::create_browser(self, options).map(|b| Arc::new(b) as Browser)
    }
    fn browser(&self, id: BrowserId) -> Option<Browser> {
        Engine::browser(self, id).map(|b| Arc::new(b) as Browser)
    }
    fn create_context(&self) -> Result<RequestContextId, EngineError> {
        Engine::create_request_context(self)
    }
    fn dispose_context(&self, id: RequestContextId) -> bool {
        Engine::dispose_request_context(self, id)
    }
    fn set_site_permissions(
        &self,
        context: RequestContextId,
        site: Option<&str>,
        permissions: &[SitePermission],
        setting: SiteSetting,
    ) -> Result<(), EngineError> {
        Engine::set_site_permissions(self, context, site, permissions, setting)
    }
    fn reset_site_permissions(&self, context: RequestContextId) -> Result<(), EngineError> {
        Engine::reset_site_permissions(self, context)
    }
    fn download_policy(&self) -> DownloadPolicy {
        Engine::download_policy(self)
    }
    fn shutdown(self: Box<Self>) {
        Engine::shutdown(*self);
    }
}

impl LiveBrowser for BrowserHandle {
    fn id(&self) -> BrowserId {
        BrowserHandle::id(self)
    }
    fn context(&self) -> Option<RequestContextId> {
        BrowserHandle::context(self)
    }
    fn devtools(&self) -> Arc<DevToolsChannel> {
        BrowserHandle::devtools(self)
    }
    fn url(&self) -> String {
        BrowserHandle::url(self)
    }
    fn is_loading(&self) -> bool {
        BrowserHandle::is_loading(self)
    }
    fn is_created(&self) -> bool {
        BrowserHandle::is_created(self)
    }
    fn is_closed(&self) -> bool {
        BrowserHandle::is_closed(self)
    }
    fn view_size(&self) -> (u32, u32) {
        BrowserHandle::view_size(self)
    }
    fn take_frame(&self) -> Option<Frame> {
        BrowserHandle::take_frame(self)
    }
    fn last_frame(&self) -> Option<Frame> {
        BrowserHandle::last_frame(self)
    }
    fn acknowledge_frame(&self) {
        BrowserHandle::acknowledge_frame(self);
    }
    fn scale(&self) -> f32 {
        BrowserHandle::scale(self)
    }
    fn set_scale(&self, scale: f32) -> Result<(), BrowserError> {
        BrowserHandle::set_scale(self, scale)
    }
    fn resize(&self, width: u32, height: u32) -> Result<(), BrowserError> {
        BrowserHandle::resize(self, width, height)
    }
    fn navigate(&self, address: &str) -> Result<String, BrowserError> {
        BrowserHandle::navigate(self, address)
    }
    fn go_back(&self) -> Result<(), BrowserError> {
        BrowserHandle::go_back(self)
    }
    fn go_forward(&self) -> Result<(), BrowserError> {
        BrowserHandle::go_forward(self)
    }
    fn reload(&self) -> Result<(), BrowserError> {
        BrowserHandle::reload(self)
    }
    fn stop(&self) -> Result<(), BrowserError> {
        BrowserHandle::stop(self)
    }
    fn find(&self, text: &str, forward: bool, find_next: bool) -> Result<(), BrowserError> {
        BrowserHandle::find(self, text, forward, find_next)
    }
    fn stop_finding(&self) -> Result<(), BrowserError> {
        BrowserHandle::stop_finding(self)
    }
    fn close(&self) -> Result<(), BrowserError> {
        BrowserHandle::close(self)
    }
    fn invalidate(&self) -> Result<(), BrowserError> {
        BrowserHandle::invalidate(self)
    }
    fn set_frame_rate(&self, fps: u32) -> Result<(), BrowserError> {
        BrowserHandle::set_frame_rate(self, fps)
    }
    fn frame_rate(&self) -> u32 {
        BrowserHandle::frame_rate(self)
    }
    fn set_hidden(&self, hidden: bool) -> Result<(), BrowserError> {
        BrowserHandle::set_hidden(self, hidden)
    }
    fn is_hidden(&self) -> bool {
        BrowserHandle::is_hidden(self)
    }
    fn set_focus(&self, focused: bool) -> Result<(), BrowserError> {
        BrowserHandle::set_focus(self, focused)
    }
    fn send_mouse_move(
        &self,
        x: i32,
        y: i32,
        modifiers: Modifiers,
        buttons: ButtonsHeld,
        leave: bool,
    ) -> Result<(), BrowserError> {
        BrowserHandle::send_mouse_move(self, x, y, modifiers, buttons, leave)
    }
    fn send_mouse_click(
        &self,
        x: i32,
        y: i32,
        button: MouseButton,
        up: bool,
        click_count: u32,
        modifiers: Modifiers,
    ) -> Result<(), BrowserError> {
        BrowserHandle::send_mouse_click(self, x, y, button, up, click_count, modifiers)
    }
    fn send_mouse_wheel(&self, x: i32, y: i32, dx: i32, dy: i32, modifiers: Modifiers) -> Result<(), BrowserError> {
        BrowserHandle::send_mouse_wheel(self, x, y, dx, dy, modifiers)
    }
    fn send_key(&self, key: &KeyInput) -> Result<(), BrowserError> {
        BrowserHandle::send_key(self, key)
    }
    fn file_chooser(&self) -> Option<FileChooser> {
        BrowserHandle::file_chooser(self)
    }
    fn answer_file_chooser(&self, paths: Option<Vec<PathBuf>>) -> Result<(), BrowserError> {
        BrowserHandle::answer_file_chooser(self, paths)
    }
    fn dialog(&self) -> Option<JsDialog> {
        BrowserHandle::dialog(self)
    }
    fn answer_dialog(&self, accept: bool, prompt_text: Option<&str>) -> Result<JsDialog, BrowserError> {
        BrowserHandle::answer_dialog(self, accept, prompt_text)
    }
    fn context_menu(&self) -> Option<ContextMenu> {
        BrowserHandle::context_menu(self)
    }
    fn answer_context_menu(&self, command: Option<MenuCommand>) -> Result<ContextMenu, BrowserError> {
        BrowserHandle::answer_context_menu(self, command)
    }
}
