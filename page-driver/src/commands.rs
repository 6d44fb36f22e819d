//! The wire form of each command: its parameters as a struct, the method it
//! is sent as and the shape of its reply. Crate-private: callers see the
//! typed operations of [`Page`](crate::Page).

use crate::error::ScriptError;
use crate::ids::{BackendNodeId, ExecutionContextId, FrameId, ObjectId};
use crate::input::{KeyEvent, MouseEvent};
use crate::method::Method;
use crate::values::{
    BoxModel, BrowserVersion, LayoutMetrics, MediaFeature, Navigation, NodeDescription, PropertyDescriptor, Quad,
    RemoteObject, ScreenshotOptions,
};
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A command: its parameters serialise as CDP's `params`.
pub(crate) trait Command: Serialize {
    /// The method it is sent as.
    const METHOD: Method;
    /// The shape of its `result`.
    type Reply: DeserializeOwned;
}

/// A command whose reply carries nothing read.
type Nothing = IgnoredAny;

/// Parameters of `Runtime.evaluate`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Evaluate<'a> {
    pub expression: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_id: Option<ExecutionContextId>,
    pub return_by_value: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub await_promise: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_group: Option<&'a str>,
}

impl Command for Evaluate<'_> {
    const METHOD: Method = Method::Evaluate;
    type Reply = ScriptReply;
}

/// A script's reply: its result, or the exception it threw.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ScriptReply {
    #[serde(default)]
    result: RemoteObject,
    #[serde(default)]
    exception_details: Option<ExceptionDetails>,
}

impl ScriptReply {
    /// The result, or the exception as the one [`ScriptError`].
    pub fn into_result(self) -> Result<RemoteObject, ScriptError> {
        match self.exception_details {
            Some(ex) => Err(ex.into()),
            None => Ok(self.result),
        }
    }
}

/// `Runtime.ExceptionDetails`, the part read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExceptionDetails {
    #[serde(default)]
    text: String,
    #[serde(default)]
    line_number: i64,
    #[serde(default)]
    column_number: i64,
    #[serde(default)]
    exception: Option<RemoteObject>,
}

impl From<ExceptionDetails> for ScriptError {
    fn from(ex: ExceptionDetails) -> Self {
        let (description, thrown) = ex.exception.map_or((None, None), |e| (e.description, e.value));
        ScriptError { text: ex.text, line: ex.line_number, column: ex.column_number, description, thrown }
    }
}

/// One argument of a function call.
#[derive(Serialize)]
pub(crate) struct CallArgument {
    pub value: Value,
}

/// Parameters of `Runtime.callFunctionOn`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CallFunctionOn<'a> {
    pub object_id: &'a ObjectId,
    pub function_declaration: &'a str,
    pub arguments: [CallArgument; 1],
    pub return_by_value: bool,
    pub object_group: &'a str,
}

impl Command for CallFunctionOn<'_> {
    const METHOD: Method = Method::CallFunctionOn;
    type Reply = ScriptReply;
}

/// Parameters of `Runtime.getProperties`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetProperties<'a> {
    pub object_id: &'a ObjectId,
    pub own_properties: bool,
}

/// `Runtime.getProperties`'s reply.
#[derive(Deserialize)]
pub(crate) struct Properties {
    #[serde(default)]
    pub result: Vec<PropertyDescriptor>,
}

impl Command for GetProperties<'_> {
    const METHOD: Method = Method::GetProperties;
    type Reply = Properties;
}

/// Parameters of `Runtime.releaseObjectGroup`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReleaseObjectGroup<'a> {
    pub object_group: &'a str,
}

impl Command for ReleaseObjectGroup<'_> {
    const METHOD: Method = Method::ReleaseObjectGroup;
    type Reply = Nothing;
}

/// Commands that take no parameters (sent as `{}`).
macro_rules! no_params {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Serialize)]
        pub(crate) struct $name {}
    )*};
}

no_params! {
    /// `Page.getFrameTree`.
    GetFrameTree;
    /// `Page.enable`.
    EnablePage;
    /// `Page.getLayoutMetrics`.
    GetLayoutMetrics;
    /// `Target.getTargets`.
    GetTargets;
    /// `Browser.getVersion`.
    GetVersion;
}

/// `Page.getFrameTree`'s reply.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FrameTreeReply {
    pub frame_tree: crate::values::FrameTree,
}

impl Command for GetFrameTree {
    const METHOD: Method = Method::GetFrameTree;
    type Reply = FrameTreeReply;
}

impl Command for EnablePage {
    const METHOD: Method = Method::EnablePage;
    type Reply = Nothing;
}

impl Command for GetLayoutMetrics {
    const METHOD: Method = Method::GetLayoutMetrics;
    type Reply = LayoutMetrics;
}

impl Command for GetTargets {
    const METHOD: Method = Method::GetTargets;
    type Reply = Nothing;
}

impl Command for GetVersion {
    const METHOD: Method = Method::GetVersion;
    type Reply = BrowserVersion;
}

/// Parameters of `Page.createIsolatedWorld`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateIsolatedWorld<'a> {
    pub frame_id: &'a FrameId,
    pub world_name: &'a str,
}

/// `Page.createIsolatedWorld`'s reply.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct IsolatedWorld {
    pub execution_context_id: ExecutionContextId,
}

impl Command for CreateIsolatedWorld<'_> {
    const METHOD: Method = Method::CreateIsolatedWorld;
    type Reply = IsolatedWorld;
}

/// Parameters of `Page.setLifecycleEventsEnabled`.
#[derive(Serialize)]
pub(crate) struct SetLifecycleEventsEnabled {
    pub enabled: bool,
}

impl Command for SetLifecycleEventsEnabled {
    const METHOD: Method = Method::SetLifecycleEventsEnabled;
    type Reply = Nothing;
}

/// Parameters of `Page.navigate`.
#[derive(Serialize)]
pub(crate) struct Navigate<'a> {
    pub url: &'a str,
}

impl Command for Navigate<'_> {
    const METHOD: Method = Method::Navigate;
    type Reply = Navigation;
}

/// Parameters of `Page.captureScreenshot`.
#[derive(Serialize)]
#[serde(transparent)]
pub(crate) struct CaptureScreenshot<'a>(pub &'a ScreenshotOptions);

/// `Page.captureScreenshot`'s reply: the image, base64.
#[derive(Deserialize)]
pub(crate) struct ScreenshotData {
    pub data: String,
}

impl Command for CaptureScreenshot<'_> {
    const METHOD: Method = Method::CaptureScreenshot;
    type Reply = ScreenshotData;
}

/// Parameters of `Emulation.setScrollbarsHidden`.
#[derive(Serialize)]
pub(crate) struct SetScrollbarsHidden {
    pub hidden: bool,
}

impl Command for SetScrollbarsHidden {
    const METHOD: Method = Method::SetScrollbarsHidden;
    type Reply = Nothing;
}

/// Parameters of `Emulation.setEmulatedMedia`.
#[derive(Serialize)]
pub(crate) struct SetEmulatedMedia<'a> {
    pub features: &'a [MediaFeature],
}

impl Command for SetEmulatedMedia<'_> {
    const METHOD: Method = Method::SetEmulatedMedia;
    type Reply = Nothing;
}

/// Parameters of `DOM.describeNode`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DescribeNode<'a> {
    pub object_id: &'a ObjectId,
}

/// Parameters of `DOM.getContentQuads`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetContentQuads<'a> {
    pub object_id: &'a ObjectId,
}

/// `DOM.describeNode`'s reply.
#[derive(Deserialize)]
pub(crate) struct Described {
    pub node: NodeDescription,
}

impl Command for DescribeNode<'_> {
    const METHOD: Method = Method::DescribeNode;
    type Reply = Described;
}

/// `DOM.getContentQuads`'s reply.
#[derive(Deserialize)]
pub(crate) struct Quads {
    #[serde(default)]
    pub quads: Vec<Quad>,
}

impl Command for GetContentQuads<'_> {
    const METHOD: Method = Method::GetContentQuads;
    type Reply = Quads;
}

/// Parameters of `DOM.resolveNode`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResolveNode<'a> {
    pub backend_node_id: BackendNodeId,
    pub object_group: &'a str,
}

/// `DOM.resolveNode`'s reply.
#[derive(Deserialize)]
pub(crate) struct Resolved {
    pub object: RemoteObject,
}

impl Command for ResolveNode<'_> {
    const METHOD: Method = Method::ResolveNode;
    type Reply = Resolved;
}

/// Parameters of `DOM.getFrameOwner`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetFrameOwner<'a> {
    pub frame_id: &'a FrameId,
}

/// `DOM.getFrameOwner`'s reply.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FrameOwner {
    pub backend_node_id: BackendNodeId,
}

impl Command for GetFrameOwner<'_> {
    const METHOD: Method = Method::GetFrameOwner;
    type Reply = FrameOwner;
}

/// Parameters of `DOM.getBoxModel`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetBoxModel {
    pub backend_node_id: BackendNodeId,
}

/// `DOM.getBoxModel`'s reply.
#[derive(Deserialize)]
pub(crate) struct BoxModelReply {
    pub model: BoxModel,
}

impl Command for GetBoxModel {
    const METHOD: Method = Method::GetBoxModel;
    type Reply = BoxModelReply;
}

impl Command for MouseEvent {
    const METHOD: Method = Method::DispatchMouseEvent;
    type Reply = Nothing;
}

impl Command for KeyEvent {
    const METHOD: Method = Method::DispatchKeyEvent;
    type Reply = Nothing;
}

/// Parameters of `Input.insertText`.
#[derive(Serialize)]
pub(crate) struct InsertText<'a> {
    pub text: &'a str,
}

impl Command for InsertText<'_> {
    const METHOD: Method = Method::InsertText;
    type Reply = Nothing;
}
