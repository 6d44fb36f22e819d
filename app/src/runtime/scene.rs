//! The model as the renderer sees it, and off-screen canvas rendering.
//!
//! Nodes become `canvas_render::NodeView`s; browser tabs become uploaded
//! BGRA textures keyed by a stable hash of their tab address. Headless, the
//! GPU is only set up when a picture of the canvas is asked for.

use super::Runtime;
use crate::model::title::shown_title;
use crate::model::{Colour, Node, NodeKind, TabAddress};
use canvas_render::{Badge, Color, DirtyRect, NodeContent, NodeView, Renderer, RgbaImage, Scene};

/// A stable 64-bit key for a string id (FNV-1a): node ids and content keys.
pub fn stable_key(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A browser node of an isolated context (a CDP client's
/// `createBrowserContext`) says so: its cookies and storage are not the
/// person's, and it is neither saved nor kept past its client. The badge
/// stays short (the title bar is narrow); `canvas_list` names the context.
fn isolation_badge(node: &Node) -> Option<Badge> {
    match &node.kind {
        NodeKind::Browser { context: Some(_), .. } => {
            Some(Badge { text: "isolated".into(), color: Color::hex(0xbb9af7) })
        }
        _ => None,
    }
}

/// The content key of a browser tab's texture.
pub fn tab_key(tab: &TabAddress) -> u64 {
    stable_key(&tab.to_string())
}

/// The accent colour of a node (palette names map to the theme's hues).
pub fn colour_of(c: Option<&Colour>, kind: &NodeKind) -> Color {
    let name = c.map(Colour::as_str);
    match name {
        Some(hex) if hex.starts_with('#') => {
            let v = u32::from_str_radix(&hex[1..], 16).unwrap_or(0x7aa2f7);
            if hex.len() == 4 {
                // #rgb → #rrggbb
                let (r, g, b) = ((v >> 8) & 0xf, (v >> 4) & 0xf, v & 0xf);
                Color::rgb((r * 17) as u8, (g * 17) as u8, (b * 17) as u8)
            } else {
                Color::hex(v & 0xff_ffff)
            }
        }
        Some("red") => Color::hex(0xf7768e),
        Some("orange") => Color::hex(0xff9e64),
        Some("yellow") => Color::hex(0xe0af68),
        Some("green") => Color::hex(0x9ece6a),
        Some("teal") => Color::hex(0x73daca),
        Some("blue") => Color::hex(0x7aa2f7),
        Some("purple") => Color::hex(0xbb9af7),
        Some("pink") => Color::hex(0xff7eb6),
        Some("gray") => Color::hex(0x9aa5ce),
        _ => match kind {
            NodeKind::Browser { .. } => Color::hex(0x7aa2f7),
            NodeKind::Terminal { .. } => Color::hex(0x9ece6a),
            NodeKind::Agent { .. } => Color::hex(0xbb9af7),
            NodeKind::Sticky { .. } => Color::hex(0xe0af68),
            NodeKind::Group { .. } => Color::hex(0x9aa5ce),
            NodeKind::Artifact { .. } => Color::hex(0x73daca),
        },
    }
}

fn render_kind(kind: &NodeKind) -> canvas_render::NodeKind {
    match kind {
        NodeKind::Browser { .. } => canvas_render::NodeKind::Browser,
        NodeKind::Terminal { .. } => canvas_render::NodeKind::Terminal,
        NodeKind::Agent { .. } => canvas_render::NodeKind::Agent,
        NodeKind::Sticky { .. } => canvas_render::NodeKind::Sticky,
        NodeKind::Group { .. } => canvas_render::NodeKind::Group,
        NodeKind::Artifact { .. } => canvas_render::NodeKind::Artifact,
    }
}

pub use super::gfx::{render_rect, Gfx};

impl Runtime {
    /// The active project as a renderer scene.
    pub fn scene(&self) -> Scene {
        self.scene_within(None)
    }

    /// The scene the window shows: terminals off screen are not read (their
    /// grids are the costly part of a scene; the frame that shows one reads it).
    pub fn scene_on_screen(&self) -> Scene {
        self.scene_within(self.pacing.view())
    }

    fn scene_within(&self, view: Option<&super::on_screen::OnScreen>) -> Scene {
        let mut scene = Scene::default();
        let Some(p) = self.project() else { return scene };
        for node in p.nodes_by_z() {
            scene.nodes.push(self.node_view(node, view.is_none_or(|v| v.shows(&node.rect))));
            // Each link once, from its lesser end.
            scene.links.extend(
                node.links
                    .iter()
                    .filter(|peer| node.id < **peer)
                    .map(|peer| (stable_key(node.id.as_str()), stable_key(peer.as_str()))),
            );
        }
        scene
    }

    /// What a node's title bar reads: the person's name, its program's title,
    /// or for a terminal `shell — ~/folder` (see [`shown_title`]).
    pub fn node_title(&self, node: &Node) -> String {
        let program = self.terminals.get(&node.id).and_then(|t| t.program_title.as_deref());
        let folder = self.project().map(|p| p.folder().to_path_buf()).unwrap_or_default();
        let shell = std::env::var("SHELL").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "sh".to_owned());
        shown_title(node, program, &folder, crate::model::persist::home_dir().as_deref(), &shell)
    }

    fn node_view(&self, node: &Node, seen: bool) -> NodeView {
        let content = match &node.kind {
            NodeKind::Browser { .. } => match self.browsers.for_node(&node.id) {
                Some((tab, _)) => NodeContent::Texture { key: tab_key(tab), generation: 0 },
                None => NodeContent::Empty,
            },
            NodeKind::Sticky { text } => NodeContent::Text(text.clone()),
            NodeKind::Group { .. } => NodeContent::Empty,
            NodeKind::Terminal { .. } | NodeKind::Agent { .. } | NodeKind::Artifact { .. } if seen => {
                self.terminal_content(&node.id)
            }
            NodeKind::Terminal { .. } | NodeKind::Agent { .. } | NodeKind::Artifact { .. } => NodeContent::Empty,
        };
        let badge = self
            .browsers
            .crash_of(&node.id)
            .map(|why| Badge { text: format!("page {why}"), color: Color::hex(0xf7768e) })
            .or_else(|| isolation_badge(node))
            .or_else(|| self.node_badge(&node.id));
        // A node waiting for the person says so first, and its icon takes the badge's colour.
        let needs_you = self.node_needs_you(&node.id);
        let mut color = colour_of(node.colour.as_ref(), &node.kind);
        let badge = badge.map(|b| match needs_you {
            true => {
                color = b.color;
                Badge { text: format!("needs you · {}", b.text), color: b.color }
            }
            false => b,
        });
        NodeView {
            id: stable_key(node.id.as_str()),
            rect: render_rect(&node.rect),
            z: node.z.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
            kind: render_kind(&node.kind),
            title: self.node_title(node),
            color,
            badge,
            focused: self.focus.as_ref() == Some(&node.id),
            selected: self.selection.contains(&node.id),
            content,
            bar: self.browser_bar(node),
        }
    }

    /// A browser node's title-bar controls as the page last reported them
    /// (the window adds what the person is typing and pointing at).
    fn browser_bar(&self, node: &Node) -> Option<canvas_render::BrowserBar> {
        let NodeKind::Browser { .. } = &node.kind else { return None };
        let nav = self.page_nav(&node.id).unwrap_or_default();
        let address = self.page_url(&node.id);
        Some(canvas_render::BrowserBar {
            can_go_back: nav.can_go_back,
            can_go_forward: nav.can_go_forward,
            loading: nav.loading,
            progress: (nav.progress.clamp(0.0, 1.0) * 1000.0).round() as u16,
            address: address.unwrap_or_default(),
            tabs: self
                .page_tabs(&node.id)
                .into_iter()
                .map(|t| canvas_render::TabChip { title: t.title, active: t.active })
                .collect(),
            ..Default::default()
        })
    }

    /// Uploads every browser frame painted since the last upload (`all`: every
    /// page's last frame), returns how many; without `all`, frames of pages
    /// nobody sees stay pending for the frame that shows them.
    pub fn upload_frames(&mut self, renderer: &mut Renderer, all: bool) -> usize {
        let mut uploaded = 0;
        for (tab, b) in self.browsers.iter() {
            if !all && !self.frame_visible(tab) {
                continue;
            }
            let frame = if all { b.last_frame() } else { b.take_frame() };
            let Some(f) = frame else { continue };
            uploaded += 1;
            let dirty: Vec<DirtyRect> =
                f.dirty.iter().map(|r| DirtyRect { x: r.x, y: r.y, w: r.width, h: r.height }).collect();
            if let Err(e) = renderer.upload_bgra(tab_key(tab), f.width, f.height, &f.bgra, &dirty) {
                tracing::warn!(%tab, error = %e, "browser frame not uploaded");
            }
        }
        uploaded
    }

    /// Renders the active project off-screen at `width`×`height`; `fit` frames all nodes.
    pub fn render_canvas(&mut self, width: u32, height: u32, fit: bool) -> Result<RgbaImage, String> {
        if self.gfx.is_none() {
            self.gfx = Some(Gfx::headless().map_err(|e| format!("GPU setup failed: {e}"))?);
        }
        let scene = self.scene();
        let model_cam = self.project().map(|p| p.camera()).unwrap_or_default();
        let mut camera = canvas_render::Camera::new(
            canvas_render::Vec2::new(model_cam.x as f32, model_cam.y as f32),
            model_cam.zoom as f32,
        );
        if fit {
            let rects: Vec<canvas_render::Rect> = scene.nodes.iter().map(|n| n.rect).collect();
            let _ = camera.fit_all(&rects, canvas_render::Vec2::new(width as f32, height as f32), 24.0);
        }
        let mut gfx = self.gfx.take().ok_or("GPU unavailable")?;
        self.upload_frames(&mut gfx.renderer, true);
        let result = gfx.renderer.render_to_rgba(&scene, &camera, width, height).map_err(|e| e.to_string());
        self.gfx = Some(gfx);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_and_distinct() {
        assert_eq!(stable_key("n-1"), stable_key("n-1"));
        assert_ne!(stable_key("n-1"), stable_key("n-2"));
    }

    #[test]
    fn colours_parse_hex_and_palette() {
        let kind = NodeKind::Sticky { text: String::new() };
        assert_eq!(colour_of(Some(&Colour::new("#ff0000").unwrap()), &kind), Color::rgb(255, 0, 0));
        assert_eq!(colour_of(Some(&Colour::new("#0f0").unwrap()), &kind), Color::rgb(0, 255, 0));
        assert_eq!(colour_of(None, &kind), Color::hex(0xe0af68));
        assert_eq!(colour_of(Some(&Colour::new("blue").unwrap()), &kind), Color::hex(0x7aa2f7));
    }
}
