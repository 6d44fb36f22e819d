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
            bar: None,
        }],
        links: vec![],
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
fn frames_reused_for_a_window_redraw_only_changed_content_and_match_full_frames() {
    let gpu = gpu();
    let mut r = renderer(&gpu, &[]);
    // Two browsers, one under a sticky that overlaps it, on the dot grid.
    let mut scene = browser_scene();
    let mut second = scene.nodes[0].clone();
    second.id = 2;
    second.rect = Rect::new(260.0, 40.0, 200.0, 150.0);
    second.content = NodeContent::Texture { key: 10, generation: 1 };
    let mut sticky = second.clone();
    sticky.id = 3;
    sticky.z = 5;
    sticky.kind = NodeKind::Sticky;
    sticky.rect = Rect::new(150.0, 100.0, 160.0, 90.0);
    sticky.content = NodeContent::Text("over both".into());
    scene.nodes.extend([second, sticky]);
    let body = r.body_rect(scene.nodes[0].rect);
    let (w, h) = (body.w as u32, body.h as u32);
    let page = |seed: u8| -> Vec<u8> {
        (0..w * h).flat_map(|i| [seed.wrapping_add((i % 251) as u8), (i / w) as u8, 90, 255]).collect()
    };
    r.upload_bgra(9, w, h, &page(0), &[]).unwrap();
    r.upload_bgra(10, w, h, &page(7), &[]).unwrap();
    let camera = Camera::new(Vec2::new(-20.0, -30.0), 1.25);
    let (tw, th) = (640, 400);
    let window = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("window-like target"),
        size: wgpu::Extent3d { width: tw, height: th, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    let view = window.create_view(&wgpu::TextureViewDescriptor::default());
    let frame = |r: &mut Renderer, scene: &Scene, camera: &Camera| {
        let stats = r
            .render(
                scene,
                camera,
                RenderTarget {
                    view: &view,
                    format: window.format(),
                    width: tw,
                    height: th,
                    reuse: Reuse::CopyInto(&window),
                },
            )
            .unwrap();
        (stats.reused, r.read_back(&window).unwrap())
    };
    let (reused, _) = frame(&mut r, &scene, &camera);
    assert_eq!(reused, FrameReuse::None, "the first frame is drawn whole");
    let (reused, _) = frame(&mut r, &scene, &camera);
    assert_eq!(reused, FrameReuse::Whole, "nothing changed: the kept frame is copied");
    // A region of the first page changes (under the sticky too); then all of the second.
    r.upload_bgra(9, w, h, &page(100), &[DirtyRect { x: w / 3, y: h / 4, w: w / 2, h: h / 2 }]).unwrap();
    r.upload_bgra(10, w, h, &page(200), &[]).unwrap();
    let (reused, partial) = frame(&mut r, &scene, &camera);
    assert_eq!(reused, FrameReuse::Regions(2));
    let full = r.render_to_rgba(&scene, &camera, tw, th).unwrap();
    let differing = partial.pixels.chunks(4).zip(full.pixels.chunks(4)).filter(|(a, b)| a != b).count();
    assert_eq!(differing, 0, "a frame drawn from the last one differs from a whole frame in {differing} pixels");
    // render_to_rgba drew elsewhere and took the damage: the next window frame is whole.
    let (reused, _) = frame(&mut r, &scene, &camera);
    assert_eq!(reused, FrameReuse::None);
    // Moving the camera redraws everything.
    r.upload_bgra(9, w, h, &page(50), &[DirtyRect { x: 0, y: 0, w: 10, h: 10 }]).unwrap();
    let moved = Camera::new(Vec2::new(-25.0, -30.0), 1.25);
    let (reused, after_move) = frame(&mut r, &scene, &moved);
    assert_eq!(reused, FrameReuse::None);
    assert_eq!(after_move.pixels, r.render_to_rgba(&scene, &moved, tw, th).unwrap().pixels);
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
    r.render(
        &scene,
        &camera,
        RenderTarget { view: &view, format: texture.format(), width: 640, height: 400, reuse: Reuse::Nothing },
    )
    .unwrap();
    let srgb = r.read_back(&texture).unwrap();
    let worst = linear.pixels.iter().zip(&srgb.pixels).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
    // Blending happens in a different space on the two targets; opaque areas match exactly.
    let close = linear
        .pixels
        .chunks(4)
        .zip(srgb.pixels.chunks(4))
        .filter(|(a, b)| a.iter().zip(*b).all(|(x, y)| x.abs_diff(*y) <= 2))
        .count();
    assert!(close as f64 / (640.0 * 400.0) > 0.97, "only {close} pixels match (worst channel diff {worst})");
}

#[test]
fn overlay_is_drawn_in_target_pixels_at_any_zoom_and_damages_the_frame() {
    let gpu = gpu();
    let mut r = renderer(&gpu, &[]);
    let scene = Scene { background: Theme::default().canvas, nodes: vec![], links: vec![] };
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
        bar: None,
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

#[test]
fn links_are_drawn_under_nodes_between_their_centres_and_damage_the_frame() {
    let gpu = gpu();
    let mut r = renderer(&gpu, &[]);
    let theme = Theme::default();
    let sticky = |id: u64, x: f32, y: f32| NodeView {
        id,
        rect: Rect::new(x, y, 100.0, 80.0),
        z: id as i32,
        kind: NodeKind::Sticky,
        title: String::new(),
        color: Color::hex(0xff0000),
        badge: None,
        focused: false,
        selected: false,
        content: NodeContent::Empty,
        bar: None,
    };
    // Centres (60, 60) and (310, 210): the link runs right along y = 60, then down x = 310.
    let mut scene =
        Scene { background: theme.canvas, nodes: vec![sticky(1, 10.0, 20.0), sticky(2, 260.0, 170.0)], links: vec![] };
    let camera = Camera::default();
    let unlinked = r.render_to_rgba(&scene, &camera, 400, 300).unwrap();
    scene.links = vec![(1, 2)];
    assert!(r.needs_redraw(&scene, &camera, (400, 300)), "a new link damages the frame");
    let linked = r.render_to_rgba(&scene, &camera, 400, 300).unwrap();
    let link = [theme.link.r, theme.link.g, theme.link.b, 255];
    for (x, y) in [(200, 60), (310, 120)] {
        assert_eq!(linked.pixel(x, y).unwrap(), link, "on the link at ({x}, {y})");
        assert_ne!(unlinked.pixel(x, y).unwrap(), link);
    }
    // Off the line, and inside the nodes (drawn over it), nothing changed.
    for (x, y) in [(200, 80), (330, 120), (60, 60), (310, 210)] {
        assert_eq!(linked.pixel(x, y).unwrap(), unlinked.pixel(x, y).unwrap(), "at ({x}, {y})");
    }
    // A link to a node not in the scene draws nothing.
    scene.links = vec![(1, 99)];
    assert_eq!(r.render_to_rgba(&scene, &camera, 400, 300).unwrap().pixel(200, 60), unlinked.pixel(200, 60));
}

/// The dot grid evaluated at pixel centre `(x, y)` by the per-pixel formula the background
/// used to run on the GPU: the reference the instanced dots must reproduce at every zoom.
fn reference_grid_pixel(x: u32, y: u32, camera: &Camera, theme: &Theme) -> [u8; 3] {
    let zoom = camera.zoom();
    let world = [(x as f32 + 0.5) / zoom + camera.offset.x, (y as f32 + 0.5) / zoom + camera.offset.y];
    let coverage = |spacing: f32, radius: f32| {
        let d = world.iter().map(|w| (w - (w / spacing).round() * spacing).powi(2)).sum::<f32>().sqrt() * zoom;
        (radius + 0.5 - d).clamp(0.0, 1.0)
    };
    let k = (14.0 / (theme.grid_spacing * zoom)).log2().ceil().max(0.0);
    let coarse = theme.grid_spacing * k.exp2();
    let radius = (1.1 * zoom).clamp(0.9, 1.8);
    let fine_alpha = ((coarse * zoom * 0.5 - 7.0) / 7.0).clamp(0.0, 1.0);
    let a = coverage(coarse, radius).max(coverage(coarse * 0.5, radius) * fine_alpha);
    let (bg, dot) = (theme.canvas.to_f32(), theme.grid_dot.to_f32());
    std::array::from_fn(|i| ((bg[i] + (dot[i] - bg[i]) * a * dot[3]) * 255.0).round() as u8)
}

#[test]
fn instanced_dot_grid_matches_the_per_pixel_formula_at_every_zoom() {
    let gpu = gpu();
    let mut r = renderer(&gpu, &[]);
    let theme = Theme::default();
    let scene = Scene { background: theme.canvas, nodes: vec![], links: vec![] };
    for (zoom, offset) in [
        (1.0, (0.0, 0.0)),
        (0.586, (-37.3, 811.9)),
        (0.42, (5.0, -3.0)),
        (0.1, (-5000.0, 2400.0)),
        (1.7, (13.1, 7.7)),
        (4.0, (-1.3, 2.2)),
    ] {
        let camera = Camera::new(Vec2::new(offset.0, offset.1), zoom);
        let img = r.render_to_rgba(&scene, &camera, 320, 200).unwrap();
        let mut worst = 0;
        for y in 0..200 {
            for x in 0..320 {
                let got = img.pixel(x, y).unwrap();
                let want = reference_grid_pixel(x, y, &camera, &theme);
                assert_eq!(got[3], 255);
                worst = worst.max((0..3).map(|i| got[i].abs_diff(want[i])).max().unwrap_or(0));
            }
        }
        // Float rounding in a different order may move a channel by one step, never more.
        assert!(worst <= 1, "zoom {zoom}: a pixel differs by {worst} from the per-pixel grid");
    }
}

#[test]
fn translucent_content_shows_the_node_body_beneath_it_everywhere() {
    let gpu = gpu();
    let mut r = renderer(&gpu, &[]);
    let scene = browser_scene();
    let body = r.body_rect(scene.nodes[0].rect);
    let (w, h) = (body.w as u32, body.h as u32);
    // Premultiplied BGRA: red at half coverage.
    let half_red: Vec<u8> = (0..w * h).flat_map(|_| [0, 0, 128, 128]).collect();
    r.upload_bgra(9, w, h, &half_red, &[]).unwrap();
    let camera = Camera::new(Vec2::new(-10.0, -10.0), 1.0);
    let img = r.render_to_rgba(&scene, &camera, 220, 170).unwrap();
    let fill = Theme::default().node_body;
    let over = |c: u8, under: u8| (c as f32 + under as f32 * (1.0 - 128.0 / 255.0)).round() as u8;
    let want = [over(128, fill.r), over(0, fill.g), over(0, fill.b)];
    // The body's interior (content composited over the body colour in one layer) and its
    // edge band (content blended over the node texture) must agree.
    let (cx, cy) = ((body.x + body.w / 2.0) as u32 + 10, (body.y + body.h / 2.0) as u32 + 10);
    for (x, y) in [
        (cx, cy),
        (body.x as u32 + 11, cy),
        (body.right() as u32 + 8, cy),
        (cx, body.y as u32 + 12),
        (cx, body.bottom() as u32 + 5),
    ] {
        let got = img.pixel(x, y).unwrap();
        for i in 0..3 {
            assert!(got[i].abs_diff(want[i]) <= 1, "pixel ({x}, {y}) is {got:?}, want {want:?}");
        }
    }
}
