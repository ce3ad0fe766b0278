#!/usr/bin/env bash
# Installs strand as a systemd service. Idempotent: running it again with the same flags changes
# nothing (files are rewritten only when their content differs).
#
#   install.sh [--root DIR] [--binary PATH] [--broker-id N] [--zookeeper-connect S]
#              [--listeners S] [--admin-listeners S] [--disks "/data1 /data2"] [--per-disk]
#              [--zookeeper-ensemble H1,H2,H3 --zookeeper-id N [--zookeeper-client-port P]
#               [--zookeeper-chroot /strand]]
#
# One service (strand.service) with log.dirs spread across the disks, or with --per-disk one
# instance per disk (strand@N.service for /dataN: broker.id = --broker-id + N when an id is given,
# listener port 9092+N, admin port 9644+N; in --listeners/--admin-listeners, {port} stands for
# that port). Disks default to the mounted /data* file systems (else the existing /data*
# directories). --root DIR installs into a directory tree (tests, packaging): no user is created,
# nothing is chown'ed, and systemctl is not called; what would have been done is printed.
#
# --zookeeper-ensemble makes this host server N (--zookeeper-id, 1-255) of a ZooKeeper ensemble
# run from Debian's zookeeper package: /etc/strand/zookeeper/zoo.cfg (server.I=HI:2888:3888 for
# each host, in order), myid and the data in <first disk>/zookeeper, and strand-zookeeper.service;
# the brokers' zookeeper.connect becomes H1:P,H2:P,H3:P plus the chroot (default /strand).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root=""
binary=""
broker_id="-1"
zk=""
listeners=""
unset admin_listeners  # unset: the default; "" turns the admin API off
disks=""
per_disk=false
ensemble=""
zk_id=""
zk_port=2181
zk_chroot=/strand

die() { echo "install.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root="${2:?--root needs a directory}"; shift 2 ;;
    --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
    --broker-id) broker_id="${2:?--broker-id needs a number}"; shift 2 ;;
    --zookeeper-connect) zk="${2:?--zookeeper-connect needs host:port[,...][/chroot]}"; shift 2 ;;
    --listeners) listeners="${2:?--listeners needs a value}"; shift 2 ;;
    --admin-listeners) admin_listeners="${2-}"; shift 2 ;;
    --disks) disks="${2:?--disks needs directories}"; shift 2 ;;
    --per-disk) per_disk=true; shift ;;
    --zookeeper-ensemble) ensemble="${2:?--zookeeper-ensemble needs host1,host2,host3}"; shift 2 ;;
    --zookeeper-id) zk_id="${2:?--zookeeper-id needs a number}"; shift 2 ;;
    --zookeeper-client-port) zk_port="${2:?--zookeeper-client-port needs a port}"; shift 2 ;;
    --zookeeper-chroot) zk_chroot="${2?--zookeeper-chroot needs a path (or \"\")}"; shift 2 ;;
    -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
[[ "$broker_id" =~ ^-?[0-9]+$ ]] || die "--broker-id must be an integer, not '$broker_id'"
zk_hosts=()
if [ -n "$ensemble" ]; then
  [ -z "$zk" ] || die "--zookeeper-connect and --zookeeper-ensemble: give one (the ensemble sets zookeeper.connect)"
  IFS=',' read -r -a zk_hosts <<< "$ensemble"
  for h in "${zk_hosts[@]}"; do
    [[ "$h" =~ ^[A-Za-z0-9._-]+$ ]] || die "--zookeeper-ensemble: '$h' is not a host name or address"
  done
  [[ "$zk_id" =~ ^[0-9]+$ ]] && [ "$zk_id" -ge 1 ] && [ "$zk_id" -le "${#zk_hosts[@]}" ] && [ "$zk_id" -le 255 ] \
    || die "--zookeeper-id must be this host's place in --zookeeper-ensemble (1-${#zk_hosts[@]}), not '$zk_id'"
  [[ "$zk_port" =~ ^[0-9]+$ ]] && [ "$zk_port" -ge 1 ] && [ "$zk_port" -le 65535 ] || die "--zookeeper-client-port must be a port, not '$zk_port'"
  [ -z "$zk_chroot" ] || [[ "$zk_chroot" =~ ^(/[A-Za-z0-9._-]+)+$ ]] || die "--zookeeper-chroot must be a path like /strand, not '$zk_chroot'"
  for h in "${zk_hosts[@]}"; do zk+="${zk:+,}$h:$zk_port"; done
  zk+="$zk_chroot"
elif [ -n "$zk_id" ]; then
  die "--zookeeper-id needs --zookeeper-ensemble"
fi
[ -n "$root" ] && { mkdir -p "$root"; root="$(cd "$root" && pwd)"; }
[ -n "$binary" ] || binary="$here/../dist/strand"
[ -x "$binary" ] || die "no executable at $binary (build it with npm run build, or pass --binary)"
[ -f "$here/strand.service" ] && [ -f "$here/strand@.service" ] && [ -f "$here/server.properties" ] \
  || die "strand.service, strand@.service and server.properties must sit next to install.sh"
[ -z "$ensemble" ] || [ -f "$here/strand-zookeeper.service" ] || die "strand-zookeeper.service must sit next to install.sh"

say() { echo "install.sh: $*"; }
would() { echo "install.sh: would run: $*"; }

# put SRC DEST MODE: copies when the content or mode differs.
put() {
  local src="$1" dest="$2" mode="$3"
  mkdir -p "$(dirname "$dest")"
  if [ -f "$dest" ] && cmp -s "$src" "$dest"; then
    [ "$(stat -c %a "$dest")" = "$mode" ] || chmod "$mode" "$dest"
    return 0
  fi
  install -m "$mode" "$src" "$dest.tmp.$$" && mv -f "$dest.tmp.$$" "$dest"
  say "wrote ${dest#"$root"}"
}
# write DEST MODE: writes stdin to DEST when it differs.
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
write() { cat > "$tmp"; put "$tmp" "$1" "$2"; }

# The disks: host paths, looked up and created under the root.
if [ -z "$disks" ]; then
  if [ -z "$root" ] && command -v findmnt >/dev/null; then
    disks="$(findmnt -rn -o TARGET | grep -E '^/data[^/]*$' | sort -V | tr '\n' ' ' || true)"
  fi
  if [ -z "${disks// /}" ]; then
    for d in "$root"/data*; do [ -d "$d" ] && disks+="${d#"$root"} "; done
  fi
fi
read -r -a disk_list <<< "$disks"
[ "${#disk_list[@]}" -gt 0 ] || die "no /data* disks found under ${root:-/}; pass --disks \"/data1 /data2\""
for d in "${disk_list[@]}"; do
  [[ "$d" == /* ]] || die "disk $d: an absolute path is needed"
  [ -d "$root$d" ] || die "disk $d: no such directory${root:+ under $root}"
done

# The user.
if [ -n "$root" ]; then
  would "useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin strand"
elif ! getent passwd strand >/dev/null; then
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --user-group strand
  say "created system user strand"
fi
chown_data() {
  if [ -n "$root" ]; then would "chown strand:strand $1"
  elif [ "$(id -u)" = 0 ] && getent passwd strand >/dev/null; then
    [ "$(stat -c %U:%G "$1")" = strand:strand ] || chown strand:strand "$1"
  else say "not root: $1 left owned by $(stat -c %U "$1")"
  fi
}
make_data_dir() {
  mkdir -p "$root$1/strand"
  [ "$(stat -c %a "$root$1/strand")" = 750 ] || chmod 750 "$root$1/strand"
  chown_data "$root$1/strand"
}

# config FILE ID LISTENERS ADMIN LOGDIRS: server.properties with these keys set.
config() {
  local id="$2" l="$3" a="$4" dirs="$5"
  awk -v id="$id" -v l="$l" -v a="$a" -v dirs="$dirs" -v zk="$zk" '
    BEGIN { print "# Written by systemd/install.sh; running it again rewrites broker.id, listeners," ;
            print "# admin.listeners, log.dirs and zookeeper.connect from its flags." }
    /^broker\.id=/ { print "broker.id=" id; next }
    /^listeners=/ { print "listeners=" l; next }
    /^admin\.listeners=/ { print "admin.listeners=" a; next }
    /^log\.dirs=/ { print "log.dirs=" dirs; next }
    /^#?zookeeper\.connect=/ { if (zk != "") print "zookeeper.connect=" zk; else print; next }
    { print }' "$here/server.properties" | write "$root/etc/strand/$1" 644
}

units="$root/etc/systemd/system"
put "$binary" "$root/usr/local/bin/strand" 755
mkdir -p "$root/etc/strand"
enable=()
if ! $per_disk; then
  dirs=""
  rw=""
  for d in "${disk_list[@]}"; do
    make_data_dir "$d"
    dirs+="${dirs:+,}$d/strand"
    rw+="${rw:+ }$d/strand"
  done
  config server.properties "$broker_id" "${listeners:-PLAINTEXT://0.0.0.0:9092}" "${admin_listeners-http://127.0.0.1:9644}" "$dirs"
  put "$here/strand.service" "$units/strand.service" 644
  printf '# Written by systemd/install.sh: the log dirs of /etc/strand/server.properties.\n[Service]\nReadWritePaths=%s\n' "$rw" \
    | write "$units/strand.service.d/10-data-dirs.conf" 644
  enable+=(strand.service)
else
  # Instance N for /dataN; any other disk takes the lowest number no /dataN disk uses.
  declare -A seen=()
  nums=()
  for d in "${disk_list[@]}"; do
    if [[ "$d" =~ ^/data([0-9]+)$ ]]; then
      n=$((10#${BASH_REMATCH[1]}))
      [ -z "${seen[$n]-}" ] || die "disk $d is listed twice"
      seen[$n]="$d"
    fi
  done
  next=1
  for d in "${disk_list[@]}"; do
    if [[ "$d" =~ ^/data([0-9]+)$ ]]; then n=$((10#${BASH_REMATCH[1]}))
    else
      while [ -n "${seen[$next]-}" ]; do next=$((next + 1)); done
      n=$next; seen[$n]="$d"
    fi
    nums+=("$n")
  done
  i=0
  for d in "${disk_list[@]}"; do
    n="${nums[$i]}"; i=$((i + 1))
    make_data_dir "$d"
    id="$broker_id"; [ "$broker_id" -ge 0 ] && id=$((broker_id + n))
    port=$((9092 + n)) aport=$((9644 + n))
    l="${listeners:-PLAINTEXT://0.0.0.0:{port\}}"; l="${l//\{port\}/$port}"
    a="${admin_listeners-http://127.0.0.1:{port\}}"; a="${a//\{port\}/$aport}"
    config "server-$n.properties" "$id" "$l" "$a" "$d/strand"
    if [ "$d" != "/data$n" ]; then
      printf '# Written by systemd/install.sh: the log dir of /etc/strand/server-%s.properties.\n[Service]\nReadWritePaths=%s\n' "$n" "$d/strand" \
        | write "$units/strand@$n.service.d/10-data-dir.conf" 644
    fi
    enable+=("strand@$n.service")
  done
  put "$here/strand@.service" "$units/strand@.service" 644
fi

# The ZooKeeper ensemble member: Debian's package provides the jar and the zookeeper user.
if [ -n "$ensemble" ]; then
  zk_dir="${disk_list[0]}/zookeeper"
  if [ -z "$root" ]; then
    [ -f /usr/share/java/zookeeper.jar ] || die "no /usr/share/java/zookeeper.jar: apt-get install zookeeper"
    getent passwd zookeeper >/dev/null || die "no zookeeper user: apt-get install zookeeper"
  fi
  mkdir -p "$root$zk_dir"
  [ "$(stat -c %a "$root$zk_dir")" = 750 ] || chmod 750 "$root$zk_dir"
  {
    echo "# Written by systemd/install.sh (--zookeeper-ensemble, --zookeeper-id $zk_id); running it again rewrites it."
    echo "# One tick is the unit of the limits below and of client session timeouts (2-20 ticks)."
    echo "tickTime=2000"
    echo "# Ticks a follower may take to connect and sync to the leader, and to answer it after."
    echo "initLimit=10"
    echo "syncLimit=5"
    echo "dataDir=$zk_dir"
    echo "clientPort=$zk_port"
    echo "# Quorum and election ports on every address: the host name of this server may resolve to"
    echo "# 127.0.1.1 (Debian's /etc/hosts), where the other servers could not reach it."
    echo "quorumListenOnAllIPs=true"
    echo "admin.enableServer=false"
    echo "4lw.commands.whitelist=srvr,ruok,mntr,stat"
    echo "autopurge.snapRetainCount=3"
    echo "autopurge.purgeInterval=24"
    i=0
    for h in "${zk_hosts[@]}"; do i=$((i + 1)); echo "server.$i=$h:2888:3888"; done
  } | write "$root/etc/strand/zookeeper/zoo.cfg" 644
  echo "$zk_id" | write "$root$zk_dir/myid" 644
  if [ -n "$root" ]; then would "chown -R zookeeper:zookeeper $root$zk_dir"
  elif [ "$(id -u)" = 0 ]; then
    [ "$(stat -c %U:%G "$zk_dir")" = zookeeper:zookeeper ] || chown -R zookeeper:zookeeper "$zk_dir"
  fi
  put "$here/strand-zookeeper.service" "$units/strand-zookeeper.service" 644
  printf '# Written by systemd/install.sh: the dataDir of /etc/strand/zookeeper/zoo.cfg.\n[Service]\nReadWritePaths=%s\n' "$zk_dir" \
    | write "$units/strand-zookeeper.service.d/10-data-dir.conf" 644
  enable=(strand-zookeeper.service "${enable[@]}")
fi

if [ -n "$root" ]; then
  would "systemctl daemon-reload"
  would "systemctl enable ${enable[*]}"
else
  systemctl daemon-reload
  systemctl enable "${enable[@]}"
  say "enabled ${enable[*]}; start with: systemctl start ${enable[*]}"
fi
