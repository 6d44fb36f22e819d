//! CPU-side RGBA images: GPU read-back of a rendered texture and PNG encode/decode.

use std::path::Path;

use crate::error::{RenderError, Result};

/// An 8-bit RGBA image, rows top to bottom, no padding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RgbaImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes.
    pub pixels: Vec<u8>,
}

impl RgbaImage {
    /// Wraps pixel bytes, checking their length.
    pub fn new(width: u32, height: u32, pixels: Vec<u8>) -> Result<Self> {
        if pixels.len() != width as usize * height as usize * 4 {
            return Err(RenderError::InvalidArgument(format!(
                "{}x{} RGBA needs {} bytes, got {}",
                width,
                height,
                width as usize * height as usize * 4,
                pixels.len()
            )));
        }
        Ok(Self { width, height, pixels })
    }

    /// The pixel at (x, y), if inside.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 4]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = (y as usize * self.width as usize + x as usize) * 4;
        self.pixels.get(i..i + 4).and_then(|p| p.try_into().ok())
    }

    /// Encodes as an RGBA PNG.
    pub fn to_png(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, self.width, self.height);
            enc.set_color(png::ColorType::Rgba);
            enc.set_depth(png::BitDepth::Eight);
            let mut writer = enc.write_header()?;
            writer.write_image_data(&self.pixels)?;
        }
        Ok(out)
    }

    /// Decodes an 8-bit RGB or RGBA PNG.
    pub fn from_png(bytes: &[u8]) -> Result<Self> {
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info()?;
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf)?;
        buf.truncate(info.buffer_size());
        let pixels = match (info.color_type, info.bit_depth) {
            (png::ColorType::Rgba, png::BitDepth::Eight) => buf,
            (png::ColorType::Rgb, png::BitDepth::Eight) => {
                buf.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect()
            }
            other => return Err(RenderError::Png(format!("unsupported PNG layout {other:?}"))),
        };
        Self::new(info.width, info.height, pixels)
    }

    /// Writes a PNG file.
    pub fn save_png(&self, path: &Path) -> Result<()> {
        std::fs::write(path, self.to_png()?).map_err(|source| RenderError::Io { path: path.to_path_buf(), source })
    }

    /// Reads a PNG file.
    pub fn load_png(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| RenderError::Io { path: path.to_path_buf(), source })?;
        Self::from_png(&bytes)
    }
}

/// Copies an `Rgba8Unorm` (or `Bgra8Unorm`, swizzled) texture back to the CPU, blocking.
pub(crate) fn read_texture(device: &wgpu::Device, queue: &wgpu::Queue, texture: &wgpu::Texture) -> Result<RgbaImage> {
    let (w, h) = (texture.width(), texture.height());
    let unpadded = w * 4;
    let padded = unpadded.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read-back"),
        size: padded as u64 * h as u64,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("read-back") });
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(padded), rows_per_image: Some(h) },
        },
        wgpu::Extent3d { width: w, height: h, depth_or_array_layers: 1 },
    );
    queue.submit([encoder.finish()]);
    let (tx, rx) = std::sync::mpsc::channel();
    buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device.poll(wgpu::PollType::wait_indefinitely())?;
    rx.recv().map_err(|_| RenderError::Gpu("read-back callback dropped".into()))??;
    let mut pixels = Vec::with_capacity((unpadded * h) as usize);
    {
        let view = buffer.slice(..).get_mapped_range()?;
        for row in view.chunks(padded as usize).take(h as usize) {
            pixels.extend_from_slice(&row[..unpadded as usize]);
        }
    }
    buffer.unmap();
    if matches!(texture.format(), wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Bgra8UnormSrgb) {
        pixels.chunks_exact_mut(4).for_each(|p| p.swap(0, 2));
    }
    RgbaImage::new(w, h, pixels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_round_trip_and_length_check() {
        let img = RgbaImage::new(2, 1, vec![1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        let back = RgbaImage::from_png(&img.to_png().unwrap()).unwrap();
        assert_eq!(back, img);
        assert_eq!(back.pixel(1, 0), Some([5, 6, 7, 8]));
        assert_eq!(back.pixel(2, 0), None);
        assert!(RgbaImage::new(2, 2, vec![0; 3]).is_err());
        assert!(RgbaImage::from_png(b"not a png").is_err());
    }

    #[test]
    fn a_png_error_keeps_png_s_error_as_its_source() {
        let err = RgbaImage::from_png(b"not a png").unwrap_err();
        let source = std::error::Error::source(&err).expect("a source");
        assert!(source.downcast_ref::<png::DecodingError>().is_some(), "{source:?}");
        assert_eq!(err.to_string(), format!("PNG error: {source}"), "the message is as before");
    }
}
