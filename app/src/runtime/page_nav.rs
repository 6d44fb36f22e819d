//! What a page tells its title bar: [`PageNav`], kept per browser from the
//! engine's load-state, progress and find events (never guessed: back is
//! enabled only when the engine says the history has an entry behind); and
//! the title-bar commands ([`PageAction`]) with why one was not carried out
//! ([`NavError`]). The runtime carries them out (`page_commands.rs`).

use crate::model::NodeId;
use cef_bridge::url_policy::UrlPolicyError;
use cef_bridge::{BrowserError, BrowserEvent};
use thiserror::Error;

/// What the engine last said about a page's loading and history.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PageNav {
    /// A load is under way.
    pub loading: bool,
    /// The history has an entry behind the current one.
    pub can_go_back: bool,
    /// The history has an entry ahead of the current one.
    pub can_go_forward: bool,
    /// How far the current load has come, 0.0..=1.0 (1.0 once it ended).
    pub progress: f64,
    /// The last find-in-page result, while a search is open.
    pub matches: Option<FindMatches>,
}

/// How many matches a find-in-page search found, and which one is highlighted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FindMatches {
    /// Matches on the page.
    pub count: u32,
    /// The highlighted match, 1-based (0 with none).
    pub active: u32,
}

impl PageNav {
    /// Follows one engine event about this page; true when something shown changed.
    pub fn follow(&mut self, ev: &BrowserEvent) -> bool {
        let before = *self;
        match *ev {
            BrowserEvent::LoadingStateChanged { loading, can_go_back, can_go_forward, .. } => {
                if loading && !self.loading {
                    self.progress = 0.0;
                }
                if !loading {
                    self.progress = 1.0;
                }
                self.loading = loading;
                self.can_go_back = can_go_back;
                self.can_go_forward = can_go_forward;
            }
            // A late report after the load ended must not bring the line back.
            BrowserEvent::LoadProgress { progress, .. } if self.loading => {
                self.progress = progress.clamp(0.0, 1.0);
            }
            // A result for a search already closed is stale.
            BrowserEvent::FindResult { count, active, .. } if self.matches.is_some() => {
                self.matches = Some(FindMatches { count, active });
            }
            _ => {}
        }
        *self != before
    }
}

/// A title-bar button.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageAction {
    /// One entry back in the history.
    Back,
    /// One entry forward in the history.
    Forward,
    /// Load the page again.
    Reload,
    /// Stop the load under way.
    Stop,
}

/// Why a page command was not carried out.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum NavError {
    /// The node has no live page (not a browser node, or its page is not up).
    #[error("node {0} shows no page")]
    NoPage(NodeId),
    /// The URL policy refused the address (the message says why).
    #[error("{0}")]
    Refused(#[from] UrlPolicyError),
    /// The history has no entry that way.
    #[error("no page to go {0} to")]
    NoHistory(&'static str),
    /// The engine refused (the page closed meanwhile).
    #[error("{0}")]
    Browser(#[from] BrowserError),
}
