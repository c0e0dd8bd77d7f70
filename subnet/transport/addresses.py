"""How the transport names a peer's address for its limits (one host, one key)."""

from __future__ import annotations

import ipaddress


def peer_key(remote: str | None) -> str:
    """The address a peer is limited by: IPv4 as is, IPv6 by its /64 (one host's usual share)."""
    if not remote:
        return "unknown"
    if ":" not in remote:
        return remote
    try:
        address = ipaddress.IPv6Address(remote.split("%", 1)[0])
    except ValueError:
        return remote
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.IPv6Network((address, 64), strict=False))
