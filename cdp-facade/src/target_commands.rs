//! The `Target` domain's commands as the emulated browser answers them on
//! one client's behalf: the target list and infos, discovery and flat
//! auto-attach (every announcement before its reply), attaching and
//! detaching sessions, and creating, closing and activating pages through
//! the app. Each runs in a [`Turn`] on the browser's [`Targets`] and the
//! client's [`TargetWatch`] and [`Workers`].

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::contexts::{split_context, ContextParamError};
use crate::effect::{Effect, RootCommand, RootWait, Step, Turn};
use crate::guest::GuestId;
use crate::jobs::Job;
use crate::protocol::{self, ClientCommand, INVALID_PARAMS, SERVER_ERROR};
use crate::target_watch::TargetWatch;
use crate::targets::Targets;
use crate::workers::Workers;

/// `Target.getTargets`: every live page the browser knows, then the workers.
pub(crate) fn get_targets(turn: &mut Turn, targets: &mut Targets, workers: &Workers, rc: &RootCommand) -> Step {
    if !targets.ready(turn) {
        return Step::NeedTargets;
    }
    let mut infos: Vec<Value> = targets
        .live_known(&turn.env)
        .into_iter()
        .map(|(g, info)| targets.page_target_info(&turn.env, &g, &info, turn.has_sessions(&g)))
        .collect();
    infos.extend(workers.target_infos(turn, targets));
    turn.reply(rc.cmd.id, rc.session.as_deref(), json!({"targetInfos": infos}));
    Step::Done
}

/// `Target.getTargetInfo`: a page, a worker, or the browser target (no id, or its own).
pub(crate) fn get_target_info(turn: &mut Turn, targets: &mut Targets, workers: &Workers, rc: &RootCommand) -> Step {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "targetId")]
        target_id: Option<String>,
    }
    let (id, session) = (rc.cmd.id, rc.session.as_deref());
    let Some(target_id) = turn.params_or_fail::<Params>(rc).map(|p| p.target_id) else { return Step::Done };
    match target_id {
        Some(t) if t != turn.env.target_id => {
            if !targets.ready(turn) {
                return Step::NeedTargets;
            }
            match targets.live_known(&turn.env).into_iter().find(|(_, info)| info.target_id == t) {
                Some((g, info)) => {
                    let target_info = targets.page_target_info(&turn.env, &g, &info, turn.has_sessions(&g));
                    turn.reply(id, session, json!({"targetInfo": target_info}));
                }
                None => match workers.target_info_of(turn, targets, &t) {
                    Some(info) => turn.reply(id, session, json!({"targetInfo": info})),
                    None => turn.fail(id, session, INVALID_PARAMS, "No target with given id found"),
                },
            }
        }
        _ => {
            let info = turn.env.browser_target_info();
            turn.reply(id, session, json!({"targetInfo": info}));
        }
    }
    Step::Done
}

/// `Target.setDiscoverTargets`: every live page and worker announced before the reply.
pub(crate) fn set_discover_targets(
    turn: &mut Turn,
    targets: &mut Targets,
    watch: &mut TargetWatch,
    workers: &mut Workers,
    rc: &RootCommand,
) -> Step {
    #[derive(Deserialize)]
    struct Params {
        discover: bool,
    }
    let (id, session) = (rc.cmd.id, rc.session.as_deref());
    let Some(discover) = turn.params_or_fail::<Params>(rc).map(|p| p.discover) else { return Step::Done };
    if !discover {
        watch.stop_discovery();
        workers.forget_announced();
        turn.reply(id, session, json!({}));
        return Step::Done;
    }
    if !targets.ready(turn) {
        return Step::NeedTargets;
    }
    watch.start_discovery(turn);
    // targetCreated for existing pages must precede the reply (Puppeteer waits for each to attach).
    announce_all(turn, targets, watch, workers);
    turn.reply(id, session, json!({}));
    Step::Done
}

/// `Target.setAutoAttach` for the browser (flat only): every live page attached before the reply.
pub(crate) fn set_auto_attach(
    turn: &mut Turn,
    targets: &mut Targets,
    watch: &mut TargetWatch,
    workers: &mut Workers,
    rc: &RootCommand,
) -> Step {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "autoAttach")]
        auto_attach: bool,
        flatten: Option<bool>,
    }
    let (id, session) = (rc.cmd.id, rc.session.as_deref());
    let Some(params) = turn.params_or_fail::<Params>(rc) else { return Step::Done };
    if !params.auto_attach {
        watch.auto_attach = false;
        turn.reply(id, session, json!({}));
        return Step::Done;
    }
    if params.flatten != Some(true) {
        turn.fail(id, session, INVALID_PARAMS, "Only flatten mode is supported");
        return Step::Done;
    }
    if !targets.ready(turn) {
        return Step::NeedTargets;
    }
    // Flat model: pages attach here whatever filter was sent (Puppeteer's exclude:page included).
    watch.auto_attach = true;
    watch.auto_attach_owner = rc.session.clone();
    // Existing pages' attachedToTarget must precede the reply.
    announce_all(turn, targets, watch, workers);
    turn.reply(id, session, json!({}));
    Step::Done
}

/// Tells the client of live pages and workers it has not heard of, keeping a worker watcher.
fn announce_all(turn: &mut Turn, targets: &Targets, watch: &mut TargetWatch, workers: &mut Workers) {
    watch.announce_live(turn, targets);
    workers.watch(turn, watch, targets);
    workers.announce(turn, watch, targets);
}

/// `Target.attachToTarget` (flat only): a page, a worker, or the browser target.
pub(crate) fn attach_to_target(
    turn: &mut Turn,
    targets: &mut Targets,
    watch: &TargetWatch,
    workers: &mut Workers,
    rc: &RootCommand,
) -> Step {
    #[derive(Deserialize)]
    struct Params {
        flatten: Option<bool>,
        #[serde(rename = "targetId")]
        target_id: Option<String>,
    }
    let (id, session) = (rc.cmd.id, rc.session.as_deref());
    let params = rc.cmd.params_as::<Params>().ok();
    if params.as_ref().and_then(|p| p.flatten) != Some(true) {
        turn.fail(id, session, INVALID_PARAMS, "Only flatten mode is supported");
        return Step::Done;
    }
    // Chromium attaches to its own browser target too (Puppeteer's `browser.target().createCDPSession()`).
    let target = params.and_then(|p| p.target_id);
    if target.as_ref().is_some_and(|t| *t == turn.env.target_id) {
        attach_to_browser(turn, rc);
        return Step::Done;
    }
    if let Some(t) = target.filter(|t| workers.is_worker(t)) {
        return workers.attach_to_worker(turn, rc, &t);
    }
    let guest = match targets.guest_by_target_param(turn, rc) {
        Ok(Some(g)) => g,
        Ok(None) => return Step::Done,
        Err(step) => return step,
    };
    let Some(info) = targets.known_info(&guest) else { return Step::Done };
    // attachedToTarget goes out inside attach(), before the reply (Puppeteer requires it).
    match watch.attach(turn, targets, &guest, &info, rc.session.clone()) {
        Some(sid) => turn.reply(id, session, json!({"sessionId": sid})),
        None => turn.fail(id, session, SERVER_ERROR, "Target is gone"),
    }
    Step::Done
}

/// `Target.detachFromTarget`: a facade session, or a child session the guest detaches itself.
pub(crate) fn detach_from_target(turn: &mut Turn, targets: &Targets, watch: &TargetWatch, rc: &RootCommand) {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
        #[serde(rename = "targetId")]
        target_id: Option<String>,
    }
    let (id, session) = (rc.cmd.id, rc.session.as_deref());
    let Some(params) = turn.params_or_fail::<Params>(rc) else { return };
    let target = params.session_id.or_else(|| {
        let t = params.target_id?;
        targets
            .live_known(&turn.env)
            .into_iter()
            .find(|(_, i)| i.target_id == t)
            .and_then(|(g, _)| turn.pages_of(&g).first().cloned())
    });
    let Some(target) = target else {
        return turn.fail(id, session, INVALID_PARAMS, "No session with given id");
    };
    if watch.detach_session(turn, targets, &target) {
        turn.reply(id, session, json!({}));
        return;
    }
    // A child session (iframe, worker): the guest detaches it and announces that itself.
    if let Some(guest) = turn.child(&target).map(|c| c.guest.clone()) {
        let params = RawValue::from_string(json!({"sessionId": target}).to_string()).ok();
        let cmd = ClientCommand { id, method: "Target.detachFromTarget".into(), params, session_id: None };
        turn.push(Effect::Forward { cmd, guest, reply_session: rc.session.clone() });
        return;
    }
    turn.fail(id, session, INVALID_PARAMS, "No session with given id");
}

/// A browser session, announced on the caller's session before the reply.
pub(crate) fn attach_to_browser(turn: &mut Turn, rc: &RootCommand) {
    let (id, session) = (rc.cmd.id, rc.session.as_deref());
    let sid = turn.env.session_ids.next();
    turn.push(Effect::AddBrowserSession { session_id: sid.clone(), parent: rc.session.clone() });
    let info = turn.env.browser_target_info();
    turn.event(
        "Target.attachedToTarget",
        &json!({"sessionId": sid, "targetInfo": info, "waitingForDebugger": false}),
        session,
    );
    turn.reply(id, session, json!({"sessionId": sid}));
}

/// `Target.createTarget`: the app opens a node at the normalized URL, in the context named.
pub(crate) fn create_target(turn: &mut Turn, rc: &RootCommand) -> Step {
    #[derive(Deserialize)]
    struct Params {
        #[serde(default)]
        url: String,
        #[serde(default)]
        background: bool,
        focus: Option<bool>,
    }
    let (id, session) = (rc.cmd.id, rc.session.as_deref());
    let Some(params) = turn.params_or_fail::<Params>(rc) else { return Step::Done };
    // Chromium: `focus` when given, else a foreground target is focused.
    let focus = params.focus.unwrap_or(!params.background);
    let raw_url = params.url;
    let context = match split_context(&turn.env, &rc.cmd) {
        Ok((_, context)) => context,
        // Chromium's target handler words it its own way (chromium-bidi matches these words).
        Err(ContextParamError::Unknown(asked)) => {
            turn.fail(id, session, SERVER_ERROR, &format!("Failed to find browser context with id {asked}"));
            return Step::Done;
        }
        Err(e) => {
            turn.fail(id, session, INVALID_PARAMS, &e.to_string());
            return Step::Done;
        }
    };
    let raw_url = if raw_url.trim().is_empty() { "about:blank".to_string() } else { raw_url };
    let url = match turn.env.guests.normalize_url(&raw_url) {
        Ok(url) => url,
        Err(e) => {
            turn.fail(id, session, SERVER_ERROR, &format!("denied url: {e}"));
            return Step::Done;
        }
    };
    turn.run(Job::Open { id, session: rc.session.clone(), url, context, focus });
    Step::Wait(RootWait::Io)
}

/// Focuses the guest's node; the reply follows once it is done, so the page has focus by then.
fn activate(turn: &mut Turn, rc: &RootCommand, guest: GuestId) -> Step {
    turn.run(Job::Activate { id: rc.cmd.id, session: rc.session.clone(), guest });
    Step::Wait(RootWait::Io)
}

/// `Target.closeTarget`: the app closes the node; the reply follows once it is gone.
pub(crate) fn close_target(turn: &mut Turn, targets: &mut Targets, rc: &RootCommand) -> Step {
    match targets.guest_by_target_param(turn, rc) {
        Ok(Some(guest)) => {
            turn.run(Job::Close { id: rc.cmd.id, session: rc.session.clone(), guest });
            Step::Wait(RootWait::Io)
        }
        Ok(None) => Step::Done,
        Err(step) => step,
    }
}

/// `Target.activateTarget`.
pub(crate) fn activate_target(turn: &mut Turn, targets: &mut Targets, rc: &RootCommand) -> Step {
    match targets.guest_by_target_param(turn, rc) {
        Ok(Some(guest)) => activate(turn, rc, guest),
        Ok(None) => Step::Done,
        Err(step) => step,
    }
}

/// `Page.bringToFront`: Chromium activates the page's tab (and so focuses
/// it); here, the node of the page whose session asked.
pub(crate) fn bring_to_front(turn: &mut Turn, rc: &RootCommand) -> Step {
    let (id, session) = (rc.cmd.id, rc.session.as_deref());
    match turn.page_guest(session) {
        Some(guest) => activate(turn, rc, guest),
        None => {
            turn.send(protocol::not_found_reply(id, session, &rc.cmd.method));
            Step::Done
        }
    }
}
