//! Driving a page as a person would: `browser_click` (real mouse events at
//! the element's centre) and `browser_type` (key events, or committed text).

use super::super::context::OpContext;
use super::dialog::{answer, dialog_json, file_chooser_json, no_dialog, DIALOG_CANCEL, DIALOG_INPUT, DIALOG_OK};
use super::locate::locate;
use super::session::{page_error, step_error};
use super::target::target;
use crate::runtime::engine::Browser;
use page_driver::{
    DriveError, Input, KeyEvent, KeyEventType, Method, MouseButton, MouseEvent, MouseEventType, Page, PageExt as _,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tool_server::{ClickArgs, ToolError, TypeArgs};

/// Deadline of one mouse event's reply.
const DEVTOOLS_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether an element other than the page itself has focus, when typing without a target.
const FOCUSED_JS: &str = r#"(() => { const a = document.activeElement; return {focused: !!a && a !== document.body && a !== document.documentElement}; })()"#;

/// What [`FOCUSED_JS`] answers.
#[derive(Deserialize)]
struct Focus {
    #[serde(default)]
    focused: bool,
}

/// Dispatches a mouse event whose reply the page may hold back by opening a
/// dialog (a click whose handler calls `confirm`): `Ok(None)` once a dialog is open.
fn press_unless_dialog(handle: &Browser, page: &dyn Page, event: MouseEvent) -> Result<Option<()>, ToolError> {
    let mut pending = page.dispatch(&Input::Mouse(event)).map_err(step_error)?;
    let end = Instant::now() + DEVTOOLS_TIMEOUT;
    loop {
        match pending.poll(Duration::from_millis(50)) {
            Ok(reply) => return reply.map(Some).map_err(step_error),
            Err(waiting) => pending = waiting,
        }
        if handle.dialog().is_some() {
            return Ok(None);
        }
        if Instant::now() >= end {
            return Err(ToolError::page_error(format!(
                "{} timed out after {DEVTOOLS_TIMEOUT:?}",
                Method::DispatchMouseEvent
            )));
        }
    }
}

/// `browser_click`: real mouse events at the element's centre.
pub(crate) fn click(ctx: &OpContext, args: ClickArgs) -> Result<Value, ToolError> {
    let id = args.node_id.as_str();
    let t = target(ctx, id)?;
    ctx.shared.owners().check_drive(id, ctx.caller())?;
    match args.element_ref.as_deref() {
        Some(DIALOG_OK) => return answer(&t, true, None),
        Some(DIALOG_CANCEL) => return answer(&t, false, None),
        _ => no_dialog(&t.handle)?,
    }
    let page = t.handle.page();
    let (x, y) = locate(&ctx.shared, &*page, args.element_ref.as_deref(), args.selector.as_deref(), false)?;
    let mut v = json!({"nodeId": t.node, "x": x, "y": y});
    // A handler that opens a dialog holds the event's reply back until someone answers.
    for (kind, buttons) in
        [(MouseEventType::MouseMoved, 0), (MouseEventType::MousePressed, 1), (MouseEventType::MouseReleased, 0)]
    {
        let button = if kind == MouseEventType::MouseMoved { MouseButton::None } else { MouseButton::Left };
        let event = MouseEvent { kind, x, y, button, buttons, click_count: 1 };
        if press_unless_dialog(&t.handle, &*page, event)?.is_none() {
            break;
        }
    }
    if let Some(d) = t.handle.dialog() {
        v["dialog"] = dialog_json(&d);
    }
    if let Some(c) = t.handle.file_chooser() {
        v["fileChooser"] = file_chooser_json(&c);
    }
    Ok(v)
}

/// `browser_type`: focuses the element (or keeps the focused one) and types the text.
pub(crate) fn type_text(ctx: &OpContext, args: TypeArgs) -> Result<Value, ToolError> {
    let (id, text) = (args.node_id.as_str(), args.text.as_str());
    let t = target(ctx, id)?;
    ctx.shared.owners().check_drive(id, ctx.caller())?;
    if args.element_ref.as_deref() == Some(DIALOG_INPUT) {
        return answer(&t, true, Some(text));
    }
    no_dialog(&t.handle)?;
    let page = t.handle.page();
    if args.element_ref.is_some() || args.selector.is_some() {
        locate(&ctx.shared, &*page, args.element_ref.as_deref(), args.selector.as_deref(), true)?;
    } else if !page.evaluate::<Option<Focus>>(FOCUSED_JS).map_err(page_error)?.is_some_and(|f| f.focused) {
        return Err(ToolError::invalid_argument("no element has focus; pass a selector or ref"));
    }
    let sent = send_in_order(&*page, &typing_events(text));
    let mut v = json!({"nodeId": t.node, "typed": text.chars().count()});
    match (sent, t.handle.dialog()) {
        // A key (Enter in a form) opened a dialog: the page holds the rest of the keys back.
        (_, Some(d)) => v["dialog"] = dialog_json(&d),
        (Err(e), None) => return Err(e),
        (Ok(()), None) => {}
    }
    Ok(v)
}

/// Commands in flight at once while typing: enough to keep the renderer busy,
/// few enough that a long text fails early when the page goes away.
const TYPING_WINDOW: usize = 256;

/// The input that types `text` as a person would on a US keyboard (what
/// Puppeteer's `keyboard.type` sends): a keyDown carrying the character and
/// a keyUp for each character that layout has a key for, Enter for line
/// breaks, Tab for tabs, and inserted text for runs of anything else
/// (accents, CJK, emoji), as an input method would commit them.
fn typing_events(text: &str) -> Vec<Input> {
    use cef_bridge::input::{char_key_code, us_dom_code};
    let mut events = vec![];
    let mut other = String::new();
    let key = |events: &mut Vec<Input>, key: &str, code: &str, vk: i32, text: Option<&str>| {
        let down = KeyEvent {
            kind: KeyEventType::KeyDown,
            key: key.to_owned(),
            code: code.to_owned(),
            windows_virtual_key_code: vk,
            native_virtual_key_code: vk,
            text: text.map(str::to_owned),
            unmodified_text: text.map(str::to_owned),
        };
        let up = KeyEvent { kind: KeyEventType::KeyUp, text: None, unmodified_text: None, ..down.clone() };
        events.push(Input::Key(down));
        events.push(Input::Key(up));
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let named = match c {
            // CR LF is one line break.
            '\r' if chars.peek() == Some(&'\n') => continue,
            '\r' | '\n' => Some(("Enter", "Enter", 13, Some("\r"))),
            '\t' => Some(("Tab", "Tab", 9, None)),
            _ => None,
        };
        let code = us_dom_code(c);
        if named.is_none() && code.is_none() {
            other.push(c);
            continue;
        }
        if !other.is_empty() {
            events.push(Input::InsertText(std::mem::take(&mut other)));
        }
        match named {
            Some((k, code, vk, text)) => key(&mut events, k, code, vk, text),
            None => {
                let s = c.to_string();
                key(&mut events, &s, code.unwrap_or_default(), char_key_code(c), Some(&s));
            }
        }
    }
    if !other.is_empty() {
        events.push(Input::InsertText(other));
    }
    events
}

/// Sends `inputs` in order, a window at a time, and fails on the first error.
fn send_in_order(page: &dyn Page, inputs: &[Input]) -> Result<(), ToolError> {
    for window in inputs.chunks(TYPING_WINDOW) {
        let pending =
            window.iter().map(|input| page.dispatch(input).map_err(step_error)).collect::<Result<Vec<_>, _>>()?;
        for reply in pending {
            reply.wait().map_err(|e| match e {
                DriveError::Protocol { error, .. } => {
                    ToolError::page_error(format!("typing failed: {}", error.message))
                }
                e => step_error(e),
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(events: &[Input]) -> Vec<String> {
        events
            .iter()
            .map(|input| match input {
                Input::InsertText(text) => format!("insert {text}"),
                Input::Key(key) => {
                    // As the page gets it.
                    let p = serde_json::to_value(key).unwrap();
                    format!(
                        "{} {} {} {} {}",
                        p["type"].as_str().unwrap(),
                        p["key"].as_str().unwrap(),
                        p["code"].as_str().unwrap(),
                        p["windowsVirtualKeyCode"],
                        p["text"].as_str().unwrap_or("-")
                    )
                }
                Input::Mouse(m) => panic!("typing moved the mouse: {m:?}"),
            })
            .collect()
    }

    #[test]
    fn typing_sends_key_events_per_character_and_commits_the_rest_as_text() {
        let got = summary(&typing_events("aZ!\r\n\té日本x"));
        assert_eq!(
            got,
            [
                "keyDown a KeyA 65 a",
                "keyUp a KeyA 65 -",
                "keyDown Z KeyZ 90 Z",
                "keyUp Z KeyZ 90 -",
                "keyDown ! Digit1 49 !",
                "keyUp ! Digit1 49 -",
                "keyDown Enter Enter 13 \r",
                "keyUp Enter Enter 13 -",
                "keyDown Tab Tab 9 -",
                "keyUp Tab Tab 9 -",
                "insert é日本",
                "keyDown x KeyX 88 x",
                "keyUp x KeyX 88 -",
            ]
        );
        assert_eq!(summary(&typing_events("😀")), ["insert 😀"]);
        assert!(typing_events("").is_empty());
    }

    // The operations in-process, against fake pages.
    use super::super::fixtures::{owned_browser, unowned_browser};
    use crate::runtime::test_context::TestContext;
    use serde_json::json;
    use tool_server::ErrorCode;

    #[test]
    fn browser_click_presses_the_mouse_at_the_element_centre() {
        let mut ctx = TestContext::new();
        let b = owned_browser(&mut ctx);
        let v = ctx.run("browser_click", json!({"nodeId": b, "ref": "e1"})).unwrap();
        assert_eq!(v, json!({"nodeId": b, "x": 50.0, "y": 20.0}));
        let mouse: Vec<_> = ctx
            .page_of(&b)
            .unwrap()
            .inputs()
            .into_iter()
            .filter_map(|i| match i {
                Input::Mouse(m) => Some((m.kind, m.buttons, m.x)),
                _ => None,
            })
            .collect();
        assert_eq!(
            mouse,
            [
                (MouseEventType::MouseMoved, 0, 50.0),
                (MouseEventType::MousePressed, 1, 50.0),
                (MouseEventType::MouseReleased, 0, 50.0),
            ]
        );
        let e = ctx.run("browser_click", json!({"nodeId": b, "selector": "#nope"})).unwrap_err();
        assert_eq!((e.code, e.message()), (ErrorCode::PageError, "selector matched nothing: #nope"));
        let sent = ctx.page_of(&b).unwrap().methods().len();
        let e = ctx.run("browser_click", json!({"nodeId": b, "ref": "e9"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound);
        assert!(e.message().starts_with("no element with ref e9: it was removed"), "{}", e.message());
        let e = ctx.run("browser_click", json!({"nodeId": b, "ref": "f3e1"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFound, "a frame slot this app never gave out: {}", e.message());
        let e = ctx.run("browser_click", json!({"nodeId": b, "ref": "#go"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{}", e.message());
        let page = ctx.page_of(&b).unwrap();
        let after: Vec<_> = page.methods().into_iter().skip(sent).collect();
        assert!(!after.iter().any(|m| m.name().starts_with("Input.")), "nothing was clicked: {after:?}");
        let unowned = unowned_browser(&mut ctx);
        let e = ctx.run("browser_click", json!({"nodeId": unowned, "ref": "e1"})).unwrap_err();
        assert_eq!(e.code, ErrorCode::Refused);
        assert_eq!(e.message(), format!("browser {unowned} has no owner; claim it with browser_claim first"));
    }

    #[test]
    fn browser_type_focuses_the_element_and_types_key_by_key() {
        let mut ctx = TestContext::new();
        let b = owned_browser(&mut ctx);
        let e = ctx.run("browser_type", json!({"nodeId": b, "text": "hi"})).unwrap_err();
        assert_eq!((e.code, e.message()), (ErrorCode::InvalidArgument, "no element has focus; pass a selector or ref"));
        let v = ctx.run("browser_type", json!({"nodeId": b, "selector": "#go", "text": "hé!"})).unwrap();
        assert_eq!(v, json!({"nodeId": b, "typed": 3}));
        let typed = ctx.page_of(&b).unwrap().inputs();
        assert_eq!(typed, typing_events("hé!"));
        // Focused now: typing without a target goes to it.
        assert_eq!(
            ctx.run("browser_type", json!({"nodeId": b, "text": "x"})).unwrap(),
            json!({"nodeId": b, "typed": 1})
        );
    }
}
