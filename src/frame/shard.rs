//! Tensor parallelism: the frame of one rank's slice of a layer, built from the slice the serving
//! engine hands that rank (vLLM's weight loaders: the checkpoint tensors narrowed along the
//! sharded dim; with row-parallel act order every rank keeps every group's scales and zeros).
//!
//! * **Column-parallel** (N split, K full): the slice is an ordinary layer of `N / world` output
//!   columns (`g_idx` unchanged); the convention builds it as it is. Rule: the rank's N is a
//!   positive multiple of 64 (every kernel's N envelope; also whole packed words along N).
//! * **Row-parallel without act order** (K split): the slice is an ordinary layer of
//!   `K / world` rows with its own groups. Rule: the rank's K is a multiple of
//!   `lcm(group_size, 64)` (whole groups, whole 64-row kernel chunks); per channel, of 64
//!   (each rank keeps the one scale row).
//! * **Row-parallel with act order ("K not full")**: the rank's rows do not hold whole groups.
//!   The frame stays an ordinary v2 frame (the kernels are unchanged) read by an x of fewer
//!   columns: the shard invariant of `mod.rs`. [`regroup`]: stable-sort the rank's rows by group;
//!   group `g` then holds a run of `L_g <= G` rows; pad each run with zero-weight rows (`q` =
//!   the zero point, so the weight is exactly 0) to a multiple of the frame's group size `q_sub`
//!   in {32, 64, 128} (each `q_sub`-row subgroup copies its group's scale and zero), then the total
//!   to a multiple of 64; `perm` maps each real row to its x column and each padded row to the x
//!   column of the real row before it. `q_sub` is chosen per layer as the one with the fewest
//!   bytes to stream (padding rows against scale/zero copies: 32 for a random `g_idx`; the
//!   layer's own group size when the rank holds whole groups, which then adds no row at all).
//!   Rule: the rank's K is a multiple of 8 (8 rows per packed word; 16-byte x rows).
//!
//! Cost of the K-not-full frame (`scripts/tp_padding.py`, G = 128, random `g_idx`, measured
//! through this builder): rows added / rows = 23-25 % at tp = 2, 45-46 % at tp = 4, 100 % at
//! tp = 8 (a rank holds ~128/tp rows of a group: ~64 pads to 64 or 96, ~16 always to 32); with
//! the group-32 scale and zero rows the bytes streamed grow 37 %, 62 %, 123 %. The kernels are
//! memory bound at decode, so the row-parallel layer slows about as much. Two ways out, neither
//! taken here: a kernel reading each row's group from a `g_idx` (a kernel change: frame v3), or
//! removing the act order at the model level (permute the previous layer's output columns by
//! the sort of this layer's `g_idx`, e.g. gate/up before down; then each rank holds whole
//! groups and its frame adds nothing): README "Tensor parallel".

use tch::{Device, Kind, Tensor};

use super::conventions::Layer;
use super::{FrameMeta, K_ALIGN, N_ALIGN};
use crate::error::{arg_err, Result};

/// Frame group sizes a K-not-full shard may use (each a kernel group size).
pub const SUBGROUPS: [i64; 3] = [32, 64, 128];
/// A K-not-full slice's K must be a multiple of this: 8 rows per packed int32 word along K, and
/// x rows of 16 bytes (the op's x row-stride rule).
pub const ROW_SLICE_ALIGN: i64 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// N split: each rank computes `N / world` output columns.
    Column,
    /// K split: each rank computes a partial sum of all N outputs; the engine all-reduces them.
    Row,
}

/// Which slice of a layer the tensors are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub style: Style,
    pub rank: i64,
    pub world: i64,
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Shard {
    /// `style` is `""` / `"none"` (a whole layer: `rank` 0, `world` 1), `"column"` or `"row"`.
    pub fn parse(style: &str, rank: i64, world: i64) -> Result<Option<Shard>> {
        let style = match style {
            "" | "none" => {
                if (rank, world) != (0, 1) {
                    return Err(arg_err(
                        "shard",
                        "None",
                        format!("rank = {rank}, world = {world} describe a tensor-parallel slice: say shard=\"column\" or \"row\""),
                    ));
                }
                return Ok(None);
            }
            "column" => Style::Column,
            "row" => Style::Row,
            other => {
                return Err(arg_err(
                    "shard",
                    format!("{other:?}"),
                    "must be None (a whole layer), \"column\" (N split) or \"row\" (K split, partial sums all-reduced)",
                ))
            }
        };
        if world < 1 || rank < 0 || rank >= world {
            return Err(arg_err("rank", format!("{rank} (world = {world})"), "must satisfy 0 <= rank < world, world >= 1"));
        }
        Ok(Some(Shard { style, rank, world }))
    }

    fn who(&self, what: &str, size: i64) -> String {
        format!("rank {} of {}: a {what} split of {size}", self.rank, self.world)
    }

    /// The alignment a slice of this style needs (before any tensor is decoded): `k`, `n` are
    /// the slice's, `act_order` the config's.
    pub fn check(&self, k: i64, n: i64, group_size: i64, act_order: bool) -> Result<()> {
        match self.style {
            Style::Column => {
                if n < N_ALIGN || n % N_ALIGN != 0 {
                    return Err(arg_err(
                        "shard",
                        self.who("column-parallel (N)", n),
                        format!(
                            "each rank's output features N / world must be a positive multiple of {N_ALIGN} \
                             (every kernel's N envelope; whole packed words along N)"
                        ),
                    ));
                }
            }
            Style::Row if act_order => {
                if k < ROW_SLICE_ALIGN || k % ROW_SLICE_ALIGN != 0 {
                    return Err(arg_err(
                        "shard",
                        self.who("row-parallel (K) act-order", k),
                        format!(
                            "each rank's input features K / world must be a positive multiple of {ROW_SLICE_ALIGN} \
                             (8 rows per packed word along K; 16-byte x rows)"
                        ),
                    ));
                }
            }
            Style::Row => {
                let unit = if group_size == -1 { K_ALIGN } else { group_size / gcd(group_size, K_ALIGN) * K_ALIGN };
                if k < unit || k % unit != 0 {
                    let what = if group_size == -1 {
                        format!("a multiple of {K_ALIGN} (whole 64-row kernel chunks; per channel, each rank keeps the scale row)")
                    } else {
                        format!("a multiple of lcm(group_size {group_size}, {K_ALIGN}) = {unit} (whole groups, whole 64-row kernel chunks)")
                    };
                    return Err(arg_err(
                        "shard",
                        self.who("row-parallel (K)", k),
                        format!("without act order each rank's input features K / world must be {what}"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// A rank's rows of an act-order layer, decoded by its convention, before regrouping.
pub struct HeldRows {
    pub n: i64,
    /// The layer's declared group size (-1 = per channel).
    pub group_size: i64,
    pub scale_kind: Kind,
    pub device: Device,
    /// `[S, N]`, every group of the layer, canonical (as `canonical.rs`).
    pub scales: Tensor,
    /// uint8 `[S, N]` exact zero points; `None` when symmetric.
    pub zeros: Option<Tensor>,
    /// int64 `[K_s]`: the group of each held row, in held order, values in `[0, S)`.
    pub groups: Tensor,
    /// int64 `[K_s]`: the x column of each held row (`None`: held row `i` is x column `i`).
    pub x_col: Option<Tensor>,
    /// `(n0, n)` -> uint8 `[K_s, n]`: q of the held rows, held order.
    pub q: Box<dyn Fn(i64, i64) -> Tensor>,
}

/// Where each frame row of a K-not-full shard comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegroupPlan {
    /// The frame's group size (one of [`SUBGROUPS`]).
    pub sub: i64,
    /// Per frame row: the held row it reads (for a padded row, the real row before it).
    pub src: Vec<i64>,
    /// Per frame row: padding (weight exactly 0).
    pub pad: Vec<bool>,
    /// Per frame subgroup (`sub` rows): the layer's group whose scale and zero it copies.
    pub sub_groups: Vec<i64>,
}

impl RegroupPlan {
    pub fn rows(&self) -> i64 {
        self.src.len() as i64
    }
    pub fn padded(&self) -> i64 {
        self.pad.iter().filter(|&&p| p).count() as i64
    }
}

/// Frame rows for held rows with groups `groups` (any order) and frame group size `sub`: runs of
/// each group in ascending group order, held order kept within a run (a stable sort), each run
/// padded to a multiple of `sub`, the total to a multiple of 64.
pub fn plan_regroup(groups: &[i64], sub: i64) -> RegroupPlan {
    assert!(!groups.is_empty() && SUBGROUPS.contains(&sub));
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&i| groups[i]); // stable
    let (mut src, mut pad, mut sub_groups) = (Vec::new(), Vec::new(), Vec::new());
    let mut i = 0;
    while i < order.len() {
        let g = groups[order[i]];
        let start = src.len();
        while i < order.len() && groups[order[i]] == g {
            src.push(order[i] as i64);
            pad.push(false);
            i += 1;
        }
        let last = *src.last().unwrap();
        while (src.len() - start) as i64 % sub != 0 {
            src.push(last);
            pad.push(true);
        }
        sub_groups.extend(std::iter::repeat(g).take((src.len() - start) / sub as usize));
    }
    // The total to a multiple of 64 (only sub = 32 can leave 32 over): one more subgroup of
    // the last group.
    let (last, g) = (*src.last().unwrap(), *sub_groups.last().unwrap());
    while src.len() as i64 % K_ALIGN != 0 {
        src.extend(std::iter::repeat(last).take(sub as usize));
        pad.extend(std::iter::repeat(true).take(sub as usize));
        sub_groups.push(g);
    }
    RegroupPlan { sub, src, pad, sub_groups }
}

/// The plan streaming the fewest bytes per output column: q (half a byte per row) plus one
/// scale (2 bytes) and, with zero points, half a byte more per subgroup. Ties: the larger group.
pub fn choose_plan(groups: &[i64], has_zeros: bool) -> RegroupPlan {
    let per_sub = if has_zeros { 2.5 } else { 2.0 };
    let cost = |p: &RegroupPlan| p.rows() as f64 * 0.5 + p.sub_groups.len() as f64 * per_sub;
    let mut best: Option<RegroupPlan> = None;
    for sub in SUBGROUPS.iter().rev() {
        let p = plan_regroup(groups, *sub);
        if best.as_ref().map_or(true, |b| cost(&p) < cost(b)) {
            best = Some(p);
        }
    }
    best.unwrap()
}

/// The K-not-full shard: a rank's held rows -> a [`Layer`] satisfying the shard invariant
/// (`mod.rs`), ready for the ordinary builder.
pub fn regroup(h: HeldRows, shard: &Shard) -> Result<Layer> {
    let k_s = h.groups.size()[0];
    let s = h.scales.size()[0];
    let groups: Vec<i64> = Vec::<i64>::try_from(h.groups.to_device(Device::Cpu).contiguous())
        .map_err(|e| crate::error::Error::Internal(format!("g_idx to host: {e}")))?;
    let want_s = if h.group_size == -1 { 1 } else { k_s * shard.world / h.group_size };
    if s != want_s {
        return Err(arg_err(
            "scales",
            format!("rank {} of {}: {s} group rows", shard.rank, shard.world),
            format!(
                "row-parallel act order keeps every group's scales (and zeros) on every rank: \
                 K / group_size = {k_s} * {} / {} = {want_s} rows (vLLM: marlin_repeat_scales_on_all_ranks)",
                shard.world, h.group_size
            ),
        ));
    }
    if h.group_size != -1 {
        // A group holds group_size rows in the whole layer: a rank cannot hold more.
        let mut counts = vec![0i64; s as usize];
        for &g in &groups {
            counts[g as usize] += 1;
        }
        if let Some((g, &c)) = counts.iter().enumerate().find(|(_, &c)| c > h.group_size) {
            return Err(arg_err(
                "g_idx",
                format!("rank {} of {}: a slice whose group {g} has {c} rows", shard.rank, shard.world),
                format!("every group holds group_size = {} rows of the whole layer, so a rank holds at most that many", h.group_size),
            ));
        }
    }
    let plan = choose_plan(&groups, h.zeros.is_some());
    let meta = FrameMeta::new(plan.rows(), h.n, plan.sub, h.zeros.is_some(), true)?.with_x_cols(k_s)?;

    let dev = h.device;
    let src = Tensor::from_slice(&plan.src).to_device(dev);
    let sub_groups = Tensor::from_slice(&plan.sub_groups).to_device(dev);
    let pad_rows: Vec<i64> = (0..plan.rows()).filter(|&k| plan.pad[k as usize]).collect();
    let pad_rows = Tensor::from_slice(&pad_rows).to_device(dev);
    let perm = match &h.x_col {
        Some(c) => c.index_select(0, &src),
        None => src.shallow_clone(),
    };
    let scales = h.scales.index_select(0, &sub_groups).contiguous();
    let zeros = h.zeros.as_ref().map(|z| z.index_select(0, &sub_groups).contiguous());

    let zq = zeros.as_ref().map(|z| z.shallow_clone());
    let pad_sub = pad_rows.floor_divide_scalar(plan.sub);
    let held_q = h.q;
    let any_pad = !plan.pad.iter().all(|&p| !p);
    Ok(Layer {
        meta,
        scale_kind: h.scale_kind,
        device: dev,
        scales,
        zeros,
        perm: Some(perm),
        q: Box::new(move |n0, nb| {
            let q = held_q(n0, nb).index_select(0, &src);
            if any_pad {
                // Padded rows: q = the subgroup's zero point (8 when symmetric): weight exactly 0.
                let fill = match &zq {
                    Some(z) => z.narrow(1, n0, nb).index_select(0, &pad_sub),
                    None => Tensor::full([pad_sub.size()[0], nb], 8, (Kind::Uint8, q.device())),
                };
                q.index_copy(0, &pad_rows, &fill)
            } else {
                q
            }
        }),
    })
}
