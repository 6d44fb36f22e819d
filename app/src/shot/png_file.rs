//! The PNG files a shot writes: their size, and writing one whole or not at all.

use std::path::Path;

/// The width and height in a PNG's header.
pub(super) fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let reader = decoder.read_info().ok()?;
    let info = reader.info();
    Some((info.width, info.height))
}

/// The screenshot, replacing `path` atomically, mode 0600 as it always was.
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    local_guard::files::write_atomic(path, bytes, local_guard::files::FILE_MODE)
        .map_err(local_guard::FileError::into_io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.png");
        std::fs::write(&p, b"old").unwrap();
        write_atomically(&p, b"new bytes").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new bytes");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
