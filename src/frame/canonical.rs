//! The canonical form every checkpoint convention decodes into, and the nibble readers the
//! conventions share. Nothing here knows the frame's packed layout (that is `pack.rs` alone).
//!
//! Canonical tensors describe columns `[n0, n0 + n)` of one layer, on the checkpoint's device:
//!
//! | field    | dtype        | shape    | content                                                     |
//! |----------|--------------|----------|-------------------------------------------------------------|
//! | `q`      | uint8        | `[K, n]` | `q[k, j]` in 0..=15, rows already in frame order (act order sorted) |
//! | `zeros`  | uint8 / None | `[G, n]` | exact zero points in 0..=15; `None` = symmetric (zero 8)    |
//! | `scales` | fp16 / bf16  | `[G, n]` | scales, group `g` = frame rows `g*G .. (g+1)*G`             |
//!
//! so that `W_frame[k, j] = (q[k, j] - zero[k / G, j]) * scales[k / G, j]`. The act-order
//! permutation is layer-wide and travels beside the columns (see `act_order.rs`).

use tch::{Kind, Tensor};

/// One column block of a layer in canonical form.
pub struct Columns {
    pub q: Tensor,
    pub zeros: Option<Tensor>,
    pub scales: Tensor,
}

/// Nibble order of a word: nibble `j` (bits `4j..4j+3`) holds element `8c + order[j]` of its run.
pub type NibbleOrder = [i64; 8];

/// Sequential: nibble `j` holds element `8c + j` (GPTQ, compressed-tensors, Marlin's `pack_cols`).
pub const SEQUENTIAL: NibbleOrder = [0, 1, 2, 3, 4, 5, 6, 7];
/// AWQ's interleave (AutoAWQ's `order_map`, also the interleave of vLLM's `marlin_zero_points`):
/// nibble `j` holds element `8c + [0, 2, 4, 6, 1, 3, 5, 7][j]`.
pub const AWQ_ORDER: NibbleOrder = [0, 2, 4, 6, 1, 3, 5, 7];

/// Nibble `j` of every word of an int32 tensor, as int32 values 0..=15.
pub fn nibble(words: &Tensor, j: i64) -> Tensor {
    words.bitwise_right_shift_tensor_scalar(4 * j).bitwise_and(15)
}

/// int32 `[R, C]`, 8 nibbles per word along rows (nibble `j` of word `(r, c)` is row `8r + j`)
/// -> uint8 `[8R, C]`.
pub fn unpack_rows(words: &Tensor) -> Tensor {
    let (r, c) = words.size2().expect("unpack_rows: 2-D");
    let out = Tensor::empty([r, 8, c], (Kind::Uint8, words.device()));
    for j in 0..8 {
        out.select(1, j).copy_(&nibble(words, j));
    }
    out.view([8 * r, c])
}

/// int32 `[R, C]`, 8 nibbles per word along columns in `order` -> uint8 `[R, 8C]`
/// (nibble `j` of word `(r, c)` is column `8c + order[j]`).
pub fn unpack_cols(words: &Tensor, order: &NibbleOrder) -> Tensor {
    let (r, c) = words.size2().expect("unpack_cols: 2-D");
    let out = Tensor::empty([r, c, 8], (Kind::Uint8, words.device()));
    for (j, &pos) in order.iter().enumerate() {
        out.select(2, pos).copy_(&nibble(words, j as i64));
    }
    out.view([r, 8 * c])
}

/// The inverse of a permutation given as a list (`inv[p[i]] = i`).
pub fn invert(p: &[i64]) -> Vec<i64> {
    let mut inv = vec![0i64; p.len()];
    for (i, &v) in p.iter().enumerate() {
        inv[v as usize] = i as i64;
    }
    inv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpack_rows_and_cols_read_the_documented_nibbles() {
        // word = 0x76543210 + sign bit set in the top nibble: 0xF6543210.
        let w = Tensor::from_slice(&[0xF654_3210u32 as i32, 0x0000_0001]).view([1, 2]);
        let rows = unpack_rows(&w);
        assert_eq!(rows.size(), [8, 2]);
        let col0: Vec<u8> = Vec::<u8>::try_from(rows.select(1, 0).contiguous()).unwrap();
        assert_eq!(col0, [0, 1, 2, 3, 4, 5, 6, 15]);
        let cols = unpack_cols(&w, &SEQUENTIAL);
        let row: Vec<u8> = Vec::<u8>::try_from(cols.view([-1])).unwrap();
        assert_eq!(&row[..8], &[0, 1, 2, 3, 4, 5, 6, 15]);
        assert_eq!(&row[8..], &[1, 0, 0, 0, 0, 0, 0, 0]);
        let awq = unpack_cols(&w, &AWQ_ORDER);
        let row: Vec<u8> = Vec::<u8>::try_from(awq.view([-1])).unwrap();
        // nibble j lands at column AWQ_ORDER[j]: nibble 1 (value 1) at column 2, nibble 4 at 1.
        assert_eq!(&row[..8], &[0, 4, 1, 5, 2, 6, 3, 15]);
    }

    #[test]
    fn invert_is_an_inverse() {
        let p = [3i64, 0, 2, 1];
        let inv = invert(&p);
        for i in 0..4 {
            assert_eq!(inv[p[i] as usize], i as i64);
        }
    }
}
