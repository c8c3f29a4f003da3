#!/bin/sh
# Makes the version-1 fixtures of this directory with the programs of that version:
#   git worktree add /tmp/tether-v1 <commit before the change log's version 2>
#   (cd /tmp/tether-v1 && swift build -c release --static-swift-stdlib)
#   Tests/Fixtures/v1/make-fixtures.sh /tmp/tether-v1/.build/x86_64-unknown-linux-gnu/release
# A server, a device that syncs four rows, pauses, then changes A (update), adds D, deletes C
# and changes B twice (five unsynced changes), and a second device that changes E meanwhile
# (a server change the first has not downloaded). Everything is stopped with SIGTERM and
# dumped as SQL: server.sql (the server's SQLite database), store.sql (the first device's
# store of partition `shop`), agent-state.sql (its state database: `shop` paused).
# The schema is Cluster.schema of TetherTestSupport; the device token is `device-secret`.
set -eu
bin=${1:?usage: make-fixtures.sh RELEASE-BIN-DIR}
out=$(cd "$(dirname "$0")" && pwd)
run=$(mktemp -d)
trap 'pkill -TERM -f "$run/" || true; rm -rf "$run"' EXIT
cd "$run"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > schema.toml <<TOML
version = 1
[tables.orders]
primary_key = "id"
[tables.orders.columns]
id = "text"
customer = "text"
total = "real"
note = "text?"
TOML
printf 'admin-secret\n' > admin.token
printf 'device-secret\n' > device.token
chmod 600 admin.token device.token
cat > server.toml <<TOML
listen = "127.0.0.1:$port"
data_dir = "$run/server-data"
schema = "$run/schema.toml"
admin_token_file = "$run/admin.token"
client_recovery = true
[[user]]
name = "device"
token_file = "$run/device.token"
[[grant]]
user = "device"
partitions = ["*"]
access = "readwrite"
TOML
for d in dev dev2; do
    mkdir -p "$d/hooks"
    cp device.token "$d/token"
    cat > "$d/tetherd.toml" <<TOML
state_dir = "$run/$d/state"
log_level = "info"
control_socket = "$run/$d/tetherd.sock"
[server]
url = "ws://127.0.0.1:$port/sync"
token_file = "$run/$d/token"
[[partition]]
name = "shop"
TOML
done
"$bin/tether-server" --config "$run/server.toml" > server.log 2>&1 &
sleep 2
"$bin/tetherd" --config "$run/dev/tetherd.toml" --log-destination stderr > dev.log 2>&1 &
"$bin/tetherd" --config "$run/dev2/tetherd.toml" --log-destination stderr > dev2.log 2>&1 &
sleep 3
store=dev/state/stores/shop.sqlite
"$bin/tetherctl" --socket dev/tetherd.sock wait-synced shop --timeout 30
sqlite3 "$store" "INSERT INTO orders (id, customer, total, note) VALUES ('A','ann',1.5,NULL),('B','bob',2.0,'x'),('C','cy',3.25,NULL),('E','eve',4.0,'it''s')"
"$bin/tetherctl" --socket dev/tetherd.sock wait-synced shop --timeout 30
"$bin/tetherctl" --socket dev2/tetherd.sock wait-synced shop --timeout 30
"$bin/tetherctl" --socket dev/tetherd.sock pause shop
sqlite3 "$store" "UPDATE orders SET total = 9.5 WHERE id = 'A'; INSERT INTO orders (id, customer, total, note) VALUES ('D','dan',5.0,'new'); DELETE FROM orders WHERE id = 'C'; UPDATE orders SET note = 'rush', total = 2.5 WHERE id = 'B'; UPDATE orders SET note = 'again' WHERE id = 'B';"
sqlite3 dev2/state/stores/shop.sqlite "UPDATE orders SET customer = 'eva' WHERE id = 'E'"
"$bin/tetherctl" --socket dev2/tetherd.sock wait-synced shop --timeout 30
pkill -TERM -f "$run/dev/tetherd.toml" || true
pkill -TERM -f "$run/dev2/tetherd.toml" || true
sleep 2
pkill -TERM -f "$run/server.toml" || true
sleep 2
sqlite3 "$store" .dump > "$out/store.sql"
sqlite3 dev/state/state.sqlite .dump > "$out/agent-state.sql"
sqlite3 server-data/server.sqlite .dump > "$out/server.sql"
