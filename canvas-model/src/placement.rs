//! Where a new node goes: the free slot nearest a wanted spot, never on top of
//! (or closer than [`PLACEMENT_GAP`] to) a node already there.
//!
//! Candidates are the wanted spot itself and the four slots beside each node
//! (right, left, below, above, one gap away, aligned with that node's edge):
//! a node that fits nowhere near still fits beside the outermost one, so the
//! search always ends, and new nodes line up with their neighbours instead of
//! landing on an arbitrary grid.

use super::geometry::{Point, Rect};

/// Space kept between a new node and its neighbours, in world units.
pub const PLACEMENT_GAP: f64 = 40.0;

/// The top-left corner for a `size` node nearest `wanted` (a top-left corner)
/// that keeps [`PLACEMENT_GAP`] from every rectangle in `taken`.
pub fn free_spot(taken: &[Rect], size: (f64, f64), wanted: Point) -> Point {
    let (w, h) = size;
    let fits = |p: Point| {
        let r = Rect::new(p.x, p.y, w, h);
        !taken.iter().any(|o| too_close(&r, o))
    };
    if fits(wanted) {
        return wanted;
    }
    let g = PLACEMENT_GAP;
    let mut best: Option<(f64, Point)> = None;
    for o in taken {
        let beside = [
            Point::new(o.right() + g, o.y),
            Point::new(o.x - g - w, o.y),
            Point::new(o.x, o.bottom() + g),
            Point::new(o.x, o.y - g - h),
            // Centred on the neighbour's side, so a row of nodes keeps its middle line.
            Point::new(o.right() + g, o.y + (o.h - h) / 2.0),
            Point::new(o.x + (o.w - w) / 2.0, o.bottom() + g),
        ];
        for p in beside {
            let d = (p.x - wanted.x).hypot(p.y - wanted.y);
            if best.is_some_and(|(bd, _)| bd <= d) || !fits(p) {
                continue;
            }
            best = Some((d, p));
        }
    }
    // Unreachable in practice (beside the rightmost node is always free); kept finite anyway.
    best.map_or_else(|| Point::new(taken.iter().map(Rect::right).fold(wanted.x, f64::max) + g, wanted.y), |(_, p)| p)
}

/// Whether `a` and `b` overlap or are closer than the gap.
fn too_close(a: &Rect, b: &Rect) -> bool {
    let g = PLACEMENT_GAP;
    a.x < b.right() + g && b.x < a.right() + g && a.y < b.bottom() + g && b.y < a.bottom() + g
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overlaps_any(r: &Rect, others: &[Rect]) -> bool {
        others.iter().any(|o| r.x < o.right() && o.x < r.right() && r.y < o.bottom() && o.y < r.bottom())
    }

    #[test]
    fn an_empty_canvas_takes_the_wanted_spot() {
        assert_eq!(free_spot(&[], (100.0, 50.0), Point::new(-50.0, -25.0)), Point::new(-50.0, -25.0));
    }

    #[test]
    fn many_nodes_placed_at_one_spot_never_overlap_and_stay_near_it() {
        let sizes = [(720.0, 440.0), (260.0, 200.0), (960.0, 640.0), (520.0, 360.0)];
        let mut taken: Vec<Rect> = vec![];
        for i in 0..60 {
            let size = sizes[i % sizes.len()];
            let p = free_spot(&taken, size, Point::new(-size.0 / 2.0, -size.1 / 2.0));
            let r = Rect::new(p.x, p.y, size.0, size.1);
            assert!(!overlaps_any(&r, &taken), "node {i} at {r:?} overlaps");
            assert!(taken.iter().all(|o| !too_close(&r, o)), "node {i} at {r:?} is closer than the gap");
            taken.push(r);
        }
        let far = taken.iter().map(|r| r.x.abs().max(r.y.abs())).fold(0.0, f64::max);
        assert!(far < 12_000.0, "60 nodes spread {far} units from the spot: the search wanders off");
    }

    #[test]
    fn the_slot_beside_the_blocking_node_is_nearest() {
        let taken = [Rect::new(0.0, 0.0, 100.0, 100.0)];
        let p = free_spot(&taken, (100.0, 100.0), Point::new(10.0, 0.0));
        assert_eq!(p, Point::new(100.0 + PLACEMENT_GAP, 0.0), "right of it: the nearest free slot");
        let p = free_spot(&taken, (100.0, 100.0), Point::new(0.0, 60.0));
        assert_eq!(p, Point::new(0.0, 100.0 + PLACEMENT_GAP), "below it");
    }

    #[test]
    fn a_spot_inside_a_crowd_finds_the_nearest_hole() {
        // A 3×3 block of nodes with the middle one missing: the hole is too small
        // for the gap on every side, so the node goes beside the block.
        let mut taken = vec![];
        for row in 0..3 {
            for col in 0..3 {
                if (row, col) != (1, 1) {
                    taken.push(Rect::new(col as f64 * 150.0, row as f64 * 150.0, 100.0, 100.0));
                }
            }
        }
        let p = free_spot(&taken, (100.0, 100.0), Point::new(150.0, 150.0));
        let r = Rect::new(p.x, p.y, 100.0, 100.0);
        assert!(!overlaps_any(&r, &taken));
        let small = free_spot(&taken, (40.0, 40.0), Point::new(155.0, 155.0));
        assert_eq!(small, Point::new(155.0, 155.0), "a small node fits in the hole, gap kept");
    }
}
