set -u
mkdir -p $OUT/r
A=$PWD/target/s21a/libmate.so; G=$PWD/target/s21g/libmate.so
(MATE_LIBRARY=$G timeout 150 python3 -m pytest -q -m gpu tests/python/test_split_sliced.py tests/python/test_gpu_matrix.py tests/python/test_launch_log.py -k "sliced or bwg_variants or every_variant or launch" -p no:cacheprovider > $OUT/r/tests.log 2>&1; echo "tests rc=$?"); tail -2 $OUT/r/tests.log
S=qwen1.5b.down,llama8b.down,llama8b.o
for r in 1 2; do
  for L in A G; do
    [ $r = 2 ] && L=$([ $L = A ] && echo G || echo A)
    lib=$([ $L = A ] && echo $A || echo $G)
    python3 bench/decode.py --library $lib --arms read,mate --shapes $S --m 16,24,32,48,64 --json $OUT/r/d_${L}_$r.json > $OUT/r/d_${L}_$r.log 2>&1; echo "d $L r$r rc=$?"
  done
done
for L in A G G A; do
  lib=$([ $L = A ] && echo $A || echo $G)
  python3 bench/decode_step.py --library $lib --m 32,64 --rounds 2 --json $OUT/r/s_${L}_$RANDOM.json > $OUT/r/s_$L.log 2>&1; echo "s $L rc=$?"
done
python3 - <<'PY'
import json,glob,os,collections
out=os.environ['OUT']+'/r'
t=collections.defaultdict(list); plan={}
for f in sorted(glob.glob(out+'/d_*.json')):
    L=os.path.basename(f).split('_')[1]
    for r in json.load(open(f))['rows']:
        if 'median_us' in r['mate']:
            t[(r['shape'],r['M'],L)].append(r['mate']['median_us'])
            if L=='G': plan[(r['shape'],r['M'])]=r['mate']['plan'][0].split()[0][12:]+' '+r['mate']['plan'][0].split()[5]
for (s,m),p in sorted(plan.items()):
    a=t[(s,m,'A')]; c=t[(s,m,'G')]
    if a and c: print(f"{s:16s} M={m:3d} A {sum(a)/len(a):7.2f} G/A {sum(c)/sum(a):.3f}  A {min(a):.2f}-{max(a):.2f} G {min(c):.2f}-{max(c):.2f} {p}")
st=collections.defaultdict(list)
for f in sorted(glob.glob(out+'/s_*.json')):
    L=os.path.basename(f).split('_')[1]
    for r in json.load(open(f))['rows']:
        st[(r['model'],r['M'],L)].append(round(r['steps']['mate']['median_us'],1))
for k in sorted(set(k[:2] for k in st)):
    print('step',k,'A',st[k+('A',)],'G',st[k+('G',)])
PY
(MATE_LIBRARY=$G PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 100 compute-sanitizer --tool racecheck python3 bench/lab/racecheck_wrap.py mate_bwg_f16_sym_m32_n128_ring_sl@16384 mate_bwg_bf16_zp_m64_n128_split_pre_sl@4096 > $OUT/r/race.log 2>&1; echo "race rc=$?"); grep -h "err\|RACECHECK" $OUT/r/race.log | tail -3
cd $OUT && tar czf r.tgz r && rm -rf r
