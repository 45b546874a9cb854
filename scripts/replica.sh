#!/usr/bin/env bash
# A local streaming replica of the PostgreSQL on 127.0.0.1:5432, answering read-only on 127.0.0.1:5433:
# a second cluster of the same version (pg_createcluster), filled by pg_basebackup and following the
# primary by streaming replication. Used by the replica tests (tests/models/retrieval/test_replica.py) and for trying
# DATABASE_REPLICA_URL by hand. Idempotent: does nothing when the replica already streams. A replica that
# was stopped for long can no longer catch up (no replication slot keeps WAL for it, so a forgotten
# replica can never fill the primary's disk): it is rebuilt from a fresh base backup.
set -euo pipefail

PORT=${REPLICA_PORT:-5433}
VERSION=$(ls /etc/postgresql | head -n1)
DATA=/var/lib/postgresql/$VERSION/replica
HBA=/etc/postgresql/$VERSION/main/pg_hba.conf
as_postgres() { runuser -u postgres -- "$@"; }
replica_up() { pg_isready -q -h 127.0.0.1 -p "$PORT" 2>/dev/null; }
streaming() {
  [ "$(psql -h 127.0.0.1 -p 5432 -U postgres -tAc "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'" 2>/dev/null || echo 0)" -ge 1 ]
}
wait_streaming() {
  for _ in $(seq 1 "$1"); do streaming && return 0; sleep 0.5; done
  return 1
}

start_replica() {
  pg_ctlcluster --skip-systemctl-redirect "$VERSION" replica start || return 1
  for _ in $(seq 1 50); do replica_up && return 0; sleep 0.2; done
  return 1
}
stop_replica() { pg_ctlcluster --skip-systemctl-redirect "$VERSION" replica stop 2>/dev/null || true; }

# An existing replica, running or stopped: keep it if it streams.
if replica_up || { [ -f "$DATA/standby.signal" ] && start_replica; }; then
  wait_streaming 20 && exit 0
  echo "replica: 127.0.0.1:$PORT cannot follow the primary; rebuilding it" >&2
  stop_replica
fi

# The primary must accept replication connections from loopback (trust, like every other loopback login here).
if ! grep -Eq '^host[[:space:]]+replication[[:space:]]+all[[:space:]]+127\.0\.0\.1/32' "$HBA"; then
  echo "host replication all 127.0.0.1/32 trust" >> "$HBA"
  pg_ctlcluster --skip-systemctl-redirect "$VERSION" main reload
fi

echo "replica: creating cluster $VERSION/replica on port $PORT from a base backup" >&2
pg_lsclusters -h | awk '{print $2}' | grep -qx replica || pg_createcluster "$VERSION" replica --port "$PORT" >/dev/null
cp "$HBA" "/etc/postgresql/$VERSION/replica/pg_hba.conf"  # the same loopback logins as the primary
rm -rf "$DATA" && mkdir -p "$DATA" && chown postgres:postgres "$DATA" && chmod 700 "$DATA"
as_postgres pg_basebackup -h 127.0.0.1 -p 5432 -U postgres -D "$DATA" -R -X stream -c fast
start_replica || { echo "replica: PostgreSQL replica is not answering on 127.0.0.1:$PORT" >&2; exit 1; }
wait_streaming 60 || { echo "replica: 127.0.0.1:$PORT does not stream from the primary" >&2; exit 1; }
