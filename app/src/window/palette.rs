//! The command palette (Ctrl+K, or a right click, which opens it at the
//! pointer as a context menu): add a browser (with a URL prompt), a
//! terminal, a sticky note or a group; duplicate or delete the selection;
//! fit all, reset the zoom, undo, redo. Typing
//! filters; Up/Down choose; Enter runs; Escape closes. The palette is state
//! and text only: the overlay module draws it.

use crate::model::Point;

/// What the palette asks the window to do.
#[derive(Debug, Clone, PartialEq)]
pub enum PaletteAction {
    /// Open a browser node at this address (normalised by the URL policy later).
    AddBrowser(String),
    /// Add a terminal node running the login shell in the project folder.
    AddTerminal,
    /// Add an empty sticky note.
    AddSticky,
    /// Group the selected nodes, or add an empty group frame when nothing is selected.
    AddGroup,
    /// Frame every node in the window.
    FitAll,
    /// Back to 100 %.
    ResetZoom,
    /// Copy the selected nodes.
    Duplicate,
    /// Remove the selected nodes.
    Delete,
    /// Undo the last canvas edit.
    Undo,
    /// Redo the last undone edit.
    Redo,
    /// Turn "Enable agent browser control" on or off (persisted).
    SetBrowserControl(bool),
    /// Link the two selected nodes for context.
    Link,
    /// Remove the link between the two selected nodes.
    Unlink,
    /// Open (or switch to) the project in this folder, in its own tab.
    OpenProject(String),
    /// Close the active project's tab (its layout stays in its folder).
    CloseProject,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    Browser,
    Terminal,
    Sticky,
    Group,
    FitAll,
    ResetZoom,
    Duplicate,
    Delete,
    Undo,
    Redo,
    BrowserControl,
    Link,
    OpenProject,
    CloseProject,
}

const ITEMS: [Item; 14] = [
    Item::Browser,
    Item::Terminal,
    Item::Sticky,
    Item::Group,
    Item::Duplicate,
    Item::Delete,
    Item::FitAll,
    Item::ResetZoom,
    Item::Undo,
    Item::Redo,
    Item::Link,
    Item::OpenProject,
    Item::CloseProject,
    Item::BrowserControl,
];

/// What the items depend on when the palette opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct State {
    has_selection: bool,
    /// "Enable agent browser control", when the tool server runs.
    browser_control: Option<bool>,
    /// Exactly two nodes are selected: whether they are linked.
    pair_linked: Option<bool>,
    /// A project is open (there is a tab to close).
    has_project: bool,
}

impl Item {
    fn label(self, state: State) -> &'static str {
        let has_selection = state.has_selection;
        match self {
            Item::Browser => "Browser — open a web page…",
            Item::Terminal => "Terminal — a shell in the project folder",
            Item::Sticky => "Sticky note",
            Item::Group if has_selection => "Group the selected nodes   Ctrl+G",
            Item::Group => "Group — an empty frame",
            Item::FitAll => "Fit all   Ctrl+1",
            Item::ResetZoom => "Reset zoom to 100 %   Ctrl+0",
            Item::Duplicate => "Duplicate the selected nodes   Ctrl+D",
            Item::Delete => "Delete the selected nodes   Del",
            Item::Undo => "Undo   Ctrl+Z",
            Item::Redo => "Redo   Ctrl+Shift+Z",
            Item::BrowserControl if state.browser_control == Some(true) => "Disable agent browser control",
            Item::BrowserControl => "Enable agent browser control — agents may drive browser nodes",
            Item::Link if state.pair_linked == Some(true) => "Unlink the two selected nodes",
            Item::Link => "Link the two selected nodes — an agent may read what a linked agent did",
            Item::OpenProject => "Open a project folder… — in a new tab",
            Item::CloseProject => "Close this project tab — its layout stays in its folder",
        }
    }

    /// Whether the item applies now (edits of the selection need one; the
    /// browser-control switch needs the tool server).
    fn available(self, state: State) -> bool {
        match self {
            Item::Duplicate | Item::Delete => state.has_selection,
            Item::BrowserControl => state.browser_control.is_some(),
            Item::Link => state.pair_linked.is_some(),
            Item::CloseProject => state.has_project,
            _ => true,
        }
    }
}

/// A key as the palette sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaletteKey {
    /// Text typed.
    Text(String),
    /// Backspace.
    Backspace,
    /// Up arrow.
    Up,
    /// Down arrow.
    Down,
    /// Enter.
    Enter,
    /// Escape.
    Escape,
}

/// What a key did to the palette.
#[derive(Debug, Clone, PartialEq)]
pub enum PaletteOutcome {
    /// Still open (redraw).
    Open,
    /// Closed without doing anything.
    Closed,
    /// Closed; run this.
    Run(PaletteAction),
}

/// What a prompt asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prompt {
    Url,
    Folder,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    List { filter: String, chosen: usize },
    Prompt { what: Prompt, text: String },
}

/// An open palette.
#[derive(Debug, Clone, PartialEq)]
pub struct Palette {
    mode: Mode,
    /// World point new nodes go to (a context menu's position), or None for a free spot.
    pub at: Option<Point>,
    /// Window position of a context menu (None: centred at the top).
    pub anchor: Option<(f32, f32)>,
    state: State,
}

impl Palette {
    /// A palette listing everything; `has_selection` changes what "Group" does.
    pub fn new(at: Option<Point>, anchor: Option<(f32, f32)>, has_selection: bool) -> Self {
        Self {
            mode: Mode::List { filter: String::new(), chosen: 0 },
            at,
            anchor,
            state: State { has_selection, browser_control: None, pair_linked: None, has_project: true },
        }
    }

    /// Says whether a project is open (no tab to close otherwise).
    pub fn with_project(mut self, open: bool) -> Self {
        self.state.has_project = open;
        self
    }

    /// Offers linking (or unlinking) when exactly two nodes are selected; `linked` says whether they are.
    pub fn with_selected_pair(mut self, linked: Option<bool>) -> Self {
        self.state.pair_linked = linked;
        self
    }

    /// Offers the "agent browser control" switch, currently `on` (only while the tool server runs).
    pub fn with_browser_control(mut self, on: Option<bool>) -> Self {
        self.state.browser_control = on;
        self
    }

    fn matches(&self, filter: &str) -> Vec<Item> {
        let f = filter.to_lowercase();
        ITEMS
            .iter()
            .copied()
            .filter(|i| i.available(self.state) && i.label(self.state).to_lowercase().contains(f.trim()))
            .collect()
    }

    /// Whether the URL prompt is showing.
    pub fn prompting_url(&self) -> bool {
        matches!(self.mode, Mode::Prompt { what: Prompt::Url, .. })
    }

    /// Handles one key.
    pub fn key(&mut self, key: PaletteKey) -> PaletteOutcome {
        let matches = match &self.mode {
            Mode::List { filter, .. } => self.matches(filter),
            Mode::Prompt { .. } => vec![],
        };
        match &mut self.mode {
            Mode::List { filter, chosen } => match key {
                PaletteKey::Text(t) => {
                    filter.push_str(&t);
                    *chosen = 0;
                }
                PaletteKey::Backspace => {
                    filter.pop();
                    *chosen = 0;
                }
                PaletteKey::Up => *chosen = chosen.checked_sub(1).unwrap_or(matches.len().saturating_sub(1)),
                PaletteKey::Down => *chosen = if matches.is_empty() { 0 } else { (*chosen + 1) % matches.len() },
                PaletteKey::Escape => return PaletteOutcome::Closed,
                PaletteKey::Enter => {
                    let Some(item) = matches.get(*chosen).copied() else { return PaletteOutcome::Open };
                    return match item {
                        Item::Browser => {
                            self.mode = Mode::Prompt { what: Prompt::Url, text: String::new() };
                            PaletteOutcome::Open
                        }
                        Item::OpenProject => {
                            self.mode = Mode::Prompt { what: Prompt::Folder, text: String::new() };
                            PaletteOutcome::Open
                        }
                        Item::CloseProject => PaletteOutcome::Run(PaletteAction::CloseProject),
                        Item::Terminal => PaletteOutcome::Run(PaletteAction::AddTerminal),
                        Item::Sticky => PaletteOutcome::Run(PaletteAction::AddSticky),
                        Item::Group => PaletteOutcome::Run(PaletteAction::AddGroup),
                        Item::FitAll => PaletteOutcome::Run(PaletteAction::FitAll),
                        Item::ResetZoom => PaletteOutcome::Run(PaletteAction::ResetZoom),
                        Item::Duplicate => PaletteOutcome::Run(PaletteAction::Duplicate),
                        Item::Delete => PaletteOutcome::Run(PaletteAction::Delete),
                        Item::Undo => PaletteOutcome::Run(PaletteAction::Undo),
                        Item::Redo => PaletteOutcome::Run(PaletteAction::Redo),
                        Item::BrowserControl => PaletteOutcome::Run(PaletteAction::SetBrowserControl(
                            self.state.browser_control != Some(true),
                        )),
                        Item::Link if self.state.pair_linked == Some(true) => {
                            PaletteOutcome::Run(PaletteAction::Unlink)
                        }
                        Item::Link => PaletteOutcome::Run(PaletteAction::Link),
                    };
                }
            },
            Mode::Prompt { what, text } => match key {
                PaletteKey::Text(t) => text.push_str(&t),
                PaletteKey::Backspace => {
                    text.pop();
                }
                PaletteKey::Escape => return PaletteOutcome::Closed,
                PaletteKey::Enter if !text.trim().is_empty() => {
                    let text = text.trim().to_string();
                    return PaletteOutcome::Run(match what {
                        Prompt::Url => PaletteAction::AddBrowser(text),
                        Prompt::Folder => PaletteAction::OpenProject(text),
                    });
                }
                PaletteKey::Enter | PaletteKey::Up | PaletteKey::Down => {}
            },
        }
        PaletteOutcome::Open
    }

    /// The title and the text lines to draw (the chosen item marked with ▸).
    pub fn lines(&self) -> (String, Vec<String>) {
        match &self.mode {
            Mode::List { filter, chosen } => {
                let mut out = vec![format!("› {filter}▏")];
                let matches = self.matches(filter);
                if matches.is_empty() {
                    out.push("  nothing matches".into());
                }
                for (i, item) in matches.iter().enumerate() {
                    let mark = if i == *chosen { "▸" } else { " " };
                    out.push(format!("{mark} {}", item.label(self.state)));
                }
                ("Commands — type to filter, Enter to run, Esc to close".into(), out)
            }
            Mode::Prompt { what: Prompt::Url, text } => (
                "Open a web page — Enter to open, Esc to cancel".into(),
                vec![format!("URL › {text}▏"), "  e.g. example.com, http://localhost:3000/".into()],
            ),
            Mode::Prompt { what: Prompt::Folder, text } => (
                "Open a project folder — Enter to open, Esc to cancel".into(),
                vec![format!("Folder › {text}▏"), "  an absolute path or ~/…; a missing folder is created".into()],
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(p: &mut Palette, s: &str) {
        for c in s.chars() {
            assert_eq!(p.key(PaletteKey::Text(c.to_string())), PaletteOutcome::Open);
        }
    }

    #[test]
    fn browser_goes_through_the_url_prompt() {
        let mut p = Palette::new(None, None, false);
        typed(&mut p, "brow");
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Open);
        assert!(p.prompting_url());
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Open, "an empty URL does nothing");
        typed(&mut p, "example.comm");
        p.key(PaletteKey::Backspace);
        assert!(p.lines().1[0].contains("example.com▏"));
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Run(PaletteAction::AddBrowser("example.com".into())));
    }

    #[test]
    fn two_selected_nodes_can_be_linked_and_unlinked() {
        assert!(!Palette::new(None, None, true).lines().1.iter().any(|l| l.contains("Link")), "no pair: no link item");
        let mut p = Palette::new(None, None, true).with_selected_pair(Some(false));
        typed(&mut p, "link");
        assert_eq!(p.lines().1[1], "▸ Link the two selected nodes — an agent may read what a linked agent did");
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Run(PaletteAction::Link));
        let mut p = Palette::new(None, None, true).with_selected_pair(Some(true));
        typed(&mut p, "unlink");
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Run(PaletteAction::Unlink));
    }

    #[test]
    fn project_folders_open_through_a_prompt_and_the_tab_closes() {
        let mut p = Palette::new(None, None, false);
        typed(&mut p, "open a project");
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Open);
        assert!(!p.prompting_url());
        assert!(p.lines().0.starts_with("Open a project folder"));
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Open, "an empty path does nothing");
        typed(&mut p, " ~/work/site ");
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Run(PaletteAction::OpenProject("~/work/site".into())));
        let mut p = Palette::new(None, None, false);
        typed(&mut p, "close this project");
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Run(PaletteAction::CloseProject));
    }

    #[test]
    fn agent_browser_control_switches_both_ways() {
        let mut p = Palette::new(None, None, false).with_browser_control(Some(false));
        typed(&mut p, "browser control");
        assert_eq!(p.lines().1[1], "▸ Enable agent browser control — agents may drive browser nodes");
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Run(PaletteAction::SetBrowserControl(true)));
        let mut p = Palette::new(None, None, false).with_browser_control(Some(true));
        typed(&mut p, "agent browser");
        assert_eq!(p.lines().1[1], "▸ Disable agent browser control");
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Run(PaletteAction::SetBrowserControl(false)));
    }

    #[test]
    fn filtering_and_choosing() {
        let mut p = Palette::new(None, None, true);
        assert_eq!(
            p.lines().1.len(),
            1 + ITEMS.len() - 2,
            "no tool server, no pair: no browser-control switch, no link"
        );
        assert_eq!(
            Palette::new(None, None, false).lines().1.len(),
            1 + ITEMS.len() - 4,
            "no selection: no duplicate or delete"
        );
        assert_eq!(
            Palette::new(None, None, false).with_project(false).lines().1.len(),
            1 + ITEMS.len() - 5,
            "no project: no tab to close"
        );
        typed(&mut p, "STICKY");
        assert_eq!(p.lines().1, vec!["› STICKY▏".to_string(), "▸ Sticky note".to_string()]);
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Run(PaletteAction::AddSticky));
        let mut p = Palette::new(None, None, true);
        p.key(PaletteKey::Down);
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Run(PaletteAction::AddTerminal));
        let mut p = Palette::new(None, None, true);
        p.key(PaletteKey::Up);
        assert_eq!(
            p.key(PaletteKey::Enter),
            PaletteOutcome::Run(PaletteAction::CloseProject),
            "Up from the first wraps to the last"
        );
        let mut p = Palette::new(None, None, true);
        typed(&mut p, "del");
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Run(PaletteAction::Delete));
        let mut p = Palette::new(None, None, true);
        typed(&mut p, "zzz");
        assert!(p.lines().1[1].contains("nothing matches"));
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Open);
        assert_eq!(p.key(PaletteKey::Escape), PaletteOutcome::Closed);
        assert!(Palette::new(None, None, true).lines().1.iter().any(|l| l.contains("Group the selected")));
    }
}
