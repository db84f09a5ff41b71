# shellcheck shell=bash
# Starts the services the tests need on loopback, with data in a temporary folder, waits until each
# answers, and records how to stop them. A service that cannot start fails the run with its log.

PERSYS_TEST_ETCD_PORT=${PERSYS_TEST_ETCD_PORT:-23790}
PERSYS_TEST_REDIS_PORT=${PERSYS_TEST_REDIS_PORT:-63790}
PERSYS_SERVICE_PIDS=()

persys_wait_for() { # name timeout-seconds command...
  local name=$1 timeout=$2 i; shift 2
  for ((i = 0; i < timeout * 10; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "[test] FAIL: $name did not answer within ${timeout}s; its log:" >&2
  tail -n 40 "$PERSYS_TEST_RUN_DIR/$name.log" >&2 || true
  return 1
}

persys_start_etcd() {
  local dir=$PERSYS_TEST_RUN_DIR/etcd peer=$((PERSYS_TEST_ETCD_PORT + 10))
  mkdir -p "$dir"
  etcd --name persys-test --data-dir "$dir" \
    --listen-client-urls "http://127.0.0.1:$PERSYS_TEST_ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$PERSYS_TEST_ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$peer" \
    --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "persys-test=http://127.0.0.1:$peer" \
    --quota-backend-bytes 4294967296 >"$PERSYS_TEST_RUN_DIR/etcd.log" 2>&1 &
  PERSYS_SERVICE_PIDS+=($!)
  persys_wait_for etcd 30 curl -fsS "http://127.0.0.1:$PERSYS_TEST_ETCD_PORT/health" || return 1
  export PERSYS_TEST_ETCD_ENDPOINTS="http://127.0.0.1:$PERSYS_TEST_ETCD_PORT"
  echo "[test] etcd $(etcd --version | head -1 | awk '{print $3}') answers at $PERSYS_TEST_ETCD_ENDPOINTS (data $dir)"
}

persys_start_redis() {
  local dir=$PERSYS_TEST_RUN_DIR/redis
  mkdir -p "$dir"
  redis-server --bind 127.0.0.1 --port "$PERSYS_TEST_REDIS_PORT" --dir "$dir" --save "" --appendonly no \
    --daemonize no >"$PERSYS_TEST_RUN_DIR/redis.log" 2>&1 &
  PERSYS_SERVICE_PIDS+=($!)
  persys_wait_for redis 30 redis-cli -p "$PERSYS_TEST_REDIS_PORT" ping || return 1
  export PERSYS_TEST_REDIS_URL="redis://127.0.0.1:$PERSYS_TEST_REDIS_PORT"
  echo "[test] redis $(redis-server --version | awk '{print $3}' | tr -d v=) answers at $PERSYS_TEST_REDIS_URL (data $dir)"
}

# dockerd on its default socket: tests and `persys up` talk to /var/run/docker.sock. A daemon that
# already answers is used as is (and left running); one we start is stopped at the end.
persys_start_docker() {
  export DOCKER_HOST=unix:///var/run/docker.sock
  if docker version >/dev/null 2>&1; then
    echo "[test] docker $(docker version --format '{{.Server.Version}}') already answers at $DOCKER_HOST"
  else
    dockerd >"$PERSYS_TEST_RUN_DIR/dockerd.log" 2>&1 &
    PERSYS_SERVICE_PIDS+=($!)
    persys_wait_for dockerd 60 docker version || return 1
    echo "[test] docker $(docker version --format '{{.Server.Version}}') started at $DOCKER_HOST"
  fi
  test/fixtures/build-images.sh
}

persys_stop_services() {
  local pid
  for pid in "${PERSYS_SERVICE_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PERSYS_SERVICE_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  PERSYS_SERVICE_PIDS=()
}
