//! page-driver: the wire format of page-level CDP, and nothing else. It owns
//! how the app drives one page — evaluate a script ([`PageExt::evaluate`]),
//! call a function on an object, read DOM nodes, frames and boxes, dispatch
//! mouse and key input, take screenshots, navigate and follow the load — as
//! typed operations of one trait, [`Page`], with one [`ScriptError`] for a
//! page's exception and [`DriveError`] for everything else. [`CdpPage`]
//! speaks them as CDP over a [`Transport`] (send a method with its
//! parameters, get its result or the protocol's error, within a timeout),
//! which the app implements over its DevTools channel; tests fake a page by
//! implementing [`Page`], or script a [`Transport`]. It must not know
//! Chromium, CEF, the app's pages or what their scripts say.
//!
//! ```text
//! cdp_page → commands, error, ids, input, lifecycle, page, pending, transport, values
//! commands → error, ids, input, method, values
//! error → method
//! lifecycle → error, transport, values
//! page → error, ids, input, lifecycle, method, pending, values
//! pending → error, method, transport
//! transport → error, ids, method
//! values → ids
//! leaves: ids, input, method
//! ```

#![warn(missing_docs)]

mod cdp_page;
mod commands;
mod error;
mod ids;
mod input;
mod lifecycle;
mod method;
mod page;
mod pending;
mod transport;
mod values;

pub use cdp_page::{CdpPage, DEFAULT_TIMEOUT};
pub use error::{CdpError, DriveError, ScriptError, TransportError};
pub use ids::{BackendNodeId, ExecutionContextId, FrameId, ObjectId, SessionId};
pub use input::{Input, KeyEvent, KeyEventType, MouseButton, MouseEvent, MouseEventType};
pub use lifecycle::Lifecycle;
pub use method::Method;
pub use page::{Page, PageExt};
pub use pending::Pending;
pub use transport::{Answer, EventStream, InFlight, RawEvent, Transport};
pub use values::{
    BoxModel, BrowserVersion, Clip, Extent, FrameInfo, FrameTree, FunctionCall, ImageFormat, LayoutMetrics,
    LifecycleEvent, MediaFeature, Navigation, NodeDescription, PropertyDescriptor, Quad, RemoteObject,
    ScreenshotOptions,
};

#[cfg(test)]
mod scripted;
