//! The ids CDP hands out, each a type of its own so one is never passed as another.

use serde::{Deserialize, Serialize};

macro_rules! text_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The id as CDP spells it.
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }

            /// The id's text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

text_id!(
    /// A child session (flatten mode) on another target, such as an out-of-process frame.
    SessionId
);
text_id!(
    /// A handle on a JavaScript object held in the page (`Runtime.RemoteObjectId`).
    ObjectId
);
text_id!(
    /// A frame of the page (`Page.FrameId`).
    FrameId
);

/// A DOM node's id that stays valid while the node lives (`DOM.BackendNodeId`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BackendNodeId(pub u64);

/// A JavaScript execution context, such as an isolated world (`Runtime.ExecutionContextId`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ExecutionContextId(pub i64);
