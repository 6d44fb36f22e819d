//! The canvas gesture state machine: pan, zoom, move by the title bar,
//! resize by edges and corners, click / shift-click / box select, and the
//! canvas keyboard shortcuts. It decides *what* a pointer or key event means
//! and returns [`Effect`]s; the window applies them to the runtime. It holds
//! no window, GPU or browser types, so every gesture is unit-tested.

use crate::model::{Command, HitOptions, HitRegion, NodeId, NodeKind, Point, Project, Rect, ResizeEdge, Selection};
use canvas_render::{BarPart, Camera, Vec2};

/// Zoom factor per wheel notch with Ctrl held.
const ZOOM_PER_NOTCH: f32 = 1.1;
/// Screen pixels panned per wheel notch.
const PAN_PER_NOTCH: f32 = 60.0;
/// Screen pixels panned per arrow key press (four times that with Shift).
const PAN_PER_ARROW: f32 = 60.0;
/// A press that moves less than this (screen px) before release is a click.
const CLICK_SLOP: f32 = 4.0;
/// Margin kept around everything by "fit all", in screen pixels.
const FIT_MARGIN: f32 = 48.0;

/// A mouse button, as far as the canvas cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Button {
    /// Primary.
    Left,
    /// Wheel button (always pans the canvas).
    Middle,
    /// Secondary (context menu on the canvas, forwarded inside a focused node).
    Right,
}

/// Modifier keys held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mods {
    /// Shift.
    pub shift: bool,
    /// Control.
    pub ctrl: bool,
    /// Alt.
    pub alt: bool,
    /// Super.
    pub logo: bool,
}

/// The keys the canvas itself reacts to when it has keyboard focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CanvasKey {
    /// Arrow up.
    Up,
    /// Arrow down.
    Down,
    /// Arrow left.
    Left,
    /// Arrow right.
    Right,
    /// Delete or Backspace.
    Delete,
    /// Escape.
    Escape,
    /// Enter.
    Enter,
    /// A character key (lower-case letter or digit as typed without Shift).
    Char(char),
}

/// Pointer input forwarded into a node's body (screen pixels of the window).
#[derive(Debug, Clone, PartialEq)]
pub enum NodeInput {
    /// A button went down.
    Down {
        /// The node.
        id: NodeId,
        /// Window position.
        pos: Vec2,
        /// The button.
        button: Button,
        /// 1 for a click, 2 for a double click, 3 for a triple click.
        clicks: u32,
    },
    /// A button went up.
    Up {
        /// The node.
        id: NodeId,
        /// Window position.
        pos: Vec2,
        /// The button.
        button: Button,
    },
    /// The pointer moved over (or while captured by) the node.
    Move {
        /// The node.
        id: NodeId,
        /// Window position.
        pos: Vec2,
        /// The button held, if any.
        held: Option<Button>,
    },
    /// The wheel turned over the node (lines; positive = up / left).
    Wheel {
        /// The node.
        id: NodeId,
        /// Window position.
        pos: Vec2,
        /// Horizontal lines.
        dx: f32,
        /// Vertical lines.
        dy: f32,
    },
    /// The pointer left the node.
    Leave {
        /// The node.
        id: NodeId,
    },
}

/// What an event asks the window to do, in order.
// A command holds a whole node (a few hundred bytes); effects live for one
// event in a short Vec, so boxing each would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Apply a model command.
    Apply(Command),
    /// The gesture ended: the next command starts a new undo step.
    EndCoalescing,
    /// The live camera changed (redraw; write it to the model once it settles).
    CameraMoved,
    /// Write the live camera to the model now (a gesture ended).
    CommitCamera,
    /// Give keyboard focus to a node (None: the canvas).
    Focus(Option<NodeId>),
    /// The selection changed (redraw).
    SelectionChanged,
    /// Undo the last canvas edit.
    Undo,
    /// Redo the last undone edit.
    Redo,
    /// Open the command palette; `at` is the world point a context menu was opened at.
    OpenPalette {
        /// Where new nodes go (None: a free spot).
        at: Option<Point>,
    },
    /// Forward pointer input into a node.
    Route(NodeInput),
    /// Open the in-place title editor on a node (a double-click on its title bar).
    Rename(NodeId),
    /// A press on a browser node's title-bar control (back, forward, reload, address).
    BarPress {
        /// The browser node.
        id: NodeId,
        /// The control.
        part: BarPart,
    },
}

/// The mouse cursor the canvas wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorKind {
    /// The arrow.
    Default,
    /// Over a title bar: can be dragged.
    Grab,
    /// Dragging a node or the canvas.
    Grabbing,
    /// Over terminal text or sticky notes.
    Text,
    /// Over a resize edge or corner.
    Resize(ResizeEdge),
    /// Drawing a selection box.
    Crosshair,
}

/// What the canvas looks like to a gesture: the active project, the live
/// camera and the window size.
pub struct View<'a> {
    /// The active project.
    pub project: &'a Project,
    /// The camera the window draws with.
    pub camera: &'a Camera,
    /// The window size in pixels.
    pub viewport: Vec2,
    /// Title bar height in world units (the renderer's theme).
    pub title_height: f64,
    /// The node with keyboard focus.
    pub focus: Option<&'a NodeId>,
    /// Window pixels per logical pixel (2 on a HiDPI screen): a zoom of 100 %
    /// is a camera zoom of this much.
    pub ui_scale: f32,
}

impl View<'_> {
    /// The camera zoom bounds of 10 %–400 % on this screen.
    fn zoom_bounds(&self) -> (f32, f32) {
        canvas_render::zoom_bounds(self.ui_scale)
    }

    fn world(&self, pos: Vec2) -> Point {
        let w = self.camera.screen_to_world(pos);
        Point::new(f64::from(w.x), f64::from(w.y))
    }

    fn hit(&self, pos: Vec2) -> Option<(NodeId, HitRegion)> {
        let opts = HitOptions { title_bar_height: self.title_height, edge_tolerance_px: 6.0 };
        let mut hit = self.project.node_at(self.world(pos), &opts)?;
        // node_at scales the grab area by the saved camera; the live one may differ mid-zoom.
        if let HitRegion::Edge(_) = hit.region {
            let node = self.project.node(&hit.id)?;
            let tolerance = 6.0 / f64::from(self.camera.zoom());
            hit.region = crate::model::hit::hit_node(node, self.world(pos), self.title_height, tolerance)?;
        }
        Some((hit.id, hit.region))
    }

    fn kind(&self, id: &NodeId) -> Option<&NodeKind> {
        self.project.node(id).map(|n| &n.kind)
    }

    /// The browser title-bar control under `pos`, if any (the node on top there).
    pub fn bar_part(&self, pos: Vec2) -> Option<(NodeId, BarPart)> {
        let (id, region) = self.hit(pos)?;
        let node = self.project.node(&id).filter(|n| matches!(n.kind, NodeKind::Browser { .. }))?;
        if region != HitRegion::Title {
            return None;
        }
        let w = self.camera.screen_to_world(pos);
        let rect =
            canvas_render::Rect::new(node.rect.x as f32, node.rect.y as f32, node.rect.w as f32, node.rect.h as f32);
        canvas_render::bar_part_at(rect, self.title_height as f32, tab_count(&node.kind), false, w.x, w.y)
            .map(|part| (id, part))
    }
}

/// A browser node's tab count and shown tab, as its bar lays them out.
pub fn tab_count(kind: &NodeKind) -> canvas_render::TabCount {
    match kind {
        NodeKind::Browser { tabs, active_tab, .. } => canvas_render::TabCount {
            count: tabs.len(),
            active: tabs.iter().position(|t| &t.id == active_tab).unwrap_or(0),
        },
        _ => canvas_render::TabCount::default(),
    }
}

/// Whether a node's body takes keyboard and pointer input.
pub fn is_interactive(kind: &NodeKind) -> bool {
    matches!(
        kind,
        NodeKind::Browser { .. } | NodeKind::Terminal { .. } | NodeKind::Agent { .. } | NodeKind::Artifact { .. }
    )
}

#[derive(Debug, Clone, PartialEq)]
enum Gesture {
    Idle,
    /// Dragging the canvas (left on empty canvas, or middle anywhere).
    Pan {
        start: Vec2,
        last: Vec2,
        button: Button,
        additive: bool,
        /// A middle press on a page: released without a drag, it is a middle-click
        /// on that page (a link opens in a background tab).
        click_on: Option<NodeId>,
    },
    /// Moving nodes by a title bar (or a sticky's body).
    Move {
        ids: Vec<NodeId>,
        last: Point,
        moved: bool,
    },
    /// Resizing one node.
    Resize {
        id: NodeId,
        edge: ResizeEdge,
        start_rect: Rect,
        start: Point,
    },
    /// Drawing a selection box (Shift + drag on empty canvas).
    Marquee {
        start: Vec2,
        current: Vec2,
        base: Selection,
    },
    /// A button went down in a node's body: the node gets the pointer until release.
    Captured {
        id: NodeId,
        button: Button,
    },
}

/// The pointer state between events.
#[derive(Debug)]
pub struct Interaction {
    gesture: Gesture,
    pointer: Vec2,
    hover: Option<NodeId>,
    last_click: Option<(std::time::Instant, Vec2, u32)>,
}

impl Default for Interaction {
    fn default() -> Self {
        Self { gesture: Gesture::Idle, pointer: Vec2::default(), hover: None, last_click: None }
    }
}

impl Interaction {
    /// Idle, pointer at the origin.
    pub fn new() -> Self {
        Self::default()
    }

    /// The last pointer position in window pixels.
    pub fn pointer(&self) -> Vec2 {
        self.pointer
    }

    /// The selection box being drawn, in window pixels (x, y, w, h).
    pub fn marquee(&self) -> Option<(f32, f32, f32, f32)> {
        match &self.gesture {
            Gesture::Marquee { start, current, .. } => Some((
                start.x.min(current.x),
                start.y.min(current.y),
                (start.x - current.x).abs(),
                (start.y - current.y).abs(),
            )),
            _ => None,
        }
    }

    /// Whether a drag is in progress (the window keeps the pointer then).
    pub fn busy(&self) -> bool {
        self.gesture != Gesture::Idle
    }

    /// Forgets the gesture (window lost focus, project switched).
    pub fn cancel(&mut self) -> Vec<Effect> {
        match std::mem::replace(&mut self.gesture, Gesture::Idle) {
            Gesture::Move { .. } | Gesture::Resize { .. } => vec![Effect::EndCoalescing],
            Gesture::Pan { .. } => vec![Effect::CommitCamera],
            Gesture::Captured { id, button } => vec![Effect::Route(NodeInput::Up { id, pos: self.pointer, button })],
            _ => vec![],
        }
    }

    /// The cursor for the pointer's current place and gesture.
    pub fn cursor(&self, view: &View<'_>) -> CursorKind {
        match &self.gesture {
            Gesture::Pan { .. } | Gesture::Move { .. } => return CursorKind::Grabbing,
            Gesture::Resize { edge, .. } => return CursorKind::Resize(*edge),
            Gesture::Marquee { .. } => return CursorKind::Crosshair,
            Gesture::Captured { id, .. } => return body_cursor(view.kind(id)),
            Gesture::Idle => {}
        }
        match view.bar_part(self.pointer) {
            Some((_, BarPart::Address | BarPart::Find)) => return CursorKind::Text,
            Some(_) => return CursorKind::Default,
            None => {}
        }
        match view.hit(self.pointer) {
            Some((_, HitRegion::Edge(e))) => CursorKind::Resize(e),
            Some((_, HitRegion::Title)) => CursorKind::Grab,
            Some((id, HitRegion::Body)) => body_cursor(view.kind(&id)),
            None => CursorKind::Default,
        }
    }

    fn click_count(&mut self, pos: Vec2) -> u32 {
        let now = std::time::Instant::now();
        let n = match self.last_click {
            Some((at, p, n))
                if now.duration_since(at) < std::time::Duration::from_millis(450) && dist(p, pos) < CLICK_SLOP =>
            {
                n % 3 + 1
            }
            _ => 1,
        };
        self.last_click = Some((now, pos, n));
        n
    }

    /// A button went down at `pos` (window pixels).
    pub fn pointer_down(
        &mut self,
        view: &View<'_>,
        selection: &mut Selection,
        pos: Vec2,
        button: Button,
        mods: Mods,
    ) -> Vec<Effect> {
        self.pointer = pos;
        let mut out = self.cancel();
        let hit = view.hit(pos);
        if button == Button::Middle {
            let click_on = hit
                .as_ref()
                .filter(|(id, region)| {
                    *region == HitRegion::Body && matches!(view.kind(id), Some(NodeKind::Browser { .. }))
                })
                .map(|(id, _)| id.clone());
            self.gesture = Gesture::Pan { start: pos, last: pos, button, additive: true, click_on };
            return out;
        }
        let Some((id, region)) = hit else {
            return self.empty_canvas_down(view, pos, button, mods, selection, out);
        };
        let kind = view.kind(&id).cloned();
        let top = view.project.nodes_by_z().last().map(|n| n.id.clone());
        let raise = |out: &mut Vec<Effect>| {
            if top.as_ref() != Some(&id) {
                out.push(Effect::Apply(Command::BringToFront { ids: vec![id.clone()] }));
            }
        };
        // A press inside an interactive node: it takes the keyboard, becomes the
        // only selection and comes to the front.
        let take = |out: &mut Vec<Effect>, selection: &mut Selection| {
            if view.focus != Some(&id) {
                out.push(Effect::Focus(Some(id.clone())));
            }
            if !selection.contains(&id) || selection.len() > 1 {
                selection.click(id.clone());
                out.push(Effect::SelectionChanged);
            }
            raise(out);
        };
        if button == Button::Left {
            if let Some((_, part)) = view.bar_part(pos).filter(|(on, _)| *on == id) {
                // A browser's control: the node gets the keyboard (the address field types into it).
                take(&mut out, selection);
                out.push(Effect::BarPress { id, part });
                return out;
            }
        }
        match region {
            HitRegion::Body if matches!(kind, Some(NodeKind::Group { .. })) => {
                // A group's body is canvas: pan, box-select, context menu there.
                return self.empty_canvas_down(view, pos, button, mods, selection, out);
            }
            HitRegion::Body if kind.as_ref().is_some_and(is_interactive) => {
                take(&mut out, selection);
                let clicks = self.click_count(pos);
                out.push(Effect::Route(NodeInput::Down { id: id.clone(), pos, button, clicks }));
                self.gesture = Gesture::Captured { id, button };
            }
            HitRegion::Edge(edge) if button == Button::Left => {
                let Some(node) = view.project.node(&id) else { return out };
                if !selection.contains(&id) {
                    selection.click(id.clone());
                    out.push(Effect::SelectionChanged);
                }
                raise(&mut out);
                self.gesture = Gesture::Resize { id, edge, start_rect: node.rect, start: view.world(pos) };
            }
            _ if button == Button::Right => {
                // A context menu acts on the node under the pointer (and the selection it is part of).
                if !selection.contains(&id) {
                    selection.click(id.clone());
                    out.push(Effect::SelectionChanged);
                }
                out.push(Effect::OpenPalette { at: Some(view.world(pos)) });
            }
            HitRegion::Title if button == Button::Left && !mods.shift && self.click_count(pos) == 2 => {
                // The first click of the pair selected the node and started a move.
                out.push(Effect::Rename(id));
            }
            // Title bars, and the bodies of notes and artifacts, drag the node.
            _ => {
                if mods.shift {
                    selection.shift_click(id.clone());
                    out.push(Effect::SelectionChanged);
                    if !selection.contains(&id) {
                        return out;
                    }
                } else if !selection.contains(&id) {
                    selection.click(id.clone());
                    out.push(Effect::SelectionChanged);
                }
                let wants_focus =
                    matches!(kind, Some(NodeKind::Sticky { .. })) || kind.as_ref().is_some_and(is_interactive);
                let focus = if wants_focus { Some(id.clone()) } else { None };
                if view.focus != focus.as_ref() {
                    out.push(Effect::Focus(focus));
                }
                raise(&mut out);
                self.gesture = Gesture::Move { ids: selection.to_vec(), last: view.world(pos), moved: false };
            }
        }
        out
    }

    fn empty_canvas_down(
        &mut self,
        view: &View<'_>,
        pos: Vec2,
        button: Button,
        mods: Mods,
        selection: &Selection,
        mut out: Vec<Effect>,
    ) -> Vec<Effect> {
        match button {
            Button::Right => out.push(Effect::OpenPalette { at: Some(view.world(pos)) }),
            _ if mods.shift => self.gesture = Gesture::Marquee { start: pos, current: pos, base: selection.clone() },
            _ => self.gesture = Gesture::Pan { start: pos, last: pos, button, additive: mods.shift, click_on: None },
        }
        if view.focus.is_some() && button != Button::Right {
            out.push(Effect::Focus(None));
        }
        out
    }

    /// The pointer moved to `pos`.
    pub fn pointer_move(
        &mut self,
        view: &View<'_>,
        selection: &mut Selection,
        camera: &mut Camera,
        pos: Vec2,
    ) -> Vec<Effect> {
        let prev = self.pointer;
        self.pointer = pos;
        let mut out = vec![];
        match &mut self.gesture {
            Gesture::Idle => {
                // Hover goes to the focused node only: other pages do not see a pointer that cannot click them.
                let over =
                    view.hit(pos).filter(|(id, r)| *r == HitRegion::Body && view.focus == Some(id)).map(|(id, _)| id);
                if let Some(old) = self.hover.take() {
                    if over.as_ref() != Some(&old) {
                        out.push(Effect::Route(NodeInput::Leave { id: old }));
                    }
                }
                if let Some(id) = over {
                    out.push(Effect::Route(NodeInput::Move { id: id.clone(), pos, held: None }));
                    self.hover = Some(id);
                }
            }
            Gesture::Pan { last, .. } => {
                camera.pan_by_screen(Vec2::new(pos.x - last.x, pos.y - last.y));
                *last = pos;
                out.push(Effect::CameraMoved);
            }
            Gesture::Move { ids, last, moved } => {
                let w = view.world(pos);
                let (dx, dy) = (w.x - last.x, w.y - last.y);
                if !*moved && dist(prev, pos) < f32::EPSILON {
                    return out;
                }
                if dx != 0.0 || dy != 0.0 {
                    out.push(Effect::Apply(Command::MoveNodes { ids: ids.clone(), dx, dy }));
                    *last = w;
                    *moved = true;
                }
            }
            Gesture::Resize { id, edge, start_rect, start } => {
                let w = view.world(pos);
                let rect = edge.resize(*start_rect, w.x - start.x, w.y - start.y);
                if view.project.node(id).is_some_and(|n| n.rect != rect) {
                    out.push(Effect::Apply(Command::SetRect { id: id.clone(), rect }));
                }
            }
            Gesture::Marquee { start, current, base } => {
                *current = pos;
                let a = view.world(*start);
                let b = view.world(pos);
                let mut next = base.clone();
                next.select_in_rect(view.project, Rect::from_corners(a, b), true);
                if &next != selection {
                    *selection = next;
                }
                out.push(Effect::SelectionChanged);
            }
            Gesture::Captured { id, button } => {
                out.push(Effect::Route(NodeInput::Move { id: id.clone(), pos, held: Some(*button) }));
            }
        }
        out
    }

    /// A button went up at `pos`.
    pub fn pointer_up(&mut self, view: &View<'_>, selection: &mut Selection, pos: Vec2, button: Button) -> Vec<Effect> {
        self.pointer = pos;
        let gesture = std::mem::replace(&mut self.gesture, Gesture::Idle);
        match gesture {
            Gesture::Pan { start, button: b, additive, click_on, .. } if b == button => {
                let mut out = vec![Effect::CommitCamera];
                let still = dist(start, pos) < CLICK_SLOP;
                if still && b == Button::Left && !additive && !selection.is_empty() {
                    // A click on empty canvas deselects.
                    selection.clear();
                    out.push(Effect::SelectionChanged);
                }
                if let Some(id) = click_on.filter(|_| still) {
                    out.push(Effect::Route(NodeInput::Down { id: id.clone(), pos, button, clicks: 1 }));
                    out.push(Effect::Route(NodeInput::Up { id, pos, button }));
                }
                out
            }
            Gesture::Move { .. } | Gesture::Resize { .. } => vec![Effect::EndCoalescing],
            Gesture::Marquee { .. } => vec![Effect::SelectionChanged],
            Gesture::Captured { id, button: b } if b == button => {
                vec![Effect::Route(NodeInput::Up { id, pos, button })]
            }
            other => {
                // Another button than the one that started the gesture: keep going.
                self.gesture = other;
                let _ = view;
                vec![]
            }
        }
    }

    /// The wheel turned by `dx`, `dy` lines (positive = up / left) at the pointer.
    pub fn wheel(&mut self, view: &View<'_>, camera: &mut Camera, dx: f32, dy: f32, mods: Mods) -> Vec<Effect> {
        let pos = self.pointer;
        if mods.ctrl {
            let factor = ZOOM_PER_NOTCH.powf(dy + dx);
            let (min, max) = view.zoom_bounds();
            let zoom = (camera.zoom() * factor).clamp(min, max);
            if zoom != camera.zoom() {
                camera.zoom_at(pos, zoom);
                return vec![Effect::CameraMoved];
            }
            return vec![];
        }
        if let Some((id, HitRegion::Body)) = view.hit(pos) {
            if view.focus == Some(&id) {
                return vec![Effect::Route(NodeInput::Wheel { id, pos, dx, dy })];
            }
        }
        let (dx, dy) = if mods.shift && dx == 0.0 { (dy, 0.0) } else { (dx, dy) };
        camera.pan_by_screen(Vec2::new(dx * PAN_PER_NOTCH, dy * PAN_PER_NOTCH));
        vec![Effect::CameraMoved]
    }

    /// A key pressed while the canvas (no node) has keyboard focus.
    pub fn canvas_key(
        &mut self,
        view: &View<'_>,
        selection: &mut Selection,
        camera: &mut Camera,
        key: CanvasKey,
        mods: Mods,
    ) -> Vec<Effect> {
        let step = if mods.shift { PAN_PER_ARROW * 4.0 } else { PAN_PER_ARROW };
        let pan = |camera: &mut Camera, dx: f32, dy: f32| {
            camera.pan_by_screen(Vec2::new(dx, dy));
            vec![Effect::CameraMoved, Effect::CommitCamera]
        };
        match (key, mods.ctrl) {
            // Arrows move the view over the canvas (the canvas slides the other way).
            (CanvasKey::Up, false) => pan(camera, 0.0, step),
            (CanvasKey::Down, false) => pan(camera, 0.0, -step),
            (CanvasKey::Left, false) => pan(camera, step, 0.0),
            (CanvasKey::Right, false) => pan(camera, -step, 0.0),
            (CanvasKey::Delete, false) if !selection.is_empty() => {
                let ids = selection.to_vec();
                selection.clear();
                vec![Effect::Apply(Command::RemoveNodes { ids }), Effect::SelectionChanged]
            }
            (CanvasKey::Escape, _) if !selection.is_empty() => {
                selection.clear();
                vec![Effect::SelectionChanged]
            }
            (CanvasKey::Enter, false) if selection.len() == 1 => {
                let id = selection.to_vec().remove(0);
                match view.kind(&id) {
                    Some(k) if is_interactive(k) || matches!(k, NodeKind::Sticky { .. }) => {
                        vec![Effect::Focus(Some(id))]
                    }
                    _ => vec![],
                }
            }
            (CanvasKey::Char('z'), true) if mods.shift => vec![Effect::Redo],
            (CanvasKey::Char('z'), true) => vec![Effect::Undo],
            (CanvasKey::Char('y'), true) => vec![Effect::Redo],
            (CanvasKey::Char('d'), true) if !selection.is_empty() => {
                vec![Effect::Apply(Command::Duplicate { ids: selection.to_vec() })]
            }
            (CanvasKey::Char('g'), true) if !selection.is_empty() => {
                vec![Effect::Apply(Command::GroupNodes { ids: selection.to_vec(), title: None })]
            }
            (CanvasKey::Char('a'), true) => {
                selection.select_all(view.project);
                vec![Effect::SelectionChanged]
            }
            (CanvasKey::Char('0'), true) => {
                camera.zoom_at(Vec2::new(view.viewport.x / 2.0, view.viewport.y / 2.0), view.ui_scale);
                vec![Effect::CameraMoved, Effect::CommitCamera]
            }
            (CanvasKey::Char('1'), true) => fit_all(view, camera),
            (CanvasKey::Char('=' | '+'), true) => zoom_centre(view, camera, ZOOM_PER_NOTCH * ZOOM_PER_NOTCH),
            (CanvasKey::Char('-'), true) => zoom_centre(view, camera, 1.0 / (ZOOM_PER_NOTCH * ZOOM_PER_NOTCH)),
            _ => vec![],
        }
    }
}

/// Frames every node of the project in the window ("fit all").
pub fn fit_all(view: &View<'_>, camera: &mut Camera) -> Vec<Effect> {
    let rects: Vec<canvas_render::Rect> =
        view.project.nodes().map(|n| crate::runtime::scene::render_rect(&n.rect)).collect();
    if camera.fit_all(&rects, view.viewport, FIT_MARGIN).is_none() {
        return vec![];
    }
    let (min, max) = view.zoom_bounds();
    if camera.zoom() < min || camera.zoom() > max {
        camera.zoom_at(Vec2::new(view.viewport.x / 2.0, view.viewport.y / 2.0), camera.zoom().clamp(min, max));
    }
    vec![Effect::CameraMoved, Effect::CommitCamera]
}

fn zoom_centre(view: &View<'_>, camera: &mut Camera, factor: f32) -> Vec<Effect> {
    let (min, max) = view.zoom_bounds();
    let zoom = (camera.zoom() * factor).clamp(min, max);
    camera.zoom_at(Vec2::new(view.viewport.x / 2.0, view.viewport.y / 2.0), zoom);
    vec![Effect::CameraMoved, Effect::CommitCamera]
}

fn body_cursor(kind: Option<&NodeKind>) -> CursorKind {
    match kind {
        Some(NodeKind::Terminal { .. } | NodeKind::Agent { .. } | NodeKind::Artifact { .. }) => CursorKind::Text,
        Some(NodeKind::Sticky { .. }) => CursorKind::Grab,
        _ => CursorKind::Default,
    }
}

fn dist(a: Vec2, b: Vec2) -> f32 {
    ((a.x - b.x).powi(2) + (a.y - b.y).powi(2)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Camera as ModelCamera, Node, ProjectId};

    fn id(s: &str) -> NodeId {
        NodeId::new(s).unwrap()
    }

    fn node(name: &str, kind: NodeKind, rect: Rect, z: i64) -> Node {
        Node { id: id(name), kind, title: name.into(), rect, z, colour: None, links: Default::default(), name: None }
    }

    /// Two notes and a browser; the browser is on top.
    fn project() -> Project {
        let sticky = || NodeKind::Sticky { text: String::new() };
        let nodes = vec![
            node("a", sticky(), Rect::new(0.0, 0.0, 200.0, 100.0), 1),
            node("b", sticky(), Rect::new(300.0, 0.0, 200.0, 100.0), 2),
            node("web", NodeKind::browser("http://127.0.0.1/").unwrap(), Rect::new(0.0, 200.0, 400.0, 300.0), 3),
        ];
        Project::from_nodes(ProjectId::new("p").unwrap(), "p", "/w", ModelCamera::default(), nodes, 4).unwrap().0
    }

    fn view<'a>(p: &'a Project, cam: &'a Camera, focus: Option<&'a NodeId>) -> View<'a> {
        View { project: p, camera: cam, viewport: Vec2::new(800.0, 600.0), title_height: 30.0, focus, ui_scale: 1.0 }
    }

    fn cmds(effects: &[Effect]) -> Vec<&Command> {
        effects.iter().filter_map(|e| if let Effect::Apply(c) = e { Some(c) } else { None }).collect()
    }

    #[test]
    fn dragging_a_title_bar_moves_the_node_in_world_units_and_ends_the_undo_step() {
        let p = project();
        let cam = Camera::new(Vec2::new(-100.0, -100.0), 2.0);
        let mut sel = Selection::new();
        let mut it = Interaction::new();
        let mut live = cam;
        // Node "a" title bar: world (50, 10) → screen ((50+100)*2, (10+100)*2).
        let down =
            it.pointer_down(&view(&p, &cam, None), &mut sel, Vec2::new(300.0, 220.0), Button::Left, Mods::default());
        assert!(sel.contains(&id("a")));
        assert!(cmds(&down).contains(&&Command::BringToFront { ids: vec![id("a")] }));
        let moved = it.pointer_move(&view(&p, &cam, None), &mut sel, &mut live, Vec2::new(340.0, 200.0));
        assert_eq!(cmds(&moved), vec![&Command::MoveNodes { ids: vec![id("a")], dx: 20.0, dy: -10.0 }]);
        assert_eq!(live, cam, "moving a node does not pan");
        let up = it.pointer_up(&view(&p, &cam, None), &mut sel, Vec2::new(340.0, 200.0), Button::Left);
        assert_eq!(up, vec![Effect::EndCoalescing]);
        assert!(!it.busy());
    }

    #[test]
    fn a_press_on_a_browser_bar_control_focuses_the_page_and_presses_it_while_the_rest_of_the_bar_drags() {
        let p = project();
        let cam = Camera::default();
        let mut sel = Selection::new();
        let mut it = Interaction::new();
        // The browser "web" is at (0, 200), 400 wide; its bar's controls lie in the title bar.
        let l = canvas_render::bar_layout(400.0, 30.0, canvas_render::TabCount { count: 1, active: 0 });
        let at = |r: canvas_render::Rect| Vec2::new(r.x + r.w / 2.0, 200.0 + r.y + r.h / 2.0);
        let v = view(&p, &cam, None);
        assert_eq!(v.bar_part(at(l.back)), Some((id("web"), BarPart::Back)));
        it.pointer_move(&v, &mut sel, &mut cam.clone(), at(l.back));
        assert_eq!(it.cursor(&v), CursorKind::Default, "a button is not a drag handle");
        let down = it.pointer_down(&v, &mut sel, at(l.address), Button::Left, Mods::default());
        assert!(down.contains(&Effect::Focus(Some(id("web")))), "{down:?}");
        assert_eq!(down.last(), Some(&Effect::BarPress { id: id("web"), part: BarPart::Address }));
        assert!(!it.busy(), "no drag starts on a control");
        it.pointer_move(&v, &mut sel, &mut cam.clone(), at(l.address));
        assert_eq!(it.cursor(&v), CursorKind::Text, "the address field is text");
        let down = it.pointer_down(&v, &mut sel, at(l.reload), Button::Left, Mods::default());
        assert_eq!(down.last(), Some(&Effect::BarPress { id: id("web"), part: BarPart::Reload }));
        it.pointer_up(&v, &mut sel, at(l.reload), Button::Left);
        // Past the address field the title bar is the node's handle, as on every node.
        let title = Vec2::new(l.title_x + 20.0, 215.0);
        assert_eq!(v.bar_part(title), None);
        it.pointer_down(&v, &mut sel, title, Button::Left, Mods::default());
        assert!(it.busy(), "a drag starts");
        it.cancel();
        // Notes have no bar.
        assert_eq!(v.bar_part(Vec2::new(at(l.back).x, 15.0)), None);
    }

    #[test]
    fn a_double_click_on_a_title_bar_renames_and_a_body_double_click_does_not() {
        let p = project();
        let cam = Camera::default();
        let mut sel = Selection::new();
        let mut it = Interaction::new();
        let click = |it: &mut Interaction, sel: &mut Selection, at: Vec2| {
            let down = it.pointer_down(&view(&p, &cam, None), sel, at, Button::Left, Mods::default());
            it.pointer_up(&view(&p, &cam, None), sel, at, Button::Left);
            down
        };
        let title = Vec2::new(50.0, 10.0);
        assert!(!click(&mut it, &mut sel, title).contains(&Effect::Rename(id("a"))), "one click only selects");
        assert!(click(&mut it, &mut sel, title).contains(&Effect::Rename(id("a"))));
        assert!(sel.contains(&id("a")));
        assert!(!it.busy(), "the second click starts no drag");
        // A sticky's body also drags, but a double-click there is the note's, not a rename.
        let body = Vec2::new(350.0, 70.0);
        click(&mut it, &mut sel, body);
        assert!(!click(&mut it, &mut sel, body).iter().any(|e| matches!(e, Effect::Rename(_))));
    }

    #[test]
    fn shift_click_adds_and_a_drag_moves_the_whole_selection() {
        let p = project();
        let cam = Camera::default();
        let mut sel = Selection::new();
        let mut it = Interaction::new();
        let mut live = cam;
        it.pointer_down(&view(&p, &cam, None), &mut sel, Vec2::new(50.0, 10.0), Button::Left, Mods::default());
        it.pointer_up(&view(&p, &cam, None), &mut sel, Vec2::new(50.0, 10.0), Button::Left);
        let shift = Mods { shift: true, ..Mods::default() };
        it.pointer_down(&view(&p, &cam, None), &mut sel, Vec2::new(350.0, 10.0), Button::Left, shift);
        assert_eq!(sel.to_vec(), vec![id("a"), id("b")]);
        let moved = it.pointer_move(&view(&p, &cam, None), &mut sel, &mut live, Vec2::new(360.0, 15.0));
        assert_eq!(cmds(&moved), vec![&Command::MoveNodes { ids: vec![id("a"), id("b")], dx: 10.0, dy: 5.0 }]);
        it.pointer_up(&view(&p, &cam, None), &mut sel, Vec2::new(360.0, 15.0), Button::Left);
        // Shift-click on a selected node deselects it and starts no drag.
        it.pointer_down(&view(&p, &cam, None), &mut sel, Vec2::new(350.0, 10.0), Button::Left, shift);
        assert_eq!(sel.to_vec(), vec![id("a")]);
        assert!(!it.busy());
    }

    #[test]
    fn resizing_by_the_corner_sets_the_rect_from_the_gesture_start() {
        let p = project();
        let cam = Camera::default();
        let mut sel = Selection::new();
        let mut it = Interaction::new();
        let mut live = cam;
        let corner = Vec2::new(200.0, 100.0);
        it.pointer_move(&view(&p, &cam, None), &mut sel, &mut live, Vec2::new(700.0, 300.0));
        assert_eq!(it.cursor(&view(&p, &cam, None)), CursorKind::Default);
        it.pointer_move(&view(&p, &cam, None), &mut sel, &mut live, Vec2::new(100.0, 10.0));
        assert_eq!(it.cursor(&view(&p, &cam, None)), CursorKind::Grab);
        it.pointer_move(&view(&p, &cam, None), &mut sel, &mut live, corner);
        assert_eq!(it.cursor(&view(&p, &cam, None)), CursorKind::Resize(ResizeEdge::SE));
        it.pointer_down(&view(&p, &cam, None), &mut sel, corner, Button::Left, Mods::default());
        let e = it.pointer_move(&view(&p, &cam, None), &mut sel, &mut live, Vec2::new(260.0, 150.0));
        assert_eq!(cmds(&e), vec![&Command::SetRect { id: id("a"), rect: Rect::new(0.0, 0.0, 260.0, 150.0) }]);
        // Past the minimum size the node stops shrinking.
        let e = it.pointer_move(&view(&p, &cam, None), &mut sel, &mut live, Vec2::new(-500.0, -500.0));
        assert_eq!(cmds(&e), vec![&Command::SetRect { id: id("a"), rect: Rect::new(0.0, 0.0, 80.0, 60.0) }]);
        assert_eq!(
            it.pointer_up(&view(&p, &cam, None), &mut sel, Vec2::new(0.0, 0.0), Button::Left),
            vec![Effect::EndCoalescing]
        );
    }

    #[test]
    fn dragging_empty_canvas_pans_and_a_click_there_deselects_and_unfocuses() {
        let p = project();
        let cam = Camera::default();
        let mut sel = Selection::new();
        sel.click(id("a"));
        let mut it = Interaction::new();
        let mut live = cam;
        let web = id("web");
        let down = it.pointer_down(
            &view(&p, &cam, Some(&web)),
            &mut sel,
            Vec2::new(700.0, 100.0),
            Button::Left,
            Mods::default(),
        );
        assert!(down.contains(&Effect::Focus(None)));
        it.pointer_move(&view(&p, &cam, None), &mut sel, &mut live, Vec2::new(650.0, 130.0));
        assert_eq!(live.offset, Vec2::new(50.0, -30.0));
        let up = it.pointer_up(&view(&p, &live, None), &mut sel, Vec2::new(650.0, 130.0), Button::Left);
        assert_eq!(up, vec![Effect::CommitCamera], "a drag keeps the selection");
        assert!(sel.contains(&id("a")));
        it.pointer_down(&view(&p, &live, None), &mut sel, Vec2::new(700.0, 100.0), Button::Left, Mods::default());
        let up = it.pointer_up(&view(&p, &live, None), &mut sel, Vec2::new(700.0, 100.0), Button::Left);
        assert!(up.contains(&Effect::SelectionChanged));
        assert!(sel.is_empty());
    }

    #[test]
    fn shift_drag_on_empty_canvas_box_selects() {
        let p = project();
        let cam = Camera::default();
        let mut sel = Selection::new();
        let mut it = Interaction::new();
        let mut live = cam;
        let shift = Mods { shift: true, ..Mods::default() };
        it.pointer_down(&view(&p, &cam, None), &mut sel, Vec2::new(-50.0, -50.0), Button::Left, shift);
        it.pointer_move(&view(&p, &cam, None), &mut sel, &mut live, Vec2::new(350.0, 50.0));
        assert_eq!(sel.to_vec(), vec![id("a"), id("b")]);
        assert_eq!(it.marquee(), Some((-50.0, -50.0, 400.0, 100.0)));
        assert_eq!(it.cursor(&view(&p, &cam, None)), CursorKind::Crosshair);
        it.pointer_move(&view(&p, &cam, None), &mut sel, &mut live, Vec2::new(100.0, 50.0));
        assert_eq!(sel.to_vec(), vec![id("a")], "shrinking the box drops nodes it no longer touches");
        it.pointer_up(&view(&p, &cam, None), &mut sel, Vec2::new(100.0, 50.0), Button::Left);
        assert_eq!(it.marquee(), None);
        assert_eq!(live, cam);
    }

    #[test]
    fn a_middle_click_on_a_page_reaches_it_and_a_middle_drag_pans() {
        let p = project();
        let cam = Camera::default();
        let mut sel = Selection::new();
        let mut it = Interaction::new();
        let mut live = cam;
        let web = id("web");
        let pos = Vec2::new(100.0, 300.0);
        assert!(it.pointer_down(&view(&p, &cam, None), &mut sel, pos, Button::Middle, Mods::default()).is_empty());
        let up = it.pointer_up(&view(&p, &cam, None), &mut sel, pos, Button::Middle);
        assert_eq!(
            up,
            vec![
                Effect::CommitCamera,
                Effect::Route(NodeInput::Down { id: web.clone(), pos, button: Button::Middle, clicks: 1 }),
                Effect::Route(NodeInput::Up { id: web.clone(), pos, button: Button::Middle }),
            ]
        );
        // A drag pans the canvas and clicks nothing.
        it.pointer_down(&view(&p, &cam, None), &mut sel, pos, Button::Middle, Mods::default());
        it.pointer_move(&view(&p, &cam, None), &mut sel, &mut live, Vec2::new(160.0, 340.0));
        let up = it.pointer_up(&view(&p, &cam, None), &mut sel, Vec2::new(160.0, 340.0), Button::Middle);
        assert_eq!(up, vec![Effect::CommitCamera]);
        assert_ne!(live, cam, "the canvas panned");
    }

    #[test]
    fn a_click_in_a_browser_body_focuses_it_and_routes_the_pointer_there() {
        let p = project();
        let cam = Camera::default();
        let mut sel = Selection::new();
        let mut it = Interaction::new();
        let mut live = cam;
        let web = id("web");
        let pos = Vec2::new(100.0, 300.0);
        let down = it.pointer_down(&view(&p, &cam, None), &mut sel, pos, Button::Left, Mods::default());
        assert!(down.contains(&Effect::Focus(Some(web.clone()))));
        assert!(down.contains(&Effect::Route(NodeInput::Down {
            id: web.clone(),
            pos,
            button: Button::Left,
            clicks: 1
        })));
        assert!(cmds(&down).is_empty(), "already on top: no BringToFront undo step");
        // While held, the pointer stays with the page even outside it.
        let m = it.pointer_move(&view(&p, &cam, Some(&web)), &mut sel, &mut live, Vec2::new(700.0, 50.0));
        assert_eq!(
            m,
            vec![Effect::Route(NodeInput::Move {
                id: web.clone(),
                pos: Vec2::new(700.0, 50.0),
                held: Some(Button::Left)
            })]
        );
        let up = it.pointer_up(&view(&p, &cam, Some(&web)), &mut sel, Vec2::new(700.0, 50.0), Button::Left);
        assert_eq!(
            up,
            vec![Effect::Route(NodeInput::Up { id: web.clone(), pos: Vec2::new(700.0, 50.0), button: Button::Left })]
        );
        // Wheel over the focused page scrolls the page; over the canvas it pans.
        it.pointer_move(&view(&p, &cam, Some(&web)), &mut sel, &mut live, pos);
        let w = it.wheel(&view(&p, &cam, Some(&web)), &mut live, 0.0, -2.0, Mods::default());
        assert_eq!(w, vec![Effect::Route(NodeInput::Wheel { id: web.clone(), pos, dx: 0.0, dy: -2.0 })]);
        let w = it.wheel(&view(&p, &cam, None), &mut live, 0.0, -2.0, Mods::default());
        assert_eq!(w, vec![Effect::CameraMoved]);
        assert_eq!(live.offset, Vec2::new(0.0, 2.0 * PAN_PER_NOTCH));
    }

    #[test]
    fn ctrl_wheel_zooms_around_the_pointer_within_limits() {
        let p = project();
        let cam = Camera::default();
        let mut sel = Selection::new();
        let mut it = Interaction::new();
        let mut live = cam;
        let anchor = Vec2::new(123.0, 321.0);
        it.pointer_move(&view(&p, &cam, None), &mut sel, &mut live, anchor);
        let ctrl = Mods { ctrl: true, ..Mods::default() };
        let before = live.screen_to_world(anchor);
        it.wheel(&view(&p, &cam, None), &mut live, 0.0, 3.0, ctrl);
        assert!((live.zoom() - 1.1f32.powi(3)).abs() < 1e-4);
        let after = live.screen_to_world(anchor);
        assert!(
            (before.x - after.x).abs() < 1e-3 && (before.y - after.y).abs() < 1e-3,
            "the point under the cursor stays put"
        );
        for _ in 0..100 {
            it.wheel(&view(&p, &cam, None), &mut live, 0.0, 5.0, ctrl);
        }
        assert_eq!(live.zoom(), canvas_render::MAX_ZOOM as f32);
        for _ in 0..100 {
            it.wheel(&view(&p, &cam, None), &mut live, 0.0, -5.0, ctrl);
        }
        assert_eq!(live.zoom(), canvas_render::MIN_ZOOM as f32);
        assert_eq!(it.wheel(&view(&p, &cam, None), &mut live, 0.0, -1.0, ctrl), vec![], "at the limit nothing changes");
    }

    #[test]
    fn on_a_hidpi_screen_ctrl_wheel_reaches_10_and_400_percent_of_its_scale() {
        let p = project();
        let cam = Camera::new(Vec2::default(), 2.0);
        let hidpi = |cam| View { ui_scale: 2.0, ..view(&p, cam, None) };
        let mut it = Interaction::new();
        let mut live = cam;
        let ctrl = Mods { ctrl: true, ..Mods::default() };
        for _ in 0..100 {
            it.wheel(&hidpi(&cam), &mut live, 0.0, 5.0, ctrl);
        }
        assert_eq!(live.zoom(), 2.0 * canvas_render::MAX_ZOOM as f32, "400 % is a camera zoom of 8");
        for _ in 0..100 {
            it.wheel(&hidpi(&cam), &mut live, 0.0, -5.0, ctrl);
        }
        assert_eq!(live.zoom(), 2.0 * canvas_render::MIN_ZOOM as f32);
        assert_eq!(it.wheel(&hidpi(&cam), &mut live, 0.0, -1.0, ctrl), vec![], "at the limit nothing changes");
    }

    #[test]
    fn canvas_shortcuts() {
        let p = project();
        let cam = Camera::new(Vec2::new(10.0, 10.0), 2.5);
        let mut sel = Selection::new();
        let mut it = Interaction::new();
        let mut live = cam;
        let ctrl = Mods { ctrl: true, ..Mods::default() };
        let v = view(&p, &cam, None);
        assert_eq!(
            it.canvas_key(&v, &mut sel, &mut live, CanvasKey::Delete, Mods::default()),
            vec![],
            "nothing selected"
        );
        sel.click(id("a"));
        sel.shift_click(id("b"));
        assert_eq!(
            it.canvas_key(&v, &mut sel, &mut live, CanvasKey::Char('d'), ctrl),
            vec![Effect::Apply(Command::Duplicate { ids: vec![id("a"), id("b")] })]
        );
        assert_eq!(
            it.canvas_key(&v, &mut sel, &mut live, CanvasKey::Char('g'), ctrl),
            vec![Effect::Apply(Command::GroupNodes { ids: vec![id("a"), id("b")], title: None })]
        );
        assert_eq!(it.canvas_key(&v, &mut sel, &mut live, CanvasKey::Char('z'), ctrl), vec![Effect::Undo]);
        assert_eq!(
            it.canvas_key(&v, &mut sel, &mut live, CanvasKey::Char('z'), Mods { shift: true, ..ctrl }),
            vec![Effect::Redo]
        );
        let del = it.canvas_key(&v, &mut sel, &mut live, CanvasKey::Delete, Mods::default());
        assert_eq!(cmds(&del), vec![&Command::RemoveNodes { ids: vec![id("a"), id("b")] }]);
        assert!(sel.is_empty());
        it.canvas_key(&v, &mut sel, &mut live, CanvasKey::Right, Mods::default());
        assert_eq!(live.offset, Vec2::new(10.0 + PAN_PER_ARROW / 2.5, 10.0));
        it.canvas_key(&v, &mut sel, &mut live, CanvasKey::Char('0'), ctrl);
        assert_eq!(live.zoom(), 1.0);
        it.canvas_key(&v, &mut sel, &mut live, CanvasKey::Char('1'), ctrl);
        for n in p.nodes() {
            let r = live.world_rect_to_screen(crate::runtime::scene::render_rect(&n.rect));
            assert!(
                r.x >= 0.0 && r.y >= 0.0 && r.right() <= 800.0 && r.bottom() <= 600.0,
                "fit all shows {}: {r:?}",
                n.id
            );
        }
        sel.click(id("web"));
        assert_eq!(
            it.canvas_key(&v, &mut sel, &mut live, CanvasKey::Enter, Mods::default()),
            vec![Effect::Focus(Some(id("web")))]
        );
    }

    #[test]
    fn right_click_on_the_canvas_opens_the_palette_at_that_world_point() {
        let p = project();
        let cam = Camera::new(Vec2::new(100.0, 0.0), 0.5);
        let mut sel = Selection::new();
        let mut it = Interaction::new();
        let e =
            it.pointer_down(&view(&p, &cam, None), &mut sel, Vec2::new(600.0, 500.0), Button::Right, Mods::default());
        assert_eq!(e, vec![Effect::OpenPalette { at: Some(Point::new(1300.0, 1000.0)) }]);
        // On a node's title bar, the menu is about that node: it becomes the selection.
        let e = it.pointer_down(&view(&p, &cam, None), &mut sel, Vec2::new(150.0, 5.0), Button::Right, Mods::default());
        assert_eq!(sel.to_vec(), vec![id("b")]);
        assert_eq!(e.last(), Some(&Effect::OpenPalette { at: Some(Point::new(400.0, 10.0)) }));
    }
}
