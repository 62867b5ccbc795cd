"""Loading object code into the process without LLVM (x86-64 Linux, ELF).

The objects weft's CPU backend makes are simple: relocatable ELF files of code and
constants, compiled with LLVM's JIT code model (every reference an absolute 64-bit
address), calling at most a few C library functions (`memcpy`, `printf`, `syscall`).
Loading one takes mapping its sections, resolving its symbols and patching its
relocations, which this module does in Python; LLVM's MCJIT did the same, but importing
llvmlite's binding (the LLVM library itself) costs a warm process that only loads cached
kernels a fifth of its start.

Anything this module does not know (another machine or file kind, a relocation type
beyond the few below, a symbol the process lacks, common symbols, section groups) raises
`Unsupported`, and the caller loads the object with LLVM instead: nothing is guessed.
Code is never unloaded (as with MCJIT engines, which weft also keeps for the process's
life).
"""

from __future__ import annotations

import ctypes
import mmap
import struct
import threading

from .host import is_x86_64_linux

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")

_ET_REL, _EM_X86_64 = 1, 62
_SHT_PROGBITS, _SHT_SYMTAB, _SHT_RELA, _SHT_NOBITS, _SHT_REL, _SHT_GROUP = 1, 2, 4, 8, 9, 17
_SHF_WRITE, _SHF_ALLOC, _SHF_EXECINSTR = 0x1, 0x2, 0x4
_SHN_UNDEF, _SHN_ABS, _SHN_COMMON = 0, 0xFFF1, 0xFFF2
_STB_WEAK, _STT_SECTION = 2, 3
_R_64, _R_PC32, _R_PLT32, _R_32, _R_32S, _R_PC64 = 1, 2, 4, 10, 11, 24
_PAGE = mmap.PAGESIZE

# Sections that need not be loaded: unwind tables (no exception crosses a kernel) and notes.
_SKIPPED = (".eh_frame", ".note", ".comment", ".llvm_addrsig")


class Unsupported(Exception):
    """An object this loader does not handle (the reason is the message)."""


def supported() -> bool:
    return is_x86_64_linux()


_libc = None
_lock = threading.Lock()


def _c():
    global _libc
    if _libc is None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                              ctypes.c_long]
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        libc.dlsym.restype = ctypes.c_void_p
        libc.dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        _libc = libc
    return _libc


def _process_symbol(name: str) -> int:
    """The address of a symbol of the process (C library, libm, ...), or 0."""
    return _c().dlsym(None, name.encode()) or 0  # (RTLD_DEFAULT is the null handle on glibc)


def load(obj: bytes, symbols: tuple) -> tuple:
    """Map `obj` into executable memory; the addresses of the global `symbols` it defines."""
    with _lock:
        return _load(bytes(obj), symbols)


def _load(data, wanted):
    if len(data) < _EHDR.size:
        raise Unsupported("not an ELF file")
    ident, e_type, machine, _, _, _, shoff, _, _, _, _, shentsize, shnum, _ = _EHDR.unpack_from(data)
    if ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
        raise Unsupported("not a 64-bit little-endian ELF file")
    if e_type != _ET_REL or machine != _EM_X86_64 or shentsize != _SHDR.size:
        raise Unsupported("not an x86-64 relocatable object")
    sections = [_SHDR.unpack_from(data, shoff + k * _SHDR.size) for k in range(shnum)]
    shstr = sections[_EHDR.unpack_from(data)[13]]
    names = [_cstring(data, shstr[4] + s[0]) for s in sections]

    # Which sections to load, and where (executable ones first, then the others, each group
    # starting on a page of its own so that it can be protected on its own)
    load = [k for k, s in enumerate(sections)
            if s[2] & _SHF_ALLOC and s[5] and not names[k].startswith(_SKIPPED)]
    for k, s in enumerate(sections):
        if s[1] in (_SHT_REL, _SHT_GROUP):
            raise Unsupported(f"section {names[k]} of type {s[1]}")
    offsets, groups, end = {}, [], 0
    for executable in (True, False):
        start = end = -(-end // _PAGE) * _PAGE
        for k in load:
            if bool(sections[k][2] & _SHF_EXECINSTR) == executable:
                align = max(sections[k][8], 1)
                end = -(-end // align) * align
                offsets[k] = end
                end += sections[k][5]
        groups.append((start, end))
    size = max(-(-end // _PAGE) * _PAGE, _PAGE)

    libc = _c()
    prot_rw = mmap.PROT_READ | mmap.PROT_WRITE
    base = libc.mmap(None, size, prot_rw, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    if base in (None, ctypes.c_void_p(-1).value):
        raise MemoryError("mmap failed for kernel code")
    try:
        return _place(data, wanted, sections, names, offsets, groups, base)
    except BaseException:
        libc.munmap(base, size)
        raise


def _place(data, wanted, sections, names, offsets, groups, base):
    """Copy the sections to `base`, resolve the symbols, patch the relocations, protect the
    code; the addresses of `wanted`."""
    libc = _c()
    for k, off in offsets.items():
        _, stype, _, _, sh_offset, sh_size = sections[k][:6]
        if stype != _SHT_NOBITS:  # (NOBITS: zeros, as the fresh mapping is)
            ctypes.memmove(base + off, bytes(data[sh_offset:sh_offset + sh_size]), sh_size)

    symtab = next((s for s in sections if s[1] == _SHT_SYMTAB), None)
    if symtab is None:
        raise Unsupported("no symbol table")
    strtab = sections[symtab[6]]
    addresses, globals_ = [], {}
    for j in range(symtab[5] // _SYM.size):
        st_name, info, _, shndx, value, _ = _SYM.unpack_from(data, symtab[4] + j * _SYM.size)
        name = _cstring(data, strtab[4] + st_name)
        if shndx == _SHN_UNDEF:
            address = _process_symbol(name) if name else 0
            if name and not address and info >> 4 != _STB_WEAK:
                raise Unsupported(f"undefined symbol {name}")
        elif shndx == _SHN_ABS:
            address = value
        elif shndx == _SHN_COMMON or shndx >= len(sections):
            raise Unsupported(f"symbol {name} in section {shndx}")
        elif shndx in offsets:
            address = base + offsets[shndx] + (0 if info & 0xF == _STT_SECTION else value)
        else:
            address = None  # (in a section not loaded: only relocations there may use it)
        addresses.append(address)
        if info >> 4 and address is not None and name:
            globals_[name] = address

    for k, s in enumerate(sections):
        if s[1] != _SHT_RELA or s[7] not in offsets:
            continue  # (relocations of a section not loaded: unwind tables)
        target = base + offsets[s[7]]
        for j in range(s[5] // _RELA.size):
            r_offset, r_info, addend = _RELA.unpack_from(data, s[4] + j * _RELA.size)
            sym, rtype = r_info >> 32, r_info & 0xFFFFFFFF
            if sym >= len(addresses) or addresses[sym] is None:
                raise Unsupported(f"relocation against a section not loaded, in {names[k]}")
            _relocate(rtype, target + r_offset, addresses[sym] + addend)

    exec_start, exec_end = groups[0]
    if exec_end > exec_start:
        length = -(-(exec_end - exec_start) // _PAGE) * _PAGE
        if libc.mprotect(base + exec_start, length, mmap.PROT_READ | mmap.PROT_EXEC) != 0:
            raise OSError(ctypes.get_errno(), "mprotect failed for kernel code")
    missing = [name for name in wanted if name not in globals_]
    if missing:
        raise RuntimeError(f"symbol {missing[0]} missing from compiled code")
    return tuple(globals_[name] for name in wanted)


def _relocate(rtype: int, place: int, value: int) -> None:
    """Patch the relocation of type `rtype` at address `place` (`value`: S + A)."""
    if rtype == _R_64:
        ctypes.c_uint64.from_address(place).value = value & 0xFFFFFFFFFFFFFFFF
    elif rtype == _R_PC64:
        ctypes.c_int64.from_address(place).value = value - place
    elif rtype in (_R_PC32, _R_PLT32, _R_32S, _R_32):
        v = value - place if rtype in (_R_PC32, _R_PLT32) else value
        lo, hi = (0, 2**32) if rtype == _R_32 else (-(2**31), 2**31)
        if not lo <= v < hi:
            raise Unsupported(f"relocation type {rtype} out of range")
        ctypes.c_uint32.from_address(place).value = v & 0xFFFFFFFF
    else:
        raise Unsupported(f"relocation type {rtype}")


def _cstring(data: bytes, start: int) -> str:
    return data[start:data.index(b"\0", start)].decode()
