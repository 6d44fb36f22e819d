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
    /// wgpu reported a validation or out-of-memory error for a scoped operation.
    #[error("GPU error: {0}")]
    Gpu(String),
    /// The surface is lost and must be recreated by the owner of the window.
    #[error("the window surface is lost and must be recreated")]
    SurfaceLost,
    /// The surface could not produce a frame for another reason.
    #[error("the window surface could not provide a frame: {0}")]
    Surface(String),
    /// A caller-supplied argument was unusable (sizes, byte lengths).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// PNG encoding or decoding failed.
    #[error("PNG error: {0}")]
    Png(String),
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
