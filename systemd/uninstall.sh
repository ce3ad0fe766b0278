#!/usr/bin/env bash
# Removes what systemd/install.sh installed: stops and disables the units, removes them, their
# install.sh drop-ins and /usr/local/bin/strand. Configuration (/etc/strand) and data
# (<disk>/strand) are kept unless --purge, which also removes the strand user. The ZooKeeper
# ensemble member (strand-zookeeper.service) goes too; its data (the dataDir of
# /etc/strand/zookeeper/zoo.cfg) only with --purge.
#
#   uninstall.sh [--root DIR] [--purge]
#
# With --purge the data dirs removed are the log.dirs named in /etc/strand/server*.properties.
# --root DIR works on a directory tree: no systemctl, no userdel (printed instead).
set -euo pipefail

root=""
purge=false
die() { echo "uninstall.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root="${2:?--root needs a directory}"; shift 2 ;;
    --purge) purge=true; shift ;;
    -h|--help) sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
if [ -n "$root" ]; then
  [ -d "$root" ] || die "no directory $root"
  root="$(cd "$root" && pwd)"
fi
say() { echo "uninstall.sh: $*"; }
would() { echo "uninstall.sh: would run: $*"; }

units="$root/etc/systemd/system"
shopt -s nullglob
instances=()
for f in "$root"/etc/strand/server-*.properties "$units"/strand@*.service.d "$units"/*/strand@*.service; do
  b="$(basename "$f")"
  case "$b" in
    server-*.properties) n="${b#server-}"; n="${n%.properties}" ;;
    strand@*.service.d) n="${b#strand@}"; n="${n%.service.d}" ;;
    *) n="${b#strand@}"; n="${n%.service}" ;;
  esac
  [ -n "$n" ] && [[ " ${instances[*]-} " != *" strand@$n.service "* ]] && instances+=("strand@$n.service")
done
names=()
[ -e "$units/strand-zookeeper.service" ] && names+=(strand-zookeeper.service)
[ -e "$units/strand.service" ] && names+=(strand.service)
names+=("${instances[@]}")
if [ "${#names[@]}" -gt 0 ]; then
  if [ -n "$root" ]; then would "systemctl disable --now ${names[*]}"
  else systemctl disable --now "${names[@]}" || true
  fi
fi
# Enable links, in case systemctl was not there to remove them.
for l in "$units"/*.wants/strand.service "$units"/*.wants/strand@*.service "$units"/*.wants/strand-zookeeper.service; do rm -f "$l"; say "removed ${l#"$root"}"; done

for f in "$units/strand.service" "$units/strand@.service" "$units/strand.service.d/10-data-dirs.conf" \
         "$units"/strand@*.service.d/10-data-dir.conf "$root/usr/local/bin/strand" \
         "$units/strand-zookeeper.service" "$units/strand-zookeeper.service.d/10-data-dir.conf"; do
  if [ -e "$f" ]; then rm -f "$f"; say "removed ${f#"$root"}"; fi
done
for d in "$units/strand.service.d" "$units"/strand@*.service.d "$units/strand-zookeeper.service.d"; do rmdir "$d" 2>/dev/null || true; done
if [ -n "$root" ]; then would "systemctl daemon-reload"; else systemctl daemon-reload || true; fi

if $purge; then
  for c in "$root"/etc/strand/server*.properties; do
    dirs="$(sed -n 's/^[[:space:]]*log\.dirs\{0,1\}[[:space:]]*=[[:space:]]*//p' "$c" | tail -1)"
    IFS=',' read -r -a list <<< "$dirs"
    for d in "${list[@]}"; do
      d="$(echo "$d" | xargs)"
      [[ "$d" == /?* ]] || continue
      if [ -d "$root$d" ]; then rm -rf -- "$root$d"; say "removed data $d"; fi
    done
  done
  zoo="$root/etc/strand/zookeeper/zoo.cfg"
  if [ -f "$zoo" ]; then
    d="$(sed -n 's/^[[:space:]]*dataDir[[:space:]]*=[[:space:]]*//p' "$zoo" | tail -1 | xargs)"
    if [[ "$d" == /?* ]] && [ -d "$root$d" ]; then rm -rf -- "$root$d"; say "removed ZooKeeper data $d"; fi
  fi
  if [ -d "$root/etc/strand" ]; then rm -rf "$root/etc/strand"; say "removed /etc/strand"; fi
  if [ -n "$root" ]; then would "userdel strand"
  elif getent passwd strand >/dev/null; then userdel strand || true; say "removed user strand"
  fi
else
  say "kept /etc/strand and the data dirs (--purge removes them)"
fi
