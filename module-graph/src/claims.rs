//! The import tables crate docs write, held against the code. A table is a
//! ```` ```text ```` block in a module's `//!` doc with lines
//! `name → a, b, c` (an optional `(comment)` after the list, continuation
//! lines indented) and optionally `leaves: x, y` (modules that import none
//! of their siblings). It claims, for every child module of the documented
//! module, exactly which siblings it imports (a child's own submodules count
//! as the child). A table must list every child.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

use crate::graph::CrateGraph;

/// One module's claimed table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportTable {
    /// The documented module's absolute path.
    pub module: Vec<String>,
    /// The file whose doc holds it.
    pub file: PathBuf,
    /// Child → the siblings it is said to import.
    pub entries: BTreeMap<String, BTreeSet<String>>,
}

/// Where a table and the code disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimMismatch {
    /// The file whose doc holds the table.
    pub file: PathBuf,
    /// What is wrong, in words.
    pub problem: String,
}

impl fmt::Display for ClaimMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.problem)
    }
}

impl ImportTable {
    /// The tables in `graph`'s module docs.
    pub fn all(graph: &CrateGraph) -> Vec<ImportTable> {
        graph
            .module_docs()
            .filter_map(|(module, file, doc)| {
                parse(doc).map(|entries| ImportTable { module, file: file.to_path_buf(), entries })
            })
            .collect()
    }

    /// What the code says each child imports of its siblings.
    pub fn actual(&self, graph: &CrateGraph) -> BTreeMap<String, BTreeSet<String>> {
        let depth = self.module.len();
        let mut out: BTreeMap<String, BTreeSet<String>> =
            graph.children(&self.module).into_iter().map(|c| (c, BTreeSet::new())).collect();
        for (from, to) in graph.module_imports() {
            let (Some(a), Some(b)) = (child_of(&self.module, from, depth), child_of(&self.module, to, depth)) else {
                continue;
            };
            if a != b {
                out.entry(a.to_owned()).or_default().insert(b.to_owned());
            }
        }
        out
    }

    /// Every disagreement between this table and the code.
    pub fn check(&self, graph: &CrateGraph) -> Vec<ClaimMismatch> {
        let actual = self.actual(graph);
        let mut problems = Vec::new();
        for (child, imports) in &actual {
            match self.entries.get(child) {
                None => problems.push(format!("`{child}` is missing from the table (it imports: {})", list(imports))),
                Some(claimed) if claimed != imports => problems.push(format!(
                    "`{child}` is said to import {} but imports {}",
                    list(claimed),
                    list(imports)
                )),
                Some(_) => {}
            }
        }
        for child in self.entries.keys().filter(|c| !actual.contains_key(*c)) {
            problems.push(format!("the table lists `{child}`, which is not a module here"));
        }
        problems.into_iter().map(|problem| ClaimMismatch { file: self.file.clone(), problem }).collect()
    }
}

fn child_of<'a>(parent: &[String], module: &'a [String], depth: usize) -> Option<&'a str> {
    (module.len() > depth && module.starts_with(parent)).then(|| module[depth].as_str())
}

fn list(set: &BTreeSet<String>) -> String {
    if set.is_empty() {
        "nothing".to_owned()
    } else {
        set.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

/// The table in a doc comment, if it has one.
fn parse(doc: &str) -> Option<BTreeMap<String, BTreeSet<String>>> {
    let mut in_text = false;
    let mut lines: Vec<String> = Vec::new();
    for line in doc.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_text = !in_text && trimmed.trim_start_matches('`').trim() == "text";
            continue;
        }
        if !in_text || trimmed.is_empty() {
            continue;
        }
        let continues = line.starts_with(char::is_whitespace) && !trimmed.contains('→');
        match lines.last_mut() {
            Some(last) if continues => {
                last.push(' ');
                last.push_str(trimmed);
            }
            _ => lines.push(trimmed.to_owned()),
        }
    }
    let mut entries = BTreeMap::new();
    for line in lines {
        if let Some((name, deps)) = line.split_once('→') {
            entries.insert(name.trim().trim_end_matches('/').to_owned(), names(deps));
        } else if let Some(leaves) = line.strip_prefix("leaves:") {
            for leaf in names(leaves) {
                entries.insert(leaf, BTreeSet::new());
            }
        }
    }
    (!entries.is_empty()).then_some(entries)
}

/// The comma-separated module names of a list, with `(comments)` dropped.
fn names(list: &str) -> BTreeSet<String> {
    let mut plain = String::new();
    let mut depth = 0usize;
    for c in list.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
        .split(',')
        .map(|s| s.trim().trim_end_matches('/'))
        .filter(|s| !s.is_empty() && *s != "nothing")
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_with_comments_continuations_and_leaves_parses() {
        let doc = "Intro.\n\n```text\nrouter → a, b  (one (nested) note)\n         (more note)\nb/     → a\nleaves: a, c\n```\nAfter.";
        let t = parse(doc).unwrap();
        assert_eq!(t["router"], BTreeSet::from(["a".to_owned(), "b".to_owned()]));
        assert_eq!(t["b"], BTreeSet::from(["a".to_owned()]));
        assert!(t["a"].is_empty() && t["c"].is_empty());
    }

    #[test]
    fn a_doc_without_a_table_claims_nothing() {
        assert!(parse("Just words → and an arrow outside a block.\n```rust\nlet x = 1;\n```").is_none());
    }

    fn graph(files: &[(&str, &str)]) -> (tempfile::TempDir, CrateGraph) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let g = CrateGraph::read(&dir.path().join("lib.rs")).unwrap();
        (dir, g)
    }

    #[test]
    fn a_true_table_passes_and_a_stale_one_names_each_difference() {
        let lib_true = "//! ```text\n//! a → b\n//! leaves: b, c\n//! ```\nmod a; mod b; mod c;";
        let files = [("a.rs", "use crate::b::B;"), ("b.rs", "pub struct B;"), ("c/mod.rs", "mod d;"), ("c/d.rs", "")];
        let mut all = vec![("lib.rs", lib_true)];
        all.extend(files);
        let (_d, g) = graph(&all);
        let tables = ImportTable::all(&g);
        assert_eq!(tables.len(), 1);
        assert_eq!(tables[0].check(&g), vec![]);

        let lib_stale = "//! ```text\n//! a → c\n//! gone → a\n//! leaves: c\n//! ```\nmod a; mod b; mod c;";
        let mut all = vec![("lib.rs", lib_stale)];
        all.extend(files);
        let (_d, g) = graph(&all);
        let problems: Vec<String> = ImportTable::all(&g)[0].check(&g).iter().map(|p| p.problem.clone()).collect();
        assert_eq!(
            problems,
            [
                "`a` is said to import c but imports b",
                "`b` is missing from the table (it imports: nothing)",
                "the table lists `gone`, which is not a module here",
            ]
        );
    }
}
