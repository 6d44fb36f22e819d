//! The comparison: options, result, pass/fail limits, and the row-band loop.

use crate::antialias::Pair;
use crate::color;
use crate::diff_image::{self, DiffImage};
use crate::error::DiffError;
use crate::image::{Image, Rgba};

/// How to compare.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Colour distance, 0..=1, below which two pixels count as equal (0.1 like pixelmatch and odiff).
    pub threshold: f64,
    /// Do not count pixels that are anti-aliasing in either image (they show yellow in the diff image).
    pub ignore_antialiasing: bool,
    /// Render a [`DiffImage`].
    pub diff_image: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { threshold: 0.1, ignore_antialiasing: false, diff_image: false }
    }
}

/// When a comparison passes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limits {
    /// At most this many changed pixels.
    MaxDiffPixels(u64),
    /// At most this fraction (0..=1) of all pixels changed.
    MaxDiffRatio(f64),
}

impl Default for Limits {
    /// No changed pixel at all.
    fn default() -> Self {
        Limits::MaxDiffPixels(0)
    }
}

impl Limits {
    /// A ratio limit, checked to lie in 0..=1.
    pub fn max_diff_ratio(ratio: f64) -> Result<Self, DiffError> {
        if (0.0..=1.0).contains(&ratio) {
            Ok(Limits::MaxDiffRatio(ratio))
        } else {
            Err(DiffError::Ratio(ratio))
        }
    }
}

/// What a comparison found.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Width of both images.
    pub width: u32,
    /// Height of both images.
    pub height: u32,
    /// Pixels whose colours differ by more than the threshold (anti-aliasing ones left out when ignored).
    pub diff_pixels: u64,
    /// Pixels above the threshold that were left out as anti-aliasing (0 unless ignored).
    pub antialiased_pixels: u64,
    /// The smallest rectangle holding every changed pixel, `None` when there is none.
    pub changed_area: Option<Area>,
    /// The diff image, when [`Options::diff_image`] asked for one.
    pub diff_image: Option<DiffImage>,
}

/// A rectangle of pixels, inclusive bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Area {
    /// Leftmost column.
    pub left: u32,
    /// Top row.
    pub top: u32,
    /// Rightmost column.
    pub right: u32,
    /// Bottom row.
    pub bottom: u32,
}

impl Area {
    fn point(x: u32, y: u32) -> Self {
        Area { left: x, top: y, right: x, bottom: y }
    }

    fn union(self, other: Area) -> Area {
        Area {
            left: self.left.min(other.left),
            top: self.top.min(other.top),
            right: self.right.max(other.right),
            bottom: self.bottom.max(other.bottom),
        }
    }
}

impl std::fmt::Display for Area {
    /// `WxH+X+Y`, the X geometry form `import` and ImageMagick take.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}+{}+{}", self.right - self.left + 1, self.bottom - self.top + 1, self.left, self.top)
    }
}

impl Comparison {
    /// Pixels in each image.
    pub fn total_pixels(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    /// Changed pixels as a fraction of all (0 for an empty image).
    pub fn ratio(&self) -> f64 {
        match self.total_pixels() {
            0 => 0.0,
            total => self.diff_pixels as f64 / total as f64,
        }
    }

    /// Whether the changes stay within `limits`.
    pub fn within(&self, limits: &Limits) -> bool {
        match *limits {
            Limits::MaxDiffPixels(n) => self.diff_pixels <= n,
            Limits::MaxDiffRatio(r) => self.ratio() <= r,
        }
    }
}

/// Counts from one band of rows.
#[derive(Default)]
struct Tally {
    diff: u64,
    antialiased: u64,
    area: Option<Area>,
}

impl Tally {
    fn add(mut self, other: Tally) -> Tally {
        self.diff += other.diff;
        self.antialiased += other.antialiased;
        self.area = match (self.area, other.area) {
            (Some(a), Some(b)) => Some(a.union(b)),
            (a, b) => a.or(b),
        };
        self
    }
}

/// What every band needs.
struct Job<'a> {
    pair: Pair<'a>,
    max_delta: f64,
    ignore_antialiasing: bool,
}

/// Fewer rows than this per thread are not worth a thread.
const MIN_ROWS_PER_THREAD: usize = 64;

/// Compares two images of the same size.
pub fn compare(a: &Image, b: &Image, options: &Options) -> Result<Comparison, DiffError> {
    if !(0.0..=1.0).contains(&options.threshold) {
        return Err(DiffError::Threshold(options.threshold));
    }
    if a.dimensions() != b.dimensions() {
        return Err(DiffError::SizeMismatch { first: a.dimensions(), second: b.dimensions() });
    }
    let (width, height) = a.dimensions();
    let (w, h) = (width as usize, height as usize);
    let mut indices = if options.diff_image { vec![0u8; w * h] } else { Vec::new() };
    let job = Job {
        pair: Pair { img: a.pixels(), other: b.pixels(), width: w, height: h },
        max_delta: color::max_delta(options.threshold),
        ignore_antialiasing: options.ignore_antialiasing,
    };
    let tally = if w == 0 || h == 0 {
        Tally::default()
    } else {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(h / MIN_ROWS_PER_THREAD).max(1);
        let rows_per_band = h.div_ceil(threads);
        run_bands(&job, rows_per_band, options.diff_image.then_some(&mut indices[..]))
    };
    let diff_image = options.diff_image.then(|| DiffImage::new(width, height, indices));
    Ok(Comparison {
        width,
        height,
        diff_pixels: tally.diff,
        antialiased_pixels: tally.antialiased,
        changed_area: tally.area,
        diff_image,
    })
}

/// Splits the rows into bands of `rows_per_band`, one thread each (the first on this one).
fn run_bands(job: &Job, rows_per_band: usize, out: Option<&mut [u8]>) -> Tally {
    let w = job.pair.width;
    let h = job.pair.height;
    let starts: Vec<usize> = (0..h).step_by(rows_per_band).collect();
    let mut outs: Vec<Option<&mut [u8]>> = match out {
        Some(out) => out.chunks_mut(rows_per_band * w).map(Some).collect(),
        None => starts.iter().map(|_| None).collect(),
    };
    if starts.len() == 1 {
        return band(job, 0..h, outs.pop().flatten());
    }
    std::thread::scope(|scope| {
        let mut bands = starts.iter().zip(outs).map(|(&y0, out)| (y0..(y0 + rows_per_band).min(h), out));
        let Some((first_rows, first_out)) = bands.next() else { return Tally::default() };
        let handles: Vec<_> = bands.map(|(rows, out)| scope.spawn(move || band(job, rows, out))).collect();
        let mut tally = band(job, first_rows, first_out);
        for handle in handles {
            match handle.join() {
                Ok(t) => tally = tally.add(t),
                // A panic in a band is a bug in this crate; carry it to the caller unchanged.
                Err(payload) => std::panic::resume_unwind(payload),
            }
        }
        tally
    })
}

/// Compares the rows `rows`, filling `out` (their palette indices) when given.
fn band(job: &Job, rows: std::ops::Range<usize>, mut out: Option<&mut [u8]>) -> Tally {
    let w = job.pair.width;
    let mut tally = Tally::default();
    let y0 = rows.start;
    for y in rows {
        let row_a = &job.pair.img[y * w..(y + 1) * w];
        let row_b = &job.pair.other[y * w..(y + 1) * w];
        let out_row = out.as_deref_mut().map(|o| &mut o[(y - y0) * w..(y - y0 + 1) * w]);
        if row_a == row_b {
            // The common case in screenshots: one memcmp and, for the image, the faded copy.
            if let Some(out_row) = out_row {
                fill_faded(out_row, row_a);
            }
            continue;
        }
        let mut row_tally = |x: usize, class: u8| {
            if class == diff_image::CHANGED {
                tally.diff += 1;
                let p = Area::point(x as u32, y as u32);
                tally.area = Some(tally.area.map_or(p, |a| a.union(p)));
            } else {
                tally.antialiased += 1;
            }
        };
        match out_row {
            Some(out_row) => {
                for (x, ((&pa, &pb), o)) in row_a.iter().zip(row_b).zip(out_row.iter_mut()).enumerate() {
                    *o = match classify(job, pa, pb, x, y) {
                        Some(class) => {
                            row_tally(x, class);
                            class
                        }
                        None => diff_image::faded(pa),
                    };
                }
            }
            None => {
                for (x, (&pa, &pb)) in row_a.iter().zip(row_b).enumerate() {
                    if let Some(class) = classify(job, pa, pb, x, y) {
                        row_tally(x, class);
                    }
                }
            }
        }
    }
    tally
}

fn fill_faded(out: &mut [u8], row: &[Rgba]) {
    // Screenshots are mostly runs of one colour: reuse the last pixel's grey.
    let mut last: Option<(Rgba, u8)> = None;
    for (o, &p) in out.iter_mut().zip(row) {
        *o = match last {
            Some((q, grey)) if q == p => grey,
            _ => {
                let grey = diff_image::faded(p);
                last = Some((p, grey));
                grey
            }
        };
    }
}

/// `None` when the pixels count as equal, else `CHANGED` or `ANTIALIASED`.
#[inline]
fn classify(job: &Job, pa: Rgba, pb: Rgba, x: usize, y: usize) -> Option<u8> {
    if pa == pb || color::delta(pa, pb) <= job.max_delta {
        return None;
    }
    if job.ignore_antialiasing && (job.pair.antialiased(x, y) || job.pair.swapped().antialiased(x, y)) {
        return Some(diff_image::ANTIALIASED);
    }
    Some(diff_image::CHANGED)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHITE: Rgba = [255, 255, 255, 255];

    fn flat(w: u32, h: u32, p: Rgba) -> Image {
        Image::from_rgba(w, h, vec![p; (w * h) as usize]).unwrap()
    }

    fn with(img: &Image, changes: &[(u32, u32, Rgba)]) -> Image {
        let mut px = img.pixels().to_vec();
        for &(x, y, p) in changes {
            px[(y * img.width() + x) as usize] = p;
        }
        Image::from_rgba(img.width(), img.height(), px).unwrap()
    }

    #[test]
    fn identical_images_have_no_diff() {
        let a = flat(300, 200, [12, 34, 56, 255]);
        let c = compare(&a, &a.clone(), &Options { diff_image: true, ..Options::default() }).unwrap();
        assert_eq!((c.diff_pixels, c.antialiased_pixels, c.changed_area), (0, 0, None));
        assert_eq!(c.total_pixels(), 60_000);
        assert!(c.within(&Limits::default()));
        let img = c.diff_image.unwrap();
        assert_eq!(img.pixel(299, 199), Some(img.pixel(0, 0).unwrap()));
        assert!(img.to_rgba().iter().all(|p| p[0] == p[1] && p[1] == p[2] && p[0] >= 230));
    }

    #[test]
    fn one_changed_pixel_is_counted_and_drawn_red() {
        // Tall enough for several bands, with the change in a later one.
        let a = flat(50, 400, WHITE);
        let b = with(&a, &[(7, 333, [0, 0, 0, 255])]);
        let c = compare(&a, &b, &Options { diff_image: true, ..Options::default() }).unwrap();
        assert_eq!(c.diff_pixels, 1);
        assert_eq!(c.changed_area, Some(Area { left: 7, top: 333, right: 7, bottom: 333 }));
        assert_eq!(c.changed_area.unwrap().to_string(), "1x1+7+333");
        let img = c.diff_image.as_ref().unwrap();
        assert_eq!(img.pixel(7, 333), Some([255, 0, 0, 255]));
        assert_eq!(img.pixel(8, 333), Some([255, 255, 255, 255]));
        assert!(!c.within(&Limits::default()));
        assert!(c.within(&Limits::MaxDiffPixels(1)));
    }

    #[test]
    fn counts_are_the_same_with_and_without_the_image_and_across_bands() {
        let a = flat(64, 300, WHITE);
        let changes: Vec<_> = (0..300).step_by(7).map(|y| (y % 64, y, [200, 10, 10, 255])).collect();
        let b = with(&a, &changes);
        let with_image = compare(&a, &b, &Options { diff_image: true, ..Options::default() }).unwrap();
        let without = compare(&a, &b, &Options::default()).unwrap();
        assert_eq!(with_image.diff_pixels, changes.len() as u64);
        assert_eq!(without.diff_pixels, changes.len() as u64);
        let single = Job {
            pair: Pair { img: a.pixels(), other: b.pixels(), width: 64, height: 300 },
            max_delta: color::max_delta(0.1),
            ignore_antialiasing: false,
        };
        for rows_per_band in [1, 13, 300] {
            assert_eq!(run_bands(&single, rows_per_band, None).diff, changes.len() as u64, "{rows_per_band}");
        }
    }

    #[test]
    fn threshold_boundary() {
        // Grey 255 against 245: a YIQ distance of 0.5053 × 10² = 50.53, which is
        // MAX_DELTA × t² at t = √(50.53 / 35215) ≈ 0.03788.
        let a = flat(4, 4, WHITE);
        let b = with(&a, &[(1, 1, [245, 245, 245, 255])]);
        let d = color::delta(WHITE, [245, 245, 245, 255]);
        let t_exact = (d / color::MAX_DELTA).sqrt();
        let count = |t: f64| compare(&a, &b, &Options { threshold: t, ..Options::default() }).unwrap().diff_pixels;
        assert_eq!(count(t_exact * 0.999), 1);
        assert_eq!(count(t_exact * 1.001), 0);
        assert_eq!(count(0.0), 1);
        assert_eq!(count(0.1), 0);
        assert!(matches!(
            compare(&a, &b, &Options { threshold: 1.5, ..Options::default() }),
            Err(DiffError::Threshold(_))
        ));
        assert!(matches!(
            compare(&a, &b, &Options { threshold: f64::NAN, ..Options::default() }),
            Err(DiffError::Threshold(_))
        ));
    }

    #[test]
    fn alpha_is_seen_over_white() {
        // Transparent black and opaque white look the same; half-transparent black does not.
        let a = flat(3, 3, WHITE);
        let b = with(&a, &[(0, 0, [0, 0, 0, 0]), (2, 2, [0, 0, 0, 128])]);
        let c = compare(&a, &b, &Options::default()).unwrap();
        assert_eq!(c.diff_pixels, 1);
        assert_eq!(c.changed_area, Some(Area::point(2, 2)));
    }

    #[test]
    fn size_mismatch_reports_both_sizes() {
        let err = compare(&flat(3, 2, WHITE), &flat(2, 3, WHITE), &Options::default()).unwrap_err();
        assert!(matches!(err, DiffError::SizeMismatch { first: (3, 2), second: (2, 3) }));
        assert_eq!(err.to_string(), "the images differ in size: the first is 3x2, the second 2x3");
    }

    #[test]
    fn ratio_limits() {
        let a = flat(10, 10, WHITE);
        let b = with(&a, &[(0, 0, [0, 0, 0, 255]), (5, 5, [0, 0, 0, 255])]);
        let c = compare(&a, &b, &Options::default()).unwrap();
        assert_eq!(c.ratio(), 0.02);
        assert!(c.within(&Limits::max_diff_ratio(0.02).unwrap()));
        assert!(!c.within(&Limits::max_diff_ratio(0.019).unwrap()));
        assert!(matches!(Limits::max_diff_ratio(-0.1), Err(DiffError::Ratio(_))));
        assert!(matches!(Limits::max_diff_ratio(f64::NAN), Err(DiffError::Ratio(_))));
    }

    /// A black disc on white, edge pixels grey by coverage (4×4 supersampled), shifted by `dx` sub-pixels.
    fn disc(size: u32, dx: f64) -> Image {
        let c = f64::from(size) / 2.0;
        let r = f64::from(size) / 3.0;
        let mut px = Vec::new();
        for y in 0..size {
            for x in 0..size {
                let mut inside = 0u32;
                for sy in 0..4 {
                    for sx in 0..4 {
                        let fx = f64::from(x) + (f64::from(sx) + 0.5) / 4.0 - c - dx;
                        let fy = f64::from(y) + (f64::from(sy) + 0.5) / 4.0 - c;
                        inside += u32::from(fx * fx + fy * fy <= r * r);
                    }
                }
                let v = 255 - (255 * inside / 16) as u8;
                px.push([v, v, v, 255]);
            }
        }
        Image::from_rgba(size, size, px).unwrap()
    }

    #[test]
    fn antialiasing_on_a_rendered_edge_is_counted_only_without_the_flag() {
        // The same anti-aliased disc rendered a quarter pixel apart: only its edge pixels change.
        let (a, b) = (disc(40, 0.0), disc(40, 0.25));
        let counted = compare(&a, &b, &Options::default()).unwrap();
        let ignored =
            compare(&a, &b, &Options { ignore_antialiasing: true, diff_image: true, ..Options::default() }).unwrap();
        assert!(counted.diff_pixels > 0);
        assert_eq!(counted.antialiased_pixels, 0);
        assert!(ignored.antialiased_pixels > 0);
        assert_eq!(ignored.diff_pixels + ignored.antialiased_pixels, counted.diff_pixels);
        assert!(ignored.diff_pixels < counted.diff_pixels / 2, "{} of {}", ignored.diff_pixels, counted.diff_pixels);
        let img = ignored.diff_image.unwrap();
        assert!(img.to_rgba().contains(&[255, 255, 0, 255]), "AA pixels are drawn yellow");
        // A solid change is not anti-aliasing, with or without the flag.
        let solid = with(&a, &[(2, 2, [0, 0, 0, 255])]);
        let c = compare(&a, &solid, &Options { ignore_antialiasing: true, ..Options::default() }).unwrap();
        assert_eq!((c.diff_pixels, c.antialiased_pixels), (1, 0));
    }

    #[test]
    fn empty_images_compare_equal() {
        let e = Image::from_rgba(0, 0, Vec::new()).unwrap();
        let c = compare(&e, &e, &Options { diff_image: true, ..Options::default() }).unwrap();
        assert_eq!((c.diff_pixels, c.ratio()), (0, 0.0));
    }
}
