//! The browser nodes' downloads: the few each node's download strip shows
//! (newest last, until the person dismisses them), and the listeners that
//! hear of every download as it goes (the CDP facade's `Browser.download*`
//! events). Fed by the engine's download events on the main thread.

use crate::model::{NodeId, TabAddress};
use cef_bridge::{BrowserEvent, DownloadState};
use std::collections::HashMap;
use std::path::PathBuf;

/// How many downloads a node's strip keeps (the oldest ended one goes first).
pub const SHOWN_PER_NODE: usize = 3;

/// One download as its node shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadEntry {
    /// CDP's name for it.
    pub guid: String,
    /// The file name suggested by the server or the link.
    pub name: String,
    /// Where it is written; `None` when refused.
    pub path: Option<PathBuf>,
    /// Bytes received so far.
    pub received: u64,
    /// Bytes expected, 0 while unknown.
    pub total: u64,
    /// How far it has come.
    pub state: DownloadState,
}

impl DownloadEntry {
    /// What the strip says of it: size and state in a few words.
    pub fn summary(&self) -> String {
        match self.state {
            DownloadState::Completed => format!("{} · done", human_bytes(self.received)),
            DownloadState::Canceled if self.path.is_none() => "refused".into(),
            DownloadState::Canceled => "cancelled".into(),
            DownloadState::InProgress if self.total > 0 => {
                format!("{} of {}", human_bytes(self.received), human_bytes(self.total))
            }
            DownloadState::InProgress => format!("{} so far", human_bytes(self.received)),
        }
    }

    /// Fraction done, when the size is known.
    pub fn fraction(&self) -> Option<f32> {
        match self.state {
            DownloadState::Completed => Some(1.0),
            _ if self.total > 0 => Some((self.received as f64 / self.total as f64).clamp(0.0, 1.0) as f32),
            _ => None,
        }
    }
}

/// A byte count the way a person reads it (1 decimal above a KiB).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// A download's news, as listeners hear it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DownloadNews<'a> {
    /// It starts.
    Began {
        /// Its guid.
        guid: &'a str,
        /// What is downloaded.
        url: &'a str,
        /// The suggested file name.
        suggested_name: &'a str,
    },
    /// Bytes arrived, or it ended.
    Progress {
        /// Its guid.
        guid: &'a str,
        /// Bytes received so far.
        received: u64,
        /// Bytes expected, 0 while unknown.
        total: u64,
        /// How far it has come.
        state: DownloadState,
    },
}

/// Hears every download of every tab (on the main thread: keep it quick).
type Listener = Box<dyn Fn(&TabAddress, &DownloadNews<'_>) + Send>;

/// Every node's downloads and who listens.
#[derive(Default)]
pub struct Downloads {
    by_node: HashMap<NodeId, Vec<DownloadEntry>>,
    listeners: Vec<Listener>,
}

impl Downloads {
    /// The downloads `node`'s strip shows, oldest first.
    pub fn of(&self, node: &NodeId) -> &[DownloadEntry] {
        self.by_node.get(node).map_or(&[], Vec::as_slice)
    }

    /// Calls `listener` for every download's news from now on.
    pub fn listen(&mut self, listener: impl Fn(&TabAddress, &DownloadNews<'_>) + Send + 'static) {
        self.listeners.push(Box::new(listener));
    }

    /// The person closed a download's entry (the file stays).
    pub fn dismiss(&mut self, node: &NodeId, guid: &str) -> bool {
        let Some(list) = self.by_node.get_mut(node) else { return false };
        let before = list.len();
        list.retain(|d| d.guid != guid);
        before != list.len()
    }

    /// Records a download event of `tab`; true when a strip changed.
    pub fn record(&mut self, tab: &TabAddress, event: &BrowserEvent) -> bool {
        match event {
            BrowserEvent::DownloadStarted { guid, url, suggested_name, path, .. } => {
                self.tell(tab, &DownloadNews::Began { guid, url, suggested_name });
                let list = self.by_node.entry(tab.node.clone()).or_default();
                list.push(DownloadEntry {
                    guid: guid.clone(),
                    name: suggested_name.clone(),
                    path: path.clone(),
                    received: 0,
                    total: 0,
                    state: DownloadState::InProgress,
                });
                while list.len() > SHOWN_PER_NODE {
                    // The oldest ended one makes room; with all running, the oldest.
                    let drop = list.iter().position(|d| d.state != DownloadState::InProgress).unwrap_or(0);
                    list.remove(drop);
                }
                true
            }
            BrowserEvent::DownloadProgress { guid, received, total, state, .. } => {
                self.tell(tab, &DownloadNews::Progress { guid, received: *received, total: *total, state: *state });
                let entry = self.by_node.get_mut(&tab.node).and_then(|l| l.iter_mut().find(|d| &d.guid == guid));
                let Some(entry) = entry else { return false };
                (entry.received, entry.total, entry.state) = (*received, *total, *state);
                true
            }
            _ => false,
        }
    }

    fn tell(&self, tab: &TabAddress, news: &DownloadNews<'_>) {
        for l in &self.listeners {
            l(tab, news);
        }
    }

    /// Forgets the downloads of nodes no longer there.
    pub fn retain_nodes(&mut self, alive: impl Fn(&NodeId) -> bool) {
        self.by_node.retain(|n, _| alive(n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cef_bridge::BrowserId;
    use std::sync::{Arc, Mutex};

    fn tab(node: &str) -> TabAddress {
        TabAddress::new(NodeId::new(node).unwrap(), crate::model::TabId::new("t1").unwrap())
    }

    fn started(guid: &str, name: &str) -> BrowserEvent {
        BrowserEvent::DownloadStarted {
            id: BrowserId(1),
            guid: guid.into(),
            url: format!("http://127.0.0.1/{name}"),
            suggested_name: name.into(),
            path: Some(PathBuf::from("/tmp").join(name)),
        }
    }

    fn progress(guid: &str, received: u64, total: u64, state: DownloadState) -> BrowserEvent {
        BrowserEvent::DownloadProgress { id: BrowserId(1), guid: guid.into(), received, total, state }
    }

    #[test]
    fn a_nodes_strip_follows_its_downloads_and_listeners_hear_each() {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let mut d = Downloads::default();
        let h = heard.clone();
        d.listen(move |t, news| h.lock().unwrap().push(format!("{} {news:?}", t.node)));
        let a = tab("web");
        assert!(d.record(&a, &started("g1", "report.txt")));
        assert!(d.record(&a, &progress("g1", 512, 2048, DownloadState::InProgress)));
        assert_eq!(d.of(&a.node)[0].summary(), "512 B of 2.0 KB");
        assert_eq!(d.of(&a.node)[0].fraction(), Some(0.25));
        assert!(d.record(&a, &progress("g1", 2048, 2048, DownloadState::Completed)));
        assert_eq!(d.of(&a.node)[0].summary(), "2.0 KB · done");
        assert!(!d.record(&a, &progress("nope", 1, 1, DownloadState::InProgress)), "unknown guids change nothing");
        assert_eq!(heard.lock().unwrap().len(), 4, "listeners hear every event: {:?}", heard.lock().unwrap());
        assert!(heard.lock().unwrap()[0].starts_with("web Began"));

        for i in 2..=4 {
            d.record(&a, &started(&format!("g{i}"), "more.bin"));
        }
        let guids: Vec<&str> = d.of(&a.node).iter().map(|e| e.guid.as_str()).collect();
        assert_eq!(guids, vec!["g2", "g3", "g4"], "the ended one made room first");
        assert!(d.dismiss(&a.node, "g3"));
        assert!(!d.dismiss(&a.node, "g3"));
        assert_eq!(d.of(&a.node).len(), 2);
        d.retain_nodes(|n| n.as_str() != "web");
        assert!(d.of(&a.node).is_empty());
    }

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KB");
        assert_eq!(human_bytes(5 * 1024 * 1024), "5.0 MB");
        let refused = DownloadEntry {
            guid: "g".into(),
            name: "x".into(),
            path: None,
            received: 0,
            total: 0,
            state: DownloadState::Canceled,
        };
        assert_eq!(refused.summary(), "refused");
        assert_eq!(refused.fraction(), None);
    }
}
