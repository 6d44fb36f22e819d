//! [`ToolError`]: why an operation failed, as a stable machine-readable
//! [`ErrorCode`] plus the message the agent reads. HTTP error bodies carry both
//! (`{ok:false, error, code}`).

use serde::Serialize;
use std::fmt;
use thiserror::Error;

macro_rules! codes {
    ($($(#[$meta:meta])* $variant:ident => $wire:literal,)*) => {
        /// The kind of a failure; its wire name is the `code` of an error body.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
        pub enum ErrorCode {
            $($(#[$meta])* #[serde(rename = $wire)] $variant,)*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The snake_case wire name.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $wire,)*
                }
            }
        }
    };
}

codes! {
    /// The request is not `{operation, args}` JSON, names no operation, or its body is unreadable.
    InvalidRequest => "invalid_request",
    /// An argument is missing, unknown, of the wrong type or out of bounds.
    InvalidArgument => "invalid_argument",
    /// The bearer token is unknown or revoked.
    Unauthorized => "unauthorized",
    /// The session's project or agent node is gone.
    InvalidSession => "invalid_session",
    /// A browser operation while "Enable agent browser control" is off.
    BrowserDisabled => "browser_disabled",
    /// The named node, file or element does not exist.
    NotFound => "not_found",
    /// The operation is not allowed (ownership, project visibility, node kind, path policy…).
    Refused => "refused",
    /// The app cannot take more operations right now; retry shortly.
    Busy => "busy",
    /// The operation did not finish in time.
    Timeout => "timeout",
    /// The page (a script, DevTools, a load) failed.
    PageError => "page_error",
    /// The request or file kind is not supported.
    Unsupported => "unsupported",
    /// The operation ended without a result (the app stopped or a task failed).
    Interrupted => "interrupted",
    /// Anything else the app could not do (an I/O error, a missing program…).
    Failed => "failed",
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An operation's failure: a kind and the message the agent reads verbatim
/// (it must not contain secrets).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct ToolError {
    /// What kind of failure.
    pub code: ErrorCode,
    /// The text for the agent.
    pub message: String,
}

impl ToolError {
    /// An error of `code` saying `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }

    /// [`ErrorCode::InvalidArgument`].
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, message)
    }

    /// [`ErrorCode::NotFound`].
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    /// [`ErrorCode::Refused`].
    pub fn refused(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Refused, message)
    }

    /// [`ErrorCode::Busy`].
    pub fn busy(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Busy, message)
    }

    /// [`ErrorCode::Timeout`].
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Timeout, message)
    }

    /// [`ErrorCode::PageError`].
    pub fn page_error(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::PageError, message)
    }

    /// [`ErrorCode::Unsupported`].
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unsupported, message)
    }

    /// [`ErrorCode::Interrupted`].
    pub fn interrupted(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Interrupted, message)
    }

    /// [`ErrorCode::Failed`].
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Failed, message)
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_snake_case_and_serialize_as_their_name() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            let name = code.as_str();
            assert!(seen.insert(name), "duplicate {name}");
            assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{name}");
            assert_eq!(serde_json::to_value(code).unwrap(), serde_json::json!(name));
        }
        let e = ToolError::busy("try again");
        assert_eq!(e.to_string(), "try again");
        assert_eq!(e.code, ErrorCode::Busy);
    }
}
