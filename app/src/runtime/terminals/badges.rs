//! The status badge on a terminal/agent node: text and colour.

use super::activity::StateSource;
use super::status::{AgentActivity, AgentNodeStatus, NotLaunched};
use canvas_render::{Badge, Color};
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

/// The badge of an agent node: its state, marked "(guess)" when only the
/// quiet-time heuristic speaks for it.
pub fn agent_badge(activity: &AgentActivity) -> Badge {
    let guess = if activity.source == StateSource::QuietTime { " (guess)" } else { "" };
    let badge = |text: &str, color: u32| Badge { text: format!("{text}{guess}"), color: Color::hex(color) };
    match &activity.status {
        AgentNodeStatus::Starting => badge("starting", NEUTRAL),
        AgentNodeStatus::Working => badge("working", BUSY),
        AgentNodeStatus::NeedsPermission => badge("needs permission", PERMISSION),
        AgentNodeStatus::WaitingForInput => badge("waiting for input", ATTENTION),
        AgentNodeStatus::Done => badge("done", DONE),
        AgentNodeStatus::Error => badge("error", ALARM),
        AgentNodeStatus::Exited(s) => exited_badge(s),
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
            (AgentNodeStatus::Starting, "starting", 0x9aa5ce),
            (AgentNodeStatus::Working, "working", 0x9ece6a),
            (AgentNodeStatus::NeedsPermission, "needs permission", 0xff9e64),
            (AgentNodeStatus::WaitingForInput, "waiting for input", 0xe0af68),
            (AgentNodeStatus::Done, "done", 0x7aa2f7),
            (AgentNodeStatus::Error, "error", 0xf7768e),
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
            |status, source| AgentActivity { status, since: std::time::SystemTime::UNIX_EPOCH, source, detail: None };
        for (status, text, color) in cases {
            let badge = agent_badge(&activity(status.clone(), StateSource::Hooks));
            assert_eq!(pair(badge), (text.to_owned(), Color::hex(color)), "{status:?}");
        }
        let guessed = agent_badge(&activity(AgentNodeStatus::WaitingForInput, StateSource::QuietTime));
        assert_eq!(guessed.text, "waiting for input (guess)");
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
