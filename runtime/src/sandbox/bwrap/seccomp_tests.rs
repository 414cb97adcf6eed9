//! The filter programs run on a small classic-BPF interpreter, on calls
//! made up as the kernel would describe them: what each program answers is
//! checked call by call, without loading it into a kernel.

// libc's types differ by target (`c_long`, the ioctl request type): the
// casts written for every target are no-ops on some.
#![allow(clippy::unnecessary_cast, clippy::useless_conversion)]

use super::*;

/// `AUDIT_ARCH_*` of this machine, as the programs check it.
#[cfg(target_arch = "x86_64")]
const NATIVE_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const NATIVE_ARCH: u32 = 0xC000_00B7;
#[cfg(target_arch = "riscv64")]
const NATIVE_ARCH: u32 = 0xC000_00F3;
/// 32-bit x86 (`AUDIT_ARCH_I386`).
const I386: u32 = 0x4000_0003;

const ALLOW: u32 = 0x7fff_0000;
const KILL_PROCESS: u32 = 0x8000_0000;

fn errno(value: i32) -> u32 {
    0x0005_0000 | value as u32
}

/// A call as `struct seccomp_data` describes it.
#[derive(Clone, Copy)]
struct Call {
    nr: i64,
    arch: u32,
    args: [u64; 6],
}

fn call(nr: libc::c_long, args: &[u64]) -> Call {
    let mut all = [0u64; 6];
    all[..args.len()].copy_from_slice(args);
    Call {
        nr: i64::from(nr),
        arch: NATIVE_ARCH,
        args: all,
    }
}

impl Call {
    /// The word at `offset` of `struct seccomp_data` (little-endian halves).
    fn word(&self, offset: u32) -> u32 {
        match offset {
            0 => self.nr as u32,
            4 => self.arch,
            16..=63 => {
                let arg = self.args[(offset as usize - 16) / 8];
                if offset.is_multiple_of(8) {
                    arg as u32
                } else {
                    (arg >> 32) as u32
                }
            }
            other => panic!("the filter reads offset {other}"),
        }
    }
}

/// Runs a program (bytes as bwrap reads them) on `call`: what it returns.
fn run(program: &[u8], call: Call) -> u32 {
    let instructions: Vec<(u16, u8, u8, u32)> = program
        .chunks_exact(8)
        .map(|c| {
            (
                u16::from_ne_bytes([c[0], c[1]]),
                c[2],
                c[3],
                u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
            )
        })
        .collect();
    assert_eq!(program.len(), instructions.len() * 8);
    let (mut pc, mut accumulator) = (0usize, 0u32);
    loop {
        let (code, jt, jf, k) = instructions[pc];
        pc += 1;
        let jump = |taken: bool| usize::from(if taken { jt } else { jf });
        match code {
            0x20 => accumulator = call.word(k),       // ld [k]
            0x54 => accumulator &= k,                 // and #k
            0x05 => pc += k as usize,                 // ja
            0x15 => pc += jump(accumulator == k),     // jeq
            0x25 => pc += jump(accumulator > k),      // jgt
            0x35 => pc += jump(accumulator >= k),     // jge
            0x45 => pc += jump(accumulator & k != 0), // jset
            0x06 => return k,                         // ret #k
            other => panic!("an instruction the interpreter lacks: {other:#x}"),
        }
    }
}

/// What the filter answers `call`.
fn answer(call: Call) -> u32 {
    run(program().unwrap(), call)
}

#[test]
fn the_listed_calls_are_refused_and_ordinary_ones_pass() {
    for nr in [
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_open_by_handle_at,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
    ] {
        assert_eq!(
            answer(call(nr, &[])),
            errno(libc::EPERM),
            "system call {nr}"
        );
    }
    for nr in [
        libc::SYS_read,
        libc::SYS_write,
        libc::SYS_openat,
        libc::SYS_execve,
        libc::SYS_ptrace,
        libc::SYS_socket,
        libc::SYS_connect,
    ] {
        assert_eq!(answer(call(nr, &[1, 2, 3])), ALLOW, "system call {nr}");
    }
}

#[test]
fn only_the_terminal_injecting_ioctls_are_refused() {
    let ioctl = |request: u64| answer(call(libc::SYS_ioctl, &[0, request]));
    assert_eq!(ioctl(libc::TIOCSTI as u64), errno(libc::EPERM));
    assert_eq!(ioctl(libc::TIOCLINUX as u64), errno(libc::EPERM));
    // The kernel reads the request as 32 bits: high bits do not hide it.
    assert_eq!(
        ioctl(0xffff_ffff_0000_0000 | libc::TIOCSTI as u64),
        errno(libc::EPERM)
    );
    assert_eq!(ioctl(libc::TIOCGWINSZ as u64), ALLOW);
    assert_eq!(ioctl(libc::FIONREAD as u64), ALLOW);
}

#[test]
fn new_user_and_mount_namespaces_are_refused_and_threads_are_not() {
    let user = libc::CLONE_NEWUSER as u64;
    let mount = libc::CLONE_NEWNS as u64;
    let thread = (libc::CLONE_VM | libc::CLONE_FS | libc::CLONE_FILES | libc::CLONE_THREAD) as u64;
    for nr in [libc::SYS_unshare, libc::SYS_clone] {
        assert_eq!(answer(call(nr, &[user])), errno(libc::EPERM));
        assert_eq!(answer(call(nr, &[mount | thread])), errno(libc::EPERM));
        assert_eq!(answer(call(nr, &[thread])), ALLOW);
        assert_eq!(answer(call(nr, &[libc::CLONE_NEWNET as u64])), ALLOW);
    }
    // clone3's flags are out of the filter's reach: it is absent.
    assert_eq!(
        answer(call(libc::SYS_clone3, &[0, 88])),
        errno(libc::ENOSYS)
    );
    for nr in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        assert_eq!(answer(call(nr, &[])), errno(libc::ENOSYS));
    }
}

#[test]
fn a_call_through_another_abi_ends_the_process() {
    let mut keyctl = call(libc::SYS_keyctl, &[]);
    keyctl.arch = I386;
    assert_eq!(answer(keyctl), KILL_PROCESS);
    // Once: the second program's own check went with the splice.
    let loads_of_arch = program()
        .unwrap()
        .chunks_exact(8)
        .filter(|c| u16::from_ne_bytes([c[0], c[1]]) == 0x20 && c[4..] == 4u32.to_ne_bytes())
        .count();
    assert_eq!(loads_of_arch, 1);
}

#[test]
fn a_call_numbered_past_the_native_table_is_absent() {
    // x32 on x86_64 (bit 30): every call, allowed natively or not.
    for nr in [
        libc::SYS_read,
        libc::SYS_keyctl,
        libc::SYS_ioctl,
        libc::SYS_clone3,
        514,
        528,
    ] {
        let mut x32 = call(nr, &[0, 0x5412]);
        x32.nr |= 0x4000_0000;
        assert_eq!(answer(x32), errno(libc::ENOSYS), "{:#x}", x32.nr);
    }
    // And -1 (a tracer's "skip this call").
    let mut skipped = call(0, &[]);
    skipped.nr = -1;
    assert_eq!(answer(skipped), errno(libc::ENOSYS));
}
