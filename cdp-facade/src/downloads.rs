//! Downloads through the facade, as Chromium's browser target has them:
//! `Browser.setDownloadBehavior` sets where the app saves downloads (through
//! [`Guests::set_download_behavior`](crate::Guests::set_download_behavior)),
//! and, with `eventsEnabled`, the session that set it hears
//! `Browser.downloadWillBegin` and `Browser.downloadProgress` for every
//! download of every page, from what the app tells the facade
//! ([`DownloadNotifier`]). The app, not a guest's DevTools session, is the
//! source: a behaviour set through one page's session would end with that
//! page, and pages the client never attached to would go unheard.
//!
//! What one client asked is kept in [`ClientDownloads`].

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast;

use crate::browser_env::BrowserEnv;
use crate::effect::{RootCommand, Turn};
use crate::guest::{ContextId, DownloadBehavior, GuestId};
use crate::protocol::{INVALID_PARAMS, SERVER_ERROR};
use crate::targets::Targets;

/// How many download notices wait for a slow client before the oldest are dropped.
const NOTICE_BACKLOG: usize = 256;

/// How far a download has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DownloadState {
    /// Bytes are still arriving.
    InProgress,
    /// Saved whole.
    Completed,
    /// Cancelled, interrupted or refused.
    Canceled,
}

impl DownloadState {
    fn cdp_name(self) -> &'static str {
        match self {
            Self::InProgress => "inProgress",
            Self::Completed => "completed",
            Self::Canceled => "canceled",
        }
    }
}

/// What happened to a download.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DownloadEvent {
    /// It starts.
    Began {
        /// What is downloaded.
        url: String,
        /// The file name the server or the link suggested.
        suggested_filename: String,
    },
    /// Bytes arrived, or it ended.
    Progress {
        /// Bytes received so far.
        received: u64,
        /// Bytes expected, 0 while unknown.
        total: u64,
        /// How far it has come.
        state: DownloadState,
    },
}

/// One download event of one guest's page, as the app tells the facade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadNotice {
    /// The page that downloads.
    pub guest: GuestId,
    /// The download's guid (the file's name under `AllowAndName`).
    pub guid: String,
    /// What happened.
    pub event: DownloadEvent,
}

/// The app's handle for telling the facade about downloads (any thread, never blocks).
#[derive(Clone)]
pub struct DownloadNotifier(pub(crate) broadcast::Sender<DownloadNotice>);

impl DownloadNotifier {
    /// A notifier with no listener yet.
    pub(crate) fn new() -> Self {
        Self(broadcast::channel(NOTICE_BACKLOG).0)
    }

    /// Tells the connected client, if it asked for download events.
    pub fn notify(&self, notice: DownloadNotice) {
        // No receiver (no client) is not an error: nobody asked.
        let _ = self.0.send(notice);
    }
}

/// What one client asked of downloads, per browser context (`None`: the default one).
#[derive(Debug, Default)]
pub(crate) struct ClientDownloads {
    /// Contexts it set a behaviour other than the default for (reset when it leaves).
    behavior_set: HashSet<Option<ContextId>>,
    /// Contexts it asked for events of, each on its session (`None`: the root).
    events: HashMap<Option<ContextId>, Option<String>>,
}

/// `Browser.setDownloadBehavior`'s parameters.
#[derive(Deserialize)]
struct BehaviorParams {
    behavior: String,
    #[serde(rename = "downloadPath")]
    download_path: Option<String>,
    #[serde(rename = "eventsEnabled", default)]
    events_enabled: bool,
    #[serde(rename = "browserContextId")]
    browser_context_id: Option<String>,
}

/// The behaviour the parameters ask for, or Chromium's error for them.
fn parse_behavior(p: &BehaviorParams) -> Result<DownloadBehavior, String> {
    let folder = || -> Result<PathBuf, String> {
        let raw = p.download_path.as_deref().filter(|d| !d.is_empty()).ok_or("downloadPath not provided")?;
        let path = PathBuf::from(raw);
        if path.is_absolute() {
            Ok(path)
        } else {
            Err(format!("downloadPath must be an absolute path: {raw}"))
        }
    };
    match p.behavior.as_str() {
        "default" => Ok(DownloadBehavior::Default),
        "deny" => Ok(DownloadBehavior::Deny),
        "allow" => Ok(DownloadBehavior::Allow(folder()?)),
        "allowAndName" => Ok(DownloadBehavior::AllowAndName(folder()?)),
        other => Err(format!("Unrecognized behavior: {other}")),
    }
}

impl ClientDownloads {
    /// `Browser.setDownloadBehavior`, from the root or a browser session.
    pub(crate) fn set_behavior(&mut self, turn: &mut Turn, rc: &RootCommand) {
        let (id, session) = (rc.cmd.id, rc.session.as_deref());
        let Some(asked) = turn.params_or_fail::<BehaviorParams>(rc) else { return };
        let context = match turn.env.resolve_context(asked.browser_context_id.as_deref()) {
            Ok(c) => c,
            Err(unknown) => {
                return turn.fail(
                    id,
                    session,
                    SERVER_ERROR,
                    &format!("Failed to find browser context for id {unknown}"),
                )
            }
        };
        let behavior = match parse_behavior(&asked) {
            Ok(b) => b,
            Err(e) => return turn.fail(id, session, INVALID_PARAMS, &e),
        };
        let is_default = behavior == DownloadBehavior::Default;
        if let Err(e) = turn.env.guests.set_download_behavior(context.as_ref(), behavior) {
            return turn.fail(id, session, SERVER_ERROR, &e.to_string());
        }
        if is_default {
            self.behavior_set.remove(&context);
        } else {
            self.behavior_set.insert(context.clone());
        }
        if asked.events_enabled {
            self.events.insert(context, session.map(str::to_string));
        } else {
            self.events.remove(&context);
        }
        turn.reply(id, session, json!({}));
    }

    /// A download notice from the app: events for the session that asked for them.
    pub(crate) fn on_notice(&self, turn: &mut Turn, targets: &Targets, notice: DownloadNotice) {
        let context = turn.env.guests.context_of(&notice.guest);
        let Some(session) = self.events.get(&context).cloned() else { return };
        let session = session.as_deref();
        match notice.event {
            DownloadEvent::Began { url, suggested_filename } => {
                // The page's main frame id is its target id (a page not yet described reports none).
                let frame_id = targets.known_info(&notice.guest).map(|i| i.target_id).unwrap_or_default();
                let params = json!({"frameId": frame_id, "guid": notice.guid, "url": url,
                                    "suggestedFilename": suggested_filename});
                turn.event("Browser.downloadWillBegin", &params, session);
            }
            DownloadEvent::Progress { received, total, state } => {
                let params = json!({"guid": notice.guid, "totalBytes": total, "receivedBytes": received,
                                    "state": state.cdp_name()});
                turn.event("Browser.downloadProgress", &params, session);
            }
        }
    }

    /// A client that leaves takes its download behaviour with it, as a
    /// Chromium debugger's does (the app's call returns quickly: no job).
    pub(crate) fn release(&mut self, env: &BrowserEnv) {
        for context in std::mem::take(self).behavior_set {
            if let Err(e) = env.guests.set_download_behavior(context.as_ref(), DownloadBehavior::Default) {
                tracing::debug!(error = %e, "download behaviour not reset");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(json: &str) -> BehaviorParams {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn behaviours_parse_as_chromium_checks_them() {
        assert_eq!(parse_behavior(&params(r#"{"behavior":"deny"}"#)), Ok(DownloadBehavior::Deny));
        assert_eq!(parse_behavior(&params(r#"{"behavior":"default"}"#)), Ok(DownloadBehavior::Default));
        assert_eq!(
            parse_behavior(&params(r#"{"behavior":"allow","downloadPath":"/tmp/d"}"#)),
            Ok(DownloadBehavior::Allow("/tmp/d".into()))
        );
        assert_eq!(
            parse_behavior(&params(r#"{"behavior":"allowAndName","downloadPath":"/tmp/d","eventsEnabled":true}"#)),
            Ok(DownloadBehavior::AllowAndName("/tmp/d".into()))
        );
        assert_eq!(parse_behavior(&params(r#"{"behavior":"allow"}"#)), Err("downloadPath not provided".into()));
        assert!(parse_behavior(&params(r#"{"behavior":"allow","downloadPath":"rel/dir"}"#))
            .is_err_and(|e| e.contains("absolute")));
        assert!(parse_behavior(&params(r#"{"behavior":"sometimes"}"#)).is_err_and(|e| e.contains("sometimes")));
    }
}
