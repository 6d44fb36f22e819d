//! What an application uses of a running terminal: [`RunningTerminal`],
//! implemented by [`Terminal`](crate::Terminal) (a child on a PTY; that impl
//! lives beside it in `session.rs`) and by an application's test fakes. The
//! boundary speaks the crate's plain types (bytes, the [`Screen`],
//! [`TermSize`], [`ExitStatus`]), never the PTY's, so a fake needs no
//! process: it can keep a real [`Screen`] and feed it text.

use std::time::Instant;

use crate::error::TerminalError;
use crate::host::ExitStatus;
use crate::input::{InputModes, Modifiers};
use crate::keys::{encode_key, encode_paste, Key};
use crate::screen::{Screen, TermSize};
use crate::snapshot::GridSnapshot;

/// A running terminal as the app drives and draws it (the other direction
/// of [`TerminalHost`](crate::TerminalHost)). Dropping it ends the session
/// the way closing a terminal window would.
pub trait RunningTerminal: Send + Sync {
    /// Sends raw bytes to the program (already-encoded keys, mouse reports, paste); never blocks.
    fn write(&self, bytes: Vec<u8>) -> Result<(), TerminalError>;
    /// Resizes the grid and whatever the program reads its size from.
    fn resize(&self, size: TermSize) -> Result<(), TerminalError>;
    /// Runs `f` once with the screen locked (keep it short: output waits for the lock).
    fn lock_screen(&self, f: &mut dyn FnMut(&mut Screen));
    /// Text for agents: the last `max_chars` of history and screen.
    fn read_text(&self, max_chars: usize) -> String;
    /// The exit status, once the program has exited.
    fn exit_status(&self) -> Option<ExitStatus>;

    /// Encodes and sends a key press, honouring the program's current modes.
    fn send_key(&self, key: Key, mods: Modifiers) -> Result<(), TerminalError> {
        let modes = self.input_modes();
        self.write(encode_key(key, mods, &modes))
    }
    /// Pastes text (bracketed when the program asked for it).
    fn paste(&self, text: &str) -> Result<(), TerminalError> {
        let modes = self.input_modes();
        self.write(encode_paste(text, modes.bracketed_paste))
    }
    /// A drawable copy of the visible grid.
    fn snapshot(&self) -> GridSnapshot {
        screen_with(self, |s| s.snapshot())
    }
    /// See [`Screen::generation`]: compare with the last drawn frame's value.
    fn generation(&self) -> u64 {
        screen_with(self, |s| s.generation())
    }
    /// Current input modes (for key, mouse and wheel encoding).
    fn input_modes(&self) -> InputModes {
        screen_with(self, |s| s.input_modes())
    }
    /// When the program last produced output.
    fn last_output_at(&self) -> Option<Instant> {
        screen_with(self, |s| s.last_output_at())
    }
}

impl dyn RunningTerminal + '_ {
    /// Runs `f` with the screen locked (snapshot, selection, scrolling) and returns what it returns.
    pub fn with_screen<R>(&self, f: impl FnOnce(&mut Screen) -> R) -> R {
        screen_with(self, f)
    }
}

/// [`RunningTerminal::lock_screen`] with a result: the object-safe method
/// takes an `FnMut`, so the `FnOnce` and its result ride in options.
fn screen_with<T: RunningTerminal + ?Sized, R>(t: &T, f: impl FnOnce(&mut Screen) -> R) -> R {
    let mut f = Some(f);
    let mut out = None;
    t.lock_screen(&mut |s| {
        if let Some(f) = f.take() {
            out = Some(f(s));
        }
    });
    // An implementation that never runs the closure breaks the trait's contract.
    out.expect("RunningTerminal::lock_screen must run its closure once")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screen::ScreenConfig;
    use parking_lot::Mutex;

    /// A terminal without a process: a screen and the bytes written.
    struct Fake {
        screen: Mutex<Screen>,
        written: Mutex<Vec<Vec<u8>>>,
    }

    impl RunningTerminal for Fake {
        fn write(&self, bytes: Vec<u8>) -> Result<(), TerminalError> {
            self.written.lock().push(bytes);
            Ok(())
        }
        fn resize(&self, size: TermSize) -> Result<(), TerminalError> {
            self.screen.lock().resize(size)
        }
        fn lock_screen(&self, f: &mut dyn FnMut(&mut Screen)) {
            f(&mut self.screen.lock())
        }
        fn read_text(&self, max_chars: usize) -> String {
            self.screen.lock().read_text(max_chars)
        }
        fn exit_status(&self) -> Option<ExitStatus> {
            None
        }
    }

    #[test]
    fn the_provided_methods_read_the_screen_and_encode_for_its_modes() {
        let screen = Screen::new(TermSize::new(20, 3), ScreenConfig::default()).unwrap();
        let fake = Fake { screen: Mutex::new(screen), written: Mutex::new(vec![]) };
        let t: &dyn RunningTerminal = &fake;
        assert_eq!(t.with_screen(|s| s.size()), TermSize::new(20, 3));
        let before = t.generation();
        t.with_screen(|s| s.feed(b"hello\x1b[?2004h"));
        assert!(t.generation() > before, "output bumps the generation");
        assert!(t.last_output_at().is_some());
        assert_eq!(t.snapshot().cells[..5].iter().map(|c| c.ch).collect::<String>(), "hello");
        assert!(t.input_modes().bracketed_paste);
        t.paste("hi").unwrap();
        t.send_key(Key::Char('c'), Modifiers::CTRL).unwrap();
        assert_eq!(*fake.written.lock(), vec![b"\x1b[200~hi\x1b[201~".to_vec(), b"\x03".to_vec()]);
    }
}
