//! The CDP commands this crate sends, each with its wire name.

/// A CDP command page-driver sends; [`Method::name`] is its wire name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `Runtime.evaluate`.
    Evaluate,
    /// `Runtime.callFunctionOn`.
    CallFunctionOn,
    /// `Runtime.getProperties`.
    GetProperties,
    /// `Runtime.releaseObjectGroup`.
    ReleaseObjectGroup,
    /// `Page.getFrameTree`.
    GetFrameTree,
    /// `Page.createIsolatedWorld`.
    CreateIsolatedWorld,
    /// `Page.enable`.
    EnablePage,
    /// `Page.setLifecycleEventsEnabled`.
    SetLifecycleEventsEnabled,
    /// `Page.navigate`.
    Navigate,
    /// `Page.getLayoutMetrics`.
    GetLayoutMetrics,
    /// `Page.captureScreenshot`.
    CaptureScreenshot,
    /// `Emulation.setScrollbarsHidden`.
    SetScrollbarsHidden,
    /// `Emulation.setEmulatedMedia`.
    SetEmulatedMedia,
    /// `DOM.describeNode`.
    DescribeNode,
    /// `DOM.resolveNode`.
    ResolveNode,
    /// `DOM.getContentQuads`.
    GetContentQuads,
    /// `DOM.getFrameOwner`.
    GetFrameOwner,
    /// `DOM.getBoxModel`.
    GetBoxModel,
    /// `Input.dispatchMouseEvent`.
    DispatchMouseEvent,
    /// `Input.dispatchKeyEvent`.
    DispatchKeyEvent,
    /// `Input.insertText`.
    InsertText,
    /// `Target.getTargets`.
    GetTargets,
    /// `Target.attachToTarget`.
    AttachToTarget,
    /// `Target.detachFromTarget`.
    DetachFromTarget,
    /// `Browser.getVersion`.
    GetVersion,
}

impl Method {
    /// The method's name on the wire, e.g. `Runtime.evaluate`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Evaluate => "Runtime.evaluate",
            Method::CallFunctionOn => "Runtime.callFunctionOn",
            Method::GetProperties => "Runtime.getProperties",
            Method::ReleaseObjectGroup => "Runtime.releaseObjectGroup",
            Method::GetFrameTree => "Page.getFrameTree",
            Method::CreateIsolatedWorld => "Page.createIsolatedWorld",
            Method::EnablePage => "Page.enable",
            Method::SetLifecycleEventsEnabled => "Page.setLifecycleEventsEnabled",
            Method::Navigate => "Page.navigate",
            Method::GetLayoutMetrics => "Page.getLayoutMetrics",
            Method::CaptureScreenshot => "Page.captureScreenshot",
            Method::SetScrollbarsHidden => "Emulation.setScrollbarsHidden",
            Method::SetEmulatedMedia => "Emulation.setEmulatedMedia",
            Method::DescribeNode => "DOM.describeNode",
            Method::ResolveNode => "DOM.resolveNode",
            Method::GetContentQuads => "DOM.getContentQuads",
            Method::GetFrameOwner => "DOM.getFrameOwner",
            Method::GetBoxModel => "DOM.getBoxModel",
            Method::DispatchMouseEvent => "Input.dispatchMouseEvent",
            Method::DispatchKeyEvent => "Input.dispatchKeyEvent",
            Method::InsertText => "Input.insertText",
            Method::GetTargets => "Target.getTargets",
            Method::AttachToTarget => "Target.attachToTarget",
            Method::DetachFromTarget => "Target.detachFromTarget",
            Method::GetVersion => "Browser.getVersion",
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
