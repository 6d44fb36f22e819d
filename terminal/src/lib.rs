//! terminal: PTY + VT state (crate doc replaced when the crate lands).
