//! A terminal without a process, for tests: a real [`Screen`] the test
//! writes program output into, the bytes the app wrote, and an exit the test
//! triggers, reported through the node's [`TerminalHost`] as a real child's
//! is. Dropping it (what closing or putting a node away does) is a hang-up.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use terminal::{ExitStatus, RunningTerminal, Screen, ScreenConfig, ScreenEvent, TermSize, TerminalError, TerminalHost};

/// What a test sees of a fake terminal (shared with the [`FakeTerminal`] the runtime holds).
pub(crate) struct FakeSession {
    screen: Mutex<Screen>,
    written: Mutex<Vec<Vec<u8>>>,
    exit: Mutex<Option<ExitStatus>>,
    hung_up: AtomicBool,
    host: Arc<dyn TerminalHost>,
}

impl FakeSession {
    /// The program prints `output` (escape sequences included); the node
    /// redraws, and what it signalled reaches the host as a real terminal's does.
    pub(crate) fn show(&self, output: &str) {
        let events = {
            let mut screen = self.screen.lock();
            screen.feed(output.as_bytes());
            screen.take_events()
        };
        for event in events {
            match event {
                ScreenEvent::Signal(signal) => self.host.signal(signal),
                ScreenEvent::Bell => self.host.bell(),
                ScreenEvent::Title(title) => self.host.title_changed(title),
                ScreenEvent::ClipboardStore(text) => self.host.clipboard_store(text),
                // Replies go to the program, which a fake does not have.
                ScreenEvent::PtyWrite(_) => {}
            }
        }
        self.host.wakeup();
    }

    /// The program sets its title (OSC 0/2; `None` resets it).
    pub(crate) fn title(&self, title: Option<&str>) {
        self.host.title_changed(title.map(str::to_owned));
    }

    /// Every write the app made, in order.
    pub(crate) fn writes(&self) -> Vec<Vec<u8>> {
        self.written.lock().clone()
    }

    /// The program ends with `status` (the host hears of it, as from a real child's waiter).
    pub(crate) fn exit(&self, status: ExitStatus) {
        *self.exit.lock() = Some(status.clone());
        self.host.exited(status);
    }

    /// Whether the runtime let go of the terminal (a real one's child is sent SIGHUP).
    pub(crate) fn hung_up(&self) -> bool {
        self.hung_up.load(Ordering::Acquire)
    }

    /// The grid's size now.
    pub(crate) fn size(&self) -> TermSize {
        self.screen.lock().size()
    }
}

/// The runtime's end of a fake terminal.
pub(crate) struct FakeTerminal(Arc<FakeSession>);

impl FakeTerminal {
    /// A fake terminal of `size` reporting to `host`, and the test's handle on it.
    pub(crate) fn start(
        size: TermSize,
        host: Arc<dyn TerminalHost>,
    ) -> Result<(Self, Arc<FakeSession>), TerminalError> {
        let session = Arc::new(FakeSession {
            screen: Mutex::new(Screen::new(size, ScreenConfig::default())?),
            written: Mutex::new(vec![]),
            exit: Mutex::new(None),
            hung_up: AtomicBool::new(false),
            host,
        });
        Ok((Self(session.clone()), session))
    }
}

impl RunningTerminal for FakeTerminal {
    fn write(&self, bytes: Vec<u8>) -> Result<(), TerminalError> {
        // As the real writer: nothing to send is not a write.
        if !bytes.is_empty() {
            self.0.written.lock().push(bytes);
        }
        Ok(())
    }
    fn resize(&self, size: TermSize) -> Result<(), TerminalError> {
        self.0.screen.lock().resize(size)
    }
    fn lock_screen(&self, f: &mut dyn FnMut(&mut Screen)) {
        f(&mut self.0.screen.lock())
    }
    fn read_text(&self, max_chars: usize) -> String {
        self.0.screen.lock().read_text(max_chars)
    }
    fn exit_status(&self) -> Option<ExitStatus> {
        self.0.exit.lock().clone()
    }
}

impl Drop for FakeTerminal {
    fn drop(&mut self) {
        self.0.hung_up.store(true, Ordering::Release);
    }
}
