"""Deny this process the AMX tile state (Linux x86-64), so that every engine in it runs as on a CPU
with AVX-512 VNNI but no AMX (Ice Lake / Cascade Lake servers, AMD Zen 4).

On Linux a process must ask the kernel for the AMX tile data state (arch_prctl(ARCH_REQ_XCOMP_PERM,
XFEATURE_XTILEDATA)) before it may run AMX instructions; XNNPACK (inside ai-edge-litert) and
tflite_gpu both ask, and both fall back to their AVX-512 VNNI kernels when the kernel says no.
deny() installs a seccomp filter that answers that one request with EPERM (everything else passes),
so on a Sapphire Rapids host the int8 comparison of the two engines' VNNI paths is like for like:
forcing only tflite_gpu's ISA (TFLITE_GPU_CPU_ISA=avx512vnni) leaves XNNPACK on AMX.

The filter lasts for the life of the process and its children. Call deny() before the first
interpreter of either engine is made.
"""
import ctypes
import struct

_SYS_ARCH_PRCTL = 158          # x86-64
_ARCH_REQ_XCOMP_PERM = 0x1023
_XFEATURE_XTILEDATA = 18


def deny():
    """Installs the filter; returns True when a request for the tile state is then refused."""
    import platform
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2

    def ins(code, jt, jf, k):  # struct sock_filter
        return struct.pack("HBBI", code, jt, jf, k)
    ld_abs, jeq, ret = 0x20, 0x15, 0x06    # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K
    audit_arch_x86_64 = 0xC000003E
    prog = b"".join([
        ins(ld_abs, 0, 0, 4), ins(jeq, 0, 5, audit_arch_x86_64),       # seccomp_data.arch
        ins(ld_abs, 0, 0, 0), ins(jeq, 0, 3, _SYS_ARCH_PRCTL),         # seccomp_data.nr
        ins(ld_abs, 0, 0, 16), ins(jeq, 0, 1, _ARCH_REQ_XCOMP_PERM),   # args[0], low 32 bits
        ins(ret, 0, 0, 0x00050000 | 1),                                # SECCOMP_RET_ERRNO | EPERM
        ins(ret, 0, 0, 0x7FFF0000),                                    # SECCOMP_RET_ALLOW
    ])
    buf = ctypes.create_string_buffer(prog, len(prog))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    fprog = SockFprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0:
        return False
    if libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0:
        return False
    return libc.syscall(_SYS_ARCH_PRCTL, _ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA) != 0
