//! Content textures the app uploads (CEF browser frames, images): BGRA pixels with
//! optional dirty rectangles, kept on the GPU under a caller-chosen key.

use std::collections::HashMap;

use crate::error::{RenderError, Result};
use crate::scene::ContentKey;

/// A changed region of an uploaded frame, in its pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirtyRect {
    /// Left edge.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Width.
    pub w: u32,
    /// Height.
    pub h: u32,
}

pub(crate) struct ContentTexture {
    texture: wgpu::Texture,
    pub(crate) bind_group: wgpu::BindGroup,
}

/// All uploaded content textures.
#[derive(Default)]
pub(crate) struct ContentStore {
    textures: HashMap<ContentKey, ContentTexture>,
    /// Regions uploaded since the last frame took them, per key, in texture pixels.
    damage: HashMap<ContentKey, Vec<DirtyRect>>,
}

impl ContentStore {
    /// The texture for `key`, if uploaded.
    pub(crate) fn get(&self, key: ContentKey) -> Option<&ContentTexture> {
        self.textures.get(&key)
    }

    /// The texture's size, if uploaded.
    pub(crate) fn size(&self, key: ContentKey) -> Option<(u32, u32)> {
        self.textures.get(&key).map(|t| (t.texture.width(), t.texture.height()))
    }

    /// The regions uploaded since the last call, per key (what a frame must redraw).
    pub(crate) fn take_damage(&mut self) -> HashMap<ContentKey, Vec<DirtyRect>> {
        std::mem::take(&mut self.damage)
    }

    /// Forgets `key`; returns whether it existed.
    pub(crate) fn remove(&mut self, key: ContentKey) -> bool {
        self.textures.remove(&key).is_some()
    }

    /// Bytes held on the GPU.
    pub(crate) fn bytes(&self) -> u64 {
        self.textures.values().map(|t| t.texture.width() as u64 * t.texture.height() as u64 * 4).sum()
    }

    /// Uploads `bgra` (`width * height * 4` bytes, rows tightly packed). Only `dirty` regions
    /// are copied when the size is unchanged and `dirty` is not empty.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn upload(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        bind: impl FnOnce(&wgpu::TextureView) -> wgpu::BindGroup,
        key: ContentKey,
        width: u32,
        height: u32,
        bgra: &[u8],
        dirty: &[DirtyRect],
    ) -> Result<()> {
        let max = device.limits().max_texture_dimension_2d;
        if width == 0 || height == 0 || width > max || height > max {
            return Err(RenderError::InvalidArgument(format!("content size {width}x{height} outside 1..={max}")));
        }
        let expected = width as usize * height as usize * 4;
        if bgra.len() != expected {
            return Err(RenderError::InvalidArgument(format!(
                "{width}x{height} BGRA needs {expected} bytes, got {}",
                bgra.len()
            )));
        }
        let reuse = self.textures.get(&key).is_some_and(|t| t.texture.width() == width && t.texture.height() == height);
        if !reuse {
            let texture = device.create_texture(&wgpu::TextureDescriptor {
                label: Some("content texture"),
                size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: wgpu::TextureFormat::Bgra8Unorm,
                usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
                view_formats: &[],
            });
            let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
            let bind_group = bind(&view);
            self.textures.insert(key, ContentTexture { texture, bind_group });
        }
        let Some(target) = self.textures.get(&key) else {
            return Err(RenderError::Gpu("content texture vanished during upload".into()));
        };
        let full = [DirtyRect { x: 0, y: 0, w: width, h: height }];
        let regions: &[DirtyRect] = if reuse && !dirty.is_empty() { dirty } else { &full };
        for r in regions {
            let (x0, y0) = (r.x.min(width), r.y.min(height));
            let (x1, y1) = (r.x.saturating_add(r.w).min(width), r.y.saturating_add(r.h).min(height));
            if x0 >= x1 || y0 >= y1 {
                continue;
            }
            self.damage.entry(key).or_default().push(DirtyRect { x: x0, y: y0, w: x1 - x0, h: y1 - y0 });
            queue.write_texture(
                wgpu::TexelCopyTextureInfo {
                    texture: &target.texture,
                    mip_level: 0,
                    origin: wgpu::Origin3d { x: x0, y: y0, z: 0 },
                    aspect: wgpu::TextureAspect::All,
                },
                bgra,
                wgpu::TexelCopyBufferLayout {
                    offset: (y0 as u64 * width as u64 + x0 as u64) * 4,
                    bytes_per_row: Some(width * 4),
                    rows_per_image: None,
                },
                wgpu::Extent3d { width: x1 - x0, height: y1 - y0, depth_or_array_layers: 1 },
            );
        }
        Ok(())
    }
}
