//! Why a crate's graph could not be read.

use std::path::PathBuf;

/// A crate's files could not be read as a module tree.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// A source file could not be read.
    #[error("could not read {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// A source file is not valid Rust.
    #[error("could not parse {path}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Cause.
        #[source]
        source: syn::Error,
    },
    /// `mod NAME;` names no file where the compiler would look.
    #[error("{declared_in} declares `mod {name};` but neither {} nor {} exists", .candidates[0].display(), .candidates[1].display())]
    MissingModule {
        /// The file with the declaration.
        declared_in: PathBuf,
        /// The module's name.
        name: String,
        /// Where it was looked for.
        candidates: [PathBuf; 2],
    },
}
