//! cef-bridge (in progress)
