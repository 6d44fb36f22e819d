//! Reproducible pictures for visual tests and benchmarks: a headless software
//! GPU (lavapipe), a fixed font set, and the comparison against golden images.
//! canvas-render's own tests, the app's terminal golden and the benchmarks all
//! make and judge their pictures through this one module.

use std::path::{Path, PathBuf};

use crate::{Gpu, RenderError, Renderer, RendererConfig, Result, RgbaImage, TerminalFont, EMBEDDED_MONO_FAMILY};

/// DejaVu Sans from fonts-dejavu-core: the only system fonts a golden may use.
pub const DEJAVU: [&str; 2] =
    ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"];

/// Per-pixel tolerance: a channel may differ by this much before the pixel counts as changed.
pub const MAX_CHANNEL_DIFF: u8 = 8;
/// At most this fraction of pixels may differ from the golden.
pub const MAX_DIFF_FRACTION: f64 = 0.005;

const LAVAPIPE_ICD: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

/// Points Vulkan at lavapipe (when installed and `VK_ICD_FILENAMES` is unset)
/// and gives the Vulkan loader a private `XDG_RUNTIME_DIR` when there is none
/// (it warns otherwise), then opens a headless GPU context. It sets process
/// environment variables: call it before starting other threads.
pub fn software_gpu() -> Result<Gpu> {
    if std::env::var_os("VK_ICD_FILENAMES").is_none() && Path::new(LAVAPIPE_ICD).exists() {
        std::env::set_var("VK_ICD_FILENAMES", LAVAPIPE_ICD);
    }
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        let dir = std::env::temp_dir().join(format!("canvas-render-xdg-{}", std::process::id()));
        let io = |source| RenderError::Io { path: dir.clone(), source };
        std::fs::create_dir_all(&dir).map_err(io)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
        std::env::set_var("XDG_RUNTIME_DIR", &dir);
    }
    Gpu::headless()
}

/// A renderer with a fixed font set: embedded Hack for terminals, DejaVu Sans
/// (plus `extra_fonts`) for the UI, no system fonts.
pub fn fixed_font_renderer(gpu: &Gpu, extra_fonts: &[&str]) -> Result<Renderer> {
    if let Some(missing) = DEJAVU.iter().find(|f| !Path::new(f).exists()) {
        return Err(RenderError::InvalidArgument(format!("{missing} missing: install fonts-dejavu-core")));
    }
    let config = RendererConfig {
        terminal_font: TerminalFont { family: EMBEDDED_MONO_FAMILY.into(), size: 13.0 },
        ui_font_family: "DejaVu Sans".into(),
        load_system_fonts: false,
        extra_font_files: DEJAVU.iter().chain(extra_fonts).map(PathBuf::from).collect(),
        ..RendererConfig::default()
    };
    Renderer::new(gpu, config)
}

/// For tests: compares `actual` with `<golden_dir>/<name>.png` and panics with
/// a report when more than [`MAX_DIFF_FRACTION`] of the pixels differ by more
/// than [`MAX_CHANNEL_DIFF`]; then `<name>.actual.png` and `<name>.diff.png`
/// are written into `out_dir`. With `UPDATE_GOLDEN` set, writes the golden instead.
pub fn assert_matches_golden(golden_dir: &Path, out_dir: &Path, name: &str, actual: &RgbaImage) {
    let golden_path = golden_dir.join(format!("{name}.png"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden_dir).expect("golden dir");
        actual.save_png(&golden_path).expect("write golden");
        println!("updated golden {}", golden_path.display());
        return;
    }
    let golden = RgbaImage::load_png(&golden_path)
        .unwrap_or_else(|e| panic!("missing golden {} ({e}); run with UPDATE_GOLDEN=1", golden_path.display()));
    std::fs::create_dir_all(out_dir).expect("output dir");
    let actual_path = out_dir.join(format!("{name}.actual.png"));
    if (golden.width, golden.height) != (actual.width, actual.height) {
        actual.save_png(&actual_path).expect("write actual");
        panic!(
            "{name}: size {}x{} != golden {}x{}; actual at {}",
            actual.width,
            actual.height,
            golden.width,
            golden.height,
            actual_path.display()
        );
    }
    let mut diff = vec![0u8; actual.pixels.len()];
    let (mut differing, mut changed, mut worst) = (0usize, 0usize, 0u8);
    for (i, (a, g)) in actual.pixels.chunks_exact(4).zip(golden.pixels.chunks_exact(4)).enumerate() {
        let d = a.iter().zip(g).map(|(x, y)| x.abs_diff(*y)).max().unwrap_or(0);
        worst = worst.max(d);
        changed += usize::from(d > 0);
        let o = &mut diff[i * 4..i * 4 + 4];
        if d > MAX_CHANNEL_DIFF {
            differing += 1;
            o.copy_from_slice(&[255, 0, 255, 255]);
        } else {
            let l = ((u16::from(g[0]) + u16::from(g[1]) + u16::from(g[2])) / 12) as u8;
            o.copy_from_slice(&[l, l, l, 255]);
        }
    }
    println!("golden {name}: {changed} pixels differ at all, worst channel difference {worst}");
    let fraction = differing as f64 / (f64::from(actual.width) * f64::from(actual.height));
    if fraction > MAX_DIFF_FRACTION {
        let diff_path = out_dir.join(format!("{name}.diff.png"));
        actual.save_png(&actual_path).expect("write actual");
        RgbaImage::new(actual.width, actual.height, diff)
            .expect("diff image")
            .save_png(&diff_path)
            .expect("write diff");
        panic!(
            "{name}: {differing} pixels ({:.3} %) differ by more than {MAX_CHANNEL_DIFF} (worst {worst}); allowed {:.1} %\n  actual: {}\n  diff:   {}",
            fraction * 100.0,
            MAX_DIFF_FRACTION * 100.0,
            actual_path.display(),
            diff_path.display()
        );
    }
}
