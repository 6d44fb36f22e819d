//! What programs tell their terminal that alacritty_terminal ignores:
//! desktop notifications (OSC 9, OSC 777 `notify`, OSC 99 kitty), progress
//! (OSC 9;4), shell prompt and command marks (OSC 133 A/B/C/D) and the
//! Program Status Protocol (OSC 7501, spec revision 0.4, whose `ESC ] 7501 ; ?`
//! query is answered). A second `vte` pass over the same bytes the screen
//! parses finds them ([`SignalScanner`]); each becomes a typed
//! [`TerminalSignal`] for the host. A sequence that is malformed, not UTF-8,
//! holds control characters or is longer than its cap has no effect.

use alacritty_terminal::vte::{Params, Parser, Perform};
use base64::Engine;

/// Longest OSC body (all parameters and separators) looked at; longer ones are ignored.
pub const MAX_SIGNAL_OSC: usize = 4096;
/// Longest notification or status title kept, in bytes.
pub const MAX_TITLE: usize = 256;
/// Longest notification body or status message kept, in bytes.
pub const MAX_BODY: usize = 2048;
/// Kitty notifications being assembled from chunks at once (more are dropped).
const MAX_PENDING_KITTY: usize = 8;

/// The reply to the Program Status Protocol's support query (`OSC 7501 ; ?`):
/// the same body back, meaning "reports are read, every revision-0.4 state and kind".
pub const PROGRAM_STATUS_REPLY: &[u8] = b"\x1b]7501;?\x1b\\";

/// Something a program signalled through its terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalSignal {
    /// A desktop notification (OSC 9 text, OSC 777 `notify`, OSC 99).
    Notification {
        /// Its title, when the sequence has one.
        title: Option<String>,
        /// Its text.
        body: String,
    },
    /// Progress (OSC 9;4).
    Progress(Progress),
    /// The shell drew its prompt (OSC 133;A).
    PromptShown,
    /// A command started running (OSC 133;C).
    CommandStarted,
    /// A command finished (OSC 133;D), with its exit code when given.
    CommandFinished {
        /// The exit code.
        exit: Option<i32>,
    },
    /// The program's own status record (OSC 7501, the root record only).
    ProgramStatus(ProgramStatus),
}

/// OSC 9;4 progress states (ConEmu, Windows Terminal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// `0`: progress removed.
    Cleared,
    /// `1`: running, at a percentage.
    Normal(u8),
    /// `2`: failed, at a percentage.
    Error(u8),
    /// `3`: running, amount unknown.
    Indeterminate,
    /// `4`: paused or warning, at a percentage.
    Paused(u8),
}

/// OSC 7501 record states, plus `clear` (the record is removed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgramState {
    /// At rest, waiting for the user's next instruction.
    Idle,
    /// Running.
    Working,
    /// Cannot continue until the user acts (see [`ProgramStatus::kind`]).
    Blocked,
    /// Finished.
    Done,
    /// Failed and stopped.
    Error,
    /// The record was removed (the program is leaving).
    Clear,
}

/// What a blocked program waits for (OSC 7501 `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockedKind {
    /// An approval.
    Permission,
    /// An answer.
    Question,
    /// A login.
    Auth,
}

/// One OSC 7501 report of the root record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramStatus {
    /// The state.
    pub state: ProgramState,
    /// What a blocked program waits for.
    pub kind: Option<BlockedKind>,
    /// The reporting program (`app=`).
    pub app: Option<String>,
    /// Percent done, when working or blocked.
    pub progress: Option<u8>,
    /// The decoded `title=`.
    pub title: Option<String>,
    /// The decoded `msg=`.
    pub message: Option<String>,
}

/// A kitty notification whose chunks (`d=0`) are still arriving.
#[derive(Default)]
struct KittyDraft {
    id: String,
    title: String,
    body: String,
}

/// The `vte` performer: collects signals and notes a pending query reply.
#[derive(Default)]
struct Collector {
    signals: Vec<TerminalSignal>,
    /// A support query was just read: stop so its reply keeps its place among the screen's replies.
    reply_due: bool,
    /// A sequence just ended in a way that leaves the parser in its ground
    /// state (a CSI or ESC final byte, a BEL-terminated OSC): stop, so the
    /// plain text up to the next ESC can be skipped.
    ended: bool,
    /// An OSC ended by ESC, kept until the `\\` of its ST arrives (anything else cancels it).
    pending: Option<Vec<Vec<u8>>>,
    kitty: Vec<KittyDraft>,
}

/// Finds signals in program output; keeps its own parser state across chunks.
///
/// Only OSC sequences hold a signal, so nothing else reaches this parser:
/// once a sequence ends in the ground state the scan jumps to the next OSC
/// introducer `ESC ]` (`memchr::memmem`, SIMD), stepping over text and every
/// other escape sequence at once. A second full parse of every byte cost
/// 0.54x of alacritty alone (debug build, `examples/signal_pass.rs`); jumping
/// from ESC to ESC and skipping plain CSI by hand, 0.86x in release.
pub struct SignalScanner {
    parser: Parser,
    collector: Collector,
    /// The parser is known to be in its ground state (bytes before an OSC do nothing).
    ground: bool,
    /// The last chunk ended with an ESC in the ground state: an OSC may begin
    /// with the first byte of the next one.
    esc_tail: bool,
}

/// What opens an OSC (the 7-bit form; C1 `0x9d` is a UTF-8 continuation byte here).
const OSC_START: &[u8] = b"\x1b]";

impl Default for SignalScanner {
    fn default() -> Self {
        Self { parser: Parser::new(), collector: Collector::default(), ground: true, esc_tail: false }
    }
}

impl SignalScanner {
    /// A scanner in the ground state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `bytes` up to and including the first Program Status query, if
    /// there is one. Returns how many bytes were read and whether the query
    /// reply ([`PROGRAM_STATUS_REPLY`]) is due now, after the screen has seen
    /// those bytes and before it sees the rest.
    pub fn advance(&mut self, bytes: &[u8]) -> (usize, bool) {
        let mut read = 0;
        if std::mem::take(&mut self.esc_tail) && bytes.first() == Some(&b']') {
            // The OSC's ESC came at the end of the last chunk: give it to the parser now.
            self.collector.ended = false;
            // One byte, never a whole sequence: nothing can end before it is read.
            let _ = self.parser.advance_until_terminated(&mut self.collector, b"\x1b");
            self.ground = false;
        }
        while read < bytes.len() {
            if self.ground {
                match memchr::memmem::find(&bytes[read..], OSC_START) {
                    Some(at) => read += at,
                    None => {
                        self.esc_tail = bytes.last() == Some(&0x1b);
                        return (bytes.len(), false);
                    }
                }
            }
            self.collector.ended = false;
            read += self.parser.advance_until_terminated(&mut self.collector, &bytes[read..]);
            self.ground = self.collector.ended;
            if std::mem::take(&mut self.collector.reply_due) {
                return (read, true);
            }
        }
        (read, false)
    }

    /// Takes the signals found so far, oldest first.
    pub fn take_signals(&mut self) -> Vec<TerminalSignal> {
        std::mem::take(&mut self.collector.signals)
    }
}

impl Perform for Collector {
    fn osc_dispatch(&mut self, params: &[&[u8]], bell_terminated: bool) {
        let total: usize = params.iter().map(|p| p.len() + 1).sum();
        let fits = total <= MAX_SIGNAL_OSC;
        // vte dispatches on BEL, on the ESC of an ST and on CAN/SUB, which
        // cancel the sequence: anything but BEL waits for the ST's `\\`.
        self.pending = None;
        if bell_terminated {
            self.ended = true;
            if fits {
                self.osc(params);
            }
        } else if fits {
            self.pending = Some(params.iter().map(|p| p.to_vec()).collect());
        }
    }

    fn execute(&mut self, _: u8) {
        self.pending = None;
    }

    fn hook(&mut self, _: &Params, _: &[u8], _: bool, _: char) {
        self.pending = None;
    }

    fn csi_dispatch(&mut self, _: &Params, _: &[u8], _: bool, _: char) {
        self.pending = None;
        self.ended = true;
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], _: bool, byte: u8) {
        self.ended = true;
        if let Some(params) = self.pending.take().filter(|_| byte == b'\\' && intermediates.is_empty()) {
            let params: Vec<&[u8]> = params.iter().map(Vec::as_slice).collect();
            self.osc(&params);
        }
    }

    fn terminated(&self) -> bool {
        self.reply_due || self.ended
    }
}

impl Collector {
    /// One complete OSC of at most [`MAX_SIGNAL_OSC`] bytes.
    fn osc(&mut self, params: &[&[u8]]) {
        let Some((number, rest)) = params.split_first() else { return };
        match *number {
            b"9" => self.osc9(rest),
            b"99" => self.osc99(rest),
            b"133" => self.osc133(rest),
            b"777" => self.osc777(rest),
            b"7501" => self.osc7501(rest),
            _ => {}
        }
    }

    /// OSC 9: `9;4;state;percent` is progress; other ConEmu commands (a
    /// number of one or two digits first) are not ours; the rest is iTerm2's notification text.
    fn osc9(&mut self, rest: &[&[u8]]) {
        let Some(first) = rest.first() else { return };
        if first == b"4" {
            if let Some(p) = progress(rest.get(1).copied(), rest.get(2).copied()) {
                self.signals.push(TerminalSignal::Progress(p));
            }
            return;
        }
        if !first.is_empty() && first.len() <= 2 && first.iter().all(u8::is_ascii_digit) {
            return;
        }
        if let Some(body) = text(&rest.join(&b';'), MAX_BODY).filter(|b| !b.trim().is_empty()) {
            self.signals.push(TerminalSignal::Notification { title: None, body });
        }
    }

    /// OSC 777: `777;notify;title;body` (rxvt, foot, Ghostty).
    fn osc777(&mut self, rest: &[&[u8]]) {
        let [b"notify", title, body @ ..] = rest else { return };
        let (Some(title), Some(body)) = (text(title, MAX_TITLE), text(&body.join(&b';'), MAX_BODY)) else { return };
        if title.trim().is_empty() && body.trim().is_empty() {
            return;
        }
        self.signals.push(TerminalSignal::Notification { title: nonempty(title), body });
    }

    /// OSC 99 (kitty): `99;metadata;payload`, metadata `key=value` pairs split
    /// by `:` — `i` id, `d=0` more chunks follow, `p` title or body, `e=1` base64.
    fn osc99(&mut self, rest: &[&[u8]]) {
        let [metadata, payload @ ..] = rest else { return };
        let Ok(metadata) = std::str::from_utf8(metadata) else { return };
        let (mut id, mut done, mut part, mut base64) = ("", true, "title", false);
        for pair in metadata.split(':').filter(|p| !p.is_empty()) {
            let Some((key, value)) = pair.split_once('=') else { return };
            match key {
                "i" => id = value,
                "d" => done = value != "0",
                "p" => part = value,
                "e" => base64 = value == "1",
                _ => {}
            }
        }
        let payload = payload.join(&b';');
        let decoded = if base64 { decode_base64(&payload) } else { Some(payload) };
        let Some(chunk) = decoded.and_then(|d| text(&d, MAX_BODY)) else { return };
        // Queries, buttons, icons and closing are not notifications; a chunk of them is dropped whole.
        if part != "title" && part != "body" {
            return;
        }
        let at = match self.kitty.iter().position(|k| k.id == id) {
            Some(at) => at,
            None if self.kitty.len() < MAX_PENDING_KITTY => {
                self.kitty.push(KittyDraft { id: id.to_owned(), ..Default::default() });
                self.kitty.len() - 1
            }
            None => return,
        };
        let draft = &mut self.kitty[at];
        let target = if part == "title" { &mut draft.title } else { &mut draft.body };
        let cap = if part == "title" { MAX_TITLE } else { MAX_BODY };
        if target.len() + chunk.len() > cap {
            self.kitty.remove(at);
            return;
        }
        target.push_str(&chunk);
        if done {
            let draft = self.kitty.remove(at);
            // kitty shows a title-only notification with the title as its text.
            let (title, body) =
                if draft.body.is_empty() { (None, draft.title) } else { (nonempty(draft.title), draft.body) };
            if !body.trim().is_empty() {
                self.signals.push(TerminalSignal::Notification { title, body });
            }
        }
    }

    /// OSC 133 (FinalTerm semantic prompts): A prompt, B input, C output, D;exit finished.
    fn osc133(&mut self, rest: &[&[u8]]) {
        let Some(mark) = rest.first() else { return };
        let signal = match *mark {
            b"A" => TerminalSignal::PromptShown,
            b"C" => TerminalSignal::CommandStarted,
            b"D" => {
                let exit = match rest.get(1) {
                    // Options such as `aid=…` may follow the code; a first field that is one is no code.
                    Some(code) if !code.is_empty() && !code.contains(&b'=') => {
                        match std::str::from_utf8(code).ok().and_then(|c| c.parse().ok()) {
                            Some(code) => Some(code),
                            None => return,
                        }
                    }
                    _ => None,
                };
                TerminalSignal::CommandFinished { exit }
            }
            _ => return,
        };
        self.signals.push(signal);
    }

    /// OSC 7501: `?` is the support query; otherwise `key=value` pairs split by `:`.
    fn osc7501(&mut self, rest: &[&[u8]]) {
        let body = rest.join(&b';');
        if body.first() == Some(&b'?') {
            self.reply_due = true;
            return;
        }
        if let Some(status) = program_status(&body) {
            self.signals.push(TerminalSignal::ProgramStatus(status));
        }
    }
}

/// OSC 9;4 `state;percent`: `None` for a state outside 0–4 or a malformed percent.
fn progress(state: Option<&[u8]>, percent: Option<&[u8]>) -> Option<Progress> {
    let number = |b: Option<&[u8]>| -> Option<u8> {
        match b {
            None | Some(b"") => Some(0),
            Some(b) => std::str::from_utf8(b).ok()?.parse::<u8>().ok().map(|p| p.min(100)),
        }
    };
    let pct = number(percent)?;
    Some(match number(state)? {
        0 => Progress::Cleared,
        1 => Progress::Normal(pct),
        2 => Progress::Error(pct),
        3 => Progress::Indeterminate,
        4 => Progress::Paused(pct),
        _ => return None,
    })
}

/// An OSC 7501 report of the root record; `None` when malformed or for a child record (`id=`).
fn program_status(body: &[u8]) -> Option<ProgramStatus> {
    let body = std::str::from_utf8(body).ok()?;
    let mut status =
        ProgramStatus { state: ProgramState::Idle, kind: None, app: None, progress: None, title: None, message: None };
    let mut state = None;
    for pair in body.split(':') {
        let (key, value) = pair.split_once('=')?;
        match key {
            "state" => {
                state = Some(match value {
                    "idle" => ProgramState::Idle,
                    "working" => ProgramState::Working,
                    "blocked" => ProgramState::Blocked,
                    "done" => ProgramState::Done,
                    "error" => ProgramState::Error,
                    "clear" => ProgramState::Clear,
                    _ => return None,
                })
            }
            // Background tasks report as child records; the node's state is the root's.
            "id" => return None,
            "kind" => {
                status.kind = match value {
                    "permission" => Some(BlockedKind::Permission),
                    "question" => Some(BlockedKind::Question),
                    "auth" => Some(BlockedKind::Auth),
                    _ => None,
                }
            }
            "app" => {
                let ok = !value.is_empty()
                    && value.len() <= 32
                    && value.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.+-".contains(&b));
                status.app = Some(value.to_owned()).filter(|_| ok);
                if !ok {
                    return None;
                }
            }
            "progress" => status.progress = Some(value.parse::<u8>().ok().filter(|p| *p <= 100)?),
            "title" => status.title = Some(text(&decode_base64(value.as_bytes())?, MAX_TITLE)?),
            "msg" => status.message = Some(text(&decode_base64(value.as_bytes())?, MAX_BODY)?),
            // Later revisions may add keys; a reader skips what it does not know.
            _ => {}
        }
    }
    status.state = state?;
    Some(status)
}

fn decode_base64(bytes: &[u8]) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(bytes).ok()
}

/// `bytes` as text of at most `cap` bytes: UTF-8 without control characters.
fn text(bytes: &[u8], cap: usize) -> Option<String> {
    if bytes.len() > cap {
        return None;
    }
    let s = std::str::from_utf8(bytes).ok()?;
    (!s.chars().any(char::is_control)).then(|| s.to_owned())
}

fn nonempty(s: String) -> Option<String> {
    (!s.trim().is_empty()).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(bytes: &[u8]) -> (Vec<TerminalSignal>, usize) {
        let mut s = SignalScanner::new();
        let mut replies = 0;
        let mut rest = bytes;
        while !rest.is_empty() {
            let (read, reply) = s.advance(rest);
            replies += usize::from(reply);
            rest = &rest[read..];
        }
        (s.take_signals(), replies)
    }

    fn note(title: Option<&str>, body: &str) -> TerminalSignal {
        TerminalSignal::Notification { title: title.map(str::to_owned), body: body.to_owned() }
    }

    #[test]
    fn text_between_sequences_is_skipped_without_losing_any() {
        // Every kind of sequence end before a signal: CSI, ESC, ST-ended and BEL-ended OSC,
        // a DCS, an APC, an unterminated OSC cancelled by CAN, and UTF-8 text.
        let bytes = "héllo \x1b[31mred\x1b[0m \x1b(B\x1b]0;title\x1b\\ 日本 \x1b]0;t\x07\
                     \x1bPq#0;1;2\x1b\\\x1b_apc\x1b\\\x1b]9;lost\x18after\x1b]9;kept\x07";
        let (signals, _) = scan(bytes.as_bytes());
        assert_eq!(signals, vec![note(None, "kept")]);
        let (signals, _) = scan(b"\x1b[3\x1b]9;after a broken CSI\x07\x1b[38;5\x1b]9;again\x07");
        assert_eq!(signals, vec![note(None, "after a broken CSI"), note(None, "again")]);
        let mut s = SignalScanner::new();
        assert_eq!(s.advance(b"plain text only"), (15, false));
        assert!(s.ground);
        assert_eq!(s.advance(b"\x1b]9;half"), (8, false));
        assert!(!s.ground, "inside an OSC");
        assert_eq!(s.advance(b" done\x07tail"), (10, false));
        assert_eq!(s.take_signals(), vec![note(None, "half done")]);
    }

    #[test]
    fn an_osc_whose_esc_ends_a_chunk_is_still_found() {
        let mut s = SignalScanner::new();
        assert_eq!(s.advance(b"text \x1b[0m and \x1b"), (15, false));
        assert_eq!(s.advance(b"]9;split\x07"), (9, false));
        assert_eq!(s.take_signals(), vec![note(None, "split")]);
        // An ESC at a chunk's end that begins something else is nothing.
        assert_eq!(s.advance(b"tail \x1b"), (6, false));
        assert_eq!(s.advance(b"[1mbold \x1b]9;next\x07"), (17, false));
        assert_eq!(s.take_signals(), vec![note(None, "next")]);
    }

    #[test]
    fn notifications_from_osc_9_777_and_99() {
        let (signals, _) = scan(
            b"text\x1b]9;Build finished\x07more\x1b]777;notify;CI;all green; 3 jobs\x1b\\\
              \x1b]99;i=1:d=0;Deploy\x1b\\\x1b]99;i=1:p=body;done\x1b\\\
              \x1b]99;e=1;aGk=\x07",
        );
        assert_eq!(
            signals,
            vec![
                note(None, "Build finished"),
                note(Some("CI"), "all green; 3 jobs"),
                note(Some("Deploy"), "done"),
                note(None, "hi"),
            ]
        );
    }

    #[test]
    fn progress_and_command_marks() {
        let (signals, _) = scan(
            b"\x1b]9;4;1;42\x07\x1b]9;4;3\x07\x1b]9;4;2;250\x07\x1b]9;4;0\x07\
              \x1b]133;A\x07$ \x1b]133;B\x07make\x1b]133;C\x07out\x1b]133;D;2\x07\x1b]133;D\x07\x1b]133;D;;aid=7\x07",
        );
        assert_eq!(
            signals,
            vec![
                TerminalSignal::Progress(Progress::Normal(42)),
                TerminalSignal::Progress(Progress::Indeterminate),
                TerminalSignal::Progress(Progress::Error(100)),
                TerminalSignal::Progress(Progress::Cleared),
                TerminalSignal::PromptShown,
                TerminalSignal::CommandStarted,
                TerminalSignal::CommandFinished { exit: Some(2) },
                TerminalSignal::CommandFinished { exit: None },
                TerminalSignal::CommandFinished { exit: None },
            ]
        );
    }

    #[test]
    fn program_status_reports_and_the_query() {
        // msg decodes to "Run touch notes.txt?" (claude-code's permission prompt).
        let (signals, replies) = scan(
            b"\x1b]7501;?\x1b\\\x1b]7501;state=working:app=claude-code:progress=40\x1b\\\
              \x1b]7501;state=blocked:app=claude-code:kind=permission:msg=UnVuIHRvdWNoIG5vdGVzLnR4dD8=\x1b\\\
              \x1b]7501;state=working:app=claude-code:id=task1\x1b\\\x1b]7501;state=clear\x07",
        );
        assert_eq!(replies, 1);
        let status = |state, kind, progress, message: Option<&str>, app: Option<&str>| {
            TerminalSignal::ProgramStatus(ProgramStatus {
                state,
                kind,
                app: app.map(str::to_owned),
                progress,
                title: None,
                message: message.map(str::to_owned),
            })
        };
        assert_eq!(
            signals,
            vec![
                status(ProgramState::Working, None, Some(40), None, Some("claude-code")),
                status(
                    ProgramState::Blocked,
                    Some(BlockedKind::Permission),
                    None,
                    Some("Run touch notes.txt?"),
                    Some("claude-code")
                ),
                status(ProgramState::Clear, None, None, None, None),
            ],
            "the child record (id=task1) does not count"
        );
    }

    #[test]
    fn the_query_stops_the_scan_right_after_itself() {
        let mut s = SignalScanner::new();
        let bytes = b"ab\x1b]7501;?\x07\x1b[c";
        let (read, reply) = s.advance(bytes);
        assert_eq!((read, reply), (b"ab\x1b]7501;?\x07".len(), true));
        assert_eq!(s.advance(&bytes[read..]), (3, false));
    }

    #[test]
    fn bad_and_oversized_sequences_have_no_effect() {
        let long = format!("\x1b]9;{}\x07", "x".repeat(MAX_SIGNAL_OSC));
        let long_title = format!("\x1b]777;notify;{};b\x07", "t".repeat(MAX_TITLE + 1));
        let long_kitty: String = (0..5).map(|_| format!("\x1b]99;i=9:d=0:p=body;{}\x07", "k".repeat(600))).collect();
        let cases: Vec<Vec<u8>> = vec![
            long.into_bytes(),
            long_title.into_bytes(),
            long_kitty.into_bytes(),
            b"\x1b]9;\x07\x1b]9;   \x07\x1b]9;9;/home/me\x07\x1b]9;1;100\x07".to_vec(),
            b"\x1b]9;\xff\xfe\x07".to_vec(),
            // vte drops C0 bytes inside an OSC itself; a C1 control (U+0085) arrives and is refused.
            b"\x1b]9;next\xc2\x85line\x07".to_vec(),
            b"\x1b]9;4;7;10\x07\x1b]9;4;1;x\x07".to_vec(),
            b"\x1b]777;notify\x07\x1b]777;other;a;b\x07\x1b]777;notify;;\x07".to_vec(),
            b"\x1b]99;e=1;***\x07\x1b]99;p=icon;x\x07\x1b]99;nokey;x\x07".to_vec(),
            b"\x1b]133;Z\x07\x1b]133;D;abc\x07\x1b]133\x07".to_vec(),
            b"\x1b]7501;state=sleeping\x07\x1b]7501;app=x\x07\x1b]7501;state=done:msg=!!\x07".to_vec(),
            b"\x1b]7501;state=done:progress=101\x07\x1b]7501;state=done:app=bad app\x07\x1b]7501;state\x07".to_vec(),
        ];
        for bytes in cases {
            let (signals, replies) = scan(&bytes);
            assert_eq!((signals, replies), (vec![], 0), "{:?}", String::from_utf8_lossy(&bytes));
        }
    }

    #[test]
    fn sequences_split_across_chunks_are_found_whole() {
        let bytes = b"\x1b]777;notify;T;B\x07\x1b]133;D;0\x07\x1b]7501;?\x07";
        for split in 1..bytes.len() {
            let mut s = SignalScanner::new();
            let mut replies = 0;
            for part in [&bytes[..split], &bytes[split..]] {
                let mut rest = part;
                while !rest.is_empty() {
                    let (read, reply) = s.advance(rest);
                    replies += usize::from(reply);
                    rest = &rest[read..];
                }
            }
            assert_eq!(
                s.take_signals(),
                vec![note(Some("T"), "B"), TerminalSignal::CommandFinished { exit: Some(0) }],
                "split at {split}"
            );
            assert_eq!(replies, 1, "split at {split}");
        }
    }
}
