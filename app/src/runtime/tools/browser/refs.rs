//! From a ref or selector an agent wrote to the element in the page: child
//! sessions opened for out-of-process frames on the way (detached when the
//! operation ends), and the errors that say why a ref leads nowhere.

use super::super::context::ToolShared;
use super::page_model::{release, NodeRef};
use super::session::{page_error, step_error, Session, GROUP};
use page_driver::{BackendNodeId, DriveError, FrameId, ObjectId, Page, SessionId};
use tool_server::ToolError;

/// A page as one operation reaches into it: the child sessions it opened
/// are detached, and what it held released, by [`Frames::close`].
pub(super) struct Frames<'a> {
    pub page: &'a dyn Page,
    pub shared: &'a ToolShared,
    /// Child sessions opened for out-of-process frames.
    attached: Vec<SessionId>,
}

impl<'a> Frames<'a> {
    /// Nothing attached yet.
    pub fn new(page: &'a dyn Page, shared: &'a ToolShared) -> Self {
        Frames { page, shared, attached: vec![] }
    }

    /// The page's own session.
    pub fn main(&self) -> Session<'a> {
        Session { page: self.page, id: None }
    }

    /// A child session on an out-of-process frame.
    pub fn attach(&mut self, frame_id: &FrameId) -> Result<SessionId, ToolError> {
        // Chromium makes the DevTools end of a frame's process when targets are listed.
        if let Err(e) = self.page.list_targets() {
            if !e.is_answer() {
                return Err(step_error(e));
            }
        }
        // Private: a CDP client of the same page never sees this session.
        let id = self.page.attach_frame(frame_id).map_err(page_error)?;
        self.attached.push(id.clone());
        Ok(id)
    }

    /// The session and remote object of a ref's element, or why there is none.
    pub fn resolve_ref(&mut self, r: &str) -> Result<(Option<SessionId>, ObjectId), ToolError> {
        let node_ref = parse_ref(r)?;
        let session = match node_ref.frame {
            None => None,
            Some(slot) => {
                let frame = self.shared.frame_id(slot).ok_or_else(|| stale_ref(r))?;
                Some(self.attach(&FrameId::new(frame)).map_err(|_| gone_ref(r))?)
            }
        };
        let s = Session { page: self.page, id: session.as_ref() };
        let object = resolve_node(s, node_ref.backend).ok_or_else(|| gone_ref(r))?;
        Ok((session, object))
    }

    /// Detaches the child sessions and lets go of what was held in the page.
    pub fn close(self) {
        for s in &self.attached {
            self.page.detach(s);
        }
        release(Session { page: self.page, id: None });
    }
}

/// A ref as the agent wrote it, parsed.
pub(super) fn parse_ref(r: &str) -> Result<NodeRef, ToolError> {
    NodeRef::parse(r).ok_or_else(|| {
        ToolError::invalid_argument(format!(
            "{r:?} is not a ref (refs look like e42 or f1e42 and come from browser_inspect)"
        ))
    })
}

/// A ref whose frame this app never saw.
fn stale_ref(r: &str) -> ToolError {
    ToolError::not_found(format!("no element with ref {r} (refs come from browser_inspect on the current page)"))
}

/// A ref whose element is no longer in the page.
pub(super) fn gone_ref(r: &str) -> ToolError {
    ToolError::not_found(format!(
        "no element with ref {r}: it was removed or the page changed (refs come from browser_inspect on the current page; inspect again)"
    ))
}

/// A remote object for a backend node id, if the node still exists.
pub(super) fn resolve_node(s: Session, backend: BackendNodeId) -> Option<ObjectId> {
    s.page.resolve_node(s.id, backend, GROUP).ok()?.object_id
}

/// The first element of the top document matching `selector`, as a remote object.
pub(super) fn query_selector(main: Session, selector: &str) -> Result<ObjectId, ToolError> {
    let expression = format!("document.querySelector({})", serde_json::Value::String(selector.to_owned()));
    match main.page.evaluate_object(main.id, &expression, None, GROUP) {
        Err(DriveError::Script(_)) => Err(ToolError::page_error(format!("invalid selector: {selector}"))),
        Err(e) => Err(step_error(e)),
        Ok(found) => {
            found.object_id.ok_or_else(|| ToolError::page_error(format!("selector matched nothing: {selector}")))
        }
    }
}
