//! What page operations take and give back, as CDP's types say them: remote
//! objects, frames, node boxes, navigation and lifecycle, screenshots.

use crate::ids::{BackendNodeId, FrameId, ObjectId};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JavaScript value as the page hands it over (`Runtime.RemoteObject`):
/// its value when asked for by value, else a handle on it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteObject {
    /// `object`, `string`, `undefined`…
    #[serde(rename = "type", default)]
    pub kind: String,
    /// `node`, `array`, `null`… for objects.
    #[serde(default)]
    pub subtype: Option<String>,
    /// The value (primitives, or anything returned by value).
    #[serde(default)]
    pub value: Option<Value>,
    /// The page's description of it.
    #[serde(default)]
    pub description: Option<String>,
    /// The handle on an object kept in the page.
    #[serde(default)]
    pub object_id: Option<ObjectId>,
}

/// One own property of an object (`Runtime.PropertyDescriptor`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PropertyDescriptor {
    /// The property's name (an array's index as text).
    pub name: String,
    /// Its value, when it is a data property.
    #[serde(default)]
    pub value: Option<RemoteObject>,
}

/// A function to run in the page with `this` bound to an object.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionCall<'a> {
    /// The object `this` is.
    pub object: &'a ObjectId,
    /// The function's source, `function (args) { … }`.
    pub declaration: &'a str,
    /// Its one argument.
    pub args: Value,
    /// Whether the result comes back by value (else as a handle).
    pub by_value: bool,
    /// The object group handles made by the call are released with.
    pub group: &'a str,
}

/// What `DOM.describeNode` says of a node that this crate reads.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeDescription {
    /// The node's backend id.
    pub backend_node_id: BackendNodeId,
    /// The frame a frame owner (`<iframe>`) shows.
    #[serde(default)]
    pub frame_id: Option<FrameId>,
}

/// One frame of a frame tree.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FrameInfo {
    /// The frame's id.
    pub id: FrameId,
    /// Its document's address.
    #[serde(default)]
    pub url: String,
}

/// A session's frames (`Page.FrameTree`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrameTree {
    /// This frame.
    pub frame: FrameInfo,
    /// Its child frames (in this session).
    #[serde(default)]
    pub child_frames: Vec<FrameTree>,
}

impl FrameTree {
    /// Every frame's id, the root first, depth first.
    pub fn ids(&self) -> Vec<FrameId> {
        let mut out = vec![];
        self.walk(&mut out);
        out
    }

    fn walk(&self, out: &mut Vec<FrameId>) {
        out.push(self.frame.id.clone());
        for child in &self.child_frames {
            child.walk(out);
        }
    }
}

/// Four corners of a box, as eight numbers `x1 y1 … x4 y4` (`DOM.Quad`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct Quad(pub Vec<f64>);

impl Quad {
    /// The mean of the four corners; none unless the quad has its eight numbers.
    pub fn centre(&self) -> Option<(f64, f64)> {
        let q = &self.0;
        (q.len() == 8).then(|| ((q[0] + q[2] + q[4] + q[6]) / 4.0, (q[1] + q[3] + q[5] + q[7]) / 4.0))
    }

    /// The first corner (top left for an untransformed box); 0 for what is missing.
    pub fn origin(&self) -> (f64, f64) {
        (self.0.first().copied().unwrap_or(0.0), self.0.get(1).copied().unwrap_or(0.0))
    }
}

/// A node's boxes (`DOM.BoxModel`): the content box is what is read.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BoxModel {
    /// The content box.
    pub content: Quad,
}

/// What `Page.navigate` answers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Navigation {
    /// The navigated frame.
    pub frame_id: FrameId,
    /// The new document's loader (none for a same-document navigation).
    #[serde(default)]
    pub loader_id: Option<String>,
    /// Chromium's net error when the load failed at once.
    #[serde(default)]
    pub error_text: Option<String>,
}

/// A step of a frame's life (`Page.lifecycleEvent`: `load`, `networkIdle`…).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleEvent {
    /// The step's name.
    pub name: String,
    /// The loader of the document it is about.
    #[serde(default)]
    pub loader_id: Option<String>,
}

/// A size in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Extent {
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

/// What `Page.getLayoutMetrics` says of the page that this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LayoutMetrics {
    /// The whole scrollable content, in CSS pixels.
    #[serde(default)]
    pub css_content_size: Option<Extent>,
}

/// An image format a screenshot is encoded in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    /// PNG.
    #[default]
    Png,
    /// JPEG.
    Jpeg,
    /// WebP.
    Webp,
}

/// A region of the page to capture, in CSS pixels of the document.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Clip {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
    /// Device pixels per CSS pixel of the image.
    pub scale: f64,
}

/// How a screenshot is taken (`Page.captureScreenshot`'s parameters).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScreenshotOptions {
    /// The image format.
    pub format: ImageFormat,
    /// Only this region (else the viewport).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clip: Option<Clip>,
    /// From the compositor's surface rather than the view.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_surface: Option<bool>,
    /// Beyond the viewport (a clip larger than it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture_beyond_viewport: Option<bool>,
    /// Chromium's fast encoder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optimize_for_speed: Option<bool>,
}

/// A CSS media feature to emulate (`prefers-color-scheme: dark`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MediaFeature {
    /// The feature's name.
    pub name: String,
    /// Its value.
    pub value: String,
}

/// What `Browser.getVersion` says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserVersion {
    /// The protocol's version.
    #[serde(default)]
    pub protocol_version: String,
    /// Product name and version (`Chrome/132.0…`).
    #[serde(default)]
    pub product: String,
    /// The product's revision.
    #[serde(default)]
    pub revision: String,
    /// The user agent.
    #[serde(default)]
    pub user_agent: String,
    /// V8's version.
    #[serde(default)]
    pub js_version: String,
}
