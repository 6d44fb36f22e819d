//! Rendering behaviour checked on pixels: sRGB and linear targets agree, dirty-rect uploads
//! only touch their region, and bad input is rejected with typed errors.

mod common;

use canvas_render::*;
use common::*;

fn browser_scene() -> Scene {
    Scene {
        background: Theme::default().canvas,
        nodes: vec![NodeView {
            id: 1,
            rect: Rect::new(0.0, 0.0, 200.0, 150.0),
            z: 0,
            kind: NodeKind::Browser,
            title: "page".into(),
            color: Color::hex(0x5b9cff),
            badge: None,
            focused: false,
            selected: false,
            content: NodeContent::Texture { key: 9, generation: 1 },
        }],
    }
}

#[test]
fn dirty_rect_upload_only_touches_its_region() {
    let gpu = gpu();
    let mut r = renderer(&gpu, &[]);
    let scene = browser_scene();
    let body = r.body_rect(scene.nodes[0].rect);
    let (w, h) = (body.w as u32, body.h as u32);
    let red: Vec<u8> = (0..w * h).flat_map(|_| [0, 0, 255, 255]).collect();
    let blue: Vec<u8> = (0..w * h).flat_map(|_| [255, 0, 0, 255]).collect();
    r.upload_bgra(9, w, h, &red, &[]).unwrap();
    r.upload_bgra(9, w, h, &blue, &[DirtyRect { x: 0, y: 0, w: w / 2, h }]).unwrap();
    let camera = Camera::new(Vec2::new(-10.0, -10.0), 1.0);
    let img = r.render_to_rgba(&scene, &camera, 220, 170).unwrap();
    let y = (body.y + body.h / 2.0) as u32 + 10;
    let left = img.pixel(body.x as u32 + 10 + 5, y).unwrap();
    let right = img.pixel((body.right() as u32 + 10) - 5, y).unwrap();
    assert_eq!(left, [0, 0, 255, 255], "dirty half is blue");
    assert_eq!(right, [255, 0, 0, 255], "clean half keeps the old red");

    assert!(matches!(r.upload_bgra(9, w, h, &blue[..10], &[]), Err(RenderError::InvalidArgument(_))));
    assert!(matches!(r.upload_bgra(9, 0, h, &[], &[]), Err(RenderError::InvalidArgument(_))));
    assert!(matches!(r.render_to_rgba(&scene, &camera, 0, 10), Err(RenderError::InvalidArgument(_))));
}

#[test]
fn srgb_and_linear_targets_show_the_same_colours() {
    let gpu = gpu();
    let mut r = renderer(&gpu, &[]);
    let scene = fixture_scene(&r);
    let camera = Camera::default();
    let linear = r.render_to_rgba(&scene, &camera, 640, 400).unwrap();
    let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("srgb target"),
        size: wgpu::Extent3d { width: 640, height: 400, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Bgra8UnormSrgb,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
    r.render(&scene, &camera, RenderTarget { view: &view, format: texture.format(), width: 640, height: 400 }).unwrap();
    let srgb = r.read_back(&texture).unwrap();
    let worst = linear.pixels.iter().zip(&srgb.pixels).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
    // Blending happens in a different space on the two targets; opaque areas match exactly.
    let close = linear.pixels.chunks(4).zip(srgb.pixels.chunks(4)).filter(|(a, b)| a.iter().zip(*b).all(|(x, y)| x.abs_diff(*y) <= 2)).count();
    assert!(close as f64 / (640.0 * 400.0) > 0.97, "only {close} pixels match (worst channel diff {worst})");
}

#[test]
fn overlay_is_drawn_in_target_pixels_at_any_zoom_and_damages_the_frame() {
    let gpu = gpu();
    let mut r = renderer(&gpu, &[]);
    let scene = Scene { background: Theme::default().canvas, nodes: vec![] };
    // Zoomed far out and panned: an overlay must ignore both.
    let camera = Camera::new(Vec2::new(5000.0, -300.0), 0.1);
    let before = r.render_to_rgba(&scene, &camera, 300, 200).unwrap();
    assert!(!r.needs_redraw(&scene, &camera, (300, 200)));
    let sticky = Color::hex(0xff0000);
    r.set_overlay(vec![NodeView {
        id: u64::MAX,
        rect: Rect::new(100.0, 50.0, 120.0, 100.0),
        z: 0,
        kind: NodeKind::Sticky,
        title: String::new(),
        color: sticky,
        badge: None,
        focused: false,
        selected: false,
        content: NodeContent::Empty,
    }]);
    assert!(r.needs_redraw(&scene, &camera, (300, 200)), "a new overlay damages the frame");
    let with = r.render_to_rgba(&scene, &camera, 300, 200).unwrap();
    assert!(!r.needs_redraw(&scene, &camera, (300, 200)));
    // The sticky body's centre, in target pixels, is red; outside the overlay nothing changed.
    assert_eq!(with.pixel(160, 120).unwrap(), [255, 0, 0, 255]);
    assert_eq!(with.pixel(20, 20).unwrap(), before.pixel(20, 20).unwrap());
    r.set_overlay(vec![]);
    assert!(r.needs_redraw(&scene, &camera, (300, 200)), "removing the overlay damages the frame too");
    let after = r.render_to_rgba(&scene, &camera, 300, 200).unwrap();
    assert_eq!(after.pixel(160, 120).unwrap(), before.pixel(160, 120).unwrap());
}
