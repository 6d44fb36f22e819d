//! VT state for one terminal: alacritty's `Term` plus its parser, fed with
//! bytes from anywhere (the PTY reader thread, a recording, a restored
//! snapshot). Knows nothing about processes or the PTY.

use std::sync::Arc;
use std::time::Instant;

use alacritty_terminal::event::{Event, EventListener, WindowSize};
use alacritty_terminal::grid::{Dimensions, Scroll};
use alacritty_terminal::term::{Config, Term, TermMode};
use alacritty_terminal::vte::ansi::{CursorShape as VtCursorShape, CursorStyle, Processor};
use parking_lot::Mutex;

use crate::colors::{Palette, Theme};
use crate::error::TerminalError;
use crate::input::{InputModes, MouseEncoding, MouseMode};
use crate::signals::{SignalScanner, TerminalSignal, PROGRAM_STATUS_REPLY};

/// Default scrollback, in lines.
pub const DEFAULT_SCROLLBACK: usize = 10_000;

/// Grid size in cells plus the pixel size of one cell (for `CSI 14 t` replies and the PTY).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermSize {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
    /// Width of one cell in pixels (0 if unknown).
    pub cell_width: u16,
    /// Height of one cell in pixels (0 if unknown).
    pub cell_height: u16,
}

impl TermSize {
    /// A size with unknown cell pixel dimensions.
    pub fn new(cols: u16, rows: u16) -> Self {
        Self { cols, rows, cell_width: 0, cell_height: 0 }
    }

    /// Rejects sizes the grid cannot hold.
    pub fn validate(&self) -> Result<(), TerminalError> {
        let reason = if self.cols < 2 || self.rows < 1 {
            "need at least 2 columns and 1 row"
        } else if self.cols > 4096 || self.rows > 4096 {
            "at most 4096 columns and rows"
        } else {
            return Ok(());
        };
        Err(TerminalError::InvalidSize { cols: self.cols, rows: self.rows, reason })
    }
}

/// `Dimensions` for alacritty (it has no public plain size type outside tests).
struct GridDims {
    cols: usize,
    rows: usize,
}

impl Dimensions for GridDims {
    fn total_lines(&self) -> usize {
        self.rows
    }
    fn screen_lines(&self) -> usize {
        self.rows
    }
    fn columns(&self) -> usize {
        self.cols
    }
}

/// How to build a [`Screen`].
#[derive(Debug, Clone)]
pub struct ScreenConfig {
    /// Scrollback lines kept (at least [`DEFAULT_SCROLLBACK`] is recommended).
    pub scrollback_lines: usize,
    /// Colours.
    pub theme: Theme,
}

impl Default for ScreenConfig {
    fn default() -> Self {
        Self { scrollback_lines: DEFAULT_SCROLLBACK, theme: Theme::default() }
    }
}

/// Something the terminal wants done outside the grid, drained with [`Screen::take_events`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScreenEvent {
    /// OSC 0/2 set the title (`Some`) or it was reset (`None`).
    Title(Option<String>),
    /// BEL.
    Bell,
    /// OSC 52 clipboard write.
    ClipboardStore(String),
    /// Bytes to write back to the PTY (device reports, colour query replies).
    PtyWrite(Vec<u8>),
    /// A notification, progress, prompt mark or status report (see [`TerminalSignal`]).
    Signal(TerminalSignal),
}

/// Event sink handed to alacritty: events are queued, never acted on under the lock.
#[derive(Clone, Default)]
pub(crate) struct EventQueue(Arc<Mutex<Vec<Event>>>);

impl EventListener for EventQueue {
    fn send_event(&self, event: Event) {
        self.0.lock().push(event);
    }
}

/// An alacritty terminal of `size` keeping `scrollback` lines, reporting to `events`.
fn new_term(size: TermSize, scrollback: usize, events: &EventQueue) -> Term<EventQueue> {
    let term_config = Config {
        scrolling_history: scrollback,
        default_cursor_style: CursorStyle { shape: VtCursorShape::Block, blinking: false },
        ..Config::default()
    };
    let dims = GridDims { cols: size.cols.into(), rows: size.rows.into() };
    Term::new(term_config, &dims, events.clone())
}

/// Length of the incomplete UTF-8 sequence `data` ends with (0 when it ends on a character boundary).
fn incomplete_utf8_tail(data: &[u8]) -> usize {
    for back in 1..=data.len().min(4) {
        let byte = data[data.len() - back];
        if (0x80..0xC0).contains(&byte) {
            continue; // a continuation byte: look further back for its lead
        }
        let needed = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return 0,
        };
        return if back < needed { back } else { 0 };
    }
    0
}

/// VT state of one terminal.
pub struct Screen {
    term: Term<EventQueue>,
    parser: Processor,
    events: EventQueue,
    theme: Theme,
    size: TermSize,
    scrollback_lines: usize,
    /// The exit line written under the output (see `write_exit_line`), kept out of `read_text`.
    pub(crate) exit_line: Option<String>,
    generation: u64,
    last_output: Option<Instant>,
    /// An incomplete UTF-8 sequence held back from the end of the last chunk (see [`Screen::feed`]).
    utf8_tail: Vec<u8>,
    /// The second pass that finds what alacritty ignores (notifications, marks, status).
    signals: SignalScanner,
    /// Whether that pass runs (off inside tmux, whose pane output is scanned instead).
    signal_pass: bool,
}

impl Screen {
    /// A blank screen of `size`.
    pub fn new(size: TermSize, config: ScreenConfig) -> Result<Self, TerminalError> {
        size.validate()?;
        let events = EventQueue::default();
        let term = new_term(size, config.scrollback_lines, &events);
        Ok(Self {
            term,
            parser: Processor::new(),
            events,
            theme: config.theme,
            size,
            scrollback_lines: config.scrollback_lines,
            exit_line: None,
            generation: 1,
            last_output: None,
            utf8_tail: Vec::new(),
            signals: SignalScanner::new(),
            signal_pass: true,
        })
    }

    /// Starts over on a blank grid of the same size, history and modes gone.
    pub(crate) fn reset_term(&mut self) {
        self.term = new_term(self.size, self.scrollback_lines, &self.events);
        self.parser = Processor::new();
        self.utf8_tail.clear();
        self.exit_line = None;
        self.bump();
    }

    /// Turns the signal pass over fed output on or off (inside tmux the client's
    /// output holds no signals; the pane's own output is scanned instead).
    pub(crate) fn set_signal_pass(&mut self, on: bool) {
        self.signal_pass = on;
    }

    /// Parses program output.
    pub fn feed(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        // Chunks handed to the parser always end on a character boundary: an
        // incomplete UTF-8 sequence at the end is held back and prepended to the
        // next chunk. vte 0.15 drops the byte before such a trailing sequence when
        // the same chunk also completes one begun in the previous chunk (found by
        // tests/fuzz_vt.rs); a PTY read can end anywhere, so this happened in practice.
        let joined;
        let data: &[u8] = if self.utf8_tail.is_empty() {
            bytes
        } else {
            joined = [std::mem::take(&mut self.utf8_tail).as_slice(), bytes].concat();
            &joined
        };
        let (mut now, later) = data.split_at(data.len() - incomplete_utf8_tail(data));
        // The signal pass stops after a Program Status query so that its reply
        // is queued between the replies alacritty makes to what came before
        // and after it (programs read a DA1 reply first as "not supported").
        while !now.is_empty() {
            let (read, reply_due) = if self.signal_pass { self.signals.advance(now) } else { (now.len(), false) };
            self.parser.advance(&mut self.term, &now[..read]);
            if reply_due {
                let reply = String::from_utf8_lossy(PROGRAM_STATUS_REPLY).into_owned();
                self.events.0.lock().push(Event::PtyWrite(reply));
            }
            now = &now[read..];
        }
        self.utf8_tail.extend_from_slice(later);
        self.keep_view_in_history();
        self.last_output = Some(Instant::now());
        self.bump();
    }

    /// Pulls a scrolled-back view into the history it shows. alacritty_terminal
    /// 0.26 moves a scrolled-back view up by every line a scroll region that
    /// does not start at the top scrolls, although such a scroll adds nothing
    /// to the history; with a history not yet full the view then starts above
    /// its oldest line, and drawing it indexed outside the grid (a panic found
    /// by tests/fuzz_vt.rs). `Delta(0)` clamps the offset to the history.
    fn keep_view_in_history(&mut self) {
        let grid = self.term.grid();
        if grid.display_offset() > grid.history_size() {
            self.term.scroll_display(Scroll::Delta(0));
        }
    }

    /// When a synchronized update (DEC 2026) must be flushed even if its end never arrives.
    pub fn sync_deadline(&self) -> Option<Instant> {
        self.parser.sync_timeout().sync_timeout()
    }

    /// Ends a pending synchronized update whose deadline passed, drawing what it buffered.
    pub fn flush_sync(&mut self) {
        if self.sync_deadline().is_some() {
            self.parser.stop_sync(&mut self.term);
            self.keep_view_in_history();
            self.bump();
        }
    }

    /// Takes queued events, turning colour and size queries into PTY replies.
    pub fn take_events(&mut self) -> Vec<ScreenEvent> {
        let raw = std::mem::take(&mut *self.events.0.lock());
        let signals = self.signals.take_signals();
        if raw.is_empty() && signals.is_empty() {
            return Vec::new();
        }
        let palette = Palette::new(&self.theme, self.term.colors());
        let mut out = Vec::with_capacity(raw.len());
        for event in raw {
            match event {
                Event::Title(title) => out.push(ScreenEvent::Title(Some(title))),
                Event::ResetTitle => out.push(ScreenEvent::Title(None)),
                Event::Bell => out.push(ScreenEvent::Bell),
                Event::ClipboardStore(_, text) => out.push(ScreenEvent::ClipboardStore(text)),
                Event::PtyWrite(text) => out.push(ScreenEvent::PtyWrite(text.into_bytes())),
                Event::ColorRequest(index, format) => {
                    let reply = format(palette.at(index).into());
                    out.push(ScreenEvent::PtyWrite(reply.into_bytes()));
                }
                Event::TextAreaSizeRequest(format) => {
                    let reply = format(self.window_size());
                    out.push(ScreenEvent::PtyWrite(reply.into_bytes()));
                }
                // Clipboard reads are disabled (OSC 52 copy only); the rest need no action.
                Event::ClipboardLoad(..)
                | Event::MouseCursorDirty
                | Event::CursorBlinkingChange
                | Event::Wakeup
                | Event::Exit
                | Event::ChildExit(_) => {}
            }
        }
        out.extend(signals.into_iter().map(ScreenEvent::Signal));
        out
    }

    fn window_size(&self) -> WindowSize {
        WindowSize {
            num_lines: self.size.rows,
            num_cols: self.size.cols,
            cell_width: self.size.cell_width,
            cell_height: self.size.cell_height,
        }
    }

    /// Resizes the grid (reflowing wrapped lines).
    pub fn resize(&mut self, size: TermSize) -> Result<(), TerminalError> {
        size.validate()?;
        if size.cols != self.size.cols || size.rows != self.size.rows {
            self.term.resize(GridDims { cols: size.cols.into(), rows: size.rows.into() });
        }
        self.size = size;
        self.bump();
        Ok(())
    }

    /// Current size.
    pub fn size(&self) -> TermSize {
        self.size
    }

    /// The colours snapshots resolve against, for code in this crate.
    pub(crate) fn theme(&self) -> &Theme {
        &self.theme
    }

    /// Changes colours; takes effect on the next snapshot.
    pub fn set_theme(&mut self, theme: Theme) {
        self.theme = theme;
        self.bump();
    }

    /// Counter that increases whenever anything visible may have changed
    /// (output, resize, scroll, selection). A renderer redraws when it differs
    /// from the generation of its last frame.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub(crate) fn bump(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    /// When output was last parsed (for agent status heuristics).
    pub fn last_output_at(&self) -> Option<Instant> {
        self.last_output
    }

    /// Modes relevant to keyboard, paste and mouse encoding.
    pub fn input_modes(&self) -> InputModes {
        let mode = *self.term.mode();
        let mouse = if mode.contains(TermMode::MOUSE_MOTION) {
            MouseMode::AnyEvent
        } else if mode.contains(TermMode::MOUSE_DRAG) {
            MouseMode::ButtonEvent
        } else if mode.contains(TermMode::MOUSE_REPORT_CLICK) {
            MouseMode::Normal
        } else {
            MouseMode::Off
        };
        let mouse_encoding = if mode.contains(TermMode::SGR_MOUSE) {
            MouseEncoding::Sgr
        } else if mode.contains(TermMode::UTF8_MOUSE) {
            MouseEncoding::Utf8
        } else {
            MouseEncoding::Legacy
        };
        InputModes {
            app_cursor: mode.contains(TermMode::APP_CURSOR),
            app_keypad: mode.contains(TermMode::APP_KEYPAD),
            bracketed_paste: mode.contains(TermMode::BRACKETED_PASTE),
            mouse,
            mouse_encoding,
            alt_screen: mode.contains(TermMode::ALT_SCREEN),
            alternate_scroll: mode.contains(TermMode::ALTERNATE_SCROLL),
            focus_reporting: mode.contains(TermMode::FOCUS_IN_OUT),
        }
    }

    /// Whether the node has keyboard focus (unfocused cursors draw hollow).
    pub fn set_focused(&mut self, focused: bool) {
        if self.term.is_focused != focused {
            self.term.is_focused = focused;
            self.bump();
        }
    }

    /// Scrolls the view by `lines` (positive = back into history).
    pub fn scroll_lines(&mut self, lines: i32) {
        self.scroll(Scroll::Delta(lines));
    }

    /// Scrolls the view by whole pages (positive = back into history).
    pub fn scroll_pages(&mut self, pages: i32) {
        let step = if pages >= 0 { Scroll::PageUp } else { Scroll::PageDown };
        for _ in 0..pages.unsigned_abs() {
            self.scroll(step);
        }
    }

    /// Scrolls back to the oldest line of history.
    pub fn scroll_to_top(&mut self) {
        self.scroll(Scroll::Top);
    }

    /// Returns to following live output.
    pub fn scroll_to_bottom(&mut self) {
        self.scroll(Scroll::Bottom);
    }

    fn scroll(&mut self, scroll: Scroll) {
        let before = self.term.grid().display_offset();
        self.term.scroll_display(scroll);
        if self.term.grid().display_offset() != before {
            self.bump();
        }
    }

    /// Lines currently scrolled back (0 = at the bottom).
    pub fn display_offset(&self) -> usize {
        self.term.grid().display_offset()
    }

    /// The underlying alacritty terminal, for code in this crate.
    pub(crate) fn term(&self) -> &Term<EventQueue> {
        &self.term
    }

    /// Mutable access to the underlying alacritty terminal, for code in this crate.
    pub(crate) fn term_mut(&mut self) -> &mut Term<EventQueue> {
        &mut self.term
    }
}

/// A screen of `cols`×`rows` with `bytes` already fed: the shared fixture of this crate's unit tests.
#[cfg(test)]
pub(crate) fn fed_screen(cols: u16, rows: u16, bytes: &[u8]) -> Screen {
    let mut s = Screen::new(TermSize::new(cols, rows), ScreenConfig::default()).expect("valid test size");
    s.feed(bytes);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(cols: u16, rows: u16) -> Screen {
        Screen::new(TermSize::new(cols, rows), ScreenConfig::default()).unwrap()
    }

    #[test]
    fn rejects_degenerate_sizes() {
        assert!(Screen::new(TermSize::new(0, 24), ScreenConfig::default()).is_err());
        assert!(Screen::new(TermSize::new(80, 0), ScreenConfig::default()).is_err());
        assert!(screen(80, 24).resize(TermSize::new(1, 1)).is_err());
    }

    #[test]
    fn title_bell_clipboard_and_replies_become_events() {
        let mut s = screen(20, 4);
        s.feed(b"\x1b]2;hello\x07\x07\x1b]52;c;aGk=\x07\x1b[6n\x1b]0;\x07");
        let events = s.take_events();
        assert_eq!(events[0], ScreenEvent::Title(Some("hello".into())));
        assert_eq!(events[1], ScreenEvent::Bell);
        assert_eq!(events[2], ScreenEvent::ClipboardStore("hi".into()));
        assert_eq!(events[3], ScreenEvent::PtyWrite(b"\x1b[1;1R".to_vec()));
        assert!(matches!(events[4], ScreenEvent::Title(_)));
        assert!(s.take_events().is_empty());
    }

    #[test]
    fn signals_become_events_and_the_status_query_is_answered_in_order() {
        let mut s = screen(20, 4);
        // DA1 first, then the status query, then DA1 again: the replies keep that order.
        s.feed(b"\x1b[c\x1b]7501;?\x1b\\\x1b[c\x1b]777;notify;T;B\x07\x1b]133;D;1\x07");
        let events = s.take_events();
        let writes: Vec<Vec<u8>> = events
            .iter()
            .filter_map(|e| match e {
                ScreenEvent::PtyWrite(b) => Some(b.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(writes.len(), 3, "{events:?}");
        assert_eq!(writes[1], PROGRAM_STATUS_REPLY);
        assert_eq!(writes[0], writes[2], "both DA1 replies");
        let signals: Vec<&TerminalSignal> = events
            .iter()
            .filter_map(|e| match e {
                ScreenEvent::Signal(sig) => Some(sig),
                _ => None,
            })
            .collect();
        assert_eq!(
            signals,
            [
                &TerminalSignal::Notification { title: Some("T".into()), body: "B".into() },
                &TerminalSignal::CommandFinished { exit: Some(1) }
            ]
        );
        // The grid never shows them.
        assert_eq!(s.snapshot().row_text(0), "");
    }

    #[test]
    fn background_colour_query_is_answered_from_the_theme() {
        let mut s = screen(20, 4);
        s.feed(b"\x1b]11;?\x07");
        let events = s.take_events();
        let ScreenEvent::PtyWrite(reply) = &events[0] else { panic!("{events:?}") };
        assert_eq!(String::from_utf8_lossy(reply), "\x1b]11;rgb:0000/0000/0000\x07");
    }

    #[test]
    fn generation_moves_on_output_resize_and_scroll() {
        let mut s = screen(10, 3);
        let g0 = s.generation();
        s.feed(b"a\r\nb\r\nc\r\nd\r\ne");
        let g1 = s.generation();
        assert!(g1 > g0);
        s.scroll_lines(1);
        assert_eq!(s.display_offset(), 1);
        assert!(s.generation() > g1);
        let g2 = s.generation();
        s.scroll_lines(0);
        assert_eq!(s.generation(), g2, "no-op scroll must not force a redraw");
        s.scroll_to_bottom();
        assert_eq!(s.display_offset(), 0);
        s.resize(TermSize::new(12, 3)).unwrap();
        assert!(s.generation() > g2);
    }

    #[test]
    fn a_scroll_region_below_the_top_never_scrolls_the_view_past_the_history() {
        let mut s = screen(10, 5);
        s.feed(b"1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n7\r\n8");
        s.scroll_to_top();
        assert_eq!(s.display_offset(), 3);
        // Region rows 2..5, cursor on its last row: each line feed scrolls the region only.
        s.feed(b"\x1b[2;5r\x1b[5;1H\n\n\n");
        assert!(s.display_offset() <= 3, "offset {} past a 3-line history", s.display_offset());
        assert_eq!(s.snapshot().row_text(0), "1");
    }

    #[test]
    fn modes_follow_the_program() {
        let mut s = screen(10, 3);
        assert_eq!(s.input_modes().mouse, crate::mouse::MouseMode::Off);
        s.feed(b"\x1b[?1h\x1b[?2004h\x1b[?1002h\x1b[?1006h\x1b[?1049h");
        let m = s.input_modes();
        assert!(m.app_cursor && m.bracketed_paste && m.alt_screen);
        assert_eq!(m.mouse, crate::mouse::MouseMode::ButtonEvent);
        assert_eq!(m.mouse_encoding, crate::mouse::MouseEncoding::Sgr);
    }

    #[test]
    fn synchronized_update_is_held_until_flushed() {
        let mut s = screen(10, 3);
        s.feed(b"\x1b[?2026hhidden");
        assert_eq!(s.snapshot().row_text(0), "");
        assert!(s.sync_deadline().is_some());
        s.flush_sync();
        assert_eq!(s.snapshot().row_text(0), "hidden");
        assert!(s.sync_deadline().is_none());
    }
}
