//! Colour distance of the pixelmatch family (pixelmatch ≤ 7, odiff): pixels
//! blended over white by their alpha, converted to YIQ, and the weighted
//! squared distance of Kotsarenko and Ramos, "Measuring perceived color
//! difference using YIQ NTSC transmission color space" (2010).

use crate::image::Rgba;

/// The largest YIQ distance two colours can have (pixelmatch's constant): a
/// threshold `t` in 0..=1 allows a distance of `MAX_DELTA × t²`.
pub(crate) const MAX_DELTA: f64 = 35215.0;

/// The largest distance that still counts as the same colour at `threshold`.
pub(crate) fn max_delta(threshold: f64) -> f64 {
    MAX_DELTA * threshold * threshold
}

/// Red, green and blue blended over white by alpha.
#[inline]
fn over_white(p: Rgba) -> (f64, f64, f64) {
    let [r, g, b, a] = p.map(f64::from);
    if p[3] == 255 {
        return (r, g, b);
    }
    let a = a / 255.0;
    let blend = |c: f64| 255.0 + (c - 255.0) * a;
    (blend(r), blend(g), blend(b))
}

/// Luma (the Y of YIQ) of red, green and blue.
#[inline]
pub(crate) fn luma(r: f64, g: f64, b: f64) -> f64 {
    r * 0.298_895_31 + g * 0.586_622_47 + b * 0.114_482_23
}

/// The weighted squared YIQ distance of two pixels (0 for equal ones).
#[inline]
pub(crate) fn delta(p1: Rgba, p2: Rgba) -> f64 {
    if p1 == p2 {
        return 0.0;
    }
    let (r1, g1, b1) = over_white(p1);
    let (r2, g2, b2) = over_white(p2);
    let y = luma(r1, g1, b1) - luma(r2, g2, b2);
    let i = in_phase(r1, g1, b1) - in_phase(r2, g2, b2);
    let q = quadrature(r1, g1, b1) - quadrature(r2, g2, b2);
    0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q
}

/// How much brighter `p1` is than `p2` (negative when darker), both over white.
#[inline]
pub(crate) fn brightness_delta(p1: Rgba, p2: Rgba) -> f64 {
    if p1 == p2 {
        return 0.0;
    }
    let (r1, g1, b1) = over_white(p1);
    let (r2, g2, b2) = over_white(p2);
    luma(r1, g1, b1) - luma(r2, g2, b2)
}

#[inline]
fn in_phase(r: f64, g: f64, b: f64) -> f64 {
    r * 0.595_977_99 - g * 0.274_176_10 - b * 0.321_801_89
}

#[inline]
fn quadrature(r: f64, g: f64, b: f64) -> f64 {
    r * 0.211_470_17 - g * 0.522_617_11 + b * 0.311_146_94
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greys_differ_in_luma_only() {
        // Black against white: Y differs by 255, I and Q not at all.
        let d = delta([0, 0, 0, 255], [255, 255, 255, 255]);
        assert!((d - 0.5053 * 255.0 * 255.0).abs() < 0.1, "{d}");
        assert!(d < MAX_DELTA);
        assert_eq!(delta([1, 2, 3, 255], [1, 2, 3, 255]), 0.0);
    }

    #[test]
    fn transparent_pixels_are_seen_over_white() {
        // Fully transparent black looks white; half-transparent black mid grey.
        assert!(delta([0, 0, 0, 0], [255, 255, 255, 255]) < 1e-9);
        let half = brightness_delta([0, 0, 0, 128], [255, 255, 255, 255]);
        assert!((half + 128.0).abs() < 1.0, "{half}");
    }

    #[test]
    fn brightness_delta_has_a_sign() {
        assert!(brightness_delta([200, 200, 200, 255], [100, 100, 100, 255]) > 0.0);
        assert!(brightness_delta([100, 100, 100, 255], [200, 200, 200, 255]) < 0.0);
    }
}
