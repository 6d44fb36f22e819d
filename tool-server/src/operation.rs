//! [`Operation`]: the typed name of every callable operation, in catalogue
//! order, with the classes the server routes on (direct, browser, canvas).
//! A leaf: the catalogue, the validator, typed calls and the MCP adapter all name it.

use std::fmt;

macro_rules! operations {
    ($($variant:ident => $name:literal,)*) => {
        /// One callable operation; the typed twin of a catalogue entry's `name`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Operation {
            $(
                #[doc = concat!("The `", $name, "` operation.")]
                $variant,
            )*
        }

        impl Operation {
            /// Every operation, in catalogue order.
            pub const ALL: &'static [Operation] = &[$(Operation::$variant,)*];

            /// Every operation's wire name, in catalogue order (what `session_info` lists).
            pub const NAMES: &'static [&'static str] = &[$($name,)*];

            /// The wire name (`canvas_move`, …).
            pub const fn name(self) -> &'static str {
                match self {
                    $(Operation::$variant => $name,)*
                }
            }
        }
    };
}

operations! {
    SessionInfo => "session_info",
    GuideRead => "guide_read",
    AgentStatus => "agent_status",
    CanvasList => "canvas_list",
    CanvasSelect => "canvas_select",
    CanvasMove => "canvas_move",
    CanvasResize => "canvas_resize",
    CanvasGroup => "canvas_group",
    StickyOpen => "sticky_open",
    ArtifactOpen => "artifact_open",
    BrowserOpen => "browser_open",
    BrowserList => "browser_list",
    BrowserClaim => "browser_claim",
    BrowserTransfer => "browser_transfer",
    BrowserNavigate => "browser_navigate",
    BrowserInspect => "browser_inspect",
    BrowserClick => "browser_click",
    BrowserType => "browser_type",
    BrowserScreenshot => "browser_screenshot",
    TerminalOpen => "terminal_open",
    TerminalRead => "terminal_read",
    TerminalSubmit => "terminal_submit",
    TerminalInput => "terminal_input",
    TerminalInterrupt => "terminal_interrupt",
    TerminalExternal => "terminal_external",
    TerminalClose => "terminal_close",
    AgentLaunch => "agent_launch",
    ContextRead => "context_read",
}

impl Operation {
    /// Looks an operation up by its wire name.
    pub fn from_name(name: &str) -> Option<Operation> {
        Operation::ALL.iter().copied().find(|op| op.name() == name)
    }

    /// True for operations the server answers itself, without the project queue.
    pub const fn is_direct(self) -> bool {
        matches!(self, Operation::SessionInfo | Operation::GuideRead | Operation::AgentStatus)
    }

    /// True for `browser_*` operations, which need browser control enabled.
    pub fn is_browser(self) -> bool {
        self.name().starts_with("browser_")
    }

    /// True for operations the app fulfils through the canvas owner, which
    /// requires the project tab to be visible.
    pub const fn is_canvas(self) -> bool {
        matches!(
            self,
            Operation::CanvasList
                | Operation::CanvasSelect
                | Operation::CanvasMove
                | Operation::CanvasResize
                | Operation::CanvasGroup
        )
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
