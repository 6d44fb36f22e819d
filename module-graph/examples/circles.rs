//! Prints the import circles and stale import-table lines of crate roots:
//! `cargo run -p module-graph --example circles -- app/src/lib.rs [more roots…]`,
//! or with `--table ROOT MODULE` (e.g. `runtime::terminals`) the import table
//! the code has for that module's children, to paste into its doc.

use module_graph::{CrateGraph, ImportTable};

fn main() {
    let roots: Vec<String> = std::env::args().skip(1).collect();
    if roots.first().map(String::as_str) == Some("--table") {
        let (Some(root), Some(module)) = (roots.get(1), roots.get(2)) else {
            eprintln!("usage: circles --table CRATE_ROOT MODULE (e.g. app/src/lib.rs runtime::terminals)");
            std::process::exit(2);
        };
        print_table(root, module);
        return;
    }
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

/// Prints the import table the code has for `module`'s children.
fn print_table(root: &str, module: &str) {
    let graph = match CrateGraph::read(std::path::Path::new(root)) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("{root}: {e}");
            std::process::exit(2);
        }
    };
    let path: Vec<String> = module.split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect();
    let table = ImportTable { module: path, file: root.into(), entries: Default::default() };
    let actual = table.actual(&graph);
    let width = actual.keys().map(String::len).max().unwrap_or(0);
    let mut leaves = vec![];
    for (child, imports) in &actual {
        if imports.is_empty() {
            leaves.push(child.as_str());
        } else {
            let list: Vec<&str> = imports.iter().map(String::as_str).collect();
            println!("{child:width$} → {}", list.join(", "));
        }
    }
    println!("leaves: {}", leaves.join(", "));
}
