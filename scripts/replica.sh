#!/usr/bin/env bash
# A local streaming replica of the PostgreSQL on 127.0.0.1:5432, answering read-only on 127.0.0.1:5433:
# a second cluster of the same version (pg_createcluster), filled by pg_basebackup and following the
# primary by streaming replication. Used by the replica tests (tests/test_replica.py) and for trying
# DATABASE_REPLICA_URL by hand. Idempotent: does nothing when the replica already answers.
set -euo pipefail

PORT=${REPLICA_PORT:-5433}
replica_up() { pg_isready -q -h 127.0.0.1 -p "$PORT" 2>/dev/null; }
replica_up && exit 0

VERSION=$(ls /etc/postgresql | head -n1)
DATA=/var/lib/postgresql/$VERSION/replica
HBA=/etc/postgresql/$VERSION/main/pg_hba.conf
as_postgres() { runuser -u postgres -- "$@"; }

# The primary must accept replication connections from loopback (trust, like every other loopback login here).
if ! grep -Eq '^host[[:space:]]+replication[[:space:]]+all[[:space:]]+127\.0\.0\.1/32' "$HBA"; then
  echo "host replication all 127.0.0.1/32 trust" >> "$HBA"
  pg_ctlcluster --skip-systemctl-redirect "$VERSION" main reload
fi

if [ ! -f "$DATA/standby.signal" ]; then
  echo "replica: creating cluster $VERSION/replica on port $PORT" >&2
  pg_lsclusters -h | awk '{print $2}' | grep -qx replica || pg_createcluster "$VERSION" replica --port "$PORT" >/dev/null
  rm -rf "$DATA" && mkdir -p "$DATA" && chown postgres:postgres "$DATA" && chmod 700 "$DATA"
  cp "$HBA" "/etc/postgresql/$VERSION/replica/pg_hba.conf"  # the same loopback logins as the primary
  as_postgres pg_basebackup -h 127.0.0.1 -p 5432 -U postgres -D "$DATA" -R -X stream -c fast
fi
pg_ctlcluster --skip-systemctl-redirect "$VERSION" replica start
for _ in $(seq 1 50); do replica_up && break; sleep 0.2; done
replica_up || { echo "replica: PostgreSQL replica is not answering on 127.0.0.1:$PORT" >&2; exit 1; }
