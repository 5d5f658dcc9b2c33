set -u
export MATE_LIBRARY=$PWD/target/n256/libmate.so
mkdir -p $OUT/r
ncu --version | tail -1
timeout 200 ncu --kernel-name regex:mate_bwg --launch-skip 2 --launch-count 1 --section SourceCounters --section WarpStateStats --section SpeedOfLight -o $OUT/r/qkv4096 python3 bench/profile_one.py 4096 6144 4096 > $OUT/r/ncu1.log 2>&1; echo "ncu1 rc=$?"; tail -3 $OUT/r/ncu1.log
ncu -i $OUT/r/qkv4096.ncu-rep --page source --csv --print-source sass > $OUT/r/src.csv 2> $OUT/r/src.err; echo "src rc=$? $(wc -l < $OUT/r/src.csv)"; head -c 600 $OUT/r/src.err
ncu -i $OUT/r/qkv4096.ncu-rep --page details > $OUT/r/details.txt 2>&1
timeout 200 ncu --kernel-name regex:mate_bwg --launch-skip 2 --launch-count 1 --section SourceCounters --section WarpStateStats --section SpeedOfLight -o $OUT/r/o256 python3 bench/profile_one.py 4096 4096 256 > $OUT/r/ncu2.log 2>&1; echo "ncu2 rc=$?"
ncu -i $OUT/r/o256.ncu-rep --page source --csv --print-source sass > $OUT/r/src256.csv 2>/dev/null
ncu -i $OUT/r/o256.ncu-rep --page details > $OUT/r/details256.txt 2>&1
cd $OUT && tar czf r.tgz r && rm -rf r
