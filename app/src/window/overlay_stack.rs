//! The window's pop-ups as one stack: a question, a title being renamed,
//! the command palette, a browser node's address and find fields, and the
//! context menus, JavaScript dialogs and file pickers pages wait on. A key is
//! offered to them top first and the first that takes it gets it; a key none
//! takes goes on to the window's shortcuts, the focused node and the canvas
//! (`key_route`). What a pop-up's key or answer asks of the window comes back
//! as [`OverlayEffect`]s: nothing here holds a window, a GPU or the runtime,
//! so the key routing is unit-tested.
//!
//! Top first (the order of [`Layer`]; within a layer the newest first):
//! 1. a question: modal, takes every key;
//! 2. a title being renamed, 3. the palette, 4. an address being typed:
//!    every key;
//! 5. pages' context menus: every key (to the focused node's menu, else the
//!    newest), none reaches a page;
//! 6. a page's dialog, then 7. its file picker: every key while their node
//!    has the keyboard;
//! 8. the find field: every key while its browser node has the keyboard,
//!    except the window's shortcuts.
//!
//! A pop-up that takes a key takes its release too; only presses (and
//! repeats) act.

use super::clipboard::ClipboardError;
use super::confirm::{Confirm, ConfirmKey, ConfirmOutcome};
use super::file_picker::{self, FilePicker, PickerKey};
use super::input;
use super::interaction::Mods;
use super::key_route::Keystroke;
use super::page_bar::{self, AddressField, AddressOutcome, FindBar, FindOutcome};
use super::page_dialog::{self, DialogKey, PageDialog};
use super::page_menu::{MenuKey, MenuOutcome, PageMenu};
use super::palette::{Palette, PaletteAction, PaletteKey, PaletteOutcome};
use super::rename::{RenameEditor, RenameOutcome};
use crate::model::{Command, NodeId, Point};
use canvas_render::Rect;
use cef_bridge::{ContextMenu, FileChooser, JsDialog};
use std::path::Path;
use winit::keyboard::{Key, NamedKey};

/// Where a pop-up sits in the stack, top first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    /// A question the person answers before anything else.
    Confirm,
    /// A node's title being edited in place.
    Rename,
    /// The command palette.
    Palette,
    /// A browser node's address being typed.
    Address,
    /// A page's context menu.
    PageMenu,
    /// A page's JavaScript dialog.
    PageDialog,
    /// A page's file chooser.
    FilePicker,
    /// A browser node's find-in-page field.
    Find,
}

/// One open pop-up; `A` is what a question answers.
#[derive(Debug)]
pub enum Overlay<A> {
    /// A question.
    Confirm(Confirm<A>),
    /// A title being edited.
    Rename(RenameEditor),
    /// The command palette.
    Palette(Box<Palette>),
    /// An address being typed.
    Address(AddressField),
    /// A page's context menu, on its browser node.
    PageMenu(NodeId, PageMenu),
    /// A page's JavaScript dialog, on its browser node.
    PageDialog(NodeId, PageDialog),
    /// A page's file chooser, on its browser node.
    FilePicker {
        /// The browser node.
        node: NodeId,
        /// The picker.
        picker: Box<FilePicker>,
        /// The node's body on screen when last seen (the picker's list fits in it).
        body: Rect,
    },
    /// A find-in-page field.
    Find(FindBar),
}

/// What a pop-up's key, click or answer asks of the window.
#[derive(Debug, Clone, PartialEq)]
pub enum OverlayEffect<A> {
    /// The window's own drawing changed.
    Redraw,
    /// A node's title bar changed: the canvas redraws.
    RedrawCanvas,
    /// Run what the palette chose (`at`: where its context menu was opened).
    RunPalette(PaletteAction, Option<Point>),
    /// Save the title typed: apply this command.
    SaveTitle(Box<Command>),
    /// The question was answered.
    Answer(A),
    /// Navigate the node to what was typed in its address field, which stays
    /// open until the window closes it or reports a refusal in it.
    Navigate {
        /// The browser node.
        node: NodeId,
        /// What was typed.
        address: String,
    },
    /// Find `text` in the node's page.
    FindInPage {
        /// The browser node.
        node: NodeId,
        /// What to find (empty: clear the highlights).
        text: String,
        /// Towards the end of the page.
        forward: bool,
    },
    /// The find field closed: stop finding in the node's page.
    EndFind(NodeId),
    /// A page's menu closed, an entry picked or not.
    AnswerMenu(NodeId, MenuOutcome),
    /// A page's dialog was answered.
    AnswerDialog(NodeId, page_dialog::Answer),
    /// A page's file chooser was answered.
    AnswerChooser(NodeId, file_picker::Outcome),
}

/// What the window knows about a key beyond the key itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct KeyCtx<'a> {
    /// The node with the keyboard.
    pub focus: Option<&'a NodeId>,
    /// It is a browser node showing a page.
    pub browser: bool,
    /// The key is one of the window's shortcuts (the find field leaves those to the window).
    pub shortcut: bool,
}

/// The clipboard's text, read only when a key pastes.
pub type Paste<'a> = &'a mut dyn FnMut() -> Result<String, ClipboardError>;

/// What a key press did to one pop-up.
struct Handled<A> {
    effects: Vec<OverlayEffect<A>>,
    /// The pop-up is done: it leaves the stack.
    close: bool,
}

impl<A> Handled<A> {
    /// Taken, nothing to do (a key the pop-up has no use for).
    fn nothing() -> Self {
        Self { effects: vec![], close: false }
    }

    fn open(effects: Vec<OverlayEffect<A>>) -> Self {
        Self { effects, close: false }
    }

    fn closed(effects: Vec<OverlayEffect<A>>) -> Self {
        Self { effects, close: true }
    }
}

/// Text typed into one of the window's one-line fields (the palette, a
/// title being renamed): a space or printable text, never a Ctrl/Alt shortcut.
fn typed_text(key: &Key, text: Option<&str>, mods: Mods) -> Option<PaletteKey> {
    if mods.ctrl || mods.alt {
        return None;
    }
    if let Key::Named(NamedKey::Space) = key {
        return Some(PaletteKey::Text(" ".into()));
    }
    text.filter(|t| !t.is_empty() && !t.chars().any(char::is_control)).map(|t| PaletteKey::Text(t.to_string()))
}

/// The first character a key types, if it is not a control character.
fn typed_char(text: Option<&str>) -> Option<char> {
    text.and_then(|t| t.chars().next()).filter(|c| !c.is_control())
}

fn confirm_outcome<A>(outcome: ConfirmOutcome<A>) -> Handled<A> {
    match outcome {
        ConfirmOutcome::Open => Handled::open(vec![OverlayEffect::Redraw]),
        ConfirmOutcome::Cancelled => Handled::closed(vec![OverlayEffect::Redraw]),
        ConfirmOutcome::Chose(a) => Handled::closed(vec![OverlayEffect::Redraw, OverlayEffect::Answer(a)]),
    }
}

impl<A: Clone> Overlay<A> {
    /// Where it sits in the stack.
    pub fn layer(&self) -> Layer {
        match self {
            Overlay::Confirm(_) => Layer::Confirm,
            Overlay::Rename(_) => Layer::Rename,
            Overlay::Palette(_) => Layer::Palette,
            Overlay::Address(_) => Layer::Address,
            Overlay::PageMenu(..) => Layer::PageMenu,
            Overlay::PageDialog(..) => Layer::PageDialog,
            Overlay::FilePicker { .. } => Layer::FilePicker,
            Overlay::Find(_) => Layer::Find,
        }
    }

    /// The node it belongs to (a page's pop-up, a title or field of one).
    pub fn node(&self) -> Option<&NodeId> {
        match self {
            Overlay::Confirm(_) | Overlay::Palette(_) => None,
            Overlay::Rename(r) => Some(&r.id),
            Overlay::Address(a) => Some(&a.node),
            Overlay::PageMenu(id, _) | Overlay::PageDialog(id, _) | Overlay::FilePicker { node: id, .. } => Some(id),
            Overlay::Find(f) => Some(&f.node),
        }
    }

    /// Whether a new `other` takes this one's place: one of each layer is
    /// open at a time, one per node for a page's pop-ups.
    fn same_place(&self, other: &Overlay<A>) -> bool {
        self.layer() == other.layer()
            && match self.layer() {
                Layer::PageMenu | Layer::PageDialog | Layer::FilePicker => self.node() == other.node(),
                _ => true,
            }
    }

    /// Whether it takes keys now.
    fn takes(&self, ctx: &KeyCtx<'_>) -> bool {
        match self {
            Overlay::Confirm(_)
            | Overlay::Rename(_)
            | Overlay::Palette(_)
            | Overlay::Address(_)
            | Overlay::PageMenu(..) => true,
            Overlay::PageDialog(id, _) | Overlay::FilePicker { node: id, .. } => ctx.focus == Some(id),
            Overlay::Find(f) => ctx.focus == Some(&f.node) && ctx.browser && !ctx.shortcut,
        }
    }

    /// A key press it took.
    fn key(&mut self, k: &Keystroke<'_>, paste: Paste<'_>) -> Handled<A> {
        use OverlayEffect::{Redraw, RedrawCanvas};
        let named = |n: NamedKey| *k.key == Key::Named(n);
        match self {
            Overlay::Confirm(d) => {
                let key = match k.key {
                    Key::Named(NamedKey::Escape) => Some(ConfirmKey::Escape),
                    Key::Named(NamedKey::Enter) => Some(ConfirmKey::Enter),
                    Key::Named(NamedKey::ArrowLeft) => Some(ConfirmKey::Prev),
                    Key::Named(NamedKey::Tab) if k.mods.shift => Some(ConfirmKey::Prev),
                    Key::Named(NamedKey::ArrowRight | NamedKey::Tab) => Some(ConfirmKey::Next),
                    _ => k.text.and_then(|t| t.chars().next()).filter(|c| c.is_alphabetic()).map(ConfirmKey::Char),
                };
                match key {
                    Some(key) => confirm_outcome(d.key(key)),
                    None => Handled::nothing(),
                }
            }
            Overlay::Rename(editor) => {
                let key = match k.key {
                    Key::Named(NamedKey::Escape) => Some(PaletteKey::Escape),
                    Key::Named(NamedKey::Enter) => Some(PaletteKey::Enter),
                    Key::Named(NamedKey::Backspace) => Some(PaletteKey::Backspace),
                    _ => typed_text(k.key, k.text, k.mods),
                };
                let Some(key) = key else { return Handled::nothing() };
                match editor.key(key) {
                    RenameOutcome::Editing => Handled::open(vec![Redraw, RedrawCanvas]),
                    RenameOutcome::Cancelled => Handled::closed(vec![Redraw, RedrawCanvas]),
                    RenameOutcome::Save => {
                        Handled::closed(vec![Redraw, OverlayEffect::SaveTitle(Box::new(editor.save())), RedrawCanvas])
                    }
                }
            }
            Overlay::Palette(p) => {
                let key = match k.key {
                    Key::Named(NamedKey::Escape) => PaletteKey::Escape,
                    Key::Named(NamedKey::Enter) => PaletteKey::Enter,
                    Key::Named(NamedKey::Backspace) => PaletteKey::Backspace,
                    Key::Named(NamedKey::ArrowUp) => PaletteKey::Up,
                    Key::Named(NamedKey::ArrowDown) => PaletteKey::Down,
                    _ if input::is_shortcut(k.key, k.mods, 'v', false)
                        || input::is_shortcut(k.key, k.mods, 'v', true) =>
                    {
                        match paste() {
                            Ok(t) => PaletteKey::Text(t.lines().next().unwrap_or_default().to_string()),
                            Err(e) => {
                                tracing::info!("paste into the palette: {e}");
                                return Handled::nothing();
                            }
                        }
                    }
                    _ => match typed_text(k.key, k.text, k.mods) {
                        Some(key) => key,
                        None => return Handled::nothing(),
                    },
                };
                match p.key(key) {
                    PaletteOutcome::Open => Handled::open(vec![Redraw]),
                    PaletteOutcome::Closed => Handled::closed(vec![Redraw]),
                    PaletteOutcome::Run(action) => {
                        Handled::closed(vec![Redraw, OverlayEffect::RunPalette(action, p.at)])
                    }
                }
            }
            Overlay::Address(field) => {
                let Some(key) = page_bar::field_key(k.key, k.text, k.mods, || paste().ok()) else {
                    return Handled::nothing();
                };
                match field.key(key) {
                    AddressOutcome::Editing => Handled::open(vec![Redraw, RedrawCanvas]),
                    AddressOutcome::Cancelled => Handled::closed(vec![Redraw, RedrawCanvas]),
                    AddressOutcome::Go(address) => Handled::open(vec![
                        Redraw,
                        RedrawCanvas,
                        OverlayEffect::Navigate { node: field.node.clone(), address },
                    ]),
                }
            }
            Overlay::PageMenu(id, menu) => {
                let key = match k.key {
                    Key::Named(NamedKey::ArrowDown) => MenuKey::Down,
                    Key::Named(NamedKey::ArrowUp) => MenuKey::Up,
                    Key::Named(NamedKey::Home) => MenuKey::First,
                    Key::Named(NamedKey::End) => MenuKey::Last,
                    Key::Named(NamedKey::Enter | NamedKey::Space) => MenuKey::Enter,
                    Key::Named(NamedKey::Escape) => MenuKey::Escape,
                    _ => return Handled::nothing(),
                };
                match menu.key(key) {
                    None => Handled::open(vec![Redraw]),
                    Some(outcome) => Handled::closed(vec![Redraw, OverlayEffect::AnswerMenu(id.clone(), outcome)]),
                }
            }
            Overlay::PageDialog(id, dialog) => {
                let key = if named(NamedKey::Enter) {
                    Some(DialogKey::Enter)
                } else if named(NamedKey::Escape) {
                    Some(DialogKey::Escape)
                } else if named(NamedKey::Backspace) {
                    Some(DialogKey::Backspace)
                } else {
                    typed_char(k.text).map(DialogKey::Char)
                };
                let Some(key) = key else { return Handled::nothing() };
                match dialog.key(key) {
                    None => Handled::open(vec![Redraw]),
                    Some(answer) => Handled::closed(vec![Redraw, OverlayEffect::AnswerDialog(id.clone(), answer)]),
                }
            }
            Overlay::FilePicker { node, picker, body } => {
                let key = match k.key {
                    Key::Named(NamedKey::Enter) => Some(PickerKey::Enter),
                    Key::Named(NamedKey::Escape) => Some(PickerKey::Escape),
                    Key::Named(NamedKey::Backspace) => Some(PickerKey::Backspace),
                    Key::Named(NamedKey::ArrowUp) => Some(PickerKey::Up),
                    Key::Named(NamedKey::ArrowDown) => Some(PickerKey::Down),
                    Key::Named(NamedKey::Space) => Some(PickerKey::Space),
                    _ => typed_char(k.text).map(PickerKey::Char),
                };
                let Some(key) = key else { return Handled::nothing() };
                match picker.key_over(*body, key) {
                    None => Handled::open(vec![Redraw]),
                    Some(outcome) => Handled::closed(vec![Redraw, OverlayEffect::AnswerChooser(node.clone(), outcome)]),
                }
            }
            Overlay::Find(find) => {
                let Some(key) = page_bar::field_key(k.key, k.text, k.mods, || paste().ok()) else {
                    return Handled::nothing();
                };
                let node = find.node.clone();
                match find.key(key) {
                    FindOutcome::Nothing => Handled::open(vec![Redraw, RedrawCanvas]),
                    FindOutcome::Search { text, forward } => {
                        Handled::open(vec![Redraw, RedrawCanvas, OverlayEffect::FindInPage { node, text, forward }])
                    }
                    FindOutcome::Closed => Handled::closed(vec![Redraw, RedrawCanvas, OverlayEffect::EndFind(node)]),
                }
            }
        }
    }
}

/// The open pop-ups, top first.
#[derive(Debug)]
pub struct OverlayStack<A> {
    open: Vec<Overlay<A>>,
}

impl<A> Default for OverlayStack<A> {
    fn default() -> Self {
        Self { open: vec![] }
    }
}

impl<A: Clone> OverlayStack<A> {
    /// The open pop-ups, top first.
    pub fn iter(&self) -> impl Iterator<Item = &Overlay<A>> {
        self.open.iter()
    }

    /// Opens `overlay` on top of its layer, in place of the one it replaces
    /// (of its layer; for a page's pop-up, of its layer on its node).
    pub fn open(&mut self, overlay: Overlay<A>) {
        self.open.retain(|o| !o.same_place(&overlay));
        let at = self.open.iter().position(|o| o.layer() >= overlay.layer()).unwrap_or(self.open.len());
        self.open.insert(at, overlay);
    }

    /// Closes what is open in `layer` (for a page's pop-up: on any node); true when something was.
    pub fn close(&mut self, layer: Layer) -> bool {
        self.close_where(|o| o.layer() == layer)
    }

    /// Closes what `node` has open in `layer`; true when it had something.
    pub fn close_of(&mut self, layer: Layer, node: &NodeId) -> bool {
        self.close_where(|o| o.layer() == layer && o.node() == Some(node))
    }

    fn close_where(&mut self, mut close: impl FnMut(&Overlay<A>) -> bool) -> bool {
        let before = self.open.len();
        self.open.retain(|o| !close(o));
        self.open.len() != before
    }

    /// Whether anything is open in `layer`.
    pub fn has(&self, layer: Layer) -> bool {
        self.open.iter().any(|o| o.layer() == layer)
    }

    /// Offers a key to the pop-ups, top first: `None` when none took it (it
    /// goes on to the shortcuts, the focused node, the canvas), else what the
    /// one that took it asks of the window. `paste` is read only for a paste.
    pub fn key(&mut self, k: &Keystroke<'_>, ctx: &KeyCtx<'_>, paste: Paste<'_>) -> Option<Vec<OverlayEffect<A>>> {
        let i = self.target(ctx)?;
        if !k.pressed {
            return Some(vec![]);
        }
        let handled = self.open[i].key(k, paste);
        if handled.close {
            self.open.remove(i);
        }
        Some(handled.effects)
    }

    /// The pop-up that gets a key now.
    fn target(&self, ctx: &KeyCtx<'_>) -> Option<usize> {
        let first = self.open.iter().position(|o| o.takes(ctx))?;
        if self.open[first].layer() == Layer::PageMenu {
            // The focused node's menu is the one the person works in.
            let focused = self.open.iter().position(|o| matches!(o, Overlay::PageMenu(id, _) if ctx.focus == Some(id)));
            return focused.or(Some(first));
        }
        Some(first)
    }

    /// A click on the open question (window logical pixels in a `viewport`): answers it on a button.
    pub fn confirm_click(&mut self, viewport: (f32, f32), x: f32, y: f32) -> Vec<OverlayEffect<A>> {
        let clicked = self.open.iter().enumerate().find_map(|(i, o)| match o {
            Overlay::Confirm(d) => Some((i, d.click(viewport, x, y))),
            _ => None,
        });
        let Some((i, outcome)) = clicked else { return vec![] };
        let handled = confirm_outcome(outcome);
        if handled.close {
            self.open.remove(i);
        }
        handled.effects
    }

    /// The open question.
    pub fn confirm(&self) -> Option<&Confirm<A>> {
        self.open.iter().find_map(|o| match o {
            Overlay::Confirm(d) => Some(d),
            _ => None,
        })
    }

    /// The title being edited.
    pub fn rename(&self) -> Option<&RenameEditor> {
        self.open.iter().find_map(|o| match o {
            Overlay::Rename(r) => Some(r),
            _ => None,
        })
    }

    /// Ends the title edit, handing back the editor.
    pub fn take_rename(&mut self) -> Option<RenameEditor> {
        let i = self.open.iter().position(|o| o.layer() == Layer::Rename)?;
        match self.open.remove(i) {
            Overlay::Rename(r) => Some(r),
            _ => None,
        }
    }

    /// The open palette.
    pub fn palette(&self) -> Option<&Palette> {
        self.open.iter().find_map(|o| match o {
            Overlay::Palette(p) => Some(&**p),
            _ => None,
        })
    }

    /// The open palette, to change.
    pub fn palette_mut(&mut self) -> Option<&mut Palette> {
        self.open.iter_mut().find_map(|o| match o {
            Overlay::Palette(p) => Some(&mut **p),
            _ => None,
        })
    }

    /// The address being typed.
    pub fn address(&self) -> Option<&AddressField> {
        self.open.iter().find_map(|o| match o {
            Overlay::Address(a) => Some(a),
            _ => None,
        })
    }

    /// The address being typed, to change.
    pub fn address_mut(&mut self) -> Option<&mut AddressField> {
        self.open.iter_mut().find_map(|o| match o {
            Overlay::Address(a) => Some(a),
            _ => None,
        })
    }

    /// The open find field.
    pub fn find(&self) -> Option<&FindBar> {
        self.open.iter().find_map(|o| match o {
            Overlay::Find(f) => Some(f),
            _ => None,
        })
    }

    /// Closes the find field, handing it back.
    pub fn take_find(&mut self) -> Option<FindBar> {
        let i = self.open.iter().position(|o| o.layer() == Layer::Find)?;
        match self.open.remove(i) {
            Overlay::Find(f) => Some(f),
            _ => None,
        }
    }

    /// The nodes with an open page menu, top first.
    pub fn page_menu_nodes(&self) -> Vec<NodeId> {
        self.open
            .iter()
            .filter_map(|o| match o {
                Overlay::PageMenu(id, _) => Some(id.clone()),
                _ => None,
            })
            .collect()
    }

    /// `node`'s open page menu.
    pub fn page_menu(&self, node: &NodeId) -> Option<&PageMenu> {
        self.open.iter().find_map(|o| match o {
            Overlay::PageMenu(id, m) if id == node => Some(m),
            _ => None,
        })
    }

    /// `node`'s open page menu, to change.
    pub fn page_menu_mut(&mut self, node: &NodeId) -> Option<&mut PageMenu> {
        self.open.iter_mut().find_map(|o| match o {
            Overlay::PageMenu(id, m) if id == node => Some(m),
            _ => None,
        })
    }

    /// `node`'s open page dialog.
    pub fn page_dialog(&self, node: &NodeId) -> Option<&PageDialog> {
        self.open.iter().find_map(|o| match o {
            Overlay::PageDialog(id, d) if id == node => Some(d),
            _ => None,
        })
    }

    /// `node`'s open file picker.
    pub fn file_picker(&self, node: &NodeId) -> Option<&FilePicker> {
        self.open.iter().find_map(|o| match o {
            Overlay::FilePicker { node: id, picker, .. } if id == node => Some(&**picker),
            _ => None,
        })
    }

    /// `node`'s open file picker, to change.
    pub fn file_picker_mut(&mut self, node: &NodeId) -> Option<&mut FilePicker> {
        self.open.iter_mut().find_map(|o| match o {
            Overlay::FilePicker { node: id, picker, .. } if id == node => Some(&mut **picker),
            _ => None,
        })
    }

    /// Matches the page menus to what pages wait on now (`open`: each node
    /// and its menu): closes those answered or replaced, opens the new ones.
    /// True when one opened or closed.
    pub fn sync_page_menus(&mut self, open: &[(&NodeId, &ContextMenu)]) -> bool {
        let closed = self.close_where(|o| match o {
            Overlay::PageMenu(id, m) => !open.iter().any(|(n, menu)| *n == id && **menu == m.menu),
            _ => false,
        });
        let mut opened = false;
        for (id, menu) in open {
            if self.page_menu(id).is_none() {
                self.open(Overlay::PageMenu((*id).clone(), PageMenu::new((*menu).clone())));
                opened = true;
            }
        }
        closed || opened
    }

    /// Matches the page dialogs to what pages wait on now, as [`Self::sync_page_menus`] does.
    pub fn sync_page_dialogs(&mut self, open: &[(&NodeId, &JsDialog)]) -> bool {
        let closed = self.close_where(|o| match o {
            Overlay::PageDialog(id, d) => !open.iter().any(|(n, dialog)| *n == id && **dialog == d.dialog),
            _ => false,
        });
        let mut opened = false;
        for (id, dialog) in open {
            if self.page_dialog(id).is_none() {
                self.open(Overlay::PageDialog((*id).clone(), PageDialog::new((*dialog).clone())));
                opened = true;
            }
        }
        closed || opened
    }

    /// Matches the file pickers to the choosers pages wait on now (each
    /// node, its chooser and its body on screen), as [`Self::sync_page_menus`]
    /// does; a new picker starts in `root`.
    pub fn sync_file_pickers(&mut self, open: &[(&NodeId, &FileChooser, Rect)], root: &Path) -> bool {
        let closed = self.close_where(|o| match o {
            Overlay::FilePicker { node, picker, .. } => {
                !open.iter().any(|(n, chooser, _)| *n == node && **chooser == picker.chooser)
            }
            _ => false,
        });
        let mut opened = false;
        for (id, chooser, seen) in open {
            let known = self.open.iter_mut().find_map(|o| match o {
                Overlay::FilePicker { node, body, .. } if node == *id => Some(body),
                _ => None,
            });
            match known {
                Some(body) => *body = *seen,
                None => {
                    let picker = Box::new(FilePicker::new((*chooser).clone(), root));
                    self.open(Overlay::FilePicker { node: (*id).clone(), picker, body: *seen });
                    opened = true;
                }
            }
        }
        closed || opened
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cef_bridge::{ChooserMode, DialogKind, MenuCommand, MenuTarget};

    type Stack = OverlayStack<&'static str>;
    type Effects = Option<Vec<OverlayEffect<&'static str>>>;

    const CTRL: Mods = Mods { ctrl: true, shift: false, alt: false, logo: false };

    fn id(s: &str) -> NodeId {
        NodeId::new(s).expect("id")
    }

    fn named(n: NamedKey) -> Key {
        Key::Named(n)
    }

    fn ch(c: &str) -> Key {
        Key::Character(c.into())
    }

    fn no_clipboard() -> Result<String, ClipboardError> {
        Err(ClipboardError::Empty)
    }

    /// A press of `key` (typing `text`) with `mods` while `ctx` holds.
    fn press(stack: &mut Stack, key: &Key, text: Option<&str>, mods: Mods, ctx: KeyCtx<'_>) -> Effects {
        stack.key(&Keystroke { key, text, pressed: true, mods }, &ctx, &mut no_clipboard)
    }

    fn plain(stack: &mut Stack, key: &Key, text: Option<&str>) -> Effects {
        press(stack, key, text, Mods::default(), KeyCtx::default())
    }

    fn question() -> Confirm<&'static str> {
        use super::super::confirm::Choice;
        Confirm::new(
            "Close — keep the worktree?",
            vec![],
            vec![
                Choice { label: "Keep".into(), answer: Some("keep") },
                Choice { label: "Remove".into(), answer: Some("remove") },
                Choice { label: "Cancel".into(), answer: None },
            ],
        )
    }

    fn dialog(kind: DialogKind) -> JsDialog {
        JsDialog { kind, message: "Sure?".into(), default_prompt: String::new(), url: "http://127.0.0.1/".into() }
    }

    fn menu() -> ContextMenu {
        ContextMenu::new(0, 0, MenuTarget { can_go_forward: true, ..Default::default() })
    }

    fn layers(stack: &Stack) -> Vec<Layer> {
        stack.iter().map(Overlay::layer).collect()
    }

    #[test]
    fn pop_ups_stack_by_layer_whatever_order_they_open_in() {
        let mut s = Stack::default();
        s.sync_page_dialogs(&[(&id("b"), &dialog(DialogKind::Alert))]);
        s.open(Overlay::Find(FindBar::new(id("b"), "")));
        s.open(Overlay::Palette(Box::new(Palette::new(None, None, false))));
        s.open(Overlay::Confirm(question()));
        assert_eq!(layers(&s), [Layer::Confirm, Layer::Palette, Layer::PageDialog, Layer::Find]);
        s.open(Overlay::Palette(Box::new(Palette::new(None, None, true))));
        assert_eq!(layers(&s), [Layer::Confirm, Layer::Palette, Layer::PageDialog, Layer::Find], "one palette");
    }

    #[test]
    fn escape_closes_the_top_pop_up_and_a_key_none_takes_falls_through() {
        let mut s = Stack::default();
        let b = id("b");
        s.sync_page_dialogs(&[(&b, &dialog(DialogKind::Confirm))]);
        s.open(Overlay::Palette(Box::new(Palette::new(None, None, false))));
        s.open(Overlay::Confirm(question()));
        let esc = named(NamedKey::Escape);
        let focused = KeyCtx { focus: Some(&b), browser: true, shortcut: false };
        assert_eq!(press(&mut s, &esc, None, Mods::default(), focused), Some(vec![OverlayEffect::Redraw]));
        assert_eq!(layers(&s), [Layer::Palette, Layer::PageDialog], "the question closed");
        assert_eq!(press(&mut s, &esc, None, Mods::default(), focused), Some(vec![OverlayEffect::Redraw]));
        assert_eq!(layers(&s), [Layer::PageDialog], "then the palette");
        assert_eq!(
            press(&mut s, &esc, None, Mods::default(), focused),
            Some(vec![OverlayEffect::Redraw, OverlayEffect::AnswerDialog(b.clone(), page_dialog::Answer::Dismiss)]),
            "then the focused page's dialog, answered Cancel"
        );
        assert_eq!(press(&mut s, &esc, None, Mods::default(), focused), None, "Escape goes on to the node");
    }

    #[test]
    fn the_question_takes_every_key_and_its_release_and_answers_by_letter() {
        let mut s = Stack::default();
        s.open(Overlay::Confirm(question()));
        s.open(Overlay::Palette(Box::new(Palette::new(None, None, false))));
        let shortcut = KeyCtx { shortcut: true, ..KeyCtx::default() };
        // X11 types Ctrl+K as the control character VT.
        assert_eq!(press(&mut s, &ch("k"), Some("\u{b}"), CTRL, shortcut), Some(vec![]), "Ctrl+K: taken, no effect");
        assert_eq!(plain(&mut s, &named(NamedKey::F5), None), Some(vec![]));
        let up = Keystroke { key: &ch("x"), text: Some("x"), pressed: false, mods: Mods::default() };
        assert_eq!(s.key(&up, &KeyCtx::default(), &mut no_clipboard), Some(vec![]), "a release too");
        assert_eq!(plain(&mut s, &named(NamedKey::Tab), None), Some(vec![OverlayEffect::Redraw]));
        assert_eq!(s.confirm().map(|d| d.chosen), Some(1), "Tab chose Remove");
        assert_eq!(
            plain(&mut s, &ch("k"), Some("k")),
            Some(vec![OverlayEffect::Redraw, OverlayEffect::Answer("keep")]),
            "a button's first letter answers"
        );
        assert_eq!(layers(&s), [Layer::Palette]);
    }

    #[test]
    fn a_click_answers_the_question_on_a_button() {
        let mut s = Stack::default();
        s.open(Overlay::Confirm(question()));
        let (_, buttons) = question().layout((1000.0, 800.0));
        assert_eq!(s.confirm_click((1000.0, 800.0), 1.0, 1.0), vec![OverlayEffect::Redraw], "off the buttons");
        let (x, y) = (buttons[1].x + 2.0, buttons[1].y + 2.0);
        assert_eq!(
            s.confirm_click((1000.0, 800.0), x, y),
            vec![OverlayEffect::Redraw, OverlayEffect::Answer("remove")]
        );
        assert!(s.confirm().is_none());
        assert_eq!(s.confirm_click((1000.0, 800.0), x, y), vec![], "nothing open");
    }

    #[test]
    fn a_title_being_renamed_saves_on_enter_and_keeps_shortcuts_out_of_the_text() {
        let mut s = Stack::default();
        s.open(Overlay::Rename(RenameEditor::new(id("t"), "shell")));
        assert_eq!(press(&mut s, &ch("k"), Some("k"), CTRL, KeyCtx::default()), Some(vec![]), "Ctrl+K types nothing");
        assert_eq!(plain(&mut s, &ch("!"), Some("!")), Some(vec![OverlayEffect::Redraw, OverlayEffect::RedrawCanvas]));
        assert_eq!(s.rename().map(RenameEditor::shown), Some(format!("shell!{}", super::super::rename::CARET)));
        let save = Command::RenameNode { id: id("t"), name: Some("shell!".into()) };
        assert_eq!(
            plain(&mut s, &named(NamedKey::Enter), None),
            Some(vec![OverlayEffect::Redraw, OverlayEffect::SaveTitle(Box::new(save)), OverlayEffect::RedrawCanvas])
        );
        assert!(!s.has(Layer::Rename));
    }

    #[test]
    fn the_palette_runs_what_is_chosen_and_pastes_the_clipboards_first_line() {
        let mut s = Stack::default();
        s.open(Overlay::Palette(Box::new(Palette::new(None, None, true).with_selected_pair(Some(false)))));
        let mut clipboard = || Ok::<_, ClipboardError>("link\nsecond line".to_string());
        let paste = Keystroke { key: &ch("v"), text: Some("v"), pressed: true, mods: CTRL };
        assert_eq!(s.key(&paste, &KeyCtx::default(), &mut clipboard), Some(vec![OverlayEffect::Redraw]));
        assert_eq!(
            plain(&mut s, &named(NamedKey::Enter), None),
            Some(vec![OverlayEffect::Redraw, OverlayEffect::RunPalette(PaletteAction::Link, None)])
        );
        assert!(s.palette().is_none(), "closed before its action runs");
    }

    #[test]
    fn an_address_field_takes_every_key_and_asks_to_navigate_on_enter() {
        let mut s = Stack::default();
        let b = id("b");
        s.open(Overlay::Address(AddressField::new(b.clone(), "https://example.com/")));
        let canvas = KeyCtx::default();
        assert_eq!(press(&mut s, &ch("x"), Some("x"), CTRL, canvas), Some(vec![]), "Ctrl+X: not the field's");
        plain(&mut s, &ch("a"), Some("a"));
        assert_eq!(
            plain(&mut s, &named(NamedKey::Enter), None),
            Some(vec![
                OverlayEffect::Redraw,
                OverlayEffect::RedrawCanvas,
                OverlayEffect::Navigate { node: b.clone(), address: "a".into() }
            ])
        );
        assert!(s.address().is_some(), "open until the window knows the page took it");
        assert!(s.close_of(Layer::Address, &b));
        assert!(s.address().is_none());
    }

    #[test]
    fn a_pages_dialog_and_picker_take_keys_only_while_their_node_has_the_keyboard() {
        let folder = tempfile::tempdir().expect("tempdir");
        let (a, b) = (id("a"), id("b"));
        let chooser =
            FileChooser { mode: ChooserMode::Open, title: String::new(), default_path: String::new(), accept: vec![] };
        let body = Rect::new(0.0, 0.0, 800.0, 600.0);
        let mut s = Stack::default();
        assert!(s.sync_page_dialogs(&[(&a, &dialog(DialogKind::Prompt))]));
        assert!(s.sync_file_pickers(&[(&a, &chooser, body), (&b, &chooser, body)], folder.path()));
        assert!(!s.sync_file_pickers(&[(&a, &chooser, body), (&b, &chooser, body)], folder.path()), "nothing new");
        assert_eq!(plain(&mut s, &ch("x"), Some("x")), None, "the canvas has the keyboard");
        let on = |n| KeyCtx { focus: Some(n), browser: true, shortcut: false };
        let typed = press(&mut s, &ch("x"), Some("x"), Mods::default(), on(&a));
        assert_eq!(typed, Some(vec![OverlayEffect::Redraw]));
        assert_eq!(s.page_dialog(&a).map(|d| d.text.as_str()), Some("x"), "the dialog comes before the picker");
        assert_eq!(s.file_picker(&a).map(|p| p.field.as_str()), Some(""));
        press(&mut s, &ch("y"), Some("y"), Mods::default(), on(&b));
        assert_eq!(s.file_picker(&b).map(|p| p.field.as_str()), Some("y"), "b's own picker");
        assert_eq!(
            press(&mut s, &named(NamedKey::Escape), None, Mods::default(), on(&b)),
            Some(vec![OverlayEffect::Redraw, OverlayEffect::AnswerChooser(b.clone(), file_picker::Outcome::Cancelled)])
        );
        assert!(s.sync_page_dialogs(&[]), "the page was answered elsewhere");
        assert_eq!(layers(&s), [Layer::FilePicker]);
    }

    #[test]
    fn page_menus_take_every_key_the_focused_nodes_first() {
        let (a, b, c) = (id("a"), id("b"), id("c"));
        let mut s = Stack::default();
        assert!(s.sync_page_menus(&[(&a, &menu()), (&b, &menu())]));
        let down = named(NamedKey::ArrowDown);
        let on = |n| KeyCtx { focus: Some(n), browser: true, shortcut: false };
        assert_eq!(press(&mut s, &down, None, Mods::default(), on(&a)), Some(vec![OverlayEffect::Redraw]));
        assert!(s.page_menu(&a).is_some_and(|m| m.chosen.is_some()));
        assert!(s.page_menu(&b).is_some_and(|m| m.chosen.is_none()));
        assert_eq!(press(&mut s, &ch("q"), Some("q"), Mods::default(), on(&c)), Some(vec![]), "no key reaches a page");
        assert_eq!(
            press(&mut s, &named(NamedKey::Enter), None, Mods::default(), on(&a)),
            Some(vec![
                OverlayEffect::Redraw,
                OverlayEffect::AnswerMenu(a.clone(), MenuOutcome::Pick(MenuCommand::Forward))
            ])
        );
        assert_eq!(s.page_menu_nodes(), std::slice::from_ref(&b));
        assert!(matches!(
            press(&mut s, &named(NamedKey::Escape), None, Mods::default(), on(&c)).as_deref(),
            Some([OverlayEffect::Redraw, OverlayEffect::AnswerMenu(n, MenuOutcome::Close)]) if *n == b
        ));
        assert!(!s.has(Layer::PageMenu));
    }

    #[test]
    fn the_find_field_leaves_the_window_shortcuts_and_unfocused_keys_alone() {
        let (b, other) = (id("b"), id("other"));
        let mut s = Stack::default();
        s.open(Overlay::Find(FindBar::new(b.clone(), "")));
        let on_b = KeyCtx { focus: Some(&b), browser: true, shortcut: false };
        assert_eq!(
            press(&mut s, &ch("m"), Some("m"), Mods::default(), on_b),
            Some(vec![
                OverlayEffect::Redraw,
                OverlayEffect::RedrawCanvas,
                OverlayEffect::FindInPage { node: b.clone(), text: "m".into(), forward: true }
            ])
        );
        assert_eq!(
            press(&mut s, &ch("t"), Some("t"), CTRL, KeyCtx { shortcut: true, ..on_b }),
            None,
            "Ctrl+T opens a tab"
        );
        assert_eq!(
            press(&mut s, &ch("j"), Some("j"), CTRL, on_b),
            Some(vec![]),
            "Ctrl+J with nobody waiting: swallowed"
        );
        let elsewhere = KeyCtx { focus: Some(&other), browser: true, shortcut: false };
        assert_eq!(press(&mut s, &ch("m"), Some("m"), Mods::default(), elsewhere), None);
        assert_eq!(press(&mut s, &ch("m"), Some("m"), Mods::default(), KeyCtx { browser: false, ..on_b }), None);
        let up = Keystroke { key: &ch("t"), text: None, pressed: false, mods: CTRL };
        assert_eq!(s.key(&up, &on_b, &mut no_clipboard), Some(vec![]), "its node's releases stay with it");
        assert_eq!(
            press(&mut s, &named(NamedKey::Escape), None, Mods::default(), on_b),
            Some(vec![OverlayEffect::Redraw, OverlayEffect::RedrawCanvas, OverlayEffect::EndFind(b.clone())])
        );
        assert!(s.find().is_none());
    }

    #[test]
    fn the_find_field_leaves_exactly_the_keys_the_routing_calls_the_windows() {
        use super::super::key_route::{route, Focused};
        let b = id("b");
        let mut s = Stack::default();
        s.open(Overlay::Find(FindBar::new(b.clone(), "")));
        let cases = [
            (ch("l"), CTRL, false, false, "Ctrl+L: the address field"),
            (ch("k"), CTRL, false, false, "Ctrl+K: the palette"),
            (named(NamedKey::PageUp), CTRL, false, false, "Ctrl+PageUp: the previous tab"),
            (ch("j"), CTRL, true, false, "Ctrl+J while someone waits: the jump"),
            (ch("j"), CTRL, false, true, "Ctrl+J with nobody waiting: the field keeps it"),
            (ch("x"), Mods::default(), false, true, "typing"),
            (named(NamedKey::Escape), Mods::default(), false, true, "Escape closes the field, not the node's focus"),
        ];
        for (key, mods, waits, taken, why) in cases {
            let k = Keystroke { key: &key, text: None, pressed: true, mods };
            let routed = route(&k, Focused::Browser, || waits);
            let ctx = KeyCtx { focus: Some(&b), browser: true, shortcut: routed.is_shortcut() };
            assert_eq!(s.key(&k, &ctx, &mut no_clipboard).is_some(), taken, "{why}");
        }
        assert!(s.find().is_none());
    }
}
