#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the Postgres store's tests:
#
#   eval "$(bash scripts/pg.sh start DIR)"   # installs PostgreSQL when missing, starts a cluster
#                                              # in DIR on a unix socket, exports SURFACE_PG_URL
#   bash scripts/pg.sh stop DIR
#
# The cluster runs as an unprivileged user (postgres when run as root),
# listens on no TCP port, trusts local connections, and lives only in DIR.
set -euo pipefail
cmd=${1:?start or stop}
dir=${2:?directory}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
port=${SURFACE_PG_PORT:-54329}

bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case "$cmd" in
start)
  if [ -z "$(bindir)" ]; then
    echo "installing PostgreSQL (Debian packages)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  fi
  bin=$(bindir)
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
  as_owner "$bin/initdb" -D "$dir/data" -U surface --auth=trust -E UTF8 >/dev/null
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
    -o "-k $dir -c listen_addresses='' -p $port -c fsync=on -c synchronous_commit=on" start >/dev/null
  as_owner "$bin/createdb" -h "$dir" -p "$port" -U surface surface
  echo "export SURFACE_PG_URL='postgres://surface@/surface?host=$dir&port=$port&sslmode=disable'"
  ;;
stop)
  as_owner "$(bindir)/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null || true
  ;;
*)
  echo "usage: pg.sh start|stop DIR" >&2; exit 2 ;;
esac
