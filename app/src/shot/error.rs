//! Why a shot failed: each reason renders as the one line printed to stderr.

use cef_bridge::url_policy;
use page_driver::{DriveError, ScriptError};
use std::path::PathBuf;
use std::time::Duration;
use thiserror::Error;

impl From<url_policy::UrlPolicyError> for ShotError {
    fn from(e: url_policy::UrlPolicyError) -> Self {
        ShotError::Refused(e)
    }
}

/// Why a shot failed (each renders as the one-line reason printed to stderr).
#[derive(Debug, Error)]
pub enum ShotError {
    /// The URL policy refused the address.
    #[error("refused URL: {0}")]
    Refused(url_policy::UrlPolicyError),
    /// The browser engine did not start.
    #[error("browser engine: {0}")]
    Engine(#[from] cef_bridge::EngineError),
    /// The page could not be loaded (DNS, connection refused…).
    #[error("cannot load {url}: {reason}")]
    Load {
        /// The URL.
        url: String,
        /// Chromium's net error.
        reason: String,
    },
    /// A DevTools step failed.
    #[error("{0}")]
    DevTools(String),
    /// Driving the page failed (the protocol refused a step, the page went away).
    #[error(transparent)]
    Page(DriveError),
    /// The shot's own temporary files could not be set up.
    #[error("{0}")]
    Setup(String),
    /// A page script (`--js`, `--wait-for`, `--hide`, `--mask`) threw.
    #[error("{what}: {source}")]
    Script {
        /// Which step's script.
        what: String,
        /// What it threw.
        source: ScriptError,
    },
    /// Rendering a saved canvas failed.
    #[error("{0}")]
    Canvas(String),
    /// The selector matched nothing.
    #[error("selector '{0}' matched no visible element")]
    NoSuchElement(String),
    /// The overall deadline passed.
    #[error("timed out after {0:?} waiting for {1}")]
    Timeout(Duration, &'static str),
    /// Writing the PNG failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// Output path.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
}
