//! canvas-render: wgpu rendering of the canvas (placeholder crate doc, replaced when the crate lands).
