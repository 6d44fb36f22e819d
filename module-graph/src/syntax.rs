//! One file reduced to what names resolve through: per module scope (the
//! file's own and each inline `mod … { }`), the items it defines, the names
//! its `use`s bind, the files it declares, and every multi-segment path it
//! writes (in `use` trees, code, and macro tokens alike).

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// One module scope of a file.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    /// Inline module names from the file's own module (empty: the file).
    pub path: Vec<String>,
    /// Names of items defined at the scope's top level.
    pub items: BTreeSet<String>,
    /// Names bound by `use` at the scope's top level, to the path they name.
    pub bindings: BTreeMap<String, Vec<String>>,
    /// Names bound by `use` inside function bodies (alias expansion only:
    /// they are not visible from other modules).
    pub local_bindings: BTreeMap<String, Vec<String>>,
    /// Glob `use`s at the scope's top level.
    pub globs: Vec<Vec<String>>,
    /// `mod NAME;` declarations, with a `#[path]` if any.
    pub file_mods: Vec<(String, Option<String>)>,
    /// Every path of two or more segments written in the scope.
    pub paths: Vec<Vec<String>>,
    /// The scope's inner doc comment (`//!` lines), joined by newlines.
    pub doc: String,
}

/// A parsed file's scopes; the first is the file's own module.
#[derive(Debug)]
pub(crate) struct FileSyntax {
    /// Scope 0 is the file; inline modules follow in source order.
    pub scopes: Vec<Scope>,
}

/// Reads one file's source.
pub(crate) fn parse(source: &str) -> syn::Result<FileSyntax> {
    let file = syn::parse_file(source)?;
    let mut reader = Reader { scopes: vec![Scope::default()], stack: vec![0], depth: 0 };
    reader.scopes[0].doc = inner_doc(&file.attrs);
    reader.visit_file(&file);
    Ok(FileSyntax { scopes: reader.scopes })
}

struct Reader {
    scopes: Vec<Scope>,
    stack: Vec<usize>,
    /// Nesting of blocks: items in a block belong to no module scope.
    depth: usize,
}

impl Reader {
    fn scope(&mut self) -> &mut Scope {
        let at = *self.stack.last().unwrap_or(&0);
        &mut self.scopes[at]
    }

    fn item(&mut self, ident: &syn::Ident) {
        if self.depth == 0 {
            let name = ident.to_string();
            self.scope().items.insert(name);
        }
    }

    fn record(&mut self, segments: Vec<String>) {
        if segments.len() >= 2 {
            self.scope().paths.push(segments);
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let (full, bound) = if name == "self" {
                    (prefix.clone(), prefix.last().cloned().unwrap_or_default())
                } else {
                    let mut full = prefix.clone();
                    full.push(name.clone());
                    (full, name)
                };
                self.bind(full, Some(bound));
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                if r.ident != "self" {
                    full.push(r.ident.to_string());
                }
                self.bind(full, Some(r.rename.to_string()));
            }
            syn::UseTree::Glob(_) => {
                let full = prefix.clone();
                if self.depth == 0 {
                    self.scope().globs.push(full.clone());
                }
                // A glob imports the module it names.
                let mut as_path = full;
                as_path.push("*".to_owned());
                self.record(as_path);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    fn bind(&mut self, full: Vec<String>, name: Option<String>) {
        if let Some(name) = name.filter(|n| n != "_" && !n.is_empty()) {
            let depth = self.depth;
            let scope = self.scope();
            if depth == 0 {
                scope.bindings.insert(name, full.clone());
            } else {
                scope.local_bindings.insert(name, full.clone());
            }
        }
        // `use a::b;` with one segment names an external crate or a child by itself: nothing to resolve.
        self.record(full);
    }
}

impl<'ast> Visit<'ast> for Reader {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !test_only(item_attrs(item)) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs: &[syn::Attribute] = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        if !test_only(attrs) {
            syn::visit::visit_impl_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let name = m.ident.to_string();
        match &m.content {
            None => {
                if self.depth == 0 {
                    let path = m.attrs.iter().find(|a| a.path().is_ident("path")).and_then(|a| match &a.meta {
                        syn::Meta::NameValue(nv) => match &nv.value {
                            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
                            _ => None,
                        },
                        _ => None,
                    });
                    self.scope().file_mods.push((name, path));
                }
            }
            Some((_, items)) => {
                if self.depth > 0 {
                    // A module inside a function: its items are that block's.
                    for item in items {
                        self.visit_item(item);
                    }
                    return;
                }
                let mut path = self.scope().path.clone();
                path.push(name);
                let doc = inner_doc(&m.attrs);
                self.scopes.push(Scope { path, doc, ..Scope::default() });
                self.stack.push(self.scopes.len() - 1);
                for item in items {
                    self.visit_item(item);
                }
                self.stack.pop();
            }
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut prefix = Vec::new();
        if u.leading_colon.is_some() {
            prefix.push(String::new());
        }
        self.use_tree(&mut prefix, &u.tree);
    }

    fn visit_block(&mut self, b: &'ast syn::Block) {
        self.depth += 1;
        syn::visit::visit_block(self, b);
        self.depth -= 1;
    }

    fn visit_item_struct(&mut self, i: &'ast syn::ItemStruct) {
        self.item(&i.ident);
        syn::visit::visit_item_struct(self, i);
    }
    fn visit_item_enum(&mut self, i: &'ast syn::ItemEnum) {
        self.item(&i.ident);
        syn::visit::visit_item_enum(self, i);
    }
    fn visit_item_union(&mut self, i: &'ast syn::ItemUnion) {
        self.item(&i.ident);
        syn::visit::visit_item_union(self, i);
    }
    fn visit_item_fn(&mut self, i: &'ast syn::ItemFn) {
        self.item(&i.sig.ident);
        syn::visit::visit_item_fn(self, i);
    }
    fn visit_item_trait(&mut self, i: &'ast syn::ItemTrait) {
        self.item(&i.ident);
        syn::visit::visit_item_trait(self, i);
    }
    fn visit_item_type(&mut self, i: &'ast syn::ItemType) {
        self.item(&i.ident);
        syn::visit::visit_item_type(self, i);
    }
    fn visit_item_const(&mut self, i: &'ast syn::ItemConst) {
        self.item(&i.ident);
        syn::visit::visit_item_const(self, i);
    }
    fn visit_item_static(&mut self, i: &'ast syn::ItemStatic) {
        self.item(&i.ident);
        syn::visit::visit_item_static(self, i);
    }
    fn visit_item_macro(&mut self, i: &'ast syn::ItemMacro) {
        if let Some(ident) = &i.ident {
            self.item(ident);
        }
        syn::visit::visit_item_macro(self, i);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let mut segments: Vec<String> = Vec::new();
        if p.leading_colon.is_some() {
            segments.push(String::new());
        }
        segments.extend(p.segments.iter().map(|s| s.ident.to_string()));
        self.record(segments);
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        let mut found = Vec::new();
        token_paths(m.tokens.clone(), &mut found);
        for path in found {
            self.record(path);
        }
    }

    // Attributes (derives, cfgs, docs) and `pub(in …)` name no item a file uses.
    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}
}

/// Whether the attributes compile the item only for tests (`#[cfg(test)]`,
/// `#[cfg(all(test, …))]`).
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta.require_list().is_ok_and(|l| {
                let t = l.tokens.to_string();
                t == "test" || t.starts_with("all (test") || t.starts_with("all(test")
            })
    })
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::ForeignMod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::TraitAlias(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// The paths (`a::b::c`, `$crate::x`) written in a macro's tokens.
fn token_paths(tokens: TokenStream, out: &mut Vec<Vec<String>>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Group(g) => {
                token_paths(g.stream(), out);
                i += 1;
            }
            TokenTree::Ident(first) => {
                let mut segments = vec![first.to_string()];
                let mut j = i + 1;
                while j + 2 < tokens.len() && is_path_sep(&tokens[j], &tokens[j + 1]) {
                    match &tokens[j + 2] {
                        TokenTree::Ident(next) => {
                            segments.push(next.to_string());
                            j += 3;
                        }
                        _ => break,
                    }
                }
                if segments.len() >= 2 {
                    out.push(segments);
                }
                i = j.max(i + 1);
            }
            TokenTree::Punct(_) | TokenTree::Literal(_) => i += 1,
        }
    }
}

fn is_path_sep(a: &TokenTree, b: &TokenTree) -> bool {
    matches!((a, b), (TokenTree::Punct(x), TokenTree::Punct(y)) if x.as_char() == ':' && y.as_char() == ':')
}

fn inner_doc(attrs: &[syn::Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs {
        if !matches!(attr.style, syn::AttrStyle::Inner(_)) || !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta {
            if let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) = &nv.value {
                let text = s.value();
                lines.push(text.strip_prefix(' ').map(str::to_owned).unwrap_or(text));
            }
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope0(src: &str) -> Scope {
        parse(src).expect("parses").scopes.into_iter().next().expect("a scope")
    }

    #[test]
    fn use_trees_bind_names_and_record_paths() {
        let s = scope0("use crate::a::{self, b::C as D, e::*}; use super::f::G;");
        assert_eq!(s.bindings["a"], vec!["crate", "a"]);
        assert_eq!(s.bindings["D"], vec!["crate", "a", "b", "C"]);
        assert_eq!(s.bindings["G"], vec!["super", "f", "G"]);
        assert_eq!(s.globs, vec![vec!["crate", "a", "e"]]);
        assert!(s.paths.contains(&vec!["crate".into(), "a".into(), "e".into(), "*".into()]));
    }

    #[test]
    fn inline_paths_in_code_and_macros_are_recorded_but_attributes_are_not() {
        let s = scope0(
            "#[derive(crate::x::Derive)] pub(in crate::y) struct S(crate::z::T);
             fn f() { let _ = super::w::make(); g!(crate::v::V, $crate::u::U); }",
        );
        let joined: Vec<String> = s.paths.iter().map(|p| p.join("::")).collect();
        for want in ["crate::z::T", "super::w::make", "crate::v::V", "crate::u::U"] {
            assert!(joined.iter().any(|p| p == want), "{want} missing from {joined:?}");
        }
        assert!(!joined.iter().any(|p| p.contains("Derive") || p == "crate::y"), "{joined:?}");
        assert!(s.items.contains("S") && s.items.contains("f"));
    }

    #[test]
    fn inline_modules_are_scopes_of_their_own_and_block_items_are_not_module_items() {
        let syntax =
            parse("//! top\nmod a { //! inner\n use crate::b::B; mod c; }\nfn f() { struct Local; use crate::d::D; }")
                .unwrap();
        assert_eq!(syntax.scopes.len(), 2);
        assert_eq!(syntax.scopes[0].doc, "top");
        assert!(!syntax.scopes[0].items.contains("Local"));
        assert_eq!(syntax.scopes[0].local_bindings["D"], vec!["crate", "d", "D"]);
        let a = &syntax.scopes[1];
        assert_eq!(a.path, vec!["a"]);
        assert_eq!(a.doc, "inner");
        assert_eq!(a.bindings["B"], vec!["crate", "b", "B"]);
        assert_eq!(a.file_mods, vec![("c".to_owned(), None)]);
    }

    #[test]
    fn code_compiled_only_for_tests_is_not_read() {
        let s = scope0(
            "#[cfg(test)] mod tests { use crate::a::A; } #[cfg(test)] mod helpers; #[cfg(all(test, unix))] use crate::b::B;
             struct S; impl S { #[cfg(test)] fn t() { crate::c::C; } fn real() { crate::d::D; } }",
        );
        let joined: Vec<String> = s.paths.iter().map(|p| p.join("::")).collect();
        assert_eq!(joined, ["crate::d::D"]);
        assert!(s.file_mods.is_empty() && s.bindings.is_empty());
    }
}
