//! [`Page`]: every typed operation the app drives a page with, so a test can
//! fake a page without speaking CDP; [`PageExt`] adds the generic ones.

use crate::error::DriveError;
use crate::ids::{BackendNodeId, ExecutionContextId, FrameId, ObjectId, SessionId};
use crate::input::Input;
use crate::lifecycle::Lifecycle;
use crate::method::Method;
use crate::pending::Pending;
use crate::values::{
    BoxModel, BrowserVersion, FrameTree, FunctionCall, LayoutMetrics, MediaFeature, Navigation, NodeDescription,
    PropertyDescriptor, Quad, RemoteObject, ScreenshotOptions,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// One page, driven by typed operations. `session` picks a child session
/// (an out-of-process frame, from [`attach_frame`](Page::attach_frame));
/// `None` is the page's own.
pub trait Page: Send + Sync {
    /// Runs `expression` in the page, awaiting a promise, and returns its value (`null` for `undefined`).
    fn evaluate_value(&self, expression: &str) -> Result<Value, DriveError>;
    /// The same without waiting (for a loop that must keep doing its own work meanwhile).
    fn evaluate_later(&self, expression: &str) -> Result<Pending<Value>, DriveError>;
    /// Runs `expression` (in `context`, else the frame's main world) and
    /// keeps its result in the page under `group`: a handle for an object.
    fn evaluate_object(
        &self,
        session: Option<&SessionId>,
        expression: &str,
        context: Option<ExecutionContextId>,
        group: &str,
    ) -> Result<RemoteObject, DriveError>;
    /// Calls a function with `this` bound to an object.
    fn call_function_on(
        &self,
        session: Option<&SessionId>,
        call: &FunctionCall<'_>,
    ) -> Result<RemoteObject, DriveError>;
    /// An object's own properties.
    fn properties(&self, session: Option<&SessionId>, object: &ObjectId)
        -> Result<Vec<PropertyDescriptor>, DriveError>;
    /// Lets go of every handle made under `group`.
    fn release_object_group(&self, session: Option<&SessionId>, group: &str) -> Result<(), DriveError>;

    /// The session's frames.
    fn frame_tree(&self, session: Option<&SessionId>) -> Result<FrameTree, DriveError>;
    /// A JavaScript world of the app's own in `frame`, apart from the page's scripts.
    fn create_isolated_world(
        &self,
        session: Option<&SessionId>,
        frame: &FrameId,
        world: &str,
    ) -> Result<ExecutionContextId, DriveError>;
    /// Turns the page domain's events on.
    fn enable_page_events(&self) -> Result<(), DriveError>;
    /// Turns lifecycle events on or off.
    fn set_lifecycle_events(&self, enabled: bool) -> Result<(), DriveError>;
    /// The page's lifecycle events from now on.
    fn lifecycle(&self) -> Lifecycle;
    /// Navigates the main frame.
    fn navigate(&self, url: &str) -> Result<Navigation, DriveError>;
    /// The page's layout sizes.
    fn layout_metrics(&self) -> Result<LayoutMetrics, DriveError>;
    /// A screenshot, decoded from its base64.
    fn screenshot(&self, options: &ScreenshotOptions) -> Result<Vec<u8>, DriveError>;

    /// Hides or shows scrollbars (screenshots without them, as headless Chromium's).
    fn set_scrollbars_hidden(&self, hidden: bool) -> Result<(), DriveError>;
    /// Emulates CSS media features.
    fn set_emulated_media(&self, features: &[MediaFeature]) -> Result<(), DriveError>;

    /// What a node is, asked without waiting (to ask about many at once).
    fn describe_node(
        &self,
        session: Option<&SessionId>,
        object: &ObjectId,
    ) -> Result<Pending<NodeDescription>, DriveError>;
    /// A handle on a node, by its backend id, kept under `group`.
    fn resolve_node(
        &self,
        session: Option<&SessionId>,
        node: BackendNodeId,
        group: &str,
    ) -> Result<RemoteObject, DriveError>;
    /// The boxes of a node's content in the viewport.
    fn content_quads(&self, session: Option<&SessionId>, object: &ObjectId) -> Result<Vec<Quad>, DriveError>;
    /// The element that holds `frame` (its `<iframe>`).
    fn frame_owner(&self, session: Option<&SessionId>, frame: &FrameId) -> Result<BackendNodeId, DriveError>;
    /// A node's boxes.
    fn box_model(&self, session: Option<&SessionId>, node: BackendNodeId) -> Result<BoxModel, DriveError>;

    /// Sends one input command without waiting for it to be handled.
    fn dispatch(&self, input: &Input) -> Result<Pending<()>, DriveError>;

    /// Lists the browser's targets (which makes Chromium set up an
    /// out-of-process frame's DevTools end); only whether it worked is kept.
    fn list_targets(&self) -> Result<(), DriveError>;
    /// A child session on an out-of-process frame, hidden from other clients of the page.
    fn attach_frame(&self, frame: &FrameId) -> Result<SessionId, DriveError>;
    /// Ends a session of [`attach_frame`](Page::attach_frame).
    fn detach(&self, session: &SessionId);
    /// Whether the page's renderer died.
    fn crashed(&self) -> bool;
    /// The browser's product, revision and user agent.
    fn browser_version(&self) -> Result<BrowserVersion, DriveError>;
}

/// The generic operations, for every [`Page`] (a `dyn Page` too).
pub trait PageExt: Page {
    /// Runs `expression`, awaiting a promise, and reads its value as `T`.
    fn evaluate<T: DeserializeOwned>(&self, expression: &str) -> Result<T, DriveError> {
        from_value(Method::Evaluate, self.evaluate_value(expression)?)
    }

    /// Calls `declaration` with `this` = `object` and one argument, and reads its value as `T`.
    fn call_function<T: DeserializeOwned>(
        &self,
        session: Option<&SessionId>,
        object: &ObjectId,
        declaration: &str,
        args: &impl Serialize,
        group: &str,
    ) -> Result<T, DriveError> {
        let args = serde_json::to_value(args)
            .map_err(|source| DriveError::Encode { method: Method::CallFunctionOn, source })?;
        let call = FunctionCall { object, declaration, args, by_value: true, group };
        let value = self.call_function_on(session, &call)?.value.unwrap_or(Value::Null);
        from_value(Method::CallFunctionOn, value)
    }
}

impl<P: Page + ?Sized> PageExt for P {}

/// Reads a reply's value as `T`.
fn from_value<T: DeserializeOwned>(method: Method, value: Value) -> Result<T, DriveError> {
    serde_json::from_value(value).map_err(|source| DriveError::Decode { method, source })
}
