//! A crate's files as the compiler finds them: from the root file, each
//! `mod NAME;` leads to `NAME.rs` or `NAME/mod.rs` (or its `#[path]`), and
//! every module (file or inline) gets its absolute path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::GraphError;
use crate::syntax::{self, FileSyntax, Scope};

/// One source file of the crate.
#[derive(Debug)]
pub(crate) struct SourceFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its module's absolute path (empty: the crate root).
    pub module: Vec<String>,
    /// What it says.
    pub syntax: FileSyntax,
}

/// Every file of a crate and where each module lives.
#[derive(Debug)]
pub(crate) struct ModuleTree {
    /// Root first, then in the order declarations lead to them.
    pub files: Vec<SourceFile>,
    /// Absolute module path → (file index, scope index in that file).
    pub modules: BTreeMap<Vec<String>, (usize, usize)>,
}

impl ModuleTree {
    /// The scope that is module `path`, if the crate has one.
    pub fn scope(&self, path: &[String]) -> Option<&Scope> {
        self.modules.get(path).map(|&(f, s)| &self.files[f].syntax.scopes[s])
    }

    /// The file that holds module `path`.
    pub fn file_of(&self, path: &[String]) -> Option<usize> {
        self.modules.get(path).map(|&(f, _)| f)
    }

    /// The absolute path of scope `scope` in file `file`.
    pub fn scope_path(&self, file: usize, scope: usize) -> Vec<String> {
        let f = &self.files[file];
        let mut path = f.module.clone();
        path.extend(f.syntax.scopes[scope].path.iter().cloned());
        path
    }
}

/// Reads the crate whose root file is `root`.
pub(crate) fn read(root: &Path) -> Result<ModuleTree, GraphError> {
    let mut tree = ModuleTree { files: Vec::new(), modules: BTreeMap::new() };
    let mut queue = vec![(root.to_path_buf(), Vec::new(), true)];
    while let Some((path, module, owns_dir)) = queue.pop() {
        let source =
            std::fs::read_to_string(&path).map_err(|source| GraphError::Read { path: path.clone(), source })?;
        let syntax = syntax::parse(&source).map_err(|source| GraphError::Parse { path: path.clone(), source })?;
        let index = tree.files.len();
        // A root or `mod.rs` keeps its children beside it; `a.rs` keeps them in `a/`.
        let parent = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let base = if owns_dir { parent.clone() } else { parent.join(path.file_stem().unwrap_or_default()) };
        for (s, scope) in syntax.scopes.iter().enumerate() {
            let mut abs = module.clone();
            abs.extend(scope.path.iter().cloned());
            tree.modules.insert(abs.clone(), (index, s));
            let dir = scope.path.iter().fold(base.clone(), |d, name| d.join(name));
            for (name, attr) in &scope.file_mods {
                let mut child = abs.clone();
                child.push(name.clone());
                let found = match attr {
                    Some(p) if scope.path.is_empty() => Some((parent.join(p), true)),
                    Some(p) => Some((dir.join(p), true)),
                    None => {
                        let flat = dir.join(format!("{name}.rs"));
                        let nested = dir.join(name).join("mod.rs");
                        if flat.is_file() {
                            Some((flat, false))
                        } else if nested.is_file() {
                            Some((nested, true))
                        } else {
                            return Err(GraphError::MissingModule {
                                declared_in: path.clone(),
                                name: name.clone(),
                                candidates: [flat, nested],
                            });
                        }
                    }
                };
                if let Some((file, owns)) = found {
                    queue.push((file, child, owns));
                }
            }
        }
        tree.files.push(SourceFile { path, module, syntax });
    }
    Ok(tree)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_found_as_the_compiler_finds_them() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path();
        std::fs::create_dir_all(src.join("a")).unwrap();
        std::fs::create_dir_all(src.join("b/c")).unwrap();
        std::fs::write(src.join("lib.rs"), "mod a; mod b; mod inline { mod d; }").unwrap();
        std::fs::write(src.join("a/mod.rs"), "mod x;").unwrap();
        std::fs::write(src.join("a/x.rs"), "").unwrap();
        std::fs::write(src.join("b.rs"), "mod c;").unwrap();
        std::fs::write(src.join("b/c.rs"), "").unwrap();
        std::fs::create_dir_all(src.join("inline")).unwrap();
        std::fs::write(src.join("inline/d.rs"), "").unwrap();
        let tree = read(&src.join("lib.rs")).unwrap();
        let mut found: Vec<String> =
            tree.files.iter().map(|f| f.path.strip_prefix(src).unwrap().display().to_string()).collect();
        found.sort();
        assert_eq!(found, ["a/mod.rs", "a/x.rs", "b.rs", "b/c.rs", "inline/d.rs", "lib.rs"]);
        let x = tree.file_of(&["a".into(), "x".into()]).unwrap();
        assert!(tree.files[x].path.ends_with("a/x.rs"));
        assert_eq!(tree.file_of(&["inline".into()]), tree.file_of(&[]));
    }

    #[test]
    fn a_missing_module_names_both_places_looked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lib.rs"), "mod gone;").unwrap();
        let err = read(&dir.path().join("lib.rs")).unwrap_err().to_string();
        assert!(err.contains("mod gone;") && err.contains("gone.rs") && err.contains("gone/mod.rs"), "{err}");
    }
}
