//! Off-screen browsers: the shared state CEF callbacks write and the
//! [`BrowserHandle`] the app uses from any thread.

use crate::context_id::RequestContextId;
use crate::context_menu::{ContextMenu, MenuCommand};
use crate::cross_thread::CefRef;
use crate::devtools::{DevToolsChannel, RawSender};
use crate::events::{BrowserId, DialogKind, Frame, JsDialog, PixelRect};
use crate::file_chooser::FileChooser;
use crate::input::{self, ButtonsHeld, KeyEventKind, KeyInput, Modifiers, MouseButton};
use crate::pump::Pump;
use crate::ui_thread::run_on_ui;
use crate::url_policy;
use cef::{
    sys, ImplBrowser, ImplBrowserHost, ImplFileDialogCallback, ImplFrame, ImplJsdialogCallback,
    ImplRunContextMenuCallback,
};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use thiserror::Error;

/// Frame rate of a visible browser.
pub const DEFAULT_FRAME_RATE: u32 = 60;
/// Size given to a popup until the app sizes its node.
pub const DEFAULT_POPUP_SIZE: (i32, i32) = (800, 600);
/// Largest view edge accepted (Chromium's own texture limit is 16384).
pub const MAX_VIEW_EDGE: u32 = 16384;
/// Smallest and largest device scale factor a view may have.
pub const SCALE_RANGE: (f32, f32) = (0.25, 4.0);

/// Errors of browser operations.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BrowserError {
    /// The URL policy refused the address.
    #[error("refused url: {0}")]
    Refused(#[from] url_policy::UrlPolicyError),
    /// The browser already closed.
    #[error("browser closed")]
    Closed,
    /// A size of zero or beyond the limit.
    #[error("invalid view size {0}x{1} (1..={MAX_VIEW_EDGE})")]
    InvalidSize(u32, u32),
    /// A device scale factor that is not a number, or would make the view too large.
    #[error("invalid device scale factor {0} (a number within {SCALE_RANGE:?}, the view at most {MAX_VIEW_EDGE} device pixels a side)")]
    InvalidScale(String),
    /// CEF refused to create the browser.
    #[error("CEF could not create the browser")]
    CreateFailed,
    /// An answer to a JavaScript dialog when none is open (Chromium's wording).
    #[error("No dialog is showing")]
    NoDialog,
    /// An answer to a file chooser when none is open.
    #[error("no file chooser is open")]
    NoFileChooser,
    /// An answer to a context menu when none is open.
    #[error("no context menu is open")]
    NoContextMenu,
    /// A command the open context menu does not offer (or offers disabled).
    #[error("\"{}\" is not an entry of the open context menu", .0.label())]
    NotInMenu(MenuCommand),
}

/// What the app asks for when creating a browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserOptions {
    /// First URL (must pass the URL policy).
    pub url: String,
    /// View width in pixels.
    pub width: u32,
    /// View height in pixels.
    pub height: u32,
    /// Paint rate in frames per second (1..=60).
    pub frame_rate: u32,
    /// The isolated request context the page lives in; `None`: the person's profile.
    pub context: Option<RequestContextId>,
}

impl BrowserOptions {
    /// Options for a view of `width`×`height` showing `url` at the default frame rate.
    pub fn new(url: impl Into<String>, width: u32, height: u32) -> Self {
        Self { url: url.into(), width, height, frame_rate: DEFAULT_FRAME_RATE, context: None }
    }
}

pub(crate) fn check_size(width: u32, height: u32) -> Result<(i32, i32), BrowserError> {
    if width == 0 || height == 0 || width > MAX_VIEW_EDGE || height > MAX_VIEW_EDGE {
        return Err(BrowserError::InvalidSize(width, height));
    }
    Ok((width as i32, height as i32))
}

#[derive(Default)]
struct PopupLayer {
    visible: bool,
    rect: (i32, i32, i32, i32),
    pixels: Vec<u8>,
    width: i32,
    height: i32,
}

#[derive(Default)]
pub(crate) struct FrameSlot {
    bgra: Vec<u8>,
    width: u32,
    height: u32,
    dirty: Vec<PixelRect>,
    popup: PopupLayer,
}

impl FrameSlot {
    fn add_dirty(&mut self, r: PixelRect) {
        // Keep the list short: beyond a handful of rects the union is cheaper to upload.
        if self.dirty.len() >= 16 {
            self.dirty.clear();
            self.dirty.push(PixelRect { x: 0, y: 0, width: self.width, height: self.height });
        } else {
            self.dirty.push(r);
        }
    }

    fn blit_popup(&mut self) {
        let p = &self.popup;
        if !p.visible || p.pixels.is_empty() {
            return;
        }
        let (px, py) = (p.rect.0, p.rect.1);
        for row in 0..p.height {
            let y = py + row;
            if y < 0 || y >= self.height as i32 {
                continue;
            }
            let x0 = px.max(0);
            let x1 = (px + p.width).min(self.width as i32);
            if x1 <= x0 {
                continue;
            }
            let src = ((row * p.width + (x0 - px)) * 4) as usize;
            let dst = ((y as u32 * self.width + x0 as u32) * 4) as usize;
            let n = ((x1 - x0) * 4) as usize;
            if let (Some(s), Some(d)) = (p.pixels.get(src..src + n), self.bgra.get_mut(dst..dst + n)) {
                d.copy_from_slice(s);
            }
        }
    }
}

/// Mutable page state mirrored from CEF callbacks.
#[derive(Debug, Clone, Default)]
pub(crate) struct PageState {
    pub(crate) url: String,
    pub(crate) title: String,
    pub(crate) loading: bool,
}

/// A JavaScript dialog CEF handed over, with the callback that answers it.
pub(crate) struct PendingDialog {
    pub(crate) dialog: JsDialog,
    /// Taken by the answer; the entry stays until CEF reports the dialog closed.
    pub(crate) callback: Option<CefRef<cef::JsdialogCallback>>,
}

/// A file chooser CEF handed over, with the callback that answers it.
pub(crate) struct PendingChooser {
    pub(crate) chooser: FileChooser,
    pub(crate) callback: CefRef<cef::FileDialogCallback>,
}

/// A context menu CEF handed over, with the callback that answers it.
pub(crate) struct PendingMenu {
    pub(crate) menu: ContextMenu,
    pub(crate) callback: CefRef<cef::RunContextMenuCallback>,
}

/// State shared between CEF callbacks (UI thread) and handles (any thread).
pub(crate) struct BrowserShared {
    pub(crate) id: BrowserId,
    pub(crate) size: Mutex<(i32, i32)>,
    pub(crate) frame: Mutex<FrameSlot>,
    pub(crate) frame_pending: AtomicBool,
    pub(crate) devtools: Arc<DevToolsChannel>,
    pub(crate) host: Mutex<Option<CefRef<cef::BrowserHost>>>,
    pub(crate) browser: Mutex<Option<CefRef<cef::Browser>>>,
    pub(crate) registration: Mutex<Option<CefRef<cef::Registration>>>,
    pub(crate) page: Mutex<PageState>,
    pub(crate) cef_id: Mutex<Option<i32>>,
    pub(crate) opener: Option<BrowserId>,
    /// The isolated request context it lives in (a popup: its opener's).
    pub(crate) context: Option<RequestContextId>,
    pub(crate) frame_rate: Mutex<u32>,
    /// Hidden as a background tab is (no painting, `document.visibilityState` "hidden").
    pub(crate) hidden: AtomicBool,
    pub(crate) closed: AtomicBool,
    /// Device pixels per CSS pixel (the `f32` bits), reported through `get_screen_info`.
    pub(crate) scale: AtomicU32,
    /// The JavaScript dialog waiting for an answer (one at a time per page, as in Chromium).
    pub(crate) dialog: Mutex<Option<PendingDialog>>,
    /// The file chooser waiting for the app's answer (one at a time per page).
    pub(crate) file_chooser: Mutex<Option<PendingChooser>>,
    /// The context menu waiting for the app's answer (one at a time per page, as CEF shows them).
    pub(crate) context_menu: Mutex<Option<PendingMenu>>,
    /// The keyboard focus the app gave the page (none until it does): a browser
    /// still being created gets it, and CEF's own focus requests (it focuses a
    /// page it loads a URL in, unlike Chromium) are refused without it.
    pub(crate) focused: AtomicBool,
}

impl BrowserShared {
    pub(crate) fn new(
        id: BrowserId,
        size: (i32, i32),
        url: &str,
        opener: Option<BrowserId>,
        context: Option<RequestContextId>,
        frame_rate: u32,
        pump: Arc<Pump>,
    ) -> Self {
        Self {
            id,
            size: Mutex::new(size),
            frame: Mutex::new(FrameSlot::default()),
            frame_pending: AtomicBool::new(false),
            devtools: Arc::new(DevToolsChannel::with_pump(pump)),
            host: Mutex::new(None),
            browser: Mutex::new(None),
            registration: Mutex::new(None),
            page: Mutex::new(PageState { url: url.to_string(), ..Default::default() }),
            cef_id: Mutex::new(None),
            opener,
            context,
            frame_rate: Mutex::new(frame_rate),
            hidden: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            scale: AtomicU32::new(1.0f32.to_bits()),
            dialog: Mutex::new(None),
            file_chooser: Mutex::new(None),
            context_menu: Mutex::new(None),
            focused: AtomicBool::new(false),
        }
    }

    /// Records the keyboard focus the app gives the page.
    pub(crate) fn want_focus(&self, focused: bool) {
        self.focused.store(focused, Ordering::Release);
    }

    /// The keyboard focus the app gave the page: its last word, else none (as Chromium's pages).
    pub(crate) fn focus_given(&self) -> bool {
        self.focused.load(Ordering::Acquire)
    }

    /// The device scale factor.
    pub(crate) fn scale(&self) -> f32 {
        f32::from_bits(self.scale.load(Ordering::Acquire))
    }

    /// Stores a painted view; returns true when the app must be told (first unread frame).
    pub(crate) fn store_view(&self, buffer: &[u8], width: u32, height: u32, dirty: &[PixelRect]) -> bool {
        let mut slot = self.frame.lock();
        if slot.width != width || slot.height != height {
            slot.width = width;
            slot.height = height;
            slot.dirty.clear();
            slot.dirty.push(PixelRect { x: 0, y: 0, width, height });
        } else {
            for r in dirty {
                slot.add_dirty(*r);
            }
        }
        slot.bgra.clear();
        slot.bgra.extend_from_slice(buffer);
        slot.blit_popup();
        drop(slot);
        !self.frame_pending.swap(true, Ordering::AcqRel)
    }

    /// Stores a painted `<select>`/popup widget and composites it over the view.
    pub(crate) fn store_popup(&self, buffer: &[u8], width: i32, height: i32) -> bool {
        let mut slot = self.frame.lock();
        slot.popup.pixels.clear();
        slot.popup.pixels.extend_from_slice(buffer);
        slot.popup.width = width;
        slot.popup.height = height;
        slot.blit_popup();
        let r = slot.popup.rect;
        slot.add_dirty(PixelRect {
            x: r.0.max(0) as u32,
            y: r.1.max(0) as u32,
            width: width.max(0) as u32,
            height: height.max(0) as u32,
        });
        drop(slot);
        !self.frame_pending.swap(true, Ordering::AcqRel)
    }

    pub(crate) fn popup_show(&self, show: bool) {
        let mut slot = self.frame.lock();
        slot.popup.visible = show;
        if !show {
            slot.popup.pixels.clear();
        }
    }

    pub(crate) fn popup_rect(&self, rect: (i32, i32, i32, i32)) {
        self.frame.lock().popup.rect = rect;
    }

    /// Runs `f` with the browser host on the UI thread (skipped once the browser closed).
    fn with_host(self: &Arc<Self>, f: impl FnOnce(&cef::BrowserHost) + Send + 'static) -> Result<(), BrowserError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(BrowserError::Closed);
        }
        let shared = self.clone();
        run_on_ui(move || {
            // `on_before_close` takes the host before the browser goes.
            let host = shared.host.lock().as_ref().map(|h| h.0.clone());
            if let Some(h) = host {
                f(&h);
            }
        });
        Ok(())
    }

    /// Runs `f` with the browser on the UI thread (skipped once the browser closed).
    fn with_browser(self: &Arc<Self>, f: impl FnOnce(&cef::Browser) + Send + 'static) -> Result<(), BrowserError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(BrowserError::Closed);
        }
        let shared = self.clone();
        run_on_ui(move || {
            let b = shared.browser.lock().as_ref().map(|b| b.0.clone());
            if let Some(b) = b {
                f(&b);
            }
        });
        Ok(())
    }
}

/// Sends DevTools messages through a browser host.
pub(crate) struct HostSender(pub(crate) CefRef<cef::BrowserHost>);

impl RawSender for HostSender {
    fn send_raw(&self, message: &[u8]) {
        // Off the UI thread this returns 0 but CEF still posts and delivers it.
        self.0 .0.send_dev_tools_message(Some(message));
    }
}

/// The app's handle to one off-screen browser; clone freely, use from any thread.
#[derive(Clone)]
pub struct BrowserHandle {
    pub(crate) shared: Arc<BrowserShared>,
}

impl std::fmt::Debug for BrowserHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrowserHandle").field("id", &self.shared.id).finish()
    }
}

fn mouse_event(x: i32, y: i32, modifiers: Modifiers, buttons: ButtonsHeld) -> cef::MouseEvent {
    cef::MouseEvent { x, y, modifiers: input::event_flags(modifiers, buttons) }
}

impl BrowserHandle {
    /// This browser's id.
    pub fn id(&self) -> BrowserId {
        self.shared.id
    }

    /// The isolated request context the page lives in (`None`: the person's profile).
    pub fn context(&self) -> Option<RequestContextId> {
        self.shared.context
    }

    /// The browser's DevTools channel.
    pub fn devtools(&self) -> Arc<DevToolsChannel> {
        self.shared.devtools.clone()
    }

    /// The browser that opened this one as a popup, if any.
    pub fn opener(&self) -> Option<BrowserId> {
        self.shared.opener
    }

    /// Current main-frame URL.
    pub fn url(&self) -> String {
        self.shared.page.lock().url.clone()
    }

    /// Current page title.
    pub fn title(&self) -> String {
        self.shared.page.lock().title.clone()
    }

    /// True while the page is loading.
    pub fn is_loading(&self) -> bool {
        self.shared.page.lock().loading
    }

    /// True once the browser has closed.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::Acquire)
    }

    /// True once CEF created the browser (its DevTools channel is attached).
    pub fn is_created(&self) -> bool {
        self.shared.host.lock().is_some()
    }

    /// The view size in CSS pixels (what the page lays out in; input goes in these).
    /// Frames come at this size times [`scale`](Self::scale).
    pub fn view_size(&self) -> (u32, u32) {
        let (w, h) = *self.shared.size.lock();
        (w as u32, h as u32)
    }

    /// Takes the latest frame if one was painted since the last take.
    pub fn take_frame(&self) -> Option<Frame> {
        if !self.shared.frame_pending.swap(false, Ordering::AcqRel) {
            return None;
        }
        let mut slot = self.shared.frame.lock();
        if slot.bgra.is_empty() {
            return None;
        }
        let dirty = std::mem::take(&mut slot.dirty);
        Some(Frame { width: slot.width, height: slot.height, bgra: slot.bgra.clone(), dirty })
    }

    /// Acknowledges a `FrameReady` without copying the frame, so the next paint
    /// is announced again (for consumers that read [`last_frame`](Self::last_frame) later).
    pub fn acknowledge_frame(&self) {
        self.shared.frame_pending.store(false, Ordering::Release);
    }

    /// The latest frame whether or not it was taken before (None before the first paint).
    pub fn last_frame(&self) -> Option<Frame> {
        let slot = self.shared.frame.lock();
        if slot.bgra.is_empty() {
            return None;
        }
        Some(Frame {
            width: slot.width,
            height: slot.height,
            bgra: slot.bgra.clone(),
            dirty: vec![PixelRect { x: 0, y: 0, width: slot.width, height: slot.height }],
        })
    }

    /// The device scale factor: device pixels per CSS pixel (1 unless set).
    pub fn scale(&self) -> f32 {
        self.shared.scale()
    }

    /// Sets the device scale factor, kept within [`SCALE_RANGE`]: the page keeps its
    /// CSS layout and paints `scale` times as many pixels each way (`window.devicePixelRatio`
    /// follows). A canvas zoom can then be painted sharp without relayout.
    pub fn set_scale(&self, scale: f32) -> Result<(), BrowserError> {
        if !scale.is_finite() {
            return Err(BrowserError::InvalidScale(scale.to_string()));
        }
        let scale = scale.clamp(SCALE_RANGE.0, SCALE_RANGE.1);
        let (w, h) = *self.shared.size.lock();
        if (w as f32 * scale).round() as u32 > MAX_VIEW_EDGE || (h as f32 * scale).round() as u32 > MAX_VIEW_EDGE {
            return Err(BrowserError::InvalidScale(scale.to_string()));
        }
        if self.shared.scale.swap(scale.to_bits(), Ordering::AcqRel) == scale.to_bits() || !self.is_created() {
            return Ok(());
        }
        self.shared.with_host(|h| {
            h.notify_screen_info_changed();
            h.was_resized();
        })
    }

    /// Changes the view size in CSS pixels (the node's body in world units when the
    /// scale follows the zoom; its displayed size otherwise).
    pub fn resize(&self, width: u32, height: u32) -> Result<(), BrowserError> {
        let size = check_size(width, height)?;
        {
            let mut cur = self.shared.size.lock();
            if *cur == size {
                return Ok(());
            }
            *cur = size;
        }
        self.shared.with_host(|h| h.was_resized())
    }

    /// Navigates the main frame (the URL must pass the policy; it is normalised first).
    pub fn navigate(&self, address: &str) -> Result<String, BrowserError> {
        let url = url_policy::normalize_address(address)?;
        let target = url.clone();
        self.shared.with_browser(move |b| {
            if let Some(frame) = b.get_main_frame() {
                frame.load_url(Some(&cef::CefStringUtf16::from(target.as_str())));
            }
        })?;
        Ok(url)
    }

    /// Reloads the page (also recovers a crashed renderer).
    pub fn reload(&self) -> Result<(), BrowserError> {
        self.shared.with_browser(|b| b.reload())
    }

    /// Goes back in history.
    pub fn go_back(&self) -> Result<(), BrowserError> {
        self.shared.with_browser(|b| b.go_back())
    }

    /// Goes forward in history.
    pub fn go_forward(&self) -> Result<(), BrowserError> {
        self.shared.with_browser(|b| b.go_forward())
    }

    /// Stops loading.
    pub fn stop(&self) -> Result<(), BrowserError> {
        self.shared.with_browser(|b| b.stop_load())
    }

    /// Finds `text` in the page and highlights a match: the next one after the
    /// current (`forward`) or the one before; `find_next` continues the same
    /// search rather than starting over. `FindResult` events report the count.
    pub fn find(&self, text: &str, forward: bool, find_next: bool) -> Result<(), BrowserError> {
        let text = text.to_string();
        self.shared.with_host(move |h| {
            let search = cef::CefStringUtf16::from(text.as_str());
            h.find(Some(&search), i32::from(forward), 0, i32::from(find_next));
        })
    }

    /// Ends find-in-page and removes its highlights (the active match's selection too).
    pub fn stop_finding(&self) -> Result<(), BrowserError> {
        self.shared.with_host(|h| h.stop_finding(1))
    }

    /// The JavaScript dialog the page is waiting on, if any.
    pub fn dialog(&self) -> Option<JsDialog> {
        self.shared.dialog.lock().as_ref().filter(|p| p.callback.is_some()).map(|p| p.dialog.clone())
    }

    /// Answers the open JavaScript dialog: `accept` is OK (true) or Cancel;
    /// `prompt_text` is what a `prompt()` returns when accepted (its default
    /// text when `None`). Returns the dialog answered; a `DialogClosed` event follows.
    pub fn answer_dialog(&self, accept: bool, prompt_text: Option<&str>) -> Result<JsDialog, BrowserError> {
        let (dialog, callback) = {
            let mut slot = self.shared.dialog.lock();
            let pending = slot.as_mut().ok_or(BrowserError::NoDialog)?;
            let callback = pending.callback.take().ok_or(BrowserError::NoDialog)?;
            (pending.dialog.clone(), callback)
        };
        let text = match dialog.kind {
            DialogKind::Prompt => Some(prompt_text.unwrap_or(&dialog.default_prompt).to_string()),
            _ => None,
        };
        run_on_ui(move || {
            let input = text.as_deref().map(cef::CefStringUtf16::from);
            callback.0.cont(i32::from(accept), input.as_ref());
        });
        Ok(dialog)
    }

    /// The file chooser the page waits on, if any.
    pub fn file_chooser(&self) -> Option<FileChooser> {
        self.shared.file_chooser.lock().as_ref().map(|p| p.chooser.clone())
    }

    /// Answers the open file chooser with the paths chosen, or cancels it
    /// (`None`); the page's input sees them as the person's choice.
    pub fn answer_file_chooser(&self, paths: Option<Vec<std::path::PathBuf>>) -> Result<(), BrowserError> {
        let pending = self.shared.file_chooser.lock().take().ok_or(BrowserError::NoFileChooser)?;
        run_on_ui(move || match paths {
            Some(paths) => {
                // SAFETY: a fresh list, owned here and freed by its drop after CEF copied it.
                let mut list = cef::CefStringList::from(unsafe { cef::sys::cef_string_list_alloc() });
                for p in &paths {
                    let s = cef::CefStringUtf16::from(p.to_string_lossy().as_ref());
                    let raw: *const cef::sys::_cef_string_utf16_t = (&s).into();
                    let target: *mut cef::sys::_cef_string_list_t = (&mut list).into();
                    // SAFETY: both pointers are live for this call; CEF copies the string.
                    unsafe { cef::sys::cef_string_list_append(target, raw) };
                }
                pending.callback.0.cont(Some(&mut list));
            }
            None => pending.callback.0.cancel(),
        });
        Ok(())
    }

    /// The context menu the page opened, if one waits for an answer.
    pub fn context_menu(&self) -> Option<ContextMenu> {
        self.shared.context_menu.lock().as_ref().map(|p| p.menu.clone())
    }

    /// Answers the open context menu: the page does what `command` says
    /// (back, copy, paste…), or nothing with `None`. The app's own commands
    /// (a link in a new tab, an address copied) close the menu and are the
    /// caller's to carry out, with the address the returned menu holds.
    /// A `ContextMenuClosed` event follows.
    pub fn answer_context_menu(&self, command: Option<MenuCommand>) -> Result<ContextMenu, BrowserError> {
        let pending = {
            let mut slot = self.shared.context_menu.lock();
            let open = slot.as_ref().ok_or(BrowserError::NoContextMenu)?;
            if let Some(c) = command.filter(|c| !open.menu.offers(*c)) {
                return Err(BrowserError::NotInMenu(c));
            }
            slot.take().ok_or(BrowserError::NoContextMenu)?
        };
        let id = command.and_then(MenuCommand::cef_id);
        let callback = pending.callback;
        run_on_ui(move || match id {
            Some(id) => callback.0.cont(id, cef::EventFlags::default()),
            None => callback.0.cancel(),
        });
        Ok(pending.menu)
    }

    /// Closes the browser; a `Closed` event follows.
    pub fn close(&self) -> Result<(), BrowserError> {
        self.shared.with_host(|h| h.close_browser(1))
    }

    /// Gives or takes keyboard focus; before the browser exists, it gets this focus once created.
    pub fn set_focus(&self, focused: bool) -> Result<(), BrowserError> {
        self.shared.want_focus(focused);
        self.shared.with_host(move |h| h.set_focus(i32::from(focused)))
    }

    /// Hides the page as Chromium hides a background tab (it stops painting,
    /// its timers slow down and it reads `document.visibilityState` "hidden")
    /// or shows it again; before the browser exists, it is made so once created.
    pub fn set_hidden(&self, hidden: bool) -> Result<(), BrowserError> {
        self.shared.hidden.store(hidden, Ordering::Release);
        self.shared.with_host(move |h| h.was_hidden(i32::from(hidden)))
    }

    /// Whether the page was last hidden.
    pub fn is_hidden(&self) -> bool {
        self.shared.hidden.load(Ordering::Acquire)
    }

    /// Sets the paint rate (1..=60 fps); lower it for small or idle nodes.
    pub fn set_frame_rate(&self, fps: u32) -> Result<(), BrowserError> {
        let fps = fps.clamp(1, 60);
        *self.shared.frame_rate.lock() = fps;
        self.shared.with_host(move |h| h.set_windowless_frame_rate(fps as i32))
    }

    /// The paint rate last set (or the one the browser was made with).
    pub fn frame_rate(&self) -> u32 {
        *self.shared.frame_rate.lock()
    }

    /// Asks for a full repaint.
    pub fn invalidate(&self) -> Result<(), BrowserError> {
        self.shared.with_host(|h| h.invalidate(cef::PaintElementType::from(sys::cef_paint_element_type_t::PET_VIEW)))
    }

    /// Mouse moved to view coordinates (or left the view).
    pub fn send_mouse_move(
        &self,
        x: i32,
        y: i32,
        modifiers: Modifiers,
        buttons: ButtonsHeld,
        leave: bool,
    ) -> Result<(), BrowserError> {
        let ev = mouse_event(x, y, modifiers, buttons);
        self.shared.with_host(move |h| h.send_mouse_move_event(Some(&ev), i32::from(leave)))
    }

    /// A mouse button went down or up at view coordinates.
    pub fn send_mouse_click(
        &self,
        x: i32,
        y: i32,
        button: MouseButton,
        up: bool,
        click_count: u32,
        modifiers: Modifiers,
    ) -> Result<(), BrowserError> {
        let held = ButtonsHeld {
            left: button == MouseButton::Left && !up,
            middle: button == MouseButton::Middle && !up,
            right: button == MouseButton::Right && !up,
        };
        let ev = mouse_event(x, y, modifiers, held);
        let b = match button {
            MouseButton::Left => sys::cef_mouse_button_type_t::MBT_LEFT,
            MouseButton::Middle => sys::cef_mouse_button_type_t::MBT_MIDDLE,
            MouseButton::Right => sys::cef_mouse_button_type_t::MBT_RIGHT,
        };
        let count = click_count.clamp(1, 3) as i32;
        self.shared.with_host(move |h| {
            h.send_mouse_click_event(Some(&ev), cef::MouseButtonType::from(b), i32::from(up), count)
        })
    }

    /// Wheel scrolled by (dx, dy) pixels at view coordinates (positive dy scrolls up, as in CEF).
    pub fn send_mouse_wheel(&self, x: i32, y: i32, dx: i32, dy: i32, modifiers: Modifiers) -> Result<(), BrowserError> {
        let ev = mouse_event(x, y, modifiers, ButtonsHeld::default());
        self.shared.with_host(move |h| h.send_mouse_wheel_event(Some(&ev), dx, dy))
    }

    /// A key press or release (translated to VK codes and char events).
    pub fn send_key(&self, key: &KeyInput) -> Result<(), BrowserError> {
        let events = input::key_events(key);
        self.shared.with_host(move |h| {
            for e in events {
                let kind = match e.kind {
                    KeyEventKind::RawKeyDown => sys::cef_key_event_type_t::KEYEVENT_RAWKEYDOWN,
                    KeyEventKind::KeyUp => sys::cef_key_event_type_t::KEYEVENT_KEYUP,
                    KeyEventKind::Char => sys::cef_key_event_type_t::KEYEVENT_CHAR,
                };
                let ev = cef::KeyEvent {
                    type_: cef::KeyEventType::from(kind),
                    modifiers: e.modifiers,
                    windows_key_code: e.windows_key_code,
                    native_key_code: e.native_key_code,
                    is_system_key: 0,
                    character: e.character,
                    unmodified_character: e.unmodified_character,
                    focus_on_editable_field: 0,
                };
                h.send_key_event(Some(&ev));
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn a_browsers_shared_state_is_send_and_sync() {
        // The CefRef types it holds are checked in cross_thread.rs.
        assert_send_sync::<BrowserShared>();
    }

    #[test]
    fn a_page_is_created_unfocused_unless_the_app_focused_it_first() {
        let shared =
            BrowserShared::new(BrowserId(1), (10, 10), "about:blank", None, None, 60, Arc::new(Pump::new(None)));
        assert!(!shared.focus_given(), "nobody gave a new page focus");
        shared.want_focus(true);
        assert!(shared.focus_given(), "focus given before creation is kept");
        shared.want_focus(false);
        assert!(!shared.focus_given());
    }
}
