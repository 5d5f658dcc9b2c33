//! Act order (`desc_act`): the K rows are sorted by their group (`g_idx`, stable), the frame keeps
//! the permutation, and the GEMM gathers the activation with it, so
//! `x[:, perm] @ W[perm] == x @ W`. A `g_idx` is servable only when, sorted, its groups are
//! contiguous runs of `group_size` rows (then frame row `k` is in group `k / G`, as every other
//! frame). Read only when the quantization config says act order.

use tch::{Kind, Tensor};

use super::build_guards::{first_true, in_range, index_vector, permutation, Input};
use super::FrameMeta;
use crate::error::{arg_err, Result};

const RUN_RULE: &str = "sorted by group, the rows must form contiguous runs of exactly group_size rows \
                        (every group holds group_size rows)";

/// Checks a checkpoint `g_idx` ([K], group of each checkpoint row) and returns the stable sort
/// permutation (int64 `[K]`): frame row `k` is checkpoint row `perm[k]`.
pub fn perm_from_g_idx(g_idx: &Input, meta: &FrameMeta) -> Result<Tensor> {
    let g = index_vector(g_idx, meta.k, "[K]: the group of each input row")?;
    check_groups(g_idx.name, &g, meta)?;
    Ok(g.argsort_stable(true, 0, false))
}

/// Every group id in range, and every group holding exactly G rows.
fn check_groups(name: &'static str, g: &Tensor, meta: &FrameMeta) -> Result<()> {
    let groups = meta.groups();
    in_range(name, g, groups, &format!("group indices of a K = {} layer with group_size {}", meta.k, meta.group_size))?;
    let counts = g.bincount::<Tensor>(None, groups);
    if let Some(bad) = first_true(&counts.ne(meta.group())) {
        let c = counts.int64_value(&[bad]);
        return Err(arg_err(
            name,
            format!("a g_idx whose group {bad} has {c} rows"),
            format!("{RUN_RULE}; group_size = {}", meta.group()),
        ));
    }
    Ok(())
}

/// For layers whose rows are already sorted (vLLM's Marlin path: `marlin_sort_g_idx` returned
/// the sorted `g_idx` and `g_idx_sort_indices`, and `gptq_marlin_repack` applied the latter):
/// checks both and returns the permutation as int64.
pub fn check_sorted(g_idx_sorted: &Input, perm: &Input, meta: &FrameMeta) -> Result<Tensor> {
    let p = index_vector(perm, meta.k, "[K]: g_idx_sort_indices")?;
    permutation(perm.name, &p, meta.k)?;
    let g = index_vector(g_idx_sorted, meta.k, "[K]: the sorted g_idx")?;
    check_groups(g_idx_sorted.name, &g, meta)?;
    // With exactly G rows per group, sorted order means row k is in group k / G.
    let want = Tensor::arange(meta.k, (Kind::Int64, g.device())).floor_divide_scalar(meta.group());
    if let Some(i) = first_true(&g.ne_tensor(&want)) {
        return Err(arg_err(
            g_idx_sorted.name,
            format!("g_idx[{i}] = {}", g.int64_value(&[i])),
            format!(
                "must be sorted (the g_idx marlin_sort_g_idx returns, matching rows repacked with perm): \
                 row {i} belongs to group {}",
                i / meta.group()
            ),
        ));
    }
    Ok(p)
}
