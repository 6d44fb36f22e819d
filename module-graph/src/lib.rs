//! module-graph: which file of a Rust crate imports which, read from the
//! source as the compiler would name things, so a test can hold a crate to
//! "no two files import each other, directly or round a circle" and a crate
//! doc's import table to the code.
//!
//! An import is any path that names an item of another file: a `use` line,
//! and equally an inline `crate::…`, `super::…` or `self::…` path in a
//! signature, an expression or a macro's tokens, or a path through a name a
//! `use` bound (`use crate::screen; … screen::Screen`). A path through a
//! re-export (`pub use child::Item` in a parent, or a glob) is followed to
//! the file that defines the item, so importing `crate::Screen` from a file
//! beside `screen.rs` counts as importing `screen.rs`, not `lib.rs`. Declaring
//! a module (`mod child;`) is not an import. Attributes, doc comments and
//! `pub(in …)` visibilities are not read, nor is code compiled only for
//! tests (`#[cfg(test)]`): a test may use any file's helpers.
//!
//! Why by hand: the tools that draw module graphs (cargo-modules) need
//! rust-analyzer's whole analysis and a cargo subcommand; this needs only
//! names, which `syn` gives.
//!
//! Modules and what each imports of the crate (checked by this crate's own
//! test, as every crate's table is):
//!
//! ```text
//! claims → graph
//! graph  → error, syntax, tree
//! tree   → error, syntax
//! leaves: error, syntax
//! ```

#![warn(missing_docs)]

mod claims;
mod error;
mod graph;
mod syntax;
mod tree;

pub use claims::{ClaimMismatch, ImportTable};
pub use error::GraphError;
pub use graph::{Circle, CrateGraph, Import};

/// The crate roots of the package at `package_dir`: `src/lib.rs`,
/// `src/main.rs` and each `src/bin/*.rs` (or `src/bin/*/main.rs`) that exists.
pub fn crate_roots(package_dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let src = package_dir.join("src");
    let mut roots: Vec<_> = ["lib.rs", "main.rs"].iter().map(|f| src.join(f)).filter(|p| p.is_file()).collect();
    if let Ok(entries) = std::fs::read_dir(src.join("bin")) {
        let mut bins: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter_map(|p| {
                if p.extension().is_some_and(|e| e == "rs") && p.is_file() {
                    Some(p)
                } else {
                    let main = p.join("main.rs");
                    main.is_file().then_some(main)
                }
            })
            .collect();
        bins.sort();
        roots.extend(bins);
    }
    roots
}
