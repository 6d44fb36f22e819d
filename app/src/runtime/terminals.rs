//! Terminal and agent nodes ↔ live PTY sessions.
//!
//! One `terminal::Terminal` per terminal/agent node of the active project,
//! spawned in the node's working directory with the node's identity in its
//! environment, sized from the node and the renderer's cell metrics (never
//! from the zoom), and drawn through the renderer's cell grid.

use super::{AppHandle, Runtime};
use crate::model::{Command, NodeId, NodeKind};
use canvas_render::{Badge, CellView, Color, CursorShape as RCursor, NodeContent, TerminalGridView};
use std::collections::HashMap;
use std::sync::Arc;
use terminal::{CellFlags, CommandSpec, CursorShape, ExitStatus, GridSnapshot, TermSize, Terminal, TerminalConfig, TerminalHost};

/// Cell size assumed before a renderer exists (DejaVu/Hack at 14 px).
const FALLBACK_CELL: (f32, f32) = (8.0, 17.0);

/// A live terminal of a node.
pub struct LiveTerminal {
    /// The PTY session.
    pub term: Terminal,
    /// Exit status once the child ended.
    pub exited: Option<ExitStatus>,
    /// A bell rang since the node was last focused.
    pub bell: bool,
}

/// Live terminals of the active project.
#[derive(Default)]
pub struct TerminalNodes {
    map: HashMap<NodeId, LiveTerminal>,
}

impl TerminalNodes {
    /// The live terminal of a node.
    pub fn get(&self, id: &NodeId) -> Option<&LiveTerminal> {
        self.map.get(id)
    }

    /// Every live terminal.
    pub fn iter(&self) -> impl Iterator<Item = (&NodeId, &LiveTerminal)> {
        self.map.iter()
    }
}

/// Routes a terminal's callbacks to the main thread.
struct NodeHost {
    node: NodeId,
    app: AppHandle,
}

impl TerminalHost for NodeHost {
    fn wakeup(&self) {
        let _ = self.app.post(|rt| rt.request_redraw());
    }
    fn title_changed(&self, title: Option<String>) {
        let Some(title) = title.filter(|t| !t.trim().is_empty()) else { return };
        let id = self.node.clone();
        let _ = self.app.post(move |rt| {
            if let Err(e) = rt.workspace.apply(Command::SetTitle { id, title }) {
                tracing::debug!(error = %e, "terminal title not recorded");
            }
            rt.request_redraw();
        });
    }
    fn bell(&self) {
        let id = self.node.clone();
        let _ = self.app.post(move |rt| {
            if rt.focus.as_ref() != Some(&id) {
                if let Some(t) = rt.terminals.map.get_mut(&id) {
                    t.bell = true;
                }
                rt.request_redraw();
            }
        });
    }
    fn clipboard_store(&self, text: String) {
        let _ = self.app.post(move |rt| rt.clipboard = Some(text));
    }
    fn exited(&self, status: ExitStatus) {
        let id = self.node.clone();
        let _ = self.app.post(move |rt| {
            if let Some(t) = rt.terminals.map.get_mut(&id) {
                t.exited = Some(status);
            }
            rt.request_redraw();
        });
    }
}

fn clamp16(v: usize) -> u16 {
    u16::try_from(v).unwrap_or(u16::MAX)
}

fn rgb(c: terminal::Rgb) -> [u8; 3] {
    [c.r, c.g, c.b]
}

/// Converts a terminal snapshot into the renderer's cell grid.
pub fn grid_view(s: &GridSnapshot, focused: bool) -> TerminalGridView {
    let cells = s
        .cells
        .iter()
        .map(|c| CellView {
            ch: c.ch,
            fg: rgb(c.fg),
            bg: rgb(c.bg),
            bold: c.flags.contains(CellFlags::BOLD),
            italic: c.flags.contains(CellFlags::ITALIC),
            underline: c.flags.intersects(CellFlags::UNDERLINE | CellFlags::DOUBLE_UNDERLINE | CellFlags::UNDERCURL | CellFlags::DOTTED_UNDERLINE | CellFlags::DASHED_UNDERLINE),
            strikethrough: c.flags.contains(CellFlags::STRIKETHROUGH),
            dim: c.flags.contains(CellFlags::DIM),
            wide: c.flags.contains(CellFlags::WIDE),
            wide_spacer: c.flags.contains(CellFlags::WIDE_SPACER),
        })
        .collect();
    let shape = match s.cursor.shape {
        CursorShape::Hidden => None,
        _ if !focused => Some(RCursor::HollowBlock),
        CursorShape::Block => Some(RCursor::Block),
        CursorShape::HollowBlock => Some(RCursor::HollowBlock),
        CursorShape::Underline => Some(RCursor::Underline),
        CursorShape::Beam => Some(RCursor::Beam),
    };
    let mut selection = vec![];
    if let Some(sel) = &s.selection {
        let (start, end) = (sel.start, sel.end);
        for row in start.0..=end.0.min(s.rows.saturating_sub(1)) {
            let c0 = if row == start.0 || sel.block { start.1 } else { 0 };
            let c1 = if row == end.0 || sel.block { end.1 + 1 } else { s.cols };
            selection.push((clamp16(row), clamp16(c0), clamp16(c1.min(s.cols))));
        }
    }
    TerminalGridView { cols: clamp16(s.cols), rows: clamp16(s.rows), cells, cursor: shape.map(|sh| (clamp16(s.cursor.row), clamp16(s.cursor.col), sh)), selection }
}

impl Runtime {
    /// Columns × rows that fill a node (the font's cell size, never the zoom).
    pub fn terminal_size_for(&self, rect: &crate::model::Rect) -> TermSize {
        let (cols, rows, cw, ch) = match &self.gfx {
            Some(g) => {
                let (c, r) = g.renderer.terminal_grid_size(super::scene::render_rect(rect));
                let m = g.renderer.cell_metrics();
                (c, r, m.width, m.height)
            }
            None => {
                let body = canvas_render::content_rect(super::scene::render_rect(rect), &canvas_render::Theme::default());
                let c = (body.w / FALLBACK_CELL.0).floor().clamp(2.0, 1000.0) as u16;
                let r = (body.h / FALLBACK_CELL.1).floor().clamp(1.0, 1000.0) as u16;
                (c, r, FALLBACK_CELL.0, FALLBACK_CELL.1)
            }
        };
        TermSize { cols: cols.max(2), rows: rows.max(1), cell_width: cw as u16, cell_height: ch as u16 }
    }

    /// Spawns, resizes and ends terminals so they match the active project.
    pub fn sync_terminals(&mut self) {
        let Some(p) = self.project() else { return };
        let project_id = p.id().to_string();
        let folder = p.folder().to_path_buf();
        let mut wanted = vec![];
        for node in p.nodes() {
            let (cwd, command) = match &node.kind {
                NodeKind::Terminal { cwd, command, .. } => (cwd.clone(), command.clone()),
                NodeKind::Agent { cwd, .. } => (cwd.clone(), None),
                _ => continue,
            };
            let cwd = if cwd.as_os_str().is_empty() { folder.clone() } else { cwd };
            wanted.push((node.id.clone(), node.rect, cwd, command));
        }
        self.terminals.map.retain(|id, _| wanted.iter().any(|(w, ..)| w == id));
        for (id, rect, cwd, command) in wanted {
            let size = self.terminal_size_for(&rect);
            if let Some(t) = self.terminals.map.get(&id) {
                let s = t.term.snapshot();
                if (s.cols, s.rows) != (size.cols as usize, size.rows as usize) {
                    if let Err(e) = t.term.resize(size) {
                        tracing::debug!(node = %id, error = %e, "terminal resize failed");
                    }
                }
                continue;
            }
            let mut config = TerminalConfig::new(cwd, size);
            config.command = command.and_then(|c| c.split_first().map(|(p, a)| CommandSpec { program: p.clone(), args: a.to_vec() }));
            config.env = vec![
                ("TERMSPRAWL_NODE_ID".into(), id.to_string()),
                ("TERMSPRAWL_PROJECT_ID".into(), project_id.clone()),
                (crate::paths::DATA_DIR_ENV.into(), self.data_dir().display().to_string()),
            ];
            let host = Arc::new(NodeHost { node: id.clone(), app: self.handle() });
            match Terminal::spawn(config, host) {
                Ok(term) => {
                    self.terminals.map.insert(id, LiveTerminal { term, exited: None, bell: false });
                }
                Err(e) => self.notify(format!("terminal {id} did not start: {e}"), true),
            }
        }
    }

    pub(crate) fn terminal_content(&self, id: &NodeId) -> NodeContent {
        match self.terminals.map.get(id) {
            Some(t) => NodeContent::Terminal(grid_view(&t.term.snapshot(), self.focus.as_ref() == Some(id))),
            None => NodeContent::Empty,
        }
    }

    pub(crate) fn node_badge(&self, id: &NodeId) -> Option<Badge> {
        let t = self.terminals.map.get(id)?;
        if let Some(status) = &t.exited {
            let ok = status.success();
            let text = match &status.signal {
                Some(sig) => format!("exited ({sig})"),
                None => format!("exited {}", status.code),
            };
            return Some(Badge { text, color: if ok { Color::hex(0x9aa5ce) } else { Color::hex(0xf7768e) } });
        }
        t.bell.then(|| Badge { text: "bell".into(), color: Color::hex(0xe0af68) })
    }
}
