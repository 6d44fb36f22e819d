//! Site permissions through the facade, as Chromium's browser target has
//! them: `Browser.grantPermissions`, `Browser.setPermission` and
//! `Browser.resetPermissions` (Puppeteer's `overridePermissions` and
//! `setGeolocation` pair, Playwright's `grantPermissions`).
//!
//! Grants apply per origin and per browser context, and last as long as the
//! client that made them: when it leaves, what it set is reset, as Chromium
//! drops a detaching client's overrides. For the person's profile a grant
//! needs an origin (a client never widens the person's default of denying
//! to every site) and goes to Chromium's own DevTools permission overrides
//! through a page of the profile (in memory, never saved). An isolated
//! context's grants go to the app ([`Guests::set_permissions`](crate::Guests::set_permissions)), since
//! Chromium's overrides cannot name CEF's request contexts.
//!
//! What one client set is kept in [`ClientPermissions`].

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::contexts::{split_context, ContextParamError};
use crate::effect::{RootCommand, RootWait, Step, Turn};
use crate::guest::{ContextId, GuestError, PermissionSetting, PermissionType};
use crate::jobs::{Job, PermissionChange as Change};
use crate::protocol::{InvalidParams, INVALID_PARAMS, SERVER_ERROR};
use crate::targets::Targets;

/// The permission a `Browser.PermissionDescriptor` names (the Permissions
/// API's name and flags), as Chromium maps it; `None` for an unknown name.
fn permission_of(d: &Descriptor) -> Option<PermissionType> {
    use PermissionType::*;
    Some(match d.name.as_str() {
        "geolocation" => Geolocation,
        "notifications" => Notifications,
        "push" if d.user_visible_only => Notifications,
        "midi" if d.sysex => MidiSysex,
        "midi" => Midi,
        "camera" if d.pan_tilt_zoom => CameraPanTiltZoom,
        "camera" => VideoCapture,
        "microphone" => AudioCapture,
        "clipboard-read" => ClipboardReadWrite,
        "clipboard-write" if d.allow_without_sanitization => ClipboardReadWrite,
        "clipboard-write" => ClipboardSanitizedWrite,
        "background-sync" => BackgroundSync,
        "periodic-background-sync" => PeriodicBackgroundSync,
        "background-fetch" => BackgroundFetch,
        "persistent-storage" => DurableStorage,
        "accelerometer" | "gyroscope" | "magnetometer" | "ambient-light-sensor" => Sensors,
        "idle-detection" => IdleDetection,
        "storage-access" => StorageAccess,
        "top-level-storage-access" => TopLevelStorageAccess,
        "window-management" => WindowManagement,
        "local-fonts" => LocalFonts,
        "screen-wake-lock" => WakeLockScreen,
        "system-wake-lock" => WakeLockSystem,
        "nfc" => Nfc,
        "display-capture" => DisplayCapture,
        "payment-handler" => PaymentHandler,
        "pointer-lock" => PointerLock,
        "keyboard-lock" => KeyboardLock,
        "fullscreen" if d.allow_without_gesture => AutomaticFullscreen,
        "speaker-selection" => SpeakerSelection,
        "web-app-installation" => WebAppInstallation,
        "web-printing" => WebPrinting,
        "captured-surface-control" => CapturedSurfaceControl,
        "hand-tracking" => HandTracking,
        "protected-media-identifier" => ProtectedMediaIdentifier,
        "ar" => Ar,
        "vr" => Vr,
        _ => return None,
    })
}

/// `Browser.PermissionDescriptor`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor {
    name: String,
    #[serde(default)]
    sysex: bool,
    #[serde(default)]
    user_visible_only: bool,
    #[serde(default)]
    allow_without_sanitization: bool,
    #[serde(default)]
    allow_without_gesture: bool,
    #[serde(default)]
    pan_tilt_zoom: bool,
}

/// `Browser.grantPermissions`, without its `browserContextId`.
#[derive(Debug, Deserialize)]
struct GrantParams {
    permissions: Vec<PermissionType>,
    origin: Option<String>,
}

/// `Browser.setPermission`, without its `browserContextId`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SetParams {
    permission: Descriptor,
    setting: PermissionSetting,
    origin: Option<String>,
    embedded_origin: Option<String>,
}

/// What this client set, to be reset when it leaves.
#[derive(Debug, Default)]
pub(crate) struct ClientPermissions {
    /// Something was set in the person's profile.
    profile: bool,
    /// The isolated contexts something was set in.
    contexts: Vec<ContextId>,
}

/// Why a permission change was refused (the client reads these words).
#[derive(Debug, thiserror::Error)]
enum ChangeError {
    /// The params do not decode.
    #[error(transparent)]
    Invalid(#[from] InvalidParams),
    /// A frame's permission differs from its page's: Chromium's own overrides cannot say so.
    #[error("embeddedOrigin other than origin is not supported")]
    EmbeddedOrigin,
    /// A descriptor name Chromium does not know.
    #[error("Invalid PermissionDescriptor name: {0}")]
    UnknownName(String),
}

fn parse_change(method: &str, params: &Map<String, Value>) -> Result<Change, ChangeError> {
    let value = Value::Object(params.clone());
    match method {
        "Browser.grantPermissions" => {
            let p: GrantParams = serde_json::from_value(value).map_err(InvalidParams)?;
            Ok(Change::Set { origin: p.origin, permissions: p.permissions, setting: PermissionSetting::Granted })
        }
        "Browser.setPermission" => {
            let p: SetParams = serde_json::from_value(value).map_err(InvalidParams)?;
            if p.embedded_origin.is_some_and(|e| Some(&e) != p.origin.as_ref()) {
                return Err(ChangeError::EmbeddedOrigin);
            }
            let permission =
                permission_of(&p.permission).ok_or_else(|| ChangeError::UnknownName(p.permission.name.clone()))?;
            Ok(Change::Set { origin: p.origin, permissions: vec![permission], setting: p.setting })
        }
        _ => Ok(Change::Reset),
    }
}

impl ClientPermissions {
    /// `Browser.grantPermissions`, `Browser.setPermission`, `Browser.resetPermissions`.
    pub(crate) fn change(&mut self, turn: &mut Turn, targets: &Targets, rc: &RootCommand) -> Step {
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let (params, context) = match split_context(&turn.env, &rc.cmd) {
            Ok(p) => p,
            Err(e) => {
                // An unknown context is Chromium's server error; its words are the error's own.
                let code = if matches!(e, ContextParamError::Unknown(_)) { SERVER_ERROR } else { INVALID_PARAMS };
                turn.fail(id, session, code, &e.to_string());
                return Step::Done;
            }
        };
        let change = match parse_change(&rc.cmd.method, &params) {
            Ok(c) => c,
            Err(e) => {
                turn.fail(id, session, INVALID_PARAMS, &e.to_string());
                return Step::Done;
            }
        };
        if let Change::Set { origin: Some(o), .. } = &change {
            if url::Url::parse(o).map(|u| !u.origin().is_tuple()).unwrap_or(true) {
                turn.fail(id, session, INVALID_PARAMS, &format!("Invalid origin: {o}"));
                return Step::Done;
            }
        }
        match context {
            None => self.change_profile(turn, targets, rc, change, params),
            Some(context) => self.change_context(turn, rc, context, change),
        }
    }

    /// The person's profile: Chromium's own overrides, through one of its pages.
    fn change_profile(
        &mut self,
        turn: &mut Turn,
        targets: &Targets,
        rc: &RootCommand,
        change: Change,
        params: Map<String, Value>,
    ) -> Step {
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        if let Change::Set { origin: None, .. } = change {
            turn.fail(
                id,
                session,
                SERVER_ERROR,
                "Permissions are granted in the person's profile only for an origin: give one (a browser context \
                 from Target.createBrowserContext takes grants for every site)",
            );
            return Step::Done;
        }
        let Some(channel) = targets.page_of_context(&turn.env, None) else {
            turn.fail(
                id,
                session,
                SERVER_ERROR,
                "No browser node is open: permissions live in the browser profile, open a page first",
            );
            return Step::Done;
        };
        self.profile = true;
        turn.call_through(rc, channel, rc.cmd.method.clone(), params)
    }

    /// An isolated context: the app writes its settings.
    fn change_context(&mut self, turn: &mut Turn, rc: &RootCommand, context: ContextId, change: Change) -> Step {
        if !self.contexts.contains(&context) {
            self.contexts.push(context.clone());
        }
        turn.run(Job::SetPermissions { id: rc.cmd.id, session: rc.session.clone(), context, change });
        Step::Wait(RootWait::Io)
    }

    /// The client is leaving: what it set is reset (in the background).
    pub(crate) fn release(&mut self, turn: &mut Turn, targets: &Targets) {
        let set = std::mem::take(self);
        if set.profile {
            if let Some(channel) = targets.page_of_context(&turn.env, None) {
                turn.run(Job::ResetProfilePermissions(channel));
            }
        }
        let live = turn.env.guests.contexts();
        let contexts: Vec<ContextId> = set.contexts.into_iter().filter(|c| live.contains(c)).collect();
        if !contexts.is_empty() {
            turn.run(Job::ResetContextPermissions(contexts));
        }
    }
}

/// An isolated context's permissions were set: the client's reply.
pub(crate) fn permissions_set(turn: &mut Turn, id: i64, session: Option<&str>, result: Result<(), GuestError>) {
    match result {
        Ok(()) => turn.reply(id, session, json!({})),
        Err(e) => turn.fail(id, session, SERVER_ERROR, &e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(method: &str, params: Value) -> Result<Change, String> {
        let Value::Object(map) = params else { panic!("params are an object") };
        parse_change(method, &map).map_err(|e| e.to_string())
    }

    #[test]
    fn grants_parse_cdp_names_and_refuse_unknown_ones() {
        let Ok(Change::Set { origin, permissions, setting }) = change(
            "Browser.grantPermissions",
            json!({"origin": "http://127.0.0.1:1", "permissions": ["geolocation", "midiSysex", "clipboardReadWrite"]}),
        ) else {
            panic!("a grant")
        };
        assert_eq!(origin.as_deref(), Some("http://127.0.0.1:1"));
        use PermissionType::*;
        assert_eq!(permissions, vec![Geolocation, MidiSysex, ClipboardReadWrite]);
        assert_eq!(setting, PermissionSetting::Granted);
        let err = change("Browser.grantPermissions", json!({"permissions": ["teleport"]})).err().unwrap();
        assert!(err.starts_with("Invalid parameters"), "{err}");
    }

    #[test]
    fn set_permission_maps_descriptors_as_chromium_does() {
        let set = |d: Value, setting: &str| match change(
            "Browser.setPermission",
            json!({"permission": d, "setting": setting, "origin": "https://a.test"}),
        ) {
            Ok(Change::Set { permissions, setting, .. }) => Ok((permissions[0], setting)),
            Ok(Change::Reset) => panic!("not a reset"),
            Err(e) => Err(e),
        };
        use PermissionType::*;
        assert_eq!(set(json!({"name": "geolocation"}), "denied"), Ok((Geolocation, PermissionSetting::Denied)));
        assert_eq!(set(json!({"name": "midi", "sysex": true}), "granted"), Ok((MidiSysex, PermissionSetting::Granted)));
        assert_eq!(set(json!({"name": "camera"}), "prompt"), Ok((VideoCapture, PermissionSetting::Prompt)));
        assert_eq!(set(json!({"name": "clipboard-write"}), "granted").unwrap().0, ClipboardSanitizedWrite);
        assert_eq!(set(json!({"name": "warp"}), "granted"), Err("Invalid PermissionDescriptor name: warp".into()));
        assert!(set(json!({"name": "geolocation"}), "maybe").is_err());
        assert!(matches!(change("Browser.resetPermissions", json!({})), Ok(Change::Reset)));
    }
}
