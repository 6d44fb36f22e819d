//! Real CEF, no X server: one engine for the whole binary (CEF starts once per
//! process), scenarios run in order, each reported as a pass or a failure.
//! This binary is also the Chromium helper subprocess (`harness = false`).

mod support;

use cef_bridge::input::{ButtonsHeld, Key, KeyInput, Modifiers, MouseButton};
use cef_bridge::{
    BrowserEvent, BrowserHandle, BrowserOptions, DevToolsChannel, DisplayMode, Engine, EngineConfig, Profile,
};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use support::{EventLog, Page, PageServer};

const T: Duration = Duration::from_secs(20);

struct Ctx {
    engine: Engine,
    log: Arc<EventLog>,
    server: PageServer,
    downloads: tempfile::TempDir,
}

type Outcome = Result<(), String>;

/// A named scenario.
type Scenario = (&'static str, fn(&Ctx) -> Outcome);

fn call(ctx: &Ctx, ch: &DevToolsChannel, method: &str, params: Value) -> Result<Value, String> {
    let p = ch.request(method, params, None).map_err(|e| e.to_string())?;
    ctx.engine.pump_until(T, || !p.receiver().is_empty());
    match p.wait(Duration::from_millis(1)).map_err(|e| e.to_string())? {
        Ok(v) => Ok(v),
        Err(e) => Err(format!("{method}: {} ({})", e.message, e.code)),
    }
}

fn eval(ctx: &Ctx, b: &BrowserHandle, expr: &str) -> Result<Value, String> {
    let r = call(
        ctx,
        &b.devtools(),
        "Runtime.evaluate",
        json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
    )?;
    if let Some(ex) = r.get("exceptionDetails") {
        return Err(format!("exception evaluating {expr}: {ex}"));
    }
    Ok(r["result"]["value"].clone())
}

fn open(ctx: &Ctx, url: &str, w: u32, h: u32) -> Result<BrowserHandle, String> {
    let from = ctx.log.mark();
    let b = ctx.engine.create_browser(&BrowserOptions::new(url, w, h)).map_err(|e| e.to_string())?;
    let id = b.id();
    ctx.log
        .wait(&ctx.engine, from, T, |e| matches!(e, BrowserEvent::LoadFinished { id: i, .. } if *i == id))
        .ok_or("page never finished loading")?;
    Ok(b)
}

fn close(ctx: &Ctx, b: &BrowserHandle) -> Outcome {
    let from = ctx.log.mark();
    let id = b.id();
    b.close().map_err(|e| e.to_string())?;
    ctx.log
        .wait(&ctx.engine, from, T, |e| matches!(e, BrowserEvent::Closed { id: i } if *i == id))
        .ok_or("no Closed event")?;
    Ok(())
}

fn wait_frame(
    ctx: &Ctx,
    b: &BrowserHandle,
    pred: impl Fn(&cef_bridge::Frame) -> bool,
) -> Result<cef_bridge::Frame, String> {
    let mut last = None;
    ctx.engine.pump_until(T, || {
        if let Some(f) = b.last_frame() {
            let ok = pred(&f);
            last = Some(f);
            ok
        } else {
            false
        }
    });
    match last {
        Some(f) if pred(&f) => Ok(f),
        Some(f) => Err(format!("frame {}x{} never matched", f.width, f.height)),
        None => Err("no frame painted".into()),
    }
}

const COLOURS: &str = r#"<!doctype html><title>Colour Test — ✓</title>
<style>html,body{margin:0;background:#fff}div{position:fixed;width:200px;height:150px}</style>
<div style="left:0;top:0;background:rgb(255,0,0)"></div>
<div style="left:200px;top:0;background:rgb(0,255,0)"></div>
<div style="left:0;top:150px;background:rgb(0,0,255)"></div>
<div style="left:200px;top:150px;background:rgb(255,255,0)"></div>"#;

const FORM: &str = r#"<!doctype html><title>Form</title>
<style>body{margin:0}button{position:absolute;left:20px;top:20px;width:120px;height:40px}input{position:absolute;left:20px;top:100px;width:200px;height:30px}</style>
<button id=b onclick="window.clicks=(window.clicks||0)+1">Click</button><input id=t>"#;

const SCROLL: &str = r#"<!doctype html><title>Scroll</title><style>body{margin:0;height:5000px}</style>
<script>window.moves=[];addEventListener('mousemove',e=>moves.push([e.clientX,e.clientY]))</script>"#;

const POPUP: &str = r#"<!doctype html><title>Opener</title><style>body{margin:0}button{position:absolute;left:0;top:0;width:300px;height:100px}</style>
<button id=p onclick="window.open('/signin','signin','width=400,height=300')">Sign in</button>
<a id=tab href="/form" target="_blank" style="position:absolute;left:0;top:150px;width:300px;height:50px;display:block">tab</a>"#;

const SIGNIN: &str = r#"<!doctype html><title>Sign-in popup</title><style>body{margin:0}button{position:absolute;left:0;top:0;width:300px;height:100px}</style>
<button id=n onclick="window.open('/form','nested','width=200,height=200')">nested</button>
<script>window.opener && (window.hadOpener = true)</script>"#;

fn scenario_renders_pixels_and_view_rect(ctx: &Ctx) -> Outcome {
    // Defect 2: without the raw get_view_rect slot the view is 0×0 and the
    // browser process dies right after creation; here it must paint 400×300.
    let b = open(ctx, &ctx.server.url("/colours"), 400, 300)?;
    let f = wait_frame(ctx, &b, |f| f.width == 400 && f.height == 300 && f.rgba_at(100, 75) == Some([255, 0, 0, 255]))?;
    let expect =
        [((100, 75), [255, 0, 0]), ((300, 75), [0, 255, 0]), ((100, 225), [0, 0, 255]), ((300, 225), [255, 255, 0])];
    for ((x, y), rgb) in expect {
        let px = f.rgba_at(x, y).ok_or("pixel outside frame")?;
        if px[..3] != rgb {
            return Err(format!("pixel ({x},{y}) is {px:?}, want {rgb:?}"));
        }
    }
    // Resize: the next frame comes at the new size.
    b.resize(240, 180).map_err(|e| e.to_string())?;
    wait_frame(ctx, &b, |f| f.width == 240 && f.height == 180)?;
    close(ctx, &b)
}

fn scenario_devtools_round_trip_and_events(ctx: &Ctx) -> Outcome {
    let from = ctx.log.mark();
    let b = open(ctx, &ctx.server.url("/colours"), 400, 300)?;
    let title = eval(ctx, &b, "document.title")?;
    if title != json!("Colour Test — ✓") {
        return Err(format!("title via DevTools: {title}"));
    }
    // Defect 1: the title travels through a CEF string; decoding it the cef-rs
    // way (CefStringUtf8::from) would have segfaulted.
    let id = b.id();
    ctx.log
        .wait(
            &ctx.engine,
            from,
            T,
            |e| matches!(e, BrowserEvent::TitleChanged { id: i, title } if *i == id && title == "Colour Test — ✓"),
        )
        .ok_or("no TitleChanged event with the decoded title")?;
    // The page's address and loading state were reported while it opened.
    let url = ctx.server.url("/colours");
    let seen: Vec<BrowserEvent> = ctx.log.events.lock()[from..].to_vec();
    if !seen.iter().any(|e| matches!(e, BrowserEvent::AddressChanged { id: i, url: u } if *i == id && *u == url)) {
        return Err(format!("no AddressChanged to {url}"));
    }
    let loading: Vec<bool> = seen
        .iter()
        .filter_map(|e| match e {
            BrowserEvent::LoadingStateChanged { id: i, loading, .. } if *i == id => Some(*loading),
            _ => None,
        })
        .collect();
    if loading.first() != Some(&true) || loading.last() != Some(&false) {
        return Err(format!("LoadingStateChanged sequence {loading:?}, want loading then done"));
    }
    let events = b.devtools().subscribe();
    call(ctx, &b.devtools(), "Page.enable", json!({}))?;
    call(ctx, &b.devtools(), "Page.reload", json!({}))?;
    let mut seen = false;
    ctx.engine.pump_until(T, || {
        while let Ok(e) = events.try_recv() {
            if e.method == "Page.loadEventFired" {
                seen = true;
            }
        }
        seen
    });
    if !seen {
        return Err("Page.loadEventFired never arrived".into());
    }
    let target = call(ctx, &b.devtools(), "Target.getTargetInfo", json!({}))?;
    if target["targetInfo"]["type"] != "page"
        || target["targetInfo"]["browserContextId"].as_str().is_none_or(str::is_empty)
    {
        return Err(format!("unexpected target info {target}"));
    }
    match call(ctx, &b.devtools(), "No.suchMethod", json!({})) {
        Err(e) if e.contains("-32601") => {}
        other => return Err(format!("unknown method should fail with -32601, got {other:?}")),
    }
    close(ctx, &b)
}

const FIND: &str = r#"<!doctype html><title>Find</title><p>milk, bread, milk and more milk</p>"#;

fn scenario_history_progress_and_find(ctx: &Ctx) -> Outcome {
    let from = ctx.log.mark();
    let b = open(ctx, &ctx.server.url("/colours"), 400, 300)?;
    let id = b.id();
    // The last progress report may come just after the load finished.
    ctx.log
        .wait(
            &ctx.engine,
            from,
            T,
            |e| matches!(e, BrowserEvent::LoadProgress { id: i, progress } if *i == id && *progress >= 1.0),
        )
        .ok_or("load progress never reached 1")?;
    let progress: Vec<f64> = ctx.log.events.lock()[from..]
        .iter()
        .filter_map(|e| match e {
            BrowserEvent::LoadProgress { id: i, progress } if *i == id => Some(*progress),
            _ => None,
        })
        .collect();
    if progress.last() != Some(&1.0) || progress.iter().any(|p| !(0.0..=1.0).contains(p)) {
        return Err(format!("load progress {progress:?}, want values in 0..=1 ending at 1"));
    }
    // History as the engine reports it: back after a second page, forward after going back.
    let settled = |from: usize, back: bool, forward: bool| {
        ctx.log.wait(&ctx.engine, from, T, |e| {
            matches!(e, BrowserEvent::LoadingStateChanged { id: i, loading: false, can_go_back, can_go_forward }
                if *i == id && *can_go_back == back && *can_go_forward == forward)
        })
    };
    let from = ctx.log.mark();
    b.navigate(&ctx.server.url("/find")).map_err(|e| e.to_string())?;
    settled(from, true, false).ok_or("no back after a second page")?;
    let from = ctx.log.mark();
    b.go_back().map_err(|e| e.to_string())?;
    settled(from, false, true).ok_or("no forward after going back")?;
    let from = ctx.log.mark();
    b.go_forward().map_err(|e| e.to_string())?;
    settled(from, true, false).ok_or("forward did not return to the second page")?;
    // Find in page: a search counts the three matches; each "find next" highlights
    // one (off-screen Chromium names the active match from the first step on).
    let found = |from: usize| {
        ctx.log.wait(
            &ctx.engine,
            from,
            T,
            |e| matches!(e, BrowserEvent::FindResult { id: i, count: 3, final_update: true, .. } if *i == id),
        )
    };
    let active = |e: Option<BrowserEvent>| match e {
        Some(BrowserEvent::FindResult { active, .. }) => Some(active),
        _ => None,
    };
    let from = ctx.log.mark();
    b.find("milk", true, false).map_err(|e| e.to_string())?;
    found(from).ok_or("find did not count 3 matches")?;
    let from = ctx.log.mark();
    b.find("milk", true, true).map_err(|e| e.to_string())?;
    let first = active(found(from)).ok_or("find next reported no result")?;
    let from = ctx.log.mark();
    b.find("milk", true, true).map_err(|e| e.to_string())?;
    let second = active(found(from)).ok_or("a second find next reported no result")?;
    if !(1..=3).contains(&first) || second != first % 3 + 1 {
        return Err(format!("find next highlighted match {first} then {second}, want consecutive matches of 3"));
    }
    b.stop_finding().map_err(|e| e.to_string())?;
    close(ctx, &b)
}

fn scenario_native_input(ctx: &Ctx) -> Outcome {
    let b = open(ctx, &ctx.server.url("/form"), 400, 300)?;
    wait_frame(ctx, &b, |_| true)?;
    b.set_focus(true).map_err(|e| e.to_string())?;
    for up in [false, true] {
        b.send_mouse_click(60, 40, MouseButton::Left, up, 1, Modifiers::default()).map_err(|e| e.to_string())?;
    }
    let mut clicks = Value::Null;
    ctx.engine.pump_until(T, || {
        clicks = eval(ctx, &b, "window.clicks || 0").unwrap_or(Value::Null);
        clicks == json!(1)
    });
    if clicks != json!(1) {
        return Err(format!("button clicks = {clicks}"));
    }
    for up in [false, true] {
        b.send_mouse_click(60, 115, MouseButton::Left, up, 1, Modifiers::default()).map_err(|e| e.to_string())?;
    }
    ctx.engine.pump_for(Duration::from_millis(200));
    let shift = Modifiers { shift: true, ..Default::default() };
    for (text, mods) in [("h", Modifiers::default()), ("I", shift), ("!", shift)] {
        for pressed in [true, false] {
            let k = KeyInput {
                key: Key::Character(text.into()),
                text: Some(text.into()),
                pressed,
                modifiers: mods,
                keypad: false,
                native_code: 0,
            };
            b.send_key(&k).map_err(|e| e.to_string())?;
        }
    }
    let mut value = Value::Null;
    ctx.engine.pump_until(T, || {
        value = eval(ctx, &b, "document.getElementById('t').value").unwrap_or(Value::Null);
        value == json!("hI!")
    });
    if value != json!("hI!") {
        return Err(format!("typed text = {value}"));
    }
    close(ctx, &b)
}

fn scenario_wheel_move_and_load_failure(ctx: &Ctx) -> Outcome {
    let b = open(ctx, &ctx.server.url("/scroll"), 400, 300)?;
    wait_frame(ctx, &b, |_| true)?;
    for (x, y) in [(10, 20), (150, 120)] {
        b.send_mouse_move(x, y, Modifiers::default(), ButtonsHeld::default(), false).map_err(|e| e.to_string())?;
    }
    let mut moves = Value::Null;
    ctx.engine.pump_until(T, || {
        moves = eval(ctx, &b, "moves").unwrap_or(Value::Null);
        moves.as_array().is_some_and(|m| m.last() == Some(&json!([150, 120])))
    });
    if moves.as_array().and_then(|m| m.last()) != Some(&json!([150, 120])) {
        return Err(format!("mousemove positions seen by the page: {moves}"));
    }
    b.send_mouse_wheel(150, 120, 0, -360, Modifiers::default()).map_err(|e| e.to_string())?;
    let mut scrolled = Value::Null;
    ctx.engine.pump_until(T, || {
        scrolled = eval(ctx, &b, "scrollY").unwrap_or(Value::Null);
        scrolled.as_f64().is_some_and(|y| y > 0.0)
    });
    if !scrolled.as_f64().is_some_and(|y| y > 0.0) {
        return Err(format!("a wheel event down did not scroll the page: scrollY = {scrolled}"));
    }
    // A navigation that cannot connect reports LoadFailed with Chromium's error.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        format!("http://{}/", l.local_addr().map_err(|e| e.to_string())?)
    };
    let id = b.id();
    let from = ctx.log.mark();
    b.navigate(&dead).map_err(|e| e.to_string())?;
    let ev = ctx
        .log
        .wait(&ctx.engine, from, T, |e| matches!(e, BrowserEvent::LoadFailed { id: i, .. } if *i == id))
        .ok_or("no LoadFailed for a refused connection")?;
    let BrowserEvent::LoadFailed { url, error_code, error_text, .. } = ev else { unreachable!() };
    if url != dead || error_code != -102 || !error_text.contains("ERR_CONNECTION_REFUSED") {
        return Err(format!("LoadFailed {{ url: {url}, code: {error_code}, text: {error_text} }}"));
    }
    close(ctx, &b)
}

fn scenario_device_scale_factor(ctx: &Ctx) -> Outcome {
    let b = open(ctx, &ctx.server.url("/colours"), 400, 300)?;
    wait_frame(ctx, &b, |f| f.width == 400 && f.height == 300)?;
    for (scale, (w, h)) in [(2.0, (800, 600)), (0.5, (200, 150)), (1.0, (400, 300))] {
        b.set_scale(scale).map_err(|e| e.to_string())?;
        // The page keeps its CSS layout; the frame has scale × as many pixels, colours where they were.
        let f = wait_frame(ctx, &b, |f| (f.width, f.height) == (w, h))?;
        let quadrant = f.rgba_at(w / 4, h / 4).ok_or("pixel outside frame")?;
        if quadrant[..3] != [255, 0, 0] {
            return Err(format!("at scale {scale} the top-left quadrant is {quadrant:?}"));
        }
        let layout = eval(ctx, &b, "[innerWidth, innerHeight, devicePixelRatio]")?;
        if layout[0] != json!(400) || layout[1] != json!(300) || layout[2].as_f64() != Some(f64::from(scale)) {
            return Err(format!("at scale {scale} the page sees {layout}"));
        }
    }
    if b.set_scale(f32::NAN).is_ok() || b.set_scale(100.0).map(|()| b.scale()) != Ok(4.0) {
        return Err("scale is not validated and clamped".into());
    }
    close(ctx, &b)
}

fn renderer_pids() -> Vec<i32> {
    // Zygote-forked renderers keep the zygote's cmdline: find them by thread name.
    let mut out = vec![];
    let mine = std::process::id() as i32;
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        if pid == mine {
            continue;
        }
        let same_exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok() == std::fs::read_link("/proc/self/exe").ok();
        if !same_exe {
            continue;
        }
        // Renderers run a "Compositor" thread; the GPU process runs "VizCompositorTh".
        let threads: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
            .map(|c| c.trim().to_string())
            .collect();
        if threads.iter().any(|t| t == "Compositor") && !threads.iter().any(|t| t == "VizCompositorTh") {
            out.push(pid);
        }
    }
    out
}

fn scenario_renderer_kill_and_reload(ctx: &Ctx) -> Outcome {
    let b = open(ctx, &ctx.server.url("/colours"), 400, 300)?;
    let pids = renderer_pids();
    if pids.is_empty() {
        return Err("no renderer process found".into());
    }
    // A command left pending must fail as soon as the renderer dies.
    let pending = b
        .devtools()
        .request("Runtime.evaluate", json!({"expression": "new Promise(() => {})", "awaitPromise": true}), None)
        .map_err(|e| e.to_string())?;
    ctx.engine.pump_for(Duration::from_millis(100));
    let from = ctx.log.mark();
    for pid in &pids {
        // SAFETY: killing a renderer process of this test.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    let id = b.id();
    ctx.log
        .wait(&ctx.engine, from, T, |e| matches!(e, BrowserEvent::RenderProcessTerminated { id: i, .. } if *i == id))
        .ok_or("no RenderProcessTerminated event")?;
    match pending.wait(Duration::from_secs(1)) {
        Err(cef_bridge::DevToolsError::Closed(_)) => {}
        other => return Err(format!("pending command after crash: {other:?}")),
    }
    let from = ctx.log.mark();
    b.reload().map_err(|e| e.to_string())?;
    ctx.log
        .wait(&ctx.engine, from, T, |e| matches!(e, BrowserEvent::LoadFinished { id: i, .. } if *i == id))
        .ok_or("no reload after crash")?;
    let title = eval(ctx, &b, "document.title")?;
    if title != json!("Colour Test — ✓") {
        return Err(format!("title after reload: {title}"));
    }
    close(ctx, &b)
}

fn scenario_policy_permissions_downloads(ctx: &Ctx) -> Outcome {
    let b = open(ctx, &ctx.server.url("/form"), 400, 300)?;
    if b.navigate("javascript:alert(1)").is_ok() || b.navigate("file:///etc/passwd").is_ok() {
        return Err("refused scheme accepted by navigate".into());
    }
    let id = b.id();
    let from = ctx.log.mark();
    // A browser-initiated navigation (what a CDP client's Page.navigate is)
    // is not stopped by Chromium itself: the policy must refuse it.
    let _ = call(ctx, &b.devtools(), "Page.navigate", json!({"url": "file:///etc/passwd"}));
    ctx.log
        .wait(
            &ctx.engine,
            from,
            T,
            |e| matches!(e, BrowserEvent::NavigationBlocked { id: i, url } if *i == id && url.starts_with("file:")),
        )
        .ok_or("Page.navigate to file: not blocked")?;
    ctx.engine.pump_for(Duration::from_millis(300));
    let href = eval(ctx, &b, "location.href")?;
    if !href.as_str().is_some_and(|h| h.ends_with("/form")) {
        return Err(format!("page left after a blocked navigation: {href}"));
    }
    let perm = eval(ctx, &b, "Notification.requestPermission()")?;
    if perm != json!("denied") {
        return Err(format!("notification permission: {perm}"));
    }
    let geo = eval(
        ctx,
        &b,
        "new Promise(r => navigator.geolocation.getCurrentPosition(() => r('granted'), e => r('denied:' + e.code)))",
    )?;
    if !geo.as_str().is_some_and(|s| s.starts_with("denied")) {
        return Err(format!("geolocation: {geo}"));
    }
    let from = ctx.log.mark();
    eval(ctx, &b, &format!("location.href = '{}'; 1", ctx.server.url("/file.bin")))?;
    let done = ctx
        .log
        .wait(&ctx.engine, from, T, |e| matches!(e, BrowserEvent::DownloadFinished { .. }))
        .ok_or("download never finished")?;
    let BrowserEvent::DownloadFinished { path, complete, .. } = done else { unreachable!() };
    if !complete || !path.starts_with(ctx.downloads.path()) {
        return Err(format!("download {path:?} complete={complete}"));
    }
    let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
    if bytes != b"0123456789" {
        return Err(format!("downloaded bytes {bytes:?}"));
    }
    // Its start named it by a guid and by the server's Content-Disposition name,
    // and its progress ended once, complete, under the same guid.
    let events = ctx.log.events.lock()[from..].to_vec();
    let guid = events.iter().find_map(|e| match e {
        BrowserEvent::DownloadStarted { guid, suggested_name, url, .. }
            if suggested_name == "data.bin" && url.ends_with("/file.bin") =>
        {
            Some(guid.clone())
        }
        _ => None,
    });
    let guid = guid.ok_or_else(|| format!("no DownloadStarted named data.bin in {events:?}"))?;
    let ends: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, BrowserEvent::DownloadProgress { guid: g, state, .. } if *g == guid && *state != cef_bridge::DownloadState::InProgress))
        .collect();
    if !matches!(
        ends.as_slice(),
        [BrowserEvent::DownloadProgress { received: 10, state: cef_bridge::DownloadState::Completed, .. }]
    ) {
        return Err(format!("download progress ends: {ends:?}"));
    }
    close(ctx, &b)
}

fn scenario_popups(ctx: &Ctx) -> Outcome {
    let b = open(ctx, &ctx.server.url("/popup"), 400, 300)?;
    wait_frame(ctx, &b, |_| true)?;
    let from = ctx.log.mark();
    for up in [false, true] {
        b.send_mouse_click(50, 50, MouseButton::Left, up, 1, Modifiers::default()).map_err(|e| e.to_string())?;
    }
    let opener = b.id();
    let ev = ctx
        .log
        .wait(&ctx.engine, from, T, |e| matches!(e, BrowserEvent::PopupOpened { opener: o, .. } if *o == opener))
        .ok_or("sign-in popup did not open")?;
    let BrowserEvent::PopupOpened { id: popup_id, .. } = ev else { unreachable!() };
    let popup = ctx.engine.browser(popup_id).ok_or("popup handle missing")?;
    ctx.log
        .wait(&ctx.engine, from, T, |e| matches!(e, BrowserEvent::LoadFinished { id, .. } if *id == popup_id))
        .ok_or("popup never loaded")?;
    if eval(ctx, &popup, "window.hadOpener === true")? != json!(true) {
        return Err("popup has no opener: sign-in postMessage would break".into());
    }
    if popup.opener() != Some(opener) {
        return Err("popup handle does not name its opener".into());
    }
    wait_frame(ctx, &popup, |_| true)?;
    // A popup a script opens without a user gesture is denied.
    let from = ctx.log.mark();
    eval(ctx, &b, "window.open('/signin', 'unasked', 'width=300,height=200'); 1")?;
    ctx.engine.pump_for(Duration::from_secs(1));
    if ctx.log.events.lock()[from..]
        .iter()
        .any(|e| matches!(e, BrowserEvent::PopupOpened { .. } | BrowserEvent::Created { .. }))
    {
        return Err("a popup without a user gesture was allowed".into());
    }
    // A popup opening a popup is denied.
    let from = ctx.log.mark();
    for up in [false, true] {
        popup.send_mouse_click(50, 50, MouseButton::Left, up, 1, Modifiers::default()).map_err(|e| e.to_string())?;
    }
    ctx.engine.pump_for(Duration::from_secs(2));
    if ctx.log.events.lock()[from..]
        .iter()
        .any(|e| matches!(e, BrowserEvent::PopupOpened { .. } | BrowserEvent::Created { .. }))
    {
        return Err("nested popup was allowed".into());
    }
    // target=_blank asks for a new node instead of a popup browser.
    let from = ctx.log.mark();
    for up in [false, true] {
        b.send_mouse_click(50, 170, MouseButton::Left, up, 1, Modifiers::default()).map_err(|e| e.to_string())?;
    }
    ctx.log
        .wait(
            &ctx.engine,
            from,
            T,
            |e| matches!(e, BrowserEvent::NewTabRequested { opener: o, url, .. } if *o == opener && url.ends_with("/form")),
        )
        .ok_or("target=_blank not reported")?;
    close(ctx, &popup)?;
    close(ctx, &b)
}

/// Chrome's start-up installs SIGTERM/SIGINT/SIGHUP handlers that begin its own
/// shutdown; the engine must leave these signals to the embedder.
fn scenario_shutdown_signals_left_to_the_app(_: &Ctx) -> Outcome {
    for (name, sig) in [("SIGINT", libc::SIGINT), ("SIGTERM", libc::SIGTERM), ("SIGHUP", libc::SIGHUP)] {
        // SAFETY: only reads the current disposition into a zeroed struct.
        let handler = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                return Err(format!("sigaction({name}) failed"));
            }
            old.sa_sigaction
        };
        if handler != libc::SIG_DFL {
            return Err(format!("{name} still has Chromium's handler after Engine::start"));
        }
    }
    Ok(())
}

/// Child-process roles of the persistence scenario: each is a separate browser
/// process (CEF starts once per process) on the same persistent profile.
fn profile_child(role: &str, profile: &str) -> i32 {
    let log = Arc::new(EventLog::default());
    let dl = std::env::temp_dir();
    let config = EngineConfig {
        profile: Profile::Persistent(profile.into()),
        display: DisplayMode::Headless,
        downloads_dir: dl,
        log_file: None,
        log_level: cef_bridge::ChromiumLog::Fatal,
    };
    let engine = match Engine::start(config, log.clone()) {
        Ok(e) => e,
        Err(cef_bridge::EngineError::ProfileInUse(_)) => {
            println!("profile-in-use");
            return 3;
        }
        Err(e) => {
            println!("start failed: {e}");
            return 1;
        }
    };
    let b = match engine.create_browser(&BrowserOptions::new("about:blank", 200, 100)) {
        Ok(b) => b,
        Err(e) => {
            println!("create failed: {e}");
            return 1;
        }
    };
    let ch = b.devtools();
    let run = |method: &str, params: Value| -> Option<Value> {
        let p = ch.request(method, params, None).ok()?;
        engine.pump_until(T, || !p.receiver().is_empty());
        p.wait(Duration::from_millis(1)).ok()?.ok()
    };
    let code = match role {
        "write" => {
            let expires = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() + 86400)
                .unwrap_or(0);
            let cookie =
                json!({"name": "login", "value": "kept", "domain": "persist.test", "path": "/", "expires": expires});
            run("Storage.setCookies", json!({"cookies": [cookie]})).map_or(1, |_| 0)
        }
        "read" => match run("Storage.getCookies", json!({})) {
            Some(v) => {
                let found =
                    v["cookies"].as_array().into_iter().flatten().any(|c| c["name"] == "login" && c["value"] == "kept");
                println!("cookie-found={found}");
                0
            }
            None => 1,
        },
        "hold" => {
            println!("holding");
            engine.pump_for(Duration::from_secs(6));
            0
        }
        _ => 2,
    };
    drop(b);
    engine.shutdown();
    code
}

/// Cookies written by one run are there in the next; a second live instance on the same profile is refused.
fn persistence_checks() -> Vec<(&'static str, Outcome)> {
    let profile = tempfile::tempdir().expect("tempdir");
    let exe = std::env::current_exe().expect("current exe");
    let run = |role: &str| {
        std::process::Command::new(&exe)
            .env("ENGINE_TEST_ROLE", role)
            .env("ENGINE_TEST_PROFILE", profile.path())
            .output()
    };
    let mut out = vec![];
    let cookies = (|| -> Outcome {
        let w = run("write").map_err(|e| e.to_string())?;
        if !w.status.success() {
            return Err(format!("writer failed: {}", String::from_utf8_lossy(&w.stdout)));
        }
        let r = run("read").map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&r.stdout);
        if !text.contains("cookie-found=true") {
            return Err(format!("cookie lost across restarts: {text}"));
        }
        Ok(())
    })();
    out.push(("persistent profile keeps cookies across restarts", cookies));
    let exclusive = (|| -> Outcome {
        let mut holder = std::process::Command::new(&exe)
            .env("ENGINE_TEST_ROLE", "hold")
            .env("ENGINE_TEST_PROFILE", profile.path())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let mut line = String::new();
        use std::io::BufRead;
        let stdout = holder.stdout.take().ok_or("no stdout")?;
        std::io::BufReader::new(stdout).read_line(&mut line).map_err(|e| e.to_string())?;
        let second = run("read").map_err(|e| e.to_string())?;
        let _ = holder.wait();
        if second.status.code() != Some(3) {
            return Err(format!(
                "second instance on a live profile was not refused: {}",
                String::from_utf8_lossy(&second.stdout)
            ));
        }
        Ok(())
    })();
    out.push(("one instance per profile", exclusive));
    out
}

fn main() {
    if let Some(code) = cef_bridge::run_subprocess_if_child() {
        std::process::exit(code);
    }
    if let (Ok(role), Ok(profile)) = (std::env::var("ENGINE_TEST_ROLE"), std::env::var("ENGINE_TEST_PROFILE")) {
        std::process::exit(profile_child(&role, &profile));
    }
    let persistence = persistence_checks();
    let mut pages = HashMap::new();
    pages.insert("/colours", Page::html(COLOURS));
    pages.insert("/form", Page::html(FORM));
    pages.insert("/find", Page::html(FIND));
    pages.insert("/scroll", Page::html(SCROLL));
    pages.insert("/popup", Page::html(POPUP));
    pages.insert("/signin", Page::html(SIGNIN));
    pages.insert(
        "/file.bin",
        Page {
            content_type: "application/octet-stream",
            headers: vec![("Content-Disposition", "attachment; filename=\"data.bin\"".into())],
            body: b"0123456789".to_vec(),
        },
    );
    let server = PageServer::start(pages);
    let downloads = tempfile::tempdir().expect("tempdir");
    let log = Arc::new(EventLog::default());
    let config = EngineConfig {
        profile: Profile::Ephemeral,
        display: DisplayMode::Headless,
        downloads_dir: downloads.path().to_path_buf(),
        log_file: std::env::var_os("TERMSPRAWL_CEF_LOG").map(Into::into),
        log_level: Default::default(),
    };
    let engine = match Engine::start(config, log.clone()) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("engine failed to start: {e}");
            println!("engine: 0 passed, 1 failed");
            std::process::exit(1);
        }
    };
    let ctx = Ctx { engine, log, server, downloads };
    let scenarios: &[Scenario] = &[
        ("shutdown signals are left to the app", scenario_shutdown_signals_left_to_the_app),
        ("renders page pixels at the requested view size (defect 2)", scenario_renders_pixels_and_view_rect),
        ("DevTools round trip, events, decoded titles (defect 1)", scenario_devtools_round_trip_and_events),
        ("native mouse and keyboard input", scenario_native_input),
        ("history, load progress and find in page", scenario_history_progress_and_find),
        ("wheel, mouse move and a failed load", scenario_wheel_move_and_load_failure),
        ("device scale factor: same layout, scaled frames", scenario_device_scale_factor),
        ("renderer kill -9: terminated event, pending fails, reload", scenario_renderer_kill_and_reload),
        ("URL policy, denied permissions, downloads", scenario_policy_permissions_downloads),
        ("sign-in popups, nested popups denied, new-tab requests", scenario_popups),
    ];
    let (mut passed, mut failed) = (0, 0);
    for (name, r) in persistence {
        match r {
            Ok(()) => {
                passed += 1;
                println!("test {name} ... ok");
            }
            Err(e) => {
                failed += 1;
                println!("test {name} ... FAILED: {e}");
            }
        }
    }
    for (name, f) in scenarios {
        match f(&ctx) {
            Ok(()) => {
                passed += 1;
                println!("test {name} ... ok");
            }
            Err(e) => {
                failed += 1;
                println!("test {name} ... FAILED: {e}");
            }
        }
    }
    let Ctx { engine, .. } = ctx;
    engine.shutdown();
    // Any process running this test binary but this one, orphans included.
    let exe = std::fs::read_link("/proc/self/exe").ok();
    let me = std::process::id().to_string();
    let left: Vec<String> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|pid| pid.chars().all(|c| c.is_ascii_digit()) && *pid != me)
        .filter(|pid| exe.is_some() && std::fs::read_link(format!("/proc/{pid}/exe")).ok() == exe)
        .filter(|pid| {
            !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.rfind(')').is_some_and(|i| s[i + 2..].starts_with('Z')))
        })
        .collect();
    if left.is_empty() {
        passed += 1;
        println!("test shutdown leaves no Chromium process ... ok");
    } else {
        failed += 1;
        println!("test shutdown leaves no Chromium process ... FAILED: {left:?}");
    }
    println!("engine: {passed} passed, {failed} failed");
    std::process::exit(i32::from(failed > 0));
}
