//! Weights already repacked by vLLM's Marlin path (4-bit). Layouts read from vLLM's source:
//!
//! * `qweight`: output of `gptq_marlin_repack` or `awq_marlin_repack`
//!   (csrc/quantization/gptq_marlin/gptq_marlin_repack.cu, awq_marlin_repack.cu; constants in
//!   marlin.cuh: tile 16 (K) x 64 (N)). int32 `[K/16, 2N]`; row `t` holds the 16-row k-tile `t`,
//!   the 64-column n-tiles one after another, 128 words each. Word `i = 4*th + w` of a tile
//!   (`th` 0..32 a thread, `w` 0..4 a warp) packs, in nibble `p`, the value `vals[[0,2,4,6,1,3,5,7][p]]`
//!   where `vals[v]` is `q[r, c]` of the tile with `r = 2*(th % 4) + [0,1,8,9][v % 4]` and
//!   `c = 16*w + th / 4 + 8*(v / 4)`. The values are the checkpoint's (no offset change). With
//!   act order the rows were gathered through `perm` (`g_idx_sort_indices`) while repacking, so
//!   the rows are already sorted by group.
//! * `scales`: output of `marlin_permute_scales`
//!   (vllm/model_executor/layers/quantization/utils/marlin_utils.py, `get_scale_perms`): `[G, N]`
//!   with each run of 64 columns permuted by `scale_perm[8i + j] = i + 8j` when
//!   `group_size != -1 and group_size < K`, otherwise each run of 32 by
//!   `scale_perm_single[8i + t] = 2i + [0,1,8,9,16,17,24,25][t]` (`marlin[b*L + i] = s[b*L + perm[i]]`).
//! * zero points (asymmetric configs only), `[G, N/8]` int32, in the layout the caller names:
//!   - `"marlin"`: output of `marlin_zero_points` (marlin_utils.py), which is also what
//!     `awq_to_marlin_zero_points` returns (it undoes AWQ's interleave, then calls
//!     `marlin_zero_points`): columns permuted by `scale_perm` in runs of 64, then each run of 8
//!     interleaved by `[0,2,4,6,1,3,5,7]`, then packed 8 per word sequentially (`pack_cols`);
//!   - `"awq"`: the AWQ checkpoint's `qzeros` (interleaved, not yet converted);
//!   - `"gptq_v2"`: sequentially packed exact zeros (a GPTQ-v2 `qzeros`, not yet converted).
//!   Same shape, same multiset of values: only the caller can say which it holds.
//! * `g_idx` (sorted, as `marlin_sort_g_idx` returns it) and `perm` (`g_idx_sort_indices`),
//!   read only when the config says act order.
//!
//! The bias of a Marlin layer is permuted too (`marlin_permute_bias`); the GEMM takes the
//! original bias (not part of the frame).

use tch::{Kind, Tensor};

use super::Layer;
use crate::error::{arg_err, Result};
use crate::frame::act_order::check_sorted;
use crate::frame::build_guards::{first_true, index_vector, packed, permutation, required, scales, Input};
use crate::frame::shard::HeldRows;
use crate::frame::canonical::{invert, unpack_cols, AWQ_ORDER, SEQUENTIAL};
use crate::frame::FrameMeta;
use crate::tensor::DType;

/// Zero-point layouts a Marlin-repacked layer's caller may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZeroLayout {
    Marlin,
    Awq,
    GptqV2,
}

impl ZeroLayout {
    pub fn parse(s: &str) -> Result<ZeroLayout> {
        match s {
            "marlin" => Ok(ZeroLayout::Marlin),
            "awq" => Ok(ZeroLayout::Awq),
            "gptq_v2" => Ok(ZeroLayout::GptqV2),
            other => Err(arg_err(
                "zero_layout",
                format!("{other:?}"),
                "must name the zero-point layout held: \"marlin\" (marlin_zero_points / \
                 awq_to_marlin_zero_points output), \"awq\" (AWQ qzeros, unconverted) or \"gptq_v2\" \
                 (sequential exact zeros, unconverted)",
            )),
        }
    }
}

/// vLLM's `scale_perm` (64 entries) and `scale_perm_single` (32 entries).
pub fn scale_perms() -> (Vec<i64>, Vec<i64>) {
    let mut grouped = Vec::with_capacity(64);
    for i in 0..8 {
        for j in 0..8 {
            grouped.push(i + 8 * j);
        }
    }
    let mut single = Vec::with_capacity(32);
    for i in 0..4 {
        for t in [0, 1, 8, 9, 16, 17, 24, 25] {
            single.push(2 * i + t);
        }
    }
    (grouped, single)
}

/// For a 16x64 tile, `map[r * 64 + c]` = position `8 * word + nibble` of `q[r, c]` in the tile's
/// 128 words (the repack kernels' thread/warp arithmetic, see the module doc).
pub fn tile_map() -> Vec<i64> {
    const PACK_IDX: [i64; 8] = [0, 2, 4, 6, 1, 3, 5, 7];
    const OFFSETS: [i64; 4] = [0, 1, 8, 9];
    let mut map = vec![-1i64; 1024];
    for th in 0..32i64 {
        for w in 0..4i64 {
            let word = 4 * th + w;
            for (p, &v) in PACK_IDX.iter().enumerate() {
                let r = 2 * (th % 4) + OFFSETS[(v % 4) as usize];
                let c = 16 * w + th / 4 + 8 * (v / 4);
                map[(r * 64 + c) as usize] = 8 * word + p as i64;
            }
        }
    }
    map
}

/// Undo a per-run column permutation: `marlin[:, b*L + i] = s[:, b*L + perm[i]]`.
fn unpermute_runs(t: &Tensor, perm: &[i64]) -> Tensor {
    let (g, n) = t.size2().expect("2-D");
    let inv = Tensor::from_slice(&invert(perm)).to_device(t.device());
    t.reshape([-1, perm.len() as i64]).index_select(1, &inv).reshape([g, n])
}

/// (K, N) of a `gptq_marlin_repack` output `[rows/16, 2N]`; `rows` names K in errors (`K_s`: a
/// rank's rows, whose N must also be a multiple of 64).
fn repacked_shape(qweight: &Input, rows: &str, n_aligned: bool) -> Result<(i64, i64)> {
    qweight.dtype_in(&[DType::I32], "must be torch.int32 (Marlin-repacked words)")?;
    let what = format!("Marlin qweight is [{rows}/16, 2N]");
    let dims = qweight.ndim(2, &what)?;
    let (k, n) = (dims[0] * 16, dims[1] / 2);
    if dims[1] % 2 != 0 || (n_aligned && n % 64 != 0) {
        let rule = if n_aligned { " with N a multiple of 64" } else { "" };
        return Err(arg_err(
            "qweight",
            format!("a tensor of shape {dims:?}"),
            format!("must be [{rows}/16, 2N]{rule} (gptq_marlin_repack output)"),
        ));
    }
    Ok((k, n))
}

#[allow(clippy::too_many_arguments)]
pub fn layer(
    qweight: Input,
    scale_t: Input,
    zeros_t: Option<Input>,
    g_idx: Option<Input>,
    perm_t: Option<Input>,
    group_size: i64,
    sym: bool,
    desc_act: bool,
    zero_layout: &str,
) -> Result<Layer> {
    let device = qweight.device()?;
    let (k, n) = repacked_shape(&qweight, "K", false)?;
    let meta = FrameMeta::new(k, n, group_size, !sym, desc_act)?;
    let groups = meta.groups();

    let (scale_kind, scales, zeros) =
        scales_and_zeros(&scale_t, &zeros_t, &qweight, groups, n, k, group_size, sym, zero_layout)?;

    let perm = if desc_act {
        let g = required(&g_idx, "g_idx", "the config says desc_act=True (the sorted g_idx of the Marlin layer)")?;
        let p = required(&perm_t, "perm", "the config says desc_act=True (g_idx_sort_indices)")?;
        g.same_device(&qweight)?;
        p.same_device(&qweight)?;
        Some(check_sorted(g, p, &meta)?)
    } else {
        None
    };

    Ok(Layer { meta, scale_kind, device, scales, zeros, perm, q: rows_decoder(&qweight, k, device) })
}

/// `(n0, n)` -> uint8 `[K, n]`: the repacked rows (in their repacked order) of columns `[n0, n0 + n)`.
fn rows_decoder(qweight: &Input, k: i64, device: tch::Device) -> Box<dyn Fn(i64, i64) -> Tensor> {
    let words = qweight.t.shallow_clone();
    let map = Tensor::from_slice(&tile_map()).to_device(device);
    Box::new(move |n0, nb| {
        let kt = k / 16;
        let tiles = nb / 64;
        // [K/16, tiles, 128 words] -> nibbles [K/16, tiles, 1024] in (word, nibble) order.
        let w = words.narrow(1, 2 * n0, 2 * nb).reshape([kt, tiles, 128]);
        let nib = Tensor::empty([kt, tiles, 128, 8], (Kind::Uint8, w.device()));
        for j in 0..8 {
            nib.select(3, j).copy_(&crate::frame::canonical::nibble(&w, j));
        }
        let tile = nib.view([kt, tiles, 1024]).index_select(2, &map).view([kt, tiles, 16, 64]);
        tile.permute([0, 2, 1, 3]).reshape([k, nb])
    })
}

/// Canonical scales and zeros (`[groups, N]`) from Marlin's permuted ones; `k` the K vLLM passed
/// to `marlin_permute_scales` (the rank's, under tensor parallelism).
fn scales_and_zeros(
    scale_t: &Input,
    zeros_t: &Option<Input>,
    qweight: &Input,
    groups: i64,
    n: i64,
    k: i64,
    group_size: i64,
    sym: bool,
    zero_layout: &str,
) -> Result<(Kind, Tensor, Option<Tensor>)> {
    scale_t.same_device(qweight)?;
    let scale_kind = scales(scale_t, &[groups, n], "[K/group, N], marlin_permute_scales output")?;
    let (grouped, single) = scale_perms();
    let per_group = group_size != -1 && group_size < k; // vLLM's own test in marlin_permute_scales
    let scales = unpermute_runs(&scale_t.t, if per_group { &grouped } else { &single });
    let zeros = if sym {
        None
    } else {
        let z = required(zeros_t, "zeros", "the config is asymmetric (sym=False)")?;
        if zero_layout.is_empty() {
            return Err(arg_err("zero_layout", "None", "is required when the config is asymmetric (sym=False): \
                name the zero-point layout held (\"marlin\", \"awq\" or \"gptq_v2\")"));
        }
        let layout = ZeroLayout::parse(zero_layout)?;
        z.same_device(qweight)?;
        packed(z, &[groups, n / 8], "[K/group, N/8]")?;
        Some(match layout {
            ZeroLayout::Marlin => unpermute_runs(&unpack_cols(&z.t, &AWQ_ORDER), &grouped),
            ZeroLayout::Awq => unpack_cols(&z.t, &AWQ_ORDER),
            ZeroLayout::GptqV2 => unpack_cols(&z.t, &SEQUENTIAL),
        })
    };
    Ok((scale_kind, scales, zeros))
}

/// Row-parallel act order (`shard.rs`, "K not full"), as vLLM's Marlin path holds a rank's rows:
/// `qweight` = `gptq_marlin_repack` of the rank's rows gathered by `perm` (`[K_s/16, 2N]`),
/// `g_idx` = the rank's `g_idx` sorted (`marlin_sort_g_idx`, `[K_s]`, the layer's group ids),
/// `perm` = its sort indices (`[K_s]`, x columns of the rank's slice), and every group's scales /
/// zeros (`[K/group, N]`, permuted by `marlin_permute_scales` with `size_k = K_s`).
#[allow(clippy::too_many_arguments)]
pub fn held_rows(
    qweight: Input,
    scale_t: Input,
    zeros_t: Option<Input>,
    g_idx: Option<Input>,
    perm_t: Option<Input>,
    group_size: i64,
    sym: bool,
    zero_layout: &str,
) -> Result<HeldRows> {
    let device = qweight.device()?;
    let (k, n) = repacked_shape(&qweight, "K_s", true)?;
    super::check_group_size(group_size)?;
    let s_rows = scale_t.ndim(2, "[K/group, N]: every group of the layer")?[0];
    let (scale_kind, scales, zeros) =
        scales_and_zeros(&scale_t, &zeros_t, &qweight, s_rows, n, k, group_size, sym, zero_layout)?;
    let g = required(&g_idx, "g_idx", "the config says desc_act=True (the rank's sorted g_idx)")?;
    let p = required(&perm_t, "perm", "the config says desc_act=True (the rank's g_idx_sort_indices)")?;
    g.same_device(&qweight)?;
    p.same_device(&qweight)?;
    let groups = super::held_groups(g, k, s_rows)?;
    if let Some(i) = first_true(&groups.narrow(0, 1, k - 1).lt_tensor(&groups.narrow(0, 0, k - 1))) {
        return Err(arg_err(
            g.name,
            format!("g_idx[{}] = {} after {}", i + 1, groups.int64_value(&[i + 1]), groups.int64_value(&[i])),
            "must be sorted (the rank's g_idx as marlin_sort_g_idx returns it, matching rows repacked with perm)",
        ));
    }
    let x_col = index_vector(p, k, "[K_s]: g_idx_sort_indices of the rank's rows")?;
    permutation(p.name, &x_col, k)?;
    Ok(HeldRows {
        n,
        group_size,
        scale_kind,
        device,
        scales,
        zeros,
        groups,
        x_col: Some(x_col),
        q: rows_decoder(&qweight, k, device),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_map_is_a_bijection() {
        let mut seen = tile_map();
        assert!(seen.iter().all(|&v| v >= 0));
        seen.sort();
        assert_eq!(seen, (0..1024).collect::<Vec<_>>());
    }

    #[test]
    fn scale_perms_are_permutations() {
        let (g, s) = scale_perms();
        let mut g2 = g.clone();
        g2.sort();
        assert_eq!(g2, (0..64).collect::<Vec<_>>());
        let mut s2 = s.clone();
        s2.sort();
        assert_eq!(s2, (0..32).collect::<Vec<_>>());
        assert_eq!(&g[..10], &[0, 8, 16, 24, 32, 40, 48, 56, 1, 9]);
        assert_eq!(&s[..10], &[0, 1, 8, 9, 16, 17, 24, 25, 2, 3]);
    }
}
