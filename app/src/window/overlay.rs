//! The window's screen-space overlay, drawn by the renderer above the canvas
//! at zoom 1 (readable at any canvas zoom): the command palette, the
//! selection box, toasts for notices, confirm dialogs and, on an empty
//! canvas, how to begin.

use super::confirm::Confirm;
use super::palette::Palette;
use crate::runtime::Notice;
use canvas_render::{Color, NodeContent, NodeKind, NodeView, Rect};
use std::time::{Duration, Instant};

/// How long a toast stays.
pub const TOAST_FOR: Duration = Duration::from_secs(6);
/// Overlay ids live at the top of the id space, away from the FNV keys of nodes.
const PALETTE_ID: u64 = u64::MAX;
const MARQUEE_ID: u64 = u64::MAX - 1;
const HINT_ID: u64 = u64::MAX - 2;
const TOAST_BASE: u64 = u64::MAX - 16;
/// A confirm dialog's panel; its buttons follow it (below the toasts, above the tabs' ids).
const CONFIRM_BASE: u64 = u64::MAX - 48;
/// Toasts shown at once.
const MAX_TOASTS: usize = 3;
const PALETTE_WIDTH: f32 = 520.0;
const LINE_HEIGHT: f32 = 21.0;
/// What an empty canvas says, centred in the window.
pub const EMPTY_CANVAS_HINT: &str = "Ctrl+K  command palette   ·   Right click  add a node";
/// The hint bar's height (a title bar's) and its width per character of the hint.
const HINT_HEIGHT: f32 = 30.0;
const HINT_CHAR_WIDTH: f32 = 8.4;

/// A notice on screen since `shown`.
#[derive(Debug, Clone)]
pub struct Toast {
    /// The notice.
    pub notice: Notice,
    /// When it appeared.
    pub shown: Instant,
}

/// Drops expired toasts; returns when the next one expires.
pub fn expire(toasts: &mut Vec<Toast>, now: Instant) -> Option<Instant> {
    toasts.retain(|t| now.duration_since(t.shown) < TOAST_FOR);
    if toasts.len() > MAX_TOASTS {
        let extra = toasts.len() - MAX_TOASTS;
        toasts.drain(..extra);
    }
    toasts.iter().map(|t| t.shown + TOAST_FOR).min()
}

/// Whether the point (x, y) lies on `r` (hit-testing overlay parts by the same rule as `Rect::contains`).
pub(super) fn inside(r: &Rect, x: f32, y: f32) -> bool {
    r.contains(canvas_render::Vec2::new(x, y))
}

/// An overlay node: a panel, field or button drawn as a node (no badge, not focused, at z 0).
pub(super) fn panel(
    id: u64,
    rect: Rect,
    kind: NodeKind,
    title: String,
    color: Color,
    content: NodeContent,
) -> NodeView {
    NodeView { id, rect, z: 0, kind, title, color, badge: None, focused: false, selected: false, content, bar: None }
}

/// The overlay nodes for this frame, in window pixels.
pub fn build(
    viewport: (f32, f32),
    palette: Option<&Palette>,
    marquee: Option<(f32, f32, f32, f32)>,
    toasts: &[Toast],
    empty_canvas: bool,
) -> Vec<NodeView> {
    let mut out = vec![];
    if empty_canvas {
        // Drawn as a bare title bar, the way project tabs are: the window's own text style.
        let w = (EMPTY_CANVAS_HINT.chars().count() as f32 * HINT_CHAR_WIDTH + 48.0).min(viewport.0 - 16.0).max(120.0);
        let rect = Rect::new((viewport.0 - w) / 2.0, (viewport.1 - HINT_HEIGHT) / 2.0, w, HINT_HEIGHT);
        out.push(panel(
            HINT_ID,
            rect,
            NodeKind::Group,
            EMPTY_CANVAS_HINT.into(),
            Color::hex(0x565f89),
            NodeContent::Empty,
        ));
    }
    if let Some((x, y, w, h)) = marquee {
        if w >= 1.0 && h >= 1.0 {
            let mut m = panel(
                MARQUEE_ID,
                Rect::new(x, y, w, h),
                NodeKind::Group,
                String::new(),
                Color::hex(0xf0b44c),
                NodeContent::Empty,
            );
            m.z = 1;
            out.push(m);
        }
    }
    for (i, t) in toasts.iter().rev().enumerate() {
        let lines = t.notice.text.chars().count() / 60 + 1;
        let h = 30.0 + 24.0 + LINE_HEIGHT * lines.min(4) as f32;
        let w = 460.0f32.min(viewport.0 - 32.0).max(120.0);
        let y = viewport.1 - 16.0 - (i as f32 + 1.0) * (h + 10.0);
        let (title, color) =
            if t.notice.warning { ("Problem", Color::hex(0xf7768e)) } else { ("Note", Color::hex(0x9ece6a)) };
        let mut n = panel(
            TOAST_BASE + i as u64,
            Rect::new(16.0, y, w, h),
            NodeKind::Sticky,
            title.into(),
            color,
            NodeContent::Text(t.notice.text.clone()),
        );
        n.z = 2;
        out.push(n);
    }
    if let Some(p) = palette {
        let (title, lines) = p.lines();
        let h = 30.0 + 20.0 + LINE_HEIGHT * lines.len() as f32;
        let w = PALETTE_WIDTH.min(viewport.0 - 16.0).max(200.0);
        let (x, y) = match p.anchor {
            Some((ax, ay)) => (ax.min(viewport.0 - w - 8.0).max(8.0), ay.min(viewport.1 - h - 8.0).max(8.0)),
            None => (((viewport.0 - w) / 2.0).max(8.0), (viewport.1 * 0.12).min(96.0)),
        };
        let mut n = panel(
            PALETTE_ID,
            Rect::new(x, y, w, h),
            NodeKind::Artifact,
            title,
            Color::hex(0x5b9cff),
            NodeContent::Text(lines.join("\n")),
        );
        n.focused = true;
        n.z = 3;
        out.push(n);
    }
    out
}

/// A confirm dialog's panel and buttons (the chosen one highlighted), above everything else.
pub fn confirm_views<A: Clone>(viewport: (f32, f32), dialog: &Confirm<A>) -> Vec<NodeView> {
    let (rect, buttons) = dialog.layout(viewport);
    let accent = if dialog.warning { Color::hex(0xf7768e) } else { Color::hex(0x5b9cff) };
    let mut panel_view = panel(
        CONFIRM_BASE,
        rect,
        NodeKind::Artifact,
        dialog.title.clone(),
        accent,
        NodeContent::Text(dialog.lines.join("\n")),
    );
    panel_view.focused = true;
    panel_view.z = 4;
    let mut out = vec![panel_view];
    for (i, (b, choice)) in buttons.into_iter().zip(&dialog.choices).enumerate() {
        let chosen = i == dialog.chosen;
        let color = if chosen { accent } else { Color::hex(0x565f89) };
        let mut v =
            panel(CONFIRM_BASE + 1 + i as u64, b, NodeKind::Group, choice.label.clone(), color, NodeContent::Empty);
        v.focused = chosen;
        v.selected = chosen;
        v.z = 5;
        out.push(v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_confirm_dialog_draws_its_panel_and_buttons_over_everything() {
        use super::super::confirm::Choice;
        let d = Confirm::new(
            "Close",
            vec!["a".into(), "b".into()],
            vec![Choice { label: "Keep".into(), answer: Some(1) }, Choice { label: "Cancel".into(), answer: None }],
        );
        let views = confirm_views((800.0, 600.0), &d);
        assert_eq!(views.len(), 3);
        assert!(matches!(&views[0].content, NodeContent::Text(t) if t == "a\nb"));
        assert_eq!((views[1].title.as_str(), views[1].focused, views[2].focused), ("Keep", true, false));
        assert!(views.iter().all(|v| v.z >= 4));
    }

    #[test]
    fn overlay_holds_what_is_open() {
        assert!(build((800.0, 600.0), None, None, &[], false).is_empty());
        let p = Palette::new(None, Some((790.0, 590.0)), false);
        let nodes = build((800.0, 600.0), Some(&p), Some((10.0, 10.0, 50.0, 40.0)), &[], false);
        assert_eq!(nodes.len(), 2);
        let pal = nodes.iter().find(|n| n.id == PALETTE_ID).unwrap();
        assert!(
            pal.rect.right() <= 800.0 && pal.rect.bottom() <= 600.0,
            "a context menu near the corner stays inside: {:?}",
            pal.rect
        );
        assert!(matches!(&pal.content, NodeContent::Text(t) if t.contains("Sticky note")));
    }

    #[test]
    fn an_empty_canvas_shows_how_to_begin_centred() {
        let nodes = build((1000.0, 600.0), None, None, &[], true);
        assert_eq!(nodes.len(), 1);
        let hint = &nodes[0];
        assert!(hint.title.contains("Ctrl+K") && hint.title.contains("Right click"), "{}", hint.title);
        let centre = (hint.rect.x + hint.rect.w / 2.0, hint.rect.y + hint.rect.h / 2.0);
        assert_eq!(centre, (500.0, 300.0));
        let narrow = build((200.0, 600.0), None, None, &[], true);
        assert!(narrow[0].rect.x >= 0.0 && narrow[0].rect.right() <= 200.0, "fits a narrow window");
    }

    #[test]
    fn toasts_expire_and_are_capped() {
        let now = Instant::now();
        let old = now.checked_sub(TOAST_FOR + Duration::from_secs(1)).unwrap_or(now);
        let t = |shown| Toast { notice: Notice { text: "x".into(), warning: true }, shown };
        let mut toasts = vec![t(old), t(now), t(now), t(now), t(now)];
        let next = expire(&mut toasts, now);
        assert_eq!(toasts.len(), MAX_TOASTS);
        assert_eq!(next, Some(now + TOAST_FOR));
        assert_eq!(build((800.0, 600.0), None, None, &toasts, false).len(), MAX_TOASTS);
        toasts.clear();
        assert_eq!(expire(&mut toasts, now), None);
    }
}
