//! cdp-facade: virtual CDP browser (crate doc replaced when the crate lands).
