//! A page's JavaScript dialog and file chooser as the browser operations
//! show them: an open dialog is read with `browser_inspect` and answered with
//! `browser_click`/`browser_type` on refs of its own; a file chooser is
//! reported (the person answers it in the window).

use super::target::Target;
use crate::model::NodeId;
use crate::runtime::engine::Browser;
use cef_bridge::{DialogKind, JsDialog};
use serde_json::{json, Value};
use tool_server::ToolError;

/// The refs a page's JavaScript dialog shows in `browser_inspect`: the agent
/// answers it with the operations it already knows (click OK or Cancel, type
/// into a prompt), so the fixed catalogue needs no operation of its own.
pub(super) const DIALOG_OK: &str = "dialog-ok";
pub(super) const DIALOG_CANCEL: &str = "dialog-cancel";
pub(super) const DIALOG_INPUT: &str = "dialog-input";

/// How a waiting dialog reads in a result.
pub(super) fn dialog_json(d: &JsDialog) -> Value {
    json!({"type": d.kind.cdp_name(), "message": d.message, "defaultPrompt": d.default_prompt, "url": d.url})
}

/// How a page's open file chooser reads in a result (the person answers it in the window).
pub(super) fn file_chooser_json(c: &cef_bridge::FileChooser) -> Value {
    let mode = match c.mode {
        cef_bridge::ChooserMode::Open => "open",
        cef_bridge::ChooserMode::OpenMultiple => "openMultiple",
        cef_bridge::ChooserMode::OpenFolder => "openFolder",
        cef_bridge::ChooserMode::Save => "save",
    };
    json!({"mode": mode, "accept": c.accept, "answeredBy": "the user, in the window"})
}

/// The dialog as `browser_inspect` shows a page: its text and its controls as refs.
pub(super) fn dialog_page(d: &JsDialog, node: &NodeId) -> Value {
    let mut elements = format!("{DIALOG_OK} button OK\n");
    if d.kind != DialogKind::Alert {
        elements.push_str(&format!("{DIALOG_CANCEL} button Cancel\n"));
    }
    if d.kind == DialogKind::Prompt {
        elements.push_str(&format!("{DIALOG_INPUT} textbox {} ={}\n", d.message, d.default_prompt));
    }
    json!({"nodeId": node, "dialog": dialog_json(d), "text": d.message, "elements": elements})
}

/// Refuses page work while the page waits on a dialog (its scripts and input would wait with it).
pub(super) fn no_dialog(handle: &Browser) -> Result<(), ToolError> {
    match handle.dialog() {
        None => Ok(()),
        Some(d) => Err(ToolError::refused(format!(
            "the page waits on a {} dialog ({:?}): answer it first with browser_click ref {DIALOG_OK} or {DIALOG_CANCEL}{}",
            d.kind.cdp_name(),
            d.message,
            if d.kind == DialogKind::Prompt { format!(", or browser_type ref {DIALOG_INPUT}") } else { String::new() }
        ))),
    }
}

/// Answers the waiting dialog; the result says what was answered.
pub(super) fn answer(t: &Target, accept: bool, text: Option<&str>) -> Result<Value, ToolError> {
    let d = t.handle.answer_dialog(accept, text).map_err(|e| ToolError::refused(e.to_string()))?;
    let mut v = json!({"nodeId": t.node, "answered": dialog_json(&d), "accepted": accept});
    if let (true, DialogKind::Prompt) = (accept, d.kind) {
        v["text"] = json!(text.unwrap_or(&d.default_prompt));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{owned_browser, unowned_browser};
    use super::*;
    use crate::runtime::test_context::TestContext;
    use tool_server::ErrorCode;

    #[test]
    fn a_waiting_dialog_is_read_with_inspect_and_answered_with_click_and_type() {
        let mut ctx = TestContext::new();
        let b = owned_browser(&mut ctx);
        let page = ctx.page_of(&b).unwrap();
        let confirm = JsDialog {
            kind: DialogKind::Confirm,
            message: "Delete?".into(),
            default_prompt: String::new(),
            url: "https://example.com/".into(),
        };
        page.open_dialog(confirm.clone());
        let v = ctx.run("browser_inspect", json!({"nodeId": b})).unwrap();
        assert_eq!(
            v["dialog"],
            json!({"type": "confirm", "message": "Delete?", "defaultPrompt": "", "url": "https://example.com/"})
        );
        assert_eq!(v["elements"], "dialog-ok button OK\ndialog-cancel button Cancel\n");
        let sent = page.methods().len();
        let e = ctx.run("browser_click", json!({"nodeId": b, "ref": "e1"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused, "{}", e.message());
        assert!(e.message().contains("dialog-ok"), "{}", e.message());
        assert_eq!(page.methods().len(), sent, "nothing reached the blocked page");
        let v = ctx.run("browser_click", json!({"nodeId": b, "ref": "dialog-cancel"})).unwrap();
        assert_eq!((v["accepted"].clone(), v["answered"]["type"].clone()), (json!(false), json!("confirm")));
        let e = ctx.run("browser_click", json!({"nodeId": b, "ref": "dialog-ok"})).unwrap_err();
        assert_eq!(e.message(), "No dialog is showing");

        page.open_dialog(JsDialog {
            kind: DialogKind::Prompt,
            message: "Name?".into(),
            default_prompt: "x".into(),
            ..confirm
        });
        let v = ctx.run("browser_type", json!({"nodeId": b, "ref": "dialog-input", "text": "Ada"})).unwrap();
        assert_eq!(v["text"], "Ada");
        assert_eq!(*page.dialog_answers.lock(), [(false, None), (true, Some("Ada".to_string()))]);
        let unowned = unowned_browser(&mut ctx);
        let e = ctx.run("browser_click", json!({"nodeId": unowned, "ref": "dialog-ok"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused, "only the owner answers");
    }

    #[test]
    fn an_open_file_chooser_is_reported_by_click_and_inspect() {
        let mut ctx = TestContext::new();
        let b = owned_browser(&mut ctx);
        let v = ctx.run("browser_inspect", json!({"nodeId": b})).unwrap();
        assert!(v.get("fileChooser").is_none(), "{v}");
        ctx.page_of(&b).unwrap().open_file_chooser(cef_bridge::FileChooser {
            mode: cef_bridge::ChooserMode::OpenMultiple,
            title: String::new(),
            default_path: String::new(),
            accept: vec!["image/*".into()],
        });
        let want = json!({"mode": "openMultiple", "accept": ["image/*"], "answeredBy": "the user, in the window"});
        let v = ctx.run("browser_inspect", json!({"nodeId": b})).unwrap();
        assert_eq!(v["fileChooser"], want);
        let v = ctx.run("browser_click", json!({"nodeId": b, "ref": "e1"})).unwrap();
        assert_eq!(v["fileChooser"], want, "the page keeps working: clicks go on while it is open");
    }
}
