set -u
# Session 61: _s61a.sh's H200 branch only (an H100 exits at once: its standing is not the issues').
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "GPU: $gpu"
echo "$gpu" | grep -q H200 || exit 3
bash bench/lab/_s61a.sh
