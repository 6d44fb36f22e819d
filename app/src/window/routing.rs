//! Input for the focused node: pointer, wheel and keys forwarded into a
//! browser page (CEF input at page pixels that account for zoom and pan), a
//! terminal (xterm mouse reports, selection, scrollback, encoded keys) or a
//! sticky note (typing edits its text).

use super::input;
use super::interaction::{Button, Mods, NodeInput};
use crate::model::{Command, NodeId, NodeKind};
use crate::runtime::scene::render_rect;
use crate::runtime::Runtime;
use canvas_render::{Camera, Rect, Vec2};
use cef_bridge::input::{ButtonsHeld, MouseButton as CefButton};
use terminal::mouse::{
    encode_mouse, wheel_action, MouseAction, MouseButton as TermButton, MouseEvent, MouseMode, WheelAction,
};
use terminal::{SelectionKind, Side};

/// Page pixels CEF scrolls per wheel line.
const BROWSER_PX_PER_LINE: f32 = 100.0;

/// Where a window point lands in a page: `body` is the node's body on screen,
/// `body_world` its size in world units and `view` the page's size in pixels.
/// page px = (screen − body origin) / zoom × (view px / body world units).
pub fn page_point(pos: Vec2, body: Rect, zoom: f32, body_world: (f32, f32), view: (u32, u32)) -> (i32, i32) {
    let sx = if body_world.0 > 0.0 { view.0 as f32 / body_world.0 } else { 1.0 };
    let sy = if body_world.1 > 0.0 { view.1 as f32 / body_world.1 } else { 1.0 };
    let x = (pos.x - body.x) / zoom * sx;
    let y = (pos.y - body.y) / zoom * sy;
    (x.floor() as i32, y.floor() as i32)
}

/// The terminal cell under a window point: `content` is the cell area on
/// screen and `cell` the cell size in world units. Returns (row, col, side), clamped to the grid.
pub fn cell_at(pos: Vec2, content: Rect, zoom: f32, cell: (f32, f32), grid: (usize, usize)) -> (usize, usize, Side) {
    let fx = ((pos.x - content.x) / zoom / cell.0).max(0.0);
    let fy = ((pos.y - content.y) / zoom / cell.1).max(0.0);
    let col = (fx.floor() as usize).min(grid.1.saturating_sub(1));
    let row = (fy.floor() as usize).min(grid.0.saturating_sub(1));
    let side = if fx.fract() < 0.5 { Side::Left } else { Side::Right };
    (row, col, side)
}

fn cef_button(b: Button) -> CefButton {
    match b {
        Button::Left => CefButton::Left,
        Button::Middle => CefButton::Middle,
        Button::Right => CefButton::Right,
    }
}

fn term_button(b: Button) -> TermButton {
    match b {
        Button::Left => TermButton::Left,
        Button::Middle => TermButton::Middle,
        Button::Right => TermButton::Right,
    }
}

/// Pointer state kept between forwarded events.
#[derive(Debug, Default)]
pub struct Router {
    /// Clicks of the last press (CEF wants the same count on release).
    clicks: u32,
    /// A terminal press went to the program (mouse reporting), not to selection.
    reported: bool,
    /// Fractional wheel lines not yet sent to a terminal.
    wheel_rest: f32,
}

impl Router {
    /// Forwards pointer input to its node.
    pub fn pointer(&mut self, rt: &mut Runtime, camera: &Camera, input: NodeInput, mods: Mods) {
        let id = match &input {
            NodeInput::Down { id, .. }
            | NodeInput::Up { id, .. }
            | NodeInput::Move { id, .. }
            | NodeInput::Wheel { id, .. }
            | NodeInput::Leave { id } => id.clone(),
        };
        let Some(node) = rt.project().and_then(|p| p.node(&id)).cloned() else { return };
        match node.kind {
            NodeKind::Browser { .. } => self.browser_pointer(rt, camera, &node.rect, &id, input, mods),
            NodeKind::Terminal { .. } | NodeKind::Agent { .. } | NodeKind::Artifact { .. } => {
                self.terminal_pointer(rt, camera, &node.rect, &id, input, mods)
            }
            _ => {}
        }
    }

    fn browser_pointer(
        &mut self,
        rt: &Runtime,
        camera: &Camera,
        rect: &crate::model::Rect,
        id: &NodeId,
        input: NodeInput,
        mods: Mods,
    ) {
        let Some((_, b)) = rt.browsers().for_node(id) else { return };
        let theme = rt.gfx().map(|g| g.renderer.theme().clone()).unwrap_or_default();
        let body_world = canvas_render::body_rect(render_rect(rect), &theme);
        let body = camera.world_rect_to_screen(body_world);
        let at = |pos: Vec2| page_point(pos, body, camera.zoom(), (body_world.w, body_world.h), b.view_size());
        let m = input::cef_mods(mods);
        let result = match input {
            NodeInput::Down { pos, button, clicks, .. } => {
                self.clicks = clicks;
                let (x, y) = at(pos);
                tracing::debug!(node = %id, x, y, "click into page");
                b.send_mouse_click(x, y, cef_button(button), false, clicks, m)
            }
            NodeInput::Up { pos, button, .. } => {
                let (x, y) = at(pos);
                b.send_mouse_click(x, y, cef_button(button), true, self.clicks.max(1), m)
            }
            NodeInput::Move { pos, held, .. } => {
                let (x, y) = at(pos);
                let buttons = ButtonsHeld {
                    left: held == Some(Button::Left),
                    middle: held == Some(Button::Middle),
                    right: held == Some(Button::Right),
                };
                b.send_mouse_move(x, y, m, buttons, false)
            }
            NodeInput::Wheel { pos, dx, dy, .. } => {
                let (x, y) = at(pos);
                b.send_mouse_wheel(x, y, (dx * BROWSER_PX_PER_LINE) as i32, (dy * BROWSER_PX_PER_LINE) as i32, m)
            }
            NodeInput::Leave { .. } => b.send_mouse_move(0, 0, m, ButtonsHeld::default(), true),
        };
        if let Err(e) = result {
            tracing::debug!(node = %id, error = %e, "page input dropped");
        }
    }

    fn terminal_pointer(
        &mut self,
        rt: &mut Runtime,
        camera: &Camera,
        rect: &crate::model::Rect,
        id: &NodeId,
        input: NodeInput,
        mods: Mods,
    ) {
        let Some((theme, cell)) = rt.gfx().map(|g| {
            let m = g.renderer.cell_metrics();
            (g.renderer.theme().clone(), (m.width, m.height))
        }) else {
            return;
        };
        let Some(live) = rt.terminals().get(id) else { return };
        let term = &live.term;
        let content = camera.world_rect_to_screen(canvas_render::content_rect(render_rect(rect), &theme));
        let snap = term.snapshot();
        let grid = (snap.rows, snap.cols);
        // Ctrl+click on an OSC 8 hyperlink opens it in a new browser node (web URLs only).
        if let NodeInput::Down { pos, button: Button::Left, .. } = &input {
            if mods.ctrl {
                let (row, col, _) = cell_at(*pos, content, camera.zoom(), cell, grid);
                if let Some(uri) = snap.hyperlink_at(row, col).map(str::to_owned) {
                    if let Err(e) = rt.open_browser(&uri, None) {
                        rt.notify(format!("link not opened: {e}"), true);
                    }
                    return;
                }
            }
        }
        let modes = term.input_modes();
        let tmods = input::term_mods(mods);
        // Shift always selects, even when the program asked for the mouse (like xterm).
        let report = modes.mouse != MouseMode::Off && !mods.shift;
        let send = |action: MouseAction, pos: Vec2| {
            let (row, col, _) = cell_at(pos, content, camera.zoom(), cell, grid);
            if let Some(bytes) = encode_mouse(&MouseEvent { action, row, col, mods: tmods }, &modes) {
                if let Err(e) = term.write(bytes) {
                    tracing::debug!(node = %id, error = %e, "mouse report not written");
                }
            }
        };
        match input {
            NodeInput::Down { pos, button, clicks, .. } => {
                self.reported = report;
                if report {
                    send(MouseAction::Press(term_button(button)), pos);
                } else if button == Button::Left {
                    let (row, col, side) = cell_at(pos, content, camera.zoom(), cell, grid);
                    let kind = match clicks {
                        2 => SelectionKind::Semantic,
                        3 => SelectionKind::Lines,
                        _ if mods.alt => SelectionKind::Block,
                        _ => SelectionKind::Simple,
                    };
                    term.with_screen(|s| s.start_selection(kind, row, col, side));
                }
            }
            NodeInput::Move { pos, held, .. } => {
                if self.reported || (report && held.is_none()) {
                    send(MouseAction::Motion(held.map(term_button)), pos);
                } else if held == Some(Button::Left) {
                    let (row, col, side) = cell_at(pos, content, camera.zoom(), cell, grid);
                    term.with_screen(|s| s.update_selection(row, col, side));
                }
            }
            NodeInput::Up { pos, button, .. } => {
                if self.reported {
                    send(MouseAction::Release(term_button(button)), pos);
                }
                self.reported = false;
            }
            NodeInput::Wheel { pos, dy, .. } => {
                self.wheel_rest += dy;
                let lines = self.wheel_rest.trunc() as i32;
                if lines == 0 {
                    return;
                }
                self.wheel_rest -= lines as f32;
                match wheel_action(lines, tmods, &modes) {
                    WheelAction::ReportMouse => {
                        let b = if lines > 0 { TermButton::WheelUp } else { TermButton::WheelDown };
                        for _ in 0..lines.unsigned_abs().min(10) {
                            send(MouseAction::Press(b), pos);
                        }
                    }
                    WheelAction::SendKeys(bytes) => {
                        if let Err(e) = term.write(bytes) {
                            tracing::debug!(node = %id, error = %e, "wheel keys not written");
                        }
                    }
                    WheelAction::ScrollScrollback(n) => term.with_screen(|s| s.scroll_lines(n)),
                }
            }
            NodeInput::Leave { .. } => {}
        }
        rt.request_redraw();
    }
}

/// One key event as the window got it.
#[derive(Debug, Clone, Copy)]
pub struct KeyPress<'a> {
    /// The logical key.
    pub key: &'a winit::keyboard::Key,
    /// Where on the keyboard (numeric keypad or not).
    pub location: winit::keyboard::KeyLocation,
    /// The text it types, if any.
    pub text: Option<&'a str>,
    /// Press (or repeat) rather than release.
    pub pressed: bool,
    /// Modifiers held.
    pub mods: Mods,
    /// The X keycode (0 when unknown).
    pub native: i32,
}

/// Whether a key press on an ended terminal restarts it: Enter or R, unmodified.
fn restarts(key: &winit::keyboard::Key, mods: Mods) -> bool {
    use winit::keyboard::{Key, NamedKey};
    if mods.ctrl || mods.alt || mods.logo {
        return false;
    }
    match key {
        Key::Named(NamedKey::Enter) => true,
        Key::Character(c) => c.eq_ignore_ascii_case("r"),
        _ => false,
    }
}

/// A key for the focused node. Returns false when the node does not take keys.
pub fn key_to_node(rt: &mut Runtime, id: &NodeId, press: KeyPress<'_>) -> bool {
    let KeyPress { key, location, text, pressed, mods, native } = press;
    let Some(kind) = rt.project().and_then(|p| p.node(id)).map(|n| n.kind.clone()) else { return false };
    match kind {
        NodeKind::Browser { .. } => {
            let Some((_, b)) = rt.browsers().for_node(id) else { return false };
            if let Some(k) = input::cef_key(key, location, text, pressed, mods, native) {
                if let Err(e) = b.send_key(&k) {
                    tracing::debug!(node = %id, error = %e, "key not delivered to page");
                }
            }
            true
        }
        NodeKind::Terminal { .. } | NodeKind::Agent { .. } | NodeKind::Artifact { .. } => {
            if !pressed {
                return true;
            }
            if rt.terminal_ended(id) {
                // The program is gone: Enter or R runs it again, other keys do nothing.
                if restarts(key, mods) {
                    if let Err(e) = rt.restart_terminal(id) {
                        rt.notify(e, true);
                    }
                }
                return true;
            }
            let Some(live) = rt.terminals().get(id) else { return false };
            let result = match input::terminal_key(key, location) {
                Some(k) => live.term.send_key(k, input::term_mods(mods)),
                // Composed or multi-character input types its text.
                None => match text.filter(|t| !t.is_empty() && !t.chars().any(char::is_control)) {
                    Some(t) => live.term.write(t.as_bytes().to_vec()),
                    None => Ok(()),
                },
            };
            if let Err(e) = result {
                tracing::debug!(node = %id, error = %e, "key not written to terminal");
            }
            // Typing returns the view to the prompt.
            live.term.with_screen(|s| s.scroll_to_bottom());
            true
        }
        NodeKind::Sticky { text: current } => {
            if !pressed || mods.ctrl || mods.alt || mods.logo {
                return true;
            }
            let mut next = current.clone();
            match key {
                winit::keyboard::Key::Named(winit::keyboard::NamedKey::Backspace) => {
                    next.pop();
                }
                winit::keyboard::Key::Named(winit::keyboard::NamedKey::Enter) => next.push('\n'),
                _ => {
                    if let Some(t) = text.filter(|t| !t.chars().any(char::is_control)) {
                        next.push_str(t);
                    }
                }
            }
            if next != current {
                if let Err(e) = rt.apply(Command::SetStickyText { id: id.clone(), text: next }) {
                    rt.notify(e.to_string(), true);
                }
            }
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enter_or_r_unmodified_restarts_an_ended_program() {
        use winit::keyboard::{Key, NamedKey, SmolStr};
        let plain = Mods::default();
        assert!(restarts(&Key::Named(NamedKey::Enter), plain));
        assert!(restarts(&Key::Character(SmolStr::new("r")), plain));
        assert!(restarts(&Key::Character(SmolStr::new("R")), Mods { shift: true, ..plain }));
        assert!(!restarts(&Key::Character(SmolStr::new("r")), Mods { ctrl: true, ..plain }));
        assert!(!restarts(&Key::Character(SmolStr::new("x")), plain));
        assert!(!restarts(&Key::Named(NamedKey::Space), plain));
    }

    #[test]
    fn page_points_account_for_pan_zoom_and_view_scale() {
        // Body at world (100, 50) 400×300; camera offset (40, 10) zoom 2 → screen (120, 80) 800×600.
        let cam = Camera::new(Vec2::new(40.0, 10.0), 2.0);
        let body_world = Rect::new(100.0, 50.0, 400.0, 300.0);
        let body = cam.world_rect_to_screen(body_world);
        assert_eq!((body.x, body.y), (120.0, 80.0));
        // The view follows the zoom: 800×600 page pixels for a 400×300 body.
        assert_eq!(page_point(Vec2::new(120.0, 80.0), body, 2.0, (400.0, 300.0), (800, 600)), (0, 0));
        assert_eq!(page_point(Vec2::new(520.0, 380.0), body, 2.0, (400.0, 300.0), (800, 600)), (400, 300));
        // A view still at 1:1 (not yet resized after the zoom) gets half the pixels.
        assert_eq!(page_point(Vec2::new(520.0, 380.0), body, 2.0, (400.0, 300.0), (400, 300)), (200, 150));
    }

    #[test]
    fn cells_under_the_pointer() {
        let content = Rect::new(10.0, 20.0, 800.0, 340.0);
        assert_eq!(cell_at(Vec2::new(10.0, 20.0), content, 1.0, (8.0, 17.0), (20, 100)), (0, 0, Side::Left));
        assert_eq!(
            cell_at(Vec2::new(10.0 + 8.0 * 3.0 + 6.0, 20.0 + 17.0 * 2.0 + 1.0), content, 1.0, (8.0, 17.0), (20, 100)),
            (2, 3, Side::Right)
        );
        // At zoom 2 a cell is twice as large on screen.
        assert_eq!(
            cell_at(Vec2::new(10.0 + 32.0, 20.0 + 34.0), content, 2.0, (8.0, 17.0), (20, 100)),
            (1, 2, Side::Left)
        );
        // Outside the grid clamps to its edge.
        assert_eq!(cell_at(Vec2::new(5000.0, -50.0), content, 1.0, (8.0, 17.0), (20, 100)), (0, 99, Side::Right));
    }
}
