//! Errors of starting and running the two servers.

use std::io;

use local_guard::RandomError;

/// Why the facade or the agent server could not start (or write its discovery file).
#[derive(Debug, thiserror::Error)]
pub enum FacadeError {
    /// Binding the loopback listener failed.
    #[error("could not listen on 127.0.0.1: {0}")]
    Bind(#[source] io::Error),
    /// The async runtime or its thread could not be created.
    #[error("could not start the server thread: {0}")]
    Runtime(#[source] io::Error),
    /// OS randomness was unavailable.
    #[error(transparent)]
    Randomness(#[from] RandomError),
    /// The discovery file could not be written.
    #[error("could not write {path}: {source}")]
    DiscoveryFile {
        /// The file concerned.
        path: String,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
    /// The discovery file path is a symbolic link (refused: it could redirect the token elsewhere).
    #[error("refusing to write {0}: it is a symbolic link")]
    SymlinkRefused(String),
}
