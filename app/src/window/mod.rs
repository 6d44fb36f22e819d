//! The window: a winit 0.30 event loop driving the same [`Runtime`] as the
//! headless mode, with a wgpu surface, CEF's external message pump, and the
//! person at the desktop.
//!
//! The loop sleeps until `rt.next_deadline()` (CEF's next pump, at most
//! 33 ms away), a camera commit or a toast expiry; other threads wake it
//! through the runtime's [`Waker`], whose hook sends an event through the
//! `EventLoopProxy`. A frame is rendered only when something changed
//! (`rt.take_redraw()`, the overlay, the camera) and then only if the
//! renderer agrees (`needs_redraw`): an idle canvas renders nothing.
//!
//! Input: [`interaction`] decides what a gesture means, [`routing`] forwards
//! the focused node's input, [`palette`] is Ctrl+K, [`rename`] edits a
//! title in place, [`page_bar`] is a browser node's address and find fields,
//! [`overlay`] draws palette, selection box, toasts and the empty canvas's
//! hint in window pixels. The pop-ups are one [`overlay_stack`], asked first
//! for every key; [`key_route`] says where a key none of them takes goes.

mod agents;
pub mod clipboard;
pub mod confirm;
pub mod desktop;
pub mod download_strip;
mod file_choosers;
pub mod file_picker;
pub mod input;
pub mod interaction;
pub mod key_route;
pub mod line_edit;
pub mod overlay;
pub mod overlay_stack;
pub mod page_bar;
pub mod page_dialog;
pub mod page_menu;
pub mod palette;
pub mod placement;
pub mod rename;
pub mod routing;
pub mod surface;
pub mod tabs;

use crate::model::{self, Command, NodeId, NodeKind, Point, ProjectId};
use crate::runtime::agent_catalog::AgentCatalog;
use crate::runtime::on_screen::OnScreen;
use crate::runtime::page_nav::{NavError, PageAction};
use crate::runtime::{attention, headless, scene, scene::Gfx, stop_signals, Runtime, RuntimeConfig, Waker};
use canvas_render::{BarPart, Camera, RenderError, Vec2};
use clipboard::SystemClipboard;
use interaction::{Button, CanvasKey, CursorKind, Effect, Interaction, Mods, View};
use key_route::{Focused, KeyRoute, Keystroke, Shortcut};
use overlay::Toast;
use overlay_stack::{KeyCtx, Layer, Overlay, OverlayEffect, OverlayStack};
use palette::{Palette, PaletteAction};
use placement::Placement;
use rename::RenameEditor;
use routing::Router;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
pub use surface::WindowError;
use surface::WindowSurface;
use winit::application::ApplicationHandler;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::window::{CursorIcon, WindowId};

/// How long the camera rests before a wheel pan/zoom is written to the model
/// (which resizes browser views to the new zoom and saves workspace.json).
const CAMERA_SETTLE: Duration = Duration::from_millis(250);
/// Wheel pixels per line for touchpads and precise wheels.
const PIXELS_PER_LINE: f64 = 40.0;

/// The wake-up event sent through the event-loop proxy.
#[derive(Debug, Clone, Copy)]
struct Wake;

/// Runs the app in a window until it is closed or `stop` becomes true (a
/// stop signal sets it: `signals` were blocked before any thread started).
/// `start_services` runs once the runtime exists (tool server, CDP facade…);
/// `stop_services` gets its result back after the window closed, before the
/// engine shuts down.
pub fn run<S>(
    config: RuntimeConfig,
    signals: stop_signals::StopSignals,
    stop: Arc<AtomicBool>,
    start_services: impl FnOnce(&mut Runtime) -> anyhow::Result<S>,
    stop_services: impl FnOnce(S, &mut Runtime),
) -> anyhow::Result<()> {
    let event_loop = EventLoop::<Wake>::with_user_event().build().map_err(WindowError::from)?;
    let proxy = parking_lot::Mutex::new(event_loop.create_proxy());
    let waker = Waker::new();
    waker.set_hook(Box::new(move || {
        // Fails only once the loop has exited; nothing is left to wake then.
        let _ = proxy.lock().send_event(Wake);
    }));
    let config = RuntimeConfig { views_follow_zoom: true, ..config };
    // Before the engine: a signal during its start is taken once it is up (the loop sees `stop`).
    signals
        .watch(stop.clone(), waker.clone())
        .map_err(|e| anyhow::Error::new(e).context("cannot start the stop-signal thread"))?;
    let mut rt = headless::start_runtime(config, cef_bridge::DisplayMode::detect(), waker, None)?;
    stop_signals::warn_if_unblocked();
    let services = match start_services(&mut rt) {
        Ok(s) => s,
        Err(e) => {
            rt.shutdown();
            return Err(e);
        }
    };
    // Only a window notifies the desktop: headless runs have no person at a desktop to call.
    rt.start_desktop_notifications(attention::Bus::Session);
    let mut app = App::new(rt, stop);
    let result = event_loop.run_app(&mut app);
    // The surface goes before the device and the engine.
    app.ws = None;
    if let Some(mut rt) = app.rt.take() {
        stop_services(services, &mut rt);
        rt.set_gfx(None);
        rt.shutdown();
    }
    result.map_err(WindowError::from)?;
    match app.error.take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The window's camera for a model camera on a screen of `scale` window pixels
/// per logical pixel: a model zoom of 100 % draws a world unit as one logical pixel.
fn render_camera(c: model::Camera, scale: f32) -> Camera {
    Camera::new(Vec2::new(c.x as f32, c.y as f32), c.zoom as f32 * scale)
}

/// The model camera of the window's camera (the inverse of [`render_camera`]).
fn model_camera(c: &Camera, scale: f32) -> model::Camera {
    model::Camera { x: f64::from(c.offset.x), y: f64::from(c.offset.y), zoom: f64::from(c.zoom() / scale) }
}

fn cursor_icon(c: CursorKind) -> CursorIcon {
    use model::ResizeEdge as E;
    match c {
        CursorKind::Default => CursorIcon::Default,
        CursorKind::Grab => CursorIcon::Grab,
        CursorKind::Grabbing => CursorIcon::Grabbing,
        CursorKind::Text => CursorIcon::Text,
        CursorKind::Crosshair => CursorIcon::Crosshair,
        CursorKind::Resize(E::N | E::S) => CursorIcon::NsResize,
        CursorKind::Resize(E::E | E::W) => CursorIcon::EwResize,
        CursorKind::Resize(E::NW | E::SE) => CursorIcon::NwseResize,
        CursorKind::Resize(E::NE | E::SW) => CursorIcon::NeswResize,
    }
}

struct App {
    rt: Option<Runtime>,
    stop: Arc<AtomicBool>,
    ws: Option<WindowSurface>,
    /// The camera the window draws with; the model's copy follows when it settles.
    camera: Camera,
    /// The project and model camera the live camera last agreed with.
    synced: Option<(ProjectId, model::Camera)>,
    commit_at: Option<Instant>,
    interaction: Interaction,
    router: Router,
    /// The open pop-ups (a question, the palette, a title or address being
    /// typed, find fields, pages' menus, dialogs and file pickers); keys go to them first.
    overlays: OverlayStack<agents::Answer>,
    /// The agent flows' git work on worker threads.
    agents: agents::AgentFlows,
    /// What "New agent" offers (the version probe's cache), and its answers seen.
    catalog: AgentCatalog,
    catalog_seen: u64,
    /// When a wheel gesture last closed page menus (or went on after closing them).
    menu_wheel: Option<Instant>,
    /// The browser title-bar control under the pointer.
    bar_hover: Option<(NodeId, BarPart)>,
    toasts: Vec<Toast>,
    mods: Mods,
    clipboard: SystemClipboard,
    cursor: CursorKind,
    /// The window's own state (overlay, camera) changed: draw.
    dirty: bool,
    /// Window pixels per logical pixel (the screen's scale factor, 2 on HiDPI).
    ui_scale: f32,
    /// The last surface acquire gave nothing; retried once on the next turn.
    retried: bool,
    /// The window is fully covered or minimised (X11's visibility notify).
    occluded: bool,
    error: Option<anyhow::Error>,
}

impl App {
    fn new(rt: Runtime, stop: Arc<AtomicBool>) -> Self {
        App {
            overlays: OverlayStack::default(),
            agents: agents::AgentFlows::new(),
            menu_wheel: None,
            bar_hover: None,
            catalog: AgentCatalog::new(),
            catalog_seen: 0,
            rt: Some(rt),
            stop,
            ws: None,
            camera: Camera::default(),
            ui_scale: 1.0,
            synced: None,
            commit_at: None,
            interaction: Interaction::new(),
            router: Router::default(),
            toasts: vec![],
            mods: Mods::default(),
            clipboard: SystemClipboard::default(),
            cursor: CursorKind::Default,
            dirty: true,
            retried: false,
            occluded: false,
            error: None,
        }
    }

    fn viewport(&self) -> Vec2 {
        let (w, h) = self.ws.as_ref().map_or((1, 1), WindowSurface::size);
        Vec2::new(w as f32, h as f32)
    }

    /// Tells the runtime what the window shows, so it paces pages and skips
    /// redraws for what is off screen.
    fn share_view(&mut self) {
        if self.ws.is_none() {
            return;
        }
        let r = self.camera.visible_world_rect(self.viewport());
        let world = model::Rect { x: f64::from(r.x), y: f64::from(r.y), w: f64::from(r.w), h: f64::from(r.h) };
        let zoom = f64::from(self.camera.zoom());
        let view = match self.occluded {
            true => OnScreen::nothing(),
            false => OnScreen::new(world, zoom),
        };
        if let Some(rt) = self.rt.as_mut() {
            rt.set_on_screen(Some(view));
        }
    }

    fn title_height(rt: &Runtime) -> f64 {
        f64::from(rt.gfx().map_or(canvas_render::Theme::default().title_height, |g| g.renderer.theme().title_height))
    }

    /// Follows the model's camera when it changed outside the window (tool server, project switch).
    fn adopt_model_camera(&mut self) {
        let Some(p) = self.rt.as_ref().and_then(Runtime::project) else { return };
        let now = (p.id().clone(), p.camera());
        let name = p.name().to_string();
        if self.synced.as_ref() == Some(&now) {
            return;
        }
        let switched = self.synced.as_ref().map(|(id, _)| id) != Some(&now.0);
        if switched || (self.commit_at.is_none() && !self.interaction.busy()) {
            if switched {
                let effects = self.interaction.cancel();
                self.apply(effects);
                if let Some(ws) = &self.ws {
                    ws.window.set_title(&format!("termsprawl — {name}"));
                }
            }
            self.camera = render_camera(now.1, self.ui_scale);
            self.synced = Some(now);
            self.dirty = true;
        }
    }

    /// Writes the live camera to the model (resizes browser views, saves workspace.json).
    fn commit_camera(&mut self) {
        self.commit_at = None;
        let Some(rt) = self.rt.as_mut() else { return };
        let cam = model_camera(&self.camera, self.ui_scale);
        if rt.project().is_some_and(|p| p.camera() != cam) {
            if let Err(e) = rt.apply(Command::SetCamera { camera: cam }) {
                rt.notify(format!("view not saved: {e}"), true);
            }
        }
        self.synced = rt.project().map(|p| (p.id().clone(), p.camera()));
    }

    fn set_focus(&mut self, new: Option<NodeId>) {
        if let Some(rt) = self.rt.as_mut() {
            rt.set_focus(new);
        }
    }

    fn apply(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            // Closing an agent that has a worktree asks first (the answer closes it).
            if let Effect::Apply(Command::RemoveNodes { ids }) = &effect {
                if let Some(question) = self.rt.as_ref().and_then(|rt| agents::ask_before_closing(rt, ids)) {
                    self.ask(question);
                    continue;
                }
            }
            let Some(rt) = self.rt.as_mut() else { return };
            match effect {
                Effect::Apply(cmd) => {
                    let selects_result = matches!(cmd, Command::Duplicate { .. } | Command::GroupNodes { .. });
                    match rt.apply(cmd) {
                        Ok(applied) => {
                            if selects_result && !applied.created.is_empty() {
                                rt.selection_mut().clear();
                                for id in applied.created {
                                    rt.selection_mut().shift_click(id);
                                }
                            }
                        }
                        Err(e) => rt.notify(e.to_string(), true),
                    }
                    rt.prune_selection();
                }
                Effect::EndCoalescing => rt.end_coalescing(),
                Effect::CameraMoved => {
                    self.dirty = true;
                    if !self.interaction.busy() {
                        self.commit_at = Some(Instant::now() + CAMERA_SETTLE);
                    }
                }
                Effect::CommitCamera => self.commit_camera(),
                Effect::Focus(f) => self.set_focus(f),
                Effect::SelectionChanged => {
                    rt.request_redraw();
                    self.dirty = true;
                }
                Effect::Undo | Effect::Redo => {
                    let r = if matches!(effect, Effect::Undo) { rt.undo() } else { rt.redo() };
                    if let Err(e) = r {
                        rt.notify(e.to_string(), true);
                    }
                    rt.prune_selection();
                }
                Effect::OpenPalette { at } => {
                    let p = self.interaction.pointer();
                    let s = self.ui_scale;
                    self.open_palette(at, at.map(|_| (p.x / s, p.y / s)));
                }
                Effect::Route(input) => self.router.pointer(rt, &self.camera, input, self.mods),
                Effect::Rename(id) => self.start_rename(id),
                Effect::BarPress { id, part } => self.bar_press(id, part),
            }
        }
    }

    /// Runs one interaction call with a view of the active project.
    fn gesture(
        &mut self,
        f: impl FnOnce(&mut Interaction, &View<'_>, &mut model::Selection, &mut Camera) -> Vec<Effect>,
    ) {
        let viewport = self.viewport();
        let Some(rt) = self.rt.as_mut() else { return };
        let title_height = Self::title_height(rt);
        let parts = rt.canvas_parts();
        let Some(project) = parts.project else { return };
        let before = self.camera;
        let view =
            View { project, camera: &before, viewport, title_height, focus: parts.focus, ui_scale: self.ui_scale };
        let effects = f(&mut self.interaction, &view, parts.selection, &mut self.camera);
        let cursor = self.interaction.cursor(&view);
        if cursor != self.cursor {
            self.cursor = cursor;
            if let Some(ws) = &self.ws {
                ws.window.set_cursor(cursor_icon(cursor));
            }
        }
        self.apply(effects);
    }

    /// The browser title-bar control under a window position.
    fn bar_at(&self, pos: Vec2) -> Option<(NodeId, BarPart)> {
        let rt = self.rt.as_ref()?;
        let project = rt.workspace().active()?;
        let view = View {
            project,
            camera: &self.camera,
            viewport: self.viewport(),
            title_height: Self::title_height(rt),
            focus: rt.focus(),
            ui_scale: self.ui_scale,
        };
        view.bar_part(pos)
    }

    /// What the window shows, for placing new nodes.
    fn placement(&self) -> Placement {
        Placement { camera: self.camera, viewport: self.viewport() }
    }

    /// Where a new `size` node goes: the free spot nearest a context menu's
    /// point (`at`, the node's top-left), else nearest the centre of the view.
    fn new_node_spot(&self, at: Option<Point>, size: (f64, f64)) -> (f64, f64) {
        self.placement().spot(self.rt.as_ref(), at, size)
    }

    /// Opens the in-place editor on a node's title (what the title bar reads now).
    fn start_rename(&mut self, id: NodeId) {
        self.finish_rename();
        let Some(rt) = self.rt.as_ref() else { return };
        let Some(node) = rt.project().and_then(|p| p.node(&id)) else { return };
        self.overlays.open(Overlay::Rename(RenameEditor::new(id, &rt.node_title(node))));
        self.dirty = true;
    }

    /// Saves the title being edited, if any (a click elsewhere ends the edit).
    fn finish_rename(&mut self) {
        if let Some(editor) = self.overlays.take_rename() {
            self.save_title(editor.save());
        }
    }

    fn save_title(&mut self, save: Command) {
        self.apply(vec![Effect::Apply(save), Effect::EndCoalescing]);
        self.dirty = true;
    }

    /// A press on a browser node's title-bar control.
    fn bar_press(&mut self, id: NodeId, part: BarPart) {
        self.dirty = true;
        let Some(rt) = self.rt.as_mut() else { return };
        let action = match part {
            BarPart::Address => {
                if self.overlays.address().is_none_or(|a| a.node != id) {
                    self.start_address(id);
                }
                return;
            }
            BarPart::Find => return,
            BarPart::Tab(_) | BarPart::CloseTab(_) | BarPart::NewTab => {
                let done = match part {
                    BarPart::Tab(i) => rt.switch_tab(&id, i),
                    BarPart::CloseTab(i) => rt.close_tab_at(&id, i),
                    _ => rt.new_tab(&id, cef_bridge::url_policy::ABOUT_BLANK, true).map(|_| ()),
                };
                match done {
                    Ok(()) if part == BarPart::NewTab => return self.start_address(id),
                    Ok(()) => self.close_fields_of(&id),
                    Err(e) => rt.notify(e.to_string(), true),
                }
                if let Some(rt) = self.rt.as_mut() {
                    rt.request_redraw();
                }
                return;
            }
            BarPart::Back => PageAction::Back,
            BarPart::Forward => PageAction::Forward,
            BarPart::Reload if rt.page_nav(&id).is_some_and(|n| n.loading) => PageAction::Stop,
            BarPart::Reload => PageAction::Reload,
        };
        match rt.page_action(&id, action) {
            // A dim button: nothing that way in the history.
            Ok(()) | Err(NavError::NoHistory(_)) => {}
            Err(e) => rt.notify(e.to_string(), true),
        }
        rt.request_redraw();
    }

    /// Ctrl+T (a new tab, its address field open), Ctrl+W (close the shown
    /// tab, never the node's last), Ctrl+PageDown / Ctrl+PageUp (next /
    /// previous tab) on a focused browser node.
    fn tab_shortcut(&mut self, id: &NodeId, shortcut: Shortcut) {
        let Some(rt) = self.rt.as_mut() else { return };
        let result = match shortcut {
            Shortcut::NewTab => match rt.new_tab(id, cef_bridge::url_policy::ABOUT_BLANK, true) {
                Ok(_) => return self.start_address(id.clone()),
                Err(e) => Err(e),
            },
            Shortcut::CloseTab => {
                let shown = rt.browsers().for_node(id).map(|(t, _)| t.clone());
                match shown {
                    Some(tab) if rt.page_tabs(id).len() > 1 => rt.close_tab(tab),
                    _ => Ok(()),
                }
            }
            Shortcut::StepTab { back } => rt.step_tab(id, back),
            _ => return,
        };
        self.dirty = true;
        if let Some(rt) = self.rt.as_mut() {
            if let Err(e) = result {
                rt.notify(e.to_string(), true);
            }
            rt.request_redraw();
        }
        self.close_fields_of(id);
    }

    /// Closes a node's address and find fields (they were about the tab it showed).
    fn close_fields_of(&mut self, id: &NodeId) {
        self.overlays.close_of(Layer::Address, id);
        self.overlays.close_of(Layer::Find, id);
        self.dirty = true;
    }

    /// Opens a browser node's address field on its URL, all of it selected (a click or Ctrl+L).
    fn start_address(&mut self, id: NodeId) {
        let Some(rt) = self.rt.as_mut() else { return };
        let Some(url) = rt.page_url(&id) else { return };
        self.overlays.open(Overlay::Address(page_bar::AddressField::new(id, &url)));
        rt.request_redraw();
        self.dirty = true;
    }

    /// Navigates to what was typed in the address field: it closes, or says why the address was refused.
    fn navigate(&mut self, node: &NodeId, address: &str) {
        let Some(rt) = self.rt.as_mut() else { return };
        match rt.navigate_node(node, address) {
            Ok(_) => {
                self.overlays.close(Layer::Address);
            }
            // Said in the field, where the person looks, not in a log line.
            Err(e @ (NavError::Refused(_) | NavError::Browser(_))) => {
                if let Some(field) = self.overlays.address_mut() {
                    field.refused(e.to_string());
                }
            }
            Err(e) => {
                self.overlays.close(Layer::Address);
                rt.notify(e.to_string(), true);
            }
        }
    }

    /// Ctrl+F on a browser node: opens its find field (or goes back to it), the last search selected.
    fn open_find(&mut self, id: NodeId) {
        if self.overlays.find().is_some_and(|f| f.node == id) {
            return;
        }
        if let Some(old) = self.overlays.take_find() {
            if let Some(rt) = self.rt.as_mut() {
                rt.end_find(&old.node);
            }
        }
        self.overlays.open(Overlay::Find(page_bar::FindBar::new(id, "")));
        if let Some(rt) = self.rt.as_mut() {
            rt.request_redraw();
        }
        self.dirty = true;
    }

    /// A press on the open find field (it lies over the title bar's drag area): true when on it.
    fn find_field_press(&mut self, pos: Vec2) -> bool {
        let (Some(find), Some(rt)) = (self.overlays.find(), self.rt.as_ref()) else { return false };
        let Some(node) = rt.project().and_then(|p| p.node(&find.node)) else { return false };
        let rect = scene::render_rect(&node.rect);
        let w = self.camera.screen_to_world(pos);
        let tabs = interaction::tab_count(&node.kind);
        let on = canvas_render::bar_part_at(rect, Self::title_height(rt) as f32, tabs, true, w.x, w.y)
            == Some(BarPart::Find);
        if on {
            let id = find.node.clone();
            self.set_focus(Some(id));
        }
        on
    }

    /// Drops the address and find fields of nodes that no longer show a page.
    fn forget_gone_fields(&mut self) {
        let Some(rt) = self.rt.as_ref() else { return };
        if self.overlays.address().is_some_and(|a| rt.page_nav(&a.node).is_none()) {
            self.overlays.close(Layer::Address);
            self.dirty = true;
        }
        if self.overlays.find().is_some_and(|f| rt.page_nav(&f.node).is_none()) {
            self.overlays.close(Layer::Find);
            self.dirty = true;
        }
    }

    /// Follows the screen's scale factor: the same model camera, drawn at the new
    /// scale (100 % is one logical pixel per world unit), browser views repainted
    /// at it, and the overlay and window size in logical pixels.
    fn set_ui_scale(&mut self, scale: f64) {
        let scale = if scale.is_finite() && scale > 0.0 { scale } else { 1.0 };
        let model = model_camera(&self.camera, self.ui_scale);
        self.ui_scale = scale as f32;
        self.camera = render_camera(model, self.ui_scale);
        self.sync_viewport();
        if let Some(rt) = self.rt.as_mut() {
            rt.set_ui_scale(scale);
            rt.sync_browsers();
            rt.request_redraw();
        }
        tracing::info!(scale, "window scale factor");
        self.dirty = true;
    }

    /// Tells the runtime the window's size in logical pixels.
    fn sync_viewport(&mut self) {
        let (Some(rt), Some(ws)) = (self.rt.as_mut(), self.ws.as_ref()) else { return };
        let (w, h) = ws.size();
        let s = f64::from(self.ui_scale);
        rt.set_viewport((f64::from(w.max(1)) / s, f64::from(h.max(1)) / s));
    }

    /// Opens the command palette (at a world point and window position for a
    /// context menu), offering what applies now.
    fn open_palette(&mut self, at: Option<Point>, anchor: Option<(f32, f32)>) {
        let Some(rt) = self.rt.as_ref() else { return };
        let control = rt.tools().server().is_some().then(|| rt.tools().shared.browser_control());
        let pair = rt
            .selection_pair()
            .map(|(a, b)| rt.project().and_then(|p| p.node(&a)).is_some_and(|n| n.links.contains(&b)));
        let offers = self.catalog.offers(&crate::paths::agent_tools(rt.data_dir()), rt.handle().waker());
        let git = rt.project().is_some_and(|p| crate::worktree::in_repository(p.folder()));
        self.catalog_seen = self.catalog.answers();
        let muted = rt.project().is_some_and(|p| rt.notifications_muted(p.folder()));
        let single = rt.selection().to_vec();
        let single = (single.len() == 1).then(|| rt.terminal_ended(&single[0]));
        let palette = Palette::new(at, anchor, !rt.selection().is_empty())
            .with_single_selected(single)
            .with_notifications_muted(muted)
            .with_browser_control(control)
            .with_selected_pair(pair)
            .with_project(rt.project().is_some())
            .with_agents(offers, git)
            .with_worktree_node(agents::selected_worktree(rt).is_some());
        self.overlays.open(Overlay::Palette(Box::new(palette)));
        self.dirty = true;
    }

    /// Ctrl+J: moves to the node that has waited longest for the person (in
    /// any project) and gives it the keyboard. False when nobody waits.
    fn jump_to_next_needing_you(&mut self) -> bool {
        let Some(next) = self.rt.as_ref().and_then(Runtime::next_needing_you) else { return false };
        self.jump_to(&next.project, next.node);
        true
    }

    /// Shows `node` of `project` (switching tabs if needed) centred at a
    /// readable zoom, selected, with the keyboard.
    fn jump_to(&mut self, project: &model::ProjectId, node: NodeId) {
        if self.rt.as_ref().and_then(Runtime::project_id).as_ref() != Some(project) {
            self.switch_project(project.clone());
            // Retitles the window for the new tab before the camera moves on.
            self.adopt_model_camera();
        }
        let Some(rt) = self.rt.as_mut() else { return };
        let Some(p) = rt.project().filter(|p| p.id() == project) else { return };
        let Some(rect) = p.node(&node).map(|n| n.rect) else { return };
        let camera = attention::jump_camera(p.camera(), &rect, rt.viewport());
        if let Err(e) = rt.apply(Command::SetCamera { camera }) {
            rt.notify(format!("view not moved: {e}"), true);
            return;
        }
        rt.selection_mut().click(node.clone());
        // The window's camera follows the model's at once (no settle, no animation).
        let effects = self.interaction.cancel();
        self.apply(effects);
        self.commit_at = None;
        self.camera = render_camera(camera, self.ui_scale);
        self.synced = Some((project.clone(), camera));
        self.set_focus(Some(node));
        self.dirty = true;
    }

    /// Makes another project the active tab (the camera follows it).
    fn switch_project(&mut self, id: model::ProjectId) {
        self.set_focus(None);
        self.apply(vec![Effect::Apply(Command::ActivateProject { id }), Effect::SelectionChanged]);
        self.dirty = true;
    }

    /// Closes a project's tab (its layout stays in its folder).
    fn close_project(&mut self, id: model::ProjectId) {
        self.set_focus(None);
        self.apply(vec![Effect::Apply(Command::CloseProject { id }), Effect::SelectionChanged]);
    }

    /// A press on the tab strip: a left click activates the tab, a middle click closes it.
    fn tab_press(&mut self, pos: Vec2, b: Button) -> bool {
        let Some(rt) = self.rt.as_ref() else { return false };
        let all = tabs::tabs(rt);
        let s = self.ui_scale;
        let Some(i) = tabs::hit(all.len(), rt.viewport().0 as f32, pos.x / s, pos.y / s) else { return false };
        let id = all[i].id.clone();
        match b {
            Button::Left => self.switch_project(id),
            Button::Middle => self.close_project(id),
            Button::Right => {}
        }
        true
    }

    fn run_palette(&mut self, action: PaletteAction, at: Option<Point>) {
        let added = match action {
            PaletteAction::FitAll => return self.gesture(|_, v, _, cam| interaction::fit_all(v, cam)),
            PaletteAction::ResetZoom => {
                let v = self.viewport();
                self.camera.zoom_at(Vec2::new(v.x / 2.0, v.y / 2.0), self.ui_scale);
                return self.apply(vec![Effect::CameraMoved, Effect::CommitCamera]);
            }
            PaletteAction::Duplicate | PaletteAction::Delete => {
                let Some(rt) = self.rt.as_mut() else { return };
                let ids = rt.selection().to_vec();
                let cmd = if action == PaletteAction::Duplicate {
                    Command::Duplicate { ids }
                } else {
                    Command::RemoveNodes { ids }
                };
                return self.apply(vec![Effect::Apply(cmd), Effect::SelectionChanged]);
            }
            PaletteAction::OpenProject(path) => {
                let folder = model::persist::resolve_path(&path, None, model::persist::home_dir().as_deref());
                if !folder.is_absolute() {
                    if let Some(rt) = self.rt.as_mut() {
                        rt.notify(format!("open a project by its absolute path (or ~/…), not {path:?}"), true);
                    }
                    return;
                }
                self.set_focus(None);
                if let Some(rt) = self.rt.as_mut() {
                    rt.open_project(&folder);
                    rt.request_redraw();
                }
                self.dirty = true;
                return;
            }
            PaletteAction::CloseProject => {
                let Some(id) = self.rt.as_ref().and_then(|rt| rt.project().map(|p| p.id().clone())) else { return };
                return self.close_project(id);
            }
            PaletteAction::Link | PaletteAction::Unlink => {
                let Some((a, b)) = self.rt.as_ref().and_then(|rt| rt.selection_pair()) else { return };
                let cmd = if action == PaletteAction::Link {
                    Command::LinkNodes { a, b }
                } else {
                    Command::UnlinkNodes { a, b }
                };
                return self.apply(vec![Effect::Apply(cmd)]);
            }
            PaletteAction::SetBrowserControl(on) => {
                if let Some(rt) = self.rt.as_mut() {
                    rt.set_agent_browser_control(on);
                }
                return;
            }
            PaletteAction::Rename => {
                let Some(id) = self.rt.as_ref().and_then(|rt| rt.selection().to_vec().into_iter().next()) else {
                    return;
                };
                return self.start_rename(id);
            }
            PaletteAction::Restart => {
                let Some(rt) = self.rt.as_mut() else { return };
                let Some(id) = rt.selection().to_vec().into_iter().next() else { return };
                if let Err(e) = rt.restart_terminal(&id) {
                    rt.notify(e, true);
                }
                return;
            }
            PaletteAction::SetNotificationsMuted(muted) => {
                if let Some(rt) = self.rt.as_mut() {
                    rt.set_notifications_muted(muted);
                }
                self.dirty = true;
                return;
            }
            PaletteAction::Undo => return self.apply(vec![Effect::Undo]),
            PaletteAction::Redo => return self.apply(vec![Effect::Redo]),
            PaletteAction::NewAgent { kind, worktree } => {
                let place = self.placement();
                let Some(rt) = self.rt.as_mut() else { return };
                let steps = self.agents.new_agent(rt, &place, kind, worktree, at);
                return self.agent_steps(steps);
            }
            PaletteAction::ShowWorktreeDiff => {
                let place = self.placement();
                let Some(rt) = self.rt.as_mut() else { return };
                let steps = agents::show_worktree_diff(rt, &place, at);
                return self.agent_steps(steps);
            }
            PaletteAction::Explain(text) => {
                if let Some(rt) = self.rt.as_mut() {
                    rt.notify(text, false);
                }
                return;
            }
            PaletteAction::AddGroup if self.rt.as_ref().is_some_and(|rt| !rt.selection().is_empty()) => {
                let ids = self.rt.as_ref().map(|rt| rt.selection().to_vec()).unwrap_or_default();
                return self.apply(vec![Effect::Apply(Command::GroupNodes { ids, title: None })]);
            }
            PaletteAction::AddBrowser(url) => {
                let size = (960.0, 640.0);
                let spot = self.new_node_spot(at, size);
                let Some(rt) = self.rt.as_mut() else { return };
                let kind = cef_bridge::url_policy::normalize_address(&url)
                    .map_err(|e| e.to_string())
                    .and_then(|u| NodeKind::browser(&u).map(|k| (k, u)).map_err(|e| e.to_string()));
                match kind {
                    Ok((kind, url)) => rt.add_node(kind, &url, size, Some(spot)).map_err(|e| e.to_string()),
                    Err(e) => Err(format!("cannot open {url}: {e}")),
                }
            }
            PaletteAction::AddTerminal => {
                let size = (720.0, 440.0);
                let spot = self.new_node_spot(at, size);
                let Some(rt) = self.rt.as_mut() else { return };
                let cwd = rt.project().map(|p| p.folder().to_path_buf()).unwrap_or_default();
                let kind = NodeKind::Terminal { cwd, command: None, tmux_session: None };
                rt.add_node(kind, model::title::DEFAULT_TERMINAL_TITLE, size, Some(spot)).map_err(|e| e.to_string())
            }
            PaletteAction::AddSticky => {
                let size = (260.0, 200.0);
                let spot = self.new_node_spot(at, size);
                let Some(rt) = self.rt.as_mut() else { return };
                rt.add_node(NodeKind::Sticky { text: String::new() }, "Note", size, Some(spot))
                    .map_err(|e| e.to_string())
            }
            PaletteAction::AddGroup => {
                let size = (520.0, 360.0);
                let spot = self.new_node_spot(at, size);
                let Some(rt) = self.rt.as_mut() else { return };
                rt.add_node(NodeKind::Group { members: vec![] }, "Group", size, Some(spot)).map_err(|e| e.to_string())
            }
        };
        let Some(rt) = self.rt.as_mut() else { return };
        match added {
            Ok(id) => {
                rt.selection_mut().click(id.clone());
                let takes_keys = rt
                    .project()
                    .and_then(|p| p.node(&id))
                    .is_some_and(|n| interaction::is_interactive(&n.kind) || matches!(n.kind, NodeKind::Sticky { .. }));
                self.set_focus(if takes_keys { Some(id) } else { None });
            }
            Err(e) => rt.notify(e, true),
        }
    }

    /// What an agent flow asks of the window.
    fn agent_steps(&mut self, steps: Vec<agents::Step>) {
        for step in steps {
            match step {
                agents::Step::Ask(question) => self.ask(question),
                agents::Step::Focus(id) => self.set_focus(Some(id)),
            }
        }
    }

    /// Opens a question (the log says what it asks).
    fn ask(&mut self, question: confirm::Confirm<agents::Answer>) {
        tracing::info!("asking \"{}\": {}", question.title, question.lines.first().map_or("", String::as_str));
        self.overlays.open(Overlay::Confirm(question));
        self.dirty = true;
    }

    /// Runs the jobs the agent flows' worker threads sent.
    fn run_window_jobs(&mut self) {
        loop {
            let Some(rt) = self.rt.as_mut() else { return };
            let Some(steps) = self.agents.run_next_job(rt) else { return };
            self.agent_steps(steps);
            self.dirty = true;
        }
    }

    /// A click while a question is open (window logical pixels).
    fn confirm_click(&mut self, x: f32, y: f32) {
        let viewport = self.rt.as_ref().map_or((1.0, 1.0), |rt| (rt.viewport().0 as f32, rt.viewport().1 as f32));
        let effects = self.overlays.confirm_click(viewport, x, y);
        self.overlay_effects(effects);
    }

    /// Carries out what a pop-up asked for.
    fn overlay_effects(&mut self, effects: Vec<OverlayEffect<agents::Answer>>) {
        for effect in effects {
            match effect {
                OverlayEffect::Redraw => self.dirty = true,
                OverlayEffect::RedrawCanvas => {
                    if let Some(rt) = self.rt.as_mut() {
                        rt.request_redraw();
                    }
                }
                OverlayEffect::RunPalette(action, at) => self.run_palette(action, at),
                OverlayEffect::SaveTitle(save) => self.save_title(*save),
                OverlayEffect::Answer(answer) => {
                    let Some(rt) = self.rt.as_mut() else { continue };
                    let steps = self.agents.answer(rt, answer);
                    self.agent_steps(steps);
                }
                OverlayEffect::Navigate { node, address } => self.navigate(&node, &address),
                OverlayEffect::FindInPage { node, text, forward } => {
                    let Some(rt) = self.rt.as_mut() else { continue };
                    if let Err(e) = rt.find_in_page(&node, &text, forward) {
                        tracing::debug!(%node, error = %e, "find not run");
                    }
                }
                OverlayEffect::EndFind(node) => {
                    if let Some(rt) = self.rt.as_mut() {
                        rt.end_find(&node);
                    }
                }
                OverlayEffect::AnswerMenu(id, outcome) => self.answer_page_menu(&id, outcome),
                OverlayEffect::AnswerDialog(id, answer) => self.answer_page_dialog(&id, answer),
                OverlayEffect::AnswerChooser(id, outcome) => self.answer_file_chooser(&id, outcome),
            }
        }
    }

    /// A key: the pop-ups first (the first that takes it gets it), then as [`key_route`] says.
    fn keyboard(&mut self, event: &winit::event::KeyEvent) {
        use winit::platform::scancode::PhysicalKeyExtScancode;
        let k = Keystroke {
            key: &event.logical_key,
            text: event.text.as_deref(),
            pressed: event.state == ElementState::Pressed,
            mods: self.mods,
        };
        // Pages' menus, dialogs and file pickers are pop-ups too: match them to what the pages wait on now.
        self.sync_page_menus();
        self.sync_page_dialogs();
        self.sync_file_pickers();
        let focus = self.rt.as_ref().and_then(|rt| rt.focus().cloned());
        let focused = match (&focus, self.rt.as_ref()) {
            (None, _) => Focused::Canvas,
            (Some(id), Some(rt)) if rt.page_nav(id).is_some() => Focused::Browser,
            (Some(id), Some(rt)) if rt.terminals().get(id).is_some() => Focused::Terminal,
            (Some(_), _) => Focused::Other,
        };
        let route = key_route::route(&k, focused, || self.rt.as_ref().and_then(Runtime::next_needing_you).is_some());
        let ctx = KeyCtx { focus: focus.as_ref(), browser: focused == Focused::Browser, shortcut: route.is_shortcut() };
        let clipboard = &mut self.clipboard;
        if let Some(effects) = self.overlays.key(&k, &ctx, &mut || clipboard.text()) {
            return self.overlay_effects(effects);
        }
        match route {
            KeyRoute::Shortcut(shortcut) => self.shortcut(shortcut, focus),
            KeyRoute::NobodyWaits => {
                if let Some(rt) = self.rt.as_mut() {
                    rt.notify("nothing needs you right now".into(), false);
                }
            }
            KeyRoute::Unfocus => self.set_focus(None),
            KeyRoute::Copy | KeyRoute::Paste => {
                if let Some(id) = focus {
                    self.terminal_clipboard(&id, route == KeyRoute::Copy);
                }
            }
            KeyRoute::Node { mods, canvas } => {
                let Some(id) = focus else { return };
                let native = event.physical_key.to_scancode().and_then(|s| i32::try_from(s + 8).ok()).unwrap_or(0);
                let Some(rt) = self.rt.as_mut() else { return };
                let press = routing::KeyPress {
                    key: k.key,
                    location: event.location,
                    text: k.text,
                    pressed: k.pressed,
                    mods,
                    native,
                };
                if routing::key_to_node(rt, &id, press) {
                    return;
                }
                if let Some(ck) = canvas {
                    self.canvas_key(ck);
                }
            }
            KeyRoute::Canvas(ck) => self.canvas_key(ck),
            KeyRoute::Nothing => {}
        }
    }

    /// A shortcut of the window's (`focus`: the node with the keyboard).
    fn shortcut(&mut self, shortcut: Shortcut, focus: Option<NodeId>) {
        match shortcut {
            Shortcut::Palette => self.open_palette(None, None),
            Shortcut::NextNeedingYou => {
                self.jump_to_next_needing_you();
            }
            Shortcut::StepProject { back } => {
                let next = self.rt.as_ref().and_then(|rt| tabs::step(&tabs::tabs(rt), back));
                if let Some(id) = next {
                    self.switch_project(id);
                }
            }
            Shortcut::Address | Shortcut::Find | Shortcut::NewTab | Shortcut::CloseTab | Shortcut::StepTab { .. } => {
                let Some(id) = focus else { return };
                match shortcut {
                    Shortcut::Address => self.start_address(id),
                    Shortcut::Find => self.open_find(id),
                    _ => self.tab_shortcut(&id, shortcut),
                }
            }
        }
    }

    /// A key for the canvas itself.
    fn canvas_key(&mut self, ck: CanvasKey) {
        let mods = self.mods;
        self.gesture(|it, v, sel, cam| it.canvas_key(v, sel, cam, ck, mods));
    }

    /// Ctrl+Shift+C / Ctrl+Shift+V in a terminal: copy the selection, paste the clipboard.
    fn terminal_clipboard(&mut self, id: &NodeId, copy: bool) {
        let Some(rt) = self.rt.as_mut() else { return };
        let Some(live) = rt.terminals().get(id) else { return };
        if copy {
            if let Some(text) = live.term.with_screen(|s| s.selection_text()) {
                if let Err(e) = self.clipboard.set_text(text) {
                    rt.notify(format!("copy failed: {e}"), true);
                }
            }
        } else {
            match self.clipboard.text() {
                Ok(text) => {
                    if let Err(e) = live.term.paste(&text) {
                        tracing::debug!(node = %id, error = %e, "paste not written");
                    }
                }
                Err(clipboard::ClipboardError::Empty) => {}
                Err(e) => rt.notify(format!("paste failed: {e}"), true),
            }
        }
    }

    /// Matches the open page dialogs to what the pages wait on now; returns each one's node body on screen.
    fn sync_page_dialogs(&mut self) -> Vec<(NodeId, canvas_render::Rect)> {
        let Some(rt) = self.rt.as_ref() else { return vec![] };
        let open = page_dialog::open_dialogs(rt, &self.camera, self.ui_scale);
        let waiting: Vec<_> = open.iter().map(|(id, dialog, _)| (id, dialog)).collect();
        self.dirty |= self.overlays.sync_page_dialogs(&waiting);
        open.into_iter().map(|(id, _, body)| (id, body)).collect()
    }

    /// Matches the open page menus to what the pages wait on now; returns each one's layout on screen.
    fn sync_page_menus(&mut self) -> Vec<(NodeId, page_menu::Layout)> {
        let (Some(rt), Some(ws)) = (self.rt.as_ref(), self.ws.as_ref()) else { return vec![] };
        let (w, h) = ws.size();
        let screen = (w as f32 / self.ui_scale, h as f32 / self.ui_scale);
        let open = page_menu::open_menus(rt, &self.camera, self.ui_scale);
        let waiting: Vec<_> = open.iter().map(|(id, menu, _, _)| (id, menu)).collect();
        self.dirty |= self.overlays.sync_page_menus(&waiting);
        open.into_iter()
            .filter_map(|(id, _, body, view)| {
                let layout = self.overlays.page_menu(&id)?.layout(body, view, screen);
                Some((id, layout))
            })
            .collect()
    }

    /// The pointer moved over the open page menus: the entry under it is chosen.
    fn page_menu_hover(&mut self, x: f32, y: f32) {
        for (id, layout) in self.sync_page_menus() {
            if let Some(m) = self.overlays.page_menu_mut(&id) {
                self.dirty |= m.hover(&layout, x, y);
            }
        }
    }

    /// A press while page menus are open: on an entry it is picked, elsewhere
    /// on a menu nothing happens, off them every menu closes; true when a
    /// menu was open (the press goes no further).
    fn page_menu_press(&mut self, x: f32, y: f32, left: bool) -> bool {
        let layouts = self.sync_page_menus();
        if layouts.is_empty() {
            return false;
        }
        let on = layouts.iter().find(|(_, l)| overlay::inside(&l.panel, x, y));
        match on {
            Some((id, l)) => {
                let outcome = self.overlays.page_menu(id).and_then(|m| if left { m.click(l, x, y) } else { None });
                if let Some(outcome) = outcome {
                    self.answer_page_menu(&id.clone(), outcome);
                }
            }
            None => {
                for (id, _) in layouts {
                    self.answer_page_menu(&id, page_menu::MenuOutcome::Close);
                }
            }
        }
        true
    }

    /// A wheel event while page menus are open closes them, as a desktop
    /// menu's grab does; the rest of that gesture (one notch can arrive as
    /// several events, a touchpad's flick as dozens) scrolls nothing either.
    /// True when the event goes no further.
    fn wheel_closes_menus(&mut self) -> bool {
        let now = Instant::now();
        if self.overlays.has(Layer::PageMenu) {
            for id in self.overlays.page_menu_nodes() {
                self.answer_page_menu(&id, page_menu::MenuOutcome::Close);
            }
            self.menu_wheel = Some(now);
            return true;
        }
        let same_gesture = self.menu_wheel.is_some_and(|t| now.duration_since(t) < page_menu::WHEEL_GESTURE_GAP);
        self.menu_wheel = same_gesture.then_some(now);
        same_gesture
    }

    fn answer_page_menu(&mut self, id: &NodeId, outcome: page_menu::MenuOutcome) {
        self.overlays.close_of(Layer::PageMenu, id);
        self.dirty = true;
        let Some(rt) = self.rt.as_mut() else { return };
        let command = match outcome {
            page_menu::MenuOutcome::Pick(c) => Some(c),
            page_menu::MenuOutcome::Close => None,
        };
        if let Err(e) = rt.answer_page_menu(id, command) {
            rt.notify(e.to_string(), true);
        }
    }

    /// A press on a page dialog's panel answers it (on a button) or does nothing; true when it was on one.
    fn page_dialog_press(&mut self, x: f32, y: f32) -> bool {
        for (id, body) in self.sync_page_dialogs() {
            let Some(d) = self.overlays.page_dialog(&id) else { continue };
            if page_dialog::on_panel(d, body, x, y) {
                if let Some(answer) = d.click(body, x, y) {
                    self.answer_page_dialog(&id, answer);
                }
                return true;
            }
        }
        false
    }

    /// A press on a node's download shelf: its buttons act, the rest of it keeps the press from the page.
    fn download_shelf_press(&mut self, x: f32, y: f32) -> bool {
        let Some(rt) = self.rt.as_mut() else { return false };
        let shelves = download_strip::shelves(rt, &self.camera, self.ui_scale);
        let Some((node, action)) = shelves.iter().find_map(|s| s.press(x, y).map(|a| (s.node.clone(), a))) else {
            return false;
        };
        match action {
            download_strip::ShelfAction::Dismiss(guid) => {
                rt.dismiss_download(&node, &guid);
                self.dirty = true;
            }
            download_strip::ShelfAction::OpenFolder(folder) => {
                if let Err(e) = desktop::open(&folder) {
                    rt.notify(format!("cannot open {}: {e}", folder.display()), true);
                }
            }
            download_strip::ShelfAction::Nothing => {}
        }
        true
    }

    fn answer_page_dialog(&mut self, id: &NodeId, answer: page_dialog::Answer) {
        self.overlays.close_of(Layer::PageDialog, id);
        self.dirty = true;
        tracing::info!(node = %id, accepted = matches!(answer, page_dialog::Answer::Accept(_)), "page dialog answered by the person");
        let Some((_, b)) = self.rt.as_ref().and_then(|rt| rt.browsers().for_node(id)) else { return };
        let result = match answer {
            page_dialog::Answer::Accept(text) => b.answer_dialog(true, text.as_deref()),
            page_dialog::Answer::Dismiss => b.answer_dialog(false, None),
        };
        if let Err(e) = result {
            tracing::debug!(node = %id, error = %e, "page dialog answer not delivered");
        }
    }

    fn render(&mut self) {
        let dialogs = self.sync_page_dialogs();
        let menus = self.sync_page_menus();
        let pickers = self.sync_file_pickers();
        let picker_views = self.file_picker_views(&pickers);
        self.share_view();
        let (Some(rt), Some(ws)) = (self.rt.as_mut(), self.ws.as_mut()) else { return };
        let Some(mut gfx) = rt.take_gfx() else { return };
        rt.upload_frames(&mut gfx.renderer, false);
        let mut scene = rt.scene_on_screen();
        for v in scene.nodes.iter_mut() {
            let Some(bar) = v.bar.as_mut() else { continue };
            let is = |id: &NodeId| scene::stable_key(id.as_str()) == v.id;
            if let Some((_, part)) = self.bar_hover.as_ref().filter(|(id, _)| is(id)) {
                bar.hover = Some(*part);
            }
            if let Some(a) = self.overlays.address().filter(|a| is(&a.node)) {
                a.show(bar);
            }
            if let Some(f) = self.overlays.find().filter(|f| is(&f.node)) {
                let matches = rt.page_nav(&f.node).and_then(|n| n.matches).map(|m| (m.count, m.active));
                f.show(bar, matches);
            }
        }
        if let Some(editor) = self.overlays.rename() {
            let key = scene::stable_key(editor.id.as_str());
            if let Some(v) = scene.nodes.iter_mut().find(|v| v.id == key) {
                v.title = editor.shown();
                // On a narrow title bar the keys would crowd out the name being typed.
                if v.rect.w >= rename::HINT_MIN_WIDTH {
                    v.badge = Some(rename::hint_badge());
                }
            }
        }
        let (w, h) = ws.size();
        // The overlay is laid out in logical pixels and drawn at the screen's scale.
        let s = self.ui_scale;
        let marquee = self.interaction.marquee().map(|(x, y, mw, mh)| (x / s, y / s, mw / s, mh / s));
        let hint = rt.project().is_some_and(|p| p.nodes().next().is_none());
        let mut overlay =
            overlay::build((w as f32 / s, h as f32 / s), self.overlays.palette(), marquee, &self.toasts, hint);
        overlay.extend(tabs::views(&tabs::tabs(rt), w as f32 / s));
        for shelf in download_strip::shelves(rt, &self.camera, self.ui_scale) {
            overlay.extend(shelf.views(scene::stable_key(&format!("downloads {}", shelf.node))));
        }
        for (id, body) in &dialogs {
            if let Some(d) = self.overlays.page_dialog(id) {
                overlay.extend(d.views(*body, scene::stable_key(&format!("page dialog {id}"))));
            }
        }
        overlay.extend(picker_views);
        for (id, layout) in &menus {
            if let Some(m) = self.overlays.page_menu(id) {
                overlay.extend(m.views(layout, scene::stable_key(&format!("page menu {id}"))));
            }
        }
        if let Some(d) = self.overlays.confirm() {
            overlay.extend(overlay::confirm_views((w as f32 / s, h as f32 / s), d));
        }
        gfx.renderer.set_overlay_scaled(overlay, s);
        if gfx.renderer.needs_redraw(&scene, &self.camera, (w, h)) {
            let started = Instant::now();
            match gfx.renderer.render_to_surface(&scene, &self.camera, &ws.surface, &ws.config) {
                Ok(Some(stats)) => {
                    self.retried = false;
                    tracing::debug!(target: "termsprawl::frames", ms = started.elapsed().as_secs_f64() * 1e3, visible = stats.nodes_visible, rerendered = stats.nodes_rerendered, "frame");
                }
                Ok(None) => {
                    // No texture right now (reconfigured or timed out): try once more next turn.
                    self.dirty = !self.retried;
                    self.retried = true;
                }
                Err(RenderError::SurfaceLost) => {
                    ws.surface.configure(&gfx.gpu.device, &ws.config);
                    self.dirty = true;
                }
                Err(e) => tracing::warn!("frame not rendered: {e}"),
            }
        }
        rt.set_gfx(Some(gfx));
    }
}

fn button(b: MouseButton) -> Option<Button> {
    match b {
        MouseButton::Left => Some(Button::Left),
        MouseButton::Middle => Some(Button::Middle),
        MouseButton::Right => Some(Button::Right),
        _ => None,
    }
}

impl ApplicationHandler<Wake> for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.ws.is_some() {
            return;
        }
        let title = self
            .rt
            .as_ref()
            .and_then(Runtime::project)
            .map(|p| format!("termsprawl — {}", p.name()))
            .unwrap_or_else(|| "termsprawl".into());
        let opened = WindowSurface::open(event_loop, &title).and_then(|(ws, gpu)| Ok((ws, Gfx::with_gpu(gpu)?)));
        match opened {
            Ok((ws, gfx)) => {
                let scale = ws.window.scale_factor();
                self.ws = Some(ws);
                // Also gives the runtime the window's logical size.
                self.set_ui_scale(scale);
                if let Some(rt) = self.rt.as_mut() {
                    rt.set_gfx(Some(gfx));
                    // Terminal sizes come from the renderer's cell metrics now that it exists.
                    rt.sync_terminals();
                    rt.request_redraw();
                }
                self.adopt_model_camera();
                println!(
                    "termsprawl: window open, data dir {}",
                    self.rt.as_ref().map(|rt| rt.data_dir().display().to_string()).unwrap_or_default()
                );
            }
            Err(e) => {
                self.error = Some(e.into());
                event_loop.exit();
            }
        }
    }

    fn user_event(&mut self, _event_loop: &ActiveEventLoop, _event: Wake) {
        // The work happens in about_to_wait, which follows every batch of events.
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => {
                if let (Some(ws), Some(gfx)) = (self.ws.as_mut(), self.rt.as_ref().and_then(|rt| rt.gfx())) {
                    ws.resize(&gfx.gpu.device, size.width, size.height);
                }
                self.sync_viewport();
                self.dirty = true;
            }
            WindowEvent::ScaleFactorChanged { scale_factor, .. } => self.set_ui_scale(scale_factor),
            WindowEvent::RedrawRequested => self.render(),
            WindowEvent::Occluded(hidden) => {
                // Covered or minimised (X11 says so): pages slow down, nothing redraws for them.
                self.occluded = hidden;
                self.share_view();
                self.dirty = !hidden;
            }
            WindowEvent::ModifiersChanged(m) => self.mods = input::mods(m.state()),
            WindowEvent::Focused(false) => {
                let effects = self.interaction.cancel();
                self.apply(effects);
                if let Some(rt) = self.rt.as_mut() {
                    rt.set_window_focused(false);
                }
            }
            WindowEvent::Focused(true) => {
                if let Some(rt) = self.rt.as_mut() {
                    rt.set_window_focused(true);
                }
            }
            WindowEvent::KeyboardInput { event, is_synthetic: false, .. } => self.keyboard(&event),
            WindowEvent::CursorMoved { position, .. } => {
                let pos = Vec2::new(position.x as f32, position.y as f32);
                if self.overlays.has(Layer::PageMenu) {
                    self.page_menu_hover(pos.x / self.ui_scale, pos.y / self.ui_scale);
                }
                self.gesture(|it, v, sel, cam| it.pointer_move(v, sel, cam, pos));
                let hover = self.bar_at(pos);
                if hover != self.bar_hover {
                    self.bar_hover = hover;
                    self.dirty = true;
                }
                if self.interaction.marquee().is_some() {
                    self.dirty = true;
                }
            }
            WindowEvent::MouseInput { state, button: b, .. } => {
                let Some(b) = button(b) else { return };
                let pos = self.interaction.pointer();
                if self.overlays.confirm().is_some() {
                    // The dialog is modal: clicks answer it or do nothing.
                    if state == ElementState::Pressed && b == Button::Left {
                        self.confirm_click(pos.x / self.ui_scale, pos.y / self.ui_scale);
                    }
                    return;
                }
                if state == ElementState::Pressed
                    && self.page_menu_press(pos.x / self.ui_scale, pos.y / self.ui_scale, b == Button::Left)
                {
                    return;
                }
                if state == ElementState::Pressed && b == Button::Left {
                    let (x, y) = (pos.x / self.ui_scale, pos.y / self.ui_scale);
                    if self.page_dialog_press(x, y) || self.file_picker_press(x, y) || self.download_shelf_press(x, y) {
                        return;
                    }
                }
                if state == ElementState::Pressed {
                    self.finish_rename();
                    // A press anywhere but the field being typed in leaves it, the page's URL back.
                    let on = self.bar_at(pos);
                    if self.overlays.address().is_some_and(|a| on != Some((a.node.clone(), BarPart::Address))) {
                        self.overlays.close(Layer::Address);
                        self.dirty = true;
                    }
                    if b == Button::Left && self.find_field_press(pos) {
                        self.dirty = true;
                        return;
                    }
                }
                // A click anywhere closes the palette; it does not reach the canvas.
                if state == ElementState::Pressed && self.overlays.close(Layer::Palette) {
                    self.dirty = true;
                    return;
                }
                if state == ElementState::Pressed && self.tab_press(pos, b) {
                    return;
                }
                let mods = self.mods;
                match state {
                    ElementState::Pressed => self.gesture(|it, v, sel, _| it.pointer_down(v, sel, pos, b, mods)),
                    ElementState::Released => self.gesture(|it, v, sel, _| it.pointer_up(v, sel, pos, b)),
                }
            }
            WindowEvent::MouseWheel { delta, .. } => {
                let (dx, dy) = match delta {
                    MouseScrollDelta::LineDelta(x, y) => (x, y),
                    MouseScrollDelta::PixelDelta(p) => ((p.x / PIXELS_PER_LINE) as f32, (p.y / PIXELS_PER_LINE) as f32),
                };
                let pos = self.interaction.pointer();
                if self.wheel_closes_menus() {
                    return;
                }
                if self.file_picker_wheel(pos.x / self.ui_scale, pos.y / self.ui_scale, dy) {
                    return;
                }
                let mods = self.mods;
                self.gesture(|it, v, _, cam| it.wheel(v, cam, dx, dy, mods));
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        if self.stop.load(Ordering::Relaxed) {
            event_loop.exit();
            return;
        }
        self.run_window_jobs();
        if self.catalog.answers() != self.catalog_seen {
            self.catalog_seen = self.catalog.answers();
            if let (Some(p), Some(rt)) = (self.overlays.palette_mut(), self.rt.as_ref()) {
                p.set_agents(self.catalog.offers(&crate::paths::agent_tools(rt.data_dir()), rt.handle().waker()));
                self.dirty = true;
            }
        }
        self.share_view();
        let Some(rt) = self.rt.as_mut() else { return };
        rt.tick();
        self.forget_gone_fields();
        let Some(rt) = self.rt.as_mut() else { return };
        if rt.quitting() {
            event_loop.exit();
            return;
        }
        // The person activated a desktop notification: take them to its node.
        if let Some(node) = rt.take_activated_node() {
            if let Some(project) = rt.project_of(&node) {
                self.jump_to(&project, node);
                if let Some(ws) = &self.ws {
                    ws.window.focus_window();
                }
            }
        }
        let Some(rt) = self.rt.as_mut() else { return };
        let now = Instant::now();
        for notice in rt.take_notices() {
            self.toasts.push(Toast { notice, shown: now });
            self.dirty = true;
        }
        // A terminal program (OSC 52) or a page menu copied: hand it to the system clipboard.
        if let Some(text) = rt.take_clipboard() {
            if let Err(e) = self.clipboard.set_text(text) {
                tracing::info!("copied text not put on the clipboard: {e}");
            }
        }
        if self.commit_at.is_some_and(|t| t <= now) {
            self.commit_camera();
        }
        self.adopt_model_camera();
        let before = self.toasts.len();
        let toast_deadline = overlay::expire(&mut self.toasts, now);
        if self.toasts.len() != before {
            self.dirty = true;
        }
        let Some(rt) = self.rt.as_mut() else { return };
        let redraw = rt.take_redraw();
        if redraw || self.dirty {
            self.dirty = false;
            if let Some(ws) = &self.ws {
                ws.window.request_redraw();
            }
        }
        let deadline =
            [Some(rt.next_deadline()), self.commit_at, toast_deadline].into_iter().flatten().min().unwrap_or(now);
        event_loop.set_control_flow(ControlFlow::WaitUntil(deadline.max(now)));
    }
}
