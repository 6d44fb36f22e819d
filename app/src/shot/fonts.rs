//! The fixed font set of the shot engine: `fonts.conf` (shipped in the repo,
//! listing only the Debian font packages `./dev setup` installs) handed to
//! Chromium through `FONTCONFIG_FILE` before the engine starts.

use std::path::{Path, PathBuf};

/// The fontconfig file (see its header for what maps to serif, sans and mono).
pub const FONTS_CONF: &str = include_str!("fonts.conf");

/// Writes [`FONTS_CONF`] into `dir` and points `FONTCONFIG_FILE` at it; the
/// engine's processes inherit it. Call before the engine starts (and before
/// any thread that reads the environment).
pub fn use_fixed_fonts(dir: &Path) -> std::io::Result<PathBuf> {
    let path = dir.join("fonts.conf");
    std::fs::write(&path, FONTS_CONF)?;
    std::env::set_var("FONTCONFIG_FILE", &path);
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_only_the_packaged_font_folders() {
        let dirs: Vec<&str> =
            FONTS_CONF.lines().filter_map(|l| l.trim().strip_prefix("<dir>")?.strip_suffix("</dir>")).collect();
        assert_eq!(
            dirs,
            [
                "/usr/share/fonts/truetype/liberation",
                "/usr/share/fonts/truetype/dejavu",
                "/usr/share/fonts/truetype/noto",
                "/usr/share/fonts/opentype/noto"
            ]
        );
        assert!(!FONTS_CONF.contains("<include"), "no system configuration may be pulled in");
        // Within those folders only the named packages' files: every other file is rejected.
        let reject = FONTS_CONF.split("<rejectfont>").nth(1).and_then(|r| r.split("</rejectfont>").next());
        assert_eq!(reject.map(str::trim), Some("<glob>/usr/share/fonts/*</glob>"));
        let accepted: Vec<&str> =
            FONTS_CONF.lines().filter_map(|l| l.trim().strip_prefix("<glob>")?.strip_suffix("</glob>")).collect();
        assert_eq!(accepted.len(), 15, "{accepted:?}");
        assert!(accepted[..14].iter().all(|g| dirs.iter().any(|d| g.starts_with(d))), "{accepted:?}");
    }
}
