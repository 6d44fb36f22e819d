// Frame composition: the dot-grid background, then textured layers (cached node textures
// and uploaded content) placed by the camera. Inputs are premultiplied alpha holding sRGB
// values; sRGB targets get a conversion so colours look the same on either kind of target.
// Per-target and per-layer-kind choices are pipeline constants, not uniforms: lavapipe runs
// both sides of a uniform branch for every pixel, so a branch on a uniform costs as much as
// the work it is meant to skip.

// The target stores sRGB-encoded values (its format is an sRGB one).
override SRGB_OUT: bool = false;
// The layer rounds the bottom corners of its `shape` (content bodies; node textures carry
// their own shape).
override ROUNDED: bool = false;
// The layer is composited over its opaque `backdrop` colour here (the node body under a
// content interior, where the node texture itself is not drawn: it would only be painted
// over), and drawn without blending.
override BACKDROP: bool = false;

struct Globals {
    target_size: vec2<f32>,
    _pad: vec2<f32>,
};

@group(0) @binding(0) var<uniform> globals: Globals;
@group(0) @binding(1) var layer_sampler: sampler;
@group(1) @binding(0) var layer: texture_2d<f32>;

fn encode(premul: vec4<f32>) -> vec4<f32> {
    if (!SRGB_OUT || premul.a <= 0.0) {
        return premul;
    }
    let straight = premul.rgb / premul.a;
    return vec4<f32>(to_linear(straight) * premul.a, premul.a);
}

struct Instance {
    @location(0) dst: vec4<f32>,
    @location(1) uv: vec4<f32>,
    @location(2) params: vec4<f32>,
    @location(3) shape: vec4<f32>,
    @location(4) backdrop: vec4<f32>,
};

struct VsOut {
    @builtin(position) position: vec4<f32>,
    @location(0) uv: vec2<f32>,
    @location(1) pixel: vec2<f32>,
    @location(3) params: vec4<f32>,
    @location(4) @interpolate(flat) shape: vec4<f32>,
    @location(5) @interpolate(flat) backdrop: vec4<f32>,
};

@vertex
fn vs_layer(@builtin(vertex_index) vi: u32, inst: Instance) -> VsOut {
    let corner = vec2<f32>(f32(vi & 1u), f32((vi >> 1u) & 1u));
    let pixel = inst.dst.xy + corner * inst.dst.zw;
    let ndc = pixel / globals.target_size * 2.0 - 1.0;
    var out: VsOut;
    out.position = vec4<f32>(ndc.x, -ndc.y, 0.0, 1.0);
    out.uv = mix(inst.uv.xy, inst.uv.zw, corner);
    out.pixel = pixel;
    out.params = inst.params;
    out.shape = inst.shape;
    out.backdrop = inst.backdrop;
    return out;
}

fn sd_round_box(p: vec2<f32>, half_size: vec2<f32>, radius: f32) -> f32 {
    let r = min(radius, min(half_size.x, half_size.y));
    let q = abs(p) - half_size + vec2<f32>(r, r);
    return length(max(q, vec2<f32>(0.0, 0.0))) + min(max(q.x, q.y), 0.0) - r;
}

@fragment
fn fs_layer(in: VsOut) -> @location(0) vec4<f32> {
    var c = textureSample(layer, layer_sampler, in.uv) * in.params.z;
    let radius = in.params.x;
    if (BACKDROP) {
        // Premultiplied "over" the opaque backdrop: what blending onto it would give.
        c = c + in.backdrop * (1.0 - c.a);
    }
    if (ROUNDED) {
        // Round only the bottom corners: extend the box upwards past the top edge.
        let box_min = vec2<f32>(in.shape.x, in.shape.y - radius);
        let box_size = vec2<f32>(in.shape.z, in.shape.w + radius);
        let d = sd_round_box(in.pixel - (box_min + box_size * 0.5), box_size * 0.5, radius);
        c = c * clamp(0.5 - d, 0.0, 1.0);
    }
    return encode(c);
}

