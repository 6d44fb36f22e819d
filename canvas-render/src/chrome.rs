//! Node chrome: shadow, frame, title bar with a vector kind icon, title, status badge,
//! focus glow and selection ring, laid out in the pixels of a node's cached texture.
//! Pure layout: produces shape instances and text labels, no GPU calls.

use crate::browser_bar::{badge_start, push_bar};
use crate::color::Color;
use crate::geometry::Rect;
use crate::quad::QuadInstance;
use crate::scene::{NodeContent, NodeKind, NodeView};
use crate::text::Label;
use crate::theme::Theme;

/// The body of a node (below the title bar, inside the border) in world units: where a
/// browser's pixels or a terminal's cells go. Ask CEF for `body.w * zoom` × `body.h * zoom`.
pub fn body_rect(node_rect: Rect, theme: &Theme) -> Rect {
    let b = 1.0;
    let top = theme.title_height.min(node_rect.h);
    Rect::new(node_rect.x + b, node_rect.y + top, (node_rect.w - 2.0 * b).max(0.0), (node_rect.h - top - b).max(0.0))
}

/// The area inside the body where terminal cells and note text go (body minus padding).
pub fn content_rect(node_rect: Rect, theme: &Theme) -> Rect {
    let body = body_rect(node_rect, theme);
    let p = theme.body_padding;
    Rect::new(body.x + p, body.y + p * 0.75, (body.w - 2.0 * p).max(0.0), (body.h - 1.75 * p).max(0.0))
}

/// Pixel size of a node's cached texture at `scale` (node plus the shadow/ring margin).
pub(crate) fn texture_size(node_rect: Rect, theme: &Theme, scale: f32) -> (u32, u32) {
    let m = theme.node_margin;
    (((node_rect.w + 2.0 * m) * scale).ceil().max(1.0) as u32, ((node_rect.h + 2.0 * m) * scale).ceil().max(1.0) as u32)
}

/// World rectangles that `node`'s cached texture paints fully opaque: its frame, title bar
/// and body minus the rounded corners. `None` when any of those is see-through (groups,
/// translucent node colours or themes), so nothing may be skipped beneath it.
pub(crate) fn opaque_rects(node: &NodeView, theme: &Theme) -> Option<[Rect; 2]> {
    let style = frame_style(node, theme);
    let border = if node.focused { theme.focus } else { style.border };
    if style.title_bar.a < 255 || style.body.a < 255 || border.a < 255 {
        return None;
    }
    let Rect { x, y, w, h } = node.rect;
    let r = theme.corner_radius.max(0.0).min(w * 0.5).min(h * 0.5);
    Some([Rect::new(x + r, y, w - 2.0 * r, h), Rect::new(x, y + r, w, h - 2.0 * r)])
}

/// The fill of `node`'s body in its cached texture: all a content texture covers there
/// (nothing else is drawn in the body of a node with uploaded content).
pub(crate) fn body_color(node: &NodeView, theme: &Theme) -> Color {
    frame_style(node, theme).body
}

/// Everything drawn into one node texture, in its pixels.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChromeOutput {
    /// Shapes, back to front.
    pub(crate) quads: Vec<QuadInstance>,
    /// Text, drawn after shapes and cells.
    pub(crate) labels: Vec<Label>,
    /// Body rectangle (x, y, w, h) in texture pixels.
    pub(crate) body_px: [f32; 4],
    /// Content rectangle (cells / note text) in texture pixels.
    pub(crate) content_px: [f32; 4],
}

/// Style of a node's frame, by kind.
struct FrameStyle {
    body: Color,
    title_bar: Color,
    border: Color,
    title_text: Color,
    body_text: Color,
    icon: Color,
    shadow: bool,
}

fn frame_style(node: &NodeView, theme: &Theme) -> FrameStyle {
    let c = node.color;
    let black = Color::rgb(0, 0, 0);
    let white = Color::rgb(255, 255, 255);
    match node.kind {
        NodeKind::Sticky => FrameStyle {
            body: c,
            title_bar: c.mix(black, 0.08),
            border: c.mix(black, 0.3),
            title_text: theme.sticky_text,
            body_text: theme.sticky_text,
            icon: theme.sticky_text.with_alpha(200),
            shadow: true,
        },
        NodeKind::Group => FrameStyle {
            body: c.with_alpha(16),
            title_bar: c.with_alpha(44),
            border: c.with_alpha(120),
            title_text: c.mix(white, 0.55),
            body_text: theme.body_text,
            icon: c.mix(white, 0.35),
            shadow: false,
        },
        NodeKind::Terminal | NodeKind::Agent => FrameStyle {
            body: theme.terminal_bg,
            title_bar: theme.title_bar,
            border: theme.node_border,
            title_text: theme.title_text,
            body_text: theme.body_text,
            icon: c,
            shadow: true,
        },
        NodeKind::Browser | NodeKind::Artifact => FrameStyle {
            body: theme.node_body,
            title_bar: theme.title_bar,
            border: theme.node_border,
            title_text: theme.title_text,
            body_text: theme.body_text,
            icon: c,
            shadow: true,
        },
    }
}

/// Lays out the chrome of `node` at raster `scale`. `measure(text, px, bold)` returns the
/// width in pixels of one line of text.
pub(crate) fn build_chrome(
    node: &NodeView,
    theme: &Theme,
    scale: f32,
    mut measure: impl FnMut(&str, f32, bool) -> f32,
) -> ChromeOutput {
    let s = scale;
    let px = |v: f32| (v * s).round();
    let style = frame_style(node, theme);
    let (m, w, h) = (px(theme.node_margin), px(node.rect.w).max(1.0), px(node.rect.h).max(1.0));
    let r = px(theme.corner_radius).min(w * 0.5).min(h * 0.5);
    let hair = s.round().max(1.0);
    let th = px(theme.title_height).min(h);
    let mut q = Vec::with_capacity(24);

    if node.selected {
        let g = px(4.0);
        q.push(QuadInstance::boxed(
            m - g,
            m - g,
            w + 2.0 * g,
            h + 2.0 * g,
            r + g,
            Color::default(),
            theme.selection,
            (2.0 * s).max(1.5),
        ));
    }
    if style.shadow {
        q.push(QuadInstance::shadow(m, m + px(4.0), w, h, r, 14.0 * s, theme.shadow));
    }
    if node.focused {
        q.push(QuadInstance::shadow(m, m, w, h, r, 7.0 * s, theme.focus.with_alpha(110)));
    }
    let border = if node.focused { theme.focus } else { style.border };
    let border_w = if node.focused { (1.5 * s).max(1.0) } else { hair };
    // Frame in the title-bar colour, then the body over its lower part (inset by the border
    // so the border stays visible), squared off at the top where it meets the title bar.
    q.push(QuadInstance::boxed(m, m, w, h, r, style.title_bar, border, border_w));
    let body = [m + border_w, m + th, (w - 2.0 * border_w).max(0.0), (h - th - border_w).max(0.0)];
    if body[3] > 0.0 {
        q.push(QuadInstance::fill(body[0], body[1], body[2], body[3], (r - border_w).max(0.0), style.body));
        q.push(QuadInstance::fill(body[0], body[1], body[2], body[3].min(r), 0.0, style.body));
        q.push(QuadInstance::fill(body[0], body[1], body[2], hair, 0.0, style.border.with_alpha(style.border.a / 2)));
    }

    // Title bar: icon, title, badge.
    let pad = px(10.0);
    let icon = px(14.0);
    let icon_y = m + ((th - icon) * 0.5).round();
    push_icon(&mut q, node.kind, m + pad, icon_y, icon, style.icon, s);
    let mut title_right = m + w - pad;
    let mut labels = Vec::new();
    // A browser's bar: the badge goes right of its address field, and not under the find field.
    let bar_start = node.bar.as_ref().map(|b| m + px(badge_start(node.rect.w, theme.title_height, b.tab_count())));
    let badge = node.badge.as_ref().filter(|_| node.bar.as_ref().is_none_or(|b| b.find.is_none()));
    if let Some(badge) = badge {
        let size = theme.badge_font_size * s;
        let text_w = measure(&badge.text, size, true).ceil();
        let pill_h = px(18.0);
        let pill_w = text_w + px(22.0);
        let pill_x = (m + w - pad - pill_w).max(bar_start.unwrap_or(m + pad + icon));
        let pill_w = pill_w.min(m + w - pad - pill_x).max(0.0);
        let pill_y = m + ((th - pill_h) * 0.5).round();
        q.push(QuadInstance::fill(pill_x, pill_y, pill_w, pill_h, pill_h * 0.5, badge.color.with_alpha(56)));
        q.push(QuadInstance::fill(
            pill_x + px(7.0) - px(2.5),
            pill_y + pill_h * 0.5 - px(2.5),
            px(5.0),
            px(5.0),
            px(2.5),
            badge.color,
        ));
        let text_color = badge.color.mix(Color::rgb(255, 255, 255), 0.45);
        labels.push(Label {
            text: badge.text.clone(),
            bounds: [
                pill_x + px(14.0),
                pill_y + ((pill_h - size * 1.25) * 0.5).round(),
                (pill_w - px(20.0)).max(1.0),
                size * 1.25 + 1.0,
            ],
            size,
            line_height: 1.25,
            color: text_color,
            wrap: false,
            bold: true,
        });
        title_right = pill_x - px(8.0);
    }
    let title_size = theme.title_font_size * s;
    let mut title_x = m + pad + icon + px(8.0);
    if let Some(bar) = &node.bar {
        let room = push_bar(&mut q, &mut labels, bar, (node.rect.w, th), (m, m), theme, s, &mut measure);
        match room {
            Some((from, _)) => title_x = from,
            None => title_right = title_x,
        }
    }
    if title_right - title_x >= px(24.0) {
        labels.push(Label {
            text: node.title.clone(),
            bounds: [
                title_x,
                m + ((th - title_size * 1.3) * 0.5).round(),
                (title_right - title_x).max(1.0),
                title_size * 1.3 + 1.0,
            ],
            size: title_size,
            line_height: 1.3,
            color: style.title_text,
            wrap: false,
            bold: false,
        });
    }

    let p = theme.body_padding * s;
    let content =
        [body[0] + p, body[1] + (p * 0.75).round(), (body[2] - 2.0 * p).max(0.0), (body[3] - 1.75 * p).max(0.0)];
    if let NodeContent::Text(text) = &node.content {
        let size = theme.body_font_size * s;
        labels.push(Label {
            text: text.clone(),
            bounds: content,
            size,
            line_height: 1.45,
            color: style.body_text,
            wrap: true,
            bold: false,
        });
    }
    ChromeOutput { quads: q, labels, body_px: body, content_px: content }
}

/// Vector icons in a `size`-pixel square at (x, y), built from strokes and rounded boxes.
fn push_icon(q: &mut Vec<QuadInstance>, kind: NodeKind, x: f32, y: f32, size: f32, color: Color, scale: f32) {
    let sw = (1.5 * scale).max(1.0);
    let p = |u: f32, v: f32| (x + u * size, y + v * size);
    let seg = |q: &mut Vec<QuadInstance>, a: (f32, f32), b: (f32, f32)| {
        q.push(QuadInstance::segment(a.0, a.1, b.0, b.1, sw, color))
    };
    let stroke_box = |q: &mut Vec<QuadInstance>, u0: f32, v0: f32, u1: f32, v1: f32, r: f32| {
        let (x0, y0) = p(u0, v0);
        let (x1, y1) = p(u1, v1);
        q.push(QuadInstance::boxed(x0, y0, x1 - x0, y1 - y0, r * size, Color::default(), color, sw));
    };
    let dot = |q: &mut Vec<QuadInstance>, u: f32, v: f32, r: f32| {
        let (cx, cy) = p(u, v);
        let rr = (r * size).max(0.75);
        q.push(QuadInstance::fill(cx - rr, cy - rr, 2.0 * rr, 2.0 * rr, rr, color));
    };
    match kind {
        NodeKind::Browser => {
            stroke_box(q, 0.0, 0.0, 1.0, 1.0, 0.5);
            stroke_box(q, 0.3, 0.0, 0.7, 1.0, 0.2);
            seg(q, p(0.06, 0.5), p(0.94, 0.5));
        }
        NodeKind::Terminal => {
            stroke_box(q, 0.0, 0.06, 1.0, 0.94, 0.16);
            seg(q, p(0.24, 0.34), p(0.42, 0.5));
            seg(q, p(0.42, 0.5), p(0.24, 0.66));
            seg(q, p(0.52, 0.68), p(0.76, 0.68));
        }
        NodeKind::Agent => {
            stroke_box(q, 0.04, 0.3, 0.96, 0.98, 0.22);
            dot(q, 0.34, 0.64, 0.09);
            dot(q, 0.66, 0.64, 0.09);
            seg(q, p(0.5, 0.3), p(0.5, 0.12));
            dot(q, 0.5, 0.08, 0.08);
        }
        NodeKind::Sticky => {
            stroke_box(q, 0.06, 0.0, 0.94, 1.0, 0.14);
            seg(q, p(0.28, 0.32), p(0.72, 0.32));
            seg(q, p(0.28, 0.52), p(0.72, 0.52));
            seg(q, p(0.28, 0.72), p(0.54, 0.72));
        }
        NodeKind::Group => {
            for (cx, cy, dx, dy) in
                [(0.04, 0.04, 1.0, 1.0), (0.96, 0.04, -1.0, 1.0), (0.04, 0.96, 1.0, -1.0), (0.96, 0.96, -1.0, -1.0)]
            {
                seg(q, p(cx, cy), p(cx + dx * 0.3, cy));
                seg(q, p(cx, cy), p(cx, cy + dy * 0.3));
            }
            let (x0, y0) = p(0.34, 0.34);
            q.push(QuadInstance::fill(x0, y0, 0.32 * size, 0.32 * size, 0.06 * size, color));
        }
        NodeKind::Artifact => {
            stroke_box(q, 0.14, 0.0, 0.86, 1.0, 0.12);
            seg(q, p(0.34, 0.3), p(0.66, 0.3));
            seg(q, p(0.34, 0.5), p(0.66, 0.5));
            seg(q, p(0.34, 0.7), p(0.56, 0.7));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::Badge;

    fn node(kind: NodeKind) -> NodeView {
        NodeView {
            id: 1,
            rect: Rect::new(100.0, 50.0, 400.0, 300.0),
            z: 0,
            kind,
            title: "hello".into(),
            color: Color::hex(0x44aa88),
            badge: None,
            focused: false,
            selected: false,
            content: NodeContent::Empty,
            bar: None,
        }
    }

    #[test]
    fn body_and_content_rects_sit_below_the_title_bar() {
        let t = Theme::default();
        let r = Rect::new(10.0, 20.0, 300.0, 200.0);
        let b = body_rect(r, &t);
        assert_eq!(b, Rect::new(11.0, 50.0, 298.0, 169.0));
        let c = content_rect(r, &t);
        assert!(c.x > b.x && c.y > b.y && c.right() < b.right() && c.bottom() < b.bottom());
        assert_eq!(body_rect(Rect::new(0.0, 0.0, 1.0, 10.0), &t).h, 0.0, "tiny nodes have no body");
    }

    #[test]
    fn texture_size_includes_margin_and_scales() {
        let t = Theme::default();
        assert_eq!(texture_size(Rect::new(0.0, 0.0, 400.0, 300.0), &t, 1.0), (440, 340));
        assert_eq!(texture_size(Rect::new(0.0, 0.0, 400.0, 300.0), &t, 0.5), (220, 170));
    }

    #[test]
    fn badge_shortens_the_title_and_rings_follow_state() {
        let t = Theme::default();
        let plain = build_chrome(&node(NodeKind::Browser), &t, 1.0, |s, _, _| s.len() as f32 * 7.0);
        let title_w = plain.labels[0].bounds[2];
        let mut n = node(NodeKind::Browser);
        n.badge = Some(Badge { text: "running".into(), color: Color::hex(0x33cc66) });
        n.selected = true;
        n.focused = true;
        let with_badge = build_chrome(&n, &t, 1.0, |s, _, _| s.len() as f32 * 7.0);
        assert_eq!(with_badge.labels.len(), 2);
        assert_eq!(with_badge.labels[0].text, "running");
        assert!(with_badge.labels[1].bounds[2] < title_w - 49.0);
        // Selection ring + focus glow add shapes.
        assert!(with_badge.quads.len() >= plain.quads.len() + 4);
        assert_eq!(plain.body_px, [21.0, 50.0, 398.0, 269.0]);
    }

    #[test]
    fn sticky_text_becomes_a_wrapped_label_scaled_with_the_raster() {
        let t = Theme::default();
        let mut n = node(NodeKind::Sticky);
        n.content = NodeContent::Text("remember the milk".into());
        let out = build_chrome(&n, &t, 2.0, |_, _, _| 10.0);
        let body = out.labels.iter().find(|l| l.wrap).unwrap();
        assert_eq!(body.size, t.body_font_size * 2.0);
        assert_eq!(body.bounds, out.content_px);
        assert_eq!(out.body_px[1], 2.0 * (t.node_margin + t.title_height));
    }
}
