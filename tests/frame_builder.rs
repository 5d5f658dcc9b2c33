//! The frame builder from Rust (CPU tensors through tch): conventions -> canonical -> pack, the
//! block split, act order and the value rules. The Python suite (tests/python/test_frame_*.py)
//! covers every convention end to end through the GEMM op.

use mate::frame::build_guards::Input;
use mate::frame::builder::{block_columns, build, BLOCK_ELEMS};
use mate::frame::canonical::unpack_rows;
use mate::frame::conventions::{gptq, marlin};
use mate::frame::pack::{Frame, COLUMN_QUANTUM};
use mate::frame::unpack_qweight;
use tch::{Device, Kind, Tensor};

/// The frame's q as uint8 `[K, N]`, read with mod.rs's scalar definition of the layout.
fn frame_q(f: &Frame) -> Tensor {
    let (k, n) = (f.meta.k, f.meta.n);
    let words: Vec<i32> = Vec::<i32>::try_from(f.qweight.reshape([-1])).unwrap();
    Tensor::from_slice(&unpack_qweight(&words, k as usize, n as usize)).view([k, n])
}

fn input(name: &'static str, t: Tensor) -> Input {
    let dtype = match t.kind() {
        Kind::Int => 3,
        Kind::Int64 => 4,
        Kind::Half => 5,
        Kind::Float => 6,
        Kind::BFloat16 => 15,
        Kind::Uint8 => 0,
        k => panic!("{k:?}"),
    };
    Input { name, t, dtype, device_type: 0, device_index: -1 }
}

fn words(rows: i64, cols: i64) -> Tensor {
    Tensor::randint_low(i32::MIN as i64, i32::MAX as i64, [rows, cols], (Kind::Int, Device::Cpu))
}

#[test]
fn block_columns_are_quanta_and_bound_the_temporaries() {
    for (k, n) in [(64, 64), (4096, 2048), (8192, 57344), (28672, 8192), (64, 1 << 20)] {
        let b = block_columns(k, n);
        assert_eq!(b % COLUMN_QUANTUM, 0, "{k}x{n}");
        assert!(b >= COLUMN_QUANTUM && b <= n.max(COLUMN_QUANTUM));
        assert!(b == COLUMN_QUANTUM || k * b <= BLOCK_ELEMS, "{k}x{n}: {b}");
    }
    assert!(block_columns(8192, 57344) < 57344, "a large layer is built in several blocks");
}

#[test]
fn gptq_plain_frame_holds_the_checkpoint_values_across_blocks() {
    // 4096 x 2112: blocks of 1024, 1024 and 64 columns.
    let (k, n) = (4096i64, 2112i64);
    let qw = words(k / 8, n);
    let s = Tensor::rand([k / 128, n], (Kind::Half, Device::Cpu));
    let layer = gptq::layer(input("qweight", qw.shallow_clone()), input("scales", s.shallow_clone()), None, None, 128, true, false, gptq::Format::V2)
        .unwrap();
    let f = build(layer).unwrap();
    assert!(frame_q(&f).equal(&unpack_rows(&qw)));
    assert!(f.scales.equal(&s));
    assert!(f.zeros.is_none() && f.perm.is_none());
    assert_eq!(f.meta.encode()[1..4], [k, n, 128]);
}

#[test]
fn act_order_sorts_rows_stably_and_keeps_the_permutation() {
    let (k, n, g) = (256i64, 64i64, 64i64);
    let qw = words(k / 8, n);
    let s = Tensor::rand([k / g, n], (Kind::Half, Device::Cpu));
    let gi = Tensor::arange(k, (Kind::Int64, Device::Cpu)).floor_divide_scalar(g).index_select(0, &Tensor::randperm(k, (Kind::Int64, Device::Cpu)));
    let layer = gptq::layer(
        input("qweight", qw.shallow_clone()),
        input("scales", s),
        None,
        Some(input("g_idx", gi.to_kind(Kind::Int))),
        g,
        true,
        true,
        gptq::Format::V1,
    )
    .unwrap();
    let f = build(layer).unwrap();
    let perm = f.perm.as_ref().unwrap();
    assert_eq!(perm.kind(), Kind::Int);
    let order = gi.argsort_stable(true, 0, false);
    assert!(perm.to_kind(Kind::Int64).equal(&order));
    assert!(frame_q(&f).equal(&unpack_rows(&qw).index_select(0, &order)));
    // Sorted by group: frame row k is in group k / G.
    let sorted = gi.index_select(0, &order);
    assert!(sorted.equal(&Tensor::arange(k, (Kind::Int64, Device::Cpu)).floor_divide_scalar(g)));
}

#[test]
fn g_idx_with_uneven_groups_is_refused_naming_the_rule() {
    let (k, n, g) = (256i64, 64i64, 64i64);
    let gi = Tensor::arange(k, (Kind::Int64, Device::Cpu)).floor_divide_scalar(g).clamp(0, 2); // group 2 has 128 rows
    let err = gptq::layer(
        input("qweight", words(k / 8, n)),
        input("scales", Tensor::rand([k / g, n], (Kind::Half, Device::Cpu))),
        None,
        Some(input("g_idx", gi)),
        g,
        true,
        true,
        gptq::Format::V2,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("`g_idx`") && err.contains("group 2 has 128 rows") && err.contains("contiguous runs"), "{err}");
}

#[test]
fn marlin_tile_map_reads_the_repack_of_a_known_tile() {
    // One 16 x 64 tile whose value at (r, c) is (r + c) % 16, repacked by the kernel's arithmetic
    // (written out independently here, thread by thread), must read back through the builder.
    let (k, n) = (64i64, 64i64);
    let q = |r: i64, c: i64| (r * 3 + c * 5 + (r / 16)) % 16;
    let mut out = vec![0u32; (k / 16 * 2 * n) as usize];
    for kt in 0..k / 16 {
        for th in 0..32i64 {
            for w in 0..4i64 {
                let (tc_col, tc_row) = (th / 4, (th % 4) * 2);
                let cur_n = w * 16 + tc_col;
                let mut vals = [0u32; 8];
                for (i, off) in [0i64, 1, 8, 9].into_iter().enumerate() {
                    vals[i] = q(kt * 16 + tc_row + off, cur_n) as u32;
                    vals[4 + i] = q(kt * 16 + tc_row + off, cur_n + 8) as u32;
                }
                let mut res = 0u32;
                for (i, p) in [0usize, 2, 4, 6, 1, 3, 5, 7].into_iter().enumerate() {
                    res |= vals[p] << (4 * i);
                }
                out[(kt * 128 + th * 4 + w) as usize] = res;
            }
        }
    }
    let words: Vec<i32> = out.iter().map(|&v| v as i32).collect();
    let qw = Tensor::from_slice(&words).view([k / 16, 2 * n]);
    let s = Tensor::ones([1, n], (Kind::Half, Device::Cpu));
    let layer = marlin::layer(input("qweight", qw), input("scales", s), None, None, None, -1, true, false, "").unwrap();
    let f = build(layer).unwrap();
    let got = frame_q(&f);
    for r in 0..k {
        for c in 0..n {
            assert_eq!(got.int64_value(&[r, c]), q(r, c), "({r}, {c})");
        }
    }
}
