//! Browser windows: each guest's node answers as the window of its page
//! (`Browser.getWindowForTarget`, `getWindowBounds`, `setWindowBounds`,
//! `setContentsSize`). A node is always in the "normal" state; its size is
//! its page's size, and setting one resizes the node through the app.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::effect::{RootCommand, RootWait, Step, Turn};
use crate::guest::WindowBounds;
use crate::jobs::Job;
use crate::protocol::{INVALID_PARAMS, SERVER_ERROR};
use crate::targets::Targets;

/// Chromium's words when a window id or target has no window.
const NOT_FOUND: &str = "Browser window not found";

/// `Browser.Bounds` as clients send it (every field optional).
#[derive(Deserialize, Default)]
struct BoundsParam {
    width: Option<u32>,
    height: Option<u32>,
    #[serde(rename = "windowState")]
    window_state: Option<String>,
}

#[derive(Deserialize)]
struct SetWindowBounds {
    #[serde(rename = "windowId")]
    window_id: i64,
    bounds: BoundsParam,
}

#[derive(Deserialize)]
struct SetContentsSize {
    #[serde(rename = "windowId")]
    window_id: i64,
    width: Option<u32>,
    height: Option<u32>,
}

#[derive(Deserialize)]
struct WindowIdParam {
    #[serde(rename = "windowId")]
    window_id: i64,
}

#[derive(Deserialize)]
struct OptionalTarget {
    #[serde(rename = "targetId")]
    target_id: Option<String>,
}

/// The CDP form of a node's bounds.
fn bounds_json(b: &WindowBounds) -> Value {
    json!({"left": b.left, "top": b.top, "width": b.width, "height": b.height, "windowState": "normal"})
}

/// The size a resize asks for, or why it is refused (`None` fields keep the current size).
fn requested_size(
    current: &WindowBounds,
    width: Option<u32>,
    height: Option<u32>,
    state: Option<&str>,
) -> Result<Option<(u32, u32)>, String> {
    match state {
        None | Some("normal") => {}
        Some(other) => {
            return Err(format!(
            "windowState '{other}' is not supported: a browser node is always 'normal' (set width and height instead)"
        ))
        }
    }
    if width == Some(0) || height == Some(0) {
        return Err("width and height must be positive".into());
    }
    let size = (width.unwrap_or(current.width), height.unwrap_or(current.height));
    Ok((size != (current.width, current.height)).then_some(size))
}

/// `Browser.getWindowForTarget`: the target given, else the page whose session asked.
pub(crate) fn window_for_target(turn: &mut Turn, targets: &mut Targets, rc: &RootCommand) -> Step {
    let (id, session) = (rc.cmd.id, rc.session.as_deref());
    let wants_target = matches!(rc.cmd.params_as::<OptionalTarget>(), Ok(OptionalTarget { target_id: Some(_) }));
    let guest = if wants_target {
        match targets.guest_by_target_param(turn, rc) {
            Ok(Some(g)) => g,
            Ok(None) => return Step::Done,
            Err(step) => return step,
        }
    } else {
        match turn.page_guest(session) {
            Some(g) => g,
            None => {
                turn.fail(id, session, SERVER_ERROR, NOT_FOUND);
                return Step::Done;
            }
        }
    };
    match turn.env.guests.window_bounds(&guest) {
        Some(b) => {
            let window_id = turn.env.windows.of(&guest);
            turn.reply(id, session, json!({"windowId": window_id, "bounds": bounds_json(&b)}));
        }
        None => turn.fail(id, session, SERVER_ERROR, NOT_FOUND),
    }
    Step::Done
}

/// `Browser.getWindowBounds`.
pub(crate) fn window_bounds(turn: &mut Turn, rc: &RootCommand) {
    let (id, session) = (rc.cmd.id, rc.session.as_deref());
    let Some(p) = turn.params_or_fail::<WindowIdParam>(rc) else { return };
    let bounds = turn.env.windows.guest(p.window_id).and_then(|g| turn.env.guests.window_bounds(&g));
    match bounds {
        Some(b) => turn.reply(id, session, json!({"bounds": bounds_json(&b)})),
        None => turn.fail(id, session, SERVER_ERROR, NOT_FOUND),
    }
}

/// `Browser.setWindowBounds` and `Browser.setContentsSize`: resize the node
/// (position and states other than normal are not the client's to set).
pub(crate) fn set_window_size(turn: &mut Turn, rc: &RootCommand) -> Step {
    let (id, session) = (rc.cmd.id, rc.session.as_deref());
    let (window_id, width, height, state) = if rc.cmd.method == "Browser.setContentsSize" {
        let Some(p) = turn.params_or_fail::<SetContentsSize>(rc) else { return Step::Done };
        (p.window_id, p.width, p.height, None)
    } else {
        let Some(p) = turn.params_or_fail::<SetWindowBounds>(rc) else { return Step::Done };
        (p.window_id, p.bounds.width, p.bounds.height, p.bounds.window_state)
    };
    let Some((guest, current)) =
        turn.env.windows.guest(window_id).and_then(|g| turn.env.guests.window_bounds(&g).map(|b| (g, b)))
    else {
        turn.fail(id, session, SERVER_ERROR, NOT_FOUND);
        return Step::Done;
    };
    let (width, height) = match requested_size(&current, width, height, state.as_deref()) {
        Err(e) => {
            turn.fail(id, session, INVALID_PARAMS, &e);
            return Step::Done;
        }
        Ok(None) => {
            turn.reply(id, session, json!({}));
            return Step::Done;
        }
        Ok(Some(size)) => size,
    };
    turn.run(Job::Resize { id, session: rc.session.clone(), guest, width, height });
    Step::Wait(RootWait::Io)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: WindowBounds = WindowBounds { left: 10, top: 20, width: 800, height: 600 };

    #[test]
    fn sizes_keep_missing_edges_and_refuse_other_states() {
        assert_eq!(requested_size(&NOW, Some(1024), None, None), Ok(Some((1024, 600))));
        assert_eq!(requested_size(&NOW, None, Some(700), Some("normal")), Ok(Some((800, 700))));
        assert_eq!(requested_size(&NOW, Some(800), Some(600), None), Ok(None));
        assert!(requested_size(&NOW, None, None, Some("maximized")).unwrap_err().contains("'maximized'"));
        assert!(requested_size(&NOW, Some(0), None, None).is_err());
    }

    #[test]
    fn bounds_report_the_normal_state() {
        assert_eq!(
            bounds_json(&NOW),
            json!({"left": 10, "top": 20, "width": 800, "height": 600, "windowState": "normal"})
        );
    }
}
