//! The CEF handler objects: where CEF's callbacks enter this crate.
//!
//! One [`BridgeClient`] per created browser carries the id the browser was
//! registered under; popups inherit their opener's client, so every callback
//! after creation resolves its browser through CEF's own id
//! (`Registry::by_cef`). Every handler object holds the engine's
//! [`EngineContext`]; the app object made for a helper subprocess has none.

use crate::browser::{
    BrowserShared, HostSender, PendingChooser, PendingDialog, PendingMenu, DEFAULT_FRAME_RATE, DEFAULT_POPUP_SIZE,
};
use crate::cef_object::cef_object;
use crate::cef_string::string_from_cef;
use crate::context::EngineContext;
use crate::context_menu::ContextMenu;
use crate::cross_thread::CefRef;
use crate::defects::{self, RawContextMenuHandler, RawDialogHandler, RawLifeSpanHandler, RawRenderHandler};
use crate::downloads::DownloadState;
use crate::events::{BrowserEvent, BrowserId, DialogKind, JsDialog, PixelRect, Termination};
use crate::file_chooser::FileChooser;
use crate::popups::{self, Opener, PopupDecision, PopupDenial, PopupRequest};
use crate::url_policy;
use cef::{
    sys, CefStringUtf16, ContextMenuHandler, DevToolsMessageObserver, DialogHandler, DisplayHandler, DownloadHandler,
    FindHandler, FocusHandler, ImplApp, ImplBeforeDownloadCallback, ImplBrowser, ImplBrowserHost,
    ImplBrowserProcessHandler, ImplClient, ImplCommandLine, ImplContextMenuHandler, ImplDevToolsMessageObserver,
    ImplDialogHandler, ImplDisplayHandler, ImplDownloadHandler, ImplDownloadItem, ImplDownloadItemCallback,
    ImplFileDialogCallback, ImplFindHandler, ImplFocusHandler, ImplFrame, ImplJsdialogCallback, ImplJsdialogHandler,
    ImplLifeSpanHandler, ImplLoadHandler, ImplMediaAccessCallback, ImplPermissionHandler, ImplPermissionPromptCallback,
    ImplRenderHandler, ImplRequest, ImplRequestHandler, JsdialogHandler, LifeSpanHandler, LoadHandler,
    PermissionHandler, RenderHandler, RequestHandler,
};
use std::sync::atomic::Ordering;
use std::sync::Arc;

fn shared_of(ctx: &EngineContext, browser: Option<&mut impl ImplBrowser>) -> Option<Arc<BrowserShared>> {
    browser.and_then(|b| ctx.registry.by_cef(b.get_identifier()))
}

// ------------------------------------------------------------------ app

cef_object!(BridgeApp, _cef_app_t, WrapApp { ctx: Option<Arc<EngineContext>> });

impl ImplApp for BridgeApp {
    fn get_raw(&self) -> *mut sys::_cef_app_t {
        self.object.cast()
    }
    fn on_before_command_line_processing(
        &self,
        process_type: Option<&CefStringUtf16>,
        command_line: Option<&mut impl ImplCommandLine>,
    ) {
        // Only the browser process decides flags; children inherit them.
        if process_type.map(string_from_cef).is_some_and(|t| !t.is_empty()) {
            return;
        }
        let (Some(cl), Some(ctx)) = (command_line, &self.ctx) else { return };
        for (name, value) in &ctx.switches {
            let n = CefStringUtf16::from(name.as_str());
            match value {
                Some(v) => cl.append_switch_with_value(Some(&n), Some(&CefStringUtf16::from(v.as_str()))),
                None => cl.append_switch(Some(&n)),
            }
        }
    }
    fn get_browser_process_handler(&self) -> Option<cef::BrowserProcessHandler> {
        Some(cef::BrowserProcessHandler::new(BridgeProcessHandler::create(self.ctx.clone())))
    }
}

cef_object!(
    BridgeProcessHandler,
    _cef_browser_process_handler_t,
    WrapBrowserProcessHandler { ctx: Option<Arc<EngineContext>> }
);

impl ImplBrowserProcessHandler for BridgeProcessHandler {
    fn get_raw(&self) -> *mut sys::_cef_browser_process_handler_t {
        self.object.cast()
    }
    fn on_context_initialized(&self) {
        if let Some(ctx) = &self.ctx {
            // Before the first browser exists, so no page load runs with Chromium's defaults.
            crate::prefs::apply();
            ctx.mark_ready();
        }
    }
    fn on_already_running_app_relaunch(
        &self,
        _command_line: Option<&mut impl ImplCommandLine>,
        _dir: Option<&CefStringUtf16>,
    ) -> i32 {
        // Handled: without this a second start on the same profile opens a Chrome "New Tab" window.
        1
    }
    fn on_schedule_message_pump_work(&self, delay_ms: i64) {
        if let Some(ctx) = &self.ctx {
            ctx.pump.schedule(delay_ms);
        }
    }
}

// ------------------------------------------------------------------ client

cef_object!(
    BridgeClient,
    _cef_client_t,
    WrapClient {
        id: BrowserId,
        render: RenderHandler,
        life: LifeSpanHandler,
        load: LoadHandler,
        display: DisplayHandler,
        request: RequestHandler,
        permission: PermissionHandler,
        download: DownloadHandler,
        dialogs: JsdialogHandler,
        files: DialogHandler,
        focus: FocusHandler,
        find: FindHandler,
        menus: ContextMenuHandler,
    }
);

impl BridgeClient {
    /// A client (with its handlers) for the browser registered as `id`.
    pub(crate) fn for_browser(ctx: Arc<EngineContext>, id: BrowserId) -> Self {
        Self::create(
            id,
            RenderHandler::new(BridgeRender::create(ctx.clone())),
            LifeSpanHandler::new(BridgeLifeSpan::create(ctx.clone(), id)),
            LoadHandler::new(BridgeLoad::create(ctx.clone())),
            DisplayHandler::new(BridgeDisplay::create(ctx.clone())),
            RequestHandler::new(BridgeRequest::create(ctx.clone())),
            PermissionHandler::new(BridgePermission::create()),
            DownloadHandler::new(BridgeDownload::create(ctx.clone())),
            JsdialogHandler::new(BridgeJsDialog::create(ctx.clone())),
            DialogHandler::new(BridgeFileDialog::create(ctx.clone())),
            FocusHandler::new(BridgeFocus::create(ctx.clone())),
            FindHandler::new(BridgeFind::create(ctx.clone())),
            ContextMenuHandler::new(BridgeContextMenu::create(ctx)),
        )
    }
}

impl ImplClient for BridgeClient {
    fn get_raw(&self) -> *mut sys::_cef_client_t {
        self.object.cast()
    }
    fn get_render_handler(&self) -> Option<RenderHandler> {
        Some(self.render.clone())
    }
    fn get_life_span_handler(&self) -> Option<LifeSpanHandler> {
        Some(self.life.clone())
    }
    fn get_load_handler(&self) -> Option<LoadHandler> {
        Some(self.load.clone())
    }
    fn get_display_handler(&self) -> Option<DisplayHandler> {
        Some(self.display.clone())
    }
    fn get_request_handler(&self) -> Option<RequestHandler> {
        Some(self.request.clone())
    }
    fn get_permission_handler(&self) -> Option<PermissionHandler> {
        Some(self.permission.clone())
    }
    fn get_download_handler(&self) -> Option<DownloadHandler> {
        Some(self.download.clone())
    }
    fn get_jsdialog_handler(&self) -> Option<JsdialogHandler> {
        Some(self.dialogs.clone())
    }
    fn get_focus_handler(&self) -> Option<FocusHandler> {
        Some(self.focus.clone())
    }
    fn get_dialog_handler(&self) -> Option<DialogHandler> {
        Some(self.files.clone())
    }
    fn get_find_handler(&self) -> Option<FindHandler> {
        Some(self.find.clone())
    }
    fn get_context_menu_handler(&self) -> Option<ContextMenuHandler> {
        Some(self.menus.clone())
    }
}

// ------------------------------------------------------------------ focus

cef_object!(BridgeFocus, _cef_focus_handler_t, WrapFocusHandler { ctx: Arc<EngineContext> });

impl ImplFocusHandler for BridgeFocus {
    fn get_raw(&self) -> *mut sys::_cef_focus_handler_t {
        self.object.cast()
    }
    /// A page has keyboard focus only when the app gave it (its node focused, or
    /// `Target.activateTarget`): CEF's own requests, e.g. on every URL it loads,
    /// are refused otherwise, so an unfocused page reports `document.hasFocus()`
    /// false as Chromium's do. Returns CEF's "cancel".
    fn on_set_focus(&self, browser: Option<&mut impl ImplBrowser>, _source: cef::FocusSource) -> i32 {
        shared_of(&self.ctx, browser).map_or(0, |s| i32::from(!s.focus_given()))
    }
}

// ------------------------------------------------------------------ render

cef_object!(
    BridgeRender,
    _cef_render_handler_t,
    WrapRenderHandler { ctx: Arc<EngineContext> },
    patch = defects::patch_render_handler
);

impl RawRenderHandler for BridgeRender {
    fn view_of(&self, cef_id: i32) -> Option<((i32, i32), f32)> {
        self.ctx.registry.by_cef(cef_id).map(|s| (*s.size.lock(), s.scale()))
    }
}

impl ImplRenderHandler for BridgeRender {
    fn get_raw(&self) -> *mut sys::_cef_render_handler_t {
        self.object.cast()
    }
    fn on_paint(
        &self,
        browser: Option<&mut impl ImplBrowser>,
        type_: cef::PaintElementType,
        dirty_rects_count: usize,
        dirty_rects: Option<&cef::Rect>,
        buffer: *const u8,
        width: i32,
        height: i32,
    ) {
        let Some(shared) = shared_of(&self.ctx, browser) else { return };
        if buffer.is_null() || width <= 0 || height <= 0 {
            return;
        }
        let len = width as usize * height as usize * 4;
        // SAFETY: CEF guarantees `buffer` holds width*height BGRA pixels for this call.
        let pixels = unsafe { std::slice::from_raw_parts(buffer, len) };
        let ty: sys::cef_paint_element_type_t = type_.into();
        let notify = if ty == sys::cef_paint_element_type_t::PET_POPUP {
            shared.store_popup(pixels, width, height)
        } else {
            // The wrapper hands over only the first dirty rect: with several, repaint all.
            let dirty: Vec<PixelRect> = match (dirty_rects_count, dirty_rects) {
                (1, Some(r)) => vec![PixelRect {
                    x: r.x.max(0) as u32,
                    y: r.y.max(0) as u32,
                    width: r.width.max(0) as u32,
                    height: r.height.max(0) as u32,
                }],
                _ => vec![PixelRect { x: 0, y: 0, width: width as u32, height: height as u32 }],
            };
            shared.store_view(pixels, width as u32, height as u32, &dirty)
        };
        if notify {
            self.ctx.emit(BrowserEvent::FrameReady { id: shared.id });
        }
    }
    fn on_popup_show(&self, browser: Option<&mut impl ImplBrowser>, show: i32) {
        let Some(shared) = shared_of(&self.ctx, browser) else { return };
        shared.popup_show(show != 0);
        if show == 0 {
            // Repaint what the dropdown covered.
            if let Some(h) = shared.host.lock().as_ref() {
                h.0.invalidate(cef::PaintElementType::from(sys::cef_paint_element_type_t::PET_VIEW));
            }
        }
    }
    fn on_popup_size(&self, browser: Option<&mut impl ImplBrowser>, rect: Option<&cef::Rect>) {
        let (Some(shared), Some(r)) = (shared_of(&self.ctx, browser), rect) else { return };
        shared.popup_rect((r.x, r.y, r.width, r.height));
    }
}

// ------------------------------------------------------------------ life span

cef_object!(
    BridgeLifeSpan,
    _cef_life_span_handler_t,
    WrapLifeSpanHandler { ctx: Arc<EngineContext>, client: BrowserId },
    patch = defects::patch_life_span_handler
);

impl RawLifeSpanHandler for BridgeLifeSpan {
    fn allow_popup(&self, opener: Option<i32>, url: &str, as_popup: bool, user_gesture: bool) -> bool {
        let opener_state = opener.and_then(|c| self.ctx.registry.by_cef(c));
        let kind = match &opener_state {
            None => Opener::Unknown,
            Some(s) if s.opener.is_some() => Opener::Popup,
            Some(_) => Opener::Page,
        };
        let decision = popups::decide(&PopupRequest { opener: kind, url, as_popup, user_gesture });
        let (Some(opener), Some(opener_state)) = (opener, opener_state) else { return false };
        let id = opener_state.id;
        match decision {
            PopupDecision::AllowOffscreen => {
                self.ctx.popup_allowed(opener);
                return true;
            }
            PopupDecision::OpenAsTab => {
                self.ctx.emit(BrowserEvent::NewTabRequested { opener: id, url: url.to_string(), background: false });
            }
            PopupDecision::Deny(PopupDenial::RefusedUrl) => {
                tracing::info!(opener = %id, "popup to a refused URL denied")
            }
            PopupDecision::Deny(PopupDenial::Nested) => tracing::info!(opener = %id, "nested popup denied"),
            PopupDecision::Deny(PopupDenial::NoGesture) => {
                tracing::info!(opener = %id, "popup without a user gesture denied")
            }
            PopupDecision::Deny(PopupDenial::UnknownOpener) => {}
        }
        false
    }
}

impl ImplLifeSpanHandler for BridgeLifeSpan {
    fn get_raw(&self) -> *mut sys::_cef_life_span_handler_t {
        self.object.cast()
    }
    fn on_after_created(&self, browser: Option<&mut impl ImplBrowser>) {
        let Some(b) = browser else { return };
        let cef_id = b.get_identifier();
        let Some(host) = b.get_host() else {
            tracing::error!(cef_id, "created browser has no host");
            return;
        };
        let url = b.get_main_frame().and_then(|f| f.get_url()).map(|u| string_from_cef(&u)).unwrap_or_default();
        // The browser this client was made for, unless it is already bound (then: a popup).
        let ctx = &self.ctx;
        let (shared, popup) = match ctx.registry.get(self.client) {
            Some(s) if s.cef_id.lock().is_none() && b.is_popup() == 0 => (s, false),
            _ => {
                // CEF gives a popup its opener's request context; the state says so too.
                let opener = ctx.take_pending_opener().and_then(|c| ctx.registry.by_cef(c));
                let context = opener.as_ref().and_then(|s| s.context);
                (ctx.new_browser(DEFAULT_POPUP_SIZE, &url, opener.map(|s| s.id), context, DEFAULT_FRAME_RATE), true)
            }
        };
        ctx.registry.bind_cef_id(shared.id, cef_id);
        let mut observer = DevToolsMessageObserver::new(BridgeObserver::create(ctx.clone(), shared.id));
        let registration = host.add_dev_tools_message_observer(Some(&mut observer));
        if registration.is_none() {
            tracing::error!(id = %shared.id, "DevTools observer registration failed");
        }
        *shared.registration.lock() = registration.map(CefRef);
        *shared.browser.lock() = host.get_browser().map(CefRef);
        *shared.host.lock() = Some(CefRef(host.clone()));
        // The focus the app gave (none yet, for most): CEF focuses a new windowless page itself.
        host.set_focus(i32::from(shared.focus_given()));
        // A rate the app set before the engine made the browser (its settings had the old one).
        host.set_windowless_frame_rate(*shared.frame_rate.lock() as i32);
        if shared.hidden.load(std::sync::atomic::Ordering::Acquire) {
            host.was_hidden(1);
        }
        shared.devtools.attach(Arc::new(HostSender(CefRef(host))));
        tracing::debug!(id = %shared.id, cef_id, popup, "browser created");
        match (popup, shared.opener) {
            (true, Some(opener)) => ctx.emit(BrowserEvent::PopupOpened { id: shared.id, opener }),
            _ => ctx.emit(BrowserEvent::Created { id: shared.id }),
        }
    }
    fn on_before_close(&self, browser: Option<&mut impl ImplBrowser>) {
        let Some(shared) = shared_of(&self.ctx, browser) else { return };
        shared.closed.store(true, Ordering::Release);
        shared.devtools.detach("browser closed");
        // Drop CEF references on the UI thread, before the browser goes away.
        let registration = shared.registration.lock().take();
        let host = shared.host.lock().take();
        let b = shared.browser.lock().take();
        // An unanswered dialog's callback too: handles may outlive CEF itself.
        let dialog = shared.dialog.lock().take();
        let menu = shared.context_menu.lock().take();
        drop((registration, host, b, dialog, menu));
        self.ctx.registry.remove(shared.id);
        tracing::debug!(id = %shared.id, "browser closed");
        self.ctx.emit(BrowserEvent::Closed { id: shared.id });
    }
}

// ------------------------------------------------------------------ load + display

cef_object!(BridgeLoad, _cef_load_handler_t, WrapLoadHandler { ctx: Arc<EngineContext> });

impl ImplLoadHandler for BridgeLoad {
    fn get_raw(&self) -> *mut sys::_cef_load_handler_t {
        self.object.cast()
    }
    fn on_loading_state_change(
        &self,
        browser: Option<&mut impl ImplBrowser>,
        is_loading: i32,
        can_go_back: i32,
        can_go_forward: i32,
    ) {
        let Some(shared) = shared_of(&self.ctx, browser) else { return };
        shared.page.lock().loading = is_loading != 0;
        self.ctx.emit(BrowserEvent::LoadingStateChanged {
            id: shared.id,
            loading: is_loading != 0,
            can_go_back: can_go_back != 0,
            can_go_forward: can_go_forward != 0,
        });
    }
    fn on_load_start(
        &self,
        browser: Option<&mut impl ImplBrowser>,
        frame: Option<&mut impl ImplFrame>,
        _transition_type: cef::TransitionType,
    ) {
        // A frame of an isolated context gets the context's grants for every site before its scripts ask.
        let Some(browser) = browser else { return };
        let top = browser.get_main_frame().and_then(|f| f.get_url()).map(|u| string_from_cef(&u));
        let Some(shared) = shared_of(&self.ctx, Some(browser)) else { return };
        let Some(context) = shared.context else { return };
        let site = frame.and_then(|f| f.get_url()).map(|u| string_from_cef(&u));
        let (Some(site), Some(top)) = (
            site.as_deref().and_then(crate::site_permissions::site_of),
            top.as_deref().and_then(crate::site_permissions::site_of),
        ) else {
            return;
        };
        self.ctx.request_contexts.frame_loading(context, &site, &top);
    }
    fn on_load_end(
        &self,
        browser: Option<&mut impl ImplBrowser>,
        frame: Option<&mut impl ImplFrame>,
        http_status_code: i32,
    ) {
        if frame.is_none_or(|f| f.is_main() != 1) {
            return;
        }
        let Some(shared) = shared_of(&self.ctx, browser) else { return };
        shared.devtools.renderer_restored();
        self.ctx.emit(BrowserEvent::LoadFinished { id: shared.id, http_status: http_status_code });
    }
    fn on_load_error(
        &self,
        browser: Option<&mut impl ImplBrowser>,
        frame: Option<&mut impl ImplFrame>,
        error_code: cef::Errorcode,
        error_text: Option<&CefStringUtf16>,
        failed_url: Option<&CefStringUtf16>,
    ) {
        if frame.is_none_or(|f| f.is_main() != 1) {
            return;
        }
        let code: sys::cef_errorcode_t = error_code.into();
        let code = code as i32;
        // ERR_ABORTED: a navigation replaced by another one, not a failure.
        if code == sys::cef_errorcode_t::ERR_ABORTED as i32 {
            return;
        }
        let Some(shared) = shared_of(&self.ctx, browser) else { return };
        self.ctx.emit(BrowserEvent::LoadFailed {
            id: shared.id,
            url: failed_url.map(string_from_cef).unwrap_or_default(),
            error_code: code,
            error_text: error_text.map(string_from_cef).unwrap_or_default(),
        });
    }
}

cef_object!(
    BridgeDisplay,
    _cef_display_handler_t,
    WrapDisplayHandler { ctx: Arc<EngineContext> },
    patch = defects::patch_display_handler
);

impl ImplDisplayHandler for BridgeDisplay {
    fn get_raw(&self) -> *mut sys::_cef_display_handler_t {
        self.object.cast()
    }
    fn on_address_change(
        &self,
        browser: Option<&mut impl ImplBrowser>,
        frame: Option<&mut impl ImplFrame>,
        url: Option<&CefStringUtf16>,
    ) {
        if frame.is_none_or(|f| f.is_main() != 1) {
            return;
        }
        let Some(shared) = shared_of(&self.ctx, browser) else { return };
        let url = url.map(string_from_cef).unwrap_or_default();
        shared.page.lock().url = url.clone();
        self.ctx.emit(BrowserEvent::AddressChanged { id: shared.id, url });
    }
    fn on_loading_progress_change(&self, browser: Option<&mut impl ImplBrowser>, progress: f64) {
        let Some(shared) = shared_of(&self.ctx, browser) else { return };
        let progress = if progress.is_finite() { progress.clamp(0.0, 1.0) } else { 0.0 };
        self.ctx.emit(BrowserEvent::LoadProgress { id: shared.id, progress });
    }
    fn on_title_change(&self, browser: Option<&mut impl ImplBrowser>, title: Option<&CefStringUtf16>) {
        let Some(shared) = shared_of(&self.ctx, browser) else { return };
        let title = title.map(string_from_cef).unwrap_or_default();
        shared.page.lock().title = title.clone();
        self.ctx.emit(BrowserEvent::TitleChanged { id: shared.id, title });
    }
}

// ------------------------------------------------------------------ request policy

cef_object!(
    BridgeRequest,
    _cef_request_handler_t,
    WrapRequestHandler { ctx: Arc<EngineContext> },
    patch = defects::patch_request_handler
);

impl ImplRequestHandler for BridgeRequest {
    fn get_raw(&self) -> *mut sys::_cef_request_handler_t {
        self.object.cast()
    }
    fn on_before_browse(
        &self,
        browser: Option<&mut impl ImplBrowser>,
        frame: Option<&mut impl ImplFrame>,
        request: Option<&mut impl ImplRequest>,
        _user_gesture: i32,
        _is_redirect: i32,
    ) -> i32 {
        // The policy governs what the node shows: its main frame. Subframes stay
        // inside the web sandbox of their embedding page.
        if frame.is_none_or(|f| f.is_main() != 1) {
            return 0;
        }
        let url = request.and_then(|r| r.get_url()).map(|u| string_from_cef(&u)).unwrap_or_default();
        if url_policy::is_allowed_nav_url(&url) {
            return 0;
        }
        if let Some(shared) = shared_of(&self.ctx, browser) {
            tracing::info!(id = %shared.id, "navigation refused by the URL policy");
            self.ctx.emit(BrowserEvent::NavigationBlocked { id: shared.id, url });
        }
        1
    }
    fn on_open_urlfrom_tab(
        &self,
        browser: Option<&mut impl ImplBrowser>,
        _frame: Option<&mut impl ImplFrame>,
        target_url: Option<&CefStringUtf16>,
        target_disposition: cef::WindowOpenDisposition,
        _user_gesture: i32,
    ) -> i32 {
        let url = target_url.map(string_from_cef).unwrap_or_default();
        let background = target_disposition
            == cef::WindowOpenDisposition::from(sys::cef_window_open_disposition_t::CEF_WOD_NEW_BACKGROUND_TAB);
        if let Some(shared) = shared_of(&self.ctx, browser) {
            if url_policy::is_allowed_nav_url(&url) && shared.opener.is_none() {
                self.ctx.emit(BrowserEvent::NewTabRequested { opener: shared.id, url, background });
            }
        }
        1
    }
    fn on_render_process_terminated(
        &self,
        browser: Option<&mut impl ImplBrowser>,
        status: cef::TerminationStatus,
        error_code: i32,
        _error_string: Option<&CefStringUtf16>,
    ) {
        let Some(shared) = shared_of(&self.ctx, browser) else { return };
        shared.devtools.fail_pending("render process terminated");
        let status: sys::cef_termination_status_t = status.into();
        let status = match status {
            sys::cef_termination_status_t::TS_ABNORMAL_TERMINATION => Termination::Abnormal,
            sys::cef_termination_status_t::TS_PROCESS_WAS_KILLED => Termination::Killed,
            sys::cef_termination_status_t::TS_PROCESS_CRASHED => Termination::Crashed,
            sys::cef_termination_status_t::TS_PROCESS_OOM => Termination::OutOfMemory,
            sys::cef_termination_status_t::TS_LAUNCH_FAILED => Termination::LaunchFailed,
            _ => Termination::Other,
        };
        tracing::warn!(id = %shared.id, ?status, error_code, "render process terminated");
        self.ctx.emit(BrowserEvent::RenderProcessTerminated { id: shared.id, status, error_code });
    }
}

// ------------------------------------------------------------------ permissions + downloads

cef_object!(BridgePermission, _cef_permission_handler_t, WrapPermissionHandler {});

impl ImplPermissionHandler for BridgePermission {
    fn get_raw(&self) -> *mut sys::_cef_permission_handler_t {
        self.object.cast()
    }
    fn on_request_media_access_permission(
        &self,
        _browser: Option<&mut impl ImplBrowser>,
        _frame: Option<&mut impl ImplFrame>,
        _origin: Option<&CefStringUtf16>,
        _requested: u32,
        callback: Option<&mut impl ImplMediaAccessCallback>,
    ) -> i32 {
        // Camera and microphone: always denied.
        if let Some(cb) = callback {
            cb.cancel();
        }
        1
    }
    fn on_show_permission_prompt(
        &self,
        _browser: Option<&mut impl ImplBrowser>,
        _prompt_id: u64,
        _origin: Option<&CefStringUtf16>,
        _requested: u32,
        callback: Option<&mut impl ImplPermissionPromptCallback>,
    ) -> i32 {
        // Geolocation, notifications and every other prompt: denied.
        if let Some(cb) = callback {
            cb.cont(cef::PermissionRequestResult::from(
                sys::cef_permission_request_result_t::CEF_PERMISSION_RESULT_DENY,
            ));
        }
        1
    }
}

cef_object!(BridgeDownload, _cef_download_handler_t, WrapDownloadHandler { ctx: Arc<EngineContext> });

impl ImplDownloadHandler for BridgeDownload {
    fn get_raw(&self) -> *mut sys::_cef_download_handler_t {
        self.object.cast()
    }
    fn can_download(
        &self,
        _browser: Option<&mut impl ImplBrowser>,
        _url: Option<&CefStringUtf16>,
        _method: Option<&CefStringUtf16>,
    ) -> i32 {
        1
    }
    fn on_before_download(
        &self,
        browser: Option<&mut impl ImplBrowser>,
        item: Option<&mut impl ImplDownloadItem>,
        suggested_name: Option<&CefStringUtf16>,
        callback: Option<&mut impl ImplBeforeDownloadCallback>,
    ) -> i32 {
        let (Some(shared), Some(item)) = (shared_of(&self.ctx, browser), item) else { return 0 };
        let name = suggested_name.map(string_from_cef).unwrap_or_default();
        let url = item.get_url().map(|u| string_from_cef(&u)).unwrap_or_default();
        let Some(placed) = self.ctx.downloads.place(item.get_id(), &name, shared.context) else { return 0 };
        self.ctx.emit(BrowserEvent::DownloadStarted {
            id: shared.id,
            guid: placed.guid.clone(),
            url,
            suggested_name: name,
            path: placed.path.clone(),
        });
        let (Some(path), Some(cb)) = (placed.path, callback) else {
            // Refused by the policy: 0 is CEF's default for windowless browsers, a cancel.
            self.ctx.emit(BrowserEvent::DownloadProgress {
                id: shared.id,
                guid: placed.guid,
                received: 0,
                total: 0,
                state: DownloadState::Canceled,
            });
            return 0;
        };
        // show_dialog = 0: saved straight to its place, never opened.
        cb.cont(Some(&CefStringUtf16::from(path.to_string_lossy().as_ref())), 0);
        1
    }
    fn on_download_updated(
        &self,
        browser: Option<&mut impl ImplBrowser>,
        item: Option<&mut impl ImplDownloadItem>,
        _cb: Option<&mut impl ImplDownloadItemCallback>,
    ) {
        let (Some(shared), Some(item)) = (shared_of(&self.ctx, browser), item) else { return };
        let complete = item.is_complete() == 1;
        let state = match (complete, item.is_canceled() == 1 || item.is_interrupted() == 1) {
            (true, _) => DownloadState::Completed,
            (false, true) => DownloadState::Canceled,
            (false, false) => DownloadState::InProgress,
        };
        let received = u64::try_from(item.get_received_bytes()).unwrap_or(0);
        let total = u64::try_from(item.get_total_bytes()).unwrap_or(0);
        let Some(guid) = self.ctx.downloads.progress(item.get_id(), received, total, state) else { return };
        self.ctx.emit(BrowserEvent::DownloadProgress { id: shared.id, guid, received, total, state });
        if state != DownloadState::InProgress {
            let path = item.get_full_path().map(|p| string_from_cef(&p)).unwrap_or_default();
            self.ctx.emit(BrowserEvent::DownloadFinished { id: shared.id, path: path.into(), complete });
        }
    }
}

// ------------------------------------------------------------------ file choosers

cef_object!(
    BridgeFileDialog,
    _cef_dialog_handler_t,
    WrapDialogHandler { ctx: Arc<EngineContext> },
    patch = defects::patch_dialog_handler
);

impl RawDialogHandler for BridgeFileDialog {
    fn file_chooser(&self, browser: Option<i32>, chooser: FileChooser, callback: cef::FileDialogCallback) -> bool {
        let Some(shared) = browser.and_then(|c| self.ctx.registry.by_cef(c)) else { return false };
        let mut slot = shared.file_chooser.lock();
        if slot.is_some() {
            // One chooser per page at a time; a second request is cancelled, not queued.
            drop(slot);
            callback.cancel();
            return true;
        }
        *slot = Some(PendingChooser { chooser: chooser.clone(), callback: CefRef(callback) });
        drop(slot);
        tracing::info!(id = %shared.id, mode = ?chooser.mode, "file chooser waiting for the person");
        self.ctx.emit(BrowserEvent::FileChooserOpened { id: shared.id, chooser });
        true
    }
}

impl ImplDialogHandler for BridgeFileDialog {
    fn get_raw(&self) -> *mut sys::_cef_dialog_handler_t {
        self.object.cast()
    }
}

// ------------------------------------------------------------------ JavaScript dialogs

cef_object!(BridgeJsDialog, _cef_jsdialog_handler_t, WrapJsdialogHandler { ctx: Arc<EngineContext> });

impl BridgeJsDialog {
    /// Keeps CEF's callback and tells the app; nothing answers until someone does
    /// (a CDP client, the person at the node, an agent). Returns CEF's "handled".
    fn hold(
        &self,
        shared: Option<Arc<BrowserShared>>,
        dialog: JsDialog,
        callback: Option<&mut impl ImplJsdialogCallback>,
    ) -> i32 {
        let (Some(shared), Some(cb)) = (shared, callback) else { return 0 };
        // SAFETY: CEF lends `cb` for this call; the extra reference taken here is
        // owned by the wrapper made from the same pointer and released when it drops.
        let owned: cef::JsdialogCallback = unsafe {
            cb.add_ref();
            cef::rc::ConvertReturnValue::as_wrapper(cb.get_raw())
        };
        let mut slot = shared.dialog.lock();
        if slot.is_some() {
            // Chromium runs one dialog per page at a time; a second one is refused, not queued.
            drop(slot);
            owned.cont(0, None);
            return 1;
        }
        *slot = Some(PendingDialog { dialog: dialog.clone(), callback: Some(CefRef(owned)) });
        drop(slot);
        tracing::info!(id = %shared.id, kind = dialog.kind.cdp_name(), "JavaScript dialog waiting for an answer");
        self.ctx.emit(BrowserEvent::DialogOpened { id: shared.id, dialog });
        1
    }

    /// Forgets a dialog CEF has closed or cancelled.
    fn forget(&self, browser: Option<&mut impl ImplBrowser>) {
        let Some(shared) = shared_of(&self.ctx, browser) else { return };
        // Answered or not: once CEF says it is over, the app hears of it once.
        let Some(pending) = shared.dialog.lock().take() else { return };
        if pending.callback.is_some() {
            tracing::debug!(id = %shared.id, "JavaScript dialog reset by CEF before anyone answered");
        }
        self.ctx.emit(BrowserEvent::DialogClosed { id: shared.id });
    }
}

impl ImplJsdialogHandler for BridgeJsDialog {
    fn get_raw(&self) -> *mut sys::_cef_jsdialog_handler_t {
        self.object.cast()
    }
    fn on_jsdialog(
        &self,
        browser: Option<&mut impl ImplBrowser>,
        origin_url: Option<&CefStringUtf16>,
        dialog_type: cef::JsdialogType,
        message_text: Option<&CefStringUtf16>,
        default_prompt_text: Option<&CefStringUtf16>,
        callback: Option<&mut impl ImplJsdialogCallback>,
        _suppress_message: Option<&mut i32>,
    ) -> i32 {
        let ty: sys::cef_jsdialog_type_t = dialog_type.into();
        let kind = match ty {
            sys::cef_jsdialog_type_t::JSDIALOGTYPE_CONFIRM => DialogKind::Confirm,
            sys::cef_jsdialog_type_t::JSDIALOGTYPE_PROMPT => DialogKind::Prompt,
            _ => DialogKind::Alert,
        };
        let dialog = JsDialog {
            kind,
            message: message_text.map(string_from_cef).unwrap_or_default(),
            default_prompt: default_prompt_text.map(string_from_cef).unwrap_or_default(),
            url: origin_url.map(string_from_cef).unwrap_or_default(),
        };
        self.hold(shared_of(&self.ctx, browser), dialog, callback)
    }
    fn on_before_unload_dialog(
        &self,
        browser: Option<&mut impl ImplBrowser>,
        message_text: Option<&CefStringUtf16>,
        _is_reload: i32,
        callback: Option<&mut impl ImplJsdialogCallback>,
    ) -> i32 {
        let shared = shared_of(&self.ctx, browser);
        let url = shared.as_ref().map(|s| s.page.lock().url.clone()).unwrap_or_default();
        let dialog = JsDialog {
            kind: DialogKind::BeforeUnload,
            message: message_text.map(string_from_cef).unwrap_or_default(),
            default_prompt: String::new(),
            url,
        };
        self.hold(shared, dialog, callback)
    }
    fn on_reset_dialog_state(&self, browser: Option<&mut impl ImplBrowser>) {
        self.forget(browser);
    }
    fn on_dialog_closed(&self, browser: Option<&mut impl ImplBrowser>) {
        self.forget(browser);
    }
}

// ------------------------------------------------------------------ context menus

cef_object!(
    BridgeContextMenu,
    _cef_context_menu_handler_t,
    WrapContextMenuHandler { ctx: Arc<EngineContext> },
    patch = defects::patch_context_menu_handler
);

impl RawContextMenuHandler for BridgeContextMenu {
    /// Keeps CEF's callback and tells the app, which draws the menu (or, with
    /// nobody to show it to, answers none).
    fn context_menu(&self, browser: Option<i32>, menu: ContextMenu, callback: cef::RunContextMenuCallback) -> bool {
        let Some(shared) = browser.and_then(|id| self.ctx.registry.by_cef(id)) else { return false };
        // CEF shows one menu at a time, so none is expected here; an old one is
        // answered (its callback dropped: CEF cancels it) before the new one is kept.
        let old = shared.context_menu.lock().take();
        drop(old);
        *shared.context_menu.lock() = Some(PendingMenu { menu: menu.clone(), callback: CefRef(callback) });
        tracing::debug!(id = %shared.id, entries = menu.entries.len(), "context menu waiting for an answer");
        self.ctx.emit(BrowserEvent::ContextMenuOpened { id: shared.id, menu });
        true
    }
}

impl ImplContextMenuHandler for BridgeContextMenu {
    fn get_raw(&self) -> *mut sys::_cef_context_menu_handler_t {
        self.object.cast()
    }
    fn on_context_menu_dismissed(&self, browser: Option<&mut impl ImplBrowser>, _frame: Option<&mut impl ImplFrame>) {
        let Some(shared) = shared_of(&self.ctx, browser) else { return };
        // Closed by CEF (navigation, close) before anyone answered: drop the callback.
        drop(shared.context_menu.lock().take());
        self.ctx.emit(BrowserEvent::ContextMenuClosed { id: shared.id });
    }
}

// ------------------------------------------------------------------ find in page

cef_object!(BridgeFind, _cef_find_handler_t, WrapFindHandler { ctx: Arc<EngineContext> });

impl ImplFindHandler for BridgeFind {
    fn get_raw(&self) -> *mut sys::_cef_find_handler_t {
        self.object.cast()
    }
    fn on_find_result(
        &self,
        browser: Option<&mut impl ImplBrowser>,
        _identifier: i32,
        count: i32,
        _selection_rect: Option<&cef::Rect>,
        active_match_ordinal: i32,
        final_update: i32,
    ) {
        let Some(shared) = shared_of(&self.ctx, browser) else { return };
        self.ctx.emit(BrowserEvent::FindResult {
            id: shared.id,
            count: count.max(0) as u32,
            active: active_match_ordinal.max(0) as u32,
            final_update: final_update != 0,
        });
    }
}

// ------------------------------------------------------------------ DevTools observer

cef_object!(
    BridgeObserver,
    _cef_dev_tools_message_observer_t,
    WrapDevToolsMessageObserver { ctx: Arc<EngineContext>, id: BrowserId }
);

impl ImplDevToolsMessageObserver for BridgeObserver {
    fn get_raw(&self) -> *mut sys::_cef_dev_tools_message_observer_t {
        self.object.cast()
    }
    fn on_dev_tools_message(&self, _browser: Option<&mut impl ImplBrowser>, message: Option<&[u8]>) -> i32 {
        // Parse it ourselves and return 1: CEF's own parser fails on Chromium's
        // key order ("sessionId" after "result") and drops child-session traffic.
        if let (Some(shared), Some(m)) = (self.ctx.registry.get(self.id), message) {
            shared.devtools.deliver(m);
        }
        1
    }
}
