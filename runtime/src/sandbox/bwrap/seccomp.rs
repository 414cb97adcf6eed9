//! The seccomp filter a [`Bwrap`](super::Bwrap) sandbox runs under: the
//! system calls a sandboxed program has no business making, refused
//! before the kernel looks at them, as Flatpak does for its sandboxes.
//!
//! One program, spliced from two (a seccomp program built with
//! `seccompiler` gives one answer to every call it matches):
//! - **refused** (`EPERM`): pushing keystrokes into a terminal (`ioctl`
//!   `TIOCSTI`, `TIOCLINUX`), the kernel keyrings (`keyctl`, `add_key`,
//!   `request_key`), `bpf`, `perf_event_open`, `userfaultfd`, `kexec_load`,
//!   `kexec_file_load`, `open_by_handle_at`, new user or mount namespaces
//!   (`unshare`, `clone` with `CLONE_NEWUSER` or `CLONE_NEWNS`), joining
//!   namespaces (`setns`), and the mount family (`mount`, `umount2`,
//!   `pivot_root`, `open_tree`, `move_mount`, `fsopen`, `fsconfig`,
//!   `fsmount`, `fspick`, `mount_setattr`);
//! - **absent** (`ENOSYS`): `clone3`, whose flags sit in memory a filter
//!   cannot read, and io_uring, whose requests bypass the filter; both
//!   answered as a kernel without them would be, so programs fall back
//!   (glibc to `clone`, io_uring users to plain reads and writes).
//!
//! `ptrace` needs no rule: the sandbox has a pid namespace of its own, so
//! no process outside it has a pid a sandboxed process could name, and
//! `--cap-drop ALL` leaves it no `CAP_SYS_PTRACE`.
//!
//! The program first checks the architecture of the call: one made through
//! another ABI (32-bit x86 on x86_64, 32-bit Arm on aarch64) ends the
//! process, since its numbers are not the ones filtered. On x86_64 the x32
//! ABI shares the architecture, with numbers of its own (bit 30 set): any
//! call numbered from there up is answered `ENOSYS`, as a kernel without
//! x32 answers it, so the rules need only the native numbers.
//!
//! Built with `seccompiler` (the rust-vmm project's, used by Firecracker):
//! pure Rust, so neither building nor running a host needs libseccomp.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The filter program for this machine's architecture, as the raw
/// `struct sock_filter` array bwrap reads from a file descriptor; built
/// once.
///
/// # Errors
///
/// On an architecture the filter has no system call table for (it knows
/// x86_64, aarch64 and riscv64), saying so.
pub(crate) fn program() -> Result<&'static [u8], String> {
    static PROGRAM: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();
    PROGRAM.get_or_init(build).as_deref().map_err(Clone::clone)
}

/// How many instructions open a program: the architecture's check.
const ARCH_CHECK: usize = 3;

fn build() -> Result<Vec<u8>, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
        format!(
            "gangway has no seccomp filter for {} (it has one for x86_64, aarch64 and riscv64); \
             turn it off with `Bwrap::seccomp(false)`",
            std::env::consts::ARCH
        )
    })?;
    let (refused, absent) = (refused_rules(), absent_rules());
    // The splice relies on it: a call the first program knows never
    // reaches the second.
    debug_assert!(refused.keys().all(|nr| !absent.contains_key(nr)));
    let refused = compile(refused, libc::EPERM, arch)?;
    let absent = compile(absent, libc::ENOSYS, arch)?;
    Ok(encode(&splice(refused, absent)))
}

/// One program of two built for the same architecture over disjoint
/// system calls: `first`'s last instruction, reached only when no call of
/// its matched (its "allow"), becomes `second`'s look-up, past `second`'s
/// own architecture check; and after `first`'s architecture check, the
/// guard of [`numbers_past_the_table`]. Every jump in either is forward and
/// within its own program, and none crosses the inserted guard, so none
/// moves. One program rather than two: the kernel compiles and frees each
/// program a sandbox loads, at a cost of its own.
fn splice(first: BpfProgram, second: BpfProgram) -> BpfProgram {
    let mut program: BpfProgram = first.iter().take(ARCH_CHECK).cloned().collect();
    program.extend(numbers_past_the_table());
    program.extend(first.into_iter().skip(ARCH_CHECK));
    program.pop();
    program.extend(second.into_iter().skip(ARCH_CHECK));
    program
}

/// The first instruction of the system call number's bit that no native
/// call has (`__X32_SYSCALL_BIT` on x86_64): from there up, calls are
/// answered `ENOSYS`.
const NATIVE_NUMBERS_END: u32 = 0x4000_0000;

/// Three instructions, right after the architecture's check (whose "same
/// architecture" jump lands on the first): a call numbered past every
/// native call, an x32 call on x86_64 among them, is answered `ENOSYS`, as
/// a kernel without x32 answers it (as a call through another ABI ends
/// the process): the rules are written for the native numbers alone.
fn numbers_past_the_table() -> [seccompiler::sock_filter; 3] {
    const LOAD_WORD: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JUMP_IF_AT_LEAST: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
    const RETURN: u16 = 0x06; // BPF_RET | BPF_K
    let errno_nosys = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    [
        seccompiler::sock_filter {
            code: LOAD_WORD,
            jt: 0,
            jf: 0,
            k: 0, // offset of `nr` in `struct seccomp_data`
        },
        seccompiler::sock_filter {
            code: JUMP_IF_AT_LEAST,
            jt: 0,
            jf: 1,
            k: NATIVE_NUMBERS_END,
        },
        seccompiler::sock_filter {
            code: RETURN,
            jt: 0,
            jf: 0,
            k: errno_nosys,
        },
    ]
}

/// A program answering `errno` to every call `rules` match, and letting
/// every other call through.
fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: i32,
    arch: TargetArch,
) -> Result<BpfProgram, String> {
    let errno = u32::try_from(errno).map_err(|_| "a negative errno".to_owned())?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        arch,
    )
    .map_err(|error| format!("the seccomp filter does not compile: {error}"))?;
    BpfProgram::try_from(filter)
        .map_err(|error| format!("the seccomp filter does not compile: {error}"))
}

/// The instructions as the kernel's `struct sock_filter` array.
fn encode(program: &BpfProgram) -> Vec<u8> {
    program
        .iter()
        .flat_map(|instruction| {
            let mut bytes = [0u8; 8];
            bytes[..2].copy_from_slice(&instruction.code.to_ne_bytes());
            bytes[2] = instruction.jt;
            bytes[3] = instruction.jf;
            bytes[4..].copy_from_slice(&instruction.k.to_ne_bytes());
            bytes
        })
        .collect()
}

/// Adds `rules` for system call `nr`.
// `c_long` is `i64` where the filter is built, `i32` on 32-bit targets.
#[allow(clippy::useless_conversion)]
fn add(rules: &mut BTreeMap<i64, Vec<SeccompRule>>, nr: libc::c_long, chain: Vec<SeccompRule>) {
    rules.insert(i64::from(nr), chain);
}

/// A rule matching when argument `index` (its low 32 bits, as the kernel
/// reads an `int` or an ioctl request) equals `value`.
fn argument_is(index: u8, value: u64) -> SeccompRule {
    rule(index, SeccompCmpOp::Eq, value)
}

/// A rule matching when argument `index` has any of the bits of `flag`.
fn argument_has(index: u8, flag: u64) -> SeccompRule {
    rule(index, SeccompCmpOp::MaskedEq(flag), flag)
}

fn rule(index: u8, op: SeccompCmpOp, value: u64) -> SeccompRule {
    // Neither can fail: the index is under 6 and the rule holds a condition.
    let condition = SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value)
        .expect("argument index under 6");
    SeccompRule::new(vec![condition]).expect("a rule with a condition")
}

/// The calls answered `EPERM`.
fn refused_rules() -> BTreeMap<i64, Vec<SeccompRule>> {
    let mut rules = BTreeMap::new();
    // Keystrokes pushed into a terminal the sandbox shares with its host.
    add(
        &mut rules,
        libc::SYS_ioctl,
        vec![
            argument_is(1, u64::from(libc::TIOCSTI as u32)),
            argument_is(1, u64::from(libc::TIOCLINUX as u32)),
        ],
    );
    // New user or mount namespaces: inside one, every capability again.
    let namespaces = [libc::CLONE_NEWUSER, libc::CLONE_NEWNS];
    let flags = || -> Vec<SeccompRule> {
        namespaces
            .iter()
            .map(|&flag| argument_has(0, u64::from(flag as u32)))
            .collect()
    };
    add(&mut rules, libc::SYS_unshare, flags());
    add(&mut rules, libc::SYS_clone, flags());
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
        add(&mut rules, nr, Vec::new());
    }
    rules
}

/// The calls answered `ENOSYS`.
fn absent_rules() -> BTreeMap<i64, Vec<SeccompRule>> {
    let mut rules = BTreeMap::new();
    for nr in [
        libc::SYS_clone3,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        add(&mut rules, nr, Vec::new());
    }
    rules
}

#[cfg(test)]
#[path = "seccomp_tests.rs"]
mod tests;
