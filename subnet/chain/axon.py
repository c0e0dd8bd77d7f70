"""Axon addresses: what may be published for validators to reach, and what the metagraph says is served."""

from __future__ import annotations

import ipaddress
from typing import Any

from subnet.chain.errors import ChainError


def public_address(ip: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """``ip`` as an address validators can reach; a :class:`ChainError` line for anything else."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        raise ChainError(f"cannot publish axon address {ip!r}: not an IP address") from None
    if address.is_unspecified:
        raise ChainError(
            f"cannot publish axon address {ip}: it only means 'every interface'; "
            "pass the address validators should use with --axon.external_ip"
        )
    return address


def same_axon(published: Any, address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int) -> bool:
    """Whether the chain's stored axon (``published``, as the storage query returns it) is this one."""
    if not isinstance(published, dict):
        return False
    try:
        return (
            int(published.get("ip") or 0) == int(address)
            and int(published.get("port") or 0) == port
            and int(published.get("ip_type") or 4) == address.version
        )
    except (TypeError, ValueError):
        return False


def split_axon(endpoint: str | None) -> tuple[str, int]:
    """``ip:port`` or ``[v6]:port`` from the SDK's metagraph -> (ip, port); ("", 0) when not serving."""
    if not endpoint:
        return "", 0
    host, _, port = endpoint.rpartition(":")
    host = host.strip("[]")
    try:
        return host, int(port)
    except ValueError:
        return "", 0
