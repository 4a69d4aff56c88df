//! The x32 ABI's system calls refused before the seccomp filter looks at a number. On x86_64
//! an x32 call arrives with the same architecture value as a native one and its number ORed
//! with `__X32_SYSCALL_BIT` (`0x4000_0000`): `syscall(0x4000_0000 | SYS_socket, AF_UNIX, …)`
//! matches none of the filter's rules (they name native numbers) and would be allowed on a
//! kernel built with x32 support. [`refuse_x32`] puts three instructions in front of the
//! program the filter compiles to: any number at or above the bit fails with the filter's
//! errno. No real system call of any architecture is numbered that high, so the prefix is the
//! same everywhere. Pure.

use seccompiler::{BpfProgram, sock_filter};

/// `__X32_SYSCALL_BIT` (`<asm/unistd.h>`).
pub(super) const X32_SYSCALL_BIT: u32 = 0x4000_0000;

// Classic BPF (`<linux/bpf_common.h>`, `<linux/seccomp.h>`).
/// `BPF_LD | BPF_W | BPF_ABS`.
const BPF_LD_W_ABS: u16 = 0x20;
/// `BPF_JMP | BPF_JGE | BPF_K`.
const BPF_JMP_JGE_K: u16 = 0x35;
/// `BPF_RET | BPF_K`.
const BPF_RET_K: u16 = 0x06;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
/// `offsetof(struct seccomp_data, nr)`.
const NR_OFFSET: u32 = 0;

/// `program`, first refusing every x32 system call with `errno`: load the number, and when it
/// is at or above [`X32_SYSCALL_BIT`] return the error; else go on to `program` (its jumps are
/// relative, and none reaches back into the prefix).
pub(super) fn refuse_x32(program: BpfProgram, errno: u32) -> BpfProgram {
    let step = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    let mut out = vec![
        step(BPF_LD_W_ABS, 0, 0, NR_OFFSET),
        // At or above the bit: the next instruction (the refusal); else skip it.
        step(BPF_JMP_JGE_K, 0, 1, X32_SYSCALL_BIT),
        step(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | (errno & 0xffff)),
    ];
    out.extend(program);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny classic-BPF interpreter for what [`refuse_x32`] and a stand-in program use:
    /// the return value for system call `nr`.
    fn run(program: &[sock_filter], nr: u32) -> u32 {
        let mut accumulator = 0u32;
        let mut at = 0usize;
        loop {
            let step = &program[at];
            match step.code {
                BPF_LD_W_ABS => accumulator = if step.k == NR_OFFSET { nr } else { 0 },
                BPF_JMP_JGE_K => {
                    let jump = if accumulator >= step.k {
                        step.jt
                    } else {
                        step.jf
                    };
                    at += usize::from(jump);
                }
                BPF_RET_K => return step.k,
                other => panic!("instruction {other:#x} not modelled"),
            }
            at += 1;
        }
    }

    #[test]
    fn every_x32_number_is_refused_and_native_ones_reach_the_program() {
        // Stand-in for the compiled filter: allow everything.
        let allow = vec![sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: 0x7fff_0000,
        }];
        let program = refuse_x32(allow, 13);
        for native in [0, 1, 41, 42, 435, 547, 0x3fff_ffff] {
            assert_eq!(run(&program, native), 0x7fff_0000, "{native}");
        }
        for call in [0, 41, 42, 54, 101, 321, 425, 512, 547, 0x3fff_ffff] {
            let nr = X32_SYSCALL_BIT | call;
            assert_eq!(run(&program, nr), SECCOMP_RET_ERRNO | 0xd, "{nr:#x}");
        }
        assert_eq!(run(&program, u32::MAX), SECCOMP_RET_ERRNO | 0xd);
    }
}
