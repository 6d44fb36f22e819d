//! The command palette (Ctrl+K, or a right click, which opens it at the
//! pointer as a context menu): add a browser (with a URL prompt), a
//! terminal, an agent (a list of every agent with what the probe found,
//! optionally in a new git worktree), a sticky note or a group; duplicate,
//! rename or delete the selection; restart a terminal whose program ended;
//! a worktree agent's diff; fit all, reset the zoom, undo, redo; mute the
//! project's notifications. Typing
//! filters; Up/Down choose; Enter runs; Escape closes. The palette is state
//! and text only: the overlay module draws it.

use crate::model::{AgentKind, Point};
use crate::runtime::agent_catalog::AgentOffer;

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
    /// Open an agent node in the project folder, or in a new git worktree.
    NewAgent {
        /// Which agent.
        kind: AgentKind,
        /// In a new worktree on its own branch.
        worktree: bool,
    },
    /// Open the diff view of the selected worktree agent.
    ShowWorktreeDiff,
    /// Say why an entry does nothing here.
    Explain(String),
    /// Edit the selected node's title in place.
    Rename,
    /// Run the selected terminal's ended program again.
    Restart,
    /// Mute (true) or unmute the active project's desktop notifications (saved).
    SetNotificationsMuted(bool),
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
    NewAgent,
    NewAgentWorktree,
    WorktreeDiff,
    Rename,
    Restart,
    Mute,
}

const ITEMS: [Item; 20] = [
    Item::Restart,
    Item::Browser,
    Item::Terminal,
    Item::NewAgent,
    Item::NewAgentWorktree,
    Item::WorktreeDiff,
    Item::Sticky,
    Item::Group,
    Item::Duplicate,
    Item::Rename,
    Item::Delete,
    Item::FitAll,
    Item::ResetZoom,
    Item::Undo,
    Item::Redo,
    Item::Link,
    Item::Mute,
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
    /// The project folder is in a git repository (worktrees can be made).
    git_repo: bool,
    /// The one selected node is an agent in a worktree.
    worktree_node: bool,
    /// Exactly one node is selected: whether it is a terminal whose program ended.
    single_ended: Option<bool>,
    /// The active project's desktop notifications are muted.
    muted: bool,
}

/// Why the worktree entry is not offered outside git.
pub const NOT_A_REPOSITORY: &str = "the project folder is not in a git repository";

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
            Item::NewAgent => "New agent — claude, codex, gemini, grok, openclaude or custom…",
            Item::NewAgentWorktree if state.git_repo => "New agent in a new git worktree — its own branch agent/…",
            Item::NewAgentWorktree => "New agent in a new git worktree — not offered: not a git repository",
            Item::WorktreeDiff => "Show the worktree's diff — its branch against its base",
            Item::Rename => "Rename the selected node — or double-click its title",
            Item::Restart => "Restart — run the ended program again   Enter",
            Item::Mute if state.muted => "Unmute notifications for this project",
            Item::Mute => "Mute notifications for this project — no desktop notifications from its nodes",
        }
    }

    /// Whether the item applies now (edits of the selection need one; the
    /// browser-control switch needs the tool server).
    fn available(self, state: State) -> bool {
        match self {
            Item::Duplicate | Item::Delete => state.has_selection,
            Item::BrowserControl => state.browser_control.is_some(),
            Item::Link => state.pair_linked.is_some(),
            Item::CloseProject | Item::Mute => state.has_project,
            Item::NewAgent | Item::NewAgentWorktree => state.has_project,
            Item::WorktreeDiff => state.worktree_node,
            Item::Rename => state.single_ended.is_some(),
            Item::Restart => state.single_ended == Some(true),
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
    List {
        filter: String,
        chosen: usize,
    },
    Prompt {
        what: Prompt,
        text: String,
    },
    /// The agents to choose from (in a new worktree or not).
    Agents {
        worktree: bool,
        filter: String,
        chosen: usize,
    },
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
    /// What "New agent" lists.
    agents: Vec<AgentOffer>,
}

impl Palette {
    /// A palette listing everything; `has_selection` changes what "Group" does.
    pub fn new(at: Option<Point>, anchor: Option<(f32, f32)>, has_selection: bool) -> Self {
        Self {
            mode: Mode::List { filter: String::new(), chosen: 0 },
            at,
            anchor,
            state: State {
                has_selection,
                browser_control: None,
                pair_linked: None,
                has_project: true,
                git_repo: false,
                worktree_node: false,
                single_ended: None,
                muted: false,
            },
            agents: vec![],
        }
    }

    /// The agents "New agent" lists, and whether the project is in a git repository.
    pub fn with_agents(mut self, agents: Vec<AgentOffer>, git_repo: bool) -> Self {
        self.agents = agents;
        self.state.git_repo = git_repo;
        self
    }

    /// Replaces the agents listed (a version answer arrived).
    pub fn set_agents(&mut self, agents: Vec<AgentOffer>) {
        self.agents = agents;
    }

    /// Offers the worktree diff when the one selected node is an agent in a worktree.
    pub fn with_worktree_node(mut self, selected: bool) -> Self {
        self.state.worktree_node = selected;
        self
    }

    /// The agents matching `filter`.
    fn agent_matches(&self, filter: &str) -> Vec<&AgentOffer> {
        let f = filter.trim().to_lowercase();
        self.agents.iter().filter(|a| a.kind.as_str().contains(&f)).collect()
    }

    fn agent_label(offer: &AgentOffer, worktree: bool) -> String {
        let place = if worktree { " in a new worktree" } else { "" };
        format!("{}{place} — {}", offer.kind, offer.summary())
    }

    /// Says whether a project is open (no tab to close otherwise).
    pub fn with_project(mut self, open: bool) -> Self {
        self.state.has_project = open;
        self
    }

    /// Says whether the active project's desktop notifications are muted (the item then unmutes).
    pub fn with_notifications_muted(mut self, muted: bool) -> Self {
        self.state.muted = muted;
        self
    }

    /// Offers linking (or unlinking) when exactly two nodes are selected; `linked` says whether they are.
    pub fn with_selected_pair(mut self, linked: Option<bool>) -> Self {
        self.state.pair_linked = linked;
        self
    }

    /// Offers renaming when exactly one node is selected (`Some`), and restarting
    /// when that node is a terminal whose program ended (`Some(true)`).
    pub fn with_single_selected(mut self, ended: Option<bool>) -> Self {
        self.state.single_ended = ended;
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
            Mode::Prompt { .. } | Mode::Agents { .. } => vec![],
        };
        let agents: Vec<AgentKind> = match &self.mode {
            Mode::Agents { filter, .. } => self.agent_matches(filter).iter().map(|a| a.kind).collect(),
            _ => vec![],
        };
        match &mut self.mode {
            Mode::Agents { worktree, filter, chosen } => match key {
                PaletteKey::Text(t) => {
                    filter.push_str(&t);
                    *chosen = 0;
                }
                PaletteKey::Backspace if filter.is_empty() => {
                    self.mode = Mode::List { filter: String::new(), chosen: 0 };
                }
                PaletteKey::Backspace => {
                    filter.pop();
                    *chosen = 0;
                }
                PaletteKey::Up => *chosen = chosen.checked_sub(1).unwrap_or(agents.len().saturating_sub(1)),
                PaletteKey::Down => *chosen = if agents.is_empty() { 0 } else { (*chosen + 1) % agents.len() },
                PaletteKey::Escape => return PaletteOutcome::Closed,
                PaletteKey::Enter => {
                    let Some(kind) = agents.get(*chosen).copied() else { return PaletteOutcome::Open };
                    return PaletteOutcome::Run(PaletteAction::NewAgent { kind, worktree: *worktree });
                }
            },
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
                        Item::NewAgent => {
                            self.mode = Mode::Agents { worktree: false, filter: String::new(), chosen: 0 };
                            PaletteOutcome::Open
                        }
                        Item::NewAgentWorktree if self.state.git_repo => {
                            self.mode = Mode::Agents { worktree: true, filter: String::new(), chosen: 0 };
                            PaletteOutcome::Open
                        }
                        Item::NewAgentWorktree => {
                            PaletteOutcome::Run(PaletteAction::Explain(format!("No worktree: {NOT_A_REPOSITORY}.")))
                        }
                        Item::WorktreeDiff => PaletteOutcome::Run(PaletteAction::ShowWorktreeDiff),
                        Item::Rename => PaletteOutcome::Run(PaletteAction::Rename),
                        Item::Restart => PaletteOutcome::Run(PaletteAction::Restart),
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
                        Item::Mute => PaletteOutcome::Run(PaletteAction::SetNotificationsMuted(!self.state.muted)),
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
            Mode::Agents { worktree, filter, chosen } => {
                let mut out = vec![format!("› {filter}▏")];
                let matches = self.agent_matches(filter);
                if matches.is_empty() {
                    out.push("  nothing matches".into());
                }
                for (i, offer) in matches.iter().enumerate() {
                    let mark = if i == *chosen { "▸" } else { " " };
                    out.push(format!("{mark} {}", Self::agent_label(offer, *worktree)));
                }
                let title = if *worktree {
                    "New agent in a new git worktree — Enter to start, Backspace to go back"
                } else {
                    "New agent in the project folder — Enter to start, Backspace to go back"
                };
                (title.into(), out)
            }
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
    fn a_projects_notifications_mute_and_unmute() {
        let mut p = Palette::new(None, None, false);
        typed(&mut p, "notifications");
        assert_eq!(p.lines().1[1], "▸ Mute notifications for this project — no desktop notifications from its nodes");
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Run(PaletteAction::SetNotificationsMuted(true)));
        let mut p = Palette::new(None, None, false).with_notifications_muted(true);
        typed(&mut p, "unmute");
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Run(PaletteAction::SetNotificationsMuted(false)));
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

    fn offers() -> Vec<AgentOffer> {
        use crate::runtime::agent_catalog::{Availability, Version, LAUNCHABLE};
        LAUNCHABLE
            .into_iter()
            .map(|kind| AgentOffer {
                kind,
                availability: match kind {
                    AgentKind::Claude => Availability::Installed {
                        executable: "/bin/claude".into(),
                        version: Version::Known("2.1.332 (Claude Code)".into()),
                    },
                    _ => Availability::Missing { install: crate::runtime::agent_nodes::install_hint(kind) },
                },
            })
            .collect()
    }

    #[test]
    fn new_agent_lists_every_agent_with_what_the_probe_found() {
        let mut p = Palette::new(None, None, false).with_agents(offers(), true);
        typed(&mut p, "new agent —");
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Open);
        let (title, lines) = p.lines();
        assert!(title.starts_with("New agent in the project folder"), "{title}");
        assert_eq!(
            lines[1..],
            [
                "▸ claude — 2.1.332 (Claude Code)",
                "  codex — not installed: npm i -g @openai/codex",
                "  gemini — not installed: npm i -g @google/gemini-cli",
                "  grok — not installed: npm i -g @vibe-kit/grok-cli",
                "  openclaude — not installed: npm i -g @gitlawb/openclaude",
                "  custom — not configured: set custom in preferences.json",
            ]
        );
        typed(&mut p, "gem");
        assert_eq!(p.lines().1[1..], ["▸ gemini — not installed: npm i -g @google/gemini-cli"]);
        assert_eq!(
            p.key(PaletteKey::Enter),
            PaletteOutcome::Run(PaletteAction::NewAgent { kind: AgentKind::Gemini, worktree: false })
        );
        // In a worktree: the same list, marked; Backspace on an empty filter goes back.
        let mut p = Palette::new(None, None, false).with_agents(offers(), true);
        typed(&mut p, "worktree —");
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Open);
        assert_eq!(p.lines().1[1], "▸ claude in a new worktree — 2.1.332 (Claude Code)");
        assert_eq!(
            p.key(PaletteKey::Enter),
            PaletteOutcome::Run(PaletteAction::NewAgent { kind: AgentKind::Claude, worktree: true })
        );
        let mut p = Palette::new(None, None, false).with_agents(offers(), true);
        typed(&mut p, "new agent —");
        p.key(PaletteKey::Enter);
        p.key(PaletteKey::Backspace);
        assert!(p.lines().0.starts_with("Commands"));
    }

    #[test]
    fn outside_git_the_worktree_entry_says_why_instead() {
        let mut p = Palette::new(None, None, false).with_agents(offers(), false);
        typed(&mut p, "worktree");
        assert_eq!(p.lines().1[1], "▸ New agent in a new git worktree — not offered: not a git repository");
        assert_eq!(
            p.key(PaletteKey::Enter),
            PaletteOutcome::Run(PaletteAction::Explain(format!("No worktree: {NOT_A_REPOSITORY}.")))
        );
        let mut p = Palette::new(None, None, true).with_worktree_node(true);
        typed(&mut p, "diff");
        assert_eq!(p.key(PaletteKey::Enter), PaletteOutcome::Run(PaletteAction::ShowWorktreeDiff));
    }

    #[test]
    fn one_selected_node_can_be_renamed_and_an_ended_one_restarted() {
        let none = Palette::new(None, None, true);
        assert!(!none.lines().1.iter().any(|l| l.contains("Rename") || l.contains("Restart")));
        let mut running = Palette::new(None, None, true).with_single_selected(Some(false));
        assert!(!running.lines().1.iter().any(|l| l.contains("Restart")));
        typed(&mut running, "rename");
        assert_eq!(running.key(PaletteKey::Enter), PaletteOutcome::Run(PaletteAction::Rename));
        let mut ended = Palette::new(None, None, true).with_single_selected(Some(true));
        assert!(ended.lines().1[1].contains("Restart"), "an ended program's restart comes first");
        assert_eq!(ended.key(PaletteKey::Enter), PaletteOutcome::Run(PaletteAction::Restart));
    }

    #[test]
    fn filtering_and_choosing() {
        let mut p = Palette::new(None, None, true);
        assert_eq!(
            p.lines().1.len(),
            1 + ITEMS.len() - 5,
            "no tool server, no pair, no single node, no worktree agent: no browser-control switch, link, rename, restart or diff"
        );
        assert_eq!(
            Palette::new(None, None, false).lines().1.len(),
            1 + ITEMS.len() - 7,
            "no selection: no duplicate or delete"
        );
        assert_eq!(
            Palette::new(None, None, false).with_project(false).lines().1.len(),
            1 + ITEMS.len() - 11,
            "no project: no tab to close, no agent to start there, nothing to mute"
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
