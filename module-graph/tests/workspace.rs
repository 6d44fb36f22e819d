//! Every crate of the workspace holds to the house rule: no two files of a
//! crate import each other, directly or round a circle, and every import
//! table a module doc writes is what the code does.

use std::path::{Path, PathBuf};

use module_graph::{crate_roots, CrateGraph, ImportTable};

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
    let mut report = String::new();
    let mut roots = 0;
    let mut tables = 0;
    for member in workspace_members(&root) {
        for crate_root in crate_roots(&member) {
            roots += 1;
            let name = crate_root.strip_prefix(&root).unwrap_or(&crate_root).display().to_string();
            let graph = CrateGraph::read(&crate_root).unwrap_or_else(|e| panic!("{name}: {e}"));
            for circle in graph.circles() {
                report.push_str(&format!("{name}: {circle}"));
            }
            for table in ImportTable::all(&graph) {
                tables += 1;
                for mismatch in table.check(&graph) {
                    report.push_str(&format!("{mismatch}\n"));
                }
            }
        }
    }
    assert!(roots >= 14, "only {roots} crate roots found: is the members list read right?");
    assert!(tables >= 10, "only {tables} import tables found: are the docs read right?");
    assert!(report.is_empty(), "\n{report}");
}
