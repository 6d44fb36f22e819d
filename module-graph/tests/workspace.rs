//! Every crate of the workspace holds to the house rule: no two files of a
//! crate import each other, directly or round a circle, and every import
//! table a module doc writes is what the code does.
//!
//! While the last circles are being taken apart, [`AT_MOST`] bounds what is
//! left per crate root: a new circle, a larger one, or a table that goes
//! stale fails; taking one apart lowers the bound (and the test says so).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use module_graph::{crate_roots, CrateGraph, ImportTable};

/// Crate root (from the workspace root) → (files in circles, stale table
/// lines) it may still have. Every root not listed may have none.
const AT_MOST: &[(&str, usize, usize)] = &[("app/src/lib.rs", 2, 0)];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

fn workspace_members(root: &Path) -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("the workspace manifest");
    let members = manifest.split("members").nth(1).and_then(|s| s.split(']').next()).expect("a members list");
    members
        .split(',')
        .map(|m| m.trim().trim_start_matches('=').trim().trim_start_matches('[').trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| root.join(m))
        .collect()
}

#[test]
fn no_crate_has_files_that_import_each_other_and_every_import_table_is_true() {
    let root = workspace_root();
    let bounds: BTreeMap<&str, (usize, usize)> = AT_MOST.iter().map(|&(r, c, t)| (r, (c, t))).collect();
    let mut worse = String::new();
    let mut better = Vec::new();
    let mut roots = 0;
    for member in workspace_members(&root) {
        for crate_root in crate_roots(&member) {
            roots += 1;
            let name = crate_root.strip_prefix(&root).unwrap_or(&crate_root).display().to_string();
            let graph = CrateGraph::read(&crate_root).unwrap_or_else(|e| panic!("{name}: {e}"));
            let circles = graph.circles();
            let in_circles: usize = circles.iter().map(|c| c.files.len()).sum();
            let stale: Vec<String> =
                ImportTable::all(&graph).iter().flat_map(|t| t.check(&graph)).map(|m| m.to_string()).collect();
            let (max_circles, max_stale) = bounds.get(name.as_str()).copied().unwrap_or((0, 0));
            if in_circles > max_circles || stale.len() > max_stale {
                worse.push_str(&format!(
                    "{name}: {in_circles} files in circles (at most {max_circles}), {} stale table lines (at most {max_stale})\n",
                    stale.len()
                ));
                for c in &circles {
                    worse.push_str(&c.to_string());
                }
                for s in &stale {
                    worse.push_str(&format!("  {s}\n"));
                }
            } else if in_circles < max_circles || stale.len() < max_stale {
                better.push(format!("{name}: now {in_circles} files in circles, {} stale table lines", stale.len()));
            }
        }
    }
    assert!(roots >= 10, "only {roots} crate roots found: is the members list read right?");
    assert!(worse.is_empty(), "\n{worse}");
    assert!(better.is_empty(), "lower AT_MOST to what is left:\n{}", better.join("\n"));
}
