#!/bin/sh
# What a hostile sandbox tries against its walls, run inside one by
# cli/tests/escape.rs. Each attempt prints one `name:outcome` line:
# `held` or `escaped` for what a command tried, the errno (0 when the call
# succeeded) for a raw system call, and the value read for the rest. The
# test decides which outcomes mean the wall held.
#
# $1 the client binary, $2 the wrapper directory, $3 another scope's
# socket, $4 a host process's pid (outside the sandbox's pid namespace),
# $5 the files under /etc no other user of the host may read, one per line,
# then `name=number` for each system call to try.
set -u
bin=$1
wrappers=$2
other=$3
host_pid=$4
secrets=$5
shift 5
syscalls="$*"

# The system's tools, not the host commands of the same name (the
# wrapper directory comes first on the sandbox's PATH).
sandbox_path=$PATH
PATH=/usr/bin:/bin:/usr/sbin:/sbin

# A tool missing would read as a wall that held: stop instead.
for tool in mount unshare perl sed head touch ln mv; do
    command -v "$tool" >/dev/null || { echo "attack.sh: no $tool in the sandbox" >&2; exit 3; }
done
perl -MIO::Socket::UNIX -e 1 || { echo "attack.sh: perl lacks IO::Socket::UNIX" >&2; exit 3; }

say() { printf '%s:%s\n' "$1" "$2"; }

# `held` when the command fails, `escaped` when it succeeds.
try() {
    name=$1
    shift
    if "$@" >/dev/null 2>&1; then say "$name" escaped; else say "$name" held; fi
}

# The number of system call $1 on this machine.
nr() {
    for pair in $syscalls; do
        if [ "${pair%%=*}" = "$1" ]; then
            printf '%s' "${pair#*=}"
            return
        fi
    done
    echo "attack.sh: no number for $1" >&2
    exit 2
}

# The errno of a raw system call (0 when it succeeded); numeric words go
# in as integers, the others as pointers to their text.
errno() {
    perl -e '
        my ($nr, @args) = map { /^-?\d+$/ ? $_ + 0 : $_ } @ARGV;
        my $result = syscall($nr, @args);
        print $result == -1 ? $! + 0 : 0;
    ' "$@"
}

# The errno of ioctl request $1 on standard input.
ioctl_errno() {
    perl -e 'my $arg = "x"; print defined(ioctl(STDIN, hex($ARGV[0]), $arg)) ? 0 : $! + 0' "$1"
}

socket=${GANGWAY_ENDPOINT#unix:}
socket_dir=$(dirname "$socket")

say caps "$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)"
say seccomp "$(sed -n 's/^Seccomp:[[:space:]]*//p' /proc/self/status)"

# The read-only binds, remounted read-write, and the files under them.
try remount-client mount -o remount,bind,rw "$bin"
try write-client sh -c ': >> "$1"' sh "$bin"
try remount-wrappers mount -o remount,bind,rw "$wrappers"
try plant-wrapper touch "$wrappers/planted"
mkdir -p /tmp/mountpoint
try mount-tmpfs mount -t tmpfs none /tmp/mountpoint

# The host's credentials among the system files: what no other user of
# the host may read (but uid 0, which a root host's sandbox runs as,
# capabilities or not, owns).
read_secrets() {
    old_ifs=$IFS
    IFS='
'
    for file in $secrets; do
        if head -c 1 "$file" >/dev/null 2>&1; then IFS=$old_ifs; return 0; fi
    done
    IFS=$old_ifs
    return 1
}
try read-secrets read_secrets

# Namespaces of its own, where it would hold every capability again.
try nested-userns unshare -Ur true
try nested-mountns unshare -m true

# Another scope's socket, and its own socket's directory.
try see-other-socket test -e "$other"
try plant-socket-dir touch "$socket_dir/planted"
try link-socket-dir ln -s / "$socket_dir/link"
try bind-socket perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Local => $ARGV[0], Listen => 1) or exit 1' "$socket_dir/impostor"
try move-socket mv "$socket" "$socket.moved"

# The system calls the seccomp filter refuses.
say keyctl "$(errno "$(nr keyctl)" 0 -3 0 0 0)"
say add_key "$(errno "$(nr add_key)" user gangway-probe x 1 -3)"
say request_key "$(errno "$(nr request_key)" user gangway-probe 0 0)"
say bpf "$(errno "$(nr bpf)" 0 0 0)"
say perf_event_open "$(errno "$(nr perf_event_open)" 0 0 -1 -1 0)"
say userfaultfd "$(errno "$(nr userfaultfd)" 1)"
say kexec_load "$(errno "$(nr kexec_load)" 0 0 0 0)"
say open_by_handle_at "$(errno "$(nr open_by_handle_at)" -1 0 0)"
say unshare-user "$(errno "$(nr unshare)" 268435456)"
say unshare-mount "$(errno "$(nr unshare)" 131072)"
say clone-newuser "$(errno "$(nr clone)" 268435456 0 0 0 0)"
say setns "$(errno "$(nr setns)" -1 0)"
say mount "$(errno "$(nr mount)" none /tmp/mountpoint tmpfs 0 0)"
say umount2 "$(errno "$(nr umount2)" /nonexistent 0)"
say pivot_root "$(errno "$(nr pivot_root)" /nonexistent /nonexistent)"
say fsopen "$(errno "$(nr fsopen)" tmpfs 0)"
say open_tree "$(errno "$(nr open_tree)" -100 /tmp 0)"
say fspick "$(errno "$(nr fspick)" -100 /tmp 0)"
say clone3 "$(errno "$(nr clone3)" 0 0)"
say io_uring_setup "$(errno "$(nr io_uring_setup)" 1 0)"
say tiocsti "$(ioctl_errno 5412)"
say tioclinux "$(ioctl_errno 541C)"
# PTRACE_ATTACH to a process of the host's.
say ptrace-host "$(errno "$(nr ptrace)" 16 "$host_pid" 0 0)"

# Still served: its own calls work after all of the above.
say served "$(PATH=$sandbox_path greet walls)"
exit 0
