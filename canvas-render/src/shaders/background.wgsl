// The canvas background's dot grid, over a pass cleared to the background colour: thin
// strips along the visible rows of grid points, just tall enough for the dots and cut
// where opaque node bodies will cover them, so only a small part of the screen runs this
// shader and the rasterizer sees a few hundred triangles. (A per-pixel grid over the whole screen dominated the frame on lavapipe, and
// one quad per dot cost as much again in per-triangle setup.) The lattice and its
// coarsening by zoom are planned on the CPU (composite.rs, `DotGrid`).

// The target stores sRGB-encoded values (a pipeline constant: lavapipe pays for both sides
// of a uniform branch at every pixel).
override SRGB_OUT: bool = false;

struct Grid {
    target_size: vec2<f32>,
    offset: vec2<f32>,
    zoom: f32,
    step: f32,
    radius: f32,
    fine_alpha: f32,
    // 1 when the lattice is the finer level (points with an odd index fade with
    // `fine_alpha`), 0 when every drawn point is a full-strength coarse dot.
    coarse_mask: i32,
    _pad0: f32,
    _pad1: f32,
    _pad2: f32,
    bg: vec4<f32>,
    dot: vec4<f32>,
};

@group(0) @binding(0) var<uniform> grid: Grid;

struct RowOut {
    @builtin(position) position: vec4<f32>,
    // Screen y of the row's dot centres.
    @location(0) @interpolate(flat) center_y: f32,
    @location(1) @interpolate(flat) row: i32,
};

// One strip: screen x from span.x to span.y on lattice row `row` (a grid point is
// index * step).
struct Span {
    @location(0) span: vec2<f32>,
    @location(1) row: i32,
};

@vertex
fn vs_dots(@builtin(vertex_index) vi: u32, s: Span) -> RowOut {
    let row = s.row;
    let center_y = (f32(row) * grid.step - grid.offset.y) * grid.zoom;
    // Coverage reaches zero `radius + 0.5` pixels from a centre: the strip holds exactly the
    // pixels the row's dots can touch.
    let half = grid.radius + 0.5;
    let corner = vec2<f32>(f32(vi & 1u), f32((vi >> 1u) & 1u));
    let pixel = vec2<f32>(mix(s.span.x, s.span.y, corner.x), center_y + (corner.y * 2.0 - 1.0) * half);
    let ndc = pixel / grid.target_size * 2.0 - 1.0;
    var out: RowOut;
    out.position = vec4<f32>(ndc.x, -ndc.y, 0.0, 1.0);
    out.center_y = center_y;
    out.row = row;
    return out;
}

@fragment
fn fs_dots(in: RowOut) -> @location(0) vec4<f32> {
    // The nearest grid point of this row, in lattice index and screen x.
    let column = round((in.position.x / grid.zoom + grid.offset.x) / grid.step);
    let center_x = (column * grid.step - grid.offset.x) * grid.zoom;
    let d = length(vec2<f32>(in.position.x - center_x, in.position.y - in.center_y));
    let alpha = select(grid.fine_alpha, 1.0, ((i32(column) | in.row) & grid.coarse_mask) == 0);
    let a = clamp(grid.radius + 0.5 - d, 0.0, 1.0) * alpha;
    // Opaque output (no blending): nothing but the cleared background lies under a dot, so
    // mixing with the uniform colour here gives the pixel blending would, and the mix
    // happens in sRGB space on sRGB targets too.
    let c = mix(grid.bg, grid.dot, a * grid.dot.a);
    if (SRGB_OUT) {
        return vec4<f32>(to_linear(c.rgb), 1.0);
    }
    return vec4<f32>(c.rgb, 1.0);
}
