//! tool-server: agent operation catalogue and HTTP server (crate doc replaced when the crate lands).
