//! A test context in the style of GPUI's `TestAppContext`: a real
//! [`Runtime`] on a temporary data directory with a fake browser engine
//! ([`FakeEngine`]: pages that answer the CDP the tool operations send), a
//! recording PTY spawner (nothing starts, or, with
//! [`TestContext::with_terminals`], fake terminals start) and no window. The test thread is
//! the main thread: [`TestContext::call`] submits a tool call through
//! [`RuntimeToolHost::execute`] (the worker pool, as the tool server does)
//! and ticks the loop until the reply arrives, so every operation runs
//! in-process in milliseconds.

use super::engine::{Browser, BrowserEngine, LiveBrowser};
use super::terminals::RecordingSpawner;
use super::tools::{DesktopEnv, RuntimeToolHost};
use super::{AppHandle, Runtime, RuntimeConfig, Waker};
use crate::model::{AgentKind, NodeId, NodeKind};
use cef_bridge::input::{ButtonsHeld, KeyInput, Modifiers, MouseButton};
use cef_bridge::{
    url_policy, BrowserError, BrowserEvent, BrowserId, BrowserOptions, DevToolsChannel, EngineError, Frame, JsDialog,
    RawSender,
};
use crossbeam_channel::Sender;
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tool_server::{ExecuteFuture, ToolCall, ToolError, ToolHost, ToolIdentity};

/// Longest one call may take before the test fails (operations take milliseconds).
const CALL_LIMIT: Duration = Duration::from_secs(10);
/// How long the loop sleeps between turns while a call is out.
const TURN: Duration = Duration::from_millis(1);
/// The title every fake page reports.
pub(crate) const FAKE_TITLE: &str = "Fake page";

/// A typed call from an operation name and its JSON arguments, through the
/// server's own validation (what an agent's request becomes).
pub(crate) fn tool(operation: &str, args: Value) -> ToolCall {
    let request = tool_server::validate_tool_request(&json!({"operation": operation, "args": args}))
        .unwrap_or_else(|e| panic!("{operation} {args}: {e}"));
    ToolCall::from_request(request).unwrap_or_else(|e| panic!("{operation}: {e}"))
}

/// The runtime, its tool host and the fakes behind them.
pub(crate) struct TestContext {
    /// The runtime under test (the test thread is its main thread).
    pub(crate) rt: Runtime,
    /// The fake engine's pages.
    pub(crate) pages: Arc<FakePages>,
    /// What the runtime asked to spawn.
    pub(crate) spawner: Arc<RecordingSpawner>,
    /// The first agent node (added at start), the usual caller.
    pub(crate) agent: ToolIdentity,
    host: RuntimeToolHost,
    waker: Arc<Waker>,
    dir: tempfile::TempDir,
}

impl TestContext {
    /// A runtime with one open project (`<tmp>/project`) holding one agent node.
    pub(crate) fn new() -> Self {
        Self::with_call_timeout(super::CALL_TIMEOUT)
    }

    /// The same, with operations' main-thread deadline at `timeout`.
    pub(crate) fn with_call_timeout(timeout: Duration) -> Self {
        Self::with(timeout, RecordingSpawner::default())
    }

    /// The same, where terminal nodes start: each gets a fake terminal
    /// ([`RecordingSpawner::terminal`] finds it).
    pub(crate) fn with_terminals() -> Self {
        Self::with(super::CALL_TIMEOUT, RecordingSpawner::starting())
    }

    /// The same, as the window's runtime is (views follow the zoom; a person answers page menus).
    pub(crate) fn windowed() -> Self {
        Self::build(super::CALL_TIMEOUT, RecordingSpawner::default(), true)
    }

    /// A context with operations' main-thread deadline at `timeout` whose PTYs start through `spawner`.
    pub(crate) fn with(timeout: Duration, spawner: RecordingSpawner) -> Self {
        Self::build(timeout, spawner, false)
    }

    fn build(timeout: Duration, spawner: RecordingSpawner, windowed: bool) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let data_dir = dir.path().join("data");
        let config = RuntimeConfig {
            data_dir: data_dir.clone(),
            project: Some(dir.path().join("project")),
            browser_control: true,
            views_follow_zoom: windowed,
        };
        let waker = Waker::new();
        let (events_tx, events_rx) = crossbeam_channel::unbounded();
        let pages = Arc::new(FakePages::new(events_tx));
        let (handle, jobs) = AppHandle::new(waker.clone());
        let engine = Box::new(FakeEngine(pages.clone()));
        let mut rt = Runtime::new(config, engine, handle, jobs, events_rx);
        let spawner = Arc::new(spawner);
        rt.use_pty_spawner(spawner.clone());
        let state = crate::paths::agent_tools(&data_dir);
        local_guard::files::ensure_private_dir(&state).expect("agent-tools dir");
        rt.tools.shared.attach_state_dir(&state);
        let host = RuntimeToolHost::new(rt.handle(), rt.tools.shared.clone(), data_dir).with_call_timeout(timeout);
        let agent = add_agent(&mut rt, "Agent A");
        TestContext { rt, pages, spawner, agent, host, waker, dir }
    }

    /// The same context, where `terminal_external` sees `desktop` instead of the process's environment.
    pub(crate) fn with_desktop(mut self, desktop: DesktopEnv) -> Self {
        self.host = self.host.with_desktop(desktop);
        self
    }

    /// The project folder.
    pub(crate) fn folder(&self) -> PathBuf {
        self.rt.project().expect("a project is open").folder().to_path_buf()
    }

    /// The temporary directory everything lives in (the project is `project/` in it).
    pub(crate) fn root(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// Adds an agent node (a `custom` agent: not set up, so nothing launches) and returns its identity.
    pub(crate) fn add_agent(&mut self, title: &str) -> ToolIdentity {
        add_agent(&mut self.rt, title)
    }

    /// Adds a node of `kind` at (x, y) and returns its id.
    pub(crate) fn add(&mut self, kind: NodeKind, title: &str, rect: (f64, f64, f64, f64)) -> NodeId {
        self.rt.add_node(kind, title, (rect.2, rect.3), Some((rect.0, rect.1))).expect("node added")
    }

    /// Runs `call` as `identity` and returns its result.
    pub(crate) fn call(&mut self, identity: &ToolIdentity, call: ToolCall) -> Result<Value, ToolError> {
        let reply = self.host.execute(identity, call);
        self.finish(reply)
    }

    /// Runs `operation` with `args` as the first agent.
    pub(crate) fn run(&mut self, operation: &str, args: Value) -> Result<Value, ToolError> {
        let agent = self.agent.clone();
        self.call(&agent, tool(operation, args))
    }

    /// The tool host the tool server would call (for what it asks besides operations: hooks, project folders).
    pub(crate) fn host(&self) -> &RuntimeToolHost {
        &self.host
    }

    /// Submits `call` without running the loop (a stalled main thread until [`finish`](Self::finish)).
    pub(crate) fn submit(&self, identity: &ToolIdentity, call: ToolCall) -> ExecuteFuture {
        self.host.execute(identity, call)
    }

    /// Runs the loop until `reply` is ready.
    pub(crate) fn finish(&mut self, mut reply: ExecuteFuture) -> Result<Value, ToolError> {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let end = Instant::now() + CALL_LIMIT;
        loop {
            self.rt.tick();
            if let Poll::Ready(r) = reply.as_mut().poll(&mut cx) {
                return r;
            }
            assert!(Instant::now() < end, "the operation did not answer within {CALL_LIMIT:?}");
            self.waker.wait_until(Instant::now() + TURN);
        }
    }

    /// A node of the open project.
    pub(crate) fn node(&self, id: &str) -> Option<crate::model::Node> {
        let id = NodeId::new(id).ok()?;
        self.rt.project().and_then(|p| p.node(&id)).cloned()
    }

    /// The fake page showing a browser node.
    pub(crate) fn page_of(&self, node: &str) -> Option<Arc<FakeBrowser>> {
        let id = NodeId::new(node).ok()?;
        let (_, b) = self.rt.browsers.for_node(&id)?;
        self.pages.get(b.id())
    }
}

/// Adds a `custom` agent node to the open project, right of everything (the
/// first at the origin, so tests can name positions); its identity.
fn add_agent(rt: &mut Runtime, title: &str) -> ToolIdentity {
    let p = rt.project().expect("a project is open");
    let folder = p.folder().to_path_buf();
    let at = p.bounds().map_or((0.0, 0.0), |b| (b.x + b.w + 40.0, b.y));
    let kind = NodeKind::Agent { agent: AgentKind::Custom, cwd: folder, worktree: None };
    let id = rt.add_node(kind, title, (600.0, 400.0), Some(at)).expect("agent node");
    let project = rt.project_id().expect("a project is open");
    ToolIdentity::new(id.as_str(), project.as_str())
}

/// The fake engine's browsers, and where their events go.
pub(crate) struct FakePages {
    browsers: Mutex<Vec<Arc<FakeBrowser>>>,
    next_id: AtomicU64,
    events: Sender<BrowserEvent>,
    /// What a CDP client set as the download behaviour.
    pub(crate) downloads: cef_bridge::DownloadPolicy,
    /// Live isolated contexts, and the count handed out.
    pub(crate) contexts: Mutex<Vec<cef_bridge::RequestContextId>>,
    next_context: AtomicU64,
    /// Site permissions set per context, in order (`None` setting: a reset).
    pub(crate) site_permissions: Mutex<Vec<SitePermissionCall>>,
}

/// One site-permission call the fake engine was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SitePermissionCall {
    pub(crate) context: cef_bridge::RequestContextId,
    pub(crate) site: Option<String>,
    pub(crate) permissions: Vec<cef_bridge::SitePermission>,
    /// `None`: every permission of the context was reset.
    pub(crate) setting: Option<cef_bridge::SiteSetting>,
}

impl FakePages {
    fn new(events: Sender<BrowserEvent>) -> Self {
        Self {
            browsers: Mutex::new(vec![]),
            next_id: AtomicU64::new(1),
            events,
            downloads: Default::default(),
            contexts: Mutex::new(vec![]),
            next_context: AtomicU64::new(0),
            site_permissions: Mutex::new(vec![]),
        }
    }

    /// A browser by id.
    pub(crate) fn get(&self, id: BrowserId) -> Option<Arc<FakeBrowser>> {
        self.browsers.lock().iter().find(|b| b.id == id).cloned()
    }
}

/// A browser engine without Chromium: browsers exist at once and never paint.
struct FakeEngine(Arc<FakePages>);

impl BrowserEngine for FakeEngine {
    fn pump(&self) {}
    fn pump_interval(&self) -> Duration {
        cef_bridge::MAX_PUMP_INTERVAL
    }
    fn next_pump_deadline(&self) -> Instant {
        Instant::now() + cef_bridge::MAX_PUMP_INTERVAL
    }
    fn create_browser(&self, options: &BrowserOptions) -> Result<Browser, EngineError> {
        // The real engine's own refusal, so the runtime sees the same answer.
        if !url_policy::is_allowed_nav_url(&options.url) {
            let scheme = options.url.split(':').next().unwrap_or("").to_string();
            return Err(BrowserError::Refused(url_policy::UrlPolicyError::RefusedScheme(scheme)).into());
        }
        if let Some(c) = options.context.filter(|c| !self.0.contexts.lock().contains(c)) {
            return Err(EngineError::NoSuchContext(c));
        }
        let id = BrowserId(self.0.next_id.fetch_add(1, Ordering::Relaxed));
        let b = Arc::new(FakeBrowser::new(id, options, self.0.events.clone()));
        self.0.browsers.lock().push(b.clone());
        Ok(b)
    }
    fn browser(&self, id: BrowserId) -> Option<Browser> {
        self.0.get(id).map(|b| b as Browser)
    }
    fn create_context(&self) -> Result<cef_bridge::RequestContextId, EngineError> {
        let n = self.0.next_context.fetch_add(1, Ordering::Relaxed) + 1;
        let id = cef_bridge::RequestContextId::from_raw(n);
        self.0.contexts.lock().push(id);
        Ok(id)
    }
    fn dispose_context(&self, id: cef_bridge::RequestContextId) -> bool {
        let mut live = self.0.contexts.lock();
        let before = live.len();
        live.retain(|c| *c != id);
        live.len() < before
    }
    fn set_site_permissions(
        &self,
        context: cef_bridge::RequestContextId,
        site: Option<&str>,
        permissions: &[cef_bridge::SitePermission],
        setting: cef_bridge::SiteSetting,
    ) -> Result<(), EngineError> {
        if !self.0.contexts.lock().contains(&context) {
            return Err(EngineError::NoSuchContext(context));
        }
        self.0.site_permissions.lock().push(SitePermissionCall {
            context,
            site: site.map(str::to_string),
            permissions: permissions.to_vec(),
            setting: Some(setting),
        });
        Ok(())
    }
    fn reset_site_permissions(&self, context: cef_bridge::RequestContextId) -> Result<(), EngineError> {
        if !self.0.contexts.lock().contains(&context) {
            return Err(EngineError::NoSuchContext(context));
        }
        let call = SitePermissionCall { context, site: None, permissions: vec![], setting: None };
        self.0.site_permissions.lock().push(call);
        Ok(())
    }
    fn download_policy(&self) -> cef_bridge::DownloadPolicy {
        self.0.downloads.clone()
    }
    fn shutdown(self: Box<Self>) {}
}

/// One fake page: records what the runtime did to it and answers DevTools.
pub(crate) struct FakeBrowser {
    id: BrowserId,
    devtools: Arc<DevToolsChannel>,
    page: Arc<FakePage>,
    size: Mutex<(u32, u32)>,
    scale: Mutex<f32>,
    closed: AtomicBool,
    /// The isolated context it was created in.
    pub(crate) context: Option<cef_bridge::RequestContextId>,
    /// Every URL navigated to (normalised), in order.
    pub(crate) navigations: Mutex<Vec<String>>,
    /// The dialog the fake page "opened" ([`FakeBrowser::open_dialog`]).
    dialog: Mutex<Option<JsDialog>>,
    /// Every dialog answer: accept, the text a prompt returned.
    pub(crate) dialog_answers: Mutex<Vec<(bool, Option<String>)>>,
    /// The file chooser the fake page waits on ([`FakeBrowser::open_file_chooser`]).
    file_chooser: Mutex<Option<cef_bridge::FileChooser>>,
    /// The context menu the fake page waits on ([`FakeBrowser::open_context_menu`]).
    context_menu: Mutex<Option<cef_bridge::ContextMenu>>,
    /// Every context menu answer the page got, in order (`None`: closed without a command of its own).
    pub(crate) menu_answers: Mutex<Vec<Option<cef_bridge::MenuCommand>>>,
    /// Every history and load command ("back", "forward", "reload", "stop"), in order.
    pub(crate) history: Mutex<Vec<&'static str>>,
    /// Every find-in-page request (text, forward, find_next), and `None` for each stop.
    pub(crate) finds: Mutex<Vec<Option<(String, bool, bool)>>>,
    /// The paint rate the runtime set last.
    pub(crate) frame_rate: Mutex<u32>,
    /// Hidden as a background tab.
    pub(crate) hidden: AtomicBool,
    /// How many full repaints the runtime asked for.
    pub(crate) invalidations: AtomicUsize,
    events: Sender<BrowserEvent>,
}

impl FakeBrowser {
    fn new(id: BrowserId, options: &BrowserOptions, events: Sender<BrowserEvent>) -> Self {
        let devtools = Arc::new(DevToolsChannel::new());
        let page = Arc::new(FakePage {
            url: Mutex::new(options.url.clone()),
            marker: Mutex::new(None),
            focused: AtomicBool::new(false),
            channel: Arc::downgrade(&devtools),
            sent: Mutex::new(vec![]),
        });
        devtools.attach(page.clone());
        Self {
            id,
            devtools,
            page,
            size: Mutex::new((options.width, options.height)),
            context: options.context,
            scale: Mutex::new(1.0),
            closed: AtomicBool::new(false),
            navigations: Mutex::new(vec![]),
            dialog: Mutex::new(None),
            dialog_answers: Mutex::new(vec![]),
            file_chooser: Mutex::new(None),
            context_menu: Mutex::new(None),
            menu_answers: Mutex::new(vec![]),
            history: Mutex::new(vec![]),
            finds: Mutex::new(vec![]),
            frame_rate: Mutex::new(options.frame_rate),
            hidden: AtomicBool::new(false),
            invalidations: AtomicUsize::new(0),
            events,
        }
    }

    /// Sends `event` as the engine would (this browser's load state, find results…).
    pub(crate) fn report(&self, event: BrowserEvent) {
        let _ = self.events.send(event);
    }

    /// This browser's id.
    pub(crate) fn browser_id(&self) -> BrowserId {
        self.id
    }

    fn record(&self, command: &'static str) -> Result<(), BrowserError> {
        if self.is_closed() {
            return Err(BrowserError::Closed);
        }
        self.history.lock().push(command);
        Ok(())
    }

    /// Acts as if the page called `alert`/`confirm`/`prompt` (the engine's event included).
    /// The page opens a file chooser, as CEF reports one.
    pub(crate) fn open_file_chooser(&self, chooser: cef_bridge::FileChooser) {
        *self.file_chooser.lock() = Some(chooser.clone());
        let _ = self.events.send(BrowserEvent::FileChooserOpened { id: self.id, chooser });
    }

    /// The page opens its context menu, as CEF reports one.
    pub(crate) fn open_context_menu(&self, menu: cef_bridge::ContextMenu) {
        *self.context_menu.lock() = Some(menu.clone());
        let _ = self.events.send(BrowserEvent::ContextMenuOpened { id: self.id, menu });
    }

    pub(crate) fn open_dialog(&self, dialog: JsDialog) {
        *self.dialog.lock() = Some(dialog.clone());
        let _ = self.events.send(BrowserEvent::DialogOpened { id: self.id, dialog });
    }

    /// The page's URL now.
    pub(crate) fn current_url(&self) -> String {
        self.page.url.lock().clone()
    }

    /// Every DevTools method the page was sent, in order.
    pub(crate) fn methods(&self) -> Vec<String> {
        self.page.sent.lock().iter().map(|(m, _)| m.clone()).collect()
    }

    /// Every DevTools command the page was sent (method and params), in order.
    pub(crate) fn sent(&self) -> Vec<(String, Value)> {
        self.page.sent.lock().clone()
    }
}

impl LiveBrowser for FakeBrowser {
    fn id(&self) -> BrowserId {
        self.id
    }
    fn context(&self) -> Option<cef_bridge::RequestContextId> {
        self.context
    }
    fn devtools(&self) -> Arc<DevToolsChannel> {
        self.devtools.clone()
    }
    fn url(&self) -> String {
        self.current_url()
    }
    fn is_loading(&self) -> bool {
        false
    }
    fn is_created(&self) -> bool {
        true
    }
    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
    fn view_size(&self) -> (u32, u32) {
        *self.size.lock()
    }
    fn take_frame(&self) -> Option<Frame> {
        None
    }
    fn last_frame(&self) -> Option<Frame> {
        None
    }
    fn acknowledge_frame(&self) {}
    fn scale(&self) -> f32 {
        *self.scale.lock()
    }
    fn set_scale(&self, scale: f32) -> Result<(), BrowserError> {
        *self.scale.lock() = scale;
        Ok(())
    }
    fn resize(&self, width: u32, height: u32) -> Result<(), BrowserError> {
        *self.size.lock() = (width, height);
        Ok(())
    }
    fn navigate(&self, address: &str) -> Result<String, BrowserError> {
        if self.is_closed() {
            return Err(BrowserError::Closed);
        }
        // The same policy and normalisation as cef-bridge's navigate.
        let url = url_policy::normalize_address(address)?;
        self.navigations.lock().push(url.clone());
        *self.page.url.lock() = url.clone();
        *self.page.marker.lock() = None;
        Ok(url)
    }
    fn go_back(&self) -> Result<(), BrowserError> {
        self.record("back")
    }
    fn go_forward(&self) -> Result<(), BrowserError> {
        self.record("forward")
    }
    fn reload(&self) -> Result<(), BrowserError> {
        self.record("reload")
    }
    fn stop(&self) -> Result<(), BrowserError> {
        self.record("stop")
    }
    fn find(&self, text: &str, forward: bool, find_next: bool) -> Result<(), BrowserError> {
        self.finds.lock().push(Some((text.to_string(), forward, find_next)));
        Ok(())
    }
    fn stop_finding(&self) -> Result<(), BrowserError> {
        self.finds.lock().push(None);
        Ok(())
    }
    fn close(&self) -> Result<(), BrowserError> {
        if self.closed.swap(true, Ordering::AcqRel) {
            return Err(BrowserError::Closed);
        }
        self.devtools.detach("browser closed");
        let _ = self.events.send(BrowserEvent::Closed { id: self.id });
        Ok(())
    }
    fn invalidate(&self) -> Result<(), BrowserError> {
        self.invalidations.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
    fn set_frame_rate(&self, fps: u32) -> Result<(), BrowserError> {
        *self.frame_rate.lock() = fps.clamp(1, 60);
        Ok(())
    }
    fn frame_rate(&self) -> u32 {
        *self.frame_rate.lock()
    }
    fn set_hidden(&self, hidden: bool) -> Result<(), BrowserError> {
        self.hidden.store(hidden, Ordering::Relaxed);
        Ok(())
    }
    fn is_hidden(&self) -> bool {
        self.hidden.load(Ordering::Relaxed)
    }
    fn set_focus(&self, _focused: bool) -> Result<(), BrowserError> {
        Ok(())
    }
    fn send_mouse_move(&self, _: i32, _: i32, _: Modifiers, _: ButtonsHeld, _: bool) -> Result<(), BrowserError> {
        Ok(())
    }
    fn send_mouse_click(
        &self,
        _: i32,
        _: i32,
        _: MouseButton,
        _: bool,
        _: u32,
        _: Modifiers,
    ) -> Result<(), BrowserError> {
        Ok(())
    }
    fn send_mouse_wheel(&self, _: i32, _: i32, _: i32, _: i32, _: Modifiers) -> Result<(), BrowserError> {
        Ok(())
    }
    fn send_key(&self, _: &KeyInput) -> Result<(), BrowserError> {
        Ok(())
    }
    fn file_chooser(&self) -> Option<cef_bridge::FileChooser> {
        self.file_chooser.lock().clone()
    }
    fn answer_file_chooser(&self, _: Option<Vec<std::path::PathBuf>>) -> Result<(), BrowserError> {
        self.file_chooser.lock().take().map(|_| ()).ok_or(BrowserError::NoFileChooser)
    }
    fn dialog(&self) -> Option<JsDialog> {
        self.dialog.lock().clone()
    }
    fn context_menu(&self) -> Option<cef_bridge::ContextMenu> {
        self.context_menu.lock().clone()
    }
    fn answer_context_menu(
        &self,
        command: Option<cef_bridge::MenuCommand>,
    ) -> Result<cef_bridge::ContextMenu, BrowserError> {
        let mut slot = self.context_menu.lock();
        let open = slot.as_ref().ok_or(BrowserError::NoContextMenu)?;
        if let Some(c) = command.filter(|c| !open.offers(*c)) {
            return Err(BrowserError::NotInMenu(c));
        }
        let menu = slot.take().ok_or(BrowserError::NoContextMenu)?;
        // What the page gets: its own commands, and none for the app's (as CEF's callback is answered).
        self.menu_answers.lock().push(command.filter(|c| c.is_page_command()));
        let _ = self.events.send(BrowserEvent::ContextMenuClosed { id: self.id });
        Ok(menu)
    }
    fn answer_dialog(&self, accept: bool, prompt_text: Option<&str>) -> Result<JsDialog, BrowserError> {
        let dialog = self.dialog.lock().take().ok_or(BrowserError::NoDialog)?;
        let text = (dialog.kind == cef_bridge::DialogKind::Prompt)
            .then(|| prompt_text.unwrap_or(&dialog.default_prompt).to_string());
        self.dialog_answers.lock().push((accept, text));
        let _ = self.events.send(BrowserEvent::DialogClosed { id: self.id });
        Ok(dialog)
    }
}

/// The document of a fake page and its DevTools end: the tool operations'
/// scripts (load probe, navigation tag, inspect, locate, focus check) and
/// DOM commands get what a loaded page with one button (`#go`, backend node
/// 1, ref `e1`) in one frame would answer, and input and screenshot commands
/// what Chromium answers.
struct FakePage {
    url: Mutex<String>,
    /// The navigation marker the current document was tagged with.
    marker: Mutex<Option<String>>,
    /// Whether the button has keyboard focus.
    focused: AtomicBool,
    channel: Weak<DevToolsChannel>,
    sent: Mutex<Vec<(String, Value)>>,
}

/// The report the page model script gives for the fake page: one button.
fn fake_report(url: &str) -> Value {
    json!({
        "url": url, "title": FAKE_TITLE, "text": "Hello", "textChars": 5,
        "items": [{"n": 0, "role": "button", "name": "Go", "lm": -1}],
        "landmarks": [], "hidden": 0, "off": 0, "viewport": [800, 600, 0, 0, 800, 600],
    })
}

/// The page model inspect returns for the fake page.
pub(crate) fn fake_page_model(url: &str) -> Value {
    json!({
        "url": url, "title": FAKE_TITLE, "text": "Hello", "elements": "e1 button Go\n",
        "scroll": "0,0 of 800x600, viewport 800x600",
    })
}

/// The fake page's screenshot: a 4 × 3 PNG.
pub(crate) fn fake_screenshot() -> Vec<u8> {
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, 4, 3);
    encoder.set_color(png::ColorType::Rgba);
    let mut writer = encoder.write_header().expect("png header");
    writer.write_image_data(&[0x80; 4 * 3 * 4]).expect("png data");
    drop(writer);
    png
}

impl FakePage {
    fn evaluate(&self, expression: &str) -> Value {
        if let Some(tag) = expression.strip_prefix("window.__termsprawlNav = ") {
            let marker: String = serde_json::from_str(tag).unwrap_or_default();
            *self.marker.lock() = Some(marker.clone());
            return json!(marker);
        }
        if expression.contains("window.__termsprawlNav || null") {
            return json!({
                "url": *self.url.lock(), "title": FAKE_TITLE, "ready": "complete", "marker": *self.marker.lock(),
            });
        }
        if expression.contains("document.querySelector(") {
            let selector: String = expression
                .strip_prefix("document.querySelector(")
                .and_then(|rest| rest.strip_suffix(')'))
                .and_then(|arg| serde_json::from_str(arg).ok())
                .unwrap_or_default();
            return if selector == "#go" { json!({"objectId": "node-1"}) } else { json!({"subtype": "null"}) };
        }
        if expression.contains("nodes.info") {
            return json!({"objectId": "nodes"});
        }
        if expression.contains("return {focused:") {
            return json!({"focused": self.focused.load(Ordering::Acquire)});
        }
        Value::Null
    }

    fn answer(&self, method: &str, params: &Value) -> Result<Value, Value> {
        let no_node = || json!({"code": -32000, "message": "No node with given id found"});
        match method {
            "Runtime.evaluate" => {
                let expression = params.get("expression").and_then(Value::as_str).unwrap_or("");
                Ok(match self.evaluate(expression) {
                    Value::Null => json!({"result": {"type": "undefined"}}),
                    handle if params["returnByValue"] == false => json!({"result": handle}),
                    value => json!({"result": {"type": "object", "value": value}}),
                })
            }
            "Page.getFrameTree" => Ok(json!({"frameTree": {"frame": {"id": "F1", "url": *self.url.lock()}}})),
            "Page.createIsolatedWorld" => Ok(json!({"executionContextId": 7})),
            "Runtime.getProperties" if params["objectId"] == "nodes" => Ok(json!({"result": [
                {"name": "0", "value": {"type": "object", "subtype": "node", "objectId": "node-1"}},
                {"name": "length", "value": {"type": "number", "value": 1}},
                {"name": "info", "value": {"type": "string", "value": fake_report(&self.url.lock()).to_string()}},
            ]})),
            "DOM.describeNode" if params["objectId"] == "node-1" => {
                Ok(json!({"node": {"backendNodeId": 1, "nodeName": "BUTTON"}}))
            }
            "DOM.resolveNode" if params["backendNodeId"] == 1 => Ok(json!({"object": {"objectId": "node-1"}})),
            "DOM.resolveNode" => Err(no_node()),
            "Runtime.callFunctionOn" if params["objectId"] == "node-1" => {
                let focus = params.pointer("/arguments/0/value/focus") == Some(&json!(true));
                if focus {
                    self.focused.store(true, Ordering::Release);
                }
                Ok(json!({"result": {"type": "object", "value": {"x": 50, "y": 20}}}))
            }
            "DOM.getContentQuads" if params["objectId"] == "node-1" => {
                Ok(json!({"quads": [[10, 10, 90, 10, 90, 30, 10, 30]]}))
            }
            "Runtime.releaseObjectGroup" => Ok(json!({})),
            "Page.captureScreenshot" => {
                use base64::Engine as _;
                Ok(json!({"data": base64::engine::general_purpose::STANDARD.encode(fake_screenshot())}))
            }
            "Input.dispatchMouseEvent" | "Input.dispatchKeyEvent" | "Input.insertText" => Ok(json!({})),
            _ => Err(json!({"code": -32601, "message": format!("'{method}' wasn't found")})),
        }
    }
}

impl RawSender for FakePage {
    fn send_raw(&self, message: &[u8]) {
        let Ok(v) = serde_json::from_slice::<Value>(message) else { return };
        let method = v.get("method").and_then(Value::as_str).unwrap_or("").to_owned();
        let params = v.get("params").cloned().unwrap_or(Value::Null);
        let reply = match self.answer(&method, &params) {
            Ok(result) => json!({"id": v["id"], "result": result}),
            Err(error) => json!({"id": v["id"], "error": error}),
        };
        self.sent.lock().push((method, params));
        // Answered inside the send, as CEF answers some commands synchronously.
        if let Some(channel) = self.channel.upgrade() {
            channel.deliver(reply.to_string().as_bytes());
        }
    }
}
