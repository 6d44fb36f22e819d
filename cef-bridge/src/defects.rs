//! Work-arounds for the defects of cef-rs 132.3.2, in one place (the string
//! decoding of the first lives in `cef_string`, a leaf every reader of a CEF
//! string can use, and is re-exported here).
//!
//! 1. `CefStringUtf8::from(&CefStringUtf16)` passes a NULL output pointer to
//!    `cef_string_utf16_to_utf8` and segfaults. Every CEF string this crate
//!    reads goes through [`string_from_cef`] / [`string_from_raw`], which decode
//!    the UTF-16 buffer directly.
//! 2. The generated trampolines of callbacks with out-parameters hand the Rust
//!    callback a *copy* and never write it back (`get_view_rect`,
//!    `get_screen_info`, `on_before_popup`'s window info…). With the trait
//!    version the view is 0×0 and the browser process dies (SIGTRAP) right after
//!    `on_after_created`. We overwrite the raw vtable slots with `extern "C"`
//!    functions that write through the C pointers ([`patch_render_handler`],
//!    [`patch_life_span_handler`]). Those functions own a reference to each
//!    ref-counted argument and must release it (CEF's C API convention). They
//!    find the handler object they belong to through their `self` pointer (the
//!    start of its `RcImpl`, as cef-rs's own trampolines do) and ask it through
//!    [`RawRenderHandler`] / [`RawLifeSpanHandler`], so no state is global.
//!
//!    The same generated code also mishandles *borrowed lists*: the
//!    `on_favicon_urlchange` trampoline wraps CEF's string list in an owning
//!    `CefStringList` and frees it on return — a double free that segfaults in
//!    `cef_string_list_free` as soon as a page has a favicon. Callbacks of that
//!    kind that we don't need are removed from the vtable
//!    ([`patch_display_handler`], [`patch_request_handler`]); CEF skips NULL slots
//!    and applies its default behaviour.
//!
//! 3. Bit flags that CEF declares as C enums (a context menu's type and edit
//!    state) are generated as Rust enums, and a combination of flags is no
//!    variant: reading one through the wrappers is undefined behaviour. The
//!    raw `run_context_menu` slot ([`patch_context_menu_handler`]) reads them
//!    as the integers they are.
//!
//! The first two are fixed upstream in cef-rs 134/135; check the third when
//! moving up, and this module disappears once all are.

use crate::browser::{DEFAULT_FRAME_RATE, DEFAULT_POPUP_SIZE};
use crate::context_menu::{ContextMenu, EditState, MenuTarget};
use crate::file_chooser::{ChooserMode, FileChooser};
use cef::rc::{Rc as _, RcImpl};
use cef::sys;

pub use crate::cef_string::{string_from_cef, string_from_raw};

/// What the raw render-handler slots ask of the handler they were installed on.
pub(crate) trait RawRenderHandler {
    /// The CSS view size and device scale factor of the browser with CEF id `cef_id` (None: not ours).
    fn view_of(&self, cef_id: i32) -> Option<((i32, i32), f32)>;
}

/// What the raw life-span-handler slot asks of the handler it was installed on.
pub(crate) trait RawLifeSpanHandler {
    /// A popup request from the browser with CEF id `opener`: true to create it off-screen.
    fn allow_popup(&self, opener: Option<i32>, url: &str, as_popup: bool, user_gesture: bool) -> bool;
}

/// The Rust object behind a raw `self` pointer of a patched slot.
///
/// # Safety
/// `raw` must be the `cef_object` of a live `RcImpl<T, I>` (true for the slots
/// installed by this module's `patch_*::<I>`, which CEF calls with that pointer).
unsafe fn interface<'a, T, I>(raw: *mut T) -> &'a I {
    &(*(raw as *const RcImpl<T, I>)).interface
}

/// Releases one reference of a ref-counted CEF argument handed to a raw callback.
///
/// # Safety
/// `object` must be NULL or a pointer to a CEF ref-counted struct whose first
/// member is `cef_base_ref_counted_t`, and the caller must own one reference.
pub(crate) unsafe fn release_arg<T>(object: *mut T) {
    if !object.is_null() {
        let base = &*(object as *const sys::cef_base_ref_counted_t);
        base.release();
    }
}

/// The CEF identifier of a raw browser pointer (without taking a reference).
///
/// # Safety
/// `browser` must be NULL or a valid `_cef_browser_t`.
pub(crate) unsafe fn browser_identifier(browser: *mut sys::_cef_browser_t) -> Option<i32> {
    let b = browser.as_ref()?;
    let f = b.get_identifier?;
    Some(f(browser))
}

/// Installs the raw `get_view_rect` slot on a render handler (defect 2).
///
/// # Safety
/// `object` must be the render handler's freshly created `RcImpl`.
pub(crate) unsafe fn patch_render_handler<I: RawRenderHandler>(object: *mut RcImpl<sys::_cef_render_handler_t, I>) {
    (*object).cef_object.get_view_rect = Some(raw_get_view_rect::<I>);
    (*object).cef_object.get_screen_info = Some(raw_get_screen_info::<I>);
}

/// Installs the raw `on_before_popup` slot on a life-span handler (defect 2:
/// allowing an off-screen popup means writing `window_info` through its pointer).
///
/// # Safety
/// `object` must be the life-span handler's freshly created `RcImpl`.
pub(crate) unsafe fn patch_life_span_handler<I: RawLifeSpanHandler>(
    object: *mut RcImpl<sys::_cef_life_span_handler_t, I>,
) {
    (*object).cef_object.on_before_popup = Some(raw_on_before_popup::<I>);
}

/// What the raw dialog-handler slot asks of the handler it was installed on.
pub(crate) trait RawDialogHandler {
    /// A file chooser of the browser with CEF id `browser`: true when the app
    /// takes it (and will answer `callback`), false to let CEF cancel it.
    fn file_chooser(&self, browser: Option<i32>, chooser: FileChooser, callback: cef::FileDialogCallback) -> bool;
}

/// Installs the raw `on_file_dialog` slot on a dialog handler: its generated
/// trampoline wraps CEF's borrowed accept lists in owning `CefStringList`s and
/// frees them on return (the favicon double free again).
///
/// # Safety
/// `object` must be the dialog handler's freshly created `RcImpl`.
pub(crate) unsafe fn patch_dialog_handler<I: RawDialogHandler>(object: *mut RcImpl<sys::_cef_dialog_handler_t, I>) {
    (*object).cef_object.on_file_dialog = Some(raw_on_file_dialog::<I>);
}

/// The strings of a borrowed CEF string list (left for its owner to free).
///
/// # Safety
/// `list` must be NULL or a valid `cef_string_list_t`.
unsafe fn borrowed_list(list: *mut sys::_cef_string_list_t) -> Vec<String> {
    if list.is_null() {
        return vec![];
    }
    (0..sys::cef_string_list_size(list))
        .filter_map(|i| {
            let mut value: sys::_cef_string_utf16_t = std::mem::zeroed();
            if sys::cef_string_list_value(list, i, &mut value) == 0 {
                return None;
            }
            let text = string_from_raw(&value);
            sys::cef_string_utf16_clear(&mut value);
            Some(text)
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
extern "C" fn raw_on_file_dialog<I: RawDialogHandler>(
    this: *mut sys::_cef_dialog_handler_t,
    browser: *mut sys::_cef_browser_t,
    mode: sys::cef_file_dialog_mode_t,
    title: *const sys::cef_string_t,
    default_file_path: *const sys::cef_string_t,
    accept_filters: *mut sys::_cef_string_list_t,
    _accept_extensions: *mut sys::_cef_string_list_t,
    _accept_descriptions: *mut sys::_cef_string_list_t,
    callback: *mut sys::_cef_file_dialog_callback_t,
) -> ::std::os::raw::c_int {
    // SAFETY: pointers come from CEF and are valid for this call (`this` is this
    // slot's own handler); we own one reference of `browser` and of `callback`,
    // the lists are borrowed.
    unsafe {
        let handler = interface::<_, I>(this);
        let id = browser_identifier(browser);
        release_arg(browser);
        if callback.is_null() {
            return 0;
        }
        let callback: cef::FileDialogCallback = cef::rc::ConvertReturnValue::as_wrapper(callback);
        let mode = match mode {
            sys::cef_file_dialog_mode_t::FILE_DIALOG_OPEN_MULTIPLE => ChooserMode::OpenMultiple,
            sys::cef_file_dialog_mode_t::FILE_DIALOG_OPEN_FOLDER => ChooserMode::OpenFolder,
            sys::cef_file_dialog_mode_t::FILE_DIALOG_SAVE => ChooserMode::Save,
            _ => ChooserMode::Open,
        };
        let chooser = FileChooser {
            mode,
            title: string_from_raw(title),
            default_path: string_from_raw(default_file_path),
            accept: borrowed_list(accept_filters),
        };
        i32::from(handler.file_chooser(id, chooser, callback))
    }
}

/// What the raw context-menu slot asks of the handler it was installed on.
pub(crate) trait RawContextMenuHandler {
    /// A context menu of the browser with CEF id `browser`: true when the app
    /// takes it (and will answer `callback`), false for CEF's default (none
    /// for an off-screen view).
    fn context_menu(&self, browser: Option<i32>, menu: ContextMenu, callback: cef::RunContextMenuCallback) -> bool;
}

/// Installs the raw `run_context_menu` slot on a context-menu handler: the
/// generated wrappers read the params' bit flags (`get_type_flags`,
/// `get_edit_state_flags`) as Rust enums, which a combination of flags is not
/// (undefined behaviour); the raw slot reads them as the C integers they are.
///
/// # Safety
/// `object` must be the context-menu handler's freshly created `RcImpl`.
pub(crate) unsafe fn patch_context_menu_handler<I: RawContextMenuHandler>(
    object: *mut RcImpl<sys::_cef_context_menu_handler_t, I>,
) {
    (*object).cef_object.run_context_menu = Some(raw_run_context_menu::<I>);
}

/// A params method that returns C flags or an enum, read as the integer it is.
///
/// # Safety
/// `f` must be a slot of `params` returning a C enum (an `int`-sized value).
unsafe fn flags_of<R>(
    params: *mut sys::_cef_context_menu_params_t,
    f: Option<unsafe extern "C" fn(*mut sys::_cef_context_menu_params_t) -> R>,
) -> u32 {
    const { assert!(std::mem::size_of::<R>() == std::mem::size_of::<u32>()) };
    let Some(f) = f else { return 0 };
    // SAFETY: a C enum is returned as an int; reading it as u32 gives every bit combination.
    let f: unsafe extern "C" fn(*mut sys::_cef_context_menu_params_t) -> u32 = std::mem::transmute(f);
    f(params)
}

/// A params method that returns a `cef_string_userfree_t`, decoded and freed.
///
/// # Safety
/// `f` must be a slot of `params` returning a userfree string it hands over.
unsafe fn userfree_of(
    params: *mut sys::_cef_context_menu_params_t,
    f: Option<unsafe extern "C" fn(*mut sys::_cef_context_menu_params_t) -> sys::cef_string_userfree_t>,
) -> String {
    let Some(f) = f else { return String::new() };
    let s = f(params);
    if s.is_null() {
        return String::new();
    }
    let text = string_from_raw(s);
    sys::cef_string_userfree_utf16_free(s);
    text
}

extern "C" fn raw_run_context_menu<I: RawContextMenuHandler>(
    this: *mut sys::_cef_context_menu_handler_t,
    browser: *mut sys::_cef_browser_t,
    frame: *mut sys::_cef_frame_t,
    params: *mut sys::_cef_context_menu_params_t,
    model: *mut sys::_cef_menu_model_t,
    callback: *mut sys::_cef_run_context_menu_callback_t,
) -> ::std::os::raw::c_int {
    use sys::cef_context_menu_edit_state_flags_t as E;
    use sys::cef_context_menu_type_flags_t as T;
    // SAFETY: pointers come from CEF and are valid for this call (`this` is this
    // slot's own handler); we own one reference of each ref-counted argument.
    unsafe {
        let handler = interface::<_, I>(this);
        let id = browser_identifier(browser);
        let history = |f: Option<unsafe extern "C" fn(*mut sys::_cef_browser_t) -> i32>| {
            browser.as_ref().is_some() && f.is_some_and(|f| f(browser) != 0)
        };
        let (can_go_back, can_go_forward) = match browser.as_ref() {
            Some(b) => (history(b.can_go_back), history(b.can_go_forward)),
            None => (false, false),
        };
        let menu = params.as_ref().map(|p| {
            let kind = flags_of(params, p.get_type_flags);
            let edit = flags_of(params, p.get_edit_state_flags);
            let media = flags_of(params, p.get_media_type);
            let has = |flag: E| edit & flag as u32 != 0;
            let link = userfree_of(params, p.get_link_url);
            let source = userfree_of(params, p.get_source_url);
            let image = media == sys::cef_context_menu_media_type_t::CM_MEDIATYPE_IMAGE as u32;
            let target = MenuTarget {
                link_url: (kind & T::CM_TYPEFLAG_LINK as u32 != 0 && !link.is_empty()).then_some(link),
                image_url: (image && !source.is_empty()).then_some(source),
                selection: userfree_of(params, p.get_selection_text),
                editable: kind & T::CM_TYPEFLAG_EDITABLE as u32 != 0,
                edit: EditState {
                    undo: has(E::CM_EDITFLAG_CAN_UNDO),
                    redo: has(E::CM_EDITFLAG_CAN_REDO),
                    cut: has(E::CM_EDITFLAG_CAN_CUT),
                    copy: has(E::CM_EDITFLAG_CAN_COPY),
                    paste: has(E::CM_EDITFLAG_CAN_PASTE),
                    delete: has(E::CM_EDITFLAG_CAN_DELETE),
                    select_all: has(E::CM_EDITFLAG_CAN_SELECT_ALL),
                },
                can_go_back,
                can_go_forward,
            };
            let x = p.get_xcoord.map_or(0, |f| f(params));
            let y = p.get_ycoord.map_or(0, |f| f(params));
            ContextMenu::new(x, y, target)
        });
        release_arg(browser);
        release_arg(frame);
        release_arg(params);
        release_arg(model);
        if callback.is_null() {
            return 0;
        }
        let callback: cef::RunContextMenuCallback = cef::rc::ConvertReturnValue::as_wrapper(callback);
        let Some(menu) = menu else {
            cef::ImplRunContextMenuCallback::cancel(&callback);
            return 1;
        };
        i32::from(handler.context_menu(id, menu, callback))
    }
}

/// Removes the display-handler slots whose trampolines free borrowed lists or
/// drop out-parameters (favicon URLs, tooltips).
///
/// # Safety
/// `object` must be the display handler's freshly created `RcImpl`.
pub(crate) unsafe fn patch_display_handler<I>(object: *mut RcImpl<sys::_cef_display_handler_t, I>) {
    let object = &mut (*object).cef_object;
    object.on_favicon_urlchange = None;
    object.on_tooltip = None;
    object.on_cursor_change = None;
    object.on_auto_resize = None;
}

/// Removes request-handler slots with list or out-parameters we don't use
/// (client certificates, auth credentials, per-request handlers).
///
/// # Safety
/// `object` must be the request handler's freshly created `RcImpl`.
pub(crate) unsafe fn patch_request_handler<I>(object: *mut RcImpl<sys::_cef_request_handler_t, I>) {
    let object = &mut (*object).cef_object;
    object.on_select_client_certificate = None;
    object.get_auth_credentials = None;
    object.get_resource_request_handler = None;
    object.on_certificate_error = None;
}

extern "C" fn raw_get_view_rect<I: RawRenderHandler>(
    this: *mut sys::_cef_render_handler_t,
    browser: *mut sys::_cef_browser_t,
    rect: *mut sys::_cef_rect_t,
) {
    // SAFETY: CEF passes this slot's own handler, a valid browser (one
    // reference owned by us) and a valid rect.
    unsafe {
        let handler = interface::<_, I>(this);
        let id = browser_identifier(browser);
        release_arg(browser);
        if let Some(rect) = rect.as_mut() {
            *rect = view_rect(id.and_then(|id| handler.view_of(id)).map(|(size, _)| size));
        }
    }
}

/// The view rectangle reported to CEF for a browser's CSS size (a popup's default
/// before it is known). A 0×0 view kills the browser process: never less than 1×1.
fn view_rect(size: Option<(i32, i32)>) -> sys::_cef_rect_t {
    let (w, h) = size.unwrap_or(DEFAULT_POPUP_SIZE);
    sys::_cef_rect_t { x: 0, y: 0, width: w.max(1), height: h.max(1) }
}

extern "C" fn raw_get_screen_info<I: RawRenderHandler>(
    this: *mut sys::_cef_render_handler_t,
    browser: *mut sys::_cef_browser_t,
    info: *mut sys::_cef_screen_info_t,
) -> ::std::os::raw::c_int {
    // SAFETY: CEF passes this slot's own handler, a valid browser (one
    // reference owned by us) and a valid screen info.
    unsafe {
        let handler = interface::<_, I>(this);
        let id = browser_identifier(browser);
        release_arg(browser);
        let Some(info) = info.as_mut() else { return 0 };
        let shared = id.and_then(|id| handler.view_of(id));
        let view = view_rect(shared.map(|(size, _)| size));
        info.device_scale_factor = shared.map_or(1.0, |(_, scale)| scale);
        info.depth = 24;
        info.depth_per_component = 8;
        info.is_monochrome = 0;
        info.rect = view;
        info.available_rect = view;
        1
    }
}

#[allow(clippy::too_many_arguments)]
extern "C" fn raw_on_before_popup<I: RawLifeSpanHandler>(
    this: *mut sys::_cef_life_span_handler_t,
    browser: *mut sys::_cef_browser_t,
    frame: *mut sys::_cef_frame_t,
    _popup_id: ::std::os::raw::c_int,
    target_url: *const sys::cef_string_t,
    _target_frame_name: *const sys::cef_string_t,
    target_disposition: sys::cef_window_open_disposition_t,
    user_gesture: ::std::os::raw::c_int,
    _popup_features: *const sys::cef_popup_features_t,
    window_info: *mut sys::_cef_window_info_t,
    _client: *mut *mut sys::_cef_client_t,
    settings: *mut sys::_cef_browser_settings_t,
    _extra_info: *mut *mut sys::_cef_dictionary_value_t,
    _no_javascript_access: *mut ::std::os::raw::c_int,
) -> ::std::os::raw::c_int {
    // SAFETY: pointers come from CEF and are valid for this call (`this` is
    // this slot's own handler); we own one reference of `browser` and `frame`.
    unsafe {
        let handler = interface::<_, I>(this);
        let opener = browser_identifier(browser);
        release_arg(browser);
        release_arg(frame);
        let url = string_from_raw(target_url);
        let as_popup = matches!(target_disposition, sys::cef_window_open_disposition_t::CEF_WOD_NEW_POPUP);
        if !handler.allow_popup(opener, &url, as_popup, user_gesture != 0) {
            return 1;
        }
        if let Some(wi) = window_info.as_mut() {
            wi.windowless_rendering_enabled = 1;
            wi.parent_window = 0;
            wi.shared_texture_enabled = 0;
        }
        if let Some(s) = settings.as_mut() {
            s.windowless_frame_rate = DEFAULT_FRAME_RATE as i32;
        }
        0
    }
}
