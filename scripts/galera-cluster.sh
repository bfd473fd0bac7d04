#!/usr/bin/env bash
# A three-node MariaDB Galera cluster on 127.0.0.1 for the scale-out test (Debian's galera-4 with the installed
# MariaDB): nodes on MySQL ports 4401-4403, each with its own data directory under $GALERA_DIR.
#
#   scripts/galera-cluster.sh start   # prints GALERA_URLS=mysql://root@127.0.0.1:4401/test,... when all three are synced
#   scripts/galera-cluster.sh stop    # stops the nodes and removes their data
set -euo pipefail

GALERA_DIR="${GALERA_DIR:-/tmp/fq-galera}"
PROVIDER="${GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}"
NODES=(1 2 3)
# Not root: run as root, the rsync daemon of a state transfer drops to nobody and cannot write the data.
RUN_AS="${GALERA_USER:-mysql}"

mysql_port() { echo $((4400 + $1)); }
group_port() { echo $((4570 + $1)); }
cluster_address() {
  local members=()
  for node in "${NODES[@]}"; do members+=("127.0.0.1:$(group_port "$node")"); done
  (IFS=,; echo "gcomm://${members[*]}")
}

write_config() {
  local node=$1 dir="$GALERA_DIR/node$1"
  cat >"$dir/my.cnf" <<EOF
[mariadbd]
user=$RUN_AS
datadir=$dir/data
socket=$dir/mariadbd.sock
pid-file=$dir/mariadbd.pid
log-error=$dir/error.log
bind-address=127.0.0.1
port=$(mysql_port "$node")
innodb_buffer_pool_size=64M
binlog_format=ROW
default_storage_engine=InnoDB
innodb_autoinc_lock_mode=2
character_set_server=utf8mb4
collation_server=utf8mb4_bin
wsrep_on=ON
wsrep_provider=$PROVIDER
wsrep_cluster_name=feathers_query_test
wsrep_cluster_address=$(cluster_address)
wsrep_node_name=node$node
wsrep_node_address=127.0.0.1:$(group_port "$node")
wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:$(group_port "$node");ist.recv_addr=127.0.0.1:$((4580 + node))"
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:$((4590 + node))
# A read waits until the node has applied what other nodes committed before it: reads after writes agree.
wsrep_sync_wait=1
EOF
}

sql() { mariadb --socket="$GALERA_DIR/node$1/mariadbd.sock" -uroot -N -B -e "$2" 2>/dev/null; }

wait_synced() {
  local node=$1
  for _ in $(seq 1 120); do
    [ "$(sql "$node" "SHOW STATUS LIKE 'wsrep_local_state_comment'" | cut -f2)" = "Synced" ] && return 0
    sleep 1
  done
  echo "node$node did not reach Synced; see $GALERA_DIR/node$node/error.log" >&2
  return 1
}

start() {
  mkdir -p "$GALERA_DIR"
  for node in "${NODES[@]}"; do
    local dir="$GALERA_DIR/node$node"
    mkdir -p "$dir"
    write_config "$node"
    if [ ! -d "$dir/data/mysql" ]; then
      # Only the first node needs system tables; the others receive everything by state transfer.
      if [ "$node" = 1 ]; then
        mariadb-install-db --defaults-file="$dir/my.cnf" --auth-root-authentication-method=normal >"$dir/install.log" 2>&1
      else
        mkdir -p "$dir/data"
      fi
    fi
  done
  chown -R "$RUN_AS" "$GALERA_DIR"
  # The first node starts a new cluster; the others join it one after the other.
  for node in "${NODES[@]}"; do
    local extra=()
    [ "$node" = 1 ] && extra=(--wsrep-new-cluster)
    # setsid: the node outlives this script and the shell that ran it.
    setsid mariadbd --defaults-file="$GALERA_DIR/node$node/my.cnf" "${extra[@]}" >/dev/null 2>&1 &
    wait_synced "$node"
  done
  sql 1 "CREATE DATABASE IF NOT EXISTS test; CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION"
  local urls=()
  for node in "${NODES[@]}"; do urls+=("mysql://root@127.0.0.1:$(mysql_port "$node")/test"); done
  (IFS=,; echo "GALERA_URLS=${urls[*]}")
}

stop() {
  for node in "${NODES[@]}"; do
    local pidfile="$GALERA_DIR/node$node/mariadbd.pid"
    if [ -f "$pidfile" ]; then kill "$(cat "$pidfile")" 2>/dev/null || true; fi
  done
  for node in "${NODES[@]}"; do
    local pidfile="$GALERA_DIR/node$node/mariadbd.pid"
    for _ in $(seq 1 60); do [ -f "$pidfile" ] || break; sleep 1; done
  done
  rm -rf "$GALERA_DIR"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
