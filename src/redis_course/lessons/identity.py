"""Lesson 07: choosing what to limit, the key a request is counted under.

* An **API key** names a customer: limit by it whenever the request carries one.
* An **IP address** is all there is for anonymous traffic.  An IPv4 address is usually one machine
  (or many behind a NAT); an IPv6 client typically gets a whole /64 network and can pick any of its
  2^64 addresses, so count IPv6 by its /64.
* The address is the TCP peer's, unless that peer is one of **your** proxies: then it is taken from
  ``X-Forwarded-For``, read from the right, skipping your proxies.  The header's leftmost entries
  are whatever the client wrote.

Pure functions: no Redis command.
"""

from __future__ import annotations

import ipaddress

IPV6_PREFIX = 64


def network_of(ip: str, v6_prefix: int = IPV6_PREFIX) -> str:
    """The counting unit of an address: the IPv4 address itself, or the IPv6 /``v6_prefix`` network
    (``2001:db8:7:1::/64``).  An IPv4-mapped IPv6 address counts as its IPv4 address."""
    addr = ipaddress.ip_address(ip.strip())
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    if isinstance(addr, ipaddress.IPv4Address):
        return str(addr)
    return str(ipaddress.ip_network(f"{addr}/{v6_prefix}", strict=False))


def _trusted(ip: str, proxies: list[str]) -> bool:
    try:
        addr = ipaddress.ip_address(ip.strip())
    except ValueError:
        return False
    return any(addr in ipaddress.ip_network(net, strict=False) for net in proxies)


def client_ip(peer: str, forwarded_for: str | None, trusted_proxies: list[str]) -> str:
    """The client's address: ``peer`` (the TCP peer) unless it is a trusted proxy; then walk
    ``X-Forwarded-For`` from the right, skipping trusted proxies, and take the first other entry.
    A malformed entry stops the walk there (the proxy that wrote it is the last one to believe)."""
    if not _trusted(peer, trusted_proxies) or not forwarded_for:
        return peer
    hops = [h.strip() for h in forwarded_for.split(",") if h.strip()]
    current = peer
    for hop in reversed(hops):
        try:
            ipaddress.ip_address(hop)
        except ValueError:
            return current
        current = hop
        if not _trusted(hop, trusted_proxies):
            return hop
    return current


def naive_client_ip(peer: str, forwarded_for: str | None) -> str:
    """What many tutorials do: the leftmost ``X-Forwarded-For`` entry, from anyone.  Wrong: the
    client writes that entry itself."""
    if forwarded_for:
        return forwarded_for.split(",")[0].strip()
    return peer


def limit_key(api_key: str | None, peer: str, forwarded_for: str | None, trusted_proxies: list[str]) -> str:
    """``key:<api key>`` for an identified caller, else ``ip:<address or /64>``."""
    if api_key:
        return f"key:{api_key}"
    return f"ip:{network_of(client_ip(peer, forwarded_for, trusted_proxies))}"
