// The canvas background: a dot grid in world space that coarsens as the camera zooms out.

struct Background {
    target_size: vec2<f32>,
    offset: vec2<f32>,
    zoom: f32,
    spacing: f32,
    srgb_out: f32,
    _pad: f32,
    bg: vec4<f32>,
    dot: vec4<f32>,
};

@group(0) @binding(0) var<uniform> bgu: Background;

struct BgOut {
    @builtin(position) position: vec4<f32>,
};

@vertex
fn vs_background(@builtin(vertex_index) vi: u32) -> BgOut {
    let uv = vec2<f32>(f32((vi << 1u) & 2u), f32(vi & 2u));
    var out: BgOut;
    out.position = vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
    return out;
}

fn dot_coverage(world: vec2<f32>, spacing: f32, radius_px: f32) -> f32 {
    let nearest = round(world / spacing) * spacing;
    let d = length(world - nearest) * bgu.zoom;
    return clamp(radius_px + 0.5 - d, 0.0, 1.0);
}

@fragment
fn fs_background(in: BgOut) -> @location(0) vec4<f32> {
    let world = in.position.xy / bgu.zoom + bgu.offset;
    // Coarsen the grid by powers of two so dots stay 14-28 px apart on screen; the finer
    // level in between fades out as it gets dense.
    let base = bgu.spacing * bgu.zoom;
    let k = max(0.0, ceil(log2(14.0 / base)));
    let coarse = bgu.spacing * exp2(k);
    let coarse_px = coarse * bgu.zoom;
    let radius = clamp(1.1 * bgu.zoom, 0.9, 1.8);
    let fine_alpha = clamp((coarse_px * 0.5 - 7.0) / 7.0, 0.0, 1.0);
    let a = max(dot_coverage(world, coarse, radius), dot_coverage(world, coarse * 0.5, radius) * fine_alpha);
    let c = mix(bgu.bg, bgu.dot, a * bgu.dot.a);
    return encode_bg(vec4<f32>(c.rgb, 1.0));
}

fn encode_bg(c: vec4<f32>) -> vec4<f32> {
    if (bgu.srgb_out < 0.5) {
        return c;
    }
    return vec4<f32>(to_linear(c.rgb), 1.0);
}
