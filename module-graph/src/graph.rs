//! Names resolved to files: every path a file writes is made absolute
//! (`crate`, `self`, `super`, a child module or a name a `use` bound), then
//! followed through modules and re-exports to the file that defines what it
//! names. The imports between files, and the circles they form.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::GraphError;
use crate::syntax::Scope;
use crate::tree::{self, ModuleTree};

/// How deep re-exports and aliases are followed before giving up (a loop
/// of `pub use`s the compiler would refuse anyway).
const MAX_HOPS: usize = 32;

/// One file naming items of another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The file that writes the paths.
    pub from: PathBuf,
    /// The file that defines what they name.
    pub to: PathBuf,
    /// The last segment of each path, sorted, once each.
    pub names: Vec<String>,
}

/// Files that import each other, directly or round a circle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circle {
    /// The files, sorted.
    pub files: Vec<PathBuf>,
    /// The imports among them.
    pub imports: Vec<Import>,
}

impl fmt::Display for Circle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} files import each other:", self.files.len())?;
        for i in &self.imports {
            writeln!(f, "  {} -> {}: {}", i.from.display(), i.to.display(), i.names.join(", "))?;
        }
        Ok(())
    }
}

/// The files of one crate and the imports between them.
#[derive(Debug)]
pub struct CrateGraph {
    tree: ModuleTree,
    /// (from, to) file indices → names.
    edges: BTreeMap<(usize, usize), BTreeSet<String>>,
}

impl CrateGraph {
    /// Reads the crate whose root file (`lib.rs`, `main.rs`, a bin) is `root`.
    pub fn read(root: &Path) -> Result<Self, GraphError> {
        let tree = tree::read(root)?;
        let mut edges: BTreeMap<(usize, usize), BTreeSet<String>> = BTreeMap::new();
        let resolver = Resolver { tree: &tree };
        for (f, file) in tree.files.iter().enumerate() {
            for (s, scope) in file.syntax.scopes.iter().enumerate() {
                let here = tree.scope_path(f, s);
                for raw in &scope.paths {
                    let Some(abs) = resolver.absolute(&here, raw, 0) else { continue };
                    if let Some(to) = resolver.locate(&abs, 0) {
                        if to != f {
                            let name = raw.last().cloned().unwrap_or_default();
                            edges.entry((f, to)).or_default().insert(name);
                        }
                    }
                }
            }
        }
        Ok(Self { tree, edges })
    }

    /// Every file of the crate, the root first.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.tree.files.iter().map(|f| f.path.as_path())
    }

    /// The absolute module path of a file of the crate (empty for the root).
    pub fn module_of(&self, file: &Path) -> Option<&[String]> {
        self.tree.files.iter().find(|f| f.path == file).map(|f| f.module.as_slice())
    }

    /// Every import between two files, sorted by the importing file's path.
    pub fn imports(&self) -> Vec<Import> {
        let mut all: Vec<Import> = self.edges.iter().map(|(&(a, b), names)| self.import(a, b, names)).collect();
        all.sort_by(|x, y| (&x.from, &x.to).cmp(&(&y.from, &y.to)));
        all
    }

    /// Pairs of absolute module paths (of files) where the first imports the second.
    pub(crate) fn module_imports(&self) -> impl Iterator<Item = (&[String], &[String])> {
        self.edges.keys().map(|&(a, b)| (self.tree.files[a].module.as_slice(), self.tree.files[b].module.as_slice()))
    }

    /// The inner doc comment of each module, with the module's path.
    pub(crate) fn module_docs(&self) -> impl Iterator<Item = (Vec<String>, &Path, &str)> {
        self.tree.files.iter().enumerate().flat_map(move |(f, file)| {
            file.syntax
                .scopes
                .iter()
                .enumerate()
                .map(move |(s, scope)| (self.tree.scope_path(f, s), file.path.as_path(), scope.doc.as_str()))
        })
    }

    /// The child modules of module `path`.
    pub(crate) fn children(&self, path: &[String]) -> Vec<String> {
        self.tree
            .modules
            .keys()
            .filter(|m| m.len() == path.len() + 1 && m.starts_with(path))
            .filter_map(|m| m.last().cloned())
            .collect()
    }

    /// Files that import each other directly or round a circle, each circle once.
    pub fn circles(&self) -> Vec<Circle> {
        let n = self.tree.files.len();
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(a, b) in self.edges.keys() {
            next[a].push(b);
        }
        strongly_connected(&next)
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|members| {
                let set: BTreeSet<usize> = members.iter().copied().collect();
                let mut files: Vec<PathBuf> = members.iter().map(|&i| self.tree.files[i].path.clone()).collect();
                files.sort();
                let mut imports: Vec<Import> = self
                    .edges
                    .iter()
                    .filter(|((a, b), _)| set.contains(a) && set.contains(b))
                    .map(|(&(a, b), names)| self.import(a, b, names))
                    .collect();
                imports.sort_by(|x, y| (&x.from, &x.to).cmp(&(&y.from, &y.to)));
                Circle { files, imports }
            })
            .collect()
    }

    fn import(&self, a: usize, b: usize, names: &BTreeSet<String>) -> Import {
        Import {
            from: self.tree.files[a].path.clone(),
            to: self.tree.files[b].path.clone(),
            names: names.iter().cloned().collect(),
        }
    }
}

struct Resolver<'t> {
    tree: &'t ModuleTree,
}

impl Resolver<'_> {
    /// `raw` as written in module `here`, made absolute; `None` when it
    /// names nothing of this crate (another crate, a local item, `Self`).
    fn absolute(&self, here: &[String], raw: &[String], hops: usize) -> Option<Vec<String>> {
        let first = raw.first()?;
        if hops > MAX_HOPS {
            return None;
        }
        match first.as_str() {
            "crate" | "$crate" => Some(raw[1..].to_vec()),
            "self" => Some(here.iter().chain(&raw[1..]).cloned().collect()),
            "super" => {
                let ups = raw.iter().take_while(|s| *s == "super").count();
                let keep = here.len().checked_sub(ups)?;
                Some(here[..keep].iter().chain(&raw[ups..]).cloned().collect())
            }
            "" => None,
            name => {
                let mut child = here.to_vec();
                child.push(name.to_owned());
                if self.tree.modules.contains_key(&child) {
                    return Some(child.into_iter().chain(raw[1..].iter().cloned()).collect());
                }
                let scope = self.tree.scope(here)?;
                let bound = scope.bindings.get(name).or_else(|| scope.local_bindings.get(name))?;
                if bound.len() == 1 {
                    // `use other_crate;` or a name bound to itself.
                    return None;
                }
                let target = self.absolute(here, bound, hops + 1)?;
                Some(target.into_iter().chain(raw[1..].iter().cloned()).collect())
            }
        }
    }

    /// The file that defines what absolute path `abs` names.
    fn locate(&self, abs: &[String], hops: usize) -> Option<usize> {
        if hops > MAX_HOPS {
            return None;
        }
        let mut depth = 0;
        while depth < abs.len() && self.tree.modules.contains_key(&abs[..=depth]) {
            depth += 1;
        }
        let module = &abs[..depth];
        let own = self.tree.file_of(module)?;
        let Some(name) = abs.get(depth) else { return Some(own) };
        if name == "*" {
            return Some(own);
        }
        let scope = self.tree.scope(module)?;
        if scope.items.contains(name) {
            return Some(own);
        }
        if let Some(bound) = scope.bindings.get(name) {
            // A re-export: follow it, or no edge when it names another crate.
            let target = self.absolute(module, bound, hops + 1)?;
            let rest: Vec<String> = target.into_iter().chain(abs[depth + 1..].iter().cloned()).collect();
            return self.locate(&rest, hops + 1);
        }
        for glob in &scope.globs {
            let Some(target) = self.absolute(module, glob, hops + 1) else { continue };
            if self.tree.scope(&target).is_some_and(|s| defines(s, name)) || self.is_module(&target, name) {
                let rest: Vec<String> = target.into_iter().chain(abs[depth..].iter().cloned()).collect();
                return self.locate(&rest, hops + 1);
            }
        }
        Some(own)
    }

    fn is_module(&self, parent: &[String], name: &str) -> bool {
        let mut path = parent.to_vec();
        path.push(name.to_owned());
        self.tree.modules.contains_key(&path)
    }
}

fn defines(scope: &Scope, name: &str) -> bool {
    scope.items.contains(name) || scope.bindings.contains_key(name)
}

/// Tarjan's strongly connected components, iteratively (deep module trees
/// must not overflow the stack).
fn strongly_connected(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = next.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut counter = 0;
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work: Vec<(usize, usize)> = vec![(start, 0)];
        while let Some(&mut (v, ref mut child)) = work.last_mut() {
            if *child == 0 && index[v] == usize::MAX {
                index[v] = counter;
                low[v] = counter;
                counter += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = next[v].get(*child) {
                *child += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(component);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn krate(files: &[(&str, &str)]) -> (tempfile::TempDir, CrateGraph) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let graph = CrateGraph::read(&dir.path().join("lib.rs")).unwrap();
        (dir, graph)
    }

    fn edges(dir: &tempfile::TempDir, g: &CrateGraph) -> Vec<String> {
        g.imports()
            .iter()
            .map(|i| {
                format!(
                    "{} -> {}",
                    i.from.strip_prefix(dir.path()).unwrap().display(),
                    i.to.strip_prefix(dir.path()).unwrap().display()
                )
            })
            .collect()
    }

    #[test]
    fn a_use_an_inline_path_and_a_macro_path_each_import() {
        let (dir, g) = krate(&[
            ("lib.rs", "mod a; mod b; mod c; mod d;"),
            ("a.rs", "use crate::b::B;"),
            ("b.rs", "pub struct B; fn f() -> super::c::C { todo!() }"),
            ("c.rs", "pub struct C; fn g() { let _ = vec![crate::d::D]; }"),
            ("d.rs", "pub struct D;"),
        ]);
        assert_eq!(edges(&dir, &g), ["a.rs -> b.rs", "b.rs -> c.rs", "c.rs -> d.rs"]);
        assert!(g.circles().is_empty());
    }

    #[test]
    fn re_exports_and_aliases_lead_to_the_defining_file() {
        let (dir, g) = krate(&[
            ("lib.rs", "mod a; mod b; mod inner; pub use b::B;"),
            ("a.rs", "use crate::B; use crate::inner; fn f() { inner::deep::Z::new(); }"),
            ("b.rs", "pub struct B;"),
            ("inner/mod.rs", "pub mod deep; pub use deep::*;"),
            ("inner/deep.rs", "pub struct Z;"),
        ]);
        let e = edges(&dir, &g);
        assert!(e.contains(&"a.rs -> b.rs".to_owned()), "{e:?}");
        assert!(e.contains(&"a.rs -> inner/deep.rs".to_owned()), "{e:?}");
        assert!(!e.contains(&"a.rs -> lib.rs".to_owned()), "{e:?}");
    }

    #[test]
    fn a_glob_re_export_is_followed_to_the_module_that_defines_the_name() {
        let (dir, g) = krate(&[
            ("lib.rs", "mod a; mod inner;"),
            ("a.rs", "fn f() { crate::inner::Z::new(); crate::inner::Own::new(); }"),
            ("inner/mod.rs", "mod deep; pub use deep::*; pub struct Own;"),
            ("inner/deep.rs", "pub struct Z;"),
        ]);
        let e = edges(&dir, &g);
        assert!(e.contains(&"a.rs -> inner/deep.rs".to_owned()), "{e:?}");
        assert!(e.contains(&"a.rs -> inner/mod.rs".to_owned()), "{e:?}");
    }

    #[test]
    fn circles_are_found_directly_and_round_three_files() {
        let (dir, g) = krate(&[
            ("lib.rs", "mod a; mod b; mod c; mod x; mod y;"),
            ("a.rs", "use crate::b::B; pub struct A;"),
            ("b.rs", "use crate::c::C; pub struct B;"),
            ("c.rs", "pub struct C; fn f(_: crate::a::A) {}"),
            ("x.rs", "pub struct X; fn f(_: super::y::Y) {}"),
            ("y.rs", "pub struct Y; mod inner { use crate::x::X; }"),
        ]);
        let circles = g.circles();
        let mut sizes: Vec<usize> = circles.iter().map(|c| c.files.len()).collect();
        sizes.sort();
        assert_eq!(sizes, [2, 3]);
        let shown = circles.iter().map(|c| c.to_string()).collect::<String>();
        assert!(shown.contains("y.rs -> ") && shown.contains("x.rs: X"), "{shown}");
        drop(dir);
    }

    #[test]
    fn a_parent_that_imports_its_child_and_a_child_that_uses_the_parents_own_item_is_a_circle() {
        let (_dir, g) = krate(&[
            ("lib.rs", "mod rt;"),
            ("rt/mod.rs", "mod part; use part::Part; pub struct Runtime;"),
            ("rt/part.rs", "pub struct Part; impl super::Runtime { fn f(&self) {} }"),
        ]);
        assert_eq!(g.circles().len(), 1);
    }

    #[test]
    fn super_in_an_inline_test_module_is_its_own_file() {
        let (_dir, g) = krate(&[
            ("lib.rs", "mod a;"),
            ("a.rs", "pub struct A; #[cfg(test)] mod tests { use super::A; fn f() { super::A; } }"),
        ]);
        assert!(g.imports().is_empty());
    }

    #[test]
    fn other_crates_and_local_names_import_nothing() {
        let (_dir, g) = krate(&[
            ("lib.rs", "mod a; mod b; pub use serde::Serialize;"),
            ("a.rs", "use std::fmt; use crate::Serialize; fn f() { Vec::<u8>::new(); Self::x(); fmt::Debug; }"),
            ("b.rs", ""),
        ]);
        assert!(g.imports().is_empty(), "{:?}", g.imports());
    }
}
