//! Tensor-parallel shards from Rust (CPU tensors through tch): the K-not-full regrouping
//! (`src/frame/shard.rs`) against its invariant (`src/frame/mod.rs`), a built shard frame against
//! an independent float64 dequantization of the rank's rows, and the split rules' messages.

use mate::frame::build_guards::Input;
use mate::frame::builder::build;
use mate::frame::canonical::{unpack_cols, unpack_rows, SEQUENTIAL};
use mate::frame::conventions::gptq;
use mate::frame::shard::{choose_plan, plan_regroup, regroup, Shard, Style, SUBGROUPS};
use mate::frame::unpack_qweight;
use tch::{Device, Kind, Tensor};

fn input(name: &'static str, t: Tensor) -> Input {
    let dtype = match t.kind() {
        Kind::Int => 3,
        Kind::Int64 => 4,
        Kind::Half => 5,
        Kind::BFloat16 => 15,
        k => panic!("{k:?}"),
    };
    Input { name, t, dtype, device_type: 0, device_index: -1 }
}

/// A deterministic pseudo-random generator (no extra crate): xorshift64*.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A random act-order g_idx of a K-row layer with groups of `g` rows (a shuffled `k / g`).
fn random_g_idx(rng: &mut Rng, k: usize, g: usize) -> Vec<i64> {
    let mut v: Vec<i64> = (0..k).map(|i| (i / g) as i64).collect();
    for i in (1..k).rev() {
        let j = rng.below(i + 1);
        v.swap(i, j);
    }
    v
}

#[test]
fn regroup_plan_satisfies_the_shard_invariant() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for (k, g, world) in [(1024, 128, 2), (1024, 128, 4), (2048, 128, 8), (512, 32, 4), (768, 64, 3), (256, 256, 2)] {
        let full = random_g_idx(&mut rng, k, g);
        let ks = k / world;
        for rank in 0..world {
            let held = &full[rank * ks..(rank + 1) * ks];
            for sub in SUBGROUPS {
                let p = plan_regroup(held, sub);
                assert_eq!(p.rows() % 64, 0, "total rows a multiple of 64");
                assert_eq!(p.rows() as usize, p.sub_groups.len() * sub as usize);
                // Every held row exactly once among the real rows.
                let mut seen = vec![0; ks];
                for (r, &s) in p.src.iter().enumerate() {
                    if !p.pad[r] {
                        seen[s as usize] += 1;
                    }
                }
                assert!(seen.iter().all(|&c| c == 1));
                assert_eq!(p.padded(), p.rows() - ks as i64);
                // Frame row r is in subgroup r / sub, which copies the group its real rows hold.
                for (r, &s) in p.src.iter().enumerate() {
                    assert!((s as usize) < ks);
                    if !p.pad[r] {
                        assert_eq!(p.sub_groups[r / sub as usize], held[s as usize]);
                    }
                }
                // Groups ascending, held order kept within a group (a stable sort).
                let real: Vec<i64> = p.src.iter().zip(&p.pad).filter(|(_, &d)| !d).map(|(&s, _)| s).collect();
                for w in real.windows(2) {
                    let (a, b) = (held[w[0] as usize], held[w[1] as usize]);
                    assert!(a < b || (a == b && w[0] < w[1]));
                }
            }
        }
    }
}

#[test]
fn whole_groups_choose_the_layer_group_and_add_nothing() {
    // A rank holding whole groups of 128 (in any order): group 128, no padding.
    let mut held: Vec<i64> = (0..512).map(|i| 3 + i / 128).collect();
    held.reverse();
    let p = choose_plan(&held, true);
    assert_eq!((p.sub, p.padded(), p.rows()), (128, 0, 512));
    // A random slice pads less with 32-row subgroups than with 128.
    let mut rng = Rng(7);
    let full = random_g_idx(&mut rng, 4096, 128);
    let held = &full[..1024];
    let p = choose_plan(held, false);
    assert_eq!(p.sub, 32);
    assert!(p.padded() < plan_regroup(held, 128).padded());
}

/// The rank's effective weights from a built shard frame, summed per x column in float64:
/// `M[c, n] = sum over frame rows k with perm[k] = c of (q - z) * s`.
fn frame_weights_per_x_column(f: &mate::frame::pack::Frame) -> Tensor {
    let (k, n, g) = (f.meta.k, f.meta.n, f.meta.group());
    let words: Vec<i32> = Vec::<i32>::try_from(f.qweight.reshape([-1])).unwrap();
    let q = Tensor::from_slice(&unpack_qweight(&words, k as usize, n as usize)).view([k, n]).to_kind(Kind::Double);
    let rows_group = Tensor::arange(k, (Kind::Int64, Device::Cpu)).floor_divide_scalar(g);
    let s = f.scales.to_kind(Kind::Double).index_select(0, &rows_group);
    let z = match &f.zeros {
        Some(z) => unpack_cols(z, &SEQUENTIAL).to_kind(Kind::Double).index_select(0, &rows_group),
        None => Tensor::full([k, n], 8.0, (Kind::Double, Device::Cpu)),
    };
    let w = (q - z) * s;
    let perm = f.perm.as_ref().unwrap().to_kind(Kind::Int64);
    Tensor::zeros([f.meta.x_cols, n], (Kind::Double, Device::Cpu)).index_add(0, &perm, &w)
}

#[test]
fn gptq_k_not_full_frame_equals_the_ranks_rows() {
    let mut rng = Rng(42);
    let (k, n, g) = (1024i64, 128i64, 128i64);
    let qw = Tensor::randint_low(i32::MIN as i64, i32::MAX as i64, [k / 8, n], (Kind::Int, Device::Cpu));
    let s = (Tensor::rand([k / g, n], (Kind::Float, Device::Cpu)) * 0.02 + 0.002).to_kind(Kind::Half);
    let z = Tensor::randint_low(i32::MIN as i64, i32::MAX as i64, [k / g, n / 8], (Kind::Int, Device::Cpu));
    let gi = Tensor::from_slice(&random_g_idx(&mut rng, k as usize, g as usize));
    for world in [2i64, 4, 8] {
        let ks = k / world;
        for rank in [0, world - 1] {
            let shard = Shard { style: Style::Row, rank, world };
            let rows = qw.narrow(0, rank * ks / 8, ks / 8);
            let held = gptq::held_rows(
                input("qweight", rows.shallow_clone()),
                input("scales", s.shallow_clone()),
                Some(input("qzeros", z.shallow_clone())),
                Some(input("g_idx", gi.narrow(0, rank * ks, ks).to_kind(Kind::Int))),
                g,
                false,
                gptq::Format::V2,
            )
            .unwrap();
            let f = build(regroup(held, &shard).unwrap()).unwrap();
            assert_eq!(f.meta.x_cols, ks);
            assert!(f.meta.k >= ks && f.meta.k % 64 == 0);
            // Independent: the checkpoint's rows of this rank, W[k, n] = (q - z[g_idx[k]]) * s[g_idx[k]].
            let grp = gi.narrow(0, rank * ks, ks);
            let want = (unpack_rows(&rows).to_kind(Kind::Double)
                - unpack_cols(&z, &SEQUENTIAL).to_kind(Kind::Double).index_select(0, &grp))
                * s.to_kind(Kind::Double).index_select(0, &grp);
            let got = frame_weights_per_x_column(&f);
            assert!(got.equal(&want), "world {world} rank {rank}: the shard frame's weights differ");
        }
    }
}

#[test]
fn k_not_full_refuses_an_overfull_group_and_partial_scales() {
    let (ks, n) = (128i64, 64i64);
    let shard = Shard { style: Style::Row, rank: 1, world: 2 };
    let held = |g: Tensor, srows: i64| {
        gptq::held_rows(
            input("qweight", Tensor::zeros([ks / 8, n], (Kind::Int, Device::Cpu))),
            input("scales", Tensor::ones([srows, n], (Kind::Half, Device::Cpu))),
            None,
            Some(input("g_idx", g)),
            64,
            true,
            gptq::Format::V2,
        )
        .unwrap()
    };
    // 128 rows of a K = 256 layer with group 64: scales must have 4 rows; group 0 cannot hold 65.
    let over = Tensor::cat(&[Tensor::zeros([65], (Kind::Int64, Device::Cpu)), Tensor::ones([63], (Kind::Int64, Device::Cpu))], 0);
    let e = regroup(held(over, 4), &shard).err().unwrap().to_string();
    assert!(e.contains("rank 1 of 2") && e.contains("group 0 has 65 rows") && e.contains("group_size = 64"), "{e}");
    let two = Tensor::arange(ks, (Kind::Int64, Device::Cpu)).remainder(2);
    let e = regroup(held(two, 2), &shard).err().unwrap().to_string();
    assert!(e.contains("`scales`") && e.contains("every group's scales") && e.contains("= 4 rows"), "{e}");
    let ok = Tensor::arange(ks, (Kind::Int64, Device::Cpu)).remainder(4);
    assert!(regroup(held(ok, 4), &shard).is_ok());
}

#[test]
fn split_rules_name_rank_split_and_rule() {
    let s = Shard::parse("row", 3, 4).unwrap().unwrap();
    let e = s.check(96, 128, 32, false).unwrap_err().to_string();
    assert!(e.contains("rank 3 of 4") && e.contains("split of 96") && e.contains("lcm(group_size 32, 64) = 64"), "{e}");
    let e = s.check(192, 128, 128, false).unwrap_err().to_string();
    assert!(e.contains("split of 192") && e.contains("= 128"), "{e}");
    assert!(s.check(256, 128, 128, false).is_ok());
    assert!(s.check(64, 128, -1, false).is_ok());
    assert!(s.check(200, 128, 128, true).is_ok(), "act order: multiples of 8 only");
    let e = s.check(100, 128, 128, true).unwrap_err().to_string();
    assert!(e.contains("act-order split of 100") && e.contains("multiple of 8"), "{e}");
    let c = Shard::parse("column", 0, 8).unwrap().unwrap();
    let e = c.check(4096, 96, 128, true).unwrap_err().to_string();
    assert!(e.contains("rank 0 of 8") && e.contains("column-parallel (N) split of 96") && e.contains("multiple of 64"), "{e}");
    assert!(Shard::parse("", 0, 1).unwrap().is_none());
    assert!(Shard::parse("", 1, 2).unwrap_err().to_string().contains("shard=\"column\" or \"row\""));
    assert!(Shard::parse("diagonal", 0, 2).unwrap_err().to_string().contains("\"column\""));
    assert!(Shard::parse("row", 2, 2).unwrap_err().to_string().contains("0 <= rank < world"));
}
