//! [`CdpPage`]: the typed operations spoken as CDP over a [`Transport`].

use crate::commands::{
    CallArgument, CallFunctionOn, CaptureScreenshot, Command, CreateIsolatedWorld, DescribeNode, EnablePage, Evaluate,
    GetBoxModel, GetContentQuads, GetFrameOwner, GetFrameTree, GetLayoutMetrics, GetProperties, GetTargets, GetVersion,
    InsertText, Navigate, ReleaseObjectGroup, ResolveNode, SetEmulatedMedia, SetLifecycleEventsEnabled,
    SetScrollbarsHidden,
};
use crate::error::DriveError;
use crate::ids::{BackendNodeId, ExecutionContextId, FrameId, ObjectId, SessionId};
use crate::input::Input;
use crate::lifecycle::Lifecycle;
use crate::page::Page;
use crate::pending::{Limit, Pending};
use crate::transport::Transport;
use crate::values::{
    BoxModel, BrowserVersion, FrameTree, FunctionCall, LayoutMetrics, MediaFeature, Navigation, NodeDescription,
    PropertyDescriptor, Quad, RemoteObject, ScreenshotOptions,
};
use base64::Engine as _;
use serde_json::Value;
use std::time::{Duration, Instant};

/// How long a command's reply is waited for unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// A page driven over CDP.
pub struct CdpPage<T> {
    transport: T,
    limit: Limit,
}

impl<T: Transport> CdpPage<T> {
    /// A page over `transport`, waiting [`DEFAULT_TIMEOUT`] for each reply.
    pub fn new(transport: T) -> Self {
        CdpPage { transport, limit: Limit { timeout: DEFAULT_TIMEOUT, deadline: None } }
    }

    /// The same, waiting at most `timeout` for each reply.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.limit.timeout = timeout;
        self
    }

    /// The same, waiting for no reply past `deadline`.
    pub fn until(mut self, deadline: Instant) -> Self {
        self.limit.deadline = Some(deadline);
        self
    }

    /// Sends `command` without waiting.
    fn send<C: Command>(&self, session: Option<&SessionId>, command: &C) -> Result<Pending<C::Reply>, DriveError>
    where
        C::Reply: Send + 'static,
    {
        let method = C::METHOD;
        let params = serde_json::to_value(command).map_err(|source| DriveError::Encode { method, source })?;
        let call = self.transport.send(session, method, params)?;
        let decode =
            Box::new(move |v: Value| serde_json::from_value(v).map_err(|source| DriveError::Decode { method, source }));
        Ok(Pending::flying(method, call, decode, self.limit))
    }

    /// Sends `command` and waits for its reply.
    fn call<C: Command>(&self, session: Option<&SessionId>, command: &C) -> Result<C::Reply, DriveError>
    where
        C::Reply: Send + 'static,
    {
        self.send(session, command)?.wait()
    }
}

impl<T: Transport> Page for CdpPage<T> {
    fn evaluate_value(&self, expression: &str) -> Result<Value, DriveError> {
        self.evaluate_later(expression)?.wait()
    }

    fn evaluate_later(&self, expression: &str) -> Result<Pending<Value>, DriveError> {
        let command =
            Evaluate { expression, context_id: None, return_by_value: true, await_promise: true, object_group: None };
        Ok(self.send(None, &command)?.and_then(|reply| Ok(reply.into_result()?.value.unwrap_or(Value::Null))))
    }

    fn evaluate_object(
        &self,
        session: Option<&SessionId>,
        expression: &str,
        context: Option<ExecutionContextId>,
        group: &str,
    ) -> Result<RemoteObject, DriveError> {
        let command = Evaluate {
            expression,
            context_id: context,
            return_by_value: false,
            await_promise: false,
            object_group: Some(group),
        };
        Ok(self.call(session, &command)?.into_result()?)
    }

    fn call_function_on(
        &self,
        session: Option<&SessionId>,
        call: &FunctionCall<'_>,
    ) -> Result<RemoteObject, DriveError> {
        let command = CallFunctionOn {
            object_id: call.object,
            function_declaration: call.declaration,
            arguments: [CallArgument { value: call.args.clone() }],
            return_by_value: call.by_value,
            object_group: call.group,
        };
        Ok(self.call(session, &command)?.into_result()?)
    }

    fn properties(
        &self,
        session: Option<&SessionId>,
        object: &ObjectId,
    ) -> Result<Vec<PropertyDescriptor>, DriveError> {
        Ok(self.call(session, &GetProperties { object_id: object, own_properties: true })?.result)
    }

    fn release_object_group(&self, session: Option<&SessionId>, group: &str) -> Result<(), DriveError> {
        self.call(session, &ReleaseObjectGroup { object_group: group }).map(drop)
    }

    fn frame_tree(&self, session: Option<&SessionId>) -> Result<FrameTree, DriveError> {
        Ok(self.call(session, &GetFrameTree {})?.frame_tree)
    }

    fn create_isolated_world(
        &self,
        session: Option<&SessionId>,
        frame: &FrameId,
        world: &str,
    ) -> Result<ExecutionContextId, DriveError> {
        Ok(self.call(session, &CreateIsolatedWorld { frame_id: frame, world_name: world })?.execution_context_id)
    }

    fn enable_page_events(&self) -> Result<(), DriveError> {
        self.call(None, &EnablePage {}).map(drop)
    }

    fn set_lifecycle_events(&self, enabled: bool) -> Result<(), DriveError> {
        self.call(None, &SetLifecycleEventsEnabled { enabled }).map(drop)
    }

    fn lifecycle(&self) -> Lifecycle {
        Lifecycle::new(self.transport.events())
    }

    fn navigate(&self, url: &str) -> Result<Navigation, DriveError> {
        self.call(None, &Navigate { url })
    }

    fn layout_metrics(&self) -> Result<LayoutMetrics, DriveError> {
        self.call(None, &GetLayoutMetrics {})
    }

    fn screenshot(&self, options: &ScreenshotOptions) -> Result<Vec<u8>, DriveError> {
        let shot = self.call(None, &CaptureScreenshot(options))?;
        Ok(base64::engine::general_purpose::STANDARD.decode(shot.data)?)
    }

    fn set_scrollbars_hidden(&self, hidden: bool) -> Result<(), DriveError> {
        self.call(None, &SetScrollbarsHidden { hidden }).map(drop)
    }

    fn set_emulated_media(&self, features: &[MediaFeature]) -> Result<(), DriveError> {
        self.call(None, &SetEmulatedMedia { features }).map(drop)
    }

    fn describe_node(
        &self,
        session: Option<&SessionId>,
        object: &ObjectId,
    ) -> Result<Pending<NodeDescription>, DriveError> {
        Ok(self.send(session, &DescribeNode { object_id: object })?.map(|d| d.node))
    }

    fn resolve_node(
        &self,
        session: Option<&SessionId>,
        node: BackendNodeId,
        group: &str,
    ) -> Result<RemoteObject, DriveError> {
        Ok(self.call(session, &ResolveNode { backend_node_id: node, object_group: group })?.object)
    }

    fn content_quads(&self, session: Option<&SessionId>, object: &ObjectId) -> Result<Vec<Quad>, DriveError> {
        Ok(self.call(session, &GetContentQuads { object_id: object })?.quads)
    }

    fn frame_owner(&self, session: Option<&SessionId>, frame: &FrameId) -> Result<BackendNodeId, DriveError> {
        Ok(self.call(session, &GetFrameOwner { frame_id: frame })?.backend_node_id)
    }

    fn box_model(&self, session: Option<&SessionId>, node: BackendNodeId) -> Result<BoxModel, DriveError> {
        Ok(self.call(session, &GetBoxModel { backend_node_id: node })?.model)
    }

    fn dispatch(&self, input: &Input) -> Result<Pending<()>, DriveError> {
        Ok(match input {
            Input::Mouse(event) => self.send(None, event)?.map(drop),
            Input::Key(event) => self.send(None, event)?.map(drop),
            Input::InsertText(text) => self.send(None, &InsertText { text })?.map(drop),
        })
    }

    fn list_targets(&self) -> Result<(), DriveError> {
        self.call(None, &GetTargets {}).map(drop)
    }

    fn attach_frame(&self, frame: &FrameId) -> Result<SessionId, DriveError> {
        self.transport.attach_hidden(frame, self.limit.left())
    }

    fn detach(&self, session: &SessionId) {
        self.transport.detach_hidden(session, self.limit.left());
    }

    fn crashed(&self) -> bool {
        self.transport.crashed()
    }

    fn browser_version(&self) -> Result<BrowserVersion, DriveError> {
        self.call(None, &GetVersion {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::TransportError;
    use crate::input::{KeyEvent, KeyEventType, MouseButton, MouseEvent, MouseEventType};
    use crate::page::PageExt;
    use crate::scripted::{Script, Scripted};
    use crate::values::{Clip, ImageFormat};
    use serde_json::json;

    fn page(script: impl IntoIterator<Item = Script>) -> CdpPage<Scripted> {
        CdpPage::new(Scripted::new(script))
    }

    /// The parameters of the only command sent.
    fn only_params(p: &CdpPage<Scripted>) -> (Option<String>, &'static str, Value) {
        let sent = p.transport.sent();
        assert_eq!(sent.len(), 1, "{sent:?}");
        sent[0].clone()
    }

    #[test]
    fn evaluate_runs_by_value_awaiting_a_promise_and_reads_the_type_asked_for() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Probe {
            url: String,
            ready: String,
        }
        let p = page([Script::Reply(
            r#"{"result":{"result":{"type":"object","value":{"url":"https://example.com/","ready":"complete"}}}}"#,
        )]);
        let probe: Probe = p.evaluate("probe()").unwrap();
        assert_eq!(probe, Probe { url: "https://example.com/".into(), ready: "complete".into() });
        assert_eq!(
            only_params(&p),
            (None, "Runtime.evaluate", json!({"expression": "probe()", "returnByValue": true, "awaitPromise": true}))
        );
        let p = page([Script::Reply(r#"{"result":{"result":{"type":"undefined"}}}"#)]);
        assert_eq!(p.evaluate::<Value>("void 0").unwrap(), Value::Null, "undefined reads as null");
        let p = page([Script::Reply(r#"{"result":{"result":{"type":"string","value":"x"}}}"#)]);
        let e = p.evaluate::<u32>("'x'").unwrap_err();
        assert!(matches!(e, DriveError::Decode { method: crate::Method::Evaluate, .. }), "{e}");
    }

    #[test]
    fn a_thrown_error_is_the_one_script_error() {
        // What Chromium 132 answers for `throw new Error("boom")`.
        let p = page([Script::Reply(
            r#"{"result":{"result":{"type":"object","subtype":"error","className":"Error","description":"Error: boom\n    at <anonymous>:1:7","objectId":"-1.1.1"},"exceptionDetails":{"exceptionId":1,"text":"Uncaught","lineNumber":0,"columnNumber":6,"scriptId":"5","stackTrace":{"callFrames":[{"functionName":"","scriptId":"5","url":"","lineNumber":0,"columnNumber":6}]},"exception":{"type":"object","subtype":"error","className":"Error","description":"Error: boom\n    at <anonymous>:1:7","objectId":"-1.1.2"}}}}"#,
        )]);
        let DriveError::Script(e) = p.evaluate::<Value>("throw new Error('boom')").unwrap_err() else {
            panic!("a script error")
        };
        assert_eq!((e.text.as_str(), e.line, e.column), ("Uncaught", 0, 6));
        assert_eq!(e.description.as_deref(), Some("Error: boom\n    at <anonymous>:1:7"));
        assert_eq!(e.to_string(), "Error: boom");
        assert_eq!(DriveError::Script(e).to_string(), "page script failed: Error: boom");
        // `throw "plain"`: no description, the thrown string says it.
        let p = page([Script::Reply(
            r#"{"result":{"result":{"type":"string","value":"plain"},"exceptionDetails":{"exceptionId":2,"text":"Uncaught","lineNumber":0,"columnNumber":0,"scriptId":"6","exception":{"type":"string","value":"plain"}}}}"#,
        )]);
        let DriveError::Script(e) = p.evaluate::<Value>("throw 'plain'").unwrap_err() else { panic!("a script error") };
        assert_eq!((e.summary(), e.thrown.clone()), ("plain", Some(json!("plain"))));
        // A syntax error is an exception too, at its line and column.
        let p = page([Script::Reply(
            r#"{"result":{"result":{"type":"object","subtype":"error","className":"SyntaxError","description":"SyntaxError: Unexpected token ')'","objectId":"-1.1.3"},"exceptionDetails":{"exceptionId":3,"text":"Uncaught","lineNumber":1,"columnNumber":4,"scriptId":"7","exception":{"type":"object","subtype":"error","className":"SyntaxError","description":"SyntaxError: Unexpected token ')'","objectId":"-1.1.4"}}}}"#,
        )]);
        let DriveError::Script(e) = p.evaluate::<Value>("(\n  ))").unwrap_err() else { panic!("a script error") };
        assert_eq!((e.summary(), e.line, e.column), ("SyntaxError: Unexpected token ')'", 1, 4));
    }

    #[test]
    fn a_protocol_error_a_timeout_and_a_lost_page_are_not_script_errors() {
        let p = page([Script::Reply(r#"{"error":{"code":-32000,"message":"Cannot find context with specified id"}}"#)]);
        let e = p.evaluate::<Value>("1").unwrap_err();
        assert_eq!(e.to_string(), "Runtime.evaluate: Cannot find context with specified id");
        assert!(matches!(&e, DriveError::Protocol { error, .. } if error.code == -32000));
        assert!(e.is_answer());
        let p = page([Script::Silent]).with_timeout(Duration::from_millis(5));
        let e = p.evaluate::<Value>("1").unwrap_err();
        assert!(
            matches!(e, DriveError::Timeout { method: crate::Method::Evaluate, timeout } if timeout == Duration::from_millis(5))
        );
        assert!(!e.is_answer());
        let p = page([Script::Silent]).until(Instant::now());
        let e = p.evaluate::<Value>("1").unwrap_err();
        assert!(
            matches!(e, DriveError::Timeout { timeout, .. } if timeout == Duration::ZERO),
            "past the deadline: {e}"
        );
        let p = page([Script::Gone]);
        let e = p.evaluate::<Value>("1").unwrap_err();
        assert!(matches!(e, DriveError::Transport(TransportError::Gone)));
        assert_eq!(e.to_string(), "the page went away");
    }

    #[test]
    fn objects_are_kept_in_the_page_and_called_on() {
        let p = page([
            Script::Reply(r#"{"result":{"executionContextId":7}}"#),
            Script::Reply(
                r#"{"result":{"result":{"type":"object","subtype":"array","className":"Array","description":"Array(1)","objectId":"nodes-1"}}}"#,
            ),
            Script::Reply(
                r#"{"result":{"result":[{"name":"0","configurable":true,"enumerable":true,"writable":true,"isOwn":true,"value":{"type":"object","subtype":"node","className":"HTMLButtonElement","description":"button#go","objectId":"node-1"}},{"name":"info","value":{"type":"string","value":"{}"},"isOwn":true}]}}"#,
            ),
            Script::Reply(r#"{"result":{"result":{"type":"object","value":{"x":50,"y":20}}}}"#),
            Script::Reply(r#"{"result":{}}"#),
        ]);
        let session = SessionId::new("S1");
        let world = p.create_isolated_world(Some(&session), &FrameId::new("F1"), "termsprawl").unwrap();
        assert_eq!(world, ExecutionContextId(7));
        let nodes = p.evaluate_object(Some(&session), "collect()", Some(world), "inspect").unwrap();
        assert_eq!(nodes.object_id, Some(ObjectId::new("nodes-1")));
        let props = p.properties(Some(&session), &ObjectId::new("nodes-1")).unwrap();
        assert_eq!(props[0].value.as_ref().and_then(|v| v.object_id.clone()), Some(ObjectId::new("node-1")));
        assert_eq!(props[1].value.as_ref().and_then(|v| v.value.clone()), Some(json!("{}")));
        #[derive(serde::Serialize)]
        struct Args {
            focus: bool,
        }
        let at: Value = p
            .call_function(Some(&session), &ObjectId::new("node-1"), "function (a) {}", &Args { focus: true }, "g")
            .unwrap();
        assert_eq!(at, json!({"x": 50, "y": 20}));
        p.release_object_group(None, "inspect").unwrap();
        let s = Some("S1".to_owned());
        assert_eq!(
            p.transport.sent(),
            [
                (s.clone(), "Page.createIsolatedWorld", json!({"frameId": "F1", "worldName": "termsprawl"})),
                (
                    s.clone(),
                    "Runtime.evaluate",
                    json!({"expression": "collect()", "contextId": 7, "returnByValue": false, "objectGroup": "inspect"})
                ),
                (s.clone(), "Runtime.getProperties", json!({"objectId": "nodes-1", "ownProperties": true})),
                (
                    s,
                    "Runtime.callFunctionOn",
                    json!({"objectId": "node-1", "functionDeclaration": "function (a) {}", "arguments": [{"value": {"focus": true}}], "returnByValue": true, "objectGroup": "g"})
                ),
                (None, "Runtime.releaseObjectGroup", json!({"objectGroup": "inspect"})),
            ]
        );
    }

    #[test]
    fn dom_reads_give_frames_nodes_and_boxes() {
        let p = page([
            Script::Reply(
                r#"{"result":{"frameTree":{"frame":{"id":"F1","loaderId":"L1","url":"https://a/","domainAndRegistry":"","securityOrigin":"https://a","mimeType":"text/html","adFrameStatus":{"adFrameType":"none"},"secureContextType":"Secure","crossOriginIsolatedContextType":"NotIsolated","gatedAPIFeatures":[]},"childFrames":[{"frame":{"id":"F2","parentId":"F1","loaderId":"L2","url":"https://a/f"},"childFrames":[{"frame":{"id":"F3","url":"about:blank"}}]},{"frame":{"id":"F4","url":"https://a/g"}}]}}}"#,
            ),
            Script::After(
                2,
                r#"{"result":{"node":{"nodeId":0,"backendNodeId":12,"nodeType":1,"nodeName":"IFRAME","localName":"iframe","nodeValue":"","frameId":"F2"}}}"#,
            ),
            Script::Reply(r#"{"error":{"code":-32000,"message":"Could not find node with given id"}}"#),
            Script::Reply(r#"{"result":{"object":{"type":"object","subtype":"node","objectId":"node-12"}}}"#),
            Script::Reply(r#"{"result":{"quads":[[10,10,90,10,90,30,10,30]]}}"#),
            Script::Reply(r#"{"result":{"backendNodeId":12,"nodeId":0}}"#),
            Script::Reply(
                r#"{"result":{"model":{"content":[8,16,308,16,308,166,8,166],"padding":[8,16,308,16,308,166,8,166],"border":[6,14,310,14,310,168,6,168],"margin":[6,14,310,14,310,168,6,168],"width":304,"height":154}}}"#,
            ),
        ]);
        let ids: Vec<String> = p.frame_tree(None).unwrap().ids().iter().map(|f| f.to_string()).collect();
        assert_eq!(ids, ["F1", "F2", "F3", "F4"], "root first, depth first");
        // Asked at once, answered later.
        let first = p.describe_node(None, &ObjectId::new("a")).unwrap();
        let second = p.describe_node(None, &ObjectId::new("b")).unwrap();
        assert!(!first.is_answered());
        let first = first.poll(Duration::ZERO).expect_err("not in yet");
        let node = first.wait().unwrap();
        assert_eq!((node.backend_node_id, node.frame_id), (BackendNodeId(12), Some(FrameId::new("F2"))));
        assert!(second.wait().unwrap_err().is_answer(), "a node that is gone is the page's answer");
        let object = p.resolve_node(None, BackendNodeId(12), "inspect").unwrap();
        assert_eq!(object.object_id, Some(ObjectId::new("node-12")));
        let quads = p.content_quads(None, &ObjectId::new("node-12")).unwrap();
        assert_eq!(quads[0].centre(), Some((50.0, 20.0)));
        assert_eq!(crate::values::Quad(vec![1.0, 2.0]).centre(), None, "not a quad");
        assert_eq!(p.frame_owner(None, &FrameId::new("F2")).unwrap(), BackendNodeId(12));
        assert_eq!(p.box_model(None, BackendNodeId(12)).unwrap().content.origin(), (8.0, 16.0));
        let sent: Vec<_> = p.transport.sent().into_iter().map(|(_, m, params)| (m, params)).collect();
        assert_eq!(
            sent,
            [
                ("Page.getFrameTree", json!({})),
                ("DOM.describeNode", json!({"objectId": "a"})),
                ("DOM.describeNode", json!({"objectId": "b"})),
                ("DOM.resolveNode", json!({"backendNodeId": 12, "objectGroup": "inspect"})),
                ("DOM.getContentQuads", json!({"objectId": "node-12"})),
                ("DOM.getFrameOwner", json!({"frameId": "F2"})),
                ("DOM.getBoxModel", json!({"backendNodeId": 12})),
            ]
        );
    }

    #[test]
    fn input_is_sent_as_chromium_takes_it() {
        let p = page([Script::Reply(r#"{"result":{}}"#), Script::Reply(r#"{"result":{}}"#), Script::Silent]);
        let mouse = MouseEvent {
            kind: MouseEventType::MousePressed,
            x: 50.0,
            y: 20.5,
            button: MouseButton::Left,
            buttons: 1,
            click_count: 1,
        };
        p.dispatch(&Input::Mouse(mouse)).unwrap().wait().unwrap();
        let key = KeyEvent {
            kind: KeyEventType::KeyDown,
            key: "a".into(),
            code: "KeyA".into(),
            windows_virtual_key_code: 65,
            native_virtual_key_code: 65,
            text: Some("a".into()),
            unmodified_text: Some("a".into()),
        };
        p.dispatch(&Input::Key(key.clone())).unwrap().wait().unwrap();
        let held = p.dispatch(&Input::InsertText("é".into())).unwrap();
        let held = held.poll(Duration::ZERO).expect_err("the page holds the reply back");
        assert!(!held.is_answered());
        let sent: Vec<_> = p.transport.sent().into_iter().map(|(_, m, params)| (m, params)).collect();
        assert_eq!(
            sent,
            [
                (
                    "Input.dispatchMouseEvent",
                    json!({"type": "mousePressed", "x": 50.0, "y": 20.5, "button": "left", "buttons": 1, "clickCount": 1})
                ),
                (
                    "Input.dispatchKeyEvent",
                    json!({"type": "keyDown", "key": "a", "code": "KeyA", "windowsVirtualKeyCode": 65, "nativeVirtualKeyCode": 65, "text": "a", "unmodifiedText": "a"})
                ),
                ("Input.insertText", json!({"text": "é"})),
            ]
        );
        let up = serde_json::to_value(KeyEvent { kind: KeyEventType::KeyUp, text: None, unmodified_text: None, ..key })
            .unwrap();
        assert_eq!(
            up,
            json!({"type": "keyUp", "key": "a", "code": "KeyA", "windowsVirtualKeyCode": 65, "nativeVirtualKeyCode": 65})
        );
    }

    #[test]
    fn screenshots_are_decoded_and_clipped_as_asked() {
        let p = page([
            Script::Reply(r#"{"result":{"data":"iVBORw=="}}"#),
            Script::Reply(r#"{"result":{"data":"not base64!"}}"#),
        ]);
        let clip = Clip { x: 0.0, y: 10.0, width: 1280.0, height: 2000.0, scale: 1.0 };
        let options = ScreenshotOptions {
            format: ImageFormat::Png,
            clip: Some(clip),
            from_surface: Some(true),
            capture_beyond_viewport: Some(true),
            optimize_for_speed: Some(true),
        };
        assert_eq!(p.screenshot(&options).unwrap(), [0x89, b'P', b'N', b'G']);
        let e = p.screenshot(&ScreenshotOptions::default()).unwrap_err();
        assert!(e.to_string().starts_with("screenshot data: "), "{e}");
        let sent: Vec<_> = p.transport.sent().into_iter().map(|(_, m, params)| (m, params)).collect();
        assert_eq!(
            sent,
            [
                (
                    "Page.captureScreenshot",
                    json!({"format": "png", "clip": {"x": 0.0, "y": 10.0, "width": 1280.0, "height": 2000.0, "scale": 1.0},
                           "fromSurface": true, "captureBeyondViewport": true, "optimizeForSpeed": true})
                ),
                ("Page.captureScreenshot", json!({"format": "png"})),
            ]
        );
    }

    #[test]
    fn a_navigation_is_followed_by_its_lifecycle_events() {
        let p = CdpPage::new(
            Scripted::new([
                Script::Reply(r#"{"result":{}}"#),
                Script::Reply(r#"{"result":{}}"#),
                Script::Reply(r#"{"result":{}}"#),
                Script::Reply(r#"{"result":{}}"#),
                Script::Reply(r#"{"result":{"frameId":"F1","loaderId":"L7"}}"#),
                Script::Reply(r#"{"result":{"frameId":"F1","loaderId":"L8","errorText":"net::ERR_CONNECTION_REFUSED"}}"#),
                Script::Reply(
                    r#"{"result":{"cssLayoutViewport":{"pageX":0,"pageY":0,"clientWidth":1280,"clientHeight":800},"cssContentSize":{"x":0,"y":0,"width":1280,"height":2400.5}}}"#,
                ),
            ])
            .with_events(&[
                ("Page.frameStartedLoading", r#"{"frameId":"F1"}"#),
                ("Page.lifecycleEvent", r#"{"frameId":"F1","loaderId":"L7","name":"load","timestamp":1.5}"#),
            ]),
        );
        let mut lifecycle = p.lifecycle();
        p.enable_page_events().unwrap();
        p.set_lifecycle_events(true).unwrap();
        p.set_scrollbars_hidden(true).unwrap();
        p.set_emulated_media(&[MediaFeature { name: "prefers-color-scheme".into(), value: "dark".into() }]).unwrap();
        let nav = p.navigate("https://a/").unwrap();
        assert_eq!((nav.loader_id.as_deref(), nav.error_text), (Some("L7"), None));
        let failed = p.navigate("http://127.0.0.1:1/").unwrap();
        assert_eq!(failed.error_text.as_deref(), Some("net::ERR_CONNECTION_REFUSED"));
        assert_eq!(lifecycle.next(Duration::ZERO).unwrap(), None, "another event");
        let load = lifecycle.next(Duration::ZERO).unwrap().expect("the load event");
        assert_eq!((load.name.as_str(), load.loader_id.as_deref()), ("load", Some("L7")));
        assert!(lifecycle.next(Duration::ZERO).is_err(), "the stream ended");
        assert_eq!(p.layout_metrics().unwrap().css_content_size.map(|s| s.height), Some(2400.5));
        let sent: Vec<_> = p.transport.sent().into_iter().map(|(_, m, params)| (m, params)).collect();
        assert_eq!(
            sent[..5],
            [
                ("Page.enable", json!({})),
                ("Page.setLifecycleEventsEnabled", json!({"enabled": true})),
                ("Emulation.setScrollbarsHidden", json!({"hidden": true})),
                (
                    "Emulation.setEmulatedMedia",
                    json!({"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
                ),
                ("Page.navigate", json!({"url": "https://a/"})),
            ]
        );
    }

    #[test]
    fn a_later_evaluation_is_polled_without_blocking() {
        let p = page([
            Script::After(2, r#"{"result":{"result":{"type":"boolean","value":true}}}"#),
            Script::Reply(r#"{"result":{"targetInfos":[]}}"#),
            Script::Reply(
                r#"{"result":{"protocolVersion":"1.3","product":"Chrome/132.0.6834.83","revision":"@1","userAgent":"Mozilla/5.0","jsVersion":"13.2"}}"#,
            ),
        ]);
        let pending = p.evaluate_later("frames()").unwrap();
        assert!(!pending.is_answered());
        let pending = pending.poll(Duration::ZERO).expect_err("not yet");
        assert!(!pending.is_answered(), "still not");
        assert_eq!(pending.wait().unwrap(), json!(true), "in at the second look");
        p.list_targets().unwrap();
        let v = p.browser_version().unwrap();
        assert_eq!((v.product.as_str(), v.js_version.as_str()), ("Chrome/132.0.6834.83", "13.2"));
        let session = p.attach_frame(&FrameId::new("F9")).unwrap();
        p.detach(&session);
        let sent: Vec<_> = p.transport.sent().into_iter().map(|(s, m, _)| (s, m)).collect();
        assert_eq!(
            sent,
            [
                (None, "Runtime.evaluate"),
                (None, "Target.getTargets"),
                (None, "Browser.getVersion"),
                (Some("session-of-F9".to_owned()), "detach"),
            ]
        );
    }
}
