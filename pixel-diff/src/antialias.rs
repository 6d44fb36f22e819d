//! Anti-aliasing detection as pixelmatch does it, after V. Vysniauskas,
//! "Anti-aliased Pixel and Intensity Slope Detector" (2009): a pixel is
//! anti-aliasing when its neighbourhood holds both a darker and a brighter
//! pixel, at most two equal ones, and the darkest or the brightest neighbour
//! sits inside a flat area (3+ equal neighbours) in both images.

use crate::color::brightness_delta;
use crate::image::Rgba;

/// The pixels of both images and their shared size.
#[derive(Clone, Copy)]
pub(crate) struct Pair<'a> {
    /// Pixels of the image tested.
    pub img: &'a [Rgba],
    /// Pixels of the other image.
    pub other: &'a [Rgba],
    /// Width of both.
    pub width: usize,
    /// Height of both.
    pub height: usize,
}

impl Pair<'_> {
    /// The same pair with the roles of the two images swapped.
    pub(crate) fn swapped(self) -> Self {
        Pair { img: self.other, other: self.img, ..self }
    }

    /// The 3×3 neighbourhood of `(x, y)` clipped to the image: `(x0, y0, x2, y2)` inclusive.
    #[inline]
    fn around(&self, x: usize, y: usize) -> (usize, usize, usize, usize) {
        (x.saturating_sub(1), y.saturating_sub(1), (x + 1).min(self.width - 1), (y + 1).min(self.height - 1))
    }

    /// Whether the pixel at `(x, y)` of `img` is likely anti-aliasing.
    pub(crate) fn antialiased(&self, x: usize, y: usize) -> bool {
        let (x0, y0, x2, y2) = self.around(x, y);
        let w = self.width;
        let center = self.img[y * w + x];
        // A pixel on the image's edge has fewer neighbours; count the missing side as one equal.
        let mut zeroes = u32::from(x == x0 || x == x2 || y == y0 || y == y2);
        let (mut min, mut max) = (0.0f64, 0.0f64);
        let (mut min_at, mut max_at) = ((0, 0), (0, 0));
        for nx in x0..=x2 {
            for ny in y0..=y2 {
                if nx == x && ny == y {
                    continue;
                }
                let delta = brightness_delta(center, self.img[ny * w + nx]);
                if delta == 0.0 {
                    zeroes += 1;
                    // More than two equal neighbours: a flat area, not a ramp.
                    if zeroes > 2 {
                        return false;
                    }
                } else if delta < min {
                    min = delta;
                    min_at = (nx, ny);
                } else if delta > max {
                    max = delta;
                    max_at = (nx, ny);
                }
            }
        }
        if min == 0.0 || max == 0.0 {
            return false;
        }
        (self.many_siblings(self.img, min_at) && self.many_siblings(self.other, min_at))
            || (self.many_siblings(self.img, max_at) && self.many_siblings(self.other, max_at))
    }

    /// Whether the pixel at `(x, y)` of `pixels` has 3 or more neighbours exactly equal to it.
    fn many_siblings(&self, pixels: &[Rgba], (x, y): (usize, usize)) -> bool {
        let (x0, y0, x2, y2) = self.around(x, y);
        let w = self.width;
        let center = pixels[y * w + x];
        let mut zeroes = u32::from(x == x0 || x == x2 || y == y0 || y == y2);
        for nx in x0..=x2 {
            for ny in y0..=y2 {
                if (nx, ny) != (x, y) && pixels[ny * w + nx] == center {
                    zeroes += 1;
                    if zeroes > 2 {
                        return true;
                    }
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Rgba = [255, 255, 255, 255];
    const K: Rgba = [0, 0, 0, 255];
    const G: Rgba = [128, 128, 128, 255];

    fn pair<'a>(img: &'a [Rgba], other: &'a [Rgba], width: usize) -> Pair<'a> {
        Pair { img, other, width, height: img.len() / width }
    }

    #[test]
    fn grey_between_black_and_white_areas_is_antialiasing() {
        // A vertical edge: white columns, one grey column, black columns.
        #[rustfmt::skip]
        let img = [
            W, W, G, K, K,
            W, W, G, K, K,
            W, W, G, K, K,
            W, W, G, K, K,
            W, W, G, K, K,
        ];
        let p = pair(&img, &img, 5);
        assert!(p.antialiased(2, 2));
        // Inside the flat areas nothing is.
        assert!(!p.antialiased(0, 2));
        assert!(!p.antialiased(4, 2));
    }

    #[test]
    fn a_lone_changed_pixel_in_a_flat_area_is_not_antialiasing() {
        #[rustfmt::skip]
        let img = [
            W, W, W,
            W, K, W,
            W, W, W,
        ];
        assert!(!pair(&img, &img, 3).antialiased(1, 1));
    }

    #[test]
    fn a_ramp_without_flat_neighbours_is_not_antialiasing() {
        // A smooth gradient: every neighbour differs, none sits in a flat area.
        let img: Vec<Rgba> = (0..25u8).map(|i| [i * 10, (i % 5) * 40, (i / 5) * 40, 255]).collect();
        let p = pair(&img, &img, 5);
        assert!(!p.antialiased(2, 2));
    }
}
