//! What an agent node is doing, from the best source there is: the CLI's own
//! hooks (`termsprawl-ctl hook` → `POST /hook`), sequences its program wrote
//! to the terminal (OSC 7501 status, OSC 133 marks), and only for CLIs that
//! report neither, the quiet-time guess from output timestamps (labelled
//! [`StateSource::QuietTime`]). Also the notifications programs raised
//! (OSC 9 / 777 / 99, claude's `Notification` hook), kept per node for the
//! attention side to show. Leaf: no other file of this folder is used.

use agent_vocab::{AgentState, StateSource};
use parking_lot::RwLock;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use terminal::agents;
use terminal::signals::{BlockedKind, ProgramState, TerminalSignal};
use tool_server::{HookEvent, HookReport};

/// Notifications kept per node (the oldest go first).
pub const NOTIFICATIONS_KEPT: usize = 20;

/// A state with when it began and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    /// The state.
    pub state: AgentState,
    /// When it began.
    pub since: SystemTime,
    /// Where it came from.
    pub source: StateSource,
    /// What it is about (a tool, the permission asked), when known.
    pub detail: Option<String>,
}

/// A notification a node's program raised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeNotification {
    /// Its title, when it has one.
    pub title: Option<String>,
    /// Its text.
    pub body: String,
    /// When it arrived.
    pub at: SystemTime,
}

/// The activity of one live agent or terminal node.
#[derive(Debug)]
pub struct ActivityTracker {
    launched: SystemTime,
    /// The latest state a hook or a terminal sequence reported.
    reported: Option<Reported>,
    /// The quiet-time guess last shown, and since when.
    guessed: Option<(AgentState, SystemTime)>,
    exited_at: Option<SystemTime>,
    /// When the latest report arrived (output after it may mean a new turn, see [`ActivityTracker::tick`]).
    reported_at: Option<Instant>,
    /// Whether this CLI's hooks ever said a turn began (claude's do; codex's `notify` never does).
    hooks_mark_turn_starts: bool,
    notifications: VecDeque<NodeNotification>,
}

/// Output this long after a turn-end report is taken for a new turn, when the
/// CLI's hooks never say one began (the closing redraw comes sooner).
pub const NEW_TURN_AFTER: Duration = Duration::from_secs(2);

impl ActivityTracker {
    /// A tracker for a program launched at `now`.
    pub fn launched(now: SystemTime) -> Self {
        Self {
            launched: now,
            reported: None,
            guessed: None,
            exited_at: None,
            reported_at: None,
            hooks_mark_turn_starts: false,
            notifications: VecDeque::new(),
        }
    }

    fn report(&mut self, state: AgentState, source: StateSource, detail: Option<String>, now: SystemTime) {
        // The same state again (another tool call) keeps its start; its detail moves on.
        let since = match &self.reported {
            Some(r) if r.state == state => r.since,
            _ => now,
        };
        self.reported = Some(Reported { state, since, source, detail });
        self.reported_at = Some(Instant::now());
    }

    fn notify(&mut self, title: Option<String>, body: String, now: SystemTime) -> NodeNotification {
        let n = NodeNotification { title, body, at: now };
        if self.notifications.len() == NOTIFICATIONS_KEPT {
            self.notifications.pop_front();
        }
        self.notifications.push_back(n.clone());
        n
    }

    /// A hook report from the CLI; returns the notification it raised, if any.
    pub fn on_hook(&mut self, report: &HookReport, now: SystemTime) -> Option<NodeNotification> {
        let detail = report.detail.clone().or_else(|| report.message.clone());
        let state = match report.event {
            HookEvent::SessionStarted | HookEvent::InputRequested => Some(AgentState::WaitingForInput),
            HookEvent::PromptSubmitted | HookEvent::ToolStarted | HookEvent::ToolFinished => Some(AgentState::Working),
            HookEvent::PermissionRequested => Some(AgentState::NeedsPermission),
            HookEvent::TurnComplete => Some(AgentState::Done),
            HookEvent::TurnFailed => Some(AgentState::Error),
            // The process's exit says the rest; a notice changes no state.
            HookEvent::SessionEnded | HookEvent::Notice => None,
        };
        self.hooks_mark_turn_starts |= report.event == HookEvent::PromptSubmitted;
        if let Some(state) = state {
            self.report(state, StateSource::Hooks, detail, now);
        }
        let message = report.message.clone()?;
        Some(self.notify(report.title.clone(), message, now))
    }

    /// A signal from the terminal; returns the notification it raised, if any.
    pub fn on_signal(&mut self, signal: &TerminalSignal, now: SystemTime) -> Option<NodeNotification> {
        let (state, detail) = match signal {
            TerminalSignal::Notification { title, body } => return Some(self.notify(title.clone(), body.clone(), now)),
            TerminalSignal::Progress(_) => return None,
            TerminalSignal::PromptShown => (AgentState::WaitingForInput, None),
            TerminalSignal::CommandStarted => (AgentState::Working, None),
            TerminalSignal::CommandFinished { exit: None | Some(0) } => (AgentState::Done, None),
            TerminalSignal::CommandFinished { exit: Some(code) } => (AgentState::Error, Some(format!("exit {code}"))),
            TerminalSignal::ProgramStatus(s) => {
                let state = match (s.state, s.kind) {
                    (ProgramState::Idle, _) => AgentState::WaitingForInput,
                    (ProgramState::Working, _) => AgentState::Working,
                    (ProgramState::Blocked, Some(BlockedKind::Permission)) => AgentState::NeedsPermission,
                    (ProgramState::Blocked, _) => AgentState::WaitingForInput,
                    (ProgramState::Done, _) => AgentState::Done,
                    (ProgramState::Error, _) => AgentState::Error,
                    // The program is leaving; its exit follows.
                    (ProgramState::Clear, _) => return None,
                };
                (state, s.message.clone().or_else(|| s.title.clone()))
            }
        };
        self.report(state, StateSource::Terminal, detail, now);
        None
    }

    /// The program exited at `now`.
    pub fn on_exit(&mut self, now: SystemTime) {
        self.exited_at.get_or_insert(now);
    }

    /// Moves the quiet-time guess on (with the clock, when nothing reported);
    /// returns whether what the node shows changed.
    /// A CLI whose hooks report only the end of a turn (codex `notify`) goes
    /// back to the guess when output resumes [`NEW_TURN_AFTER`] later.
    pub fn tick(&mut self, now: Instant, wall: SystemTime, last_output: Option<Instant>, idle: Duration) -> bool {
        if self.exited_at.is_some() {
            return false;
        }
        if let Some(r) = &self.reported {
            let turn_over = r.state.turn_over();
            let resumed = match (self.reported_at, last_output) {
                (Some(at), Some(out)) => out > at + NEW_TURN_AFTER,
                _ => false,
            };
            if !(r.source == StateSource::Hooks && turn_over && !self.hooks_mark_turn_starts && resumed) {
                return false;
            }
            self.reported = None;
            self.guessed = Some((AgentState::Working, wall));
            return true;
        }
        let guess = agents::quiet_time_guess(now, last_output, false, idle);
        if last_output.is_none() || self.guessed.is_some_and(|(g, _)| g == guess) {
            return false;
        }
        self.guessed = Some((guess, wall));
        true
    }

    /// The live state: the latest report, else the quiet-time guess
    /// (starting until the first output). An exit is the caller's to check first.
    pub fn current(&self) -> Reported {
        if let Some(r) = &self.reported {
            return r.clone();
        }
        match self.guessed {
            None => Reported {
                state: AgentState::Starting,
                since: self.launched,
                source: StateSource::Process,
                detail: None,
            },
            Some((guess, since)) => Reported { state: guess, since, source: StateSource::QuietTime, detail: None },
        }
    }

    /// When the program exited (its launch time if the exit was never timed).
    pub fn exited_at(&self) -> SystemTime {
        self.exited_at.unwrap_or(self.launched)
    }

    /// The notifications kept, oldest first.
    pub fn notifications(&self) -> impl Iterator<Item = &NodeNotification> {
        self.notifications.iter()
    }
}

/// The agents' activity as the tool server's thread reads it (`agent_status`):
/// republished by the main thread whenever it may have changed.
#[derive(Clone, Default)]
pub struct ActivityBoard(Arc<RwLock<HashMap<String, agent_vocab::AgentActivity>>>);

impl ActivityBoard {
    /// A node's activity.
    pub fn get(&self, node: &str) -> Option<agent_vocab::AgentActivity> {
        self.0.read().get(node).cloned()
    }

    /// Replaces everything.
    pub(super) fn replace(&self, all: HashMap<String, agent_vocab::AgentActivity>) {
        *self.0.write() = all;
    }
}

/// Milliseconds since the Unix epoch (0 for a clock before it).
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis().try_into().unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use terminal::signals::ProgramStatus;
    use tool_server::HookAgent;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn state(t: &ActivityTracker) -> (AgentState, StateSource, u64, Option<String>) {
        let r = t.current();
        (r.state, r.source, unix_ms(r.since) / 1000, r.detail)
    }

    fn hook(event: HookEvent, detail: Option<&str>) -> HookReport {
        let mut r = HookReport::new(HookAgent::Claude, event);
        r.detail = detail.map(str::to_owned);
        r
    }

    #[test]
    fn hooks_drive_the_state_and_keep_its_start_across_tool_calls() {
        let mut t = ActivityTracker::launched(at(10));
        assert_eq!(state(&t), (AgentState::Starting, StateSource::Process, 10, None));
        t.on_hook(&hook(HookEvent::SessionStarted, None), at(11));
        assert_eq!(state(&t).0, AgentState::WaitingForInput);
        t.on_hook(&hook(HookEvent::PromptSubmitted, None), at(12));
        t.on_hook(&hook(HookEvent::ToolStarted, Some("Bash")), at(14));
        assert_eq!(state(&t), (AgentState::Working, StateSource::Hooks, 12, Some("Bash".into())));
        t.on_hook(&hook(HookEvent::PermissionRequested, Some("Bash")), at(15));
        assert_eq!(state(&t), (AgentState::NeedsPermission, StateSource::Hooks, 15, Some("Bash".into())));
        t.on_hook(&hook(HookEvent::ToolFinished, Some("Bash")), at(16));
        t.on_hook(&hook(HookEvent::TurnComplete, None), at(20));
        assert_eq!(state(&t), (AgentState::Done, StateSource::Hooks, 20, None));
        t.on_hook(&hook(HookEvent::TurnFailed, Some("overloaded")), at(21));
        assert_eq!(state(&t).0, AgentState::Error);
        // Reports win over the quiet-time guess from then on.
        assert!(!t.tick(Instant::now(), at(30), Some(Instant::now()), Duration::ZERO));
        t.on_exit(at(40));
        t.on_exit(at(50));
        assert_eq!(t.exited_at(), at(40), "the first exit counts");
    }

    #[test]
    fn a_notification_hook_is_kept_as_a_notification() {
        let mut t = ActivityTracker::launched(at(0));
        let mut r = hook(HookEvent::PermissionRequested, None);
        r.message = Some("Claude needs your permission to use Bash".into());
        let n = t.on_hook(&r, at(5)).expect("a notification");
        assert_eq!((n.title, n.body.as_str(), n.at), (None, "Claude needs your permission to use Bash", at(5)));
        assert_eq!(state(&t).0, AgentState::NeedsPermission);
        assert!(t.on_hook(&hook(HookEvent::ToolStarted, Some("Bash")), at(6)).is_none());
        for i in 0..NOTIFICATIONS_KEPT + 5 {
            t.on_signal(&TerminalSignal::Notification { title: None, body: format!("n{i}") }, at(7));
        }
        let kept: Vec<&str> = t.notifications().map(|n| n.body.as_str()).collect();
        assert_eq!(kept.len(), NOTIFICATIONS_KEPT);
        assert_eq!(kept[0], "n5", "the oldest went first");
    }

    #[test]
    fn terminal_sequences_drive_the_state() {
        let mut t = ActivityTracker::launched(at(0));
        let status = |state, kind| {
            TerminalSignal::ProgramStatus(ProgramStatus {
                state,
                kind,
                app: Some("claude-code".into()),
                progress: None,
                title: None,
                message: Some("Run ls?".into()),
            })
        };
        let cases = [
            (status(ProgramState::Working, None), AgentState::Working),
            (status(ProgramState::Blocked, Some(BlockedKind::Permission)), AgentState::NeedsPermission),
            (status(ProgramState::Blocked, Some(BlockedKind::Question)), AgentState::WaitingForInput),
            (status(ProgramState::Done, None), AgentState::Done),
            (status(ProgramState::Error, None), AgentState::Error),
            (status(ProgramState::Idle, None), AgentState::WaitingForInput),
            (TerminalSignal::CommandStarted, AgentState::Working),
            (TerminalSignal::CommandFinished { exit: Some(0) }, AgentState::Done),
            (TerminalSignal::CommandFinished { exit: Some(2) }, AgentState::Error),
            (TerminalSignal::PromptShown, AgentState::WaitingForInput),
        ];
        for (i, (signal, want)) in cases.into_iter().enumerate() {
            assert!(t.on_signal(&signal, at(i as u64 + 1)).is_none());
            let (got, source, _, _) = state(&t);
            assert_eq!((got, source), (want, StateSource::Terminal), "{signal:?}");
        }
        assert_eq!(state(&t).3, None, "a prompt mark carries no detail");
        t.on_signal(&TerminalSignal::CommandFinished { exit: Some(2) }, at(20));
        assert_eq!(state(&t).3.as_deref(), Some("exit 2"));
        t.on_signal(&status(ProgramState::Clear, None), at(21));
        assert_eq!(state(&t).0, AgentState::Error, "clear changes nothing");
    }

    #[test]
    fn output_after_a_codex_turn_ends_is_a_new_turn_but_not_after_a_claude_one() {
        let idle = Duration::from_secs(3);
        for (agent, marks_starts) in [(HookAgent::Codex, false), (HookAgent::Claude, true)] {
            let mut t = ActivityTracker::launched(at(0));
            if marks_starts {
                t.on_hook(&HookReport::new(agent, HookEvent::PromptSubmitted), at(1));
            }
            t.on_hook(&HookReport::new(agent, HookEvent::TurnComplete), at(2));
            let reported = Instant::now();
            assert!(!t.tick(reported, at(2), Some(reported), idle), "the closing redraw is no new turn");
            let later = reported + NEW_TURN_AFTER + Duration::from_secs(1);
            let changed = t.tick(later, at(5), Some(later), idle);
            assert_eq!(changed, !marks_starts, "{agent:?}");
            let want = if marks_starts {
                (AgentState::Done, StateSource::Hooks)
            } else {
                (AgentState::Working, StateSource::QuietTime)
            };
            assert_eq!((state(&t).0, state(&t).1), want, "{agent:?}");
        }
    }

    #[test]
    fn without_reports_the_quiet_time_guess_is_labelled_as_such() {
        let mut t = ActivityTracker::launched(at(0));
        let t0 = Instant::now();
        let idle = Duration::from_secs(3);
        assert!(!t.tick(t0, at(1), None, idle), "no output yet: still starting");
        assert_eq!(state(&t).0, AgentState::Starting);
        assert!(t.tick(t0 + Duration::from_secs(1), at(2), Some(t0), idle));
        assert_eq!(state(&t), (AgentState::Working, StateSource::QuietTime, 2, None));
        assert!(!t.tick(t0 + Duration::from_secs(2), at(3), Some(t0), idle), "unchanged");
        assert!(t.tick(t0 + Duration::from_secs(3), at(4), Some(t0), idle));
        assert_eq!(state(&t), (AgentState::WaitingForInput, StateSource::QuietTime, 4, None));
    }
}
