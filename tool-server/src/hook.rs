//! Hook reports: what an agent CLI's own hooks tell the app about its turn,
//! sent by `termsprawl-ctl hook` to `POST /hook` (never a catalogue
//! operation). Each CLI's hook input is read here into one typed
//! [`HookReport`]: claude's hook JSON on stdin, codex's `notify` JSON in
//! argv, gemini's hook JSON on stdin. Inputs a report does not need are dropped.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Longest `detail` or `title` a report carries, in characters.
pub const MAX_HOOK_TEXT: usize = 300;

/// The CLI whose hook ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HookAgent {
    /// Claude Code (and OpenClaude), `--settings` hooks.
    Claude,
    /// Codex CLI, its `notify` program.
    Codex,
    /// Gemini CLI hooks.
    Gemini,
}

impl HookAgent {
    /// Every agent, for argument parsers.
    pub const NAMES: &'static [&'static str] = &["claude", "codex", "gemini"];

    /// Parses a name from [`HookAgent::NAMES`].
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "claude" => Some(Self::Claude),
            "codex" => Some(Self::Codex),
            "gemini" => Some(Self::Gemini),
            _ => None,
        }
    }
}

/// What happened in the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HookEvent {
    /// A session started (or resumed, or was cleared).
    SessionStarted,
    /// The person (or the app) submitted a prompt: a turn begins.
    PromptSubmitted,
    /// A tool is about to run (`detail`: its name).
    ToolStarted,
    /// A tool finished (`detail`: its name).
    ToolFinished,
    /// A permission prompt is showing (`detail`: what is asked).
    PermissionRequested,
    /// The agent waits for the person: idle at its prompt, or a question.
    InputRequested,
    /// The turn finished.
    TurnComplete,
    /// The turn failed (`detail`: the error).
    TurnFailed,
    /// The session ended (`detail`: why).
    SessionEnded,
    /// A notification that changes no state (`title`, `detail`: its text).
    Notice,
}

/// One hook report, the body of `POST /hook`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HookReport {
    /// The CLI whose hook ran.
    pub agent: HookAgent,
    /// What happened.
    pub event: HookEvent,
    /// A short description (a tool name, a message), at most [`MAX_HOOK_TEXT`] characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// A notification's title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A notification's text for the person (claude's `Notification` hook), when the CLI showed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl HookReport {
    /// A report without text.
    pub fn new(agent: HookAgent, event: HookEvent) -> Self {
        HookReport { agent, event, detail: None, title: None, message: None }
    }

    fn with_detail(mut self, detail: Option<&str>) -> Self {
        self.detail = detail.and_then(clean);
        self
    }

    fn with_title(mut self, title: Option<&str>) -> Self {
        self.title = title.and_then(clean);
        self
    }

    fn with_message(mut self, message: Option<&str>) -> Self {
        self.message = message.and_then(clean);
        self
    }

    /// The report for a hook input of `agent` (`None`: nothing to report).
    pub fn from_input(agent: HookAgent, input: &Value) -> Option<HookReport> {
        match agent {
            HookAgent::Claude => Self::from_claude(input),
            HookAgent::Codex => Self::from_codex(input),
            HookAgent::Gemini => Self::from_gemini(input),
        }
    }

    /// Claude Code's hook input (`hook_event_name` and that event's fields).
    pub fn from_claude(input: &Value) -> Option<HookReport> {
        let field = |name: &str| input.get(name).and_then(Value::as_str);
        let report = |event| HookReport::new(HookAgent::Claude, event);
        Some(match field("hook_event_name")? {
            "SessionStart" => report(HookEvent::SessionStarted).with_detail(field("source")),
            "UserPromptSubmit" => report(HookEvent::PromptSubmitted),
            "PreToolUse" => report(HookEvent::ToolStarted).with_detail(field("tool_name")),
            "PostToolUse" | "PostToolUseFailure" => report(HookEvent::ToolFinished).with_detail(field("tool_name")),
            "PermissionRequest" => report(HookEvent::PermissionRequested).with_detail(field("tool_name")),
            "Notification" => {
                let event = match field("notification_type").unwrap_or("") {
                    "permission_prompt" | "worker_permission_prompt" => HookEvent::PermissionRequested,
                    "idle_prompt" | "elicitation_dialog" | "elicitation_url_dialog" | "agent_needs_input" => {
                        HookEvent::InputRequested
                    }
                    _ => HookEvent::Notice,
                };
                report(event).with_message(field("message")).with_title(field("title"))
            }
            "Stop" => report(HookEvent::TurnComplete),
            "StopFailure" => report(HookEvent::TurnFailed).with_detail(field("error").or(field("error_details"))),
            "SessionEnd" => report(HookEvent::SessionEnded).with_detail(field("reason")),
            _ => return None,
        })
    }

    /// Codex's `notify` JSON (`type`: `agent-turn-complete`, …).
    pub fn from_codex(input: &Value) -> Option<HookReport> {
        let field = |name: &str| input.get(name).and_then(Value::as_str);
        let report = |event| HookReport::new(HookAgent::Codex, event);
        Some(match field("type")? {
            "agent-turn-complete" => report(HookEvent::TurnComplete).with_detail(field("last-assistant-message")),
            "approval-requested" => report(HookEvent::PermissionRequested).with_detail(field("command")),
            _ => return None,
        })
    }

    /// Gemini CLI's hook input (`hook_event_name`).
    pub fn from_gemini(input: &Value) -> Option<HookReport> {
        let field = |name: &str| input.get(name).and_then(Value::as_str);
        let report = |event| HookReport::new(HookAgent::Gemini, event);
        Some(match field("hook_event_name")? {
            "SessionStart" => report(HookEvent::SessionStarted),
            "BeforeAgent" => report(HookEvent::PromptSubmitted),
            "BeforeTool" => report(HookEvent::ToolStarted).with_detail(field("tool_name")),
            "AfterTool" => report(HookEvent::ToolFinished).with_detail(field("tool_name")),
            "AfterAgent" => report(HookEvent::TurnComplete),
            "Notification" => {
                let event = match field("notification_type") {
                    Some("ToolPermission") => HookEvent::PermissionRequested,
                    _ => HookEvent::Notice,
                };
                report(event).with_message(field("message"))
            }
            "SessionEnd" => report(HookEvent::SessionEnded).with_detail(field("reason")),
            _ => return None,
        })
    }
}

/// One line of at most [`MAX_HOOK_TEXT`] characters, controls turned into spaces; `None` when blank.
fn clean(text: &str) -> Option<String> {
    let line: String =
        text.chars().map(|c| if c.is_control() { ' ' } else { c }).take(MAX_HOOK_TEXT).collect::<String>();
    let line = line.trim();
    (!line.is_empty()).then(|| line.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claude(v: Value) -> Option<(HookEvent, Option<String>)> {
        HookReport::from_claude(&v).map(|r| (r.event, r.detail.or(r.message)))
    }

    #[test]
    fn claude_hook_inputs_become_reports() {
        use HookEvent::*;
        let some = |e, d: Option<&str>| Some((e, d.map(str::to_owned)));
        assert_eq!(
            claude(json!({"hook_event_name": "SessionStart", "source": "startup"})),
            some(SessionStarted, Some("startup"))
        );
        assert_eq!(
            claude(json!({"hook_event_name": "UserPromptSubmit", "prompt": "secret plan"})),
            some(PromptSubmitted, None)
        );
        assert_eq!(
            claude(json!({"hook_event_name": "PreToolUse", "tool_name": "Bash"})),
            some(ToolStarted, Some("Bash"))
        );
        assert_eq!(
            claude(json!({"hook_event_name": "PostToolUse", "tool_name": "Edit"})),
            some(ToolFinished, Some("Edit"))
        );
        assert_eq!(
            claude(json!({"hook_event_name": "PermissionRequest", "tool_name": "Bash"})),
            some(PermissionRequested, Some("Bash"))
        );
        assert_eq!(
            claude(json!({"hook_event_name": "Notification", "notification_type": "permission_prompt",
                          "message": "Claude needs your permission to use Bash"})),
            some(PermissionRequested, Some("Claude needs your permission to use Bash"))
        );
        assert_eq!(
            claude(
                json!({"hook_event_name": "Notification", "notification_type": "idle_prompt", "message": "waiting\nfor you"})
            ),
            some(InputRequested, Some("waiting for you"))
        );
        assert_eq!(
            claude(json!({"hook_event_name": "Notification", "notification_type": "auth_success", "message": "ok"})),
            some(Notice, Some("ok"))
        );
        assert_eq!(claude(json!({"hook_event_name": "Stop"})), some(TurnComplete, None));
        assert_eq!(
            claude(json!({"hook_event_name": "StopFailure", "error": "overloaded"})),
            some(TurnFailed, Some("overloaded"))
        );
        assert_eq!(
            claude(json!({"hook_event_name": "SessionEnd", "reason": "exit"})),
            some(SessionEnded, Some("exit"))
        );
        assert_eq!(claude(json!({"hook_event_name": "PreCompact"})), None);
        assert_eq!(claude(json!({"nothing": 1})), None);
        let long = "x".repeat(1000);
        let r = HookReport::from_claude(&json!({"hook_event_name": "PreToolUse", "tool_name": long})).unwrap();
        assert_eq!(r.detail.unwrap().chars().count(), MAX_HOOK_TEXT);
    }

    #[test]
    fn codex_and_gemini_inputs_become_reports() {
        let r = HookReport::from_codex(&json!({"type": "agent-turn-complete", "thread-id": "t",
            "last-assistant-message": "All done", "input-messages": ["hi"]}))
        .unwrap();
        assert_eq!(
            (r.agent, r.event, r.detail.as_deref()),
            (HookAgent::Codex, HookEvent::TurnComplete, Some("All done"))
        );
        assert_eq!(HookReport::from_codex(&json!({"type": "something-new"})), None);
        let r =
            HookReport::from_gemini(&json!({"hook_event_name": "Notification", "notification_type": "ToolPermission",
            "message": "run ls?"}))
            .unwrap();
        assert_eq!((r.event, r.message.as_deref()), (HookEvent::PermissionRequested, Some("run ls?")));
        assert_eq!(
            HookReport::from_gemini(&json!({"hook_event_name": "AfterAgent"})).unwrap().event,
            HookEvent::TurnComplete
        );
    }

    #[test]
    fn the_wire_form_is_strict() {
        let r = HookReport::new(HookAgent::Claude, HookEvent::PermissionRequested);
        assert_eq!(serde_json::to_value(&r).unwrap(), json!({"agent": "claude", "event": "permission-requested"}));
        assert!(serde_json::from_value::<HookReport>(json!({"agent": "claude", "event": "done"})).is_err());
        assert!(
            serde_json::from_value::<HookReport>(json!({"agent": "claude", "event": "notice", "token": "x"})).is_err()
        );
        for name in HookAgent::NAMES {
            assert!(HookAgent::from_name(name).is_some());
        }
    }
}
