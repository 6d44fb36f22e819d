//! Prints the import circles and stale import-table lines of crate roots:
//! `cargo run -p module-graph --example circles -- app/src/lib.rs [more roots…]`.

use module_graph::{CrateGraph, ImportTable};

fn main() {
    let roots: Vec<String> = std::env::args().skip(1).collect();
    if roots.is_empty() {
        eprintln!("usage: circles CRATE_ROOT… (e.g. app/src/lib.rs)");
        std::process::exit(2);
    }
    let mut found = false;
    for root in roots {
        let graph = match CrateGraph::read(std::path::Path::new(&root)) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("{root}: {e}");
                std::process::exit(2);
            }
        };
        for circle in graph.circles() {
            found = true;
            print!("{root}: {circle}");
        }
        for table in ImportTable::all(&graph) {
            for mismatch in table.check(&graph) {
                found = true;
                println!("{mismatch}");
            }
        }
    }
    std::process::exit(i32::from(found));
}
