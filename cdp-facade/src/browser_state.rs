//! [`BrowserState`]: the emulated browser's per-client state (discovery,
//! auto-attach, known targets, the root command queue) and [`Internal`], the
//! background completions fed back to the router. Data only: the router owns
//! it, `browser.rs` runs the commands on it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Instant;

use serde_json::value::RawValue;

use crate::guest::{ContextId, GuestError, GuestId};
use crate::guest_call::{CallError, PageInfo};
use crate::protocol::ClientCommand;

/// Completion of background work, fed back into the router by the socket loop.
#[derive(Debug)]
pub(crate) enum Internal {
    /// A guest described itself (or failed to).
    Learned { guest: GuestId, channel_key: usize, result: Result<PageInfo, CallError> },
    /// A browser-level command forwarded to a guest finished.
    Forwarded { id: i64, session: Option<String>, result: Result<Box<RawValue>, CallError> },
    /// `Guests::open` finished (for `Target.createTarget`).
    Opened { id: i64, session: Option<String>, result: Result<GuestId, GuestError> },
    /// `Guests::close` finished (for `Target.closeTarget`).
    Closed { id: i64, session: Option<String>, guest: GuestId, result: Result<(), GuestError> },
    /// `Guests::resize_window` finished (for `Browser.setWindowBounds` / `setContentsSize`).
    Resized { id: i64, session: Option<String>, result: Result<(), GuestError> },
    /// `Guests::activate` finished (for `Target.activateTarget` / `Page.bringToFront`).
    Activated { id: i64, session: Option<String> },
    /// `Guests::create_context` finished (for `Target.createBrowserContext`).
    ContextCreated { id: i64, session: Option<String>, result: Result<ContextId, GuestError>, dispose_on_detach: bool },
    /// `Guests::set_permissions` or `reset_permissions` finished (for `Browser.*Permission*`).
    PermissionsSet { id: i64, session: Option<String>, result: Result<(), GuestError> },
    /// `Guests::dispose_context` finished; `pages` were its pages before.
    ContextDisposed {
        id: i64,
        session: Option<String>,
        context: ContextId,
        pages: Vec<GuestId>,
        result: Result<(), GuestError>,
    },
}

/// A browser-level command and where its reply goes (root, or a browser/page session).
#[derive(Debug)]
pub(crate) struct RootCommand {
    /// The command.
    pub(crate) cmd: ClientCommand,
    /// Where its reply goes.
    pub(crate) session: Option<String>,
}

/// What the root queue is waiting for.
#[derive(Debug)]
pub(crate) enum RootWait {
    /// Target infos of live guests (the front command is re-run when they are in).
    Targets,
    /// Background I/O whose [`Internal`] completion finishes the command.
    Io,
    /// A created guest's target info, to finish `Target.createTarget`.
    Created { id: i64, session: Option<String>, guest: GuestId },
}

/// A guest page whose real target info is known.
#[derive(Debug, Clone)]
pub(crate) struct Known {
    /// Its target info.
    pub(crate) info: PageInfo,
    /// The `channel_key` of the channel it was learned through.
    pub(crate) channel_key: usize,
}

/// Browser-level state of one client connection.
#[derive(Debug, Default)]
pub(crate) struct BrowserState {
    /// `Target.setAutoAttach` is on for the browser.
    pub(crate) auto_attach: bool,
    /// Browser session that turned auto-attach on (`None`: the root).
    pub(crate) auto_attach_owner: Option<String>,
    /// `Target.setDiscoverTargets` is on.
    pub(crate) discover: bool,
    /// Guests whose real target info is known.
    pub(crate) known: HashMap<GuestId, Known>,
    /// Guests being asked for their target info.
    pub(crate) probing: HashSet<GuestId>,
    /// When a guest last failed to describe itself.
    pub(crate) probe_failed: HashMap<GuestId, Instant>,
    /// Guests the client was told about with `targetCreated`.
    pub(crate) announced: HashSet<GuestId>,
    /// Guests auto-attached once (not re-attached if the client detaches them).
    pub(crate) auto_attached: HashSet<GuestId>,
    /// Guests closed through `Target.closeTarget` that may still linger in `Guests::list`.
    pub(crate) closed: HashSet<GuestId>,
    /// Guests whose renderer is dead.
    pub(crate) crashed: HashSet<GuestId>,
    /// Browser-level commands, run one at a time in order.
    pub(crate) queue: VecDeque<RootCommand>,
    /// What the front command waits for, if anything.
    pub(crate) wait: Option<RootWait>,
    /// Contexts this client made with `disposeOnDetach`: they end when it leaves.
    pub(crate) dispose_on_detach: Vec<ContextId>,
    /// What this client set of site permissions (reset when it leaves).
    pub(crate) permissions: crate::permissions::ClientPermissions,
    /// The service and shared workers the client sees.
    pub(crate) workers: crate::workers::Workers,
}

impl BrowserState {
    /// Whether the client discovers targets and knows this guest.
    pub(crate) fn discovers(&self, guest: &GuestId) -> bool {
        self.discover && self.announced.contains(guest)
    }

    /// The known target info of a guest.
    pub(crate) fn known_info(&self, guest: &GuestId) -> Option<PageInfo> {
        self.known.get(guest).map(|k| k.info.clone())
    }

    /// Keeps a crashed guest out until its renderer is back.
    pub(crate) fn mark_crashed(&mut self, guest: &GuestId) {
        self.crashed.insert(guest.clone());
    }

    /// Whether the guest is closed or crashed (kept out of the target list).
    pub(crate) fn excluded(&self, guest: &GuestId) -> bool {
        self.closed.contains(guest) || self.crashed.contains(guest)
    }
}
