// Terminal cells: solid rectangles (backgrounds, selection, cursor, lines) and glyphs
// copied 1:1 from the glyph atlas. Output is premultiplied alpha.

struct Globals {
    target_size: vec2<f32>,
    _pad: vec2<f32>,
};

@group(0) @binding(0) var<uniform> globals: Globals;
@group(0) @binding(1) var atlas: texture_2d<f32>;

struct Instance {
    @location(0) rect: vec4<f32>,
    @location(1) uv_kind: vec4<f32>,
    @location(2) color: vec4<f32>,
};

struct VsOut {
    @builtin(position) position: vec4<f32>,
    @location(0) local: vec2<f32>,
    @location(1) uv_kind: vec4<f32>,
    @location(2) color: vec4<f32>,
};

@vertex
fn vs_main(@builtin(vertex_index) vi: u32, inst: Instance) -> VsOut {
    let corner = vec2<f32>(f32(vi & 1u), f32((vi >> 1u) & 1u));
    let pixel = inst.rect.xy + corner * inst.rect.zw;
    let ndc = pixel / globals.target_size * 2.0 - 1.0;
    var out: VsOut;
    out.position = vec4<f32>(ndc.x, -ndc.y, 0.0, 1.0);
    out.local = corner * inst.rect.zw;
    out.uv_kind = inst.uv_kind;
    out.color = inst.color;
    return out;
}

@fragment
fn fs_main(in: VsOut) -> @location(0) vec4<f32> {
    let kind = in.uv_kind.z;
    if (kind < 0.5) {
        return vec4<f32>(in.color.rgb * in.color.a, in.color.a);
    }
    let texel = vec2<i32>(floor(in.uv_kind.xy + in.local));
    let s = textureLoad(atlas, texel, 0);
    if (kind < 1.5) {
        let a = s.a * in.color.a;
        return vec4<f32>(in.color.rgb * a, a);
    }
    return vec4<f32>(s.rgb * s.a, s.a) * in.color.a;
}
