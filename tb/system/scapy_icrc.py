#!/usr/bin/python3
"""Recomputes the ICRC of every frame of a pcap with scapy's RoCE layer (BTH.compute_icrc) and with
zlib (the reference recipe), and compares both with the 4 bytes on the wire.

usage: scapy_icrc.py CAPTURE [--expect-bad N]
Exit 0: every frame is IPv4/UDP 4791/BTH, the capture is not empty and exactly N (default 0)
frames have a wrong ICRC. Exit 1 otherwise. Exit 77 when scapy.contrib.roce is not importable.
"""
import struct
import sys
import zlib

try:
    import logging
    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
    from scapy.all import IP, UDP, rdpcap
    from scapy.contrib.roce import BTH
except ImportError as e:  # pragma: no cover
    print(f"scapy RoCE layer not importable: {e}")
    sys.exit(77)


def zlib_icrc(ip_hdr: bytes, udp_seg: bytes) -> bytes:
    ip, ib = bytearray(ip_hdr), bytearray(udp_seg[:-4])
    ip[1] = 0xFF
    ip[8] = 0xFF
    ip[10:12] = b"\xff\xff"
    ib[6:8] = b"\xff\xff"
    ib[8 + 4] = 0xFF
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(ib)))


def main() -> int:
    path = sys.argv[1]
    expect_bad = int(sys.argv[sys.argv.index("--expect-bad") + 1]) if "--expect-bad" in sys.argv else 0
    frames = rdpcap(path)
    bad, problems = [], []
    for n, pkt in enumerate(frames, 1):
        if IP not in pkt or UDP not in pkt or pkt[UDP].dport != 4791 or BTH not in pkt:
            problems.append(f"frame {n}: not RoCEv2: {pkt.summary()}")
            continue
        raw = bytes(pkt)
        ip_off = len(raw) - len(bytes(pkt[IP]))
        ip_len, ihl = pkt[IP].len, pkt[IP].ihl * 4
        ulen = pkt[UDP].len
        if ip_len > len(raw) - ip_off or ulen != ip_len - ihl or ulen < 8 + 12 + 4:
            problems.append(f"frame {n}: bad IP/UDP length {ip_len}/{ulen}")
            continue
        # Re-dissect the IP datagram without the Ethernet padding of frames shorter than 60 bytes
        # (scapy would otherwise count the pad as BTH payload in compute_icrc).
        dgram = IP(raw[ip_off:ip_off + ip_len])
        seg = raw[ip_off + ihl:ip_off + ip_len]
        wire = seg[-4:]
        by_scapy = dgram[BTH].compute_icrc(None)
        by_zlib = zlib_icrc(raw[ip_off:ip_off + ihl], seg)
        if by_scapy != by_zlib:
            problems.append(f"frame {n}: scapy {by_scapy.hex()} and zlib {by_zlib.hex()} disagree")
        if wire != by_scapy:
            bad.append(f"frame {n}: ICRC on the wire {wire.hex()}, computed {by_scapy.hex()} ({pkt[BTH].summary()})")
    for line in problems + bad:
        print(line)
    print(f"{len(frames)} frames, {len(bad)} with a bad ICRC, {len(problems)} other problems")
    ok = frames and not problems and len(bad) == expect_bad
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
