//! A page's context menu (a right click, the menu key, Shift+F10): what was
//! under the pointer and the entries a person gets for it, the ones Chromium
//! offers for the same spot — back, forward and reload on the page; open in
//! a new tab and copy the address on a link or image; copy on a selection;
//! undo, redo, cut, copy, paste, delete and select all in a text field.
//!
//! Off-screen views have no native window for CEF to show its menu in, so
//! CEF hands the menu over (`run_context_menu`) and waits: the app draws it
//! and answers with the entry picked, or with none. The page's own
//! `contextmenu` event has run by then (a page that prevents it gets no
//! menu, as in Chromium). CEF shows one menu per page at a time; a right
//! click while one is open does nothing until it is answered.
//!
//! Entries are typed [`MenuCommand`]s, never CEF's numbers, and worded here
//! rather than taken from CEF's model, whose labels carry Windows-style `&`
//! mnemonics and include Print and View source, which an off-screen view
//! cannot do.

/// One thing a context menu entry does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MenuCommand {
    /// Back one history entry.
    Back,
    /// Forward one history entry.
    Forward,
    /// Reload the page.
    Reload,
    /// Undo the field's last edit.
    Undo,
    /// Redo the field's last undone edit.
    Redo,
    /// Cut the selection to the clipboard.
    Cut,
    /// Copy the selection to the clipboard.
    Copy,
    /// Paste the clipboard's contents.
    Paste,
    /// Delete the selection.
    Delete,
    /// Select everything (the field's text, or the page).
    SelectAll,
    /// Open the link under the pointer in a new tab of the node (the app does it).
    OpenLinkInNewTab,
    /// Put the link's address on the clipboard (the app does it).
    CopyLinkAddress,
    /// Open the image under the pointer in a new tab of the node (the app does it).
    OpenImageInNewTab,
    /// Put the image's address on the clipboard (the app does it).
    CopyImageAddress,
}

impl MenuCommand {
    /// The entry's text, as Chromium words it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Back => "Back",
            Self::Forward => "Forward",
            Self::Reload => "Reload",
            Self::Undo => "Undo",
            Self::Redo => "Redo",
            Self::Cut => "Cut",
            Self::Copy => "Copy",
            Self::Paste => "Paste",
            Self::Delete => "Delete",
            Self::SelectAll => "Select all",
            Self::OpenLinkInNewTab => "Open link in new tab",
            Self::CopyLinkAddress => "Copy link address",
            Self::OpenImageInNewTab => "Open image in new tab",
            Self::CopyImageAddress => "Copy image address",
        }
    }

    /// The keyboard shortcut that does the same in a page, shown beside the entry.
    pub fn shortcut(self) -> Option<&'static str> {
        match self {
            Self::Back => Some("Alt+Left"),
            Self::Forward => Some("Alt+Right"),
            Self::Reload => Some("Ctrl+R"),
            Self::Undo => Some("Ctrl+Z"),
            Self::Redo => Some("Ctrl+Shift+Z"),
            Self::Cut => Some("Ctrl+X"),
            Self::Copy => Some("Ctrl+C"),
            Self::Paste => Some("Ctrl+V"),
            Self::SelectAll => Some("Ctrl+A"),
            _ => None,
        }
    }

    /// Whether the page carries it out itself; the app does the others.
    pub fn is_page_command(self) -> bool {
        self.cef_id().is_some()
    }

    /// CEF's command id for what the page itself does (`cef_menu_id_t`);
    /// `None` for what the app does (tabs, addresses on the clipboard).
    pub(crate) fn cef_id(self) -> Option<i32> {
        use cef::sys::cef_menu_id_t as Id;
        let id = match self {
            Self::Back => Id::MENU_ID_BACK,
            Self::Forward => Id::MENU_ID_FORWARD,
            Self::Reload => Id::MENU_ID_RELOAD,
            Self::Undo => Id::MENU_ID_UNDO,
            Self::Redo => Id::MENU_ID_REDO,
            Self::Cut => Id::MENU_ID_CUT,
            Self::Copy => Id::MENU_ID_COPY,
            Self::Paste => Id::MENU_ID_PASTE,
            Self::Delete => Id::MENU_ID_DELETE,
            Self::SelectAll => Id::MENU_ID_SELECT_ALL,
            Self::OpenLinkInNewTab | Self::CopyLinkAddress | Self::OpenImageInNewTab | Self::CopyImageAddress => {
                return None
            }
        };
        Some(id as i32)
    }
}

/// One row of a context menu.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MenuEntry {
    /// An entry the person can pick when `enabled`.
    Command {
        /// What it does.
        command: MenuCommand,
        /// False when it would do nothing here (no history to go back to, nothing to paste…).
        enabled: bool,
    },
    /// A line between groups of entries.
    Separator,
}

/// What a text field under the pointer can do now (Chromium's edit state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EditState {
    /// Undo is possible.
    pub undo: bool,
    /// Redo is possible.
    pub redo: bool,
    /// Something is selected to cut.
    pub cut: bool,
    /// Something is selected to copy.
    pub copy: bool,
    /// The field takes a paste.
    pub paste: bool,
    /// Something is selected to delete.
    pub delete: bool,
    /// There is something to select.
    pub select_all: bool,
}

/// What was under the pointer where the menu was asked for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct MenuTarget {
    /// The link's address, on a link.
    pub link_url: Option<String>,
    /// The image's address, on an image.
    pub image_url: Option<String>,
    /// The selected text (empty: nothing selected).
    pub selection: String,
    /// Whether it was in a text field or other editable content.
    pub editable: bool,
    /// What that field can do now.
    pub edit: EditState,
    /// Whether the page has history to go back to.
    pub can_go_back: bool,
    /// Whether the page has history to go forward to.
    pub can_go_forward: bool,
}

/// A context menu a page opened, at (`x`, `y`) in its view's CSS pixels.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ContextMenu {
    /// Where it was asked for, from the view's left edge.
    pub x: i32,
    /// Where it was asked for, from the view's top edge.
    pub y: i32,
    /// What was there.
    pub target: MenuTarget,
    /// Its rows, top to bottom.
    pub entries: Vec<MenuEntry>,
}

impl ContextMenu {
    /// The menu for `target`: Chromium's groups for a link, an image, a
    /// selection and a text field, in that order; the page's navigation when
    /// none of those was under the pointer.
    pub fn new(x: i32, y: i32, target: MenuTarget) -> Self {
        let mut groups: Vec<Vec<MenuEntry>> = vec![];
        let on = |command| MenuEntry::Command { command, enabled: true };
        let when = |command, enabled| MenuEntry::Command { command, enabled };
        if target.link_url.is_some() {
            groups.push(vec![on(MenuCommand::OpenLinkInNewTab), on(MenuCommand::CopyLinkAddress)]);
        }
        if target.image_url.is_some() {
            groups.push(vec![on(MenuCommand::OpenImageInNewTab), on(MenuCommand::CopyImageAddress)]);
        }
        let e = target.edit;
        if target.editable {
            groups.push(vec![when(MenuCommand::Undo, e.undo), when(MenuCommand::Redo, e.redo)]);
            groups.push(vec![
                when(MenuCommand::Cut, e.cut),
                when(MenuCommand::Copy, e.copy),
                when(MenuCommand::Paste, e.paste),
                when(MenuCommand::Delete, e.delete),
            ]);
            groups.push(vec![when(MenuCommand::SelectAll, e.select_all)]);
        } else if !target.selection.is_empty() {
            groups.push(vec![on(MenuCommand::Copy)]);
        }
        if groups.is_empty() {
            groups.push(vec![
                when(MenuCommand::Back, target.can_go_back),
                when(MenuCommand::Forward, target.can_go_forward),
                on(MenuCommand::Reload),
            ]);
            groups.push(vec![on(MenuCommand::SelectAll)]);
        }
        let mut entries = vec![];
        for g in groups {
            if !entries.is_empty() {
                entries.push(MenuEntry::Separator);
            }
            entries.extend(g);
        }
        Self { x, y, target, entries }
    }

    /// Whether `command` is an entry of this menu the person can pick.
    pub fn offers(&self, command: MenuCommand) -> bool {
        self.entries.contains(&MenuEntry::Command { command, enabled: true })
    }

    /// The address `command` acts on, for the app's own commands.
    pub fn address_for(&self, command: MenuCommand) -> Option<&str> {
        match command {
            MenuCommand::OpenLinkInNewTab | MenuCommand::CopyLinkAddress => self.target.link_url.as_deref(),
            MenuCommand::OpenImageInNewTab | MenuCommand::CopyImageAddress => self.target.image_url.as_deref(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(menu: &ContextMenu) -> Vec<(MenuCommand, bool)> {
        menu.entries
            .iter()
            .filter_map(|e| match e {
                MenuEntry::Command { command, enabled } => Some((*command, *enabled)),
                MenuEntry::Separator => None,
            })
            .collect()
    }

    #[test]
    fn the_page_gets_navigation_with_history_deciding_back_and_forward() {
        let menu = ContextMenu::new(5, 6, MenuTarget { can_go_back: true, ..Default::default() });
        assert_eq!(
            commands(&menu),
            vec![
                (MenuCommand::Back, true),
                (MenuCommand::Forward, false),
                (MenuCommand::Reload, true),
                (MenuCommand::SelectAll, true)
            ]
        );
        assert!(menu.offers(MenuCommand::Back) && !menu.offers(MenuCommand::Forward));
        assert!(!menu.offers(MenuCommand::Paste), "not an entry of this menu");
        assert_eq!(menu.entries.iter().filter(|e| **e == MenuEntry::Separator).count(), 1);
    }

    #[test]
    fn a_link_with_a_selection_gets_link_entries_then_copy() {
        let target = MenuTarget {
            link_url: Some("http://127.0.0.1:1/a".into()),
            selection: "text".into(),
            ..Default::default()
        };
        let menu = ContextMenu::new(0, 0, target);
        assert_eq!(
            commands(&menu),
            vec![
                (MenuCommand::OpenLinkInNewTab, true),
                (MenuCommand::CopyLinkAddress, true),
                (MenuCommand::Copy, true)
            ]
        );
        assert_eq!(menu.address_for(MenuCommand::CopyLinkAddress), Some("http://127.0.0.1:1/a"));
        assert_eq!(menu.address_for(MenuCommand::CopyImageAddress), None);
        assert!(!menu.offers(MenuCommand::Back), "no navigation on a link, as in Chromium");
    }

    #[test]
    fn a_text_field_gets_editing_enabled_by_its_state() {
        let target = MenuTarget {
            editable: true,
            selection: "sel".into(),
            edit: EditState { copy: true, cut: true, paste: true, select_all: true, ..Default::default() },
            ..Default::default()
        };
        let menu = ContextMenu::new(0, 0, target);
        let c = commands(&menu);
        assert_eq!(c.len(), 7);
        assert!(menu.offers(MenuCommand::Cut) && menu.offers(MenuCommand::Paste));
        assert!(!menu.offers(MenuCommand::Undo) && !menu.offers(MenuCommand::Delete));
        assert_eq!(c.iter().filter(|(cmd, _)| *cmd == MenuCommand::Copy).count(), 1, "one Copy, the field's");
        assert_eq!(menu.entries.iter().filter(|e| **e == MenuEntry::Separator).count(), 2);
    }

    #[test]
    fn the_page_does_its_own_commands_and_the_app_the_rest() {
        assert!(MenuCommand::Paste.is_page_command() && MenuCommand::Back.is_page_command());
        assert!(!MenuCommand::OpenLinkInNewTab.is_page_command());
        assert_eq!(MenuCommand::CopyImageAddress.cef_id(), None);
        assert_eq!(MenuCommand::Copy.shortcut(), Some("Ctrl+C"));
    }
}
