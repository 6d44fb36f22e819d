//! One DevTools session of a page as the browser operations read it (the
//! page's own, or a child session on an out-of-process frame), and how a
//! failure to drive the page reads to an agent.

use page_driver::{DriveError, Page, SessionId};
use tool_server::ToolError;

/// Object group of everything inspect and locate hold in the page, released at the end.
pub(super) const GROUP: &str = "termsprawl-inspect";
/// Name of the isolated world the app's page scripts run in.
pub(super) const WORLD: &str = "termsprawl";

/// A page and one of its sessions: `id` `None` is the page's own.
#[derive(Clone, Copy)]
pub(super) struct Session<'a> {
    pub page: &'a dyn Page,
    pub id: Option<&'a SessionId>,
}

/// A DevTools failure of an operation's own command (the page went away, a
/// command timed out, the protocol refused it) as the agent sees it: a
/// refusal says its code, as the DevTools channel words it.
pub(super) fn page_error(e: DriveError) -> ToolError {
    match e {
        DriveError::Protocol { method, error } => {
            ToolError::page_error(format!("{method}: {} (code {})", error.message, error.code))
        }
        e => step_error(e),
    }
}

/// A failed step of reading or driving the page, as the agent sees it.
pub(super) fn step_error(e: DriveError) -> ToolError {
    ToolError::page_error(e.to_string())
}

/// What the page answered: its value, or none when it refused (or answered
/// in a shape not asked for); a failure to reach the page is an error.
pub(super) fn answered<T>(r: Result<T, DriveError>) -> Result<Option<T>, ToolError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_answer() || matches!(e, DriveError::Decode { .. }) => Ok(None),
        Err(e) => Err(step_error(e)),
    }
}
