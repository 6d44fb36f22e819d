//! Typed errors of the crate.

/// Everything that can go wrong while setting up the GPU or rendering.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// No adapter matched (none at all, or none able to present to the given surface).
    #[error("no suitable GPU adapter found (backends tried: {backends})")]
    NoAdapter {
        /// The backends that were enabled on the instance.
        backends: String,
    },
    /// The adapter refused to create a device.
    #[error("failed to create the GPU device: {0}")]
    RequestDevice(#[from] wgpu::RequestDeviceError),
    /// A buffer could not be mapped for read-back.
    #[error("failed to map the read-back buffer: {0}")]
    Map(#[from] wgpu::BufferAsyncError),
    /// Waiting on the device failed (device lost or timeout).
    #[error("waiting for the GPU failed: {0}")]
    Poll(#[from] wgpu::PollError),
    /// A GPU-side step failed with no error value behind it (a texture or
    /// cache gone missing, a read-back callback dropped).
    #[error("GPU error: {0}")]
    Gpu(String),
    /// glyphon could not prepare a frame's text (its glyph atlas is full).
    #[error("GPU error: text prepare: {0}")]
    TextPrepare(#[from] glyphon::PrepareError),
    /// glyphon could not draw the text it prepared.
    #[error("GPU error: text render: {0}")]
    TextRender(#[from] glyphon::RenderError),
    /// The mapped read-back buffer could not be viewed.
    #[error("GPU error: map read-back buffer: {0}")]
    MapRange(#[from] wgpu::MapRangeError),
    /// The surface is lost and must be recreated by the owner of the window.
    #[error("the window surface is lost and must be recreated")]
    SurfaceLost,
    /// The surface could not produce a frame for another reason.
    #[error("the window surface could not provide a frame: {0}")]
    Surface(String),
    /// A caller-supplied argument was unusable (sizes, byte lengths).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A PNG in a layout [`crate::RgbaImage::from_png`] does not read.
    #[error("PNG error: {0}")]
    Png(String),
    /// PNG encoding failed.
    #[error("PNG error: {0}")]
    PngEncode(#[from] png::EncodingError),
    /// PNG decoding failed.
    #[error("PNG error: {0}")]
    PngDecode(#[from] png::DecodingError),
    /// Reading or writing an image file failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file involved.
        path: std::path::PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// Result alias for this crate.
pub type Result<T, E = RenderError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_errors_read_as_before_and_keep_glyphon_s_error() {
        let err = RenderError::from(glyphon::PrepareError::AtlasFull);
        assert_eq!(err.to_string(), "GPU error: text prepare: Prepare error: glyph texture atlas is full");
        let source = std::error::Error::source(&err).expect("a source");
        assert_eq!(source.downcast_ref::<glyphon::PrepareError>(), Some(&glyphon::PrepareError::AtlasFull));
        let err = RenderError::from(glyphon::RenderError::RemovedFromAtlas);
        assert_eq!(err.to_string(), format!("GPU error: text render: {}", glyphon::RenderError::RemovedFromAtlas));
        assert!(std::error::Error::source(&err).is_some());
    }
}
