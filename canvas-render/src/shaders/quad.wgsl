// Anti-aliased SDF shapes in target pixels: rounded boxes (fill + border, or a blurred
// shadow) and capsule segments (icon strokes). Output is premultiplied alpha.

struct Globals {
    target_size: vec2<f32>,
    _pad: vec2<f32>,
};

@group(0) @binding(0) var<uniform> globals: Globals;

struct Instance {
    @location(0) rect: vec4<f32>,
    @location(1) fill: vec4<f32>,
    @location(2) border: vec4<f32>,
    @location(3) shape: vec4<f32>,
    @location(4) params: vec4<f32>,
};

struct VsOut {
    @builtin(position) position: vec4<f32>,
    @location(0) pixel: vec2<f32>,
    @location(1) fill: vec4<f32>,
    @location(2) border: vec4<f32>,
    @location(3) shape: vec4<f32>,
    @location(4) params: vec4<f32>,
};

@vertex
fn vs_main(@builtin(vertex_index) vi: u32, inst: Instance) -> VsOut {
    let corner = vec2<f32>(f32(vi & 1u), f32((vi >> 1u) & 1u));
    let pixel = inst.rect.xy + corner * inst.rect.zw;
    let ndc = pixel / globals.target_size * 2.0 - 1.0;
    var out: VsOut;
    out.position = vec4<f32>(ndc.x, -ndc.y, 0.0, 1.0);
    out.pixel = pixel;
    out.fill = inst.fill;
    out.border = inst.border;
    out.shape = inst.shape;
    out.params = inst.params;
    return out;
}

fn sd_round_box(p: vec2<f32>, half_size: vec2<f32>, radius: f32) -> f32 {
    let r = min(radius, min(half_size.x, half_size.y));
    let q = abs(p) - half_size + vec2<f32>(r, r);
    return length(max(q, vec2<f32>(0.0, 0.0))) + min(max(q.x, q.y), 0.0) - r;
}

fn sd_segment(p: vec2<f32>, a: vec2<f32>, b: vec2<f32>) -> f32 {
    let pa = p - a;
    let ba = b - a;
    let h = clamp(dot(pa, ba) / max(dot(ba, ba), 1e-6), 0.0, 1.0);
    return length(pa - ba * h);
}

fn premul(c: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(c.rgb * c.a, c.a);
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    let radius = in.params.x;
    let width = in.params.y;
    let blur = in.params.z;
    let kind = in.params.w;
    if (kind > 0.5) {
        // Capsule segment from shape.xy to shape.zw, `width` thick.
        let d = sd_segment(in.pixel, in.shape.xy, in.shape.zw) - width * 0.5;
        let cov = clamp(0.5 - d, 0.0, 1.0);
        return premul(in.fill) * cov;
    }
    let center = in.shape.xy + in.shape.zw * 0.5;
    let d = sd_round_box(in.pixel - center, in.shape.zw * 0.5, radius);
    if (blur > 0.0) {
        let a = 1.0 - smoothstep(-blur, blur, d);
        return premul(in.fill) * a;
    }
    let cov = clamp(0.5 - d, 0.0, 1.0);
    var color = premul(in.fill);
    if (width > 0.0) {
        let t = clamp(d + width + 0.5, 0.0, 1.0);
        color = mix(color, premul(in.border), t);
    }
    return color * cov;
}
