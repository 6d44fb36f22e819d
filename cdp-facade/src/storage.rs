//! `Storage.getCookies`, `setCookies` and `clearCookies`: the cookies of a
//! browser context live in its profile, which CEF reaches only through one
//! of its pages, so the command goes to a live page of the context named.

use crate::contexts::split_context;
use crate::effect::{RootCommand, Step, Turn};
use crate::protocol::{INVALID_PARAMS, SERVER_ERROR};
use crate::targets::Targets;

/// Forwards a profile-wide command (cookies) to a live page of the context
/// it names. A page session's `Storage.*` means the default context, so a
/// page of an isolated context is asked through its own `Network` domain.
pub(crate) fn forward_profile_wide(turn: &mut Turn, targets: &Targets, rc: &RootCommand) -> Step {
    let (id, session) = (rc.cmd.id, rc.session.as_deref());
    let (params, context) = match split_context(&turn.env, &rc.cmd) {
        Ok(p) => p,
        Err(e) => {
            turn.fail(id, session, INVALID_PARAMS, &e.to_string());
            return Step::Done;
        }
    };
    let Some(channel) = targets.page_of_context(&turn.env, context.as_ref()) else {
        turn.fail(
            id,
            session,
            SERVER_ERROR,
            if context.is_some() {
                "No page of this browser context is open: its cookies are reached through one, open a page first"
            } else {
                "No browser node is open: cookies live in the browser profile, open a page first"
            },
        );
        return Step::Done;
    };
    // CEF finds no context by a page's real id for Storage.*; the page's own
    // Network domain reaches the same cookie store and answers in the same shape.
    let method = match (context.is_some(), rc.cmd.method.as_str()) {
        (true, "Storage.getCookies") => "Network.getAllCookies",
        (true, "Storage.setCookies") => "Network.setCookies",
        (true, "Storage.clearCookies") => "Network.clearBrowserCookies",
        (_, other) => other,
    };
    turn.call_through(rc, channel, method.to_string(), params)
}
