//! The status badge on a terminal/agent node: text and colour.

use super::status::{AgentNodeActivity, AgentNodeStatus, NotLaunched};
use agent_vocab::{AgentState, StateSource};
use canvas_render::{Badge, Color};
use std::time::SystemTime;
use terminal::ExitStatus;

/// Quiet states: exited cleanly, starting.
const NEUTRAL: u32 = 0x9aa5ce;
/// Something is wrong: failed exit, not launched.
const ALARM: u32 = 0xf7768e;
/// Running.
const BUSY: u32 = 0x9ece6a;
/// Needs the person: waiting for input, bell (also the tab strip's count).
pub const ATTENTION: u32 = 0xe0af68;
/// Needs the person's decision: a permission prompt.
const PERMISSION: u32 = 0xff9e64;
/// Finished its turn.
const DONE: u32 = 0x7aa2f7;

/// How an exit reads: `exited 3`, or `exited (SIGKILL)` when a signal ended it.
pub fn exit_text(status: &ExitStatus) -> String {
    match &status.signal {
        Some(sig) => format!("exited ({sig})"),
        None => format!("exited {}", status.code),
    }
}

fn exited_badge(status: &ExitStatus) -> Badge {
    Badge { text: exit_text(status), color: Color::hex(if status.success() { NEUTRAL } else { ALARM }) }
}

/// How long a state has lasted, as a badge says it: nothing under a minute
/// (a fresh state needs no clock), then `4m`, `3h`, `2d` (whole units, so
/// the text changes at most once a minute).
pub fn time_in_state(since: SystemTime, now: SystemTime) -> Option<String> {
    let secs = now.duration_since(since).ok()?.as_secs();
    match secs {
        0..60 => None,
        60..3600 => Some(format!("{}m", secs / 60)),
        3600..172_800 => Some(format!("{}h", secs / 3600)),
        _ => Some(format!("{}d", secs / 86_400)),
    }
}

/// The badge of an agent node as of `now`: its state and how long it has
/// been in it, marked "(guess)" when only the quiet-time heuristic speaks
/// for it.
pub fn agent_badge(activity: &AgentNodeActivity, now: SystemTime) -> Badge {
    let mut guess = if activity.source == StateSource::QuietTime { " (guess)" } else { "" }.to_owned();
    if let Some(age) = time_in_state(activity.since, now) {
        guess.push_str(" · ");
        guess.push_str(&age);
    }
    let badge = |text: &str, color: u32| Badge { text: format!("{text}{guess}"), color: Color::hex(color) };
    match &activity.status {
        AgentNodeStatus::Live(AgentState::Starting) => badge("starting", NEUTRAL),
        AgentNodeStatus::Live(AgentState::Working) => badge("working", BUSY),
        AgentNodeStatus::Live(AgentState::NeedsPermission) => badge("needs permission", PERMISSION),
        AgentNodeStatus::Live(AgentState::WaitingForInput) => badge("waiting for input", ATTENTION),
        AgentNodeStatus::Live(AgentState::Done) => badge("done", DONE),
        AgentNodeStatus::Live(AgentState::Error) => badge("error", ALARM),
        AgentNodeStatus::Live(AgentState::Exited) => badge("exited", NEUTRAL),
        AgentNodeStatus::Exited(s) => {
            let exited = exited_badge(s);
            Badge { text: format!("{}{guess}", exited.text), color: exited.color }
        }
        AgentNodeStatus::NotLaunched(NotLaunched::NeedsSetup { looked_for }) => {
            Badge { text: format!("needs setup: {looked_for}"), color: Color::hex(ALARM) }
        }
        AgentNodeStatus::NotLaunched(NotLaunched::NeedsLogin { .. }) => {
            Badge { text: "needs setup: not logged in".into(), color: Color::hex(ALARM) }
        }
        AgentNodeStatus::NotLaunched(_) => Badge { text: "not launched".into(), color: Color::hex(ALARM) },
        AgentNodeStatus::Pending => Badge { text: "starting".into(), color: Color::hex(NEUTRAL) },
    }
}

/// The badge of a plain terminal: its exit once it ended, else a bell that rang.
pub fn terminal_badge(exited: Option<&ExitStatus>, bell: bool) -> Option<Badge> {
    if let Some(status) = exited {
        return Some(exited_badge(status));
    }
    bell.then(|| Badge { text: "bell".into(), color: Color::hex(ATTENTION) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(code: u32, signal: Option<&str>) -> ExitStatus {
        ExitStatus { code, signal: signal.map(str::to_owned) }
    }

    fn pair(b: Badge) -> (String, Color) {
        (b.text, b.color)
    }

    #[test]
    fn exits_read_as_code_or_signal() {
        assert_eq!(exit_text(&exit(0, None)), "exited 0");
        assert_eq!(exit_text(&exit(3, None)), "exited 3");
        assert_eq!(exit_text(&exit(1, Some("SIGKILL"))), "exited (SIGKILL)");
    }

    #[test]
    fn agent_badges_have_their_text_and_colour() {
        let cases = [
            (AgentNodeStatus::Live(AgentState::Starting), "starting", 0x9aa5ce),
            (AgentNodeStatus::Live(AgentState::Working), "working", 0x9ece6a),
            (AgentNodeStatus::Live(AgentState::NeedsPermission), "needs permission", 0xff9e64),
            (AgentNodeStatus::Live(AgentState::WaitingForInput), "waiting for input", 0xe0af68),
            (AgentNodeStatus::Live(AgentState::Done), "done", 0x7aa2f7),
            (AgentNodeStatus::Live(AgentState::Error), "error", 0xf7768e),
            (AgentNodeStatus::Exited(exit(0, None)), "exited 0", 0x9aa5ce),
            (AgentNodeStatus::Exited(exit(2, None)), "exited 2", 0xf7768e),
            (AgentNodeStatus::Exited(exit(1, Some("SIGTERM"))), "exited (SIGTERM)", 0xf7768e),
            (
                AgentNodeStatus::NotLaunched(NotLaunched::NeedsSetup { looked_for: "gemini".into() }),
                "needs setup: gemini",
                0xf7768e,
            ),
            (AgentNodeStatus::NotLaunched(NotLaunched::Refused("no".into())), "not launched", 0xf7768e),
            (AgentNodeStatus::NotLaunched(NotLaunched::Misconfigured("bad".into())), "not launched", 0xf7768e),
            (AgentNodeStatus::Pending, "starting", 0x9aa5ce),
        ];
        let activity =
            |status, source| AgentNodeActivity { status, since: SystemTime::UNIX_EPOCH, source, detail: None };
        let fresh = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(59);
        for (status, text, color) in cases {
            let badge = agent_badge(&activity(status.clone(), StateSource::Hooks), fresh);
            assert_eq!(pair(badge), (text.to_owned(), Color::hex(color)), "{status:?}");
        }
        let guessed =
            agent_badge(&activity(AgentNodeStatus::Live(AgentState::WaitingForInput), StateSource::QuietTime), fresh);
        assert_eq!(guessed.text, "waiting for input (guess)");
        let later = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(7 * 60 + 5);
        let waited =
            agent_badge(&activity(AgentNodeStatus::Live(AgentState::WaitingForInput), StateSource::QuietTime), later);
        assert_eq!(waited.text, "waiting for input (guess) · 7m");
        let exited = agent_badge(&activity(AgentNodeStatus::Exited(exit(3, None)), StateSource::Process), later);
        assert_eq!(pair(exited), ("exited 3 · 7m".into(), Color::hex(0xf7768e)));
        let asked =
            agent_badge(&activity(AgentNodeStatus::Live(AgentState::NeedsPermission), StateSource::Hooks), later);
        assert_eq!(asked.text, "needs permission · 7m");
    }

    #[test]
    fn time_in_state_reads_in_whole_units_from_a_minute() {
        let t0 = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        let at = |s: u64| time_in_state(t0, t0 + std::time::Duration::from_secs(s));
        assert_eq!([at(0), at(59)], [None, None]);
        assert_eq!([at(60), at(3599)], [Some("1m".into()), Some("59m".into())]);
        assert_eq!([at(3600), at(47 * 3600)], [Some("1h".into()), Some("47h".into())]);
        assert_eq!(at(3 * 86_400 + 5), Some("3d".into()));
        assert_eq!(time_in_state(t0, SystemTime::UNIX_EPOCH), None, "a clock that went back shows no age");
    }

    #[test]
    fn terminal_badges_show_the_exit_before_the_bell() {
        assert_eq!(terminal_badge(None, false), None);
        assert_eq!(terminal_badge(None, true).map(pair), Some(("bell".into(), Color::hex(0xe0af68))));
        assert_eq!(
            terminal_badge(Some(&exit(0, None)), true).map(pair),
            Some(("exited 0".into(), Color::hex(0x9aa5ce)))
        );
        assert_eq!(
            terminal_badge(Some(&exit(127, None)), false).map(pair),
            Some(("exited 127".into(), Color::hex(0xf7768e)))
        );
    }
}
