//! Desktop notifications through the freedesktop notification service
//! (D-Bus `org.freedesktop.Notifications` on the session bus, with `zbus`'s
//! blocking API on threads of their own, so D-Bus never blocks the UI).
//!
//! One thread owns the connection and sends `Notify`/`CloseNotification` in
//! the order they are asked for, replacing a node's previous notification
//! (`replaces_id`) so a node has at most one on screen; a second waits for
//! `ActionInvoked` and reports which node's notification was activated.

use crate::model::NodeId;
use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// The application name the server shows.
const APP_NAME: &str = "termsprawl";
/// The action every notification carries: activating the notification.
const DEFAULT_ACTION: &str = "default";

#[zbus::proxy(
    interface = "org.freedesktop.Notifications",
    default_service = "org.freedesktop.Notifications",
    default_path = "/org/freedesktop/Notifications",
    gen_async = false,
    blocking_name = "NotificationsProxy"
)]
trait Notifications {
    /// Shows (or replaces) a notification; returns its id.
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: &str,
        replaces_id: u32,
        app_icon: &str,
        summary: &str,
        body: &str,
        actions: &[&str],
        hints: HashMap<&str, zbus::zvariant::Value<'_>>,
        expire_timeout: i32,
    ) -> zbus::Result<u32>;

    /// Takes a notification off the screen.
    fn close_notification(&self, id: u32) -> zbus::Result<()>;

    /// What the server supports (e.g. "body-markup", "actions").
    fn get_capabilities(&self) -> zbus::Result<Vec<String>>;

    /// The server's name, vendor, version and spec version.
    fn get_server_information(&self) -> zbus::Result<(String, String, String, String)>;

    /// The person activated an action of a notification.
    #[zbus(signal)]
    fn action_invoked(&self, id: u32, action_key: &str) -> zbus::Result<()>;
}

/// Which bus to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bus {
    /// The session bus (`DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`).
    Session,
    /// A bus at this D-Bus address.
    Address(String),
}

/// Why desktop notifications are off.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DesktopOff {
    /// No session bus could be reached.
    #[error("no D-Bus session bus ({0})")]
    NoBus(String),
    /// The bus has no notification service (none running, none activatable).
    #[error("no notification service on the session bus ({0})")]
    NoServer(String),
    /// The notification thread could not start.
    #[error("the notification thread did not start ({0})")]
    Thread(String),
}

/// What the notifier reports (from its own threads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DesktopEvent {
    /// Notifications go out through this server.
    Ready {
        /// The server's name and version.
        server: String,
    },
    /// Notifications are off, and why.
    Off(DesktopOff),
    /// The person activated the notification of this node.
    Activated(NodeId),
}

enum Request {
    Show { node: NodeId, summary: String, body: String },
    Close(NodeId),
}

/// The notification each node has on screen (the server's ids).
type Shown = Arc<Mutex<HashMap<NodeId, u32>>>;

/// Sends desktop notifications from its own thread.
pub struct DesktopNotifier {
    requests: Sender<Request>,
}

impl DesktopNotifier {
    /// Connects to `bus` on a new thread; `events` hears whether that
    /// worked and, later, which notifications the person activated.
    pub fn spawn(bus: Bus, events: impl Fn(DesktopEvent) + Send + Sync + 'static) -> DesktopNotifier {
        let (requests, rx) = crossbeam_channel::unbounded();
        let events: Arc<dyn Fn(DesktopEvent) + Send + Sync> = Arc::new(events);
        let report = events.clone();
        let started = std::thread::Builder::new().name("desktop-notify".into()).spawn(move || serve(&bus, &rx, events));
        if let Err(e) = started {
            report(DesktopEvent::Off(DesktopOff::Thread(e.to_string())));
        }
        DesktopNotifier { requests }
    }

    /// Shows `node`'s notification, replacing the one it has on screen.
    pub fn show(&self, node: NodeId, summary: String, body: String) {
        // Fails only once the thread ended (notifications are off, as reported then).
        let _ = self.requests.send(Request::Show { node, summary, body });
    }

    /// Takes `node`'s notification off the screen, if it has one.
    pub fn close(&self, node: &NodeId) {
        let _ = self.requests.send(Request::Close(node.clone()));
    }
}

fn connect(bus: &Bus) -> zbus::Result<zbus::blocking::Connection> {
    match bus {
        Bus::Session => zbus::blocking::Connection::session(),
        Bus::Address(a) => zbus::blocking::connection::Builder::address(a.as_str())?.build(),
    }
}

/// The notifier thread: connect, check the server, then serve requests until the notifier is dropped.
fn serve(bus: &Bus, requests: &Receiver<Request>, events: Arc<dyn Fn(DesktopEvent) + Send + Sync>) {
    let conn = match connect(bus) {
        Ok(c) => c,
        Err(e) => return events(DesktopEvent::Off(DesktopOff::NoBus(e.to_string()))),
    };
    let proxy = match NotificationsProxy::new(&conn) {
        Ok(p) => p,
        Err(e) => return events(DesktopEvent::Off(DesktopOff::NoServer(e.to_string()))),
    };
    // Asking starts an activatable server; an error means there is none.
    let server = match proxy.get_server_information() {
        Ok((name, _vendor, version, _spec)) => format!("{name} {version}"),
        Err(e) => return events(DesktopEvent::Off(DesktopOff::NoServer(e.to_string()))),
    };
    let markup = proxy.get_capabilities().is_ok_and(|caps| caps.iter().any(|c| c == "body-markup"));
    let shown: Shown = Arc::default();
    watch_actions(&proxy, shown.clone(), events.clone());
    events(DesktopEvent::Ready { server });
    for request in requests {
        match request {
            Request::Show { node, summary, body } => {
                let body = if markup { escape_markup(&body) } else { body };
                let replaces = shown.lock().get(&node).copied().unwrap_or(0);
                let sent = proxy.notify(
                    APP_NAME,
                    replaces,
                    "",
                    &summary,
                    &body,
                    &[DEFAULT_ACTION, "Show"],
                    HashMap::new(),
                    -1,
                );
                match sent {
                    Ok(id) => {
                        shown.lock().insert(node, id);
                    }
                    Err(e) => tracing::warn!(node = %node, "desktop notification not shown: {e}"),
                }
            }
            Request::Close(node) => {
                let Some(id) = shown.lock().remove(&node) else { continue };
                if let Err(e) = proxy.close_notification(id) {
                    tracing::debug!(node = %node, "desktop notification not closed: {e}");
                }
            }
        }
    }
}

/// Starts the thread that turns `ActionInvoked` on our notifications into [`DesktopEvent::Activated`].
fn watch_actions(proxy: &NotificationsProxy<'static>, shown: Shown, events: Arc<dyn Fn(DesktopEvent) + Send + Sync>) {
    let signals = match proxy.receive_action_invoked() {
        Ok(s) => s,
        Err(e) => {
            tracing::info!("desktop notifications cannot be activated (no ActionInvoked): {e}");
            return;
        }
    };
    let started = std::thread::Builder::new().name("desktop-actions".into()).spawn(move || {
        for signal in signals {
            let Ok(args) = signal.args() else { continue };
            if args.action_key != DEFAULT_ACTION {
                continue;
            }
            let node = shown.lock().iter().find(|(_, id)| **id == args.id).map(|(n, _)| n.clone());
            // Another program's notification, or one already replaced.
            if let Some(node) = node {
                events(DesktopEvent::Activated(node));
            }
        }
    });
    if let Err(e) = started {
        tracing::info!("desktop notifications cannot be activated (no thread): {e}");
    }
}

/// Escapes the characters the spec's body markup gives a meaning.
fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    use std::time::Duration;

    /// The first thing a notifier on `bus` reports.
    fn first_event(bus: Bus) -> DesktopEvent {
        let (tx, rx) = crossbeam_channel::unbounded();
        let _notifier = DesktopNotifier::spawn(bus, move |e| {
            let _ = tx.send(e);
        });
        rx.recv_timeout(Duration::from_secs(20)).expect("the notifier reports how it stands")
    }

    #[test]
    fn no_bus_says_so() {
        let e = first_event(Bus::Address("unix:path=/nonexistent/termsprawl-test-bus".into()));
        assert!(matches!(&e, DesktopEvent::Off(DesktopOff::NoBus(_))), "{e:?}");
        let DesktopEvent::Off(why) = e else { unreachable!() };
        assert!(why.to_string().starts_with("no D-Bus session bus ("), "{why}");
    }

    #[test]
    fn a_bus_without_a_notification_server_says_so() {
        let dir = tempfile::tempdir().unwrap();
        // A bus of our own whose only service dir is empty: the system's session config could start a server.
        let config = dir.path().join("bus.conf");
        let services = dir.path().join("services");
        std::fs::create_dir(&services).unwrap();
        std::fs::write(
            &config,
            format!(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\" \
                 \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\
                 <busconfig><type>session</type><listen>unix:path={}</listen><auth>EXTERNAL</auth>\
                 <servicedir>{}</servicedir><policy context=\"default\"><allow send_destination=\"*\" \
                 eavesdrop=\"true\"/><allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>",
                dir.path().join("bus").display(),
                services.display()
            ),
        )
        .unwrap();
        let daemon = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--print-address"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let Ok(daemon) = daemon else {
            assert!(std::env::var_os("TERMSPRAWL_TEST_STRICT").is_none(), "dbus-daemon is not installed");
            println!("SKIPPED a_bus_without_a_notification_server_says_so: dbus-daemon is not installed");
            return;
        };
        // Killed on drop, also when an assertion fails.
        struct Daemon(std::process::Child);
        impl Drop for Daemon {
            fn drop(&mut self) {
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }
        let mut daemon = Daemon(daemon);
        let mut address = String::new();
        if let Some(out) = daemon.0.stdout.take() {
            std::io::BufReader::new(out).read_line(&mut address).unwrap();
        }
        let e = first_event(Bus::Address(address.trim().to_owned()));
        assert!(matches!(&e, DesktopEvent::Off(DesktopOff::NoServer(_))), "{e:?}");
    }

    #[test]
    fn body_markup_is_escaped() {
        assert_eq!(escape_markup("a <b> & c"), "a &lt;b&gt; &amp; c");
        assert_eq!(escape_markup("plain — text"), "plain — text");
    }
}
