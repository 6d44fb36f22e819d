//! Browser operations of the agent tool runtime. Ownership checks and node
//! lookups happen on the main thread; everything that waits on the page
//! (DevTools replies, loads) happens on the operation's worker thread, since
//! the main thread must keep pumping CEF for those replies to arrive. Every
//! page is driven through page-driver's typed [`Page`](page_driver::Page).
//!
//! One file a concern: `target` finds the caller's browser node and its
//! live page; `ownership` lists, claims and transfers browsers; `navigate`
//! opens and loads pages; `inspect` reads the page model (`page_model`, the
//! collector and its report) frame by frame; `refs` leads from a ref or
//! selector to the element; `locate` checks where a click lands; `input`
//! clicks and types; `capture` takes screenshots; `dialog` shows and
//! answers a page's dialogs; `session` is a page with one of its DevTools
//! sessions, and how failures read.
//!
//! ```text
//! capture → session, target
//! dialog → target
//! input → dialog, locate, session, target
//! inspect → capture, dialog, page_model, refs, session, target
//! locate → page_model, refs, session
//! navigate → dialog, target
//! ownership → target
//! page_model → session
//! refs → page_model, session
//! leaves: session, target
//! ```

mod capture;
mod dialog;
mod input;
mod inspect;
mod locate;
mod navigate;
mod ownership;
mod page_model;
mod refs;
mod session;
mod target;

pub(crate) use capture::screenshot;
pub(crate) use input::{click, type_text};
pub(crate) use inspect::inspect;
pub(crate) use navigate::{navigate, open};
pub(crate) use ownership::{claim, list, transfer};

/// Browser nodes the operations' tests start from.
#[cfg(test)]
mod fixtures {
    use crate::model::NodeKind;
    use crate::runtime::test_context::TestContext;
    use serde_json::json;

    /// A browser node added by the person at the app: on the canvas, owned by nobody.
    pub(super) fn unowned_browser(ctx: &mut TestContext) -> String {
        let kind = NodeKind::browser("https://example.com/").unwrap();
        ctx.add(kind, "Example", (0.0, 900.0, 800.0, 600.0)).to_string()
    }

    /// A browser opened by the first agent (so owned by it).
    pub(super) fn owned_browser(ctx: &mut TestContext) -> String {
        let v = ctx.run("browser_open", json!({"url": "https://example.com/"})).unwrap();
        v["nodeId"].as_str().expect("a node id").to_owned()
    }
}
