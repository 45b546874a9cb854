#!/usr/bin/env bash
# A PostgreSQL cluster for `python -m bench.scale` at 100M audit records, on a machine with less free
# disk than the uncompressed data set (~156 GB; docs/how-to/scaling-out.md, "Database sizing"): its data
# directory on btrfs with zstd compression, in a sparse loop file under /work. Debian's PostgreSQL 15, port
# 5434.
#
#   sudo bash scripts/scale_cluster.sh            # create and start it (idempotent)
#   BENCH_POSTGRES_ADMIN_URL=postgresql+psycopg://postgres@127.0.0.1:5434/postgres \
#     .venv/bin/python -m bench.scale --agents 100000 --memories 10000000 --audit 100000000 --label 100M --jobs 2
#   sudo bash scripts/scale_cluster.sh stop       # stop it, unmount, delete the loop file
#
# Needs root (mount), btrfs in the kernel, and btrfs-progs (installed here). Two things that matter:
# - pg_createcluster marks a data directory on btrfs No_COW (chattr +C) to avoid fragmentation, and
#   btrfs never compresses No_COW files: the data directory is copied into a directory without the flag.
# - The settings below are for building and measuring a large set on a 24 GB machine (shared_buffers
#   4GB), not defaults for production; wal_level minimal because nothing replicates from it, autovacuum
#   off because the benchmark vacuums itself.
set -euo pipefail

IMAGE=${SCALE_IMAGE:-/work/bigpg.img}
MOUNT=${SCALE_MOUNT:-/mnt/bigpg}
PORT=${SCALE_PORT:-5434}
DATA=$MOUNT/data/15

if [[ "${1:-start}" == "stop" ]]; then
    pg_ctlcluster --skip-systemctl-redirect 15 big stop 2>/dev/null || true
    pg_dropcluster 15 big 2>/dev/null || true
    umount "$MOUNT" 2>/dev/null || true
    rm -f "$IMAGE"
    exit 0
fi

command -v mkfs.btrfs >/dev/null || apt-get install -y -q btrfs-progs >/dev/null
mkdir -p "$MOUNT"
if ! mountpoint -q "$MOUNT"; then
    if [[ ! -f "$IMAGE" ]]; then
        truncate -s 400G "$IMAGE" # sparse: takes only what is written, compressed
        mkfs.btrfs -q "$IMAGE"
    fi
    mount -o loop,compress-force=zstd:1,discard,noatime "$IMAGE" "$MOUNT"
fi

if ! pg_lsclusters -h | awk '{print $1"/"$2}' | grep -qx "15/big"; then
    mkdir -p "$MOUNT/data" && chown postgres:postgres "$MOUNT/data"
    pg_createcluster 15 big -d "$DATA" -p "$PORT" -- --auth=trust >/dev/null
    # Copy the fresh cluster into a directory without No_COW, so that every file in it is compressed.
    mkdir "$DATA.compressed" && chattr -C "$DATA.compressed"
    cp -a "$DATA/." "$DATA.compressed/" && rm -rf "$DATA" && mv "$DATA.compressed" "$DATA"
    chown postgres:postgres "$DATA" && chmod 700 "$DATA"
    cat >/etc/postgresql/15/big/conf.d/bench.conf <<'EOF'
listen_addresses = '127.0.0.1'
shared_buffers = 4GB
work_mem = 64MB
maintenance_work_mem = 2GB
max_wal_size = 8GB
checkpoint_timeout = 30min
wal_level = minimal
max_wal_senders = 0
wal_compression = zstd
# bench.scale ends its seeding with VACUUM (ANALYZE); an autovacuum pass over a freshly written
# partition of millions of rows during the build or the timings would be noise.
autovacuum = off
EOF
fi
pg_ctlcluster --skip-systemctl-redirect 15 big start 2>/dev/null || true
pg_isready -h 127.0.0.1 -p "$PORT"
