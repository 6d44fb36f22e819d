//! Damage-driven caching: node textures are re-rendered only when their own inputs change,
//! an idle canvas needs no frame, and removed nodes are evicted.

mod common;

use canvas_render::*;
use common::*;

const SIZE: (u32, u32) = (1260, 680);

fn render(gpu: &Gpu, r: &mut Renderer, scene: &Scene, camera: &Camera) -> FrameStats {
    let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("test target"),
        size: wgpu::Extent3d { width: SIZE.0, height: SIZE.1, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
        view_formats: &[],
    });
    let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
    r.render(
        scene,
        camera,
        RenderTarget { view: &view, format: texture.format(), width: SIZE.0, height: SIZE.1, reuse: Reuse::Nothing },
    )
    .unwrap()
}

#[test]
fn only_changed_nodes_are_rerendered() {
    let gpu = gpu();
    let mut r = renderer(&gpu, &[]);
    let mut scene = fixture_scene(&r);
    let mut camera = Camera::default();
    let n = scene.nodes.len();

    assert!(r.needs_redraw(&scene, &camera, SIZE));
    let first = render(&gpu, &mut r, &scene, &camera);
    assert_eq!((first.nodes_total, first.nodes_visible, first.nodes_rerendered), (n, n, n));
    assert!(first.glyphs_rasterized > 0);

    // Unchanged scene and camera: nothing to draw, and drawing anyway re-renders nothing.
    assert!(!r.needs_redraw(&scene, &camera, SIZE));
    let idle = render(&gpu, &mut r, &scene, &camera);
    assert_eq!(idle.nodes_rerendered, 0);
    assert_eq!(idle.glyphs_rasterized, 0);

    // Editing one sticky re-renders exactly that node.
    if let Some(NodeContent::Text(t)) = scene.nodes.iter_mut().find(|n| n.id == 4).map(|n| &mut n.content) {
        t.push_str(" And ship it.");
    }
    assert!(r.needs_redraw(&scene, &camera, SIZE));
    assert_eq!(render(&gpu, &mut r, &scene, &camera).nodes_rerendered, 1);

    // A new terminal line re-renders exactly the terminal.
    if let Some(NodeContent::Terminal(g)) = scene.nodes.iter_mut().find(|n| n.id == 2).map(|n| &mut n.content) {
        let row = g.rows - 1;
        g.put_str(row, 0, "new output", [255, 255, 255], [0x10, 0x12, 0x16]);
    }
    assert_eq!(render(&gpu, &mut r, &scene, &camera).nodes_rerendered, 1);

    // Focus moves from the browser to the agent: two nodes change.
    for node in &mut scene.nodes {
        node.focused = node.id == 3;
    }
    assert_eq!(render(&gpu, &mut r, &scene, &camera).nodes_rerendered, 2);

    // Moving a node or panning the camera composites cached textures again: no re-render.
    scene.nodes[0].rect.x += 17.0;
    assert!(r.needs_redraw(&scene, &camera, SIZE));
    assert_eq!(render(&gpu, &mut r, &scene, &camera).nodes_rerendered, 0);
    camera.pan_by_screen(Vec2::new(-30.0, 12.0));
    assert!(r.needs_redraw(&scene, &camera, SIZE));
    assert_eq!(render(&gpu, &mut r, &scene, &camera).nodes_rerendered, 0);

    // A zoom inside the same raster step reuses textures; crossing a step re-renders.
    camera.zoom_at(Vec2::new(600.0, 300.0), 0.95);
    assert_eq!(render(&gpu, &mut r, &scene, &camera).nodes_rerendered, 0);
    camera.zoom_at(Vec2::new(600.0, 300.0), 0.6);
    let zoomed = render(&gpu, &mut r, &scene, &camera);
    assert_eq!(zoomed.nodes_rerendered, zoomed.nodes_visible);

    // New browser pixels need a frame but no node re-render.
    assert!(!r.needs_redraw(&scene, &camera, SIZE));
    r.upload_bgra(1, 4, 4, &[200; 64], &[]).unwrap();
    assert!(r.needs_redraw(&scene, &camera, SIZE));
    assert_eq!(render(&gpu, &mut r, &scene, &camera).nodes_rerendered, 0);
    assert!(!r.needs_redraw(&scene, &camera, SIZE));

    // Removing a node evicts its texture.
    let before = render(&gpu, &mut r, &scene, &camera).cache_bytes;
    scene.nodes.retain(|n| n.id != 2);
    let after = render(&gpu, &mut r, &scene, &camera);
    assert_eq!((after.nodes_evicted, after.nodes_rerendered), (1, 0));
    assert!(after.cache_bytes < before);
}

#[test]
fn offscreen_nodes_are_not_rendered_until_visible() {
    let gpu = gpu();
    let mut r = renderer(&gpu, &[]);
    let mut scene = fixture_scene(&r);
    scene.nodes.push(NodeView {
        id: 99,
        rect: Rect::new(10_000.0, 10_000.0, 200.0, 100.0),
        z: 0,
        kind: NodeKind::Sticky,
        title: "far away".into(),
        color: Color::hex(0xf7d774),
        badge: None,
        focused: false,
        selected: false,
        content: NodeContent::Text("hello".into()),
        bar: None,
    });
    let stats = render(&gpu, &mut r, &scene, &Camera::default());
    assert_eq!(stats.nodes_total, scene.nodes.len());
    assert_eq!(stats.nodes_visible, scene.nodes.len() - 1);
    let there = Camera::new(Vec2::new(9_900.0, 9_900.0), 1.0);
    let stats = render(&gpu, &mut r, &scene, &there);
    assert_eq!((stats.nodes_visible, stats.nodes_rerendered, stats.nodes_evicted), (1, 1, 0));
}

#[test]
fn offscreen_caches_are_dropped_over_the_memory_budget() {
    let gpu = gpu();
    let mut r = renderer(&gpu, &[]);
    r.set_cache_budget_bytes(1);
    let scene = fixture_scene(&r);
    let n = scene.nodes.len();
    assert_eq!(render(&gpu, &mut r, &scene, &Camera::default()).nodes_rerendered, n);
    // Look at an empty area: every cache is off-screen and over budget.
    let away = Camera::new(Vec2::new(5_000.0, 0.0), 1.0);
    let stats = render(&gpu, &mut r, &scene, &away);
    assert_eq!((stats.nodes_visible, stats.nodes_evicted, stats.cache_bytes), (0, n, 0));
    // Coming back re-renders them.
    assert_eq!(render(&gpu, &mut r, &scene, &Camera::default()).nodes_rerendered, n);
}
